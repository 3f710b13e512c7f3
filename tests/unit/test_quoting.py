"""Each parser reads back the words :mod:`stepkit.quoting` wrote for it:
the real shell, pytest's split of ``PYTEST_ADDOPTS`` and its expansion of a
path option, and the real node reading ``NODE_OPTIONS``."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from stepkit import quoting

#: words no parser may split, join or expand
AWKWARD = ["plain", "a b", "it's", 'say "hi"', "back\\slash", "$HOME", "`x`", "tab\tä", "~user"]


def test_the_shell_reads_back_every_word():
    printed = subprocess.run(
        ["sh", "-c", f"{quoting.shell([sys.executable, '-c', PRINT_ARGV, *AWKWARD])}"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert printed.splitlines() == AWKWARD


def test_pytest_addopts_is_split_back_into_the_words():
    assert shlex.split(quoting.pytest_addopts(AWKWARD)) == AWKWARD


def test_a_path_with_a_dollar_survives_pytests_expansion(monkeypatch):
    path = Path("/x/$HOME/${HOME}/r$")
    value, env = quoting.pytest_path(path)
    monkeypatch.setenv("HOME", "/root")
    for name, text in env.items():
        monkeypatch.setenv(name, text)
    assert os.path.expandvars(value) == str(path)  # what pytest does to --junitxml's value
    assert quoting.pytest_path(Path("/a b/r.xml")) == ("/a b/r.xml", {})


def test_extend_variable_keeps_what_the_environment_holds():
    env = {"NODE_OPTIONS": " --max-old-space-size=64 "}
    assert quoting.extend_variable("NODE_OPTIONS", ["--x=a b"], env) == (
        '--max-old-space-size=64 "--x=a b"'
    )
    assert quoting.extend_variable("PYTEST_ADDOPTS", ["-k", "a or b"], {}) == "-k 'a or b'"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_reads_back_a_required_path_with_spaces_quotes_and_backslashes(tmp_path):
    script = tmp_path / 'dir "with" \\ $x it\'s ä' / "hello.js"
    script.parent.mkdir()
    script.write_text('process.stdout.write("loaded " + __filename + "\\n");\n')
    env = {**os.environ, "NODE_OPTIONS": quoting.node_options(["--require", str(script)])}
    done = subprocess.run(["node", "-e", ""], env=env, capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"loaded {script}\n"


PRINT_ARGV = "import sys; print(*sys.argv[1:], sep=chr(10))"
