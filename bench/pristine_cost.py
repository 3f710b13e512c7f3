"""What the pristine re-check costs: the tests gate once more, in a scratch
copy without the step's changes to the verification surface, as a ratio to
the tests gate itself.

Two projects, each a fresh git repo whose step changes a pre-existing test
file (a comment: the surface changed, the re-check runs and passes):

- ``demo``: the bundled demo project (``stepkit demo``), with the demo
  coder's real change of step 1;
- ``suite``: a generated suite of ``tests`` tests (2,000 by default) in 20
  files, the step changing the module they test.

Each case times the plain tests gate (:class:`~stepkit.workspace.gates.GateRunner`)
and :func:`~stepkit.workspace.pristine.recheck_gate` as the verify_tests
node calls it, and checks that the re-check passed.  ``unchanged`` times
the re-check on the suite when the step leaves the surface alone: no
command runs.  ``added``: the step adds a test module to the suite, which
pytest runs in one process with the others, so the suite runs again
without it.  Each case also times the tests node's whole judgement
(:func:`~stepkit.workspace.pristine.recheck_tests`: for ``added`` the
earlier tests in the copy and the new module alone, side by side; else the
re-check beside the gate) as ``node_ratio``, against the plain gate; the
gate followed by the re-check (before) is ``sequential_ratio``.  Run it directly (``python bench/pristine_cost.py [--quick]``)
or call :func:`run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from options import BenchParser

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}
FILES = 20


def _commit(root: Path) -> None:
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(
            ["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
        )


def _demo(root: Path) -> tuple[Path, callable]:
    shutil.copytree(REPO / "stepkit" / "examples" / "demo", root)
    (root / "stepkit.toml").write_text(
        f'[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "{sys.executable} -m pytest -q"\n'
    )
    _commit(root)

    def step() -> None:
        subprocess.run(
            [sys.executable, str(root / "tools" / "demo_coder.py")],
            cwd=root,
            check=True,
            capture_output=True,
            input="slugify",
            text=True,
            env={**os.environ, "STEPKIT_PROJECT_DIR": str(root)},
        )
        test = root / "tests" / "test_counting.py"
        test.write_text(test.read_text() + "\n# the step touched a pre-existing test\n")

    return root, step


def _suite(root: Path, tests: int) -> tuple[Path, callable]:
    (root / "tests").mkdir(parents=True)
    (root / "gen.py").write_text("def double(x):\n    return x * 2\n")
    (root / "pyproject.toml").write_text('[project]\nname = "gen"\nversion = "0.1"\n')
    per_file = max(1, tests // FILES)
    for n in range(FILES):
        body = "import gen\n" + "".join(
            f"\n\ndef test_{n}_{i}():\n    assert gen.double({i}) == {2 * i}\n"
            for i in range(per_file)
        )
        (root / "tests" / f"test_gen_{n:02d}.py").write_text(body)
    (root / "stepkit.toml").write_text(
        f'[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "{sys.executable} -m pytest -q -p no:cacheprovider tests"\n'
    )
    _commit(root)

    def step() -> None:
        (root / "gen.py").write_text("def double(x):\n    return x + x\n")
        test = root / "tests" / "test_gen_00.py"
        test.write_text(test.read_text() + "\n# the step touched a pre-existing test\n")

    return root, step


def _case(project: Path, step) -> dict:
    from stepkit.config import load_config
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.records import Outcome, StageContext
    from stepkit.workspace.gates import GateRunner
    from stepkit.workspace.pristine import recheck_gate, recheck_tests
    from stepkit.workspace.scope import take_snapshot

    snapshot = take_snapshot(project)
    step()
    config = load_config(project)
    pm = get_plugin_manager(project, config, [])
    run_dir = Path(tempfile.mkdtemp(prefix="bench-pristine-"))
    ctx = StageContext(
        node="verify_tests",
        project_dir=project,
        plans_dir=project / "plans",
        state={"plan_text": ""},
        settings={},
        config=config,
        pm=pm,
        run_dir=run_dir,
    )
    started = time.perf_counter()
    (gate,) = GateRunner(pm, project, config, ctx.log_dir()).run(["tests"])
    plain = time.perf_counter() - started
    started = time.perf_counter()
    judged = recheck_gate(
        ctx, Outcome(route="pass", updates={"gates": [gate.model_dump()]}), snapshot, ""
    )
    recheck = time.perf_counter() - started

    def run_tests(only: list[str] | None, meanwhile: Callable[[], None] | None) -> Outcome:
        runner = GateRunner(
            pm, project, config, ctx.log_dir(), only_tests=only, meanwhile=meanwhile
        )
        (ran,) = runner.run(["tests"])
        return Outcome(
            route="fail" if ran.failed else "pass", updates={"gates": [ran.model_dump()]}
        )

    started = time.perf_counter()
    node = recheck_tests(ctx, run_tests, snapshot, "")
    whole = time.perf_counter() - started
    shutil.rmtree(run_dir, ignore_errors=True)
    tests = next(g for g in judged.updates["gates"] if g["name"] == "tests")
    node_tests = next(g for g in node.updates["gates"] if g["name"] == "tests")
    return {
        "status": tests["status"],
        "surface": judged.updates.get("surface_changes", []),
        "tests_seconds": round(plain, 3),
        "recheck_seconds": round(recheck, 3),
        "ratio": round(recheck / plain, 3) if plain else None,
        "node_status": node_tests["status"],
        "node_seconds": round(whole, 3),
        "node_ratio": round(whole / plain, 3) if plain else None,
        "sequential_ratio": round((plain + recheck) / plain, 3) if plain else None,
        "plain_summary": gate.summary,
    }


#: ``--smoke``: every case once on a small generated suite (the test suite's run; figures not judged)
SMOKE = {"tests": 50}


def run(tests: int = 2000) -> dict:
    """The demo, the generated suite, the suite with the surface left alone and with a test module added."""
    figures = {}
    with tempfile.TemporaryDirectory(prefix="bench-pristine-") as tmp:
        figures["demo"] = _case(*_demo(Path(tmp) / "demo"))
        figures["suite"] = {**_case(*_suite(Path(tmp) / "suite", tests)), "tests": tests}
        root, _ = _suite(Path(tmp) / "unchanged", tests)
        figures["unchanged"] = _case(
            root, lambda: (root / "gen.py").write_text("def double(x):\n    return x + x\n")
        )
        root, _ = _suite(Path(tmp) / "added", tests)
        figures["added"] = _case(
            root,
            lambda: (root / "tests" / "test_gen_new.py").write_text(
                "import gen\n\n\ndef test_new():\n    assert gen.double(3) == 6\n"
            ),
        )
    return figures


def main() -> int:
    parser = BenchParser(__doc__)
    parser.modes.add_argument(
        "--quick", action="store_true", help="a suite of 200 tests instead of 2,000"
    )
    args = parser.parse_args()
    figures = run(**SMOKE) if args.smoke else run(200 if args.quick else 2000)
    print(
        f"{'case':<10} {'status':<6} {'tests gate s':>12} {'re-check s':>10} {'ratio':>6}"
        f" {'node s':>7} {'node ratio':>10} {'before':>7}"
    )
    for case, f in figures.items():
        print(
            f"{case:<10} {f['status']:<6} {f['tests_seconds']:>12.2f} {f['recheck_seconds']:>10.2f}"
            f" {f['ratio']:>6} {f['node_seconds']:>7.2f} {f['node_ratio']:>10} {f['sequential_ratio']:>7}"
        )
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
