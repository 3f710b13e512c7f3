"""docs/architecture.md's "Adding a gate", built as written: its code blocks
go into the files it names in a copy of stepkit, and the real CLI, run from
that copy, shows the new gate's verdict (so the section cannot drift from
the code); and every file the page names exists."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"

#: How each file the section names takes its block: (the text the block goes
#: before, or after when the text ends the anchor with a newline), None: a new file.
PLACES: dict[str, tuple[str, str] | None] = {
    "stepkit/gatetable.py": ("before", '    Gate(\n        name="tests",'),
    "plugins/projects/security.py": None,
    "stepkit/pluginmanager.py": ("after", '    "stepkit.plugins.projects.unsupported",\n'),
    "stepkit/protocol/step_runner.yaml": ("before", "  verify_tests:\n"),
}


def section() -> str:
    text = DOC.read_text(encoding="utf-8")
    return text.split("## Adding a gate", 1)[1].split("\n## ", 1)[0]


def steps() -> list[tuple[str, str]]:
    """Each numbered step's file and its code block (dedented), in order."""
    found = []
    for match in re.finditer(
        r"^\d+\. `([^`]+)`.*?```\w+\n(.*?)\n\s*```", section(), flags=re.MULTILINE | re.DOTALL
    ):
        lines = match.group(2).splitlines()
        found.append((match.group(1), "\n".join(line.removeprefix("   ") for line in lines)))
    return found


def build_copy(dest: Path) -> Path:
    """A copy of stepkit (its ``plugins`` in place) with the section applied."""
    src = dest / "src"
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "stepkit", src / "stepkit", ignore=ignore)
    shutil.copytree(ROOT / "plugins", src / "stepkit" / "plugins", ignore=ignore)
    for name, block in steps():
        path = src / "stepkit" / name.removeprefix("stepkit/")  # plugins/ is stepkit.plugins
        place = PLACES[name]
        if place is None:
            path.write_text(block + "\n", encoding="utf-8")
            continue
        where, anchor = place
        text = path.read_text(encoding="utf-8")
        assert text.count(anchor) == 1, f"{name}: the anchor {anchor!r} moved"
        added = block + "\n" if where == "before" else block.rstrip("\n") + "\n"
        at = text.index(anchor) + (len(anchor) if where == "after" else 0)
        path.write_text(text[:at] + added + text[at:], encoding="utf-8")
    graph = src / "stepkit" / "protocol" / "step_runner.yaml"
    text = graph.read_text(encoding="utf-8")
    build = text.index("  verify_build:\n")
    route = text.index("      pass: verify_tests\n", build)
    graph.write_text(text[:route] + "      pass: verify_security\n" + text[route + 25 :])
    return src


def python(src: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """Python with the copy ``src`` first on its path, before the installed stepkit."""
    env = {**os.environ, "PYTHONPATH": str(src), "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(
        [sys.executable, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def stepkit(src: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return python(src, "-m", "stepkit", *args, cwd=cwd)


def test_the_section_names_each_file_it_changes_and_its_blocks_fit_them():
    assert [name for name, _ in steps()] == list(PLACES)


@pytest.mark.slow
def test_the_security_gate_built_from_the_docs_runs_between_build_and_tests(tmp_path):
    src = build_copy(tmp_path)
    project = tmp_path / "project"
    (project / "scripts").mkdir(parents=True)
    (project / "Makefile").write_text("build:\n\t@true\n\ntest:\n\tpython3 -m unittest -v\n")
    (project / "test_ok.py").write_text(
        "import unittest\n\n\nclass Ok(unittest.TestCase):\n    def test_ok(self):\n        pass\n"
    )
    (project / "scripts" / "security-scan").write_text(
        "echo 'CVE-2024-0001 in leftpad 1.0' >&2\nexit 1\n"
    )
    done = stepkit(src, "verify", "--json", "--project-dir", str(project), cwd=tmp_path)
    gates = [(g["name"], g["status"], g["command"]) for g in json.loads(done.stdout)["gates"]]
    assert gates[2:] == [
        ("build", "pass", "make build"),
        ("security", "fail", "sh scripts/security-scan"),
        ("tests", "pass", "make test"),
    ], done.stdout
    assert done.returncode == 1
    security = json.loads(done.stdout)["gates"][3]
    assert "CVE-2024-0001" in security["evidence"]
    detect = stepkit(src, "detect", "--json", "--project-dir", str(project), cwd=tmp_path)
    assert [g["name"] for g in json.loads(detect.stdout)["gates"]] == [
        "format",
        "lint",
        "build",
        "security",
        "tests",
    ]
    # the override variable and [commands] key of the row, with no other change
    (project / "stepkit.toml").write_text('[commands]\nsecurity = "true"\n')
    done = stepkit(src, "verify", "--json", "--project-dir", str(project), cwd=tmp_path)
    assert json.loads(done.stdout)["ok"] is True, done.stdout + done.stderr
    # the node: the step-runner graph loads, its call resolved, and runs it after the build
    graph = stepkit(src, "graph", "--format", "json", cwd=tmp_path)
    assert graph.returncode == 0, graph.stderr
    passes = {e["from"]: e["to"] for e in json.loads(graph.stdout)["edges"] if e["label"] == "pass"}
    assert (passes["verify_build"], passes["verify_security"]) == (
        "verify_security",
        "verify_tests",
    )


def test_every_file_the_architecture_page_names_exists():
    new = {name for name, _ in steps() if PLACES.get(name) is None}
    named = set(re.findall(r"`((?:stepkit|plugins|tests|docs|bench)/[\w./-]+)`", DOC.read_text()))
    missing = sorted(path for path in named - new if not (ROOT / path).exists())
    assert named and not missing, missing
