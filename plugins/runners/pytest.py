"""pytest: asked for a junit report through ``PYTEST_ADDOPTS`` whatever the
command (so it works through ``make``, ``tox``, ``uv run`` and the like),
node ids read from it, failing ids re-run by naming them (only their files
collected; else by deselecting the others, or ``-k``), and its summary
lines, short summary and the src-layout fault."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.workspace import testresults as tr
from stepkit.workspace.runners import Call, Listing, NoTests, Report, Rerun, TestRunner

if TYPE_CHECKING:  # the readers' evidence type: importing a runner builds no model
    from stepkit.records import Evidence

#: The longest ``--deselect`` list put in PYTEST_ADDOPTS (beyond: ``-k``).
DESELECT_CHARS = 100_000
_JUNIT = "pytest-junit.xml"


def _env(junit: Path, words: list[str], base_env: Mapping[str, str] | None) -> dict[str, str]:
    """The variables that ask pytest for a junit report at ``junit``, with
    ``words`` (after the ``PYTEST_ADDOPTS`` of ``base_env``)."""
    path, env = quoting.pytest_path(junit)
    options = [f"--junitxml={path}", *words]
    return {**env, "PYTEST_ADDOPTS": quoting.extend_variable("PYTEST_ADDOPTS", options, base_env)}


def node_ids() -> tr.CaseId:
    """pytest's node id of each case of one junit report, from its
    ``classname`` (``tests.test_x.TestC``): the longest dotted prefix that is
    a ``.py`` file of the project is the module, the rest are classes.  That
    file is looked for once per ``classname``, not once per test (a suite's
    cases share a few; 300 tests took 3 ms of lookups)."""
    modules: dict[tuple[str, Path], tuple[str, list[str]] | None] = {}

    def case_id(case: ET.Element, project_dir: Path) -> str:
        name, classname, file = case.get("name", ""), case.get("classname", ""), case.get("file")
        if not classname:
            return name
        parts = classname.split(".")
        if file and file.endswith(".py"):
            module = file.replace("\\", "/")
            depth = len(Path(module).with_suffix("").parts)
            return "::".join([module, *parts[depth:], name])
        key = (classname, project_dir)
        if key not in modules:
            modules[key] = _module_of(parts, project_dir)
        found = modules[key]
        if found is None:
            return "::".join([*parts, name]) if name else classname
        module, rest = found
        return "::".join([module, *rest, name])

    return case_id


def _module_of(parts: list[str], project_dir: Path) -> tuple[str, list[str]] | None:
    """The ``.py`` file of the project the longest prefix of ``parts`` names,
    and the rest (None: none does)."""
    for cut in range(len(parts), 0, -1):
        module = "/".join(parts[:cut]) + ".py"
        if (project_dir / module).is_file():
            return module, parts[cut:]
    return None


def _ambient(call: Call) -> Report:
    junit = call.report_dir / _JUNIT

    def read(output: tr.Output, evidence: Evidence) -> tr.TestResults | None:
        return tr.read_junit([junit], call.project, node_ids()) if junit.is_file() else None

    return Report(call.command, _env(junit, [], call.base_env), read, junit)


#: the closing line of a listing (``297 tests collected in 0.24s``, ``250/297 tests collected
#: (47 deselected)``, ``no tests collected``, ``3 tests collected, 1 error``)
_COLLECTED = lazy_compile(
    r"^=*\s*(?:(?P<count>\d+)(?:/\d+)? tests? collected|no tests collected)(?P<rest>.*)$"
)


def _listing(call: Call) -> Listing:
    """The command collecting only (through ``PYTEST_ADDOPTS``, whatever
    runs pytest), one node id a line: pytest prints them at a verbosity of
    -1 only, so the command's own ``-q`` and ``-v`` are made up for (a
    configuration file's ``addopts`` are not seen: the listing then prints
    no ids and lists nothing)."""
    own = 0
    for word in call.words[call.at + 1 :]:
        if _FLAGS.fullmatch(word):
            own += word.count("v") - word.count("q")
        elif word in ("--verbose", "--quiet"):
            own += 1 if word == "--verbose" else -1
    wanted = -1 - own
    verbosity = ["-v"] * wanted if wanted > 0 else ["-q"] * -wanted
    words = ["--collect-only", *verbosity, "-p", "no:cacheprovider"]
    env = {"PYTEST_ADDOPTS": quoting.extend_variable("PYTEST_ADDOPTS", words, call.base_env)}
    return Listing(call.command, env, _listed)


#: short options that only raise or lower the verbosity (``-q``, ``-vv``)
_FLAGS = lazy_compile(r"-[qv]+")


def _listed(output: str) -> list[str] | None:
    """The node ids a collection printed, when they are all of them: each
    pytest run's closing line counts its ids, and the ids printed are
    exactly as many; a collection error, a count that differs (a project's
    own ``-q`` makes it print files, a plugin prints lines of its own) or
    no closing line: None."""
    ids: list[str] = []
    counted, closed = 0, False
    for line in output.splitlines():
        found = _COLLECTED.match(line.strip())
        if found is not None:
            if "error" in found.group("rest"):
                return None
            counted += int(found.group("count") or 0)
            closed = True
        elif "::" in line and line == line.strip():
            ids.append(line)
    return ids if closed and counted == len(ids) and len(set(ids)) == len(ids) else None


def _rerun(rerun: Rerun) -> Report:
    """Exactly the failing ids (node ids, or test files), in the order given:
    named on the command line, so pytest collects only their files, and with
    no cache (a re-run is no run to remember).  Where an id names no file of
    the project, the others of the suite deselected by id (``--deselect``
    matches id prefixes: an id that starts with a deselected one is dropped
    too); without the suite, or past :data:`DESELECT_CHARS`, ``-k`` with
    their names (which may run a few more).  A command that names its own
    paths collects those too: the rest of those paths is deselected
    (:func:`_beside`), and the others of the suite by id."""
    base, failing, suite = rerun.base, rerun.failing, rerun.suite
    junit = rerun.call.report_dir / _JUNIT
    wanted = set(failing)
    others = [i for i in suite if i not in wanted]
    deselect = [word for i in others for word in ("--deselect", i)]
    beside = [word for p in _beside(rerun.call, failing) for word in ("--deselect", p)]
    # pytest refuses a path holding "[" (it reads it as a parametrization)
    if all(
        "[" not in tr.file_of(i) and (rerun.call.project / tr.file_of(i)).is_file() for i in failing
    ):
        # the others deselected too: a command that names its own paths collects them all the same
        deselect = [*beside, *deselect]
        fits = len(quoting.pytest_addopts(deselect)) <= DESELECT_CHARS
        words = ["-p", "no:cacheprovider", *failing, *(deselect if fits else beside)]
        base.env = _env(junit, words, rerun.call.base_env)
        base.note = f"stepkit re-ran {len(failing)} test(s) by id, collecting only their files"
        return base
    if suite and wanted <= set(suite) and len(quoting.pytest_addopts(deselect)) <= DESELECT_CHARS:
        base.env = _env(junit, deselect, rerun.call.base_env)
        base.note = (
            f"stepkit re-ran {len(failing)} test(s), the other {len(others)} deselected by id"
        )
        return base
    selection = " or ".join(i.rsplit("::", 1)[-1] for i in failing)
    base.env = _env(junit, ["-k", selection], rerun.call.base_env)
    base.note = f"stepkit re-ran the failing tests: -k {selection!r}"
    return base


def _beside(call: Call, failing: list[str]) -> list[str]:
    """The node-id prefixes of what the command's own paths collect besides
    the files of ``failing``: a named path that holds none of them whole, and
    in one that does, every entry on the way to them that is not on it
    (``tests/test_a.py::``, ``tests/unit/``: a prefix matches no other file)."""
    project = call.project.resolve()
    files = {Path(tr.file_of(i)) for i in failing}
    prefixes: list[str] = []
    for word in call.words[call.at + 1 :]:
        path = (call.project / word).resolve()
        if word.startswith("-") or not path.exists() or not path.is_relative_to(project):
            continue
        prefixes += _outside(project, path.relative_to(project), files)
    return sorted(set(prefixes))


def _outside(project: Path, rel: Path, files: set[Path]) -> list[str]:
    """The prefixes of ``rel`` (a path of the project) that hold none of ``files``."""
    if rel in files:
        return []
    if not any(rel in f.parents for f in files):
        if rel == Path("."):
            return []
        return [f"{rel.as_posix()}/" if (project / rel).is_dir() else f"{rel.as_posix()}::"]
    return [
        prefix
        for child in sorted((project / rel).iterdir())
        for prefix in _outside(project, rel / child.name, files)
    ]


_ROOTDIR = lazy_compile(
    r"^rootdir: (?P<root>.+?)(?:, (?:configfile|inifile|testpaths|plugins): .*)?$"
)
_NO_MODULE = lazy_compile(r"^E\s+ModuleNotFoundError: No module named '(?P<module>[\w.]+)'$")


def src_layout_not_installed(lines: list[str], text: str, reasons: list[str]) -> str | None:
    """pytest could not import the project's own package, which lives under
    ``src/`` and is not installed (nor on ``pythonpath``): a set-up step, not
    the code.  Only when every error and failure is that import."""
    root = next((m["root"] for line in lines[:30] if (m := _ROOTDIR.match(line))), None)
    if root is None or "ModuleNotFoundError" not in text:
        return None
    missing = {m["module"].split(".")[0] for line in lines if (m := _NO_MODULE.match(line))}
    if not missing:
        return None
    own = sorted(name for name in missing if (Path(root) / "src" / name).is_dir())
    if not own:
        return None
    if any("ModuleNotFoundError" not in why for why in reasons):
        return None
    return (
        f"python: the project's package {own[0]} (src/{own[0]}) is not installed in the environment the "
        "tests run in (ModuleNotFoundError); install it (pip install -e .) or set pytest's pythonpath"
    )


PYTEST = TestRunner(
    name="pytest",
    command=lambda words: words[0] in ("pytest", "py.test"),
    launchers=("uv", "poetry", "pipenv", "pdm", "hatch", "python", "python3"),
    ambient=_ambient,
    ambient_required=True,
    rerun=_rerun,
    claims=lambda failing: all("::" in i or i.endswith(".py") for i in failing),
    runs_files=True,
    listing=_listing,
    failed=(
        r"^=*\s*(?:\d+ \w+, )*\d+ (?:failed|errors?)\b.* in [\d.]+s",  # totals
        r"^(?:FAILED|ERROR) \S+::",  # short summary
    ),
    ran=(r"^=*\s*(?:\d+ \w+, )*\d+ (?:passed|failed|errors?|xfailed|xpassed)\b.* in\s+[\d.]+s",),
    words=("passed", "failed", "error", "no test", "deselected", "skipped"),
    no_tests=(
        NoTests(r"^=*\s*no tests ran(?: in [\d.]+s)?\s*=*$", (5,), "no tests collected"),
        NoTests(
            r"^=*\s*\d+ deselected(?:, \d+ warnings?)? in [\d.]+s\b.*$",
            (5,),
            "every test was deselected",
        ),
        NoTests(
            r"^=*\s*\d+ skipped(?:, \d+ (?:deselected|warnings?))* in [\d.]+s\b.*$",
            (0,),
            "every test was skipped",
        ),
    ),
    failure_reason=r"^(?:FAILED|ERROR) \S+::\S+(?: - (?P<why>.*))?$",
    faults=(src_layout_not_installed,),
    skip_markers=(
        ("pytest skip/xfail marker", r"pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail)\("),
    ),
    configs=(r"pytest\.ini",),
    sections=("pytest",),
    plugin_group="pytest11",
)
RUNNERS = (PYTEST,)
