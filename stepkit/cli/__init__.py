"""The ``stepkit`` command line: a thin layer that parses arguments and hands
them to one module per command in :mod:`stepkit.cli`.

Command modules are imported only when their command runs, so ``stepkit
--version`` and ``stepkit status`` never pay for the model SDK.
"""

from __future__ import annotations

import argparse
import gc as pygc  # not "gc": the stepkit.cli.gc command module would shadow it
import importlib
import os
import sys
from typing import Any

from stepkit import __version__
from stepkit.errors import StepkitError

#: Commands whose parser plugins may extend (they load the project's plugins).
PLUGIN_COMMANDS = (
    "init",
    "run",
    "resume",
    "verify",
    "detect",
    "stage",
    "plugins",
    "doctor",
    "plan",
)


class _Parser(argparse.ArgumentParser):
    """argparse that reports usage errors as one line with exit code 2."""

    def error(self, message: str) -> None:  # type: ignore[override]
        command = self.prog.removeprefix("stepkit").strip()  # "stepkit: error: " names stepkit once
        if command:
            raise StepkitError(f"{command}: {message} (stepkit {command} --help shows the usage)")
        raise StepkitError(f"{message} (stepkit --help shows the usage)")


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="stepkit", description="Execute one step of a phased implementation plan."
    )
    parser.add_argument("--version", action="version", version=f"stepkit {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    def command(name: str, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        if name in PLUGIN_COMMANDS:
            p.add_argument(
                "-p",
                dest="plugin_flags",
                action="append",
                default=[],
                metavar="no:NAME",
                help="disable a plugin by name (repeatable)",
            )
        return p

    def run_options(p: argparse.ArgumentParser) -> None:
        p.add_argument("--step", help="step number or 'next' (default: from the prompt, else next)")
        p.add_argument(
            "--plans-dir", help="plan repo (default: plans, relative to the project dir)"
        )
        p.add_argument("--project-dir", default=".", help="the project to change (default: .)")
        p.add_argument(
            "--engine",
            help="LLM engine: anthropic[:MODEL] (default), claude[:MODEL], codex[:MODEL], "
            "openai:MODEL, scripted:FILE, or one a plugin adds",
        )
        p.add_argument(
            "--coder", help="coder: anthropic, command:SHELL, claude, codex, aider, opencode"
        )
        p.add_argument("--reviewer", help="reviewer: anthropic, command:SHELL or a preset")
        p.add_argument(
            "--set",
            dest="sets",
            action="append",
            default=[],
            metavar="KEY=VALUE",
            help="tune the initial state, e.g. max_fix_attempts=3 (repeatable)",
        )
        p.add_argument("--json", action="store_true", help="print one JSON object")
        p.add_argument(
            "--verbose", action="store_true", help="show every node of the graph as it runs"
        )

    p = command(
        "init",
        "Write a first step plan, NOTES.md and handoffs/; prove the detected gates on HEAD "
        "and write them to stepkit.toml [commands].",
    )
    p.add_argument("--project-dir", default=".", help="the project (default: .)")
    p.add_argument(
        "--force", action="store_true", help="write over stepkit.toml's [commands] table"
    )
    p.add_argument(
        "--plans-dir", help="plan repo to create (default: plans, relative to the project dir)"
    )

    p = command("new", "Add the next step file to the plan, from the template.")
    p.add_argument("title", metavar="TITLE", help="the step's title; its file name is made from it")
    p.add_argument("--depends-on", metavar="N,...", help="step numbers it depends on, e.g. 1,3")
    p.add_argument("--project-dir", default=".", help="the project (default: .)")
    p.add_argument(
        "--plans-dir", help="the plan repo (default: plans, relative to the project dir)"
    )

    p = command("plan", "Draft the plan's steps from a spec through the engine; never overwrites.")
    p.add_argument("spec", metavar="SPEC", help="the spec: a file, or - to read it from stdin")
    p.add_argument(
        "--append", action="store_true", help="add the drafted steps after the plan's existing ones"
    )
    p.add_argument(
        "--engine",
        help="LLM engine: anthropic[:MODEL] (default), claude[:MODEL], codex[:MODEL], "
        "openai:MODEL, scripted:FILE (answers the node plan), or one a plugin adds",
    )
    p.add_argument("--project-dir", default=".", help="the project (default: .)")
    p.add_argument(
        "--plans-dir", help="the plan repo (default: plans, relative to the project dir)"
    )

    p = command("run", "Run one step of the plan through the step-runner graph.")
    p.add_argument("prompt", nargs="?", default="Execute the next step")
    run_options(p)
    p.add_argument("--graph", help="a graph YAML file (default: the built-in step-runner)")
    p.add_argument(
        "--answer",
        dest="answers",
        action="append",
        default=[],
        metavar="NODE=TEXT",
        help="pre-answer gate_blocked or gate_deviation",
    )
    p.add_argument(
        "--rerun",
        action="store_true",
        help="run a step that is already complete again (its handoff is kept in the run dir)",
    )
    p.add_argument(
        "--allow-incomplete-plan",
        action="store_true",
        help="run a step whose plan stepkit status lists as incomplete (the handoff says so)",
    )
    p.add_argument(
        "--worktree",
        action="store_true",
        default=None,
        help="run the step in a git work tree of its own, on branch stepkit/NN-slug",
    )
    p.add_argument(
        "--merge",
        action="store_true",
        help="with --worktree: merge the completed step's branch when the merge is clean",
    )
    p.add_argument(
        "--parallel",
        type=parallel_count,
        metavar="N",
        help="run up to N ready steps at once, each in its own git worktree (as --worktree)",
    )
    p.add_argument(
        "--stack",
        action="store_true",
        help="with --parallel: a step whose dependencies a run of this invocation completed "
        "starts from that run's branch",
    )
    # what a --parallel parent gives each child: where it says how it goes, the branch it starts from
    p.add_argument("--status-file", help=argparse.SUPPRESS)
    p.add_argument("--worktree-base", help=argparse.SUPPRESS)

    p = command("resume", "Continue a paused or interrupted run from its checkpoint.")
    p.add_argument("run_id", nargs="?", help="default: the latest unfinished run")
    p.add_argument("--answer", help="the answer to the question the run paused at")
    p.add_argument(
        "--merge",
        action="store_true",
        default=None,
        help="a --worktree run: merge its branch when the step completes (default: as it was started)",
    )
    p.add_argument("--project-dir", default=".")
    p.add_argument("--json", action="store_true")
    p.add_argument("--verbose", action="store_true", help="show every node of the graph as it runs")

    p = command("status", "Show the plan repo: steps, status, dependencies, handoffs.")
    p.add_argument("--plans-dir")
    p.add_argument("--project-dir", default=".")
    p.add_argument("--json", action="store_true")

    p = command("verify", "Run the format, lint, build and test gates and print the evidence.")
    p.add_argument("--project-dir", default=".")
    p.add_argument(
        "--baseline",
        metavar="REF",
        help="judge failures against the git ref REF: pre-existing ones are listed, not failing",
    )
    p.add_argument(
        "--fix",
        action="store_true",
        help="let the formatter rewrite files (default: its check mode, which changes nothing)",
    )
    p.add_argument(
        "--all-files",
        action="store_true",
        help="give the formatter every file of the project, as CI checks a clean checkout "
        "(default: the work tree's changes against HEAD)",
    )
    p.add_argument("--json", action="store_true")

    p = command("doctor", "Check whether a run can work here: plan, gate tools, engine, git.")
    p.add_argument("--project-dir", default=".")
    p.add_argument(
        "--plans-dir", help="the plan repo (default: plans, relative to the project dir)"
    )
    p.add_argument("--engine", help="the engine a run would use (default: as configured)")
    p.add_argument("--coder", help="the coder a run would use (default: as configured)")
    p.add_argument("--reviewer", help="the reviewer a run would use (default: as configured)")
    p.add_argument("--json", action="store_true")

    p = command("detect", "Show the command each gate would run and the plugin that chose it.")
    p.add_argument("--project-dir", default=".")
    p.add_argument("--json", action="store_true")

    p = command("stage", "Run one protocol stage on its own and print its result.")
    p.add_argument(
        "stage",
        type=stage_name,
        metavar="STAGE",
        help="the protocol stage to run (a name it does not know lists the stages)",
    )
    run_options(p)

    p = command("graph", "Draw the step-runner graph (or another graph file).")
    p.add_argument("--graph", help="a graph YAML file")
    p.add_argument("--run", dest="run_id", help="highlight the path a run took")
    p.add_argument("--project-dir", default=".")
    p.add_argument("--format", choices=["mermaid", "json"], default="mermaid")

    p = command("check-handoff", "Check a handoff file against the protocol's schema.")
    p.add_argument("path")
    p.add_argument("--json", action="store_true")

    p = command(
        "trust", "Show how the project's local plugins changed since trusted, and trust them."
    )
    p.add_argument("--project-dir", default=".")

    p = command(
        "merge-driver", "Merge a plan file as git's merge driver, keeping both branches' appends."
    )
    p.add_argument(
        "base", nargs="?", metavar="BASE", help="the common ancestor's version (git's %%O)"
    )
    p.add_argument(
        "ours", nargs="?", metavar="OURS", help="our version, replaced by the merge (git's %%A)"
    )
    p.add_argument("theirs", nargs="?", metavar="THEIRS", help="their version (git's %%B)")
    p.add_argument(
        "path", nargs="?", metavar="PATH", help="the file's path in the repository (git's %%P)"
    )
    p.add_argument(
        "--register",
        action="store_true",
        help="register the driver for the plan repo in this git repository (as init does)",
    )
    p.add_argument("--project-dir", default=".", help="with --register: the project (default: .)")
    p.add_argument("--plans-dir", help="with --register: the plan repo (default: plans)")

    p = command("ci", "Write a GitHub Actions workflow that runs the plan's ready steps as jobs.")
    p.add_argument("--project-dir", default=".", help="the project (default: .)")
    p.add_argument(
        "--plans-dir", help="the plan repo (default: plans, relative to the project dir)"
    )
    p.add_argument("--force", action="store_true", help="replace an existing workflow file")
    p.add_argument(
        "--stepkit-source",
        "--install",
        metavar="PATH|URL",
        help="what the jobs pip install: stepkit's source in this repository, a URL "
        "(git+https://…@COMMIT) or a requirement (default: where this stepkit was installed from)",
    )

    p = command(
        "undo", "Put the tree back as it was when a run's step started; keep the change as a patch."
    )
    p.add_argument("run_id", nargs="?", metavar="RUN_ID", help="default: the latest run")
    p.add_argument("--project-dir", default=".", help="the project (default: .)")

    p = command("gc", "Prune finished runs' logs; never a paused, interrupted or live run's.")
    p.add_argument(
        "--older-than",
        type=non_negative,
        metavar="DAYS",
        help="prune the logs of runs finished more than DAYS ago (default: [logs] keep_days)",
    )
    p.add_argument(
        "--keep",
        type=run_count,
        metavar="N",
        help="keep the logs of the newest N finished runs (default: [logs] keep_runs)",
    )
    p.add_argument("--project-dir", default=".", help="the project (default: .)")

    p = command("plugins", "List plugins, their versions and the hooks each implements.")
    p.add_argument("--project-dir", default=".")
    p.add_argument("--json", action="store_true")

    command("demo", "Run step 1 of a bundled example project, up to the final approval gate.")

    p = command(
        "mcp", "Serve stepkit's commands as MCP tools over stdio (for orchestrating agents)."
    )
    p.add_argument(
        "--project-dir", default=".", help="the project a tool call without project_dir uses"
    )
    return parser


def stage_name(text: str) -> str:
    """``stepkit stage``'s argument, checked against the protocol's table of
    stages (imported only when that command is parsed)."""
    from stepkit.protocol.stages import STAGES

    if text not in STAGES:
        raise argparse.ArgumentTypeError(f"unknown stage {text!r} (known: {', '.join(STAGES)})")
    return text


def non_negative(text: str) -> float:
    """A number of days, 0 or more."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is below 0")
    return value


def run_count(text: str) -> int:
    """A number of runs, 0 or more."""
    if not text.isdigit():
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of runs, 0 or more")
    return int(text)


def parallel_count(text: str) -> int:
    """``run --parallel``'s value: a whole number of runs at once, 1 or more."""
    if not text.strip().isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(
            f"expected a number of runs at once, 1 or more (got {text!r})"
        )
    return int(text)


def disabled_plugins(args: argparse.Namespace) -> list[str]:
    """Plugin names from ``-p no:NAME`` flags."""
    names = []
    for flag in getattr(args, "plugin_flags", []) or []:
        if not flag.startswith("no:"):
            raise StepkitError(f"-p {flag}: only 'no:NAME' is supported (disable a plugin)")
        names.append(flag[3:])
    return names


def _add_plugin_options(parser: argparse.ArgumentParser, argv: list[str]) -> Any:
    """Let plugins add options to the chosen command before the full parse;
    return the plugin manager built for that, so the command reuses it.

    Not for ``resume``: a run goes on with the options it began with, and
    its plugin manager loads only the entry points the run recorded, which
    are known once the resume has found its run (:func:`stepkit.api.resume_run`)."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("command", nargs="?")
    pre.add_argument("--project-dir", default=".")
    pre.add_argument("-p", dest="plugin_flags", action="append", default=[])
    known, _ = pre.parse_known_args(argv)
    if known.command not in PLUGIN_COMMANDS or known.command == "resume":
        return None
    if known.command == "run":
        from stepkit.workspace.scope import startup

        # a run's fingerprint waits for each Python on PATH to say where its site directories
        # are (a pyenv shim takes 0.1 s to start one): asked now, it answers while the run sets up
        startup.ask_ahead(())
    from stepkit.config import load_config, resolve_project_dir
    from stepkit.pluginmanager import get_plugin_manager

    try:
        project_dir = resolve_project_dir(known.project_dir)
    except StepkitError:
        return None  # the command itself reports the bad directory
    pm = get_plugin_manager(project_dir, load_config(project_dir), disabled_plugins(known))
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    pm.hook.stepkit_add_options(parser=subparsers.choices[known.command], command=known.command)
    return pm


def main(argv: list[str] | None = None) -> int:
    """Run one command; everything it prints is made visible on the way out
    (:mod:`stepkit.shown`): no text of the coder's, the model's or the
    project's moves or hides what the terminal shows."""
    from stepkit.shown import shown_streams

    with shown_streams():
        return _command(sys.argv[1:] if argv is None else argv)


def _command(argv: list[str]) -> int:
    try:
        parser = build_parser()
        pm = _add_plugin_options(parser, argv)
        args = parser.parse_args(argv)
        args.pm = pm
        if not args.command:
            parser.print_help()
            return 2
        from stepkit.engine.interrupts import stop_signals

        module = importlib.import_module(f"stepkit.cli.{args.command.replace('-', '_')}")
        _started()
        with stop_signals():  # SIGTERM and SIGHUP end a command as Ctrl-C does
            return int(module.run(args))
    except StepkitError as exc:
        _print_error(str(exc))
        return exc.exit_code
    except KeyboardInterrupt as exc:
        from stepkit.engine.interrupts import signal_label, signal_number

        signum = signal_number(exc)
        _print_error(f"interrupted ({signal_label(signum)})")
        return 128 + signum
    except BrokenPipeError:
        return 1
    except Exception as exc:  # noqa: BLE001 - an internal bug: still one line unless debugging
        if os.environ.get("STEPKIT_DEBUG"):
            _print_traceback()
        _print_error(
            f"internal error: {type(exc).__name__}: {exc} (STEPKIT_DEBUG=1 shows the traceback)"
        )
        return 1


#: :func:`entry` pauses the garbage collector while the process starts up (see :func:`_started`).
_collector_paused = False


def _started() -> None:
    """The command is about to run: collection, paused by :func:`entry`
    while the process started up, resumes, with what the start-up made
    (modules, classes, the plugin manager, which live as long as the
    process) frozen out of it.  Collecting during the start-up took 15-30 ms
    of a verify, walking objects that could never be garbage."""
    global _collector_paused
    if _collector_paused:
        _collector_paused = False
        pygc.freeze()
        pygc.enable()


def entry() -> None:
    """The ``stepkit`` command: :func:`main`, then exit with its code.  Every
    exit first stops what is left of the command's own helpers
    (:func:`_stop_helpers`).  An interrupted command (128 + N) has saved its
    checkpoint; it exits at once, without the interpreter's shutdown, where a node's abandoned worker
    thread (a daemon, still inside a C extension or holding stderr) can make
    the process abort instead of exiting with its code.

    The garbage collector is paused until the command runs (:func:`_started`).
    A command that answered exits once its exit handlers ran and its streams
    are flushed, without the interpreter's teardown (:func:`_answered`: 10 to
    20 ms a process, twice in a step that pauses for its approval).  Where
    that cannot be, the exit goes through the interpreter's shutdown with
    every object the command made frozen out of the garbage collector
    (:func:`gc.freeze`): the shutdown frees them all anyway, and collecting
    them first took tens of milliseconds after a verify, longer than the
    command's own work after its last gate."""
    global _collector_paused
    pygc.disable()
    _collector_paused = True
    code = _with_head_start(sys.argv[1:]) if sys.argv[1:2] == ["verify"] else main()
    _stop_helpers()
    if code < 128:
        code = _answered(code)
    if code >= 128:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):
                pass
        os._exit(code)
    pygc.freeze()
    raise SystemExit(code)


def _stop_helpers() -> None:
    """Stop the command's helpers still running as it exits
    (:func:`~stepkit.workspace.supervision.stop_helpers`): one a stop signal
    left unowned as it was being started, or a probe asked ahead that the
    command ended without waiting for (a run refused before it needed the
    answer).  None of them may outlive the command: a Python that hangs
    would run on unowned.  A process that never imported :mod:`subprocess`
    started none."""
    if "subprocess" in sys.modules:
        from stepkit.workspace.supervision import stop_helpers

        stop_helpers()


def _with_head_start(argv: list[str]) -> int:
    """:func:`main` for ``stepkit verify``, its last commands started first
    (:mod:`stepkit.workspace.headstart`): stop signals are taken before any
    starts, and what nothing adopted is killed however the command ends."""
    from stepkit.engine.interrupts import signal_label, signal_number, stop_signals
    from stepkit.workspace import headstart

    try:
        with stop_signals():
            headstart.begin(argv)
            code = main()
    except KeyboardInterrupt as exc:
        signum = signal_number(exc)
        _print_error(f"interrupted ({signal_label(signum)})")
        return 128 + signum
    finally:
        headstart.close()
    return code


def _answered(code: int) -> int:
    """Exit with ``code`` now: the command has answered, let its lock go and
    holds no file but the standard streams (a plugin's log handlers are
    closed by the exit handlers, :func:`logging.shutdown` among them).  The exit handlers run and the
    streams are flushed, as at any exit; what is skipped is the
    interpreter's teardown, which frees every object the process made (about
    10 ms after a verify, longer than its own work after its last gate).
    ``code`` is returned for the usual exit where another thread still
    runs (that exit waits for it) or a stream cannot be flushed (that exit
    reports it, with its own exit code)."""
    import atexit
    import threading

    if any(not t.daemon for t in threading.enumerate() if t is not threading.current_thread()):
        return code
    atexit._run_exitfuncs()
    try:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
    except (OSError, ValueError):
        return code
    os._exit(code)


def _print_error(message: str) -> None:
    if os.environ.get("STEPKIT_DEBUG") and sys.exc_info()[0] is not None:
        _print_traceback()
    first_line = message.strip().splitlines()[0] if message.strip() else "error"
    print(f"stepkit: error: {first_line}", file=sys.stderr)


def _print_traceback() -> None:
    """The exception being handled, with its traceback, on stderr (``STEPKIT_DEBUG``).
    traceback is imported only here: every command's start, a verify's way to
    its first gate among them, paid 2 ms for it."""
    import traceback

    traceback.print_exc()
