"""PHP (``composer.json``): composer scripts first, then the tools the project
configures, run from ``vendor/bin``.

- format: script ``format``/``fmt``/``cs-fix``; else ``php-cs-fixer fix``
  when ``.php-cs-fixer.php``/``.php-cs-fixer.dist.php`` exists.
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

from stepkit.plugins.projects import _shared

_SCRIPT_NAMES = {
    "format": ("format", "fmt", "cs-fix"),
    "lint": ("lint", "cs", "cs-check"),
    "build": ("analyse", "analyze", "phpstan", "psalm"),
    "tests": ("test", "tests"),
}


def _tools(project_dir: Path, composer: dict) -> dict[str, str]:
    """Commands from the tools' own config files, when no script answers."""
    first = _shared.first_file
    required = {**_shared.table(composer, "require"), **_shared.table(composer, "require-dev")}
    tools = {}
    if first(project_dir, (".php-cs-fixer.php", ".php-cs-fixer.dist.php")):
        tools["format"] = "vendor/bin/php-cs-fixer fix"
    if first(project_dir, ("phpcs.xml", "phpcs.xml.dist", ".phpcs.xml", ".phpcs.xml.dist")):
        tools["lint"] = "vendor/bin/phpcs"
    if first(project_dir, ("phpstan.neon", "phpstan.neon.dist", "phpstan.dist.neon")):
        tools["build"] = "vendor/bin/phpstan analyse"
    elif first(project_dir, ("psalm.xml", "psalm.xml.dist")):
        tools["build"] = "vendor/bin/psalm"
    if "pestphp/pest" in required:
        tools["tests"] = "vendor/bin/pest"
    elif first(project_dir, ("phpunit.xml", "phpunit.xml.dist")):
        tools["tests"] = "vendor/bin/phpunit"
    return tools


def commands(project_dir: Path) -> dict[str, str] | None:
    """Scripts first, then configured tools (maybe none); None without a
    composer.json."""
    path = project_dir / "composer.json"
    if not path.is_file():
        return None
    scripts = _shared.runner_commands(
        _shared.package_scripts(path), _SCRIPT_NAMES, "composer run-script"
    )
    return {**_tools(project_dir, _shared.read_json(path)), **scripts}


(stepkit_detect_project, stepkit_format_command, stepkit_lint_command,
 stepkit_build_command, stepkit_test_command) = _shared.gate_hooks("php", commands)
