"""The model-facing tools (their names and arguments are fixed: prompts and engines rely on them).

``read_file{path, offset?, limit?}``, ``list_dir{path}``, ``search{pattern,
path?}``, ``run_command{command, timeout?}`` for every node;
``write_file{path, content}`` and ``edit_file{path, old_text, new_text}``
for the coder as well.  Each tool's arguments are a pydantic model whose
field descriptions are what the model reads (:data:`ARGUMENTS`).

Every path resolves inside the project directory with symlinks resolved;
an escape, a write into a forbidden directory (the plan repo, ``.git``,
stepkit's run store), a bad argument or a failing command come back as a tool
error the model reads (text starting with ``error:``), never as an
exception.  Output is bounded so the model can page through it: read_file
returns a window of whole lines and says how to go on, search stops at
:data:`SEARCH_MATCHES` matches and run_command keeps the head and tail of
its output, each with a hint for narrowing.  All output is redacted
(:func:`stepkit.workspace.redact.redact`), and nothing passes
:data:`MAX_OUTPUT_CHARS`.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import os
import re
import tomllib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stepkit.workspace import process
from stepkit.workspace.evidence import clip_middle
from stepkit.workspace.redact import redact
from stepkit.workspace.scope import EXCLUDED_DIRS, walk_files
from stepkit.workspace.store import STORE_NAME, store_dir

# The bounds of every tool's output, in one place.
MAX_OUTPUT_CHARS = 16_000
READ_WINDOW_LINES = 400
READ_WINDOW_CHARS = 12_000
READ_MAX_LINES = 2_000
LINE_CHARS = 2_000
SEARCH_MATCHES = 100
SEARCH_LINE_CHARS = 300
COMMAND_OUTPUT_CHARS = 12_000
ERROR_PREFIX = "error: "
_LIST_LIMIT = 1000
_SEARCH_MAX_FILE_BYTES = 2_000_000
_COMMAND_TIMEOUT_S = 120
_COMMAND_MAX_TIMEOUT_S = 600
_HIDDEN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")
EDIT_CONTEXT_LINES = 3


class ToolError(Exception):
    """A failure the model should read and can react to."""


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class ReadFileArgs(_Args):
    path: str = Field(description="file path, relative to the project root")
    offset: int = Field(1, ge=1, description="first line to return (1-based); default 1")
    limit: int = Field(
        READ_WINDOW_LINES,
        ge=1,
        le=READ_MAX_LINES,
        description=f"most lines to return; default {READ_WINDOW_LINES}",
    )


class ListDirArgs(_Args):
    path: str = Field(description='directory path, relative to the project root ("." for it)')


class SearchArgs(_Args):
    pattern: str = Field(description="a Python regular expression, matched line by line")
    path: str = Field(".", description="file or directory to search; default the project root")


class RunCommandArgs(_Args):
    command: str = Field(description="a shell command, run in the project root")
    timeout: int = Field(
        _COMMAND_TIMEOUT_S,
        ge=1,
        le=_COMMAND_MAX_TIMEOUT_S,
        description=f"seconds before the command is killed; default "
        f"{_COMMAND_TIMEOUT_S}, at most {_COMMAND_MAX_TIMEOUT_S}",
    )


class WriteFileArgs(_Args):
    path: str = Field(description="file path, relative to the project root")
    content: str = Field(description="the whole new content of the file")


class EditFileArgs(_Args):
    path: str = Field(description="file path, relative to the project root")
    old_text: str = Field(description="text that occurs exactly once in the file")
    new_text: str = Field(description="the text that replaces it")


#: Each tool's argument model.
ARGUMENTS: dict[str, type[_Args]] = {
    "read_file": ReadFileArgs,
    "list_dir": ListDirArgs,
    "search": SearchArgs,
    "run_command": RunCommandArgs,
    "write_file": WriteFileArgs,
    "edit_file": EditFileArgs,
}


@dataclass(frozen=True)
class Tool:
    """One tool: what the model sees (name, description, input_schema) and
    the handler that runs it.

    A tool with ``refused`` set is one the asking node may not use: its
    definition is still sent (so nodes with different rights share one
    cached prefix) and every call is answered with that reason as an error,
    by the harness, never run."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Callable[[dict[str, Any]], str]
    refused: str = ""

    def call(self, args: dict[str, Any]) -> tuple[str, bool]:
        """Run the tool; return ``(text, is_error)``.  Never raises for a bad
        call: the error is text for the model."""
        if self.refused:
            return f"{ERROR_PREFIX}{self.refused}", True
        try:
            parsed = _parse(self.name, args)
            text, is_error = self.handler(parsed), False
        except ToolError as exc:
            text, is_error = f"{ERROR_PREFIX}{exc}", True
        except (OSError, ValueError) as exc:
            text, is_error = f"{ERROR_PREFIX}{type(exc).__name__}: {exc}", True
        return clip_middle(redact(text), MAX_OUTPUT_CHARS), is_error

    def to_param(self) -> dict[str, Any]:
        """The tool definition in the Messages API shape."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def read_only_tools(project_dir: Path) -> list[Tool]:
    """``read_file``, ``list_dir``, ``search``, ``run_command`` on ``project_dir``."""
    return _read_only(_Workspace(project_dir, ()))


def coder_tools(
    project_dir: Path, forbidden_dirs: Iterable[Path] = (), seen: dict[str, str] | None = None
) -> list[Tool]:
    """The read-only tools plus ``write_file`` and ``edit_file``; writes under
    ``forbidden_dirs`` (the plan repo), ``.git`` and the run store are refused.
    All six share one workspace, so a write knows what the model last read.

    :param seen: what the model has seen of each file in its conversation
        (project-relative path → digest), updated in place: a caller whose
        conversation outlives one tool list (the built-in coder's rounds)
        passes the same dict, or a dict it kept, to every list."""
    ws = _Workspace(project_dir, forbidden_dirs, seen)
    return _read_only(ws) + [
        _tool("write_file", _WRITE_DOC, ws.write_file),
        _tool("edit_file", _EDIT_DOC, ws.edit_file),
    ]


def _read_only(ws: _Workspace) -> list[Tool]:
    return [
        _tool("read_file", _READ_DOC, ws.read_file),
        _tool("list_dir", _LIST_DOC, ws.list_dir),
        _tool("search", _SEARCH_DOC, ws.search),
        _tool("run_command", _RUN_DOC, ws.run_command),
    ]


def _tool(name: str, doc: str, handler: Callable[[dict[str, Any]], str]) -> Tool:
    return Tool(name, doc, input_schema(ARGUMENTS[name]), handler)


def input_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of an argument model as the API takes it: its
    properties (type, description, bounds, default) and the required ones."""
    schema = model.model_json_schema()
    properties = {
        name: {k: v for k, v in prop.items() if k != "title"}
        for name, prop in schema["properties"].items()
    }
    return {"type": "object", "properties": properties, "required": schema.get("required", [])}


_READ_ONLY_RULE = "Read-only: it never changes a file. "
_READ_DOC = (
    f"{_READ_ONLY_RULE}Read a text file of the project as numbered lines, a window at a time: "
    f"from line `offset` (default 1), at most `limit` lines (default {READ_WINDOW_LINES}) and "
    f"about {READ_WINDOW_CHARS:,} characters, always whole lines (a line over {LINE_CHARS:,} "
    "characters is cut). The last line says which lines you got and the `offset` to continue "
    "with, or that the file ends there."
)
_LIST_DOC = (
    f"{_READ_ONLY_RULE}List a directory of the project (at most {_LIST_LIMIT} entries); "
    "sub-directories end with '/'."
)
_SEARCH_DOC = (
    f"{_READ_ONLY_RULE}Search the project's text files for a Python regular expression, line by "
    f"line; `path` (a file or directory) narrows it. Returns `path:line: text` (lines cut at "
    f"{SEARCH_LINE_CHARS} characters), at most {SEARCH_MATCHES} matches or about "
    f"{READ_WINDOW_CHARS:,} characters: when it stops it says so; narrow the pattern or the path. "
    f"Files over 2 MB and .git, {STORE_NAME} and "
    "dependency directories are skipped."
)
_RUN_DOC = (
    "Run a shell command in the project directory (a test run, a build, a grep) and return its "
    f"exit code and combined output. `timeout` in seconds (default {_COMMAND_TIMEOUT_S}, at most "
    f"{_COMMAND_MAX_TIMEOUT_S}). Output over {COMMAND_OUTPUT_CHARS:,} characters keeps its head and "
    "tail and says how much was left out: rerun with a filter (grep, tail, head) to see a part. "
    "In a read-only stage, run only commands that change nothing."
)
_STALE_RULE = (
    "A change to an existing file you have not read with read_file in this "
    "conversation, or that changed since you last read or wrote it, is refused: read it "
    "first. Python, JSON, YAML and TOML files are syntax-checked after the change."
)
_WRITE_DOC = (
    "Create or overwrite a file of the project with `content` (the plan repo is "
    f"read-only; a new file needs no read). {_STALE_RULE}"
)
_EDIT_DOC = (
    "Replace `old_text`, which must occur exactly once in the file, with `new_text`. "
    "Include enough surrounding lines to make `old_text` unique; copy it without the line-number "
    "prefix read_file shows. On success the edited lines come back numbered; on a miss, the "
    f"closest lines of the file. {_STALE_RULE}"
)


def _parse(name: str, args: Any) -> dict[str, Any]:
    """``args`` checked by the tool's argument model, defaults filled in."""
    if not isinstance(args, dict):
        raise ToolError("arguments must be an object")
    given = {key: value for key, value in args.items() if value is not None}  # null: not given
    try:
        return ARGUMENTS[name].model_validate(given).model_dump()
    except ValidationError as exc:
        raise ToolError(_describe(exc)) from None


def _describe(exc: ValidationError) -> str:
    missing = [str(e["loc"][0]) for e in exc.errors() if e["type"] == "missing"]
    if missing:
        return f"missing argument(s): {', '.join(missing)}"
    error = exc.errors()[0]
    name = ".".join(map(str, error["loc"])) or "arguments"
    if error["type"] == "extra_forbidden":
        return f"unknown argument {name}"
    if error["type"] in ("string_type", "int_type"):
        return f"argument {name} must be {'a string' if error['type'] == 'string_type' else 'an integer'}"
    return f"argument {name}: {error['msg']}"


class _Workspace:
    """Path confinement and the tool handlers for one project directory."""

    def __init__(
        self, project_dir: Path, forbidden_dirs: Iterable[Path], seen: dict[str, str] | None = None
    ):
        self.root = Path(project_dir).resolve()
        self.forbidden = [Path(d).resolve() for d in forbidden_dirs]
        self.forbidden += [self.root / ".git", self.root / STORE_NAME, store_dir(self.root)]
        # what the model last saw of each file (read or written by it), by
        # project-relative path: a file it never saw, or one changed behind
        # its back, refuses its next write to that file
        self.seen: dict[str, str] = seen if seen is not None else {}

    def _resolve(self, path: str) -> Path:
        raw = Path(path)
        full = (raw if raw.is_absolute() else self.root / raw).resolve()
        if not full.is_relative_to(self.root):
            raise ToolError(f"{path}: outside the project directory (refused)")
        return full

    def _writable(self, path: str) -> Path:
        full = self._resolve(path)
        for banned in self.forbidden:
            if full.is_relative_to(banned):
                raise ToolError(f"{path}: writing under {self._show(banned)}/ is not allowed")
        return full

    def _show(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix() if path != self.root else "."

    def read_file(self, args: dict[str, Any]) -> str:
        full = self._resolve(args["path"])
        if not full.is_file():
            raise ToolError(f"{args['path']}: no such file")
        data = full.read_bytes()
        self.seen[self._show(full)] = _digest(
            data
        )  # a binary file too: the model was told what it is
        lines = _decode(full, data).splitlines()
        offset, limit = args["offset"], args["limit"]
        if not lines:
            return f"[{args['path']}: empty file]"
        if offset > len(lines):
            return f"[{args['path']}: no line {offset}; the file has {len(lines):,} lines]"
        out: list[str] = []
        size, last = 0, offset - 1
        for number in range(offset, min(offset - 1 + limit, len(lines)) + 1):
            line = lines[number - 1]
            shown = line if len(line) <= LINE_CHARS else f"{line[:LINE_CHARS]} [line cut]"
            row = f"{number:6}\t{shown}"
            if out and size + len(row) + 1 > READ_WINDOW_CHARS:
                break
            out.append(row)
            size += len(row) + 1
            last = number
        if last < len(lines):
            out.append(
                f"[lines {offset:,}–{last:,} of {len(lines):,}; continue with offset={last + 1}]"
            )
        elif offset > 1:
            out.append(f"[lines {offset:,}–{last:,} of {len(lines):,}; end of file]")
        return "\n".join(out)

    def list_dir(self, args: dict[str, Any]) -> str:
        full = self._resolve(args["path"])
        if not full.is_dir():
            raise ToolError(f"{args['path']}: not a directory")
        entries = sorted(full.iterdir(), key=lambda p: p.name)
        names = [p.name + ("/" if p.is_dir() else "") for p in entries[:_LIST_LIMIT]]
        if len(entries) > _LIST_LIMIT:
            names.append(f"[{len(entries) - _LIST_LIMIT} more entries]")
        return "\n".join(names) if names else "[empty directory]"

    def search(self, args: dict[str, Any]) -> str:
        try:
            regex = re.compile(args["pattern"])
        except re.error as exc:
            raise ToolError(f"bad regular expression: {exc}") from None
        start = self._resolve(args["path"] or ".")
        if not start.exists():
            raise ToolError(f"{args.get('path')}: no such file or directory")
        files = (
            [start]
            if start.is_file()
            else [start / rel for rel in walk_files(start, EXCLUDED_DIRS)]
        )
        hits: list[str] = []
        size, full = 0, False
        for path in files:
            for hit in self._search_file(path, regex, SEARCH_MATCHES + 1 - len(hits)):
                if len(hits) >= SEARCH_MATCHES or size + len(hit) > READ_WINDOW_CHARS:
                    full = True
                    break
                hits.append(hit)
                size += len(hit) + 1
            if full:
                hits.append(
                    f"[stopped at {len(hits)} matches; narrow the pattern or the path "
                    "to see the rest]"
                )
                break
        return "\n".join(hits) if hits else "[no matches]"

    def _search_file(self, path: Path, regex: re.Pattern[str], room: int) -> list[str]:
        try:
            # a symlink may point out of the project: its target is not read
            if not path.resolve().is_relative_to(self.root):
                return []
            if path.stat().st_size > _SEARCH_MAX_FILE_BYTES:
                return []
            text = _read_text(path)
        except (OSError, ToolError):
            return []
        rel = self._show(path)
        found = []
        for n, line in enumerate(text.splitlines(), start=1):
            if regex.search(line):
                found.append(f"{rel}:{n}: {line.strip()[:SEARCH_LINE_CHARS]}")
                if len(found) >= room:
                    break
        return found

    def run_command(self, args: dict[str, Any]) -> str:
        timeout = args["timeout"]
        env = {k: v for k, v in os.environ.items() if k not in _HIDDEN_ENV}
        result = process.run(args["command"], cwd=self.root, env=env, timeout=timeout)
        if result.start_error:
            raise ToolError(f"could not start the command: {result.start_error}")
        status = (
            f"{result.expired} (killed)" if result.expired else f"exit code: {result.exit_code}"
        )
        output = clip_middle(result.output, COMMAND_OUTPUT_CHARS)
        if output != result.output:
            output += (
                "\n[the output was cut: rerun the command with a filter (grep, tail -n, head -n) "
                "to see the part you need]\n"
            )
        return f"{status}\n{output}"

    def _refuse_unseen(self, path: str, full: Path) -> bytes | None:
        """Refuse a write to an existing file the model never read in its
        conversation, or one that changed since it last read or wrote it (by
        a command it ran, a formatter, another tool), or was deleted since.

        :return: the file's bytes as checked (None: there is no such file)."""
        seen = self.seen.get(self._show(full))
        if seen is None and full.is_file():
            raise ToolError(
                f"{path}: you have not read this file in this conversation; read_file "
                "it first, then make the change on what it holds"
            )
        data = full.read_bytes() if seen is not None and full.is_file() else None
        if seen is not None and (data is None or _digest(data) != seen):
            raise ToolError(
                f"{path}: the file changed since you last read it; read_file it "
                "again and redo the change on what it holds now"
            )
        return data

    def write_file(self, args: dict[str, Any]) -> str:
        full = self._writable(args["path"])
        if full.is_dir():
            raise ToolError(f"{args['path']}: is a directory")
        self._refuse_unseen(args["path"], full)  # a new file needs no read
        full.parent.mkdir(parents=True, exist_ok=True)
        data = args["content"].encode("utf-8")
        full.write_bytes(data)
        self.seen[self._show(full)] = _digest(data)
        return f"wrote {len(data)} bytes to {self._show(full)}" + _syntax_report(
            full, args["content"]
        )

    def edit_file(self, args: dict[str, Any]) -> str:
        full = self._writable(args["path"])
        if not full.is_file():
            raise ToolError(f"{args['path']}: no such file")
        text = _decode(full, self._refuse_unseen(args["path"], full) or b"", strict=True)
        old, new = args["old_text"], args["new_text"]
        count = text.count(old) if old else 0
        if count != 1:
            raise ToolError(_miss(args["path"], text, old, count))
        start = text.index(old)
        edited = text[:start] + new + text[start + len(old) :]
        data = edited.encode("utf-8")
        full.write_bytes(data)
        self.seen[self._show(full)] = _digest(data)
        first = text.count("\n", 0, start) + 1
        last = first + max(new.count("\n") - (1 if new.endswith("\n") else 0), 0)
        return (
            f"edited {self._show(full)}; lines {first}–{last} now read:\n"
            + _numbered(edited.splitlines(), first - EDIT_CONTEXT_LINES, last + EDIT_CONTEXT_LINES)
            + _syntax_report(full, edited)
        )


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _numbered(lines: list[str], first: int, last: int) -> str:
    """Lines ``first``..``last`` (1-based, clamped) the way read_file shows them."""
    first, last = max(first, 1), min(last, len(lines))
    return "\n".join(f"{n:6}\t{lines[n - 1][:LINE_CHARS]}" for n in range(first, last + 1))


def _miss(path: str, text: str, old: str, count: int) -> str:
    """Why ``old`` did not match exactly once, and what to send instead."""
    lines = text.splitlines()
    if not old:
        return f"{path}: old_text is empty; give the exact text to replace"
    if count > 1:
        at = [text.count("\n", 0, m.start()) + 1 for m in re.finditer(re.escape(old), text)]
        shown = ", ".join(map(str, at[:20]))
        return (
            f"{path}: old_text found {count} times (at lines {shown}); it must occur exactly "
            "once: add surrounding lines to old_text so it matches only the place to change"
        )
    first, last = _closest(lines, old.splitlines() or [old])
    if first == 0:
        return f"{path}: old_text not found and no line of the file is close to it; read_file it"
    hint = (
        "copy old_text from these lines exactly (indentation and whitespace included, without "
        "the line-number prefix), or read_file the file if it is not the place"
    )
    return (
        f"{path}: old_text not found; it must occur exactly once. The closest match is lines "
        f"{first}–{last}:\n{_numbered(lines, first, last)}\n{hint}"
    )


def _closest(lines: list[str], wanted: list[str]) -> tuple[int, int]:
    """The 1-based line range of ``lines`` most like ``wanted``, or (0, 0)."""
    size = len(wanted)
    target = "\n".join(wanted)
    best, best_at = 0.0, 0
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(target)
    for start in range(max(len(lines) - size + 1, 1)):
        matcher.set_seq1("\n".join(lines[start : start + size]))
        if matcher.real_quick_ratio() <= best or matcher.quick_ratio() <= best:
            continue
        ratio = matcher.ratio()
        if ratio > best:
            best, best_at = ratio, start
    if best < 0.5:
        return 0, 0
    return best_at + 1, min(best_at + size, len(lines))


_SYNTAX_KINDS = {
    ".py": "Python",
    ".pyi": "Python",
    ".json": "JSON",
    ".yaml": "YAML",
    ".yml": "YAML",
    ".toml": "TOML",
}


def _syntax_error(path: Path, text: str) -> str | None:
    """The syntax error of a Python, JSON, YAML or TOML file, or None."""
    suffix = path.suffix.lower()
    try:
        if suffix in (".py", ".pyi"):
            compile(text, str(path), "exec", dont_inherit=True)
        elif suffix == ".json":
            json.loads(text)
        elif suffix in (".yaml", ".yml"):
            list(yaml.safe_load_all(text))
        elif suffix == ".toml":
            tomllib.loads(text)
    except SyntaxError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except json.JSONDecodeError as exc:
        return f"line {exc.lineno}: {exc.msg}"
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}: " if mark is not None else ""
        return f"{where}{getattr(exc, 'problem', None) or exc}"
    except tomllib.TOMLDecodeError as exc:
        return str(exc)
    return None


def _syntax_report(path: Path, text: str) -> str:
    error = _syntax_error(path, text)
    if error is None:
        return ""
    kind = _SYNTAX_KINDS[path.suffix.lower()]
    return (
        f"\nwarning: the file is no longer valid {kind}: {error}. "
        "The change was saved; fix it with another edit."
    )


def _read_text(path: Path, strict: bool = False) -> str:
    return _decode(path, path.read_bytes(), strict)


def _decode(path: Path, data: bytes, strict: bool = False) -> str:
    if b"\0" in data[:8192]:
        raise ToolError(f"{path.name}: binary file")
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError:
        raise ToolError(f"{path.name}: not UTF-8 text; it cannot be edited") from None
