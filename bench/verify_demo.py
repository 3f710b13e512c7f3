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

Run it directly (``python bench/verify_demo.py``) or call :func:`run`.
``python bench/verify_demo.py --against OTHER_PYTHON`` compares this install
with another one (a venv of an earlier commit) in the same run: this
install, the other and the shell take turns on the same demo project, the
gates' tools coming from this venv for all three, and the ratios are the
medians of the turn-by-turn ratios.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]

from stepkit.cli.demo import prepare_demo_project
from stepkit.plugins.projects import MARKERS

TARGET_RATIO = 1.3
REPEAT = 7
#: ``--smoke``: every code path once (the test suite's run; the figure is not judged)
SMOKE = {"repeat": 1}

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


def _seconds(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    subprocess.run(command, cwd=cwd, env=ENV, capture_output=True, text=True, check=False)
    return time.perf_counter() - start


def run(repeat: int = REPEAT) -> dict:
    """Measure; print and return the figures."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-") as tmp:
        project = prepare_demo_project(Path(tmp))
        verify = [
            sys.executable,
            "-m",
            "stepkit",
            "verify",
            "--json",
            "--project-dir",
            str(project),
        ]
        first = subprocess.run(
            verify, cwd=project, env=ENV, capture_output=True, text=True, check=False
        )
        gates = json.loads(first.stdout)["gates"]
        commands = [g["command"] for g in gates if g["command"]]
        shell = ["sh", "-c", "; ".join(f"( {c} ) >/dev/null 2>&1" for c in commands)]
        floor = [sys.executable, "-c", _FLOOR, *commands]
        turns = [
            (_seconds(verify, project), _seconds(shell, project), _seconds(floor, project))
            for _ in range(repeat)
        ]
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
    }
    figures["ok"] = ratio <= TARGET_RATIO
    for key, value in figures.items():
        print(f"{key:<18} {value}")
    return figures


def compare(other_python: str, repeat: int = REPEAT) -> dict:
    """verify / shell for this install and ``other_python``, taking turns, and what each imports."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-verify-") as tmp:
        project = prepare_demo_project(Path(tmp))
        pythons = {"this": sys.executable, "other": other_python}
        first = subprocess.run(
            [sys.executable, "-m", "stepkit", "verify", "--json"],
            cwd=project,
            env=ENV,
            capture_output=True,
            text=True,
            check=False,
        )
        commands = [g["command"] for g in json.loads(first.stdout)["gates"] if g["command"]]
        shell = ["sh", "-c", "; ".join(f"( {c} ) >/dev/null 2>&1" for c in commands)]
        _seconds(
            [other_python, "-m", "stepkit", "verify", "--json"], project
        )  # its warm-up: bytecode written
        turns = [
            {
                **{
                    name: _seconds([python, "-m", "stepkit", "verify", "--json"], project)
                    for name, python in pythons.items()
                },
                "shell": _seconds(shell, project),
            }
            for _ in range(repeat)
        ]
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
    figures = {
        "repeat": repeat,
        "other_python": other_python,
        "seconds": {
            k: round(statistics.median(t[k] for t in turns), 4) for k in ("this", "other", "shell")
        },
        "ratio_to_shell": {
            k: round(statistics.median(t[k] / t["shell"] for t in turns), 3)
            for k in ("this", "other")
        },
        "imported": imported,
    }
    print(json.dumps(figures, indent=2))
    return figures


if __name__ == "__main__":
    if sys.argv[1:2] == ["--against"]:
        compare(sys.argv[2])
        sys.exit(0)
    if sys.argv[1:] == ["--smoke"]:  # every code path once; the figure is not judged
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run()["ok"] else 1)
