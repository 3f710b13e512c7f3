"""What the test-level verdicts cost: the extra test runs a step pays for
its baseline, and the baseline cache.

A fresh git project with a real pytest suite, whose ``conftest.py`` counts
every pytest session in a file outside the tree (so the worktree the
baseline runs in counts too).  The step's start is snapshotted, a passing
feature is added, and the tests gate runs through the real
:class:`~stepkit.workspace.gates.GateRunner` with the start tree as its
baseline, as a run's verify node does:

- ``green``: every test passes — the baseline costs nothing (0 extra runs);
- ``preexisting``: one committed test fails — the failing id is re-run once
  and the baseline runs once: 2 extra pytest sessions, the gate passes with
  the failure listed as pre-existing;
- ``second_run``: the same base again (a later run of the same step) — the
  baseline comes from the cache: 1 extra session (the re-run), cache hit.

Each case reports the pytest sessions, the extra ones, the gate's status
and the seconds of the gate with its judging against the plain gate run.
Run it directly (``python bench/baseline_cost.py``) or call :func:`run`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from options import BenchParser

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

CONFTEST = """import os
import pathlib


def pytest_sessionstart(session):
    with pathlib.Path(os.environ["BENCH_SESSIONS"]).open("a") as fh:
        fh.write("session\\n")
"""
PASSING = "def test_add():\n    assert 1 + 1 == 2\n\n\ndef test_more():\n    assert 2 * 2 == 4\n"
OLD_BUG = "\n\ndef test_old_bug():\n    assert 0.1 + 0.2 == 0.3\n"
FEATURE = "def test_feature():\n    assert 'ab'.upper() == 'AB'\n"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "b",
    "GIT_AUTHOR_EMAIL": "b@b",
    "GIT_COMMITTER_NAME": "b",
    "GIT_COMMITTER_EMAIL": "b@b",
}


def _project(root: Path, suite: str) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "conftest.py").write_text(CONFTEST)
    (root / "tests" / "test_base.py").write_text(suite)
    (root / "stepkit.toml").write_text(
        f'[commands]\nformat = ""\nlint = ""\nbuild = ""\ntest = "{sys.executable} -m pytest -q -p no:cacheprovider tests"\n'
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
        subprocess.run(
            ["git", *args], cwd=root, check=True, capture_output=True, env={**os.environ, **GIT_ENV}
        )
    return root


def _gate(project: Path, snapshot, counter: Path, judged: bool) -> dict:
    from stepkit.config import load_config
    from stepkit.pluginmanager import get_plugin_manager
    from stepkit.workspace.baseline import snapshot_tree
    from stepkit.workspace.gates import GateRunner

    config = load_config(project)
    pm = get_plugin_manager(project, config, [])
    before = counter.read_text().count("\n") if counter.exists() else 0
    logs = Path(tempfile.mkdtemp(prefix="bench-logs-"))
    runner = GateRunner(
        pm, project, config, logs, baseline=snapshot_tree(snapshot) if judged else None
    )
    started = time.perf_counter()
    (result,) = runner.run(["tests"])
    seconds = time.perf_counter() - started
    shutil.rmtree(logs, ignore_errors=True)
    sessions = counter.read_text().count("\n") - before
    baselines = runner.judge.baselines if runner.judge else []
    return {
        "status": result.status,
        "sessions": sessions,
        "extra_runs": sessions - 1,
        "seconds": round(seconds, 3),
        "preexisting": result.preexisting_failures,
        "new": result.new_failures,
        "baseline_cache_hit": bool(baselines) and all(b.cached for b in baselines),
    }


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {}


def run() -> dict:
    """The three cases (see the module docstring), each with the plain gate's seconds."""
    from stepkit.workspace.scope import take_snapshot

    figures = {}
    with tempfile.TemporaryDirectory(prefix="bench-baseline-") as tmp:
        counter = Path(tmp) / "sessions"
        os.environ["BENCH_SESSIONS"] = str(counter)
        for case, suite in (("green", PASSING), ("preexisting", PASSING + OLD_BUG)):
            project = _project(Path(tmp) / case, suite)
            snapshot = take_snapshot(project)
            (project / "tests" / "test_feature.py").write_text(FEATURE)  # the step's change
            plain = _gate(project, snapshot, counter, judged=False)
            figures[case] = {
                **_gate(project, snapshot, counter, judged=True),
                "plain_seconds": plain["seconds"],
            }
            if case == "preexisting":
                figures["second_run"] = {
                    **_gate(project, snapshot, counter, judged=True),
                    "plain_seconds": plain["seconds"],
                }
    return figures


def main() -> int:
    args = BenchParser(__doc__).parse_args()
    figures = run(**SMOKE) if args.smoke else run()
    print(
        f"{'case':<12} {'status':<6} {'pytest runs':>11} {'extra':>5} {'cache hit':>9} {'s (judged)':>10} {'s (plain)':>9}"
    )
    for case, f in figures.items():
        print(
            f"{case:<12} {f['status']:<6} {f['sessions']:>11} {f['extra_runs']:>5} "
            f"{'yes' if f['baseline_cache_hit'] else 'no':>9} {f['seconds']:>10.2f} {f['plain_seconds']:>9.2f}"
        )
    print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
