"""The ``aider`` preset: ``--message-file``, ``--yes-always``,
``--no-auto-commits``, ``--no-dirty-commits`` (the scope guard needs the
changes in the work tree), ``--no-gitignore``, ``--no-git`` outside git,
history files in the scratch dir, and in git a throwaway index
(``GIT_INDEX_FILE``) so the files it creates are not ``git add``-ed;
``--no-pretty --no-stream``.  Its answer is read from the chat history file;
it prints ``Tokens: …`` and ``Cost: $X message, $Y session.``  An error
after its last reply, or edits that never applied, fail the run whatever
the reply said.  Reviewer: ``--dry-run --chat-mode ask --map-tokens 0`` (no
repo-map cache in the project).
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.agent_clis import INSTALL
from stepkit.plugins.coders.presets.base import Call, Parsed, Preset, git_location
from stepkit.plugins.coders.presets.login import Login
from stepkit.plugins.coders.results import find_sentinel
from stepkit.records import Usage

_COST = lazy_compile(r"Cost: \$(?P<message>[\d.]+) message, \$(?P<session>[\d.]+) session")
_TOKENS = lazy_compile(r"^Tokens: (?P<fields>.*?)\.?\s*$", re.MULTILINE)
_ERROR = lazy_compile(
    r"^(litellm\.\w*Error\b.*|\w*(API|Authentication|RateLimit)Error: .*)$", re.MULTILINE
)
_RETRY = lazy_compile(r"^Retrying in [\d.]+ seconds", re.MULTILINE)
_GAVE_UP = lazy_compile(r"^Only \d+ reflections allowed, stopping\.", re.MULTILINE)
#: what aider writes into the repository root for itself (the repo-map cache)
AIDER_CACHE = ".aider.tags.cache.v*"


def command(call: Call) -> str:
    flags = [
        "--yes-always",
        "--no-auto-commits",
        "--no-dirty-commits",
        "--no-gitignore",
        "--no-pretty",
        "--no-stream",
        "--no-check-update",
        "--no-show-release-notes",
        "--no-analytics",
        "--chat-history-file",
        str(call.scratch / "chat.history.md"),
        "--input-history-file",
        str(call.scratch / "input.history"),
    ]
    if git_location(call.project_dir) is None:
        flags.append("--no-git")  # else --yes-always answers "create a git repo?" with yes
    if call.review:
        flags += ["--dry-run", "--chat-mode", "ask", "--map-tokens", "0"]
    # "$STEPKIT_PROMPT_FILE" is expanded by the shell, from the coder's environment
    return 'aider --message-file "$STEPKIT_PROMPT_FILE" ' + quoting.shell(flags)


def env(call: Call) -> dict[str, str]:
    """In git, a copy of the index for aider to ``git add`` its new files to."""
    from stepkit.workspace.scope import git

    if git_location(call.project_dir) is None:
        return {}
    out = git.run(["rev-parse", "--path-format=absolute", "--git-path", "index"], call.project_dir)
    index = call.scratch / "index"
    real = Path(git.text(out).strip()) if out else None
    if real is not None and real.is_file():
        shutil.copyfile(real, index)
    return {"GIT_INDEX_FILE": str(index)}


def read(output: str, scratch: Path) -> Parsed:
    costs = _COST.findall(output)
    cost = float(costs[-1][1]) if costs else None
    usage = Usage(cost_usd=cost or 0.0)
    for match in _TOKENS.finditer(output):
        usage = usage.add(_tokens(match.group("fields")))
    errors, notes = [], []
    for match in _ERROR.finditer(output):
        retried = _RETRY.search(output, match.end())
        nxt = _ERROR.search(output, match.end())
        if retried and (nxt is None or retried.start() < nxt.start()):
            notes.append(f"retried: {match.group(0).strip()[:300]}")
        else:
            errors.append(match.group(0).strip())
    gave_up = _GAVE_UP.search(output)
    failed = (
        (
            "could not apply its edits (they did not conform to the edit format: "
            f'"{gave_up.group(0)}")'
        )
        if gave_up
        else None
    )
    last_error = errors[-1] if errors else None
    if failed is None and last_error and output.rfind(last_error) > _last_sentinel_at(output):
        # e.g. the reply named a file not in the chat, and asking again failed: nothing applied
        failed = f"ended on an error after its last reply ({last_error[:200]})"
    replies = _replies(scratch / "chat.history.md")
    answer = "\n\n".join(replies) if replies is not None else None
    return Parsed(
        text=answer if answer is not None else output,
        errors=tuple(errors),
        notes=tuple(notes),
        failed=failed,
        usage=usage,
        cost_usd=cost,
        last_reply=replies[-1] if replies else None,
    )


def _last_sentinel_at(output: str) -> int:
    """Where the last sentinel line of ``output`` starts (-1: none)."""
    at, offset = -1, 0
    for line in output.splitlines(keepends=True):
        if find_sentinel(line):
            at = offset
        offset += len(line)
    return at


def _tokens(fields: str) -> Usage:
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
    return Usage(
        input_tokens=max(0, counts.get("sent", 0) - write - hit),
        output_tokens=counts.get("received", 0),
        cache_read_tokens=hit,
        cache_write_tokens=write,
    )


def _replies(history: Path) -> list[str] | None:
    """The model's replies in aider's chat history, in order: the lines that
    are neither the user's (``#### ``) nor aider's own output (``> ``), after
    the first message, each reply ended by aider's ``> Tokens:`` line; None
    when there is no history.  A reply that names a file not in the chat
    makes aider add it ("Add file to the chat? … y") and ask again, unlogged:
    the model then answers a second time (a reviewer repeats its findings)."""
    try:
        lines = history.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    start = next((i for i, line in enumerate(lines) if line.startswith("#### ")), None)
    if start is None:
        return None
    replies: list[str] = []
    current: list[str] = []
    for line in lines[start:]:
        if line.startswith("> Tokens:"):
            replies.append("\n".join(current).strip())
            current = []
        elif not line.startswith(("#### ", "> ", "# aider chat started")) and not _COST.match(line):
            current.append(line)
    replies.append("\n".join(current).strip())
    return [reply for reply in replies if reply] or [""]


PRESET = Preset(
    "aider",
    command,
    read,
    checked=("0.86.2",),
    install=INSTALL["aider"],
    env=env,
    leftovers=(AIDER_CACHE,),
    # no login: the keys aider picks its default model by (aider/onboarding.py)
    login=Login(
        keys=(
            "OPENROUTER_API_KEY",
            "ANTHROPIC_API_KEY",
            "DEEPSEEK_API_KEY",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
        )
    ),
)
