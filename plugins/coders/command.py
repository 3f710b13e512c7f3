"""Any coding CLI as the coder: ``--coder command:SHELL`` and the presets.

The contract (README.md, "Coders, reviewers, engines"): SHELL runs in the project dir; the
prompt arrives on stdin and in the file named by ``STEPKIT_PROMPT_FILE``; the
environment carries ``STEPKIT_STEP``, ``STEPKIT_PROJECT_DIR`` and
``STEPKIT_PLANS_DIR``.  Its stdout+stderr is the coder's result text.  A
line that starts with a sentinel (``CODER_COMPLETE`` / ``CODER_REJECTED`` /
``CODER_FAILED``, a reason may follow; the last one wins) decides; otherwise
exit 0 is CODER_COMPLETE and any other
exit CODER_FAILED.  Killed by a signal, not startable (exit 127/126 or no
shell), or past ``timeouts.coder`` (its whole process group is killed): the
coder crashed.  A command may report what it spent by writing a JSON object
(``input_tokens``, ``output_tokens``, ``cache_read_tokens``,
``cache_write_tokens``, ``cost_usd``) to the file named by
``STEPKIT_USAGE_FILE``.

What every delegate (coder or reviewer, command or preset) spent is added to
the run's usage and recorded in a ``delegate_usage`` event; before one
starts, a run whose budget (``max_cost_usd``, ``max_tokens``) does not
allow it faults instead (:mod:`stepkit.plugins.llm.budget`).

:func:`run_delegate` runs an external coder or reviewer through
:func:`stepkit.workspace.process.run` (output streamed to a redacted log, bounded
memory, group kill on timeout); how a run is judged (its last sentinel,
anywhere in the stream, else its exit code) is
:mod:`stepkit.plugins.coders.results`.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from stepkit.errors import UsageError
from stepkit.hookspecs import hookimpl
from stepkit.plugins.coders.prompt import build_coder_prompt
from stepkit.plugins.coders.results import SentinelWatch, generic_result
from stepkit.plugins.llm import budget
from stepkit.presets import presets as registered_presets
from stepkit.protocol.state import step_state
from stepkit.records import CoderResult, StageContext, Usage
from stepkit.text import shown_bytes
from stepkit.workspace import process, sandbox
from stepkit.workspace.process import ProcessResult
from stepkit.workspace.redact import redact

#: Bytes of the start and of the end of a delegate's output kept for its result text.
HEAD_BYTES = 64_000
TAIL_BYTES = 256_000


def delegate_spec(settings: dict[str, Any], role: str) -> str:
    """The run's spec for ``role`` (``coder`` or ``reviewer``): the run settings
    already hold ``--coder``/``--reviewer`` or else the project's setting;
    ``anthropic`` when neither names one."""
    return str(settings.get(role) or "anthropic")


def builtin_spec(spec: str, presets: Mapping[str, Any]) -> tuple[str, str] | None:
    """How the built-in coders and reviewers read a spec: ``("anthropic",
    MODEL)``, ``("command", SHELL)`` or ``("preset", NAME)`` for a name of
    the registered ``presets``; None for a spec no built-in owns (another
    plugin's, or a mistake)."""
    kind, _, arg = spec.partition(":")
    if kind in ("anthropic", "command"):
        return kind, arg
    return ("preset", spec) if spec in presets else None


def check_builtin_spec(
    spec: str | None,
    presets: Mapping[str, Any],
    kinds: tuple[str, ...] = ("anthropic", "command", "preset"),
) -> str:
    """A built-in coder's or reviewer's answer to ``stepkit_check_delegate``:
    ``""`` for a spec of one of the ``kinds`` it runs itself (so a spec whose
    plugin ``-p no:`` disabled is owned by none), else the specs the
    built-ins take."""
    owned = builtin_spec(spec or "anthropic", presets)
    if owned is not None and owned[0] in kinds:
        return ""
    return f"anthropic[:MODEL], command:SHELL or a preset: {', '.join(presets) or '(none)'}"


def run_delegate(
    ctx: StageContext,
    command: str,
    prompt: str,
    *,
    name: str,
    timeout: float,
    on_text: Callable[[str], None] | None = None,
    env: dict[str, str] | None = None,
    spends: bool = False,
    writable: tuple[Path, ...] = (),
) -> ProcessResult:
    """Run an external coder or reviewer with the command coder's contract: the
    prompt on stdin and in ``STEPKIT_PROMPT_FILE``, the STEPKIT_* env (and
    ``env``), the project dir as the working directory; ``on_text`` sees the
    output as it streams; ``spends``: it is a coding CLI, which certainly
    spends, not a command, which may call no model (the budget rule of
    :mod:`stepkit.plugins.llm.budget`); ``writable``: what it may write
    besides the project when it runs confined (a CLI's own state).

    Confined (:mod:`stepkit.workspace.sandbox`), it cannot see the run
    store: its prompt and usage files are in the sandbox's private
    directory, and the usage file is copied to the log's side afterwards.

    :raises StageFault: the run's budget does not allow it (nothing is started).
    """
    budget.check(ctx.settings, ctx.usage, refused=f"{name} was not started", certain=spends)
    logs = ctx.log_dir()
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    base = _unique(logs, f"{name}-{stamp}")
    prompt_text = shown_bytes(redact(prompt))  # a Latin-1 file name as caf\\xe9.txt
    kept_prompt, kept_usage = logs / f"{base}-prompt.md", logs / f"{base}-usage.json"
    kept_prompt.write_text(prompt_text, encoding="utf-8")
    prompt_file = sandbox.private_file(kept_prompt.name) or kept_prompt
    usage_file = sandbox.private_file(kept_usage.name) or kept_usage
    if prompt_file != kept_prompt:
        prompt_file.write_text(prompt_text, encoding="utf-8")
    env = {
        **os.environ,
        **(env or {}),
        "STEPKIT_PROMPT_FILE": str(prompt_file),
        "STEPKIT_USAGE_FILE": str(usage_file),
        "STEPKIT_STEP": "" if (step := step_state(ctx).step) is None else str(step),
        "STEPKIT_PROJECT_DIR": str(ctx.project_dir),
        "STEPKIT_PLANS_DIR": str(ctx.plans_dir),
    }
    ctx.emit("delegate_started", who=name, command=command)
    with sandbox.widened(writable):
        run = process.run(
            command,
            cwd=ctx.project_dir,
            env=env,
            stdin_text=prompt_text,
            timeout=timeout,
            log_path=logs / f"{base}.log",
            on_text=on_text,
            head_bytes=HEAD_BYTES,
            tail_bytes=TAIL_BYTES,
        )
    if usage_file != kept_usage and usage_file.is_file():
        shutil.move(usage_file, kept_usage)
    ctx.emit(
        "delegate_finished",
        who=name,
        exit_code=run.exit_code,
        duration_s=run.duration_s,
        timed_out=run.expired is not None,
        log=run.log,
    )
    return run


def record_usage(ctx: StageContext, who: str, usage: Usage | None) -> None:
    """Add what a delegate spent to the run's usage and record it."""
    if usage is None or usage == Usage():
        return
    ctx.usage = ctx.usage.add(usage)
    ctx.emit("delegate_usage", node=ctx.node, who=who, **usage.model_dump())


@hookimpl
def stepkit_configure(
    config: Any, settings: dict[str, Any], presets: Mapping[str, Any], pm: Any
) -> None:
    """A built-in coder or reviewer spec must be usable before the run starts:
    ``command:`` needs a command, a preset's CLI must be on PATH, and
    ``anthropic[:MODEL]`` needs an engine that can be called when its stage
    is among the command's ``settings["stages"]``."""
    from stepkit.plugins.llm.engine import check_engine_spec
    from stepkit.protocol.stages import STAGES

    for role, stage in ((s.delegate, s.name) for s in STAGES.values() if s.delegate):
        spec = delegate_spec(settings, role)
        kind, arg = builtin_spec(spec, presets) or ("", "")
        if kind == "command" and not arg.strip():
            raise UsageError(f"--{role} command:SHELL needs a command after 'command:'")
        if (
            kind == "preset"
            and stage in settings.get("stages", (stage,))
            and shutil.which(spec) is None
        ):
            raise UsageError(
                f"--{role} {spec}: the '{spec}' CLI is not on PATH (install it: "
                f"{presets[spec].install}; or use command:SHELL)"
            )
        if (
            kind == "anthropic"
            and stage in settings.get("stages", ())
            and settings.get("project_dir")
        ):
            check_engine_spec(
                f"anthropic:{arg}" if arg else settings.get("engine"),
                Path(settings["project_dir"]),
                pm=pm,
                calls=True,
            )


@hookimpl
def stepkit_check_delegate(role: str, spec: str | None, presets: Mapping[str, Any]) -> str | None:
    """``command:SHELL`` and the presets as the coder (the reviewer's are
    :mod:`stepkit.plugins.coders.reviewer`'s)."""
    return check_builtin_spec(spec, presets, ("command", "preset")) if role == "coder" else None


@hookimpl
def stepkit_coder_presets(presets: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The registered presets (the built-ins and the plugins') and their CLIs on PATH."""
    from stepkit.plugins.coders.presets import preset_status

    return preset_status(presets.values())


@hookimpl
def stepkit_doctor_checks(
    settings: dict[str, Any], presets: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The login of each preset the run would use: as its coder or its
    reviewer (when their stage runs), or as its engine (``--engine claude``
    runs the ``claude`` preset's CLI); one line per CLI."""
    from stepkit.plugins.coders.presets.login import login_check
    from stepkit.protocol.stages import STAGES

    used = [
        delegate_spec(settings, stage.delegate)
        for stage in STAGES.values()
        if stage.delegate and stage.name in settings.get("stages", (stage.name,))
    ]
    used.append(str(settings.get("engine") or "").partition(":")[0])
    project = Path(settings.get("project_dir") or ".")
    checks = (
        login_check(presets[name], project) for name in dict.fromkeys(used) if name in presets
    )
    return [check for check in checks if check is not None]


@hookimpl
def stepkit_implement(ctx: StageContext) -> CoderResult | None:
    """Answer for ``command:SHELL`` and the registered presets (claude, codex,
    aider, opencode and the plugins'); None for any other coder spec."""
    spec = delegate_spec(ctx.settings, "coder")
    presets = registered_presets(ctx.pm)
    kind, arg = builtin_spec(spec, presets) or ("", "")
    preset = presets.get(arg) if kind == "preset" else None
    watch = SentinelWatch()
    timeout = ctx.config.timeouts.coder
    if kind == "command":
        if not arg.strip():
            return CoderResult(
                crashed=True, text="the coder could not start: --coder command: names no command"
            )
        run = run_delegate(
            ctx, arg.strip(), build_coder_prompt(ctx), name="coder", timeout=timeout, on_text=watch
        )
        result = generic_result(run, watch.last)
    elif preset is not None:
        name = f"coder-{spec}"
        with preset.session(ctx, review=False) as call:
            run = run_delegate(
                ctx,
                preset.command(call),
                build_coder_prompt(ctx),
                name=name,
                timeout=timeout,
                on_text=watch,
                env=preset.env(call),
                spends=True,
                writable=(*preset.state_paths(), call.scratch),
            )
            result = preset.parse(run, watch.last, call.scratch)
    else:
        return None
    record_usage(ctx, f"coder-{spec}" if preset else "coder", result.usage)
    return result


def _unique(directory: Path, base: str) -> str:
    name, n = base, 1
    while (directory / f"{name}.log").exists():
        n += 1
        name = f"{base}-{n}"
    return name
