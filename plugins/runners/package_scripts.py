"""Node's script runners (``npm``, ``pnpm``, ``yarn``, ``bun``): ``npm test``
is the ``test`` script of ``package.json``, whose runner is recognised
there (jest, vitest, node's test runner); npm passes words on to it after
``--``."""

from __future__ import annotations

import json
from pathlib import Path

from stepkit.workspace.runners import TestRunner


def test_script(project: Path) -> str | None:
    """The ``test`` script of the project's ``package.json`` (None: none)."""
    try:
        scripts = (
            json.loads((project / "package.json").read_text(encoding="utf-8")).get("scripts") or {}
        )
    except (OSError, ValueError, AttributeError):
        return None
    script = scripts.get("test")
    return script if isinstance(script, str) else None


def _script(words: list[str], project: Path) -> str | None:
    """The script behind ``npm test`` / ``npm run test`` (None: another script)."""
    rest = [w for w in words[1:] if w != "run"]
    return test_script(project) if rest[:1] == ["test"] else None


def _pass_on(runner: str, command_words: list[str], words: list[str]) -> list[str]:
    """npm passes words on to its script only after ``--``."""
    return ["--", *words] if runner == "npm" and "--" not in command_words else words


RUNNERS = (
    TestRunner(
        name="package scripts",
        script_runners=("npm", "pnpm", "yarn", "bun"),
        script=_script,
        pass_on=_pass_on,
    ),
)
