"""Whole-suite runs per step on real projects, and what the step costs
against the suite run once by hand.

Three projects, fetched as pinned fixtures into a cache under the system's
temporary directory (checked against their sha256; skipped with the reason
when the registry cannot be reached):

- ``itsdangerous``: the PyPI sdist (it ships its tests; ``freezegun``, which
  they import, is installed beside it with pip);
- ``more-itertools``: the PyPI sdist (it ships its tests);
- ``vitest``: no package of the npm registry we know ships its vitest
  suite and config (``ufo``, the project the issue measured, publishes
  ``dist`` only), so a generated project of 10 test files and 500 tests runs
  under the real ``vitest`` installed from the registry at a pinned version.

Each project becomes a fresh git repo with a one-step plan and the tests gate
only (format, lint and build empty).  The step runs through the real CLI,
``run`` then ``resume --answer approve``, with the scripted engine and a
command coder that makes its change with no think time
(:data:`tests.support.e2e.CODER`).  Step kinds:

- ``code_only``: the coder adds a function to a module;
- ``test_added``: the same and a new test module that passes;
- ``fix_round``: first a wrong function whose new test fails, then the fix.

The tests command is the runner's name (``pytest``, ``vitest``), a wrapper
first on ``PATH`` that runs the real runner and logs each run: its start
and end, its niceness, its directory, its selection and its tests.  A run of
at least half the suite's tests (as its output counts them: what it ran,
whatever it was asked) is a whole-suite run.  **In the critical path** are the runs the
verdicts make after the coder's round: with a coder that takes no time,
every run of the tests gate (in the project, or in the pristine copy).  The
start's measure (the runs at the lowest priority, in its copy, begun before
the coder) is what a coder's work hides.  Where the runner lists its tests
(pytest), the measure lists the start's ids first and its whole run is
paused while the gate runs, and killed with the run when no verdict needed
it (the wrapper logs no end for it); elsewhere, with a coder that takes no
time, the whole run goes on beside the gate, which waits for its outcomes
(test-id conservation) and shares the CPU with it.  Neither is counted
among the whole runs, and ``start_beside_s`` is how long the measure's runs
still ran once the gate began.  That wait is in the step's wall time, which
the target judges.

Per step: ``whole`` (whole-suite runs in the critical path), ``only`` (the
other runs: failing ids, a module alone), the step's wall time (both processes) as a
ratio to the suite run by hand on the final tree (the median of three runs
after the step), and stepkit's own
seconds: the wall time less the critical-path runs (the union of their
intervals) and the coder.  Medians of ``repeat`` steps.  Target:
on itsdangerous and more-itertools, 1, 1 and 2 whole runs, and a step at
most the suite's time × that count + 1.5 s.

Run it directly (``python bench/real_projects.py [--quick] [--only NAME,…]
[--stepkit-from DIR]``)
or call :func:`run`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import yaml
from full_run import ANSWERS, GIT_ID, PLAN, stepkit_json
from options import BenchParser

from stepkit.workspace.store import store_dir
from tests.support.e2e import CODER, clean_env, command_coder, sandbox_table

CACHE = Path(tempfile.gettempdir()) / "stepkit-bench-fixtures"
#: the whole step may exceed the suite's time × its whole runs by this much
SLACK_S = 1.5
TARGET_WHOLE = {"code_only": 1, "test_added": 1, "fix_round": 2}
KINDS = tuple(TARGET_WHOLE)
VITEST = "3.2.7"
#: pure-Python test dependency of itsdangerous (freezegun needs python-dateutil)
FREEZEGUN = ("freezegun==1.5.5", "python-dateutil==2.9.0.post0", "six==1.17.0")

#: runs the real runner and logs ``start end niceness cwd PYTEST_ADDOPTS args tests``
#: (``tests``: the most tests one line of its output counts as passed and failed, what it
#: ran whatever it was asked); first on PATH, and in node_modules/.bin, which stepkit puts
#: first on PATH for a node project
WRAPPER = """#!/bin/sh
start=$(date +%s.%N)
out=$({real} "$@" 2>&1)
code=$?
printf '%s\\n' "$out"
tests=$(printf '%s\\n' "$out" | awk '{{n = 0; for (i = 2; i <= NF; i++)
  if ($i ~ /^(passed|failed)/ && $(i - 1) ~ /^[0-9]+$/) n += $(i - 1); if (n > m) m = n}}
  END {{print m + 0}}')
printf '%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n' "$start" "$(date +%s.%N)" "$(nice)" \\
  "$(pwd)" "$PYTEST_ADDOPTS" "$*" "$tests" >> "$BENCH_RUNS_LOG"
exit $code
"""


@dataclass(frozen=True)
class Fixture:
    """A real project: where it comes from and how the step changes it."""

    name: str
    runner: str  # the tests command's first word: the wrapper's name
    command: str  # the tests command
    source: str  # the module the coder changes
    new_test: str  # the test module a step adds
    good: str  # appended to ``source``
    wrong: str  # appended to ``source`` by the first round of a fix round
    test: str  # the new test module


PY_GOOD = "\n\ndef bench_answer():\n    return 42\n"
PY_TEST = "from {module} import bench_answer\n\n\ndef test_bench_answer():\n    assert bench_answer() == 42\n"
JS_GOOD = "\nexport function benchAnswer() {\n  return 42;\n}\n"
JS_TEST = (
    'import { expect, test } from "vitest";\nimport { benchAnswer } from "../src/m00.mjs";\n\n'
    'test("bench answer", () => {\n  expect(benchAnswer()).toBe(42);\n});\n'
)
PYTEST = "pytest -q -p no:cacheprovider tests"

SDISTS = {
    "itsdangerous": (
        "https://files.pythonhosted.org/packages/9c/cb/8ac0172223afbccb63986cc25049b154ecfb5e85932587206f42317be31d/itsdangerous-2.2.0.tar.gz",
        "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173",
    ),
    "more-itertools": (
        "https://files.pythonhosted.org/packages/52/b8/c63995bebbb9ac9c059350e0fb8c82c2420c85aeca7d34e40aecf3df9281/more_itertools-11.2.1.tar.gz",
        "cbf08fd0af284dc69718b9b76a8e6203df624d70209ea511e4219d350c856f63",
    ),
}
FIXTURES = {
    "itsdangerous": Fixture(
        "itsdangerous",
        "pytest",
        PYTEST,
        "src/itsdangerous/_json.py",
        "tests/test_itsdangerous/test_bench_added.py",
        PY_GOOD,
        PY_GOOD.replace("42", "41"),
        PY_TEST.format(module="itsdangerous._json"),
    ),
    "more-itertools": Fixture(
        "more-itertools",
        "pytest",
        PYTEST,
        "more_itertools/more.py",
        "tests/test_bench_added.py",
        PY_GOOD,
        PY_GOOD.replace("42", "41"),
        PY_TEST.format(module="more_itertools.more"),
    ),
    "vitest": Fixture(
        "vitest",
        "vitest",
        "vitest run",
        "src/m00.mjs",
        "tests/bench_added.test.mjs",
        JS_GOOD,
        JS_GOOD.replace("42", "41"),
        JS_TEST,
    ),
}


class Offline(Exception):
    """A fixture cannot be fetched: the reason."""


# -- fixtures ------------------------------------------------------------------------


def _download(url: str, sha256: str) -> Path:
    target = CACHE / url.rsplit("/", 1)[1]
    if not target.is_file():
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            with urllib.request.urlopen(url, timeout=60) as response:
                data = response.read()
        except OSError as exc:
            raise Offline(f"cannot download {url}: {exc}") from exc
        partial = target.with_suffix(".part")
        partial.write_bytes(data)
        partial.replace(target)
    digest = hashlib.sha256(target.read_bytes()).hexdigest()
    if digest != sha256:
        target.unlink()
        raise SystemExit(f"{target.name}: sha256 {digest}, pinned {sha256}")
    return target


def _python_deps() -> Path:
    """freezegun and its dependencies in a directory of their own (for PYTHONPATH)."""
    target = CACHE / "pydeps"
    if not (target / "freezegun").is_dir():
        done = subprocess.run(
            [sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target)]
            + list(FREEZEGUN),
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode:
            raise Offline(
                f"pip cannot install {', '.join(FREEZEGUN)}: {done.stderr.strip()[-300:]}"
            )
    return target


def _vitest() -> Path:
    """The real vitest at :data:`VITEST`, installed from the npm registry into the cache."""
    where = CACHE / f"vitest-{VITEST}"
    entry = where / "node_modules" / "vitest" / "vitest.mjs"
    if not entry.is_file():
        if shutil.which("npm") is None or shutil.which("node") is None:
            raise Offline("no node/npm on PATH")
        where.mkdir(parents=True, exist_ok=True)
        (where / "package.json").write_text('{"private": true}\n')
        done = subprocess.run(
            ["npm", "install", "--no-audit", "--no-fund", "--silent", f"vitest@{VITEST}"],
            cwd=where,
            capture_output=True,
            text=True,
            check=False,
        )
        if done.returncode or not entry.is_file():
            raise Offline(f"npm cannot install vitest@{VITEST}: {done.stderr.strip()[-300:]}")
    return where / "node_modules"


def _vitest_project(root: Path, modules: Path) -> None:
    """10 modules of 5 functions, each module tested by 50 tests in a file of its own."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    for m in range(10):
        functions = "".join(
            f"\nexport function f{f}(x) {{\n  return x * {f + 1} + {m};\n}}\n" for f in range(5)
        )
        (root / "src" / f"m{m:02d}.mjs").write_text(functions)
        cases = "".join(
            f'\ntest("f{f} of {x}", () => {{\n  expect(m.f{f}({x})).toBe({x * (f + 1) + m});\n}});\n'
            for f in range(5)
            for x in range(10)
        )
        (root / "tests" / f"m{m:02d}.test.mjs").write_text(
            f'import {{ expect, test }} from "vitest";\nimport * as m from "../src/m{m:02d}.mjs";\n'
            + cases
        )
    (root / "package.json").write_text(
        '{\n  "name": "bench-vitest",\n  "private": true,\n  "type": "module",\n'
        '  "scripts": {"test": "vitest run"}\n}\n'
    )
    (root / "vitest.config.mjs").write_text(
        'export default { cacheDir: ".vitest-cache", test: { include: ["tests/**/*.test.mjs"] } };\n'
    )
    (root / ".gitignore").write_text("node_modules\n.vitest-cache\n")
    # a directory of its own (vite bundles the config into node_modules/.vite-temp, which
    # the sandbox lets it write only in the project), its packages linked to the cache
    (root / "node_modules").mkdir()
    for package in modules.iterdir():
        if package.name != ".bin":  # stepkit puts node_modules/.bin first on PATH: the wrapper's
            (root / "node_modules" / package.name).symlink_to(package)


def fetch(name: str) -> tuple[Path | None, str]:
    """The fixture's pristine tree in the cache, and the real runner's command line
    (None and the reason when it cannot be fetched)."""
    try:
        if name == "vitest":
            modules = _vitest()
            real = f'node "{modules / "vitest" / "vitest.mjs"}"'
            tree = CACHE / f"tree-vitest-{VITEST}"
            if not tree.is_dir():
                _vitest_project(tree, modules)
            return tree, real
        url, sha = SDISTS[name]
        sdist = _download(url, sha)
        if name == "itsdangerous":
            _python_deps()
        tree = CACHE / sdist.name.removesuffix(".tar.gz")
        if not tree.is_dir():
            with tarfile.open(sdist) as archive:
                archive.extractall(CACHE, filter="data")
        return tree, f'"{sys.executable}" -m pytest'
    except Offline as exc:
        return None, str(exc)


# -- one step ------------------------------------------------------------------------


def _git(project: Path, *args: str) -> None:
    subprocess.run(
        ["git", *args],
        cwd=project,
        env={**os.environ, **GIT_ID},
        check=True,
        capture_output=True,
    )


def _project(
    root: Path, fixture: Fixture, tree: Path, real: str, stepkit_from: str | None
) -> tuple[Path, Path, dict]:
    """A fresh git repo of the fixture with a one-step plan; the wrapper's bin
    dir first on PATH; the environment of the stepkit processes (their stepkit
    imported from ``stepkit_from`` when given: another tree's, to compare)."""
    project, state = root / "project", root / "state"
    shutil.copytree(tree, project, symlinks=True)
    state.mkdir()
    (state / "coder.py").write_text(CODER)
    bin_dir = root / "bin"
    bin_dir.mkdir()
    for where in (bin_dir, project / "node_modules" / ".bin"):
        if where.parent.is_dir():
            where.mkdir(exist_ok=True)
            (where / fixture.runner).write_text(WRAPPER.format(real=real))
            (where / fixture.runner).chmod(0o755)
    tasks = f"- Add `bench_answer` to `{fixture.source}`, tested in `{fixture.new_test}`.\n"
    (project / "plans" / "steps").mkdir(parents=True)
    (project / "plans" / "steps" / "01-bench.md").write_text(
        PLAN.replace("- Change nothing: `true` is the whole check.\n", tasks)
    )
    (project / "plans" / "NOTES.md").write_text("# Notes\n")
    (project / "stepkit.toml").write_text(
        sandbox_table(state) + "[commands]\n"
        'format = ""\nlint = ""\nbuild = ""\n'
        f'test = "{fixture.command}"\n'
    )
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        _git(project, *args)
    pythonpath = os.pathsep.join([*filter(None, [stepkit_from]), "src", str(CACHE / "pydeps")])
    env = clean_env(
        E2E_STATE_DIR=str(state),
        BENCH_RUNS_LOG=str(state / "runs.tsv"),
        PATH=os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]),
        PYTHONPATH=pythonpath,
    )
    return project, state, env


def _actions(fixture: Fixture, project: Path, kind: str) -> list[dict]:
    original = (project / fixture.source).read_text()
    good = {fixture.source: original + fixture.good}
    added = {**good, fixture.new_test: fixture.test}
    done = "CODER_COMPLETE"
    if kind == "code_only":
        return [{"write": good, "sentinel": done}]
    if kind == "test_added":
        return [{"write": added, "sentinel": done}]
    wrong = {fixture.source: original + fixture.wrong, fixture.new_test: fixture.test}
    return [{"write": wrong, "sentinel": done}, {"write": good, "sentinel": done}]


def _runs(log: Path, project: Path, suite: int) -> list[dict]:
    """Each run the wrapper logged; ``whole``: it ran at least half the suite's ``suite`` tests."""
    found = []
    for line in log.read_text().splitlines() if log.exists() else []:
        start, end, nice, cwd, _, _, tests = line.split("\t")
        found.append(
            {
                "start": float(start),
                "end": float(end),
                "start_measure": int(nice) > os.getpriority(os.PRIO_PROCESS, 0),
                "where": "project" if Path(cwd) == project.resolve() else "copy",
                "tests": int(tests),
                "whole": int(tests) * 2 >= suite,
            }
        )
    return found


def _union(intervals: list[tuple[float, float]]) -> float:
    total, reach = 0.0, float("-inf")
    for start, end in sorted(intervals):
        if end > reach:
            total += end - max(start, reach)
            reach = end
    return total


def step(
    root: Path, fixture: Fixture, tree: Path, real: str, kind: str, stepkit_from: str | None = None
) -> dict:
    """One step of ``kind`` on a fresh copy of the fixture, and the suite by hand after it."""
    project, state, env = _project(root, fixture, tree, real, stepkit_from)
    (state / "coder_actions.json").write_text(json.dumps(_actions(fixture, project, kind)))
    answers = state / "answers.yaml"
    answers.write_text(yaml.safe_dump(ANSWERS))
    coder = command_coder(sys.executable, state / "coder.py")
    started = time.time()
    stepkit_json(project, ["run", "--engine", f"scripted:{answers}", "--coder", coder], env, 5)
    finished = stepkit_json(project, ["resume", "--answer", "approve"], env, 0)
    seconds = time.time() - started
    if finished.get("outcome") != "STEP_COMPLETE":
        raise SystemExit(f"{fixture.name} {kind}: {finished.get('outcome')}")
    (run_dir,) = (store_dir(project) / "runs").iterdir()
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    coder_s = sum(e.get("duration_s") or 0 for e in events if e["event"] == "delegate_finished")
    by_hand, suite = _by_hand(project, env, fixture, real)
    runs = _runs(state / "runs.tsv", project, suite)
    gates = [r for r in runs if not r["start_measure"]]
    first_gate = min((r["start"] for r in gates), default=float("inf"))
    beside = [r for r in runs if r["start_measure"] and r["end"] > first_gate]
    own = seconds - _union([(r["start"], r["end"]) for r in gates + beside]) - coder_s
    return {
        "whole": sum(r["whole"] for r in gates),
        "tests_per_run": [r["tests"] for r in gates],
        "only": sum(not r["whole"] for r in gates),
        "start_beside": bool(beside),
        # how long the start's measure still ran once the gate began (the gate waits for it)
        "start_beside_s": round(max((r["end"] - first_gate for r in beside), default=0.0), 3),
        "start_runs": sum(r["start_measure"] for r in runs),
        "coder_rounds": int((state / "coder_calls").read_text()),
        "seconds": round(seconds, 3),
        "suite_s": round(by_hand, 3),
        "ratio": round(seconds / by_hand, 3),
        "own_s": round(own, 3),
        "coder_s": round(coder_s, 3),
    }


#: How many times the suite runs by hand after each step: one run's time moves
#: by ±15 % from one minute to the next on a shared two-core machine, and the
#: step is judged against the median
BY_HAND_RUNS = 3


def _by_hand(project: Path, env: dict, fixture: Fixture, real: str) -> tuple[float, int]:
    """The tests command run by hand on the final tree, through the wrapper,
    :data:`BY_HAND_RUNS` times (the median of their seconds, and the tests
    the last ran, from the line it logged)."""
    log = project.parent / "by_hand.tsv"
    bin_dir = project.parent / "bin"
    times = []
    for _ in range(BY_HAND_RUNS):
        log.unlink(missing_ok=True)
        started = time.perf_counter()
        subprocess.run(
            fixture.command,
            shell=True,
            cwd=project,
            env={
                **env,
                "BENCH_RUNS_LOG": str(log),
                "PATH": f"{bin_dir}{os.pathsep}{env['PATH']}",
            },
            capture_output=True,
            check=True,
        )
        times.append(time.perf_counter() - started)
    return statistics.median(times), int(log.read_text().split("\t")[-1])


# -- the figures ---------------------------------------------------------------------


def _median_step(
    fixture: Fixture, tree: Path, real: str, kind: str, repeat: int, stepkit_from: str | None
) -> dict:
    steps = []
    for _ in range(repeat):
        with tempfile.TemporaryDirectory(prefix=f"bench-real-{fixture.name}-") as tmp:
            steps.append(step(Path(tmp), fixture, tree, real, kind, stepkit_from))
    figures = {
        key: statistics.median(s[key] for s in steps)
        for key in ("seconds", "suite_s", "ratio", "own_s", "coder_s", "start_beside_s")
    }
    whole = max(s["whole"] for s in steps)  # the worst of the repeats
    target = TARGET_WHOLE[kind]
    limit = figures["suite_s"] * whole + SLACK_S
    return {
        **figures,
        "whole": whole,
        "whole_each": [s["whole"] for s in steps],
        "only": max(s["only"] for s in steps),
        "start_beside": any(s["start_beside"] for s in steps),
        "target_whole": target,
        "limit_s": round(limit, 3),
        "ok": whole <= target and figures["seconds"] <= figures["suite_s"] * target + SLACK_S,
        "repeat": repeat,
    }


#: ``--smoke``: one code-only step on itsdangerous (figures not judged)
SMOKE = {"projects": ("itsdangerous",), "kinds": ("code_only",), "repeat": 1}


def run(
    projects: tuple[str, ...] = tuple(FIXTURES),
    kinds: tuple[str, ...] = KINDS,
    repeat: int = 3,
    stepkit_from: str | None = None,
) -> dict:
    """Each step kind on each project; a project that cannot be fetched is
    skipped (``stepkit_from``: the stepkit source tree the steps run, default this one's)."""
    figures: dict = {}
    for name in projects:
        tree, real = fetch(name)
        if tree is None:
            figures[name] = {"skipped": real}
            continue
        fixture = FIXTURES[name]
        figures[name] = {
            kind: _median_step(fixture, tree, real, kind, repeat, stepkit_from) for kind in kinds
        }
    return figures


def table(figures: dict) -> str:
    """One table per project."""
    out = []
    for name, kinds in figures.items():
        out.append(f"\n{name}")
        if "skipped" in kinds:
            out.append(f"  skipped: {kinds['skipped']}")
            continue
        out.append(
            f"  {'step':<11} {'whole runs':>10} {'target':>6} {'only':>4} {'start beside s':>14}"
            f" {'step s':>7} {'suite s':>7} {'ratio':>6} {'own s':>6} {'met':>4}"
        )
        for kind, f in kinds.items():
            out.append(
                f"  {kind:<11} {f['whole']:>10} {f['target_whole']:>6} {f['only']:>4}"
                f" {f['start_beside_s']:>14.2f} {f['seconds']:>7.2f}"
                f" {f['suite_s']:>7.2f} {f['ratio']:>6.2f} {f['own_s']:>6.2f}"
                f" {'yes' if f['ok'] else 'NO':>4}"
            )
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = BenchParser(__doc__)
    parser.modes.add_argument("--quick", action="store_true", help="one repeat of each step")
    parser.add_argument(
        "--only",
        metavar="NAMES",
        type=lambda text: tuple(text.split(",")),
        help="only these projects, comma-separated (e.g. itsdangerous,vitest)",
    )
    parser.add_argument(
        "--stepkit-from",
        metavar="DIR",
        help="the stepkit source tree the steps run (e.g. git archive of a commit), to compare",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args(argv)
    unknown = sorted(set(args.only or ()) - set(FIXTURES))
    if unknown:
        parser.error(f"--only: no project {', '.join(unknown)} (projects: {', '.join(FIXTURES)})")
    options: dict = dict(SMOKE) if args.smoke else {"repeat": 1} if args.quick else {}
    if args.only:
        options["projects"] = args.only
    if args.stepkit_from:
        options["stepkit_from"] = args.stepkit_from
    figures = run(**options)
    print(table(figures))
    if args.json:
        print(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
