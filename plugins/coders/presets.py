"""Presets for well-known coding CLIs: a command line, an environment and a
parser each, checked against the real tools (the versions in
:attr:`Preset.checked`; transcripts of those versions are the contract
tests' fixtures, tests/fixtures/transcripts/<cli>-<version>/).

Every preset runs through the command coder's runner (prompt on stdin and in
``STEPKIT_PROMPT_FILE``, STEPKIT_* env, timeout with process-group kill) and
turns the tool's own output into the same :class:`CoderResult`: the result
text, errors, tokens, cost and session id where the tool reports them.  A
crash of the process wins; then the tool's own report that the work failed
whatever the reply says (aider's edits that never applied, opencode stopping
before it answered); then a sentinel line in the tool's final text; then the
tool's errors (CODER_FAILED); then the exit code.  Notices of errors the tool
retried and warnings are shown, never failures.

Each call gets a scratch directory outside the project for whatever the tool
writes for itself (history files, a throwaway git index), so a read-only
reviewer leaves the project tree untouched.

- ``claude``: ``-p`` (print mode, prompt from stdin), ``--output-format json``
  (one result object: ``result``, ``is_error``, ``subtype``,
  ``api_error_status``, ``total_cost_usd``, ``usage``, ``session_id``,
  ``permission_denials``), ``--permission-mode acceptEdits`` with
  ``--allowedTools Bash`` (print mode answers any other Bash call "requires
  approval", and the coder must run the build and the tests),
  ``--max-turns N``, ``--max-budget-usd X`` (at most what the run's
  ``max_cost_usd`` leaves).  Reviewer: ``--permission-mode plan``.
- ``codex``: ``codex exec --json --skip-git-repo-check -`` with ``--sandbox
  workspace-write`` (reviewer: ``read-only``).  JSONL events:
  ``thread.started``, ``item.completed`` (``agent_message``; ``error`` items
  are warnings, e.g. missing model metadata), ``turn.completed`` (its
  ``usage``) / ``turn.failed``, and ``error`` (a retry notice when a
  ``turn.completed`` follows).  Codex reports tokens, not cost.
- ``aider``: (an error after its last reply, or edits that never applied,
  fail the run whatever the reply said) ``--message-file``, ``--yes-always``, ``--no-auto-commits``,
  ``--no-dirty-commits`` (the scope guard needs the changes in the work
  tree), ``--no-gitignore``, ``--no-git`` outside git, history files in the
  scratch dir, and in git a throwaway index (``GIT_INDEX_FILE``) so the files
  it creates are not ``git add``-ed; ``--no-pretty --no-stream``.  Its
  answer is read from the chat history file; it prints ``Tokens: …`` and
  ``Cost: $X message, $Y session.``  Reviewer: ``--dry-run --chat-mode ask
  --map-tokens 0`` (no repo-map cache in the project).
- ``opencode``: ``opencode run --format json`` (JSON events: ``text``,
  ``step_finish`` with ``reason``, ``cost`` and ``tokens``, ``error``, each
  with ``sessionID``); a piped stdin is appended to the message.  Reviewer:
  ``--agent plan`` with ``OPENCODE_PERMISSION`` denying edit and bash.
"""

from __future__ import annotations

import json
import re
import shlex
import shutil
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from stepkit.plugins.agent_clis import (
    INSTALL,
    claude_cost,
    claude_usage,
    codex_turn_usage,
    count,
    number,
)
from stepkit.plugins.coders.command import find_sentinel, generic_result
from stepkit.records import CoderResult, StageContext, Usage
from stepkit.workspace.jsonlines import json_lines
from stepkit.workspace.process import ProcessResult

DEFAULT_MAX_TURNS = 60
DEFAULT_MAX_BUDGET_USD = 10.0


@dataclass(frozen=True)
class Call:
    """One run of a preset: the run settings, which variant, where."""

    settings: dict[str, Any]
    review: bool
    project_dir: Path
    #: a directory outside the project for the tool's own files
    scratch: Path
    #: the run's usage so far (what a budget has left)
    spent: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class Parsed:
    """What a tool's own output said."""

    text: str
    errors: tuple[str, ...] = ()
    #: retried errors and warnings: shown, never a failure
    notes: tuple[str, ...] = ()
    #: the tool says the work failed whatever its reply says
    failed: str | None = None
    usage: Usage | None = None
    #: None when the tool does not report cost
    cost_usd: float | None = None
    session_id: str | None = None


@dataclass(frozen=True)
class Preset:
    """A coding CLI: how to call it and how to read its output."""

    name: str
    #: the shell command line of one call
    command: Callable[[Call], str]
    #: ``reader(output, scratch)``: what the output (and the tool's files in
    #: the scratch dir) say; None when it is not in the tool's format
    reader: Callable[[str, Path], Parsed | None]
    #: the CLI versions these flags and this parser were checked against
    checked: tuple[str, ...]
    #: how to install the CLI
    install: str
    #: extra environment of one call
    env: Callable[[Call], dict[str, str]] = lambda call: {}
    #: what the tool writes for itself into the project (or its git root):
    #: glob patterns removed after a call when the call created them
    leftovers: tuple[str, ...] = ()

    @contextmanager
    def session(self, ctx: StageContext, review: bool) -> Iterator[Call]:
        """One call of the tool for ``ctx``'s project: a scratch directory
        outside the project for the tool's own files, removed afterwards
        with whatever the tool left of :attr:`leftovers`."""
        project = Path(ctx.project_dir)
        roots = {project, *(Path(loc[0]) for loc in [_git_location(project)] if loc)}
        before = {path for root in roots for pattern in self.leftovers for path in root.glob(pattern)}
        scratch = Path(tempfile.mkdtemp(prefix=f"stepkit-{self.name}-"))
        try:
            yield Call(dict(ctx.settings), review, project, scratch, ctx.usage)
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
            for root in roots:
                for pattern in self.leftovers:
                    for path in set(root.glob(pattern)) - before:
                        if path.is_dir():
                            shutil.rmtree(path, ignore_errors=True)
                        else:
                            path.unlink(missing_ok=True)

    def read(self, output: str, scratch: Path) -> Parsed | None:
        """What the tool's output says; None when it is empty or not in the
        tool's format."""
        return self.reader(output, scratch) if output.strip() else None

    def parse(self, run: ProcessResult, stream_sentinel: str | None, scratch: Path) -> CoderResult:
        """Turn one run of the tool into a :class:`CoderResult`
        (``stream_sentinel``: the last sentinel line of its raw output, which
        decides when its format cannot be read)."""
        parsed = self.read(run.output, scratch)
        crashed = run.crash() is not None
        if crashed or parsed is None:
            result = generic_result(run, stream_sentinel)
            if not crashed:
                result.text += f"\n[stepkit: could not read {self.name}'s output format; judged by exit code]"
            return result
        sentinel = find_sentinel(parsed.text)
        note = None
        if parsed.failed:
            note = f"[stepkit: {self.name} {parsed.failed}" + (f"; its reply said {sentinel}]" if sentinel else "]")
            sentinel = "CODER_FAILED"
        elif sentinel is None:
            if parsed.errors or run.exit_code != 0:
                sentinel = "CODER_FAILED"
                note = f"[stepkit: no sentinel; {self.name} reported an error (exit code {run.exit_code})]"
            else:
                sentinel = "CODER_COMPLETE"
                note = f"[stepkit: no sentinel; {self.name} finished without error]"
        errors = "\n".join(f"error: {e}" for e in parsed.errors)
        notes = "\n".join(f"[{self.name}: {n}]" for n in parsed.notes)
        text = "\n".join(p for p in (parsed.text.strip(), errors, notes, note) if p)
        return CoderResult(sentinel=sentinel, sentinel_inferred=note is not None, text=text,
                           exit_code=run.exit_code, log=run.log, cost_usd=parsed.cost_usd,
                           usage=parsed.usage, session_id=parsed.session_id)

    def version(self) -> str | None:
        """The installed CLI's version (``NAME --version``), None when it is
        not on PATH or does not say."""
        from stepkit.workspace import process

        if shutil.which(self.name) is None:
            return None
        run = process.run(f"{self.name} --version", cwd=Path.cwd(), timeout=30, stdin_text="")
        match = re.search(r"\d+\.\d+\.\d+\S*", run.output)
        return match.group(0) if match else None


def preset_status() -> list[dict[str, Any]]:
    """Every preset: its CLI on PATH (``path``, ``version``: None when it is
    missing), the versions it was checked against and how to install it."""
    rows = []
    for preset in PRESETS.values():
        version = preset.version()
        rows.append({"name": preset.name, "path": shutil.which(preset.name), "version": version,
                     "checked": list(preset.checked), "checked_version": version in preset.checked,
                     "install": preset.install})
    return rows


# -- claude --------------------------------------------------------------------


def _claude_command(call: Call) -> str:
    turns = int(call.settings.get("coder_max_turns") or DEFAULT_MAX_TURNS)
    budget = float(call.settings.get("coder_max_budget_usd") or DEFAULT_MAX_BUDGET_USD)
    if call.settings.get("max_cost_usd") is not None:
        budget = max(0.0, min(budget, float(call.settings["max_cost_usd"]) - call.spent.cost_usd))
    mode = "plan" if call.review else "acceptEdits --allowedTools Bash"
    return (f"claude -p --output-format json --permission-mode {mode} "
            f"--max-turns {turns} --max-budget-usd {round(budget, 4):g}")


def _claude_read(output: str, scratch: Path) -> Parsed | None:
    result = None
    for event in _json_objects(output):
        if event.get("type") == "result" or "is_error" in event:
            result = event
    if result is None:
        return None
    errors = [str(e) for e in result.get("errors") or []]
    subtype = str(result.get("subtype") or "")
    reason = str(result.get("result") or "claude reported an error")
    if result.get("api_error_status"):
        errors.insert(0, f"API error {result['api_error_status']}: {reason}")
    elif subtype and subtype != "success":
        errors.insert(0, f"{subtype}: {reason}")
    elif result.get("is_error"):
        errors.insert(0, reason)
    text = str(result.get("result") or "")
    notes = []
    denials = result.get("permission_denials") or []
    if denials:  # worth knowing (e.g. a command it could not run), not a failure by itself
        tools = ", ".join(sorted({str(d.get("tool_name")) for d in denials}))
        notes.append(f"{len(denials)} tool call(s) were denied permission ({tools})")
    return Parsed(text=text, errors=tuple(errors), notes=tuple(notes), usage=claude_usage(result),
                  cost_usd=claude_cost(result),
                  session_id=result.get("session_id"))


# -- codex ---------------------------------------------------------------------


def _codex_command(call: Call) -> str:
    sandbox = "read-only" if call.review else "workspace-write"
    return f"codex exec --sandbox {sandbox} --json --skip-git-repo-check -"


def _codex_read(output: str, scratch: Path) -> Parsed | None:
    seen = False
    session_id = None
    messages: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    pending: list[str] = []  # error events: retry notices unless no turn completes after them
    usage = Usage()
    for event in _json_objects(output):
        kind = event.get("type")
        item = event.get("item") or {}
        if kind == "thread.started":
            session_id = event.get("thread_id")
        elif kind == "item.completed" and item.get("type") == "agent_message":
            messages.append(str(item.get("text") or ""))
        elif kind == "item.completed" and item.get("type") == "error":
            notes.append(f"warning: {item.get('message') or 'error item'}")
        elif kind == "turn.completed":
            notes.extend(f"retried: {p}" for p in pending)
            pending = []
            usage = usage.add(codex_turn_usage(event))
        elif kind == "turn.failed":
            pending = []
            errors.append(str((event.get("error") or {}).get("message") or "turn failed"))
        elif kind == "error":
            pending.append(str(event.get("message") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    return Parsed(text=messages[-1] if messages else "", errors=tuple(errors + pending), notes=tuple(notes),
                  usage=usage, session_id=session_id)


# -- aider ---------------------------------------------------------------------

_AIDER_COST = re.compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session")
_AIDER_TOKENS = re.compile(r"^Tokens: (?P<fields>.*?)\.?\s*$", re.MULTILINE)
_AIDER_ERROR = re.compile(r"^(litellm\.\w*Error\b.*|\w*(API|Authentication|RateLimit)Error: .*)$", re.MULTILINE)
_AIDER_RETRY = re.compile(r"^Retrying in [\d.]+ seconds", re.MULTILINE)
_AIDER_GAVE_UP = re.compile(r"^Only \d+ reflections allowed, stopping\.", re.MULTILINE)
#: what aider writes into the repository root for itself (the repo-map cache)
AIDER_CACHE = ".aider.tags.cache.v*"


def _aider_command(call: Call) -> str:
    scratch = shlex.quote(str(call.scratch))
    flags = [
        '--message-file "$STEPKIT_PROMPT_FILE"', "--yes-always", "--no-auto-commits",
        "--no-dirty-commits", "--no-gitignore", "--no-pretty", "--no-stream", "--no-check-update",
        "--no-show-release-notes", "--no-analytics",
        f"--chat-history-file {scratch}/chat.history.md",
        f"--input-history-file {scratch}/input.history",
    ]
    if _git_location(call.project_dir) is None:
        flags.append("--no-git")  # else --yes-always answers "create a git repo?" with yes
    if call.review:
        flags += ["--dry-run", "--chat-mode ask", "--map-tokens 0"]
    return "aider " + " ".join(flags)


def _aider_env(call: Call) -> dict[str, str]:
    """In git, a copy of the index for aider to ``git add`` its new files to."""
    from stepkit.workspace.scope import git

    if _git_location(call.project_dir) is None:
        return {}
    out = git.run(["rev-parse", "--path-format=absolute", "--git-path", "index"], call.project_dir)
    index = call.scratch / "index"
    real = Path(out.decode().strip()) if out else None
    if real is not None and real.is_file():
        shutil.copyfile(real, index)
    return {"GIT_INDEX_FILE": str(index)}


def _aider_read(output: str, scratch: Path) -> Parsed:
    costs = _AIDER_COST.findall(output)
    cost = float(costs[-1][1]) if costs else None
    usage = Usage(cost_usd=cost or 0.0)
    for match in _AIDER_TOKENS.finditer(output):
        usage = usage.add(_aider_tokens(match.group("fields")))
    errors, notes = [], []
    for match in _AIDER_ERROR.finditer(output):
        retried = _AIDER_RETRY.search(output, match.end())
        nxt = _AIDER_ERROR.search(output, match.end())
        if retried and (nxt is None or retried.start() < nxt.start()):
            notes.append(f"retried: {match.group(0).strip()[:300]}")
        else:
            errors.append(match.group(0).strip())
    gave_up = _AIDER_GAVE_UP.search(output)
    failed = ("could not apply its edits (they did not conform to the edit format: "
              f"\"{gave_up.group(0)}\")") if gave_up else None
    last_error = errors[-1] if errors else None
    if failed is None and last_error and output.rfind(last_error) > _last_sentinel_at(output):
        # e.g. the reply named a file not in the chat, and asking again failed: nothing applied
        failed = f"ended on an error after its last reply ({last_error[:200]})"
    answer = _aider_answer(scratch / "chat.history.md")
    return Parsed(text=answer if answer is not None else output, errors=tuple(errors), notes=tuple(notes),
                  failed=failed, usage=usage, cost_usd=cost)


def _last_sentinel_at(output: str) -> int:
    """Where the last sentinel line of ``output`` starts (-1: none)."""
    at, offset = -1, 0
    for line in output.splitlines(keepends=True):
        if find_sentinel(line):
            at = offset
        offset += len(line)
    return at


def _aider_tokens(fields: str) -> Usage:
    """``1.9k sent, 100 cache write, 500 cache hit, 30 received`` (sent
    counts the cached tokens too)."""
    counts: dict[str, int] = {}
    for part in fields.split(","):
        amount, _, what = part.strip().partition(" ")
        scale = 1000 if amount.endswith("k") else 1_000_000 if amount.endswith("M") else 1
        try:
            counts[what.strip()] = int(float(amount.rstrip("kM")) * scale)
        except ValueError:
            continue
    write, hit = counts.get("cache write", 0), counts.get("cache hit", 0)
    return Usage(input_tokens=max(0, counts.get("sent", 0) - write - hit), output_tokens=counts.get("received", 0),
                 cache_read_tokens=hit, cache_write_tokens=write)


def _aider_answer(history: Path) -> str | None:
    """The model's replies in aider's chat history: the lines that are neither
    the user's (``#### ``) nor aider's own output (``> ``), after the first
    message; None when there is no history."""
    try:
        lines = history.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    start = next((i for i, line in enumerate(lines) if line.startswith("#### ")), None)
    if start is None:
        return None
    kept = [line for line in lines[start:]
            if not line.startswith(("#### ", "> ", "# aider chat started")) and not _AIDER_COST.match(line)]
    return "\n".join(kept).strip()


# -- opencode ------------------------------------------------------------------

_OPENCODE_REJECTED = re.compile(r"^.*permission requested: .*auto-rejecting.*$", re.MULTILINE)


def _opencode_command(call: Call) -> str:
    return "opencode run --format json" + (" --agent plan" if call.review else "")


def _opencode_env(call: Call) -> dict[str, str]:
    return {"OPENCODE_PERMISSION": json.dumps({"edit": "deny", "bash": "deny"})} if call.review else {}


def _opencode_read(output: str, scratch: Path) -> Parsed | None:
    seen = False
    session_id = None
    texts: list[str] = []
    errors: list[str] = []
    usage = Usage()
    last_reason = None
    answered = False  # a text part after the last step that ended on tool calls
    for event in _json_objects(output):
        kind = event.get("type")
        part = event.get("part") or {}
        session_id = session_id or event.get("sessionID")
        if kind == "text":
            texts.append(str(part.get("text") or ""))
            answered = True
        elif kind == "step_finish":
            last_reason = part.get("reason")
            answered = answered and last_reason != "tool-calls"
            tokens = part.get("tokens") or {}
            cache = tokens.get("cache") or {}
            usage = usage.add(Usage(input_tokens=count(tokens.get("input")),
                                    output_tokens=count(tokens.get("output")) + count(tokens.get("reasoning")),
                                    cache_read_tokens=count(cache.get("read")),
                                    cache_write_tokens=count(cache.get("write")),
                                    cost_usd=number(part.get("cost")) or 0.0))
        elif kind == "error":
            error = event.get("error") or {}
            data = error.get("data") or {}
            errors.append(str(data.get("message") or error.get("name") or "error"))
        seen = seen or isinstance(kind, str)
    if not seen:
        return None
    rejected = [m.group(0).strip()[:300] for m in _OPENCODE_REJECTED.finditer(output)]
    failed = None
    if last_reason == "tool-calls" and not answered:
        failed = "stopped after a tool call without answering" + (
            f" (a permission was auto-rejected: {rejected[-1]})" if rejected else "")
    return Parsed(text="\n".join(texts), errors=tuple(errors), failed=failed,
                  notes=tuple(f"auto-rejected: {r}" for r in rejected), usage=usage,
                  cost_usd=usage.cost_usd, session_id=session_id)


# -- shared --------------------------------------------------------------------


def _git_location(project: Path) -> tuple[str, str] | None:
    from stepkit.workspace.scope import git

    return git.location(project)


def _json_objects(output: str) -> Iterator[dict[str, Any]]:
    """JSON objects in the output: the whole text, or one per line."""
    stripped = output.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield whole
        return
    yield from json_lines(stripped)[0]


PRESETS: dict[str, Preset] = {
    "claude": Preset("claude", _claude_command, _claude_read, checked=("2.1.332",),
                     install=INSTALL["claude"]),
    "codex": Preset("codex", _codex_command, _codex_read, checked=("0.171.0",),
                    install=INSTALL["codex"]),
    "aider": Preset("aider", _aider_command, _aider_read, checked=("0.86.2",),
                    install=INSTALL["aider"], env=_aider_env, leftovers=(AIDER_CACHE,)),
    "opencode": Preset("opencode", _opencode_command, _opencode_read, checked=("1.18.33",),
                       install=INSTALL["opencode"], env=_opencode_env),
}
