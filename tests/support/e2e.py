"""End-to-end fixtures: a real git project with a plan repo, real gate
commands, a command coder that is a small script, and the real CLI.

The coder script plays one scripted action per invocation (write files,
run a shell command, print, exit, kill itself), so a test can drive the fix loop or a crash.  The
LLM nodes use the scripted engine, except where a test starts the loopback
Messages API to run the real SDK.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from stepkit.workspace.store import store_dir
from tests.support import cli, edge_coverage
from tests.support.gitrepo import git, init_repo

PY = sys.executable
#: The developer's variables that would steer a test or benchmark run (its
#: answers, coder, plugins, gate commands) or reach the real API.
DEVELOPER_PREFIXES = ("STEP_", "STEPKIT_", "CODER_", "ANTHROPIC_")
GATE_VARIABLES = ("FORMAT_CMD", "LINT_CMD", "BUILD_CMD", "TEST_CMD")

#: The head of both scripts: ``take(name, entries)`` counts the call in
#: ``<name>_calls`` and returns its number and its entry of the JSON list in
#: the file ``entries`` (the last entry serves every later call).
_TAKE = r"""
import json, os, pathlib, signal, sys
state = pathlib.Path(os.environ["E2E_STATE_DIR"])

def take(name, entries):
    scripted = json.loads((state / entries).read_text())
    counter = state / f"{name}_calls"
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    return n, scripted[min(n, len(scripted) - 1)]
"""

CODER = (
    _TAKE
    + r"""
n, action = take("coder", "coder_actions.json")
prompt = sys.stdin.read()
(state / f"coder_prompt_{n}.txt").write_text(prompt)
project = pathlib.Path(os.environ["STEPKIT_PROJECT_DIR"])
for rel, content in action.get("write", {}).items():
    path = project / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content)
for rel in action.get("delete", []):
    (project / rel).unlink(missing_ok=True)
if action.get("shell"):
    import subprocess
    subprocess.run(action["shell"], shell=True, cwd=project, check=True)
if action.get("kill"):
    os.kill(os.getpid(), signal.SIGKILL)
print(action.get("say", "coder: did the work"))
if action.get("sentinel"):
    print(action["sentinel"])
sys.exit(action.get("exit", 0))
"""
)

REVIEWER = (
    _TAKE
    + r"""
_, report = take("reviewer", "reviewer_reports.json")
sys.stdin.read()
if report == "CRASH":
    os.kill(os.getpid(), signal.SIGKILL)
print(report)
"""
)

CHECK = """import sys
import calc

failures = []
if not hasattr(calc, "mul"):
    failures.append("test_mul: calc has no mul")
elif calc.mul(2, 3) != 6:
    failures.append(f"test_mul: mul(2, 3) == {calc.mul(2, 3)}, expected 6")
if calc.add(2, 3) != 5:
    failures.append("test_add: add is broken")
for line in failures:
    print("FAILED", line)
# a test runner's closing summary (pytest's shape): what shows the tests gate that tests ran
print(", ".join([f"{len(failures)} failed"] * bool(failures) + [f"{2 - len(failures)} passed"]), "in 0.01s")
sys.exit(1 if failures else 0)
"""

LINT = """import pathlib
import sys

bad = [p.name for p in pathlib.Path(".").glob("*.py") if "LINT" + "FAIL" in p.read_text()]
for name in bad:
    print(f"{name}:1:1: E999 forbidden marker")
sys.exit(1 if bad else 0)
"""

CALC = "def add(a, b):\n    return a + b\n"
GOOD_MUL = CALC + "\n\ndef mul(a, b):\n    return a * b\n"
WRONG_MUL = CALC + "\n\ndef mul(a, b):\n    return a + b\n"


def plan(step: int, title: str, depends_on: list[int], extra: str = "") -> str:
    return (
        f"---\nstep: {step}\ntitle: {title}\ndepends_on: {depends_on}\nstatus: pending\n---\n\n"
        f"## Objective\n{title}.\n\n## Tasks\n- Implement {title.lower()} in `calc.py`.\n\n"
        f"## Acceptance criteria\n- `python check.py` passes.\n\n## Test commands\n- `python check.py`\n\n"
        f"## Edge cases\n- Negative numbers.\n\n## Out of scope\n- Everything else.\n{extra}"
    )


ORIENT = {
    "plan_summary": "Add calc.mul.",
    "implementation_brief": "Add mul(a, b) to calc.py next to add.",
    "staleness_report": "clean",
    "has_major_deviation": False,
    "deviation_summary": "",
}

#: an orient answer that finds a major deviation
DEVIATION = {
    **ORIENT,
    "has_major_deviation": True,
    "deviation_summary": "calc.py was renamed to arith.py",
    "staleness_report": "Context names calc.py; the code has arith.py",
}
SWEEP = {
    "edge_case_report": "Handled: integers. Punted: floats.",
    "downstream_updates": "None",
    "needs_independent_review": False,
    "annotations": [{"step": 3, "edge_case": "Division by zero must raise ValueError."}],
}
HANDOFF = {
    "step_summary": "calc.mul added and tested.",
    "result": "complete",
    "summary": "Added calc.mul.",
    "completed": "- calc.mul",
    "not_completed": "None",
    "deviations": "None",
    "downstream_plan_updates": "None",
    "edge_cases_discovered": "Floats are not special-cased.",
    "notes_for_next_step": "Use the same module.",
    "notes_facts": ["calc functions take two numbers and return one."],
    # check.py is no test runner with test ids: the plan's one criterion has no test cited
    "acceptance_criteria": [{"criterion": "`python check.py` passes.", "tests": []}],
}


def sh(*words: str | Path) -> str:
    """``words`` as one shell command line (a path with a space stays one word)."""
    return shlex.join(str(word) for word in words)


def command_coder(*words: str | Path) -> str:
    """The ``command:`` spec of a coder or reviewer running ``words``."""
    return "command:" + sh(*words)


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment without the developer's variables, plus
    ``extra``; the suite's virtualenv first on ``PATH``, as an activated one
    is, so ``python`` there is the stepkit under test's own interpreter (a
    test of another Python on the gates' PATH sets its own)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(DEVELOPER_PREFIXES) and k not in GATE_VARIABLES
    }
    bin_dir = os.path.dirname(PY)
    path = env.get("PATH", "")
    if path.split(os.pathsep)[0] != bin_dir:
        env["PATH"] = os.pathsep.join([bin_dir, path]) if path else bin_dir
    return {**env, **extra}


@dataclass
class Project:
    root: Path
    state_dir: Path
    answers: dict[str, Any] = field(default_factory=dict)
    edges: set[tuple[str, str, str]] = field(default_factory=set)

    @property
    def plans(self) -> Path:
        return self.root / "plans"

    @property
    def scripted_coder(self) -> str:
        """The ``--coder`` spec of the coder script (its actions: :meth:`coder_actions`)."""
        return command_coder(PY, self.state_dir / "coder.py")

    def allow_writes(self, *paths: Path) -> None:
        """Let the sandboxed coder and gates also write ``paths`` (a test's
        counters outside the project), as a project would: ``[sandbox] writable``."""
        config = self.root / "stepkit.toml"
        text = config.read_text() if config.exists() else ""
        line = next((line for line in text.splitlines() if line.startswith("writable = ")), None)
        if line is None:  # a project of the test's own making: its [sandbox] table added
            config.write_text(sandbox_table(*paths) + text)
            return
        listed = [*json.loads(line.removeprefix("writable = ")), *map(str, paths)]
        config.write_text(text.replace(line, f"writable = {json.dumps(listed)}"))

    def plan_status(self, step: int) -> str:
        path = next((self.plans / "steps").glob(f"{step:02d}-*.md"))
        for line in path.read_text().splitlines():
            if line.startswith("status:"):
                return line.split(":", 1)[1].strip()
        return "pending"

    def handoff(self, step: int = 1) -> Path:
        return next(
            iter((self.plans / "handoffs").glob(f"{step:02d}-*.md")),
            self.plans / "handoffs" / "missing",
        )

    def coder_actions(self, *actions: dict[str, Any]) -> None:
        (self.state_dir / "coder_actions.json").write_text(json.dumps(list(actions)))

    def reviewer_reports(self, *reports: str) -> None:
        (self.state_dir / "reviewer_reports.json").write_text(json.dumps(list(reports)))

    def coder_calls(self) -> int:
        counter = self.state_dir / "coder_calls"
        return int(counter.read_text()) if counter.exists() else 0

    def coder_prompt(self, n: int) -> str:
        return (self.state_dir / f"coder_prompt_{n}.txt").read_text()

    def script(self, **answers: Any) -> Path:
        """Write the scripted engine's answers (defaults for every LLM node)."""
        data = {"orient": ORIENT, "edge_case_sweep": SWEEP, "write_handoff": HANDOFF, **answers}
        path = self.state_dir / "answers.yaml"
        path.write_text(yaml.safe_dump(data, allow_unicode=True))
        return path

    def env(self, **extra: str) -> dict[str, str]:
        return clean_env(E2E_STATE_DIR=str(self.state_dir), PYTHONDONTWRITEBYTECODE="1", **extra)

    def stepkit(
        self, *args: str, env: dict[str, str] | None = None, json_out: bool = True
    ) -> Result:
        proc = cli.stepkit(
            *args,
            *["--json"] * json_out,
            cwd=self.root,
            env=env or self.env(),
            stdin=subprocess.DEVNULL,
        )
        result = Result(proc.returncode, proc.stdout, proc.stderr)
        if json_out and proc.stdout.strip().startswith("{"):
            result.data = json.loads(proc.stdout)
            self.record_edges(result.data.get("run_id"), result.data.get("run_dir"))
        return result

    def run_args(
        self, *extra: str, engine: Path | None = None, coder: str | None = None
    ) -> list[str]:
        """``run`` and its arguments: this project, the scripted engine and coder."""
        return [
            "run",
            "--project-dir",
            str(self.root),
            "--engine",
            f"scripted:{engine or self.script()}",
            "--coder",
            coder or self.scripted_coder,
            *extra,
        ]

    def run(
        self,
        *args: str,
        engine: Path | None = None,
        coder: str | None = None,
        env: dict[str, str] | None = None,
        json_out: bool = True,
    ) -> Result:
        return self.stepkit(
            *self.run_args(*args, engine=engine, coder=coder), env=env, json_out=json_out
        )

    def resume(self, answer: str | None = None, env: dict[str, str] | None = None) -> Result:
        args = ["resume", "--project-dir", str(self.root)]
        if answer is not None:
            args += ["--answer", answer]
        return self.stepkit(*args, env=env)

    def record_edges(self, run_id: str | None, run_dir: str | None = None) -> None:
        if not run_id:
            return
        # a --worktree run's store is its work tree's, which its run_dir names
        state_file = (
            Path(run_dir) / "state.json"
            if run_dir
            else store_dir(self.root) / "runs" / run_id / "state.json"
        )
        state = json.loads(state_file.read_text())
        self.edges.update((a, b, label) for a, b, label in state["edges"])
        edge_coverage.record(self.edges)

    def git(self, *args: str) -> str:
        return git(self.root, *args)


@dataclass
class Result:
    code: int
    stdout: str
    stderr: str
    data: dict[str, Any] = field(default_factory=dict)

    @property
    def outcome(self) -> str | None:
        return self.data.get("outcome")

    @property
    def output(self) -> str:
        return self.data.get("output") or ""


def unconfined_env(tmp_path: Path) -> dict[str, str]:
    """PATH with a ``bwrap`` first that cannot create its namespaces, as in a
    container that forbids them: stepkit runs the coder unconfined (for the
    defences that matter where there is no sandbox)."""
    bin_dir = tmp_path / "no-sandbox-bin"
    bin_dir.mkdir(exist_ok=True)
    fake = bin_dir / "bwrap"
    fake.write_text("#!/bin/sh\necho 'bwrap: No permissions to create new namespace' >&2\nexit 1\n")
    fake.chmod(0o755)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def sandbox_table(*writable: Path) -> str:
    """The ``[sandbox]`` table of a test project: the coder script keeps its
    counters and prompts in the suite's state dir, outside the project,
    which the sandbox lets it write only because the project says so."""
    return f"[sandbox]\nwritable = {json.dumps([str(path) for path in writable])}\n"


def make_project(
    tmp_path: Path, reviewer: bool = True, files: dict[str, str] | None = None
) -> Project:
    """A git repo: calc.py, real lint/build/test commands, a three-step plan
    (and ``files``, relative path → text, in its first commit)."""
    root = tmp_path / "project"
    state_dir = tmp_path / "e2e-state"
    state_dir.mkdir(parents=True)
    (state_dir / "coder.py").write_text(CODER)
    (state_dir / "reviewer.py").write_text(REVIEWER)
    config = sandbox_table(state_dir) + (
        "[commands]\n"
        'format = ""\n'
        f'lint = "{PY} lint.py"\n'
        f'build = "{PY} -m py_compile calc.py"\n'
        f'test = "{PY} check.py"\n'
    )
    if reviewer:
        config = f"reviewer = {json.dumps(command_coder(PY, state_dir / 'reviewer.py'))}\n" + config
    project = Project(root, state_dir)
    project.coder_actions({"write": {"calc.py": GOOD_MUL}, "sentinel": "CODER_COMPLETE"})
    project.reviewer_reports("🟢 looks good")
    init_repo(
        root,
        {
            "calc.py": CALC,
            "check.py": CHECK,
            "lint.py": LINT,
            "stepkit.toml": config,
            "plans/NOTES.md": "# Notes\n\n- calc is a tiny module.\n",
            "plans/steps/01-mul.md": plan(1, "Add mul", []),
            "plans/steps/02-div.md": plan(2, "Add div", [1]),
            "plans/steps/03-pow.md": plan(3, "Add pow", [2]),
            **(files or {}),
        },
    )
    return project


def flag_texts(state: dict, kind: str | None = None) -> list[str]:
    """The text of each tamper flag a checkpoint's state holds (of ``kind`` only, if given)."""
    return [f["text"] for f in state.get("tamper_flags", []) if kind in (None, f["kind"])]
