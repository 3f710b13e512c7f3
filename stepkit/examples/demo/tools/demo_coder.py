"""The demo's coder: a small script standing in for a coding agent.

stepkit runs it as ``--coder command:...`` exactly as it would run a real
coding CLI: the prompt arrives on stdin and in $STEPKIT_PROMPT_FILE, the
project dir in $STEPKIT_PROJECT_DIR.  It makes the real change of step 1
(slugify) and reports the files it touched, ending with CODER_COMPLETE.
"""

import os
import sys
from pathlib import Path

SLUG = '''"""URL slugs."""

import re

_SEPARATORS = re.compile(r"[^a-z0-9]+")


def slugify(text: str) -> str:
    """Lower-case ``text`` and join its ASCII letters and digits with ``-``."""
    return _SEPARATORS.sub("-", text.lower()).strip("-")
'''

TESTS = """from textkit import slugify


def test_title_becomes_slug():
    assert slugify("Hello, World!") == "hello-world"


def test_separator_runs_collapse():
    assert slugify("  a -- b__c  ") == "a-b-c"


def test_empty_text():
    assert slugify("") == ""


def test_non_ascii_letters_are_dropped():
    assert slugify("Café au lait") == "caf-au-lait"
"""

INIT = '''"""textkit: small text helpers."""

from textkit.counting import word_count
from textkit.slug import slugify

__all__ = ["slugify", "word_count"]
'''


def main() -> int:
    project = Path(os.environ.get("STEPKIT_PROJECT_DIR", "."))
    prompt = sys.stdin.read()
    if "slugify" not in prompt:
        print("demo coder: this scripted coder only knows step 1 (slugify)")
        print("CODER_FAILED")
        return 1
    (project / "textkit" / "slug.py").write_text(SLUG, encoding="utf-8")
    (project / "tests" / "test_slug.py").write_text(TESTS, encoding="utf-8")
    (project / "textkit" / "__init__.py").write_text(INIT, encoding="utf-8")
    print("Implemented slugify.")
    print("Changed files: textkit/slug.py, textkit/__init__.py, tests/test_slug.py")
    print("CODER_COMPLETE")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
