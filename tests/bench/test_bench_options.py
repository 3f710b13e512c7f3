"""Every script in bench/ reads its command line before it measures anything:
``--help`` prints what the bench measures (its docstring) and its options,
a misspelt or unknown option is refused in one line with exit code 2.

Each script runs as ``python bench/X.py ARGS`` would, in a process where
starting a process, making a temporary directory or listing a directory
raises: parsing options does none of them, every bench does one at once,
so a script that measured instead of parsing fails loudly here, never
after minutes."""

from __future__ import annotations

import ast
import subprocess
import sys

import pytest

from tests.bench.test_bench_smoke import BENCH
from tests.support.e2e import clean_env

#: the options each script takes, as its --help names them
OPTIONS = {
    "baseline_cost": ("--smoke",),
    "big_output": ("--smoke", "--against PYTHON", "MB"),
    "engine_overhead": ("--smoke",),
    "evidence_size": ("--smoke",),
    "full_run": ("--smoke",),
    "installed_cost": ("--smoke",),
    "model_traffic": ("--smoke", "--billed", "--json"),
    "parallel": ("--smoke",),
    "plan_scale": ("--smoke", "--against PYTHON"),
    "pristine_cost": ("--smoke", "--quick"),
    "real_projects": ("--smoke", "--quick", "--only NAMES", "--stepkit-from DIR", "--json"),
    "run": ("--smoke", "--quick", "--only", "--out"),
    "sandbox_cost": ("--smoke",),
    "start_outcomes": ("--smoke",),
    "startup": ("--smoke", "--against PYTHON"),
    "verify_demo": ("--smoke", "--against PYTHON"),
}
#: every script of bench/: the areas and their runner
SCRIPTS = sorted(path.stem for path in BENCH.glob("*.py") if path.stem != "options")

#: ``python bench/X.py ARGS`` (argv[1:] of this program), with a hook that
#: makes every bench's first real action raise (PEP 578 audit events)
GUARDED = """
import os, runpy, sys

MEASURING = ("subprocess.Popen", "os.posix_spawn", "os.fork", "os.exec", "os.system",
             "tempfile.mkdtemp", "tempfile.mkstemp", "os.scandir")

def refuse(event, args):
    if event in MEASURING:
        raise RuntimeError(f"the bench started measuring ({event}) instead of parsing its options")

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(script)
sys.addaudithook(refuse)
runpy.run_path(script, run_name="__main__")
"""

pytestmark = pytest.mark.bench


def bench(script: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", GUARDED, str(BENCH / f"{script}.py"), *args],
        env=clean_env(),
        capture_output=True,
        text=True,
        timeout=120,  # a safety net only: the hook stops any bench long before
        check=False,
    )


@pytest.mark.parametrize("script", SCRIPTS)
def test_help_says_what_the_bench_measures_and_its_options(script):
    proc = bench(script, "--help")
    assert proc.returncode == 0, proc.stderr[-2000:]
    docstring = ast.get_docstring(ast.parse((BENCH / f"{script}.py").read_text()), clean=False)
    assert proc.stdout.startswith(f"usage: {script}.py "), proc.stdout
    assert docstring.splitlines()[0] in proc.stdout
    assert all(option in proc.stdout for option in OPTIONS[script]), proc.stdout


@pytest.mark.parametrize("script", SCRIPTS)
def test_an_unknown_option_is_refused_in_one_line(script):
    proc = bench(script, "--no-such-flag")
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stdout == ""
    assert len(proc.stderr.splitlines()) == 1 and "--no-such-flag" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    "args",
    [("--smok",), ("--smoke", "extra"), ("--against",), ("--smoke", "--against", "python3")],
    ids=" ".join,
)
@pytest.mark.parametrize("script", ["startup", "plan_scale", "big_output"])
def test_a_misspelt_or_incomplete_command_line_is_refused(script, args):
    """An abbreviation is not taken for the option, a stray word or a value
    missing is refused, and the two modes of a run do not combine."""
    proc = bench(script, *args)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert len(proc.stderr.splitlines()) == 1 and f"{script}.py: " in proc.stderr, proc.stderr
