"""Record the transcripts the presets' contract tests replay.

``python -m tests.realcli.record [CLI ...]`` installs each CLI (see
:mod:`tests.realcli.harness`), runs every scenario of it once through the
preset's own command line, environment and runner against the loopback
API, and writes one JSON file per scenario to
``tests/fixtures/transcripts/<cli>-<version>/<scenario>.json``: the command,
the exit code, the output as stepkit reads it, the files the tool wrote
into its scratch dir (aider's chat history) and what it wrote in its home
directory (``home_writes``).

A coder runs in stepkit's sandbox as in a run (a reviewer is not confined),
with the whole (temporary) home directory writable rather than only the
state the preset declares, so that every write the CLI makes there is seen
and recorded: the contract tests check that the declaration covers them.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from stepkit.plugins.coders.command import run_delegate
from stepkit.plugins.coders.presets import PRESETS
from stepkit.workspace import sandbox
from stepkit.workspace.files import state_home
from stepkit.workspace.store import store_root
from tests.realcli.harness import Model, install, version
from tests.support.coder import make_ctx
from tests.support.gitrepo import git, init_repo

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "transcripts"
GREET = 'def greet(name):\n    return f"Hello, {name}!"\n'
SCRATCH_FILES = ("chat.history.md",)

Scenario = Callable[[Model, Path], dict]


def success(model: Model, project: Path) -> dict:
    model.write(project / "greet.py", GREET)
    if model.name != "aider":
        model.shell("ls")
    model.say("Added greet() in greet.py.\n\nCODER_COMPLETE")
    return {}


def failure(model: Model, project: Path) -> dict:
    model.fail(401, "authentication_error", "invalid x-api-key")
    return {}


def retried(model: Model, project: Path) -> dict:
    model.fail(500, "api_error", "scripted transient failure")
    model.write(project / "greet.py", GREET)
    model.say("Added greet() after a retry.\n\nCODER_COMPLETE")
    return {}


def retried_notice(model: Model, project: Path) -> dict:
    """codex: a first attempt that fails with a notice ("Reconnecting... 1/1")."""
    model.fail(401, "invalid_api_key", "scripted refusal")
    model.write(project / "greet.py", GREET)
    model.say("Added greet() after reconnecting.\n\nCODER_COMPLETE")
    return {}


def killed(model: Model, project: Path) -> dict:
    model.say("too late\nCODER_COMPLETE", delay_s=60)
    return {"timeout": 8}


def review(model: Model, project: Path) -> dict:
    (project / "greet.py").write_text(GREET)
    model.say("🟡 greet.py: greet() has no test.\n🟢 greet.py: fine otherwise.")
    return {"review": True}


def review_denied(model: Model, project: Path) -> dict:
    """A reviewer that tries to change the project: its tool must refuse."""
    if model.name == "aider":
        model.write(project / "greet.py", GREET)
    else:
        model.shell(f"touch {project / 'written-by-reviewer.txt'}")
        model.write(project / "written-by-reviewer.py", "x = 1\n")
    model.say("🟢 No findings.")
    return {"review": True}


def outside_project(model: Model, project: Path) -> dict:
    """A write outside the project (opencode asks, and auto-rejects in run mode)."""
    model.write(project.parent / "outside.txt", "x\n")
    model.say("Wrote outside.\nCODER_COMPLETE")
    return {}


def bad_edits(model: Model, project: Path) -> dict:
    """aider: every reply's edit fails to apply, yet each says CODER_COMPLETE."""
    broken = "greet.py\n```python\n<<<<<<< SEARCH\ndef nowhere():\n=======\ndef greet():\n>>>>>>> REPLACE\n```\n"
    for _ in range(4):
        model.api.reply_text(
            broken + "\nCODER_COMPLETE", usage={"input_tokens": 300, "output_tokens": 20}
        )
    (project / "greet.py").write_text("x = 1\n")
    return {}


def error_after_reply(model: Model, project: Path) -> dict:
    """aider: the reply edits a file not in the chat; aider adds it and asks
    again, and that request fails: the edit never applied."""
    block = "app.py\n```python\n<<<<<<< SEARCH\nx = 1\n=======\nx = 2\n>>>>>>> REPLACE\n```\n"
    model.api.responder = None  # the request that asks again gets the error, not the same answer
    model.api.reply_text(
        block + "\nCODER_COMPLETE", usage={"input_tokens": 300, "output_tokens": 20}
    )
    model.fail(400, "invalid_request_error", "scripted refusal")
    return {}


SCENARIOS: dict[str, dict[str, Scenario]] = {
    "claude": {
        "success": success,
        "failure": failure,
        "retried": retried,
        "killed": killed,
        "review": review,
        "review_denied": review_denied,
    },
    "codex": {
        "success": success,
        "failure": failure,
        "retried": retried,
        "retried_notice": retried_notice,
        "killed": killed,
        "review": review,
        "review_denied": review_denied,
    },
    "aider": {
        "success": success,
        "success_no_git": success,
        "failure": failure,
        "retried": retried,
        "killed": killed,
        "review": review,
        "bad_edits": bad_edits,
        "error_after_reply": error_after_reply,
    },
    "opencode": {
        "success": success,
        "failure": failure,
        "retried": retried,
        "killed": killed,
        "review": review,
        "review_denied": review_denied,
        "outside_project": outside_project,
    },
}


def record(name: str, scenario: str) -> dict:
    """Run one scenario of ``name`` (``*_no_git``: in a project outside git); the transcript."""
    in_git = not scenario.endswith("_no_git")
    bin_dir = install(name)
    preset = PRESETS[name]
    with tempfile.TemporaryDirectory(prefix=f"record-{name}-") as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        (project / "app.py").write_text("x = 1\n")
        if in_git:
            init_repo(project)
        with Model(name, root) as model:
            options = SCENARIOS[name][scenario](model, project)
            saved = os.environ.copy()
            os.environ.update(model.env(bin_dir))
            home = Path.home()
            try:
                review_run = bool(options.get("review"))
                ctx = make_ctx(
                    project, coder=name, reviewer=name, timeout=options.get("timeout", 120)
                )
                before = _files(home)
                policy = None if review_run else _observing(project, home)
                with preset.session(ctx, review=review_run) as call, sandbox.confined(policy):
                    command = preset.command(call)
                    run = run_delegate(
                        ctx,
                        command,
                        "Implement greet() in greet.py.",
                        name=f"record-{name}",
                        timeout=ctx.config.timeouts.coder,
                        env=preset.env(call),
                        writable=(*preset.state_paths(), call.scratch),
                    )
                    files = {
                        f: (call.scratch / f).read_text()
                        for f in SCRATCH_FILES
                        if (call.scratch / f).is_file()
                    }
                home_writes = _written(home, before)
            finally:
                os.environ.clear()
                os.environ.update(saved)
        leftovers = sorted(
            p.name for p in project.iterdir() if p.name.startswith((".aider", ".git"))
        )
        status = (
            git(project, "status", "--porcelain", "--untracked-files=all", "--", ".", ":!.stepkit")
            if in_git
            else ""
        )
        return {
            "cli": name,
            "version": version(name),
            "scenario": scenario,
            "review": review_run,
            "command": command,
            "exit_code": run.exit_code,
            "expired": run.expired,
            "output": _portable(run.output, root),
            "scratch_files": {k: _portable(v, root) for k, v in files.items()},
            "git_status_after": _portable(status, root),
            "dot_files_after": leftovers,
            "confined": policy is not None,
            "home_writes": home_writes,
        }


def _observing(project: Path, home: Path) -> sandbox.Policy | None:
    """A coder's sandbox, the home directory writable (None: none here)."""
    return sandbox.policy_for(project, store_root(project), writable=[str(home)])


def _files(home: Path) -> dict[str, tuple[int, int]]:
    """Each file under ``home`` (stepkit's own state left out): its mtime and size."""
    own = state_home()
    return {
        str(path.relative_to(home)): (stat.st_mtime_ns, stat.st_size)
        for path in home.rglob("*")
        if not path.is_relative_to(own) and not path.is_dir()
        for stat in [path.lstat()]
    }


#: The base directories of the XDG specification under the home directory.
XDG_BASES = {".config", ".cache", ".local", ".local/share", ".local/state"}


def _written(home: Path, before: dict[str, tuple[int, int]]) -> list[str]:
    """Where under ``home`` files were made, changed or removed since
    ``before``: each as the CLI's own entry (``.claude``, ``.claude.json``,
    ``.local/share/opencode``: up to its first name that is no XDG base)."""
    after = _files(home)
    changed = (name for name in before.keys() | after.keys() if before.get(name) != after.get(name))
    return sorted({_entry(Path(name)) for name in changed})


def _entry(path: Path) -> str:
    for depth in range(1, len(path.parts) + 1):
        entry = "/".join(path.parts[:depth])
        if entry not in XDG_BASES:
            return entry
    return str(path)


def _portable(text: str, root: Path) -> str:
    return text.replace(str(root), "/TMP")


def main(argv: list[str]) -> int:
    """``[CLI[:SCENARIO] ...]``: record these (default: all)."""
    for spec in argv or list(SCENARIOS):
        name, _, only = spec.partition(":")
        folder = FIXTURES / f"{name}-{version(name)}"
        folder.mkdir(parents=True, exist_ok=True)
        for scenario in [only] if only else SCENARIOS[name]:
            transcript = record(name, scenario)
            (folder / f"{scenario}.json").write_text(
                json.dumps(transcript, indent=1, ensure_ascii=False) + "\n"
            )
            print(
                f"{name} {scenario}: exit {transcript['exit_code']}, {len(transcript['output'])} chars"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
