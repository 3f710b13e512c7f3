"""Hook specifications: every extension point of stepkit, grouped by stage.

Plugins implement these with ``@stepkit.hookimpl``.  Built-in plugins register
first, then entry points (group ``stepkit``), then the project's ``stepconf.py``
and the modules in ``[tool.stepkit] plugins``; pluggy calls the last
registered first, so local beats third-party beats built-in.  For
firstresult hooks the first non-None answer wins and the run records which
plugin gave it.  hooks.md documents each hook with an example.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import pluggy

if TYPE_CHECKING:  # annotations only: importing this module stays cheap
    import argparse
    from collections.abc import Callable, Mapping
    from pathlib import Path

    from stepkit.config import Config
    from stepkit.planrepo.draft import PlanDraft
    from stepkit.records import (
        CoderResult,
        Evidence,
        GateResult,
        HandoffProse,
        OrientResult,
        Question,
        ReviewResult,
        StageContext,
        SweepResult,
    )

hookspec = pluggy.HookspecMarker("stepkit")
hookimpl = pluggy.HookimplMarker("stepkit")


# -- configuration -----------------------------------------------------------


@hookspec
def stepkit_add_options(parser: argparse.ArgumentParser, command: str) -> None:
    """Add command-line options to a stepkit command.

    :param parser: the argparse parser of the command being built.
    :param command: the command name (``run``, ``verify``, ``stage`` …).

    Called for every plugin.  Usable in ``stepconf.py``: yes, but only options
    of commands that load the project's plugins (all but ``graph`` and
    ``check-handoff``).
    """


@hookspec
def stepkit_configure(
    config: Config, settings: dict[str, Any], presets: Mapping[str, Any], pm: pluggy.PluginManager
) -> None:
    """Inspect or adjust the configuration before a command does its work.

    :param config: the project's configuration (``stepkit.toml`` /
        ``[tool.stepkit]``), mutable.
    :param settings: the run settings (``--set`` values, engine/coder/reviewer
        specs, parsed plugin options, ``stages``: the stages the command will
        run), mutable.
    :param presets: the coding-CLI presets the plugins registered
        (``stepkit_register_presets``), by name: what ``--coder NAME`` and
        ``--reviewer NAME`` can name.
    :param pm: the command's own plugin manager: a check that asks the
        plugins (which engine kinds they build) asks it, never a manager of
        its own, which would load plugins the command does not (at a resume,
        an entry point installed after the run began).

    Called for every plugin.  Usable in ``stepconf.py``: yes.
    """


# -- project -----------------------------------------------------------------


@hookspec
def stepkit_detect_project(project_dir: Path) -> str | None:
    """Name the project type this plugin recognises in ``project_dir``.

    :param project_dir: the project root.
    :return: a short type name (``python``, ``node``, ``rust`` …) or None.

    Called for every plugin; the answers, in call order, are the project
    types (the first is the primary one).  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_detect_notes(project_dir: Path) -> list[str]:
    """Say why detection passed over a command the project has.

    :param project_dir: the project root.
    :return: one line per command passed over, naming the gate, the
        command and the reason (``tests: skipped `make test`: it runs
        `docker run -it`, which needs a terminal; a gate has none``); ``[]``
        when there is nothing to say.

    Called for every plugin; the lines are joined in call order and shown by
    ``stepkit detect`` (``notes`` in its ``--json``).  Usable in
    ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_command_body(command: str, project_dir: Path) -> str | None:
    """Say what a task-runner or script call runs.

    :param command: a gate command (``make test``, ``npm run lint``, ``sh scripts/check``).
    :param project_dir: the project root.
    :return: the commands it runs, one per line: the make or just recipe,
        the package.json script, the tox env's ``commands``, the script's
        text; None when ``command`` is no such call, or its target is unknown.

    firstresult.  The scripts those commands run are on the verification
    surface beside the ones the command itself runs, so a step that
    weakens the script behind ``make test`` is judged with it as it was.
    Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_gate_source(gate: str, command: str, project_dir: Path) -> str | None:
    """Name where a gate's detected command comes from in the project.

    :param gate: a gate of the gate table (``format``, ``lint``, ``build``, ``tests`` …).
    :param command: the command detection chose for it.
    :param project_dir: the project root.
    :return: the file and line it was read from, relative to the project
        (``.github/workflows/ci.yml:42``); None when this plugin did not
        read it from a file.

    firstresult.  ``stepkit detect`` shows the answer beside the command
    (``source`` in its ``--json``).  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_gate_fault(gate: str, command: str, project_dir: Path) -> str | None:
    """Say why a gate's command cannot run on this machine, before it runs.

    :param gate: ``format``, ``lint``, ``build`` or ``tests``.
    :param command: the command chosen for it (detected or configured).
    :param project_dir: the project root.
    :return: the reason, an environment fault naming what is missing and
        the ``stepkit.toml`` line that would fix it (a tox matrix with no
        environment for this machine's Python); None when nothing is known
        against it.

    firstresult.  ``stepkit detect`` shows the answer under the gate
    (``fault`` in its ``--json``); ``verify`` and a run record the gate as
    ``error`` (an environment fault, never a code failure) without running
    the command.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_unsupported_build_systems(project_dir: Path) -> list[str]:
    """Name the build systems in the project that no plugin gives gates for.

    :param project_dir: the project root.
    :return: one ``name (file)`` per build system found (``meson
        (meson.build)``); ``[]`` for none.

    Called for every plugin; the answers are joined in call order.  ``stepkit
    detect`` shows each as "build system not supported" (``unsupported`` in
    its ``--json``), and a ``stepkit verify`` in which no gate ran names them
    and is not ``ok``.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_gate_order(project_dir: Path) -> list[str] | None:
    """Say that the project's CI runs the gates in another order.

    :param project_dir: the project root.
    :return: every gate's name in the order CI runs them, when a format or
        lint step follows the build it may need (``["build", "format",
        "lint", "tests"]``); None when CI shows no such need.

    firstresult.  Recorded in the gate plan (``GatePlan.ci_order``) and shown
    by ``stepkit detect`` (``order`` in its ``--json``); the gates of a run
    and of ``stepkit verify`` run in that order (an answer that does not
    name each gate of the gate table once is ignored).  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_tool_dirs(project_dir: Path) -> list[str]:
    """Name the project's own tool directories, which the gates put first on PATH.

    :param project_dir: the project root.
    :return: directories relative to ``project_dir`` that exist and hold the
        project's tools (a virtualenv's ``bin``, ``node_modules/.bin``); an
        empty list for none.

    Called for every plugin; the answers are joined in call order, each
    directory once.  The directories are fixed with the gate commands, named
    in ``stepkit detect`` and in each gate's evidence, and a tool in them
    that the step changes fails the tests gate.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_dependency_dirs(project_dir: Path) -> list[str]:
    """Name the directories of installed dependencies the project's gates need
    and git does not track, which a ``--worktree`` work tree links from the
    user's tree.

    :param project_dir: the project root (in the work tree: its checkout of
        the user's project).
    :return: directories relative to ``project_dir`` (``node_modules``); an
        empty list for none.

    Called for every plugin; the answers are joined, each directory once.
    Without a ``[worktree] setup`` command, each named directory of the
    user's tree is linked into a new work tree before the step runs (a real
    directory whose entries are links to the user's, so an ignore rule
    ``node_modules/`` still ignores it); one missing in the user's tree is an
    environment fault: every gate with a command is ``error`` and the run
    ends ``STEP_FAILED`` without a fix attempt.  A directory the work tree
    already has is left alone.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_gate_command(gate: str, project_dir: Path, config: Config) -> str | None:
    """Return the shell command of one gate.

    :param gate: the gate's name, a row of the gate table
        (:data:`stepkit.gatetable.GATES`): ``format`` (formats the project in
        place), ``lint``, ``build`` (builds or type-checks), ``tests`` (runs
        the project's FULL test suite), or a gate added since.
    :param project_dir: the project root (the command runs there).
    :param config: the project's configuration.
    :return: a shell command string; ``""`` to say "this project has no
        command for this gate" and stop the search (the gate is NOT RUN);
        None for no opinion (say None for a gate you do not know).

    For ``format``: a formatter should touch only the step's changed files, as pre-commit
    does.  A command that takes file arguments names them with the
    placeholder ``{files}``, or ``{files:.py,.pyi}`` for only the changed
    files with one of those extensions: the gate runner replaces it with
    those files' shell-quoted paths, relative to the project (in a run, the
    coder's changes; in ``stepkit verify``, the working tree's changes
    against HEAD), and skips the command when there are none
    (``ruff format --force-exclude {files:.py,.pyi}``).  A command without
    the placeholder formats what it formats (``cargo fmt``): return one
    only when the project shows it uses that tool.

    firstresult: the first non-None answer wins (environment overrides and
    ``[tool.stepkit.commands]`` answer first, then task runners, then language
    plugins).  The deprecated per-gate hooks (``stepkit_format_command`` …)
    are asked in the same call, in the same order, as if they were this one.
    Return commands as data; never run them here.  Usable in
    ``stepconf.py``: yes.
    """


def _deprecated(gate: str) -> DeprecationWarning:
    return DeprecationWarning(
        f"this per-gate hook is deprecated: implement stepkit_gate_command(gate, project_dir, "
        f"config) and answer for gate == {gate!r} (the old hook is still asked, for one release)"
    )


@hookspec(firstresult=True, warn_on_impl=_deprecated("format"))
def stepkit_format_command(project_dir: Path, config: Config) -> str | None:
    """Deprecated: ``stepkit_gate_command`` with ``gate="format"``.

    :param project_dir: the project root.
    :param config: the project's configuration.
    :return: as ``stepkit_gate_command``.

    Still asked, for one release, within the ``stepkit_gate_command`` call
    for its gate, in the same order.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_format_check_command(command: str, project_dir: Path, config: Config) -> str | None:
    """Return the check mode of a format command, for ``stepkit verify``,
    which reports what would change and rewrites nothing.

    :param command: the format gate's command as planned (``{files}``
        placeholders kept: the gate runner fills them in).
    :param project_dir: the project root (the command runs there).
    :param config: the project's configuration.
    :return: a command that changes no file and exits non-zero when a file
        would change, naming the files (``ruff format --check {files:.py}``);
        ``""`` when this formatter has no check mode (verify then records the
        format gate as NOT RUN and ``stepkit verify --fix`` runs the
        formatter itself); None for no opinion.

    firstresult: the first non-None answer wins; the built-in answer
    (``stepkit.plugins.projects.format_check``) is trylast, so a plugin that
    chose a formatter of its own can answer for it.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec(firstresult=True, warn_on_impl=_deprecated("lint"))
def stepkit_lint_command(project_dir: Path, config: Config) -> str | None:
    """Deprecated: ``stepkit_gate_command`` with ``gate="lint"``.

    :param project_dir: the project root.
    :param config: the project's configuration.
    :return: as ``stepkit_gate_command``.

    Still asked, for one release, within the ``stepkit_gate_command`` call
    for its gate, in the same order.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True, warn_on_impl=_deprecated("build"))
def stepkit_build_command(project_dir: Path, config: Config) -> str | None:
    """Deprecated: ``stepkit_gate_command`` with ``gate="build"``.

    :param project_dir: the project root.
    :param config: the project's configuration.
    :return: as ``stepkit_gate_command``.

    Still asked, for one release, within the ``stepkit_gate_command`` call
    for its gate, in the same order.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True, warn_on_impl=_deprecated("tests"))
def stepkit_test_command(project_dir: Path, config: Config) -> str | None:
    """Deprecated: ``stepkit_gate_command`` with ``gate="tests"``.

    :param project_dir: the project root.
    :param config: the project's configuration.
    :return: as ``stepkit_gate_command``.

    Still asked, for one release, within the ``stepkit_gate_command`` call
    for its gate, in the same order.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_command_override_names(gate: str) -> tuple[str, str] | None:
    """Name where a user sets a gate's command by hand.

    :param gate: a gate of the gate table (``format``, ``lint``, ``build``, ``tests`` …).
    :return: ``(environment variable, [tool.stepkit.commands] key)``, e.g.
        ``("TEST_CMD", "test")``; None for no opinion.

    firstresult.  The built-in answer (``stepkit.plugins.overrides``) reads
    the gate table; the environment-fault message tells the user how to set
    the command, and ``stepkit.testing`` clears the variables for a test.
    Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_verification_surface(project_dir: Path) -> dict[str, list[str]] | None:
    """Declare the files that decide how this project type's gates judge.

    :param project_dir: the project root.
    :return: kind → glob patterns, project-relative with ``/``: ``tests``
        (test files: protected when they existed before the step; the ones
        the step adds are its new tests), ``config`` (how a gate runs:
        runner, lint and format configs, build-file targets) and ``startup``
        (how a gate's tools start: a module named like the tool at the root,
        ``sitecustomize.py``, a wrapper on PATH inside the project).  ``*``
        stays within one directory, ``**/`` is any depth, a pattern without
        ``/`` names a file at the root.  ``PATH#key,key`` protects only
        those top-level tables of a TOML file or keys of a JSON file
        (``pyproject.toml#tool``, ``package.json#scripts,jest``).  None
        when the project is not of this plugin's type.

    Called for every plugin; the patterns are joined (stepkit adds
    ``stepconf.py``, ``stepkit.toml``, the ``[tool.stepkit] plugins``
    modules and CI workflow files itself).  When the step changed any of
    these files, the change is recorded with its diff and the tests gate
    runs again in a scratch copy with them as they were before the step
    (``stepkit.workspace.pristine``).  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_added_file_reach(
    project_dir: Path, path: str, test_file: bool, search_roots: list[str]
) -> str | None:
    """Say whether a file the step added can change what the tests that
    were there before it see.

    :param project_dir: the project root.
    :param path: the added file, project-relative with ``/``: a test file
        or a file no pattern of ``stepkit_verification_surface`` covers.
    :param test_file: a ``tests`` pattern covers it.
    :param search_roots: the project directories a gate command puts on an
        interpreter's search path (``PYTHONPATH=src pytest``: ``["src"]``),
        besides the project root.
    :return: why it can, in one line: the runner loads it into the same
        process as the earlier tests (pytest imports every test module of a
        session into one interpreter; a Go test file is compiled into its
        package's test binary), it is a module a test can import in place
        of the code under test, or it is found before a module the runner
        itself imports (a ``tomllib.py`` at the root, which ``python -m
        pytest`` imports instead of Python's own).  None: it is the step's
        own (a new test that isolates itself, data, code).

    firstresult.  An added file with a reason is judged as a change of the
    verification surface: the pristine re-check runs the tests without it,
    and a test that existed before the step and fails there fails the
    gate, as a weakened ``conftest.py`` would.  Usable in ``stepconf.py``: yes.
    """


# -- evidence ----------------------------------------------------------------


@hookspec(firstresult=True)
def stepkit_condense_output(
    gate: str, command: str, output: str, exit_code: int | None, log_path: Path | None
) -> Evidence | str | None:
    """Condense a gate's output into evidence a model and a handoff can carry.

    :param gate: a gate of the gate table (``format``, ``lint``, ``build``, ``tests`` …).
    :param command: the command that ran (parsers pick themselves by it and by
        the output's shape).
    :param output: the output text; for very large outputs the head and the
        tail joined by a ``[... N bytes omitted ...]`` line.
    :param exit_code: the command's exit code (None when it never finished).
    :param log_path: the full log on disk, to name in the cut marker.
    :return: an :class:`~stepkit.records.Evidence`: its ``text`` (the
        failing ids, the first error of each failure, the summary line), its
        ``failing`` items, the failing ``tests`` by id, the first ``errors``
        of each failure and the gate's one-line ``summary``; the harness
        judges by those fields, never by the text.  A plain string is still
        taken as the text, read once where it comes in: its ``label (N):``
        lists' items are the failing items (a ``failing tests`` list's are
        test ids, ``FAILED``/``ERROR`` and a `` - message`` left off), its
        ``first error of each failure:`` section the errors, and a last
        line ``summary: <one line>`` (e.g. ``summary: 5 failed, 1995
        passed``) the summary.  Without a summary the output's last
        non-empty line is used.  None: this parser does not recognise the
        output.  The harness prefixes ``$ command`` / ``exit code: N``, caps
        the text at 200 lines / 16 KB and appends ``[kept X of Y lines;
        full log: PATH]`` when anything was cut.

    firstresult; the generic head+tail parser answers last.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec
def stepkit_test_runners() -> list[Any]:
    """Declare test runners: how stepkit judges each one's output.

    :return: :class:`stepkit.workspace.runners.TestRunner` declarations, in
        the order they are recognised (a runner may also name, in
        ``before``, runners it is recognised before): how to recognise the
        runner's command, the report to ask it for and how to read it, how
        to re-run its failing ids, the lines of its output that mean a test
        failed, that tests ran or that none did, a failing test's reason,
        its fault signatures and the markers that skip a test.

    Called for every plugin, once per gate run; the answers are joined,
    the last registered plugin's first (so a project's runner is recognised
    before a built-in one that also claims its command), and every
    declaration's patterns of a kind compile into one.  Built-in:
    :mod:`stepkit.plugins.runners` (one module per runner: pytest, unittest,
    jest, vitest, node's test runner, mocha, AVA, bun, go test, cargo test,
    cargo nextest, ctest, Catch2, maven, gradle, dotnet, mix test, RSpec,
    minitest, PHPUnit, deno, swift).  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_tools() -> list[Any]:
    """Declare tools other than test runners (linters, type checkers,
    formatters, package managers): how stepkit judges each one's output.

    :return: :class:`stepkit.workspace.tools.Tool` declarations, in the
        order they are read (a tool may also name, in ``before``, tools it
        is read before): how one item of its JSON output and its text
        diagnostics read into failure keys (file, rule, message: what the
        baseline and the pristine re-check compare), the markers in a
        source that silence it and the files that configure it (the tamper
        flags), its fault signatures, its words for "no file to format"
        and the lockfiles it writes (no gate may change one git tracks).

    Called for every plugin, once per gate run; the answers are joined,
    the last registered plugin's first, and every declaration's patterns
    of a kind compile into one (the fault signatures into one pass over a
    line).  The built-in tools always count.  Built-in:
    :mod:`stepkit.plugins.tools` (one module per tool: ruff, mypy, flake8,
    pylint, eslint, tsc, cargo/clippy, golangci-lint, RuboCop, …, uv, pip,
    poetry, pdm, npm, yarn, pnpm, corepack, go, maven, docker …).  Usable in
    ``stepconf.py``: yes.
    """


# -- engines -----------------------------------------------------------------


@hookspec(firstresult=True)
def stepkit_make_engine(kind: str, arg: str, project_dir: Path) -> Any | None:
    """Build the LLM engine that ``--engine KIND[:ARG]`` names.

    :param kind: the part of the spec before the first ``:`` (``anthropic``,
        ``claude``, ``scripted`` …).
    :param arg: the rest (a model, a file; ``""`` when there is none).
    :param project_dir: the project root (relative files resolve there).
    :return: an object with the ``structured(...)`` method of
        :class:`stepkit.plugins.llm.engine.Engine` (optionally
        ``setup_problem() -> str | None``: why no call could be made, asked
        before a run that will call it); None when ``kind`` is not this
        plugin's.
    :raises UsageError: the spec is this plugin's but unusable (a missing
        file, a missing argument): one line, exit 2, no run.

    firstresult; built-ins answer for ``anthropic``, ``scripted``,
    ``claude``, ``codex`` and ``openai``.  Called once per run and spec (the
    run's nodes share the engine).  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_engine_kinds() -> dict[str, str] | None:
    """Name the engine kinds this plugin builds, for ``stepkit plugins`` and
    the unknown-engine message.

    :return: usage (``claude[:MODEL]``) → one-line description.

    Called for every plugin.  Usable in ``stepconf.py``: yes.
    """


# -- stages ------------------------------------------------------------------


@hookspec(firstresult=True)
def stepkit_orient(ctx: StageContext) -> OrientResult | dict[str, Any] | None:
    """Read-only orientation and staleness check for the step.

    :param ctx: the stage context; ``ctx.state`` holds ``plan_text``,
        ``previous_handoff``, ``notes`` and the step's metadata.
    :return: a :class:`~stepkit.records.OrientResult` (or a dict of its
        fields: ``plan_summary``, ``implementation_brief``,
        ``staleness_report`` ("clean" if none), ``has_major_deviation``
        (bool), ``deviation_summary``), validated by the harness (an invalid
        one is a stage fault naming the field); None for no opinion.
    :raises StageFault: the stage could not produce a result (routed to
        note_llm_fault).

    firstresult; the built-in LLM implementation is trylast.  Must not change
    the project tree (a change is detected and is a fault).  Usable in
    ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_implement(ctx: StageContext) -> CoderResult | None:
    """Delegate the step (or a fix) to a coder and return its result.

    :param ctx: the stage context; ``ctx.state`` holds the plan, the
        implementation brief, ``user_guidance`` and ``fix_instructions``;
        ``ctx.settings["coder"]`` is the coder spec.
    :return: a :class:`~stepkit.records.CoderResult`; ``crashed=True`` when
        the coder died (the run fails, the coder is never re-run).

    firstresult; built-ins answer for ``anthropic``, ``command:SHELL`` and the
    presets and return None for a spec they do not own.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec
def stepkit_check_delegate(role: str, spec: str | None, presets: Mapping[str, Any]) -> str | None:
    """Say, before a command starts, whether a ``--coder`` or ``--reviewer``
    spec is one this plugin's ``stepkit_implement`` or ``stepkit_review``
    answers for.

    :param role: ``coder`` (``stepkit_implement``) or ``reviewer``
        (``stepkit_review``).
    :param spec: the run's spec for that role (``anthropic:MODEL``,
        ``command:SHELL``, ``claude`` …); None when neither the command nor
        the project names one.
    :param presets: the coding-CLI presets the plugins registered
        (``stepkit_register_presets``), by name.
    :return: ``""`` when ``spec`` is this plugin's; when it is not, the specs
        it does answer for, as words for the message
        (``anthropic[:MODEL], command:SHELL or a preset: claude, codex``);
        None when the plugin has no coder (or reviewer) at all.

    Called for every plugin.  A spec that no answer claims is a usage error
    (one line, exit 2, nothing run: ``--coder X: unknown coder (use WORDS; a
    plugin may add others)``), but only when every plugin implementing the
    role's stage hook also implements this one: a plugin without it may own
    any spec, and then its stage hook is left to answer.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec
def stepkit_register_presets(register: Callable[[Any], None]) -> None:
    """Register coding-CLI presets: each one is a coder (``--coder NAME``)
    and a reviewer (``--reviewer NAME``) the built-in coder and reviewer run.

    :param register: call ``register(preset)`` once per preset, a
        :class:`stepkit.plugins.coders.presets.base.Preset`: its ``name``
        (the spec, and the CLI's executable on PATH: letters, digits, ``.``,
        ``_``, ``-``), ``command(call)`` (the shell command line of one call),
        ``reader(output, scratch)`` (the CLI's output read as a ``Parsed``),
        ``checked`` (the CLI versions it was checked against), ``install``,
        and optionally ``env(call)`` and ``leftovers``.
    :raises PluginError: (raised by ``register``) an object without a valid
        ``name``.

    Called for every plugin, once per plugin manager (:func:`stepkit.presets.presets`
    keeps the table).  A name registered again replaces the earlier preset:
    the later-registered plugin wins (local beats third-party beats
    built-in, ``tryfirst`` beats all), and ``stepkit plugins`` names the
    plugin whose preset is used and the ones it replaced.  Built-in:
    :mod:`stepkit.plugins.coders.presets` (claude, codex, aider, opencode).
    Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_coder_presets(presets: Mapping[str, Any]) -> list[dict[str, Any]] | None:
    """Describe the coding-CLI presets this plugin's coder and reviewer run,
    for ``stepkit plugins`` (its table and the ``presets`` of its ``--json``).

    :param presets: the presets the plugins registered
        (``stepkit_register_presets``), by name.
    :return: one dict per preset: ``name``, ``path`` (the CLI found on PATH,
        None when missing), ``version`` (None when unknown), ``checked`` (the
        versions the preset was checked against), ``checked_version``
        (bool), ``install`` (how to install the CLI); None or ``[]`` when
        the plugin has none.

    Called for every plugin; the rows are joined, built-ins first.  A row of
    a registered preset gains ``plugin`` (the plugin that registered it) and
    ``overrides`` (the plugins whose preset of that name it replaced).  The
    built-in :mod:`stepkit.plugins.coders.command` describes every
    registered preset.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_doctor_checks(
    settings: dict[str, Any], presets: Mapping[str, Any]
) -> list[dict[str, Any]] | None:
    """Add lines to ``stepkit doctor``: what this plugin needs for the run
    ``settings`` describe that the checks before a run do not prove (a
    coding CLI logged in, a service reachable).

    :param settings: the run's settings as ``stepkit run`` would resolve
        them from the same options (``engine``, ``coder``, ``reviewer``
        specs; ``stages``: the stages the run would run); read only.
    :param presets: the coding-CLI presets the plugins registered
        (``stepkit_register_presets``), by name.
    :return: one dict per line: ``name``, ``status`` (``ok``; ``warn``, which
        leaves doctor's exit code alone; ``fail``: a run would not work),
        ``text`` and ``fix`` (what to do when it is not ok); None or ``[]``
        when there is nothing to check.

    Called for every plugin; the lines are joined, built-ins first, and
    printed after the engine's.  Doctor calls it, a run never does: make it
    quick (a dry call of a CLI with a short timeout, never one that asks a
    person or spends).  The built-in :mod:`stepkit.plugins.coders.command`
    checks the login of each preset the run would use (``Preset.login``).
    Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_sweep(ctx: StageContext) -> SweepResult | dict[str, Any] | None:
    """Edge-case sweep over the changed code.

    :param ctx: the stage context; ``ctx.state["changed_files"]`` lists the
        files the step changed.
    :return: a :class:`~stepkit.records.SweepResult` (or a dict of its
        fields, validated the same way): ``edge_case_report``, ``downstream_updates``,
        ``needs_independent_review`` (bool) and ``annotations``: a list of
        ``{"step": N, "edge_case": "text"}`` that the harness appends to the
        ``Edge cases`` section of later step plans (nothing else in those
        plans can change).
    :raises StageFault: routed to write_handoff, flagged as not run.

    firstresult; the built-in LLM implementation is trylast.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_review(ctx: StageContext) -> ReviewResult | None:
    """Independent review of the step's diff against its acceptance criteria.

    :param ctx: the stage context; ``ctx.settings["reviewer"]`` is the
        reviewer spec; ``ctx.state["diff"]`` the step's diff.
    :return: a :class:`~stepkit.records.ReviewResult`: its ``findings``
        (:class:`~stepkit.records.Finding`, the critical ones go back to the
        coder) and ``review_report``, their text; a result with only the
        text has its lines that start with 🔴 taken as critical findings.
        Set ``fault`` (or raise StageFault) when the review did not run: a
        fault is never read as findings.

    firstresult.  Usable in ``stepconf.py``: yes.
    """


@hookspec(firstresult=True)
def stepkit_write_handoff(ctx: StageContext) -> HandoffProse | dict[str, Any] | None:
    """Write the prose of the step's handoff.

    :param ctx: the stage context; ``ctx.state`` holds the gate results,
        fix history, staleness report, sweep report, review, faults, and
        ``handoff_feedback`` (problems from a failed check to fix exactly).
    :return: a :class:`~stepkit.records.HandoffProse` (or a dict of its
        fields, validated the same way): ``step_summary``, ``result``
        (complete|partial|blocked), the prose sections ``summary``,
        ``completed``, ``not_completed``, ``deviations``,
        ``downstream_plan_updates``, ``edge_cases_discovered``,
        ``notes_for_next_step``, and ``notes_facts`` (lines for NOTES.md).
        The harness renders the file and builds the Evidence section from the
        recorded gates itself.
    :raises StageFault: routed to note_llm_fault.

    firstresult; the built-in LLM implementation is trylast.  Usable in
    ``stepconf.py``: yes.
    """


@hookspec
def stepkit_check_handoff(path: Path, text: str, gates: list[GateResult]) -> list[str]:
    """Check a handoff file; return the problems found (empty when valid).

    :param path: the handoff file (in a run, its draft in the run dir, put in
        the plan repo only on approval).
    :param text: its content.
    :param gates: the gates the run recorded (empty outside a run: then the
        Evidence is checked for shape only).
    :return: a list of one-line problems.

    Collect-all: every plugin's problems are joined.  Usable in
    ``stepconf.py``: yes, to add project rules.
    """


# -- planning ----------------------------------------------------------------


@hookspec(firstresult=True)
def stepkit_draft_plan(
    ctx: StageContext, spec: str, existing: list[dict[str, Any]], problems: list[str]
) -> PlanDraft | dict[str, Any] | None:
    """Draft the steps of a plan from a spec (``stepkit plan``).

    :param ctx: the context of the ``plan`` node: ``ctx.settings["engine"]``
        is the engine spec; no run (``ctx.run_dir`` is None).
    :param spec: the spec's text (the file, or stdin for ``-``).
    :param existing: the steps already in the plan that the draft may
        depend on (``--append``), one ``{"step", "title", "status"}`` each;
        ``[]`` for a new plan.
    :param problems: what was wrong with this draft's previous answer, one
        line each, to fix; ``[]`` on the first call.
    :return: a :class:`~stepkit.planrepo.draft.PlanDraft` (or a dict of its
        fields): ``steps`` (each with ``number``, ``title``, ``objective``,
        ``context``, ``tasks``, ``acceptance_criteria``, ``test_commands``,
        ``edge_cases``, ``out_of_scope``, ``depends_on`` (earlier numbers of
        the draft), ``depends_on_existing``) and ``notes`` (facts for
        NOTES.md).  The harness checks it and writes the step files; a draft
        with problems is asked for once more with them, then refused.
    :raises StageFault: no draft could be had (one line, exit 1).

    firstresult; the built-in LLM implementation is trylast.  Usable in
    ``stepconf.py``: yes.
    """


# -- gates -------------------------------------------------------------------


@hookspec(firstresult=True)
def stepkit_ask(question: Question, settings: dict[str, Any]) -> str | None:
    """Answer an approval or input node.

    :param question: what the node asks (text, options, whether free text is
        allowed).
    :param settings: run settings; ``settings["answers"]`` holds answers given
        with ``--answer`` / ``stepkit resume --answer``.
    :return: the answer text, or None for no opinion.
    :raises stepkit.records.Paused: to pause the run at this node (the
        built-in does so when stdin is not a TTY).

    firstresult.  The final ``gate_user_review`` is answered only after its
    question was shown, and never by a project-local plugin (``stepconf.py``,
    a ``[tool.stepkit] plugins`` module of the project): those are left out
    of that call.  Usable in ``stepconf.py``: yes (e.g. a chat bridge), for
    every other question.
    """


# -- observers ---------------------------------------------------------------


@hookspec
def stepkit_run_observers(command: str, verbose: bool) -> list[Any] | None:
    """Give the observers that show a run started on the command line.

    :param command: ``run`` or ``resume``.
    :param verbose: ``--verbose`` was given: show every node of the graph,
        the routing ones included, not only the stages and the gates.
    :return: observer objects (plugins implementing ``stepkit_node_started``
        and the other observer hooks, and a ``close()`` method); each is
        registered for the run only and closed when the command ends,
        however it ends (Ctrl-C too).  None or ``[]`` for none.

    Called for every plugin, built-ins' observers first; not called for
    ``--json`` (one object on stdout, nothing else) nor by the Python API,
    whose callers pass their own ``observers``.  The built-in
    (:mod:`stepkit.plugins.observers.display`) gives the terminal progress
    display; ``-p no:display`` turns it off.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_node_started(run_id: str, node: str, kind: str, state: dict[str, Any]) -> None:
    """A node is about to run.

    :param run_id: the run.
    :param node: the node id.
    :param kind: the node kind (script, stage, approval, input, end).
    :param state: the run state (read-only).

    Called for every plugin.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_node_finished(
    run_id: str, node: str, route: str | None, duration_s: float, state: dict[str, Any]
) -> None:
    """A node finished.

    :param run_id: the run.
    :param node: the node id.
    :param route: the next node id (None at an end node).
    :param duration_s: how long the node took.
    :param state: the run state after the node (read-only); ``gates`` and
        ``usage`` carry gate results and tokens so far.

    Called for every plugin.  Usable in ``stepconf.py``: yes.
    """


@hookspec
def stepkit_run_finished(run_id: str, outcome: str, exit_code: int, output: str) -> None:
    """The run ended at an end node or paused.

    :param run_id: the run.
    :param outcome: a sentinel (``STEP_COMPLETE`` …) or ``PAUSED``.
    :param exit_code: the process exit code stepkit will use.
    :param output: the end node's full text (first line the sentinel).

    Called for every plugin.  Usable in ``stepconf.py``: yes.
    """
