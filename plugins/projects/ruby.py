"""Ruby (``Gemfile``): everything through ``bundle exec``.

- tests: ``rspec`` when a ``spec/`` directory exists and the Gemfile names
  rspec (or a ``.rspec`` file exists); else ``rake test`` when the Rakefile
  defines a test task (``Rake::TestTask`` or ``task :test``/``task "test"``).
- lint: ``rubocop`` when the Gemfile names it or ``.rubocop.yml`` exists;
  ``standardrb`` when the Gemfile names standard.
- no format or build gate: rubocop's autocorrect is a lint with side
  effects, and Ruby has no separate build.
"""

from __future__ import annotations

import re
from pathlib import Path

from stepkit.plugins.projects import _shared

from stepkit.hookspecs import hookimpl

_RAKE_TEST = re.compile(r"Rake::TestTask|\btask\s*\(?\s*[:\"']test\b")


def _gems(gemfile: str) -> set[str]:
    return set(re.findall(r"^\s*gem\s+[\"']([^\"']+)[\"']", gemfile, re.MULTILINE))


def _commands(project_dir: Path) -> dict[str, str]:
    gemfile = project_dir / "Gemfile"
    if not gemfile.is_file():
        return {}
    gems = _gems(_shared.read_text(gemfile))
    commands = {}
    if (project_dir / "spec").is_dir() and ("rspec" in gems or (project_dir / ".rspec").is_file()):
        commands["tests"] = "bundle exec rspec"
    elif _RAKE_TEST.search(_shared.read_text(project_dir / "Rakefile")):
        commands["tests"] = "bundle exec rake test"
    if "rubocop" in gems or (project_dir / ".rubocop.yml").is_file():
        commands["lint"] = "bundle exec rubocop"
    elif "standard" in gems:
        commands["lint"] = "bundle exec standardrb"
    return commands


@hookimpl
def stepkit_detect_project(project_dir: Path) -> str | None:
    return "ruby" if (project_dir / "Gemfile").is_file() else None


@hookimpl
def stepkit_lint_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("lint")


@hookimpl
def stepkit_test_command(project_dir: Path) -> str | None:
    return _commands(project_dir).get("tests")
