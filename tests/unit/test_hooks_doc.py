"""hooks.md documents every hook, and every hook is exercised by a test."""

import inspect
import re
from pathlib import Path

from stepkit import hookspecs

ROOT = Path(__file__).resolve().parents[2]
HOOKS = {
    name: f"{name}{inspect.signature(fn)}".replace("'", "")
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction)
    if name.startswith("stepkit_")
}


def test_every_hook_has_a_section_headed_by_its_exact_signature():
    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    headings = set(re.findall(r"^### `(.+)`$", doc, flags=re.MULTILINE))
    missing = [sig for sig in HOOKS.values() if sig not in headings]
    assert not missing, f"hooks.md lacks a section for: {missing}"
    stale = [h for h in headings if h.split("(")[0] not in HOOKS]
    assert not stale, f"hooks.md documents hooks that do not exist: {stale}"


def test_every_hook_is_in_the_table():
    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    for name in HOOKS:
        assert f"| `{name}` |" in doc, name


def test_every_hookspec_has_a_docstring_with_params():
    for name, fn in inspect.getmembers(hookspecs, inspect.isfunction):
        if name.startswith("stepkit_"):
            doc = inspect.getdoc(fn) or ""
            assert doc, name
            for param in inspect.signature(fn).parameters:
                assert f":param {param}:" in doc, f"{name}: no :param {param}:"
            assert "stepconf.py" in doc, f"{name}: say whether stepconf.py may implement it"


def test_every_hook_has_a_test():
    this = Path(__file__).name
    texts = "\n".join(
        p.read_text(encoding="utf-8") for p in (ROOT / "tests").rglob("*.py") if p.name != this
    )
    untested = [name for name in HOOKS if name not in texts]
    assert not untested, f"no test mentions: {untested}"


def test_the_testing_example_runs_as_written(tmp_path):
    import subprocess
    import sys

    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    section = doc.split("## Testing a plugin", 1)[1]
    example = re.search(r"```python\n(.+?)\n```", section, flags=re.DOTALL).group(1)
    (tmp_path / "test_example.py").write_text(example + "\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_example.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "1 passed" in done.stdout


def test_observer_examples_print_to_stderr():
    doc = (ROOT / "hooks.md").read_text(encoding="utf-8")
    prints = re.findall(r"^\s+print\(.*$", doc, flags=re.MULTILINE)
    assert prints and all("file=sys.stderr" in line for line in prints), prints
