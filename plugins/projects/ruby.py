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
from typing import NamedTuple

from stepkit.plugins.projects import _shared
from stepkit.plugins.projects._base import ProjectType

_RAKE_TEST = re.compile(r"Rake::TestTask|\btask\s*\(?\s*[:\"']test\b")


class _Bundle(NamedTuple):
    dir: Path
    #: the gems the Gemfile names.
    gems: set[str]


def _read(project_dir: Path) -> _Bundle | None:
    gemfile = project_dir / "Gemfile"
    if not gemfile.is_file():
        return None
    gems = set(re.findall(r"^\s*gem\s+[\"']([^\"']+)[\"']", _shared.read_text(gemfile), re.MULTILINE))
    return _Bundle(project_dir, gems)


def _lint(bundle: _Bundle) -> str | None:
    if "rubocop" in bundle.gems or (bundle.dir / ".rubocop.yml").is_file():
        return "bundle exec rubocop"
    if "standard" in bundle.gems:
        return "bundle exec standardrb"
    return None


def _tests(bundle: _Bundle) -> str | None:
    if (bundle.dir / "spec").is_dir() and ("rspec" in bundle.gems or (bundle.dir / ".rspec").is_file()):
        return "bundle exec rspec"
    if _RAKE_TEST.search(_shared.read_text(bundle.dir / "Rakefile")):
        return "bundle exec rake test"
    return None


RUBY = ProjectType(read=_read, name="ruby", lint=_lint, tests=_tests)
globals().update(RUBY.hookimpls())
