"""A project for ``stepkit run --parallel``: two independent steps (1 adds
``ops/mul.py``, 2 adds ``ops/div.py``) and a third that depends on both,
a command coder and a test command that can be told to wait for marker
files, and the real CLI.

Each script finds its step from the branch its work tree is on
(``stepkit/01-mul`` → ``mul``), writes ``started-<name>`` (the coder, with
``overlapped-<name>`` when another coder is under way then) or
``testing-<name>`` (the tests) in the state dir, and on its first call waits
for the files ``waits.json`` lists under that key, up to :data:`BOUND_S`:
a coder told to wait for the other's ``started-…`` marker only finishes when
both ran at the same time.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import yaml

from stepkit.protocol.graphs import STEP_RUNNER
from tests.support.e2e import PY, Project, make_project, plan, sh
from tests.support.gitrepo import git

#: How long a script waits for a marker before it gives up (and fails the step):
#: only reached when the runs it waits for did not run at the same time.
BOUND_S = 120

_WAIT = r"""
import json, os, pathlib, subprocess, sys, time
state = pathlib.Path(os.environ["E2E_STATE_DIR"])
here = pathlib.Path(os.environ.get("STEPKIT_PROJECT_DIR") or os.getcwd())
branch = subprocess.run(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd=here, capture_output=True,
                        text=True).stdout.strip()
name = branch.rsplit("/", 1)[-1].partition("-")[2] or "base"

def first_call(kind):
    counter = state / f"{kind}-calls-{name}"
    n = int(counter.read_text()) if counter.exists() else 0
    counter.write_text(str(n + 1))
    return n == 0

def wait_for(key):
    waits = json.loads((state / "waits.json").read_text()).get(key, [])
    deadline = time.monotonic() + BOUND_S
    while not all((state / marker).exists() for marker in waits):
        if time.monotonic() > deadline:
            print(f"{key}: gave up waiting for {waits}")
            sys.exit(1)
        time.sleep(0.01)  # a poll of the marker files, not a wait for them
"""

CODER = (
    _WAIT
    + r"""
sys.stdin.read()
first = first_call("coder")
busy = [p.name for p in state.glob("started-*") if not (state / p.name.replace("started-", "coded-")).exists()]
if busy:  # another coder is under way now
    (state / f"overlapped-{name}").write_text(" ".join(busy))
(state / f"started-{name}").write_text(str(os.getpid()))
if first:
    wait_for(f"coder-{name}")
ops = here / "ops"
ops.mkdir(exist_ok=True)
(ops / f"{name}.py").write_text(f"def {name}(a, b):\n    return a\n")
(state / f"coded-{name}").write_text("")
print("CODER_COMPLETE")
"""
)

TESTS = (
    _WAIT
    + r"""
first = first_call("tests")
(state / f"testing-{name}").write_text(str(os.getpid()))
if first:
    wait_for(f"tests-{name}")
sys.path.insert(0, os.getcwd())
import importlib
modules = sorted(p.stem for p in pathlib.Path("ops").glob("*.py") if p.stem != "__init__")
for module in modules:
    importlib.import_module(f"ops.{module}")
print(f"{len(modules) + 1} passed in 0.01s")
"""
)


def parallel_project(tmp_path: Path) -> Project:
    """The e2e project (tests/support/e2e.py) with the plan and scripts above."""
    project = make_project(tmp_path)
    root = project.root
    (project.state_dir / "coder.py").write_text(CODER.replace("BOUND_S", str(BOUND_S)))
    (project.state_dir / "tests.py").write_text(TESTS.replace("BOUND_S", str(BOUND_S)))
    waits(project)
    for old in (root / "plans" / "steps").iterdir():
        old.unlink()
    steps = {
        "01-mul.md": plan(1, "Add mul", []),
        "02-div.md": plan(2, "Add div", []),
        "03-pow.md": plan(3, "Add pow", [1, 2]),
    }
    for name, text in steps.items():
        (root / "plans" / "steps" / name).write_text(text)
    (root / "ops").mkdir()
    (root / "ops" / "__init__.py").write_text("")
    config = (root / "stepkit.toml").read_text()
    config = config.replace(
        f'test = "{PY} check.py"', f'test = "{sh(PY, project.state_dir / "tests.py")}"'
    )
    config = config.replace(f'build = "{PY} -m py_compile calc.py"', 'build = ""')
    (root / "stepkit.toml").write_text(config)
    project.git("add", "-A")
    project.git("commit", "-qm", "two independent steps and one after both")
    return project


def waits(project: Project, **keys: list[str]) -> None:
    """What each script waits for on its first call: ``coder_<name>`` and
    ``tests_<name>`` keys (written ``coder-<name>``…), each a list of marker
    file names in the state dir."""
    (project.state_dir / "waits.json").write_text(
        json.dumps({k.replace("_", "-"): v for k, v in keys.items()})
    )


def snapshot(root: Path) -> dict[str, object]:
    """The user's tree, index and HEAD: every file's bytes (outside .git), the
    staged entries, the branch and the commit it is at."""
    files = {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }

    return {
        "files": files,
        "index": git(root, "ls-files", "--stage"),
        "head": git(root, "rev-parse", "HEAD"),
        "branch": git(root, "symbolic-ref", "HEAD"),
    }


def start_parallel(project: Project, *args: str) -> subprocess.Popen[str]:
    """``stepkit run --parallel …`` in the background (its output piped)."""
    cmd = [PY, "-m", "stepkit", *project.run_args(*args)]
    return subprocess.Popen(
        cmd,
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def child_of(parent: subprocess.Popen[str], step: int) -> int:
    """The pid of the ``--parallel`` child that runs ``step``."""
    import psutil

    for child in psutil.Process(parent.pid).children():
        if f"--step={step}" in child.cmdline():
            return child.pid
    raise AssertionError(f"no child process runs step {step}")


def approving_graph(directory: Path) -> Path:
    """The built-in step-runner with its final approval open to ``--answer
    gate_user_review=approve`` (a CI's graph), so that a step completes
    within one invocation."""
    graph = yaml.safe_load(STEP_RUNNER.read_text(encoding="utf-8"))
    graph["nodes"]["gate_user_review"]["pre_answer"] = True
    path = directory / "approving.yaml"
    path.write_text(yaml.safe_dump(graph, sort_keys=False), encoding="utf-8")
    return path
