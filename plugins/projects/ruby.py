"""Ruby (``Gemfile`` or a ``*.gemspec``): rspec or rake's tests, standard or
rubocop, through ``bundle exec`` when a Gemfile is there.

What the project uses is read from the gems its Gemfile names, the
dependencies its gemspec adds (``add_development_dependency`` …, which a
Gemfile's ``gemspec`` line pulls in), its Rakefile and its lint configs.

- tests: ``rspec`` when the project uses rspec (an rspec gem, a ``.rspec``
  file or an ``RSpec::Core::RakeTask``) and has a ``spec/`` directory; else
  ``rake test`` when the Rakefile defines a test task (``Rake::TestTask``,
  ``Minitest::TestTask``, ``task :test``); else ``rake`` when the Rakefile's
  default task names ``test`` or ``spec`` (defined where this reading does
  not follow, e.g. a loaded ``.rake`` file).
- lint: ``standardrb`` when ``.standard.yml`` exists; else ``rubocop`` when
  ``.rubocop.yml`` exists or the rubocop gem is used; else ``standardrb``
  when the standard gem is.
- no format or build gate: rubocop's autocorrect is a lint with side
  effects, and Ruby has no separate build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import MARKERS, _shared
from stepkit.plugins.projects._base import ProjectType

_GEM = lazy_compile(r"^\s*gem\s+[\"']([^\"']+)[\"']", re.MULTILINE)
_GEMSPEC_DEPENDENCY = lazy_compile(
    r"\.add_(?:development_|runtime_)?dependency\s*\(?\s*[\"']([^\"']+)[\"']"
)
_RAKE_TEST = lazy_compile(r"(?:Rake|Minitest)::TestTask|\btask\s*\(?\s*[:\"']test\b")
_RSPEC_TASK = lazy_compile(r"RSpec::Core::RakeTask")
_DEFAULT_TASK = lazy_compile(r"\btask\s*\(?\s*(?::default\s*=>|default:)\s*(?P<names>[^\n]+)")


class _Bundle(NamedTuple):
    dir: Path
    #: the gems the Gemfile names and the gemspecs depend on.
    gems: set[str]
    rakefile: str
    #: ``bundle exec `` with a Gemfile, else ``""``.
    prefix: str

    def uses_rspec(self) -> bool:
        return (
            any(gem == "rspec" or gem.startswith("rspec-") for gem in self.gems)
            or (self.dir / ".rspec").is_file()
            or _RSPEC_TASK.search(self.rakefile) is not None
        )


def _read(project_dir: Path) -> _Bundle | None:
    gemfile = project_dir / "Gemfile"
    gemspecs = sorted(project_dir.glob("*.gemspec"))
    if not gemfile.is_file() and not gemspecs:
        return None
    gems = set(_GEM.findall(_shared.read_text(gemfile)))
    for gemspec in gemspecs:
        gems |= set(_GEMSPEC_DEPENDENCY.findall(_shared.read_text(gemspec)))
    rakefile = _shared.first_file(project_dir, ("Rakefile", "rakefile", "Rakefile.rb"))
    prefix = "bundle exec " if gemfile.is_file() else ""
    return _Bundle(project_dir, gems, _shared.read_text(rakefile) if rakefile else "", prefix)


def _lint(bundle: _Bundle) -> str | None:
    if (bundle.dir / ".standard.yml").is_file():
        return f"{bundle.prefix}standardrb"
    if "rubocop" in bundle.gems or (bundle.dir / ".rubocop.yml").is_file():
        return f"{bundle.prefix}rubocop"
    return f"{bundle.prefix}standardrb" if "standard" in bundle.gems else None


def _tests(bundle: _Bundle) -> str | None:
    if (bundle.dir / "spec").is_dir() and bundle.uses_rspec():
        return f"{bundle.prefix}rspec"
    if _RAKE_TEST.search(bundle.rakefile):
        return f"{bundle.prefix}rake test"
    default = _DEFAULT_TASK.search(bundle.rakefile)
    if default and re.search(r"\b(?:test|spec)\b", default.group("names")):
        return f"{bundle.prefix}rake"
    return None


RUBY = ProjectType(markers=MARKERS[__name__], read=_read, name="ruby", lint=_lint, tests=_tests)
globals().update(RUBY.hookimpls())
