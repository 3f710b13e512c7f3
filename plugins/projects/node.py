"""Node (``package.json``): the package's own scripts, run with the package
manager its lockfile names.

Only scripts that exist in package.json answer; nothing falls back to a
guessed ``npx`` tool.  The package manager is the ``packageManager`` field
when set, else the lockfile's (``pnpm-lock.yaml`` → pnpm, ``yarn.lock`` →
yarn, ``bun.lock``/``bun.lockb`` → bun, ``package-lock.json`` /
``npm-shrinkwrap.json`` → npm), else npm.  npm's placeholder test script
(``echo "Error: no test specified" && exit 1``) is not a test suite and does
not answer.

Script names per gate, in preference order: format ``format``, ``fmt``;
lint ``lint``, ``eslint``; build ``build``, ``typecheck``, ``type-check``,
``check-types``, ``tsc``; tests ``test``, ``tests``.
"""

from __future__ import annotations

from pathlib import Path

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

_LOCKFILES = (
    ("pnpm-lock.yaml", "pnpm"),
    ("yarn.lock", "yarn"),
    ("bun.lock", "bun"),
    ("bun.lockb", "bun"),
    ("package-lock.json", "npm"),
    ("npm-shrinkwrap.json", "npm"),
)
_MANAGERS = {"npm", "pnpm", "yarn", "bun"}
_NPM_PLACEHOLDER = "Error: no test specified"


def package_manager(project_dir: Path) -> str:
    """npm, pnpm, yarn or bun: the ``packageManager`` field, else the lockfile, else npm."""
    declared = _shared.read_json(project_dir / "package.json").get("packageManager")
    if isinstance(declared, str) and declared.split("@", 1)[0] in _MANAGERS:
        return declared.split("@", 1)[0]
    return _shared.which_lockfile(project_dir, _LOCKFILES) or "npm"


def _scripts(project_dir: Path) -> _shared.Targets | None:
    """The package's scripts, run with its package manager; None without a package.json."""
    if not (project_dir / "package.json").is_file():
        return None
    scripts = _shared.package_scripts(project_dir / "package.json")
    if _NPM_PLACEHOLDER in scripts.get("test", ""):
        del scripts["test"]
    return _shared.Targets(f"{package_manager(project_dir)} run", scripts)


NODE = ProjectType(
    read=_scripts,
    name="node",
    format=lambda scripts: scripts.command("format", "fmt"),
    lint=lambda scripts: scripts.command("lint", "eslint"),
    build=lambda scripts: scripts.command("build", "typecheck", "type-check", "check-types", "tsc"),
    tests=lambda scripts: scripts.command("test", "tests"),
)
globals().update(NODE.hookimpls())
