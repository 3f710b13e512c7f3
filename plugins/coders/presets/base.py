"""What every coder preset is made of (:class:`Preset`: a command line, an
environment and a reader of the tool's output), how one call of a preset
runs (:class:`Call`, :meth:`Preset.session`) and how what the tool said
(:class:`Parsed`) becomes a :class:`~stepkit.records.CoderResult`; and the
helpers the presets share (the project's git location, the JSON objects of
an output).

Every preset runs through the command coder's runner (prompt on stdin and in
``STEPKIT_PROMPT_FILE``, STEPKIT_* env, timeout with process-group kill) and
turns the tool's own output into the same :class:`CoderResult`: the result
text, errors, tokens, cost and session id where the tool reports them.  A
crash of the process wins; then the tool's own report that the work failed
whatever the reply says (aider's edits that never applied, opencode stopping
before it answered); then the last line of the tool's final text that starts
with a sentinel (:func:`~stepkit.plugins.coders.results.find_sentinel`); then the
tool's errors (CODER_FAILED); then the exit code.  Notices of errors the tool
retried and warnings are shown, never failures.

Each call gets a scratch directory outside the project for whatever the tool
writes for itself (history files, a throwaway git index), so a read-only
reviewer leaves the project tree untouched; it is under stepkit's state
directory, which no other run's sandbox shows.  Confined, a coder writes
the project, that directory and the CLI's own state (:meth:`Preset.state_paths`).
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from stepkit.plugins.coders.presets.login import Login
from stepkit.plugins.coders.results import Sentinel, find_sentinel, generic_result
from stepkit.records import CoderResult, StageContext, Usage
from stepkit.workspace import sandbox
from stepkit.workspace.jsonlines import json_object

if TYPE_CHECKING:
    from stepkit.workspace.process import ProcessResult


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
    #: the answer's schema, for a CLI that can be asked for structured output
    answer_schema: type[BaseModel] | None = None


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
    #: the structured answer, when the call asked for one and the tool gave it
    structured: dict[str, Any] | None = None
    #: the tool's last reply, when its answer is several (None: ``text`` is one)
    last_reply: str | None = None
    #: the subscription's usage or rate limit the tool hit (and when it resets):
    #: an environment fault, never a failure of the code
    limit: str | None = None


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
    #: how ``stepkit doctor`` tells that the CLI is logged in (None: it cannot)
    login: Login | None = None

    def state_paths(self) -> tuple[Path, ...]:
        """Where the tool keeps its own state (:data:`~stepkit.plugins.agent_clis.STATE`):
        writable when stepkit confines it."""
        from stepkit.plugins.agent_clis import state_paths

        return state_paths(self.name)

    @contextmanager
    def session(
        self, ctx: StageContext, review: bool, answer_schema: type[BaseModel] | None = None
    ) -> Iterator[Call]:
        """One call of the tool for ``ctx``'s project: a scratch directory
        outside the project for the tool's own files, removed afterwards
        with whatever the tool left of :attr:`leftovers`; ``answer_schema``:
        the structured answer to ask for where the CLI can."""
        project = Path(ctx.project_dir)
        roots = {project, *(Path(loc[0]) for loc in [git_location(project)] if loc)}
        before = {
            path for root in roots for pattern in self.leftovers for path in root.glob(pattern)
        }
        scratch = sandbox.scratch_dir(f"{self.name}-")
        try:
            yield Call(dict(ctx.settings), review, project, scratch, ctx.usage, answer_schema)
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

    def parse(
        self, run: ProcessResult, stream_sentinel: Sentinel | None, scratch: Path
    ) -> CoderResult:
        """Turn one run of the tool into a :class:`CoderResult`
        (``stream_sentinel``: the last sentinel line of its raw output, which
        decides when its format cannot be read)."""
        parsed = self.read(run.output, scratch)
        crashed = run.crash() is not None
        if crashed or parsed is None:
            result = generic_result(run, stream_sentinel)
            if not crashed:
                result.text += (
                    f"\n[stepkit: could not read {self.name}'s output format; judged by exit code]"
                )
            return result
        if parsed.limit:
            return CoderResult(
                sentinel=None,
                crashed=True,
                exit_code=run.exit_code,
                log=run.log,
                text=limit_note(self.name, parsed.limit),
                usage=parsed.usage,
                cost_usd=parsed.cost_usd,
                session_id=parsed.session_id,
            )
        found = find_sentinel(parsed.text)
        note = None
        if parsed.failed:
            note = f"[stepkit: {self.name} {parsed.failed}" + (
                f"; its reply said {found.word}]" if found else "]"
            )
            found = Sentinel("CODER_FAILED")
        elif found is None:
            if parsed.errors or run.exit_code != 0:
                found = Sentinel("CODER_FAILED")
                note = f"[stepkit: no sentinel; {self.name} reported an error (exit code {run.exit_code})]"
            else:
                found = Sentinel("CODER_COMPLETE")
                note = f"[stepkit: no sentinel; {self.name} finished without error]"
        errors = "\n".join(f"error: {e}" for e in parsed.errors)
        notes = "\n".join(f"[{self.name}: {n}]" for n in parsed.notes)
        text = "\n".join(p for p in (parsed.text.strip(), errors, notes, note) if p)
        return CoderResult(
            sentinel=found.word,
            sentinel_reason=found.reason,
            sentinel_inferred=note is not None,
            text=text,
            exit_code=run.exit_code,
            log=run.log,
            cost_usd=parsed.cost_usd,
            usage=parsed.usage,
            session_id=parsed.session_id,
        )

    def version(self) -> str | None:
        """The installed CLI's version (``NAME --version``), None when it is
        not on PATH or does not say."""
        from stepkit.workspace import process

        if shutil.which(self.name) is None:
            return None
        run = process.run(f"{self.name} --version", cwd=Path.cwd(), timeout=30, stdin_text="")
        match = re.search(r"\d+\.\d+\.\d+\S*", run.output)
        return match.group(0) if match else None


def limit_note(name: str, limit: str) -> str:
    """What a run says of a CLI that hit its subscription's limit."""
    return (
        f"{name} hit {limit}: an environment fault, not a failure of the code; "
        "no fix was attempted. Run the step again once the limit resets"
    )


def git_location(project: Path) -> tuple[str, str] | None:
    """Where the project's git repository is (see
    :func:`stepkit.workspace.scope.git.location`); None outside git."""
    from stepkit.workspace.scope import git

    return git.location(project)


def json_objects(output: str) -> Iterator[dict[str, Any]]:
    """JSON objects in the output: the whole text, or one per line."""
    stripped = output.strip()
    try:
        whole = json.loads(stripped)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        yield whole
        return
    for line in stripped.splitlines():
        value = json_object(line)
        if value is not None:
            yield value
