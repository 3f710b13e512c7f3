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

_RAKE_TEST = re.compile(r"Rake::TestTask|\btask\s*\(?\s*[:\"']test\b")


def _gems(gemfile: str) -> set[str]:
    return set(re.findall(r"^\s*gem\s+[\"']([^\"']+)[\"']", gemfile, re.MULTILINE))


def commands(project_dir: Path) -> dict[str, str] | None:
    """Lint and tests commands (maybe none); None without a Gemfile."""
    gemfile = project_dir / "Gemfile"
    if not gemfile.is_file():
        return None
    gems = _gems(_shared.read_text(gemfile))
    found = {}
    if (project_dir / "spec").is_dir() and ("rspec" in gems or (project_dir / ".rspec").is_file()):
        found["tests"] = "bundle exec rspec"
    elif _RAKE_TEST.search(_shared.read_text(project_dir / "Rakefile")):
        found["tests"] = "bundle exec rake test"
    if "rubocop" in gems or (project_dir / ".rubocop.yml").is_file():
        found["lint"] = "bundle exec rubocop"
    elif "standard" in gems:
        found["lint"] = "bundle exec standardrb"
    return found


(stepkit_detect_project, stepkit_lint_command,
 stepkit_test_command) = _shared.gate_hooks("ruby", commands, gates=("lint", "tests"))
