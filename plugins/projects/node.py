"""Node (``package.json``): the package's own scripts, run with the package
manager its lockfile names.

Only scripts that exist in package.json answer, and prettier when the
project configures it (a ``.prettierrc*`` / ``prettier.config.*`` file or a
``prettier`` key) and depends on it: ``prettier --write --ignore-unknown`` on
the step's changed files, run from the project's own install (``npx --no --``,
``pnpm exec``, ``yarn``, ``bunx``).  The package manager is the
``packageManager`` field when set, else the lockfile's when git tracks it
(``pnpm-lock.yaml`` → pnpm, ``yarn.lock`` → yarn, ``bun.lock``/``bun.lockb`` →
bun, ``package-lock.json`` / ``npm-shrinkwrap.json`` → npm), else npm; none of
their ``run`` commands writes the lockfile.  npm's placeholder test script
(``echo "Error: no test specified" && exit 1``) is not a test suite and does
not answer.

Script names per gate, in preference order: format ``format``, ``fmt``;
lint ``lint``, ``eslint``; build the type-check names first (``typecheck``,
``type-check``, ``check-types``, ``types``, ``lint:types``, ``tsc``), then
``build``; tests ``test``, ``tests``.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from stepkit.hookspecs import hookimpl
from stepkit.plugins.projects import MARKERS, _shared, environments
from stepkit.plugins.projects._base import ProjectType

_MANAGERS = {"npm", "pnpm", "yarn", "bun"}
_NPM_PLACEHOLDER = "Error: no test specified"
_PRETTIER_CONFIGS = (".prettierrc", ".prettierrc.*", "prettier.config.*")


def package_manager(project_dir: Path) -> str:
    """npm, pnpm, yarn or bun: the ``packageManager`` field, else the lockfile, else npm."""
    declared = _shared.read_json(project_dir / "package.json").get("packageManager")
    if isinstance(declared, str) and declared.split("@", 1)[0] in _MANAGERS:
        return declared.split("@", 1)[0]
    found = environments.manager(project_dir, "node")
    return found.name if found else "npm"


class _Package(NamedTuple):
    dir: Path
    manager: str
    scripts: _shared.Targets


def _read(project_dir: Path) -> _Package | None:
    """The package's scripts, run with its package manager; None without a package.json."""
    if not (project_dir / "package.json").is_file():
        return None
    scripts = _shared.package_scripts(project_dir / "package.json")
    if _NPM_PLACEHOLDER in scripts.get("test", ""):
        del scripts["test"]
    manager = package_manager(project_dir)
    return _Package(project_dir, manager, _shared.Targets(f"{manager} run", scripts))


def _format(package: _Package) -> str | None:
    script = package.scripts.command("format", "fmt")
    if script:
        return script
    manifest = _shared.read_json(package.dir / "package.json")
    declared = {
        *_shared.table(manifest, "dependencies"),
        *_shared.table(manifest, "devDependencies"),
    }
    configured = "prettier" in manifest or any(
        path.is_file() for pattern in _PRETTIER_CONFIGS for path in package.dir.glob(pattern)
    )
    if "prettier" not in declared or not configured:
        return None
    return f"{environments.by_name(package.manager).runs}prettier --write --ignore-unknown {_shared.changed_files()}"


#: What decides how the package's scripts, node --test, jest, vitest, mocha,
#: eslint and prettier judge, and how they start.
_SURFACE = {
    "tests": ["**/*.test.*", "**/*.spec.*", "**/__tests__/**", "**/test/**", "**/tests/**"],
    "config": [
        # the runners' own discovery reads these in every package of a workspace
        "**/package.json#scripts,jest,mocha,ava,c8,nyc,vitest,eslintConfig,prettier,type,imports",
        "**/jest.config.*",
        "**/jest.setup.*",
        "**/vitest.config.*",
        "**/vitest.setup.*",
        "**/vite.config.*",
        "**/vitest.workspace.*",
        "**/.mocharc*",
        "**/.c8rc*",
        "**/.nycrc*",
        "**/.eslintrc*",
        "eslint.config.*",
        "**/.eslintignore",
        ".prettierrc*",
        "prettier.config.*",
        ".prettierignore",
        "tsconfig*.json",
        "babel.config.*",
        ".babelrc*",
        ".npmrc",
        ".node-options",
    ],
    "startup": [
        "node_modules/.bin/*",
        "bin/node",
        "bin/npm",
        "bin/npx",
        "bin/pnpm",
        "bin/yarn",
        "bin/jest",
        "bin/vitest",
        "bin/mocha",
        "bin/eslint",
        ".pnp.*",
    ],
}

NODE = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name="node",
    format=_format,
    lint=lambda package: package.scripts.command("lint", "eslint"),
    build=lambda package: package.scripts.command(
        "typecheck", "type-check", "check-types", "types", "lint:types", "tsc", "build"
    ),
    tests=lambda package: package.scripts.command("test", "tests"),
    surface=_SURFACE,
)
globals().update(NODE.hookimpls())

#: The manifest's tables of packages it installs into node_modules.
_DEPENDENCY_TABLES = ("dependencies", "devDependencies", "optionalDependencies")


@hookimpl
def stepkit_dependency_dirs(project_dir: Path) -> list[str]:
    """``node_modules``, when package.json names a package to install there."""
    manifest = _shared.read_json(project_dir / "package.json")
    return ["node_modules"] if any(_shared.table(manifest, t) for t in _DEPENDENCY_TABLES) else []


#: test runners that load every test file into one process; node --test and
#: ava start a process per file, jest and vitest give each file a module registry
_ONE_PROCESS_RUNNERS = ("mocha", "tape")
_MODULES = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx")


@hookimpl
def stepkit_added_file_reach(project_dir: Path, path: str, test_file: bool) -> str | None:
    """A module the step added among the tests of a package whose tests run
    under mocha or tape, which load every test file into one process: its
    code can change what the tests that were there before it see."""
    if not test_file or not path.endswith(_MODULES) or not (project_dir / "package.json").is_file():
        return None
    words = (
        _shared.package_scripts(project_dir / "package.json")
        .get("test", "")
        .replace("/", " ")
        .split()
    )
    runner = next((name for name in _ONE_PROCESS_RUNNERS if name in words), None)
    if runner is None and any(project_dir.glob(".mocharc*")):
        runner = "mocha"
    return (
        f"a module among the tests: {runner} loads every test file into one process"
        if runner
        else None
    )
