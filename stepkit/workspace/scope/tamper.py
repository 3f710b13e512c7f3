"""Tamper flags: signs in a step's changes that verification was weakened.

Each flag names its file: a deleted test file, a new skip/xfail/ignore
marker, a test module that patches another module when it is imported, a
loosened lint or coverage configuration (a lowered or removed threshold, a
new ignore/exclude entry, a deleted config), a line that reads what the
judge leaves in the environment of the code it runs (its variables, the
report it asks for, where it keeps its records).  Flags are for
the sweep, the reviewer and the user to judge; they never fail a step.
"""

from __future__ import annotations

import ast
import difflib
import functools
import re

from stepkit.lazyregex import lazy_compile
from stepkit.records import TamperFlag
from stepkit.workspace.runners import builtin_runners
from stepkit.workspace.scope.tree import text_of
from stepkit.workspace.store import GIT_SUBDIR, STORE_NAME
from stepkit.workspace.tools import builtin_tools

_TEST_PATH = lazy_compile(
    r"(^|/)(tests?|spec|specs|__tests__)/"
    r"|(^|/)test_[^/]*\.(py|rb)$|_test\.(py|go|rb|exs)$|_spec\.rb$"
    r"|\.(test|spec)\.[cm]?[jt]sx?$|(^|/)[^/]*Tests?\.(java|kt|cs|swift)$"
)


def _markers() -> tuple[tuple[str, re.Pattern[str]], ...]:
    """Every marker that skips a test or silences a check: the built-in
    runners' skip markers, then the built-in tools' silencers."""
    return (*builtin_runners().skip_markers, *builtin_tools().silencers)


@functools.cache
def _configs() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """The quality configuration the built-in runners and tools declare,
    each kind in one pattern: a path of one of their configuration files,
    of a file they share with other settings, and one of their sections
    there."""
    runners, tools = builtin_runners().declared, builtin_tools().declared
    shared = [p for t in tools for p in t.shared_configs]
    configs = [*(p for r in runners for p in r.configs), *(p for t in tools for p in t.configs)]
    sections = [*(p for r in runners for p in r.sections), *(p for t in tools for p in t.sections)]
    return (
        re.compile(rf"(^|/)({_one_of(configs + shared)})$"),
        re.compile(rf"(^|/)({_one_of(shared)})$"),
        re.compile(_one_of(sections), re.IGNORECASE),
    )


def _one_of(patterns: list[str]) -> str:
    """Any of ``patterns`` (each once), or nothing at all."""
    return "|".join(dict.fromkeys(patterns)) or "(?!)"


def file_flags(
    path: str, old_id: str | None, new_id: str | None, old: bytes | None, new: bytes | None
) -> list[TamperFlag]:
    """The tamper flags of one changed file (``old_id`` None: added, ``new_id``
    None: deleted; ``old``, ``new``: its bytes before and now)."""
    if new_id is None:
        if _TEST_PATH.search(path):
            return [TamperFlag.in_changes("deleted_test", path, f"deleted test file: {path}")]
        if _is_quality_config(path):
            text = f"deleted lint/coverage config: {path}"
            return [TamperFlag.in_changes("deleted_config", path, text)]
        return []
    old_text, new_text = text_of(old) if old_id else "", text_of(new)
    if old_text is None or new_text is None:
        return []
    flags = _new_markers(path, old_text, new_text)
    flags.extend(_judge_marks(path, old_text, new_text))
    if path.endswith(".py") and _TEST_PATH.search(path):
        flags.extend(_new_module_patches(path, old_text, new_text))
    if _is_quality_config(path):
        flags.extend(_loosened_config(path, old_text, new_text))
    return flags


#: What the code under test has no business reading: the names stepkit gives
#: its own variables and the tests gate's report flags, and where it keeps
#: its records (the run store, its state directory).
_JUDGE_MARKS = lazy_compile(
    r"\bSTEPKIT_[A-Z0-9_]+|\bPYTEST_ADDOPTS\b|--junitxml\b|\bXDG_STATE_HOME\b"
    r"|\.local/state/stepkit\b"
    rf"|(?:^|[^\w.]){re.escape(STORE_NAME)}\b|\.git/{re.escape(GIT_SUBDIR)}\b"
)
#: Lines named in one file's judge's-marks flags at most.
_MARKS_NAMED = 3


def _judge_marks(path: str, old: str, new: str) -> list[TamperFlag]:
    """Added lines that name what the judge leaves in the environment of
    the code it runs (a test that reads ``PYTEST_ADDOPTS`` can find the
    report it is judged by; one that reads ``STEPKIT_*`` knows it is being
    judged), each named with its line number."""
    before = set(old.splitlines())
    hits = [
        (n, line.strip())
        for n, line in enumerate(new.splitlines(), start=1)
        if line not in before and _JUDGE_MARKS.search(line)
    ]
    texts = [
        f"reads the judge's marks in {path}:{n}: {line[:120]}" for n, line in hits[:_MARKS_NAMED]
    ]
    if len(hits) > _MARKS_NAMED:
        texts.append(f"reads the judge's marks in {path}: {len(hits) - _MARKS_NAMED} more lines")
    return [TamperFlag.in_changes("judge_marks", path, text) for text in texts]


def _new_markers(path: str, old: str, new: str) -> list[TamperFlag]:
    flags = []
    for label, pattern in _markers():
        added = len(pattern.findall(new)) - len(pattern.findall(old))
        if added > 0:
            flags.append(
                TamperFlag.in_changes("new_marker", path, f"new {label} in {path} (+{added})")
            )
    return flags


def _new_module_patches(path: str, old: str, new: str) -> list[TamperFlag]:
    """A test module that rebinds another module's attribute at import time
    (``calc.add = ...``, ``setattr(calc, ...)``, ``sys.modules[...] = ...``)
    changes the code under test for every test the session collects."""
    added = sorted(set(_module_patches(new)) - set(_module_patches(old)))
    return [
        TamperFlag.in_changes(
            "module_patch",
            path,
            f"new module-level patch of {target} in {path} "
            "(runs when the tests are collected, for every test)",
        )
        for target in added
    ]


def _module_patches(text: str) -> list[str]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found = []
    for node in tree.body:
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, (ast.AugAssign, ast.AnnAssign))
            else []
        )
        found += [
            ast.unparse(t)
            for t in targets
            if isinstance(t, ast.Attribute)
            or (isinstance(t, ast.Subscript) and ast.unparse(t.value) == "sys.modules")
        ]
        call = node.value if isinstance(node, ast.Expr) else None
        if isinstance(call, ast.Call) and ast.unparse(call.func).rsplit(".", 1)[-1] in (
            "setattr",
            "patch",
        ):
            found.append(ast.unparse(call)[:80])
    return found


_LOOSENING_KEY = lazy_compile(r"ignore|exclude|omit|disable|skip|allow|noqa", re.IGNORECASE)
_LOOSENING_VALUE = lazy_compile(
    r"[\"']off[\"']|:\s*off\b|[\"']?strict[\"']?\s*[:=]\s*false|--no-cov|-p\s+no:", re.IGNORECASE
)
_THRESHOLD = lazy_compile(
    r"(?P<key>fail[_-]under|cov-fail-under|min(?:imum)?[_-]coverage|[\"']?(?:lines|branches|functions|statements)[\"']?)"
    r"\s*[=:]\s*(?P<value>\d+(?:\.\d+)?)",
    re.IGNORECASE,
)
_KEY_LINE = lazy_compile(r"^\s*[\"']?(?P<key>[\w.\-]+)[\"']?\s*[=:]")
_SECTION_LINE = lazy_compile(r"^\s*\[+(?P<name>[^\]]+)\]+\s*$")


def _is_quality_config(path: str) -> bool:
    return bool(_configs()[0].search(path))


def _loosened_config(path: str, old: str, new: str) -> list[TamperFlag]:
    flags = []
    shared = bool(_configs()[1].search(path))
    before, after = _thresholds(old, shared), _thresholds(new, shared)
    for key, value in sorted(before.items()):
        if key not in after:
            text = f"coverage threshold removed in {path}: {key} was {value:g}"
            flags.append(TamperFlag.in_changes("coverage_threshold", path, text))
        elif after[key] < value:
            text = f"coverage threshold lowered in {path}: {key} {value:g} -> {after[key]:g}"
            flags.append(TamperFlag.in_changes("coverage_threshold", path, text))
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("insert", "replace"):
            continue
        for index in range(j1, j2):
            line = new_lines[index].strip()
            if not line or line.startswith(("#", "//", ";")) or _SECTION_LINE.match(line):
                continue
            section, key = _context(new_lines, index)
            if shared and not _configs()[2].search(section):
                continue
            # an entry of an ignore table (``[tool.ruff.lint.per-file-ignores]``) loosens as its key would
            table = section.rsplit(".", 1)[-1]
            if (
                _LOOSENING_KEY.search(key)
                or _LOOSENING_KEY.search(table)
                or _LOOSENING_VALUE.search(line)
            ):
                text = f"loosened lint/coverage config in {path}: {line[:120]}"
                flags.append(TamperFlag.in_changes("loosened_config", path, text))
    return flags


def _thresholds(text: str, shared: bool) -> dict[str, float]:
    found: dict[str, float] = {}
    section = ""
    for line in text.splitlines():
        header = _SECTION_LINE.match(line)
        if header:
            section = header.group("name")
            continue
        if shared and not _configs()[2].search(section) and "cov-fail-under" not in line:
            continue
        for match in _THRESHOLD.finditer(line):
            key = match.group("key").strip("\"'").lower().replace("-", "_")
            found[key] = max(found.get(key, 0.0), float(match.group("value")))
    return found


def _context(lines: list[str], index: int) -> tuple[str, str]:
    """(section header, nearest key) governing line ``index``: a list item
    belongs to the key that opened the list above it."""
    section = key = ""
    for line in reversed(lines[: index + 1]):
        if not key:
            match = _KEY_LINE.match(line)
            if match:
                key = match.group("key")
        header = _SECTION_LINE.match(line)
        if header:
            section = header.group("name")
            break
    return section, key
