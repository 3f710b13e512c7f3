"""The plan repo of PROTOCOL.md: step plans, handoffs and NOTES.md.

Reading is lenient: a file that cannot be used becomes one line in
:attr:`PlanRepo.problems` instead of an exception, so ``stepkit status`` can
show everything it could read.  Writing is strict: :func:`set_status` and
:func:`append_edge_case` add or change only what they must, keep every other
byte, and replace the file atomically.
"""

from __future__ import annotations

import functools
import os
import re
from bisect import bisect_left
from pathlib import Path
from typing import Any

import frontmatter
import yaml
from pydantic import BaseModel, ConfigDict, Field

from stepkit.errors import PlanError
from stepkit.planrepo.checks import (
    STATUSES,
    check_depends_on,
    check_status,
    check_step_key,
    graph_problems,
)
from stepkit.workspace.files import atomic_write

_YAML = frontmatter.YAMLHandler()
_LEADING_NUMBER = re.compile(r"([0-9]+)[-_. ]*(.*)\Z", re.DOTALL)
_STEP_WORD = re.compile(r"(?<![\w-])step[ \t]+#?([0-9]+)\b", re.IGNORECASE)
_LINES = re.compile(r"[^\n]*\n|[^\n]+\Z")
_DASHES = re.compile(r"-{3,}\s*\Z")
_STATUS_LINE = re.compile(
    r"(?P<key>status[ \t]*:[ \t]*)"
    r"(?P<value>\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\n]|'')*'|[^#\r\n]*?)"
    r"(?P<rest>[ \t]*(?:#[^\r\n]*)?\r?\n?)\Z"
)
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*\Z")
_BULLET = re.compile(r"[ \t]*([-*+])[ \t]+(.*)\Z")
_SIMPLE_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*):(.*)\Z")
_SIMPLE_ITEM = re.compile(r"( *)- +(0|[1-9][0-9]*)(?:[ \t]+#.*)?[ \t]*\Z")
_QUOTED = re.compile(r"(?:\"([^\"\\]*)\"|'([^']*)')(?:[ \t]+#.*)?\Z")
_COMMENT = re.compile(r"[ \t]#")
_DECIMAL = re.compile(r"(?:0|[1-9][0-9]*)\Z")
# Anything but printable characters that YAML does not treat as line breaks
_NOT_PLAIN = re.compile("[^\t\n\r\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd"
                        "\U00010000-\U0010ffff]")
_INDICATORS = frozenset("-?:,[]{}#&*!|>'\"%@`")
_RESOLVER = yaml.resolver.Resolver()
_STR_TAG = "tag:yaml.org,2002:str"
_NOT_SIMPLE = object()


class StepPlan(BaseModel):
    """One ``steps/NN-<slug>.md`` file."""

    model_config = ConfigDict(frozen=True)

    number: int
    slug: str
    title: str
    status: str = "pending"
    depends_on: list[int] = Field(default_factory=list)
    path: Path
    body: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class Handoff(BaseModel):
    """One ``handoffs/NN-<slug>.md`` file; ``result`` is lower-cased, None if absent."""

    model_config = ConfigDict(frozen=True)

    step: int
    title: str | None = None
    result: str | None = None
    path: Path
    body: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)


class DocumentError(ValueError):
    """A markdown file's frontmatter cannot be read; the message is one line."""


def parse_document(text: str) -> tuple[dict[str, Any], str]:
    """Split markdown text into its YAML frontmatter mapping and its body.

    Uses python-frontmatter's YAML handler (libyaml's CSafeLoader when
    available).  Text without frontmatter gives ``({}, text)``.  Raises
    :class:`DocumentError` with a one-line reason when the frontmatter is
    malformed.
    """
    text = text.removeprefix("\ufeff")
    stripped = text.strip()
    if not _YAML.detect(stripped):
        return {}, stripped
    try:
        block, body = _YAML.split(stripped)
    except ValueError:
        raise DocumentError("malformed frontmatter: no closing '---' line") from None
    try:
        data = _simple_mapping(block)
        if data is None:
            data = _YAML.load(block)
    except yaml.MarkedYAMLError as exc:
        skipped = text[: len(text) - len(text.lstrip())].count("\n")
        line = exc.problem_mark.line + 1 + skipped if exc.problem_mark else None
        where = f" (line {line})" if line else ""
        raise DocumentError(f"malformed frontmatter: {exc.problem or exc.context}{where}") from None
    except Exception as exc:  # noqa: BLE001 - e.g. "date: 2024-13-01" raises ValueError inside the loader
        raise DocumentError(f"malformed frontmatter: {type(exc).__name__}: {exc}".splitlines()[0]) from None
    if data is None:
        return {}, body.strip()
    if not isinstance(data, dict):
        raise DocumentError(f"malformed frontmatter: a YAML {type(data).__name__}, not a mapping")
    return {str(key): value for key, value in data.items()}, body.strip()


def _simple_mapping(block: str) -> dict[str, Any] | None:
    """Read the common frontmatter shape without building a YAML node tree.

    Handles ``key: value`` lines whose values are plain or simply quoted
    strings, decimal integers, and flow or block lists of decimal integers,
    with comments and blank lines; returns None for anything else, which then
    goes to the YAML loader.  Plain scalars are typed by PyYAML's own
    resolver, so the answer is what ``yaml.safe_load`` gives.  Worth it
    because the loader's Python-level constructor dominates ``stepkit
    status`` on repos of thousands of steps.
    """
    if _NOT_PLAIN.search(block):
        return None
    data: dict[str, Any] = {}
    list_key = None  # the key with an empty value whose block list may follow
    indent = None
    for raw in block.split("\n"):
        line = raw.removesuffix("\r")
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        item = _SIMPLE_ITEM.match(line) if list_key is not None else None
        if item and indent in (None, item.group(1)):
            indent = item.group(1)
            if data[list_key] is None:
                data[list_key] = []
            data[list_key].append(int(item.group(2)))
            continue
        key_match = _SIMPLE_KEY.match(line)
        if key_match is None or "\r" in line or not _is_str(key_match.group(1)):
            return None
        key, rest = key_match.groups()
        if rest and rest[0] not in " \t":
            return None
        value = _simple_value(rest.strip(" \t"))
        if value is _NOT_SIMPLE:
            return None
        data[key] = value
        list_key, indent = (key, None) if value is None else (None, None)
    return data


def _simple_value(text: str) -> Any:
    """The value of one ``key: text`` line, or _NOT_SIMPLE."""
    if not text or text[0] == "#":
        return None
    if text[0] in "'\"":
        quoted = _QUOTED.match(text)
        if quoted is None:
            return _NOT_SIMPLE
        return quoted.group(1) if quoted.group(1) is not None else quoted.group(2)
    comment = _COMMENT.search(text)
    if comment:
        text = text[: comment.start()].rstrip(" \t")
    if text[0] == "[" and text[-1] == "]":
        pieces = [p.strip(" \t") for p in text[1:-1].split(",")]
        if len(pieces) > 1 and not pieces[-1]:
            pieces.pop()  # a trailing comma
        if pieces == [""]:
            return []
        if all(_DECIMAL.match(p) for p in pieces):
            return [int(p) for p in pieces]
        return _NOT_SIMPLE
    if text[0] in _INDICATORS or ": " in text or text.endswith(":") or "#" in text:
        return _NOT_SIMPLE
    if _plain_tag(text) == _STR_TAG:
        return text
    if _DECIMAL.match(text):
        return int(text)
    return _NOT_SIMPLE


def _is_str(key: str) -> bool:
    return _plain_tag(key) == _STR_TAG


@functools.lru_cache(maxsize=4096)
def _plain_tag(text: str) -> str:
    """The YAML tag PyYAML's resolver gives an unquoted scalar."""
    return _RESOLVER.resolve(yaml.ScalarNode, text, (True, False))


def resolve_plans_dir(project_dir: Path | str, plans_dir: Path | str | None,
                      default: str = "plans") -> Path:
    """The plan repo path: ``plans_dir`` (else ``default``) relative to the project dir."""
    return Path(project_dir) / (plans_dir or default)


class PlanRepo:
    """A loaded plan repo.  Build it with :meth:`PlanRepo.load`."""

    def __init__(self, plans_dir: Path, steps: list[StepPlan], handoffs: dict[int, Handoff],
                 problems: list[str], unreadable: set[int]) -> None:
        self.plans_dir = plans_dir
        self.steps = steps
        self.handoffs = handoffs
        self.problems = problems
        self._by_number: dict[int, StepPlan] = {}
        for step in steps:
            self._by_number.setdefault(step.number, step)
        self._handoff_numbers = sorted(handoffs)
        self._unreadable = unreadable

    @property
    def steps_dir(self) -> Path:
        return self.plans_dir / "steps"

    @property
    def handoffs_dir(self) -> Path:
        return self.plans_dir / "handoffs"

    @property
    def notes_path(self) -> Path:
        return self.plans_dir / "NOTES.md"

    @property
    def notes_text(self) -> str:
        """NOTES.md as text ("" when it does not exist or cannot be read)."""
        try:
            return self.notes_path.read_bytes().decode("utf-8", errors="replace")
        except OSError:
            return ""

    @classmethod
    def load(cls, plans_dir: Path | str) -> PlanRepo:
        """Read every step plan and handoff under ``plans_dir``.

        Raises :class:`PlanError` only when there is no plan repo at all (no
        such directory, or no ``steps/`` inside it); every problem with a
        single file is listed in :attr:`problems` instead.
        """
        plans_dir = Path(plans_dir)
        steps_dir = plans_dir / "steps"
        if not steps_dir.is_dir():
            raise PlanError(f"no plan repo at {plans_dir} (expected {steps_dir}/)")
        problems: list[str] = []
        steps: list[StepPlan] = []
        unreadable: set[int] = set()
        for number, slug, path in _numbered_files(steps_dir, problems):
            document = _read_document(path, problems)
            if document is None:
                unreadable.add(number)
                continue
            metadata, body = document
            steps.append(_step_plan(number, slug, path, metadata, body, problems))
        steps.sort(key=lambda s: (s.number, s.path.name))
        problems.extend(graph_problems(steps, unreadable))
        handoffs = _load_handoffs(plans_dir / "handoffs", steps, problems)
        return cls(plans_dir, steps, handoffs, problems, unreadable)

    def step(self, number: int) -> StepPlan | None:
        """The plan of step ``number`` (the first by file name if it is duplicated)."""
        return self._by_number.get(number)

    def next_step(self) -> StepPlan | None:
        """The first in-progress step by number, else the first pending one."""
        for wanted in ("in-progress", "pending"):
            for step in self.steps:
                if step.status == wanted:
                    return step
        return None

    def unsatisfied(self, step: StepPlan) -> list[str]:
        """One line per dependency of ``step`` without a ``result: complete`` handoff."""
        reasons = []
        for dep in step.depends_on:
            handoff = self.handoffs.get(dep)
            if handoff is not None and handoff.result == "complete":
                continue
            plan = self._by_number.get(dep)
            name = f"step {dep} ({plan.title})" if plan else f"step {dep}"
            if handoff is None and plan is None:
                missing = "plan unreadable" if dep in self._unreadable else "no such step"
                reasons.append(f"{name}: {missing}, no handoff")
            elif handoff is None:
                reasons.append(f"{name}: no handoff")
            elif handoff.result is None:
                reasons.append(f"{name}: handoff {handoff.path.name} has no result")
            else:
                reasons.append(f"{name}: result is {handoff.result}")
        return reasons

    def previous_handoff(self, step: StepPlan) -> Handoff | None:
        """The highest-numbered handoff below ``step``."""
        below = bisect_left(self._handoff_numbers, step.number)
        return self.handoffs[self._handoff_numbers[below - 1]] if below else None

    def handoff_path(self, step: StepPlan) -> Path:
        """Where ``step``'s handoff belongs: ``handoffs/`` + the plan's basename."""
        return self.handoffs_dir / step.path.name


def _numbered_files(directory: Path, problems: list[str]) -> list[tuple[int, str, Path]]:
    """``(number, slug, path)`` of every visible ``*.md`` file in ``directory``.

    A dangling symlink counts as a file, so that it is reported as unreadable.
    """
    try:
        entries = sorted((e.name, e.is_file() or (e.is_symlink() and not os.path.exists(e.path)))
                         for e in os.scandir(directory))
    except OSError as exc:
        raise PlanError(f"cannot read {directory}: {exc.strerror or exc}") from None
    found = []
    for name, is_file in entries:
        if name.startswith(".") or not name.lower().endswith(".md") or not is_file:
            continue
        path = directory / name
        match = _LEADING_NUMBER.match(name[:-3])
        if match is None:
            problems.append(f"{path}: file name does not start with a step number "
                            "(expected NN-<slug>.md)")
            continue
        found.append((int(match.group(1)), match.group(2) or name[:-3], path))
    return found


def _read_document(path: Path, problems: list[str]) -> tuple[dict[str, Any], str] | None:
    """Parse one file, or record why it cannot be used and return None."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        problems.append(f"{path}: unreadable: {exc.strerror or exc}")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        problems.append(f"{path}: not UTF-8 (byte 0x{data[exc.start]:02x} on line {line})")
        return None
    try:
        return parse_document(text)
    except DocumentError as exc:
        problems.append(f"{path}: {exc}")
        return None


def _step_plan(number: int, slug: str, path: Path, metadata: dict[str, Any], body: str,
               problems: list[str]) -> StepPlan:
    status, status_problem = check_status(metadata.get("status"))
    depends_on, deps_problem = check_depends_on(metadata.get("depends_on"))
    step_problem = check_step_key(metadata.get("step"), number)
    problems.extend(f"{path}: {p}" for p in (status_problem, deps_problem, step_problem) if p)
    title = metadata.get("title")
    title = " ".join(str(title).split()) if title is not None else ""
    return StepPlan.model_construct(number=number, slug=slug, title=title or slug, status=status,
                                    depends_on=depends_on, path=path, body=body,
                                    metadata=metadata)


def _load_handoffs(directory: Path, steps: list[StepPlan], problems: list[str]) -> dict[int, Handoff]:
    """Handoffs by step number; for duplicates, the one named like the plan wins."""
    if not directory.is_dir():
        return {}
    plan_names = {step.number: step.path.name for step in steps}
    handoffs: dict[int, Handoff] = {}
    for number, _slug, path in _numbered_files(directory, problems):
        document = _read_document(path, problems)
        if document is None:
            continue
        metadata, body = document
        result = metadata.get("result")
        title = metadata.get("title")
        handoff = Handoff.model_construct(
            step=number, title=None if title is None else str(title),
            result=None if result is None else str(result).strip().lower(),
            path=path, body=body, metadata=metadata)
        if number in handoffs:
            kept = handoffs[number]
            problems.append(f"{path}: duplicate handoff for step {number} (also {kept.path})")
            if path.name != plan_names.get(number) or kept.path.name == plan_names.get(number):
                continue
        handoffs[number] = handoff
    return handoffs


def step_from_prompt(text: str) -> int | None:
    """The step a prompt names ("execute step 3", "Step 12"), or None.

    "steps 3" and "step-by-step" name no step.
    """
    match = _STEP_WORD.search(text or "")
    return int(match.group(1)) if match else None


def plan_section(body: str, name: str) -> str | None:
    """The text under the ``## <name>`` heading of a markdown body (any level
    from 2 down, case-insensitive), up to the next heading of the same or a
    higher level; None when there is no such heading.  Headings inside fenced
    code blocks do not count.
    """
    lines = _split_lines(body)
    span = _section_span(lines, 0, name)
    if span is None:
        return None
    start, end = span
    return "".join(lines[start + 1:end]).strip()


def set_status(path: Path | str, status: str) -> None:
    """Set the ``status:`` value in a plan's frontmatter, changing nothing else.

    Only the value on the ``status:`` line changes (its quoting and any
    trailing comment stay); without such a line, ``status: <status>`` is
    added just before the closing ``---`` (or a frontmatter block is added
    when the file has none), using the file's own newline style.  The result
    is re-parsed before it is written atomically, so a file this cannot edit
    safely raises :class:`PlanError` and stays as it was.
    """
    if status not in STATUSES:
        raise ValueError(f"status must be one of {', '.join(STATUSES)}, not {status!r}")
    path = Path(path)
    text = _read_text(path, "set the status of")
    try:
        old_metadata, _ = parse_document(text)
    except DocumentError as exc:
        raise PlanError(f"{path}: cannot set the status: {exc}") from None
    bom, content = ("\ufeff", text[1:]) if text.startswith("\ufeff") else ("", text)
    lines = _split_lines(content)
    newline = _newline_of(content)
    span = _frontmatter_span(lines)
    if span is None:
        new_text = f"{bom}---{newline}status: {status}{newline}---{newline}{content}"
    else:
        opening, closing = span
        found = [i for i in range(opening + 1, closing) if _STATUS_LINE.match(lines[i])]
        if found:
            lines[found[-1]] = _with_status_value(lines[found[-1]], status)
        elif "status" in old_metadata:
            raise PlanError(f"{path}: cannot find a plain 'status:' line in the frontmatter")
        else:
            lines.insert(closing, f"status: {status}{newline}")
        new_text = bom + "".join(lines)
    try:
        new_metadata, _ = parse_document(new_text)
    except DocumentError:
        new_metadata = None
    if new_metadata != {**old_metadata, "status": status}:
        raise PlanError(f"{path}: cannot set the status safely (unusual 'status:' line); "
                        "file left unchanged")
    if new_text != text:
        _write_atomic(path, new_text.encode("utf-8"))


def append_edge_case(path: Path | str, text: str) -> bool:
    """Add ``- <text>`` as the last bullet of the plan's Edge cases section.

    The text is made one line (whitespace collapsed).  The section is created
    as ``## Edge cases`` at the end of the file when missing.  Returns False
    and changes nothing when an identical bullet is already there.  Every
    other byte of the file is kept; the write is atomic.
    """
    item = " ".join(text.split())
    bullet = _BULLET.match(item)
    if bullet:
        item = bullet.group(2)
    if not item:
        raise ValueError("an edge case needs some text")
    path = Path(path)
    content = _read_text(path, "add an edge case to")
    lines = _split_lines(content)
    newline = _newline_of(content)
    frontmatter_span = _frontmatter_span(lines)
    body_start = frontmatter_span[1] + 1 if frontmatter_span else 0
    span = _section_span(lines, body_start, "Edge cases")
    if span is None:
        tail = "" if not content or content.endswith("\n") else newline
        if content.strip() and not content.endswith(("\n\n", "\r\n\r\n")):
            tail += newline
        new_text = f"{content}{tail}## Edge cases{newline}{newline}- {item}{newline}"
    else:
        start, end = span
        marker, last = "-", start
        for i in range(start + 1, end):
            if lines[i].strip():
                last = i
            found = _BULLET.match(lines[i].rstrip("\r\n"))
            if found:
                marker = found.group(1)
        if item in _bullet_texts(lines[start + 1:end]):
            return False
        if lines[last].endswith("\n"):
            lines.insert(last + 1, f"{marker} {item}{newline}")
        else:  # the section ends the file without a final newline: keep it that way
            lines[last] += f"{newline}{marker} {item}"
        new_text = "".join(lines)
    _write_atomic(path, new_text.encode("utf-8"))
    return True


def _split_lines(text: str) -> list[str]:
    """Lines with their endings, split on "\\n" only (as the frontmatter parser does)."""
    return _LINES.findall(text)


def _newline_of(text: str) -> str:
    end = text.find("\n")
    return "\r\n" if end > 0 and text[end - 1] == "\r" else "\n"


def _frontmatter_span(lines: list[str]) -> tuple[int, int] | None:
    """Indexes of the opening and closing ``---`` lines, found the way
    python-frontmatter finds them (leading blank lines skipped)."""
    first = 0
    while first < len(lines) and not lines[first].strip():
        first += 1
    if first == len(lines) or not _DASHES.match(lines[first].strip()):
        return None
    for i in range(first + 1, len(lines)):
        if _DASHES.match(lines[i]):
            return first, i
    return None


def _with_status_value(line: str, status: str) -> str:
    match = _STATUS_LINE.match(line)
    assert match is not None
    key, value, rest = match.group("key", "value", "rest")
    if value[:1] in ("'", '"'):
        status = value[0] + status + value[0]
    if not key[-1].isspace():
        key += " "
    return f"{key}{status}{rest}"


def track_fence(line: str, fence: str | None) -> str | None:
    """Follow markdown code fences line by line: the marker of the fence open
    after ``line`` (``fence`` is the one open before it), or None."""
    match = _FENCE.match(line)
    if not match:
        return fence
    marker = match.group(1)
    if fence is None:
        return marker
    if marker[0] == fence[0] and len(marker) >= len(fence) and not line[match.end():].strip():
        return None
    return fence


def _section_span(lines: list[str], start: int, name: str) -> tuple[int, int] | None:
    """(heading index, end index) of the first section called ``name``."""
    wanted = " ".join(name.split()).lower()
    fence: str | None = None
    section: tuple[int, int] | None = None
    for i in range(start, len(lines)):
        line = lines[i].rstrip("\r\n")
        was_in_fence = fence is not None
        fence = track_fence(line, fence)
        if was_in_fence or fence is not None:
            continue
        heading = _HEADING.match(line)
        if heading is None:
            continue
        level = len(heading.group(1))
        if section is not None:
            if level <= section[1]:
                return section[0], i
            continue
        title = " ".join((heading.group(2) or "").split()).rstrip(":").strip().lower()
        if level >= 2 and title == wanted:
            section = (i, level)
    return (section[0], len(lines)) if section else None


def _bullet_texts(lines: list[str]) -> set[str]:
    """The whitespace-normalised text of each bullet (continuation lines included)."""
    texts: list[str] = []
    for line in lines:
        found = _BULLET.match(line.rstrip("\r\n"))
        if found:
            texts.append(found.group(2))
        elif texts and line.strip() and line[:1] in (" ", "\t"):
            texts[-1] += " " + line.strip()
    return {" ".join(t.split()) for t in texts}


def _read_text(path: Path, action: str) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise PlanError(f"{path}: cannot {action} it: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise PlanError(f"{path}: cannot {action} it: not UTF-8") from None


def _write_atomic(path: Path, data: bytes) -> None:
    """:func:`stepkit.workspace.files.atomic_write`, its errors as one-line PlanErrors."""
    try:
        atomic_write(path, data)
    except OSError as exc:
        raise PlanError(f"{path}: cannot write: {exc.strerror or exc}") from None