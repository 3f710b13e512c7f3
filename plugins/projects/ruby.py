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
  when the standard gem is.  With a Gemfile the linter's gem must be one
  ``bundle install`` installs: a gem only in a group the project's bundler
  settings leave out (``BUNDLE_WITHOUT`` or ``without`` in ``.bundle/config``
  or CI, an ``optional: true`` group) is not there for ``bundle exec``, so its
  config file alone does not choose it.
- no format or build gate: rubocop's autocorrect is a lint with side
  effects, and Ruby has no separate build.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import MARKERS, _shared, environments
from stepkit.plugins.projects._base import ProjectType

_GEM = lazy_compile(r"^\s*gem\s+[\"']([^\"']+)[\"'](?P<rest>.*)$")
#: ``group :development, :test do`` (``optional: true`` leaves it out of a plain install).
_GROUP = lazy_compile(r"^\s*group\s+(?P<names>[^#]*?)\s+do\b")
_SYMBOLS = lazy_compile(r":(\w+)|[\"'](\w+)[\"']")
#: Where bundler is told to skip groups: ``BUNDLE_WITHOUT: a:b``, ``bundle config set without 'a b'``,
#: ``bundle install --without a``.
_WITHOUT = lazy_compile(
    r"BUNDLE_WITHOUT[\"']?\s*[:=]\s*[\"']?(?P<env>[\w:, ]+)"
    r"|bundle\s+(?:config\s+(?:set\s+)?(?:--\w+\s+)?without|install\s+[^\n]*--without)[\s=]+[\"']?(?P<cli>[\w:, ]+)"
)
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
    skipped = _skipped_groups(project_dir)
    gems = _installed_gems(_shared.read_text(gemfile), skipped)
    for gemspec in gemspecs:
        text = _shared.read_text(gemspec)
        gems |= {
            found[1]
            for found in _GEMSPEC_DEPENDENCY.finditer(text)
            # a Gemfile's `gemspec` line puts development dependencies in the development group
            if "development" not in skipped or "_development_" not in found[0]
        }
    rakefile = _shared.first_file(project_dir, ("Rakefile", "rakefile", "Rakefile.rb"))
    bundler = environments.manager(project_dir, "ruby")
    prefix = bundler.runs if bundler else ""
    return _Bundle(project_dir, gems, _shared.read_text(rakefile) if rakefile else "", prefix)


def _skipped_groups(project_dir: Path) -> set[str]:
    """The Gemfile groups ``bundle install`` leaves out here and in CI: the
    project's ``.bundle/config`` and what its CI and task runners set."""
    text = _shared.read_text(project_dir / ".bundle" / "config") + _shared.automation_text(
        project_dir
    )
    return {
        name
        for found in _WITHOUT.finditer(text)
        for name in re.split(r"[:, ]+", (found["env"] or found["cli"] or "").strip())
        if name
    }


def _installed_gems(gemfile: str, skipped: set[str]) -> set[str]:
    """The gems a Gemfile names that ``bundle install`` installs: not only in
    ``skipped`` groups, nor in an ``optional: true`` group."""
    gems: set[str] = set()
    groups: list[
        set[str] | None
    ] = []  # the open blocks: a group's names, or None for another block
    for line in gemfile.splitlines():
        code = line.split("#", 1)[0]
        group = _GROUP.match(code)
        if group:
            names = {a or b for a, b in _SYMBOLS.findall(group["names"].split("optional")[0])}
            groups.append({"optional"} | names if re.search(r"optional:\s*true", code) else names)
            continue
        if re.match(r"^\s*end\b", code) and groups:
            groups.pop()
            continue
        if re.search(r"\bdo\s*(?:\|.*\|)?\s*$", code):
            groups.append(None)
        gem = _GEM.match(code)
        if not gem:
            continue
        own = re.search(r"groups?:\s*(\[[^\]]*\]|:\w+|[\"']\w+[\"'])", gem["rest"])
        within = [g for g in groups if g is not None]
        if own:
            within.append({a or b for a, b in _SYMBOLS.findall(own[1])})
        if not any(g <= skipped or "optional" in g for g in within if g):
            gems.add(gem[1])
    return gems


def _lint(bundle: _Bundle) -> str | None:
    def shown(gem: str, config: str) -> bool:
        # under `bundle exec` a config file is no use without the gem in the bundle
        configured = (bundle.dir / config).is_file()
        return gem in bundle.gems if bundle.prefix else configured or gem in bundle.gems

    if (bundle.dir / ".standard.yml").is_file() and shown("standard", ".standard.yml"):
        return f"{bundle.prefix}standardrb"
    if shown("rubocop", ".rubocop.yml"):
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
