"""``stepkit verify`` on the bundled demo project against a shell running
the same gate commands, and what verify imports.

The demo project (:func:`stepkit.cli.demo.prepare_demo_project`) is
verified once to learn its gate commands (from ``--json``); then, taking
turns ``repeat`` times, ``python -m stepkit verify --json`` and ``sh -c``
running those commands one after the other in the project, each timed as a
whole process.  The figure is the median of the pair-by-pair ratios
(verify / shell), so a machine whose speed drifts still compares fairly.
Target: at most 1.3.

Both sides run as a user's install does: their processes get the
environment without ``PYTHONDONTWRITEBYTECODE`` (an install writes and
reuses bytecode; without it every run would compile stepkit from source),
and the first verify, which learns the commands, is also the warm-up that
writes that bytecode before anything is timed (with ``--against``, the other
install is warmed up once too).

Beside them, in the same turns, the floor: what any referee written in
Python must spend, a Python interpreter that runs the same commands one after
the other through ``sh -c`` with their output read from a pipe
(:data:`_FLOOR`).  Importing a plugin system, reading a config file or
listing the tree are choices of a design, not physics, so they are not in
it.  ``budget_left_ms`` is what the target leaves of the shell's time once
the floor is paid: all of stepkit's own work must fit in it.

Then one verify in a process that reports how many modules it imported,
which built-in plugins (``stepkit.plugins.*`` top-level plugin modules), how
many regular expressions it compiled and how many of stepkit's pydantic
models it defined and built (a model is built on first use).

The same turns on a real project, itsdangerous (:data:`ITSDANGEROUS`: its
sdist from the package index, the pinned version, checked against its
pinned sha256; skipped with the reason when it cannot be fetched), whose
suite takes about 0.8 s: its tests in a venv of their own (pytest,
freezegun and the project, installed from the index), ``ruff check`` and
the tests as its gates (its detected build, ``tox -e typing``, builds a tox
environment of its own and is left out: ``build = ""``).  Target: at most
1.15.

Run it directly (``python bench/verify_demo.py``) or call :func:`run`.
``python bench/verify_demo.py --against OTHER_PYTHON`` compares this install
with another one (a venv of an earlier commit) in the same run: this
install, the other and the shell take turns on the same demo project, the
gates' tools coming from this venv for all three, and the ratios are the
medians of the turn-by-turn ratios; each install keeps its state (its
verify's head start) in a directory of its own, as one install does.  In
turns of their own, each install's
``first_gate_ms``: from starting its verify to its spawning the first gate
command (:data:`_FIRST_GATE_PROBE`), the start-up alone, which the gates'
own time (most of a verify, and most of its noise) does not blur.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from options import BenchParser

from stepkit.cli.demo import prepare_demo_project
from stepkit.plugins.projects import MARKERS

TARGET_RATIO = 1.3
#: verify / shell on itsdangerous, whose suite is long enough to hide a little more
TARGET_RATIO_ITSDANGEROUS = 1.15
REPEAT = 7
#: ``--smoke``: every code path once but the fetch (the test suite's run; the figure is not judged)
SMOKE = {"repeat": 1, "real_project": False}
#: the real project: name, pinned version, the sha256 of its sdist on the package index
ITSDANGEROUS = (
    "itsdangerous",
    "2.2.0",
    "e0050c0b7da1eea53ffaf149c0cfbb5c6e2e2b69c4bef22c81fa6eb73e5f6173",
)

_IMPORT_PROBE = (
    "import re._compiler, sys\n"
    "compiled, compile_ = [0], re._compiler.compile\n"
    "def counted(pattern, flags):\n    compiled[0] += 1\n    return compile_(pattern, flags)\n"
    "re._compiler.compile = counted\n"
    "from stepkit.cli import main\n"
    "try:\n    main(sys.argv[1:])\nexcept SystemExit:\n    pass\n"
    "import json\n"
    "plugins = sorted(m for m in sys.modules if m.startswith('stepkit.plugins.'))\n"
    "def subclasses(cls):\n    for sub in cls.__subclasses__():\n        yield sub\n        yield from subclasses(sub)\n"
    "models = []\n"
    "if 'pydantic' in sys.modules:\n"
    "    models = [m for m in set(subclasses(sys.modules['pydantic'].BaseModel))\n"
    "              if m.__module__.startswith('stepkit') and m.__name__ != 'Model']\n"
    "print(json.dumps({'modules': len(sys.modules), 'plugins': plugins, 'regexes': compiled[0],\n"
    "                  'models': len(models), 'models_built': sum(bool(m.__pydantic_complete__) for m in models)}))\n"
)

#: A verify that reports (on stderr, its last line) the wall clock when it
#: spawned the first gate command, whose text is its first argument.
_FIRST_GATE_PROBE = (
    "import atexit, subprocess, sys, time\n"
    "first, spawned, init = sys.argv.pop(1), [], subprocess.Popen.__init__\n"
    "def spawn(self, args, *rest, **kwargs):\n"
    "    said = args if isinstance(args, str) else ' '.join(map(str, args))\n"
    "    if not spawned and first in said:\n"
    "        spawned.append(time.time())\n"
    "    init(self, args, *rest, **kwargs)\n"
    "subprocess.Popen.__init__ = spawn\n"
    # at exit (a verify that answered exits without the interpreter's teardown, not past a finally)
    "atexit.register(lambda: print(spawned[0] if spawned else 'none', file=sys.stderr))\n"
    "from stepkit.cli import entry\n"
    "entry()\n"
)

#: The floor (see the module docstring); the gate commands are its arguments.
_FLOOR = (
    "import subprocess, sys\n"
    "for command in sys.argv[1:]:\n"
    "    subprocess.run(['sh', '-c', command], stdout=subprocess.PIPE,\n"
    "                   stderr=subprocess.STDOUT, check=False)\n"
)


#: The venv's tools (ruff, pytest) on PATH, as an installed stepkit has them, for both sides;
#: bytecode written and reused, as in an install.
ENV = {
    **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
    "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
}


def _seconds(command: list[str], cwd: Path, env: dict[str, str] = ENV) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    return time.perf_counter() - start


def _itsdangerous(where: Path) -> tuple[Path, dict[str, str]] | str:
    """itsdangerous ready to verify under ``where`` and the environment its
    gates run in, or why not (it cannot be fetched, its hash is not the
    pinned one, its test environment cannot be installed)."""
    name, version, sha256 = ITSDANGEROUS

    def pip(python: Path | str, *args: str) -> str | None:
        done = subprocess.run(
            [str(python), "-m", "pip", "-q", *args], capture_output=True, text=True, check=False
        )
        said = (done.stderr.strip().splitlines() or ["no output"])[-1]
        return None if done.returncode == 0 else said

    spec = f"{name}=={version}"
    failed = pip(
        sys.executable, "download", "--no-deps", "--no-binary", ":all:", spec, "-d", str(where)
    )
    archives = sorted(where.glob(f"{name}-{version}.tar.gz"))
    if failed or not archives:
        return f"skipped: {spec} cannot be fetched from the package index ({failed})"
    digest = hashlib.sha256(archives[0].read_bytes()).hexdigest()
    if digest != sha256:
        return f"skipped: {archives[0].name} has sha256 {digest}, not the pinned {sha256}"
    with tarfile.open(archives[0]) as archive:
        archive.extractall(where, filter="data")
    project = where / f"{name}-{version}"
    venv = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    failed = pip(venv / "bin" / "python", "install", "pytest", "freezegun", "-e", str(project))
    if failed:
        return f"skipped: its test environment cannot be installed ({failed})"
    (project / "stepkit.toml").write_text('[commands]\nbuild = ""\n')
    for git in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "start"]):
        subprocess.run(
            ["git", "-c", "user.name=bench", "-c", "user.email=bench@localhost", *git],
            cwd=project,
            check=True,
            capture_output=True,
        )
    return project, {**ENV, "PATH": f"{venv / 'bin'}{os.pathsep}{ENV['PATH']}"}


def _turns(project: Path, env: dict[str, str], repeat: int) -> tuple[list[dict], list[tuple]]:
    """The gates (learnt from a first verify, the warm-up), then ``repeat``
    turns of (verify, shell, floor) seconds on ``project``."""
    verify = [sys.executable, "-m", "stepkit", "verify", "--json", "--project-dir", str(project)]
    first = subprocess.run(
        verify, cwd=project, env=env, capture_output=True, text=True, check=False
    )
    gates = json.loads(first.stdout)["gates"]
    commands = [g["command"] for g in gates if g["command"]]
    shell = ["sh", "-c", "; ".join(f"( {c} ) >/dev/null 2>&1" for c in commands)]
    floor = [sys.executable, "-c", _FLOOR, *commands]
    return gates, [
        (
            _seconds(verify, project, env),
            _seconds(shell, project, env),
            _seconds(floor, project, env),
        )
        for _ in range(repeat)
    ]


def _first_gate_s(python: str, first: str, project: Path, env: dict[str, str]) -> float:
    """Seconds from starting ``python``'s verify of ``project`` to its spawning ``first``."""
    start = time.time()
    done = subprocess.run(
        [python, "-c", _FIRST_GATE_PROBE, first, "verify", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    return float(done.stderr.strip().splitlines()[-1]) - start


def real_project_figures(repeat: int = REPEAT) -> dict:
    """verify / shell on itsdangerous (:func:`_itsdangerous`), or why it was skipped."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-real-") as tmp:
        ready = _itsdangerous(Path(tmp))
        if isinstance(ready, str):
            return {"skipped": ready, "target_ratio": TARGET_RATIO_ITSDANGEROUS}
        gates, turns = _turns(*ready, repeat)
    ratio = statistics.median(v / s for v, s, _ in turns)
    return {
        "project": "-".join(ITSDANGEROUS[:2]),
        "gates": {g["name"]: g["status"] for g in gates},
        "verify_s": round(statistics.median(v for v, _, _ in turns), 4),
        "shell_s": round(statistics.median(s for _, s, _ in turns), 4),
        "ratio": round(ratio, 3),
        "target_ratio": TARGET_RATIO_ITSDANGEROUS,
        "floor_ratio": round(statistics.median(f / s for _, s, f in turns), 3),
        "ok": ratio <= TARGET_RATIO_ITSDANGEROUS,
    }


def run(repeat: int = REPEAT, real_project: bool = True) -> dict:
    """Measure; print and return the figures (``real_project``: itsdangerous too)."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-") as tmp:
        project = prepare_demo_project(Path(tmp))
        gates, turns = _turns(project, ENV, repeat)
        commands = [g["command"] for g in gates if g["command"]]
        probe = subprocess.run(
            [
                sys.executable,
                "-c",
                _IMPORT_PROBE,
                "verify",
                "--json",
                "--project-dir",
                str(project),
            ],
            cwd=project,
            env=ENV,
            capture_output=True,
            text=True,
            check=False,
        )
        imported = json.loads(probe.stdout.strip().splitlines()[-1])
        shutil.rmtree(project.parent, ignore_errors=True)
    ratio = statistics.median(v / s for v, s, _ in turns)
    floor_ratio = statistics.median(f / s for _, s, f in turns)
    figures = {
        "repeat": repeat,
        "gates": {g["name"]: g["status"] for g in gates},
        "commands": [shlex.join(["sh", "-c", c]) for c in commands],
        "verify_s": round(statistics.median(v for v, _, _ in turns), 4),
        "shell_s": round(statistics.median(s for _, s, _ in turns), 4),
        "ratio": round(ratio, 3),
        "target_ratio": TARGET_RATIO,
        "floor_s": round(statistics.median(f for _, _, f in turns), 4),
        "floor_ratio": round(floor_ratio, 3),
        # turn by turn: what the target leaves once the floor is paid, and what stepkit spends beyond it
        "budget_left_ms": round(
            statistics.median((TARGET_RATIO * s - f) * 1000 for _, s, f in turns), 1
        ),
        "stepkit_over_floor_ms": round(statistics.median((v - f) * 1000 for v, _, f in turns), 1),
        "modules_imported": imported["modules"],
        "plugin_modules_imported": len(imported["plugins"]),
        "regexes_compiled": imported["regexes"],
        "models_defined": imported["models"],
        "models_built": imported["models_built"],
        # the project types (stepkit.plugins.projects.MARKERS), not the helpers every project uses
        "project_plugins_imported": [m for m in imported["plugins"] if m in MARKERS],
        "itsdangerous": (
            real_project_figures(repeat)
            if real_project
            else {"skipped": "not asked (--smoke)", "target_ratio": TARGET_RATIO_ITSDANGEROUS}
        ),
    }
    figures["ok"] = ratio <= TARGET_RATIO and figures["itsdangerous"].get("ok", True)
    for key, value in figures.items():
        print(f"{key:<18} {value}")
    return figures


def compare(other_python: str, repeat: int = REPEAT) -> dict:
    """verify / shell for this install and ``other_python``, taking turns, on
    the demo and on itsdangerous, and what each imports on the demo."""
    pythons = {"this": sys.executable, "other": other_python}
    figures = {"repeat": repeat, "other_python": other_python}
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-") as tmp:
        project = prepare_demo_project(Path(tmp))
        figures["demo"] = _compared(project, ENV, pythons, repeat)
        imported = {}
        for name, python in pythons.items():
            probe = subprocess.run(
                [python, "-c", _IMPORT_PROBE, "verify", "--json"],
                cwd=project,
                env=ENV,
                capture_output=True,
                text=True,
                check=False,
            )
            found = json.loads(probe.stdout.strip().splitlines()[-1])
            imported[name] = {**found, "plugins": len(found["plugins"])}
        figures["imported"] = imported
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-real-") as tmp:
        ready = _itsdangerous(Path(tmp))
        figures["itsdangerous"] = (
            {"skipped": ready} if isinstance(ready, str) else _compared(*ready, pythons, repeat)
        )
    print(json.dumps(figures, indent=2))
    return figures


def _compared(project: Path, env: dict[str, str], pythons: dict[str, str], repeat: int) -> dict:
    """Turns of each install's verify and the shell on ``project``: medians and ratios.

    Each install keeps its state (its verify's head start) in a directory
    of its own, as a user's one install does: in one, each verify's record
    would name the other install, and neither would ever be replayed."""
    envs = {
        name: {**env, "XDG_STATE_HOME": str(project.parent / f"state-{name}")} for name in pythons
    }
    first = subprocess.run(
        [sys.executable, "-m", "stepkit", "verify", "--json"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    commands = [g["command"] for g in json.loads(first.stdout)["gates"] if g["command"]]
    shell = ["sh", "-c", "; ".join(f"( {c} ) >/dev/null 2>&1" for c in commands)]
    for name, python in pythons.items():  # each one's warm-up: bytecode and its record written
        _seconds([python, "-m", "stepkit", "verify", "--json"], project, envs[name])
    turns = [
        {
            **{
                name: _seconds([python, "-m", "stepkit", "verify", "--json"], project, envs[name])
                for name, python in pythons.items()
            },
            "shell": _seconds(shell, project, env),
        }
        for _ in range(repeat)
    ]
    first_gate = [
        {
            name: _first_gate_s(python, commands[0], project, envs[name])
            for name, python in pythons.items()
        }
        for _ in range(repeat)
    ]
    return {
        "seconds": {
            k: round(statistics.median(t[k] for t in turns), 4) for k in (*pythons, "shell")
        },
        "ratio_to_shell": {
            k: round(statistics.median(t[k] / t["shell"] for t in turns), 3) for k in pythons
        },
        # from starting verify to its first gate command, the same turns' medians
        "first_gate_ms": {
            k: round(statistics.median(t[k] for t in first_gate) * 1000, 1) for k in pythons
        },
        "first_gate_ratio": round(statistics.median(t["this"] / t["other"] for t in first_gate), 3),
    }


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.add_against()
    args = parser.parse_args()
    if args.against:
        compare(args.against)
        sys.exit(0)
    if args.smoke:  # every code path once; the figure is not judged
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run()["ok"] else 1)
