"""The README's set-up commands are the ones CI runs."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def setup_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Set up", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.+?)\n```", section, flags=re.DOTALL)


def test_the_setup_commands_are_the_demo_the_default_suite_then_what_it_leaves_out():
    commands = setup_commands()
    assert len(commands) == 3
    assert commands[0].endswith("stepkit demo")
    assert commands[1].endswith("pytest -q -n 4")
    assert commands[2].endswith('pytest -q -n 4 -m "slow or bench"')


def test_ci_runs_the_readme_test_commands_verbatim_in_order():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    default_suite, left_out = setup_commands()[1:]
    assert default_suite in ci and left_out in ci
    assert ci.index(default_suite) < ci.index(left_out)


README_MAX_LINES = 250
#: The pages the README and the docs link to, and the ones that link.
DOCUMENTS = [ROOT / "README.md", ROOT / "hooks.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_the_readme_is_short_and_the_rest_is_in_docs():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES
    for page in (
        "plans.md",
        "reference.md",
        "agents.md",
        "detection.md",
        "guarantees.md",
        "threat-model.md",
        "benchmarks.md",
        "architecture.md",
        "scale.md",
    ):
        assert f"](docs/{page})" in "\n".join(lines), page


def anchors(path: Path) -> set[str]:
    """GitHub's anchors of a markdown file's headings."""
    found = set()
    in_fence = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            in_fence = not in_fence
        elif not in_fence and line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            found.add(re.sub(r"[^\w\- ]", "", title).replace(" ", "-"))
    return found


def test_every_relative_link_of_the_docs_resolves():
    broken = []
    for document in DOCUMENTS:
        text = re.sub(r"```.*?```", "", document.read_text(encoding="utf-8"), flags=re.DOTALL)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue  # a URL
            path, _, anchor = target.partition("#")
            resolved = (document.parent / path).resolve() if path else document
            if not resolved.exists() or (
                anchor and resolved.suffix == ".md" and anchor not in anchors(resolved)
            ):
                broken.append(f"{document.relative_to(ROOT)}: {target}")
    assert broken == []
