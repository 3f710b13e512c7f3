"""The verification surface: the files that decide how the gates judge, and
what the step changed of it.

Project types declare their files through ``stepkit_verification_surface``
(kind → glob patterns); stepkit adds its own (``stepconf.py``,
``stepkit.toml``, the ``[tool.stepkit] plugins`` modules, CI workflow
files, and the project files the gate commands name: a script a gate
runs).  :func:`surface_changes` compares the step-start snapshot with the
tree now and returns each protected file the step changed, with its diff
and the bytes it had before the step, which the pristine re-check
(:mod:`stepkit.workspace.pristine`) puts back in its scratch copy.

A pattern ``PATH#key,key`` protects only those parts of the file: the
top-level tables of a TOML file (``tool`` covers ``[tool.pytest.ini_options]``),
the top-level keys of a JSON file.  A change elsewhere in it (a new
dependency) is not a change of the surface, and the pristine copy gets the
file as it is now with only those parts as they were.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from stepkit.config import Config
from stepkit.lazyregex import lazy_compile
from stepkit.workspace.scope.diff import file_diff, snapshot_changes
from stepkit.workspace.scope.snapshot import BeforeReader, Snapshot
from stepkit.workspace.scope.tree import read_bytes, text_of

#: stepkit's own: its configuration, local plugins and CI workflows (what a gate runs elsewhere)
CORE_SURFACE = {
    "config": [
        "stepconf.py",
        "stepkit.toml",
        ".github/workflows/**",
        ".github/actions/**",
        ".gitlab-ci.yml",
        ".circleci/**",
        "azure-pipelines.yml",
        ".buildkite/**",
        "Jenkinsfile",
        ".pre-commit-config.yaml",
    ],
}
#: the kinds a pattern may have; a path takes the first kind (in this order) that matches it
KINDS = ("startup", "config", "tests")


@dataclass(frozen=True)
class Rule:
    """One declared pattern: its kind and the parts of the file it protects (``()``: all)."""

    kind: str
    pattern: str
    keys: tuple[str, ...]
    regex: re.Pattern[str]

    def matches(self, rel: str) -> bool:
        return self.regex.fullmatch(rel) is not None


@dataclass
class SurfaceChange:
    """A protected file the step changed.

    :ivar how: ``added``, ``modified`` or ``deleted``.
    :ivar before: the file's bytes as the pristine copy gets them (None:
        absent); for a ``#keys`` rule, the file now with those parts as they were.
    :ivar known: the bytes before the step were kept (else the pristine copy cannot be built).
    :ivar why: for a file the step added that is a test file or on no
        pattern, why it is judged as a change of the surface
        (``stepkit_added_file_reach``); else empty.
    """

    path: str
    kind: str
    how: str
    diff: str
    before: bytes | None
    known: bool = True
    why: str = ""

    def line(self) -> str:
        return f"{self.path} ({self.kind}, {self.how}{': ' + self.why if self.why else ''})"


def surface_rules(pm, project_dir: Path, config: Config, scripts: Iterable[str] = ()) -> list[Rule]:
    """Every pattern stepkit and the project's plugins declare, in :data:`KINDS`
    order, with the ``scripts`` the gate commands run (:func:`gate_scripts`)."""
    declared = [
        CORE_SURFACE,
        {"config": [_plugin_path(spec) for spec in config.plugins]},
        {"config": sorted(scripts)},
    ]
    declared += [
        answer
        for answer in pm.hook.stepkit_verification_surface(project_dir=Path(project_dir))
        if isinstance(answer, dict)
    ]
    rules = []
    for kind in KINDS:
        for answer in declared:
            for pattern in answer.get(kind) or ():
                rules.append(_rule(kind, pattern))
    return rules


#: programs whose first argument that is not a flag is the script they run -> the
#: flags after which the program runs code or a module given inline instead
INTERPRETERS = {
    **dict.fromkeys(("sh", "bash", "zsh", "dash", "ksh"), frozenset({"-c"})),
    "python": frozenset({"-c", "-m"}),
    **dict.fromkeys(
        ("node", "ruby", "perl", "php", "lua"), frozenset({"-e", "--eval", "-p", "--print", "-r"})
    ),
}


def gate_scripts(pm, project_dir: Path, commands: Iterable[str]) -> list[str]:
    """The project's scripts the gate ``commands`` run (:func:`command_files`),
    directly or through a task runner's target (``stepkit_command_body``:
    the scripts the recipe, the package.json script… runs, one level down)."""
    commands = list(commands)
    bodies = [
        pm.hook.stepkit_command_body(command=command, project_dir=Path(project_dir))
        for command in commands
    ]
    run = [
        *commands,
        *(line for body in bodies if isinstance(body, str) for line in body.splitlines()),
    ]
    return command_files(Path(project_dir), run)


#: environment variables naming the directories an interpreter searches before its own library
SEARCH_PATH_VARIABLES = ("PYTHONPATH", "NODE_PATH", "RUBYLIB", "PERL5LIB")


def search_roots(project_dir: Path, commands: Iterable[str]) -> list[str]:
    """The project directories the ``commands`` put on an interpreter's
    search path (``PYTHONPATH=src pytest``, ``env NODE_PATH=lib node …``),
    project-relative; the project root itself is not listed."""
    root = project_dir.resolve()
    found: set[str] = set()
    for command in commands:
        for word in _words(command):
            name, assigned, value = word.partition("=")
            if not assigned or name not in SEARCH_PATH_VARIABLES:
                continue
            for part in value.split(os.pathsep):
                if not part or "$" in part:
                    continue
                try:
                    rel = (root / part).resolve().relative_to(root).as_posix()
                except (OSError, ValueError):
                    continue  # outside the project
                if rel != ".":
                    found.add(rel)
    return sorted(found)


def command_files(project_dir: Path, commands: Iterable[str]) -> list[str]:
    """The project's scripts that the ``commands`` run, as the surface's
    patterns: the program itself (``./scripts/test``) or the script an
    interpreter runs (``sh scripts/test``, ``python tools/check.py``) decides
    how a gate judges as much as a runner's configuration does.  The files a
    command only reads as arguments (``py_compile calc.py``) are the code it
    judges, not its surface."""
    root = project_dir.resolve()
    found: set[str] = set()
    for command in commands:
        for word in _scripts_run(_words(command)):
            rel = _project_file(root, word)
            if rel is not None:
                found.add(rel)
    return sorted(found)


def _words(command: str) -> list[str]:
    """A shell command's words, ``&&``, ``||``, ``;`` and ``|`` words of their own."""
    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        return list(lexer)
    except ValueError:  # an unbalanced quote: the shell would refuse it too
        return command.split()


def _scripts_run(words: list[str]) -> list[str]:
    """The words of each simple command of ``words`` that name what it
    executes, relative to where it runs (after a ``cd``): its program and,
    for an interpreter, the script it is given."""
    scripts: list[str] = []
    expect_program, changes_dir, here = True, False, ""
    inline: frozenset[str] | None = (
        None  # the interpreter's inline-code flags; None: not an interpreter
    )
    for word in words:
        if word in ("&&", "||", ";", "|", "&"):
            expect_program, changes_dir, inline = True, False, None
        elif expect_program:
            if "=" in word and not word.startswith(("/", ".")):
                continue  # an environment assignment before the program
            expect_program, changes_dir = False, word == "cd"
            if not changes_dir:
                scripts.append(os.path.join(here, word))
                inline = INTERPRETERS.get(Path(word).name.rstrip("0123456789."))
        elif changes_dir:
            here, changes_dir = os.path.normpath(os.path.join(here, word)), False
        elif inline is not None and not word.startswith("-"):
            scripts.append(os.path.join(here, word))
            inline = None
        elif inline is not None and word in inline:
            inline = None  # code or a module, not a file
    return scripts


def _project_file(root: Path, word: str) -> str | None:
    """``word`` as a project-relative path when it names a file in the project."""
    if any(char in word for char in "*?[]{}#"):
        return None
    try:
        path = (root / word).resolve()
        if not path.is_file():
            return None
        return path.relative_to(root).as_posix()
    except (OSError, ValueError):
        return None


def _plugin_path(spec: str) -> str:
    """A ``[tool.stepkit] plugins`` entry as the file(s) it loads."""
    if spec.endswith(".py"):
        return spec
    return spec.replace(".", "/") + "{.py,/**}"


@lru_cache(maxsize=1024)
def _rule(kind: str, pattern: str) -> Rule:
    """The rule of a declared pattern, made once per process: every gate
    asks for the whole surface (~75 patterns), and translating a glob is a
    loop over its characters."""
    path, _, keys = pattern.partition("#")
    return Rule(
        kind, pattern, tuple(k.strip() for k in keys.split(",") if k.strip()), _compile(path)
    )


def _compile(glob: str) -> re.Pattern[str]:
    """``**/`` any depth, ``*`` within one directory, ``{a,b}`` either."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        char = glob[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "{" and "}" in glob[i:]:
            end = glob.index("}", i)
            out.append(
                "(?:"
                + "|".join(
                    _compile(alt).pattern.removesuffix(r"\Z")
                    for alt in glob[i + 1 : end].split(",")
                )
                + ")"
            )
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return re.compile("".join(out) + r"\Z")


def rule_for(rules: list[Rule], rel: str) -> Rule | None:
    """The first rule that covers ``rel`` (None: not on the surface)."""
    return next((rule for rule in rules if rule.matches(rel)), None)


def surface_changes(
    rules: list[Rule],
    before: Snapshot,
    project_dir: Path,
    added_file_reach: Callable[[str, bool], str | None] | None = None,
) -> list[SurfaceChange]:
    """The protected files the step changed since ``before``.  A file the
    step added that is a test file or on no pattern is its own (its new
    test, its code), unless ``added_file_reach(path, test_file)`` gives a reason it can
    change what the earlier tests see (``stepkit_added_file_reach``): then it
    is a change of the surface, of its test kind or else of the startup kind."""
    reader = BeforeReader(before)
    project = Path(project_dir).resolve()
    found = []
    for rel, old_id, new_id in snapshot_changes(before, project):
        rule = rule_for(rules, rel)
        why = ""
        if old_id is None and (rule is None or rule.kind == "tests"):
            why = (added_file_reach(rel, rule is not None) if added_file_reach else None) or ""
            if not why:
                continue
        elif rule is None:
            continue
        kind, keys = (rule.kind, rule.keys) if rule is not None else ("startup", ())
        old = reader.read(old_id)
        new = read_bytes(project / rel) if new_id is not None else None
        known = old_id is None or old is not None
        restored: bytes | None = old
        if keys and known and old is not None and new is not None:
            parts = _restore_parts(rel, keys, old, new)
            if parts is not None:
                if parts == new:
                    continue  # only unprotected parts changed
                restored = parts
        how = "added" if old_id is None else "deleted" if new_id is None else "modified"
        found.append(
            SurfaceChange(
                rel, kind, how, file_diff(rel, old_id, new_id, old, new), restored, known, why
            )
        )
    return found


def _restore_parts(rel: str, keys: tuple[str, ...], old: bytes, new: bytes) -> bytes | None:
    """``new`` with the parts ``keys`` names as they are in ``old``, decided
    by the parsed values, never by the text (None: either file cannot be
    parsed, which counts as a change: take all of ``old``)."""
    old_text, new_text = text_of(old), text_of(new)
    if old_text is None or new_text is None:
        return None
    if rel.endswith(".json"):
        return _json_parts(keys, old_text, new_text)
    if rel.endswith(".toml"):
        return _toml_parts(keys, old_text, new_text)
    return None


def _json_parts(keys: tuple[str, ...], old: str, new: str) -> bytes | None:
    try:
        before, now = json.loads(old), json.loads(new)
    except ValueError:
        return None
    if not isinstance(before, dict) or not isinstance(now, dict):
        return None
    if all(before.get(k) == now.get(k) for k in keys):
        return new.encode("utf-8")
    merged = {k: v for k, v in now.items() if k not in keys}
    merged.update({k: before[k] for k in keys if k in before})
    return (json.dumps(merged, indent=2) + "\n").encode("utf-8")


_TOML_HEADER = lazy_compile(r"^\s*\[\[?\s*(?P<name>[\w.\-\"' ]+?)\s*\]\]?\s*(?:#.*)?$")


def _toml_parts(keys: tuple[str, ...], old: str, new: str) -> bytes | None:
    """``new`` when the parsed values ``keys`` name are the same in both
    (None: either is no TOML); else ``new``'s sections outside ``keys`` then
    ``old``'s inside them, when that text parses to ``old``'s protected values
    and ``new``'s others, or else all of ``old`` (a table behind an escaped
    or dotted key, a header inside a string: the text is not split by meaning)."""
    before, now = _toml(old), _toml(new)
    if before is None or now is None:
        return None
    if all(_dig(before, key) == _dig(now, key) for key in keys):
        return new.encode("utf-8")

    def protected(name: str) -> bool:
        bare = name.replace('"', "").replace("'", "").replace(" ", "")
        return any(bare == key or bare.startswith(f"{key}.") for key in keys)

    kept = [text for name, text in _toml_sections(new) if not protected(name)]
    body = "".join(kept)
    if body and not body.endswith("\n"):
        body += "\n"
    spliced = body + "".join(text for name, text in _toml_sections(old) if protected(name))
    merged = _toml(spliced)
    if (
        merged is not None
        and all(_dig(merged, key) == _dig(before, key) for key in keys)
        and _without(merged, keys) == _without(now, keys)
    ):
        return spliced.encode("utf-8")
    return old.encode("utf-8")


def _toml(text: str) -> dict | None:
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None


_MISSING = object()


def _dig(doc: dict, key: str) -> object:
    """The value at the dotted ``key`` of a parsed document (a sentinel when absent)."""
    value: object = doc
    for part in key.split("."):
        if not isinstance(value, dict) or part not in value:
            return _MISSING
        value = value[part]
    return value


def _without(doc: dict, keys: tuple[str, ...]) -> dict:
    """A copy of ``doc`` without the values at the dotted ``keys``."""
    copy = json.loads(json.dumps(doc, default=str))
    for key in keys:
        *parents, last = key.split(".")
        table = copy
        for part in parents:
            table = table.get(part) if isinstance(table, dict) else None
        if isinstance(table, dict):
            table.pop(last, None)
    return copy


def _toml_sections(text: str) -> list[tuple[str, str]]:
    """(table name, its text with its header) in order; the keys before the
    first header are the table ``""``."""
    sections: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines(keepends=True):
        header = _TOML_HEADER.match(line)
        if header:
            sections.append((header.group("name"), []))
        sections[-1][1].append(line)
    return [(name, "".join(lines)) for name, lines in sections if lines]
