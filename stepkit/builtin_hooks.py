"""The hooks each built-in plugin but the project types implements, with
their options: what :class:`stepkit.lazyplugins.LazyPlugin` registers
before the module is imported.  Written by ``python
tests/unit/test_lazy_plugins.py``; do not edit."""

HOOKS: dict[str, dict[str, dict[str, bool]]] = {
    "stepkit.plugins.projects.unsupported": {
        "stepkit_unsupported_build_systems": {},
    },
    "stepkit.plugins.projects.precommit": {
        "stepkit_detect_notes": {},
        "stepkit_gate_command": {},
        "stepkit_gate_source": {},
    },
    "stepkit.plugins.projects.taskrunners": {
        "stepkit_detect_notes": {},
        "stepkit_detect_project": {},
        "stepkit_gate_command": {},
        "stepkit_verification_surface": {},
    },
    "stepkit.plugins.projects.ci": {
        "stepkit_command_body": {},
        "stepkit_detect_notes": {},
        "stepkit_gate_command": {},
        "stepkit_gate_order": {},
        "stepkit_gate_source": {},
    },
    "stepkit.plugins.projects.format_check": {
        "stepkit_format_check_command": {"trylast": True},
    },
    "stepkit.plugins.projects.tool_dirs": {
        "stepkit_tool_dirs": {},
    },
    "stepkit.plugins.overrides": {
        "stepkit_command_override_names": {},
        "stepkit_gate_command": {"tryfirst": True},
    },
    "stepkit.plugins.evidence.generic": {
        "stepkit_condense_output": {"trylast": True},
    },
    "stepkit.plugins.evidence.pytest": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.unittest": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.cargo": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.gotest": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.jest": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.ruff": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.mypy": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.eslint": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.tsc": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.evidence.maven": {
        "stepkit_condense_output": {},
    },
    "stepkit.plugins.runners": {
        "stepkit_test_runners": {},
    },
    "stepkit.plugins.tools": {
        "stepkit_tools": {},
    },
    "stepkit.plugins.ask": {
        "stepkit_ask": {"trylast": True},
    },
    "stepkit.plugins.llm.builtin_engines": {
        "stepkit_engine_kinds": {},
        "stepkit_make_engine": {"trylast": True},
    },
    "stepkit.plugins.llm.budget": {
        "stepkit_configure": {},
    },
    "stepkit.plugins.stages.orient": {
        "stepkit_configure": {},
        "stepkit_orient": {"trylast": True},
    },
    "stepkit.plugins.stages.sweep": {
        "stepkit_sweep": {"trylast": True},
    },
    "stepkit.plugins.stages.handoff": {
        "stepkit_write_handoff": {"trylast": True},
    },
    "stepkit.plugins.stages.check_handoff": {
        "stepkit_check_handoff": {},
    },
    "stepkit.plugins.stages.plan": {
        "stepkit_configure": {},
        "stepkit_draft_plan": {"trylast": True},
    },
    "stepkit.plugins.coders.presets": {
        "stepkit_register_presets": {},
    },
    "stepkit.plugins.coders.command": {
        "stepkit_check_delegate": {},
        "stepkit_coder_presets": {},
        "stepkit_configure": {},
        "stepkit_doctor_checks": {},
        "stepkit_implement": {},
    },
    "stepkit.plugins.coders.anthropic": {
        "stepkit_check_delegate": {},
        "stepkit_implement": {"trylast": True},
    },
    "stepkit.plugins.coders.reviewer": {
        "stepkit_check_delegate": {},
        "stepkit_review": {"trylast": True},
    },
    "stepkit.plugins.observers.display": {
        "stepkit_run_observers": {},
    },
}
