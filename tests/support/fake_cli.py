"""A stand-in for an agent CLI (``claude``, ``codex``) that replays output
recorded from the real one (tests/support/recorded/), so the engines are
tested against exactly what the CLI prints.

``install(bin_dir, name, state_dir)`` writes an executable ``name`` into
``bin_dir``; put ``bin_dir`` first on PATH and script each call with
``script(state_dir, *actions)``.  An action (one per call, the last one
serves every later call):

- ``lines``: the output lines to print (JSON objects are dumped), usually
  :func:`recorded` with fields replaced;
- ``stderr``: text printed on stderr first (a warning, an error);
- ``exit``: the exit code (default 0); ``kill``: SIGKILL itself after printing;
- ``write``: ``{path: content}`` files written into the working directory
  (a coder's edit, or a read-only node that writes anyway).

Sessions are kept as the real CLIs keep them: a call starts a new session
(a new id in the result's ``session_id``, or codex's ``thread.started``
``thread_id``), saved unless it was run with ``--no-session-persistence``
(claude) or ``--ephemeral`` (codex); ``claude -p --resume ID`` and ``codex
exec … resume ID -`` continue a saved one (its id in the output) and fail,
in the CLI's words, on one that was never saved.

Every call is recorded in ``calls.jsonl``: argv, stdin, cwd, the session it
ran in (``session``, ``resumed``) and, for codex, the ``--output-schema``
file's content.

The login check (``claude auth status``, ``codex login status``,
``opencode auth list``) is answered as the real CLI answers it
(:data:`PROBES`, tests/support/recorded/login/), logged out until
:func:`login` says otherwise; an API key in the environment answers as the
real CLI does (claude: logged in by ``api_key``; opencode: an environment
variable; codex ignores it).  It uses no action and is recorded in
``probes.jsonl`` (argv, stdin, whether stdin is a terminal).
"""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

from stepkit.workspace.store import store_dir

RECORDED = Path(__file__).parent / "recorded"

#: Each CLI's login check and its answers: the file under recorded/login/,
#: the stream it goes to and the exit code.  Recorded from claude 2.1.197,
#: codex 0.171.0 and opencode 1.18.33 in an empty home (logged out; with
#: ANTHROPIC_API_KEY set: claude-api-key, opencode-env); the logged-in
#: answers are as documented (claude's JSON of a claude.ai login; codex's
#: line from codex-rs/cli/src/login.rs).
PROBES: dict[str, dict[str, Any]] = {
    "claude": {
        "argv": ["auth", "status"],
        "out": ("claude-out.json", "stdout", 1),
        "in": ("claude-in.json", "stdout", 0),
        "key": ("claude-api-key.json", "stdout", 0),
        "keys": ["ANTHROPIC_API_KEY"],
    },
    "codex": {
        "argv": ["login", "status"],
        "out": ("codex-out.txt", "stderr", 1),
        "in": ("codex-in.txt", "stderr", 0),
        "keys": [],
    },
    "opencode": {
        "argv": ["auth", "list"],
        "out": ("opencode-out.txt", "stdout", 0),
        "key": ("opencode-env.txt", "stdout", 0),
        "keys": ["ANTHROPIC_API_KEY"],
    },
}

FAKE = r"""#!{python}
import json, os, pathlib, signal, sys, uuid
state = pathlib.Path({state!r})
probe = {probes!r}.get(pathlib.Path(sys.argv[0]).name)
if probe and sys.argv[1:] == probe["argv"]:
    login = state / "login"
    said = login.read_text() if login.exists() else "out"
    if said not in ("in", "key") and any(os.environ.get(k) for k in probe["keys"]):
        said = "key"
    with (state / "probes.jsonl").open("a") as fh:
        fh.write(json.dumps({{"argv": sys.argv[1:], "stdin": sys.stdin.read(), "tty": os.isatty(0)}}) + "\n")
    name, stream, code = probe[said]
    text = (pathlib.Path({recorded!r}) / name).read_text()
    print(text, end="", file=sys.stderr if stream == "stderr" else sys.stdout)
    sys.exit(code)
actions = json.loads((state / "actions.json").read_text())
counter = state / "calls"
n = int(counter.read_text()) if counter.exists() else 0
counter.write_text(str(n + 1))
action = actions[min(n, len(actions) - 1)]
argv = sys.argv[1:]
codex = pathlib.Path(sys.argv[0]).name == "codex"
call = {{"argv": argv, "stdin": sys.stdin.read(), "cwd": os.getcwd()}}
if "--output-schema" in argv:
    call["output_schema"] = json.loads(pathlib.Path(argv[argv.index("--output-schema") + 1]).read_text())
saved_file = state / "sessions.json"
saved = json.loads(saved_file.read_text()) if saved_file.exists() else []
resume_flag = "resume" if codex else "--resume"
resumed = argv[argv.index(resume_flag) + 1] if resume_flag in argv else None
session = resumed or str(uuid.uuid4())
call.update(session=session, resumed=resumed is not None)
with (state / "calls.jsonl").open("a") as fh:
    fh.write(json.dumps(call) + "\n")
if resumed is not None and resumed not in saved:
    print(f"Error: thread/resume: thread/resume failed: no rollout found for thread id {{resumed}} (code -32600)"
          if codex else f"No conversation found with session ID: {{resumed}}", file=sys.stderr, flush=True)
    sys.exit(1)
if resumed is None and ("--ephemeral" if codex else "--no-session-persistence") not in argv:
    saved_file.write_text(json.dumps(saved + [session]))
for rel, content in action.get("write", {{}}).items():
    pathlib.Path(rel).parent.mkdir(parents=True, exist_ok=True)
    pathlib.Path(rel).write_text(content)
if action.get("stderr"):
    print(action["stderr"], file=sys.stderr, flush=True)
for line in action.get("lines", []):
    if isinstance(line, dict) and line.get("type") == "result" and "session_id" in line:
        line = {{**line, "session_id": session}}
    if isinstance(line, dict) and line.get("type") == "thread.started":
        line = {{**line, "thread_id": session}}
    print(line if isinstance(line, str) else json.dumps(line), flush=True)
if action.get("kill"):
    os.kill(os.getpid(), signal.SIGKILL)
sys.exit(action.get("exit", 0))
"""


def install(bin_dir: Path, name: str, state_dir: Path) -> Path:
    """Write the fake ``name`` into ``bin_dir``; its calls are kept in ``state_dir``."""
    bin_dir.mkdir(parents=True, exist_ok=True)
    state_dir.mkdir(parents=True, exist_ok=True)
    path = bin_dir / name
    path.write_text(
        FAKE.format(
            python=sys.executable,
            state=str(state_dir),
            probes=PROBES,
            recorded=str(RECORDED / "login"),
        )
    )
    path.chmod(path.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    return path


def script(state_dir: Path, *actions: dict[str, Any]) -> None:
    """The actions of the next calls, in order (see the module docstring)."""
    (state_dir / "actions.json").write_text(json.dumps(list(actions)))
    for old in ("calls", "calls.jsonl"):  # the saved sessions stay, as the CLI's own store does
        (state_dir / old).unlink(missing_ok=True)


def login(state_dir: Path, logged_in: bool) -> None:
    """Whether the fake's login check answers logged in (its own login,
    as after ``claude auth login``) or logged out (the default)."""
    state_dir.mkdir(parents=True, exist_ok=True)
    (state_dir / "login").write_text("in" if logged_in else "out")


def probes(state_dir: Path) -> list[dict[str, Any]]:
    """Every login check the fake answered: argv, stdin, tty."""
    path = state_dir / "probes.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def calls(state_dir: Path) -> list[dict[str, Any]]:
    """Every recorded call: argv, stdin, cwd, session, resumed (and output_schema for codex)."""
    path = state_dir / "calls.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def recorded(name: str) -> list[Any]:
    """The lines of a recorded output: JSON objects parsed, other lines as text."""
    lines: list[Any] = []
    for line in (RECORDED / name).read_text().splitlines():
        try:
            lines.append(json.loads(line))
        except ValueError:
            lines.append(line)
    return lines


def path_with(bin_dir: Path) -> str:
    """PATH with ``bin_dir`` first."""
    return f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"


def stage_context(
    tmp_path: Path, engine: str, settings: dict[str, Any] | None = None, usage: Any = None
) -> Any:
    """A stage context of node ``orient`` in run ``r1`` of a project under
    ``tmp_path``, the run's engine ``engine``; events go to the run's
    ``events.jsonl`` (:func:`events`)."""
    from stepkit.config import Config
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.records import StageContext, Usage

    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    run_dir = store_dir(project) / "runs" / "r1"
    run_dir.mkdir(parents=True, exist_ok=True)

    def emit(kind: str, **fields: Any) -> None:
        with (run_dir / "events.jsonl").open("a") as fh:
            fh.write(json.dumps({"kind": kind, **fields}) + "\n")

    return StageContext(
        node="orient",
        project_dir=project,
        plans_dir=project / "plans",
        state={},
        settings={"engine": engine, **(settings or {})},
        config=Config(),
        pm=get_plugin_manager(),
        run_dir=run_dir,
        emit=emit,
        usage=usage or Usage(),
    )


def events(ctx: Any, kind: str = "llm_call") -> list[dict[str, Any]]:
    """The run's events of ``kind``."""
    path = Path(ctx.run_dir) / "events.jsonl"
    found = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
    return [event for event in found if event["kind"] == kind]
