"""The model-facing tools (names and arguments fixed by DESIGN.md).

``read_file{path, offset?, limit?}``, ``list_dir{path}``, ``search{pattern,
path?}``, ``run_command{command, timeout?}`` for every node;
``write_file{path, content}`` and ``edit_file{path, old_text, new_text}``
for the coder as well.

Every path resolves inside the project directory with symlinks resolved;
an escape, a write into a forbidden directory (the plan repo, ``.git``,
``.stepkit``), a bad argument or a failing command come back as a tool
error the model reads (text starting with ``error:``), never as an
exception.  All output is redacted (:func:`stepkit.workspace.redact.redact`) and
condensed to about 16 KB (head and tail kept).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit.workspace import process
from stepkit.workspace.evidence import clip_middle
from stepkit.workspace.redact import redact
from stepkit.workspace.scope import EXCLUDED_DIRS, walk_files

MAX_OUTPUT_CHARS = 16_000
ERROR_PREFIX = "error: "
_READ_LIMIT_LINES = 2000
_LINE_CHARS = 2000
_LIST_LIMIT = 1000
_SEARCH_MATCHES = 200
_SEARCH_MAX_FILE_BYTES = 2_000_000
_COMMAND_TIMEOUT_S = 120
_COMMAND_MAX_TIMEOUT_S = 600
_HIDDEN_ENV = ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN")


class ToolError(Exception):
    """A failure the model should read and can react to."""


@dataclass(frozen=True)
class Tool:
    """One tool: what the model sees (name, description, input_schema) and
    the handler that runs it."""

    name: str
    description: str
    input_schema: dict[str, Any]
    handler: Callable[[dict[str, Any]], str]

    def call(self, args: dict[str, Any]) -> tuple[str, bool]:
        """Run the tool; return ``(text, is_error)``.  Never raises for a bad
        call: the error is text for the model."""
        try:
            _check_args(self.input_schema, args)
            text, is_error = self.handler(args), False
        except ToolError as exc:
            text, is_error = f"{ERROR_PREFIX}{exc}", True
        except (OSError, ValueError) as exc:
            text, is_error = f"{ERROR_PREFIX}{type(exc).__name__}: {exc}", True
        return clip_middle(redact(text), MAX_OUTPUT_CHARS), is_error

    def to_param(self) -> dict[str, Any]:
        """The tool definition in the Messages API shape."""
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema}


def read_only_tools(project_dir: Path) -> list[Tool]:
    """``read_file``, ``list_dir``, ``search``, ``run_command`` on ``project_dir``."""
    ws = _Workspace(project_dir, ())
    return [
        Tool("read_file", _READ_DOC, _schema(path="string", offset="integer", limit="integer",
                                             required=("path",)), ws.read_file),
        Tool("list_dir", _LIST_DOC, _schema(path="string", required=("path",)), ws.list_dir),
        Tool("search", _SEARCH_DOC, _schema(pattern="string", path="string",
                                            required=("pattern",)), ws.search),
        Tool("run_command", _RUN_DOC, _schema(command="string", timeout="integer",
                                              required=("command",)), ws.run_command),
    ]


def coder_tools(project_dir: Path, forbidden_dirs: Iterable[Path] = ()) -> list[Tool]:
    """The read-only tools plus ``write_file`` and ``edit_file``; writes under
    ``forbidden_dirs`` (the plan repo), ``.git`` and ``.stepkit`` are refused."""
    ws = _Workspace(project_dir, forbidden_dirs)
    return read_only_tools(project_dir) + [
        Tool("write_file", _WRITE_DOC, _schema(path="string", content="string",
                                               required=("path", "content")), ws.write_file),
        Tool("edit_file", _EDIT_DOC, _schema(path="string", old_text="string", new_text="string",
                                             required=("path", "old_text", "new_text")),
             ws.edit_file),
    ]


_READ_DOC = (
    "Read a text file of the project. Lines are numbered. `offset` is the first line "
    f"(1-based, default 1), `limit` the number of lines (default {_READ_LIMIT_LINES})."
)
_LIST_DOC = "List a directory of the project; sub-directories end with '/'."
_SEARCH_DOC = (
    "Search project files for a Python regular expression; `path` (file or directory, "
    "default the project root) narrows the search. Returns path:line: text for each match."
)
_RUN_DOC = (
    "Run a shell command in the project directory (e.g. a test or a grep) and return its "
    f"exit code and combined output. `timeout` in seconds (default {_COMMAND_TIMEOUT_S}, "
    f"at most {_COMMAND_MAX_TIMEOUT_S})."
)
_WRITE_DOC = "Create or overwrite a file of the project with `content`."
_EDIT_DOC = (
    "Replace `old_text`, which must occur exactly once in the file, with `new_text`. "
    "Include enough surrounding lines to make `old_text` unique."
)


def _schema(*, required: tuple[str, ...], **props: str) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {name: {"type": kind} for name, kind in props.items()},
        "required": list(required),
    }


def _check_args(schema: dict[str, Any], args: Any) -> None:
    if not isinstance(args, dict):
        raise ToolError("arguments must be an object")
    missing = [name for name in schema.get("required", ()) if name not in args]
    if missing:
        raise ToolError(f"missing argument(s): {', '.join(missing)}")
    for name, prop in schema.get("properties", {}).items():
        if name not in args or args[name] is None:
            continue
        value = args[name]
        ok = (
            isinstance(value, str)
            if prop["type"] == "string"
            else isinstance(value, int) and not isinstance(value, bool)
        )
        if not ok:
            raise ToolError(f"argument {name} must be a {prop['type']}")


class _Workspace:
    """Path confinement and the tool handlers for one project directory."""

    def __init__(self, project_dir: Path, forbidden_dirs: Iterable[Path]):
        self.root = Path(project_dir).resolve()
        self.forbidden = [Path(d).resolve() for d in forbidden_dirs]
        self.forbidden += [self.root / ".git", self.root / ".stepkit"]

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
        text = _read_text(full)
        offset = max(int(args.get("offset") or 1), 1)
        limit = max(int(args.get("limit") or _READ_LIMIT_LINES), 1)
        lines = text.splitlines()
        chosen = lines[offset - 1 : offset - 1 + limit]
        out = [f"{n:6}\t{line[:_LINE_CHARS]}" for n, line in enumerate(chosen, start=offset)]
        rest = len(lines) - (offset - 1 + len(chosen))
        if rest > 0:
            out.append(f"[{rest} more lines; continue with offset={offset + len(chosen)}]")
        return "\n".join(out) if out else f"[{args['path']}: no lines at offset {offset}]"

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
        start = self._resolve(args.get("path") or ".")
        if not start.exists():
            raise ToolError(f"{args.get('path')}: no such file or directory")
        files = [start] if start.is_file() else [start / rel for rel in walk_files(start, EXCLUDED_DIRS)]
        hits: list[str] = []
        for path in files:
            if len(hits) >= _SEARCH_MATCHES:
                hits.append(f"[stopped after {_SEARCH_MATCHES} matches; narrow the search]")
                break
            hits.extend(self._search_file(path, regex, _SEARCH_MATCHES - len(hits)))
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
                found.append(f"{rel}:{n}: {line.strip()[:300]}")
                if len(found) >= room:
                    break
        return found

    def run_command(self, args: dict[str, Any]) -> str:
        timeout = min(max(int(args.get("timeout") or _COMMAND_TIMEOUT_S), 1), _COMMAND_MAX_TIMEOUT_S)
        env = {k: v for k, v in os.environ.items() if k not in _HIDDEN_ENV}
        result = process.run(args["command"], cwd=self.root, env=env, timeout=timeout)
        if result.start_error:
            raise ToolError(f"could not start the command: {result.start_error}")
        status = f"{result.expired} (killed)" if result.expired else f"exit code: {result.exit_code}"
        return f"{status}\n{result.output}"

    def write_file(self, args: dict[str, Any]) -> str:
        full = self._writable(args["path"])
        if full.is_dir():
            raise ToolError(f"{args['path']}: is a directory")
        full.parent.mkdir(parents=True, exist_ok=True)
        data = args["content"].encode("utf-8")
        full.write_bytes(data)
        return f"wrote {len(data)} bytes to {self._show(full)}"

    def edit_file(self, args: dict[str, Any]) -> str:
        full = self._writable(args["path"])
        if not full.is_file():
            raise ToolError(f"{args['path']}: no such file")
        text = _read_text(full, strict=True)
        old = args["old_text"]
        count = text.count(old) if old else 0
        if count != 1:
            found = "not found" if count == 0 else f"found {count} times"
            raise ToolError(f"{args['path']}: old_text {found}; it must occur exactly once")
        full.write_bytes(text.replace(old, args["new_text"], 1).encode("utf-8"))
        return f"edited {self._show(full)}"


def _read_text(path: Path, strict: bool = False) -> str:
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"{path.name}: binary file")
    try:
        return data.decode("utf-8", errors="strict" if strict else "replace")
    except UnicodeDecodeError:
        raise ToolError(f"{path.name}: not UTF-8 text; it cannot be edited") from None
