"""PHP (``composer.json``): composer scripts first, then the tools the project
configures, run from ``vendor/bin`` (from ``tools/`` for a tool phive put
there, as ``.phive/phars.xml`` does by default).

- format: script ``format``/``fmt``/``cs-fix``; else ``php-cs-fixer fix`` on
  the step's changed ``.php`` files (``--path-mode=intersection``: the
  config's finder still excludes) when ``.php-cs-fixer.php`` /
  ``.php-cs-fixer.dist.php`` exists.
- lint: script ``lint``/``cs``/``cs-check``; else ``phpcs`` when
  ``phpcs.xml``/``phpcs.xml.dist``/``.phpcs.xml`` exists.
- build: script ``analyse``/``analyze``/``phpstan``/``psalm``; else
  ``phpstan analyse`` (``phpstan.neon[.dist]``) or ``psalm`` (``psalm.xml``),
  the static analysis that stands in for a build.
- tests: script ``test``/``tests``; else ``pest`` when pestphp/pest is
  required, ``phpunit`` when ``phpunit.xml[.dist]`` exists.
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType


class _Composer(NamedTuple):
    dir: Path
    scripts: _shared.Targets
    #: the packages required, dev ones included.
    required: set[str]

    def tool(self, config_files: tuple[str, ...], command: str) -> str | None:
        """``command`` when one of the tool's ``config_files`` exists."""
        return command if _shared.first_file(self.dir, config_files) else None

    def bin(self, name: str) -> str:
        """Where the project's ``name`` is: ``tools/name`` (phive) when it is there, else ``vendor/bin/name``."""
        return f"tools/{name}" if (self.dir / "tools" / name).is_file() else f"vendor/bin/{name}"


def _read(project_dir: Path) -> _Composer | None:
    path = project_dir / "composer.json"
    if not path.is_file():
        return None
    composer = _shared.read_json(path)
    required = {*_shared.table(composer, "require"), *_shared.table(composer, "require-dev")}
    scripts = _shared.Targets("composer run-script", _shared.package_scripts(path))
    return _Composer(project_dir, scripts, required)


def _format(composer: _Composer) -> str | None:
    return composer.scripts.command("format", "fmt", "cs-fix") or composer.tool(
        (".php-cs-fixer.php", ".php-cs-fixer.dist.php"),
        f"{composer.bin('php-cs-fixer')} fix --path-mode=intersection {_shared.changed_files('.php')}",
    )


def _lint(composer: _Composer) -> str | None:
    return composer.scripts.command("lint", "cs", "cs-check") or composer.tool(
        ("phpcs.xml", "phpcs.xml.dist", ".phpcs.xml", ".phpcs.xml.dist"), composer.bin("phpcs")
    )


def _build(composer: _Composer) -> str | None:
    return (
        composer.scripts.command("analyse", "analyze", "phpstan", "psalm")
        or composer.tool(
            ("phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon"),
            f"{composer.bin('phpstan')} analyse",
        )
        or composer.tool(("psalm.xml", "psalm.xml.dist"), composer.bin("psalm"))
    )


def _tests(composer: _Composer) -> str | None:
    return (
        composer.scripts.command("test", "tests")
        or ("vendor/bin/pest" if "pestphp/pest" in composer.required else None)
        or composer.tool(("phpunit.xml", "phpunit.xml.dist"), "vendor/bin/phpunit")
    )


PHP = ProjectType(
    markers=MARKERS[__name__],
    read=_read,
    name="php",
    format=_format,
    lint=_lint,
    build=_build,
    tests=_tests,
)
globals().update(PHP.hookimpls())
