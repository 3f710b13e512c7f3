"""Whether a coding CLI can call its model with nobody at the keyboard, as
``stepkit doctor`` checks it: the :class:`Login` a preset declares (the dry
call that asks the CLI, a reader of its answer, the API-key variables the
CLI reads) and :func:`login_check`, the doctor line it makes.

The dry call runs with stdin closed, outside any terminal (a CLI cannot
prompt) and for at most :data:`TIMEOUT_S`; it never logs in.  An API key
the CLI reads in the environment counts as ready whatever the call says: the
CLI uses it before, or instead of, a login.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from stepkit import quoting
from stepkit.text import strip_ansi

#: How long the dry call may take (seconds).
TIMEOUT_S = 10.0
#: How much of the CLI's answer a line that cannot tell quotes.
QUOTED_CHARS = 120


def _cannot_tell(exit_code: int | None, output: str) -> bool | None:
    return None


@dataclass(frozen=True)
class Login:
    """How a preset's CLI shows that it is logged in."""

    #: the dry call (an argv): empty when the CLI has no login to ask about
    argv: tuple[str, ...] = ()
    #: ``reader(exit_code, output)`` of the dry call (stdout and stderr
    #: together): True logged in, False not, None when it cannot tell
    reader: Callable[[int | None, str], bool | None] = _cannot_tell
    #: environment variables of an API key the CLI reads: one that is set
    #: makes it ready whatever the dry call says
    keys: tuple[str, ...] = ()
    #: what logs it in (the fix of a line that says it is not)
    fix: str = ""


def login_check(
    preset: Any, project_dir: Path, environ: Mapping[str, str] | None = None
) -> dict[str, str] | None:
    """The doctor line of ``preset``'s login (``stepkit_doctor_checks``);
    None when its CLI is not on PATH (the check before a run says so)."""
    env = dict(os.environ if environ is None else environ)
    name = str(preset.name)
    if shutil.which(name, path=env.get("PATH")) is None:
        return None
    login: Login | None = getattr(preset, "login", None)
    if login is None:
        return _line(
            name, "warn", "cannot tell whether it is logged in: its preset declares no check"
        )
    key = next((key for key in login.keys if env.get(key, "").strip()), None)
    if key is not None:
        return _line(name, "ok", f"{key} is set, which it reads as its API key")
    if not login.argv:
        keys = ", ".join(login.keys) or "its own configuration"
        return _line(
            name,
            "warn",
            f"has no login to check; it reads an API key from {keys}: none of them is set",
            f"set one of {keys}, or give the key in {name}'s own configuration",
        )
    call = " ".join(login.argv)
    from stepkit.workspace import process

    run = process.run(quoting.shell(login.argv), cwd=project_dir, env=env, timeout=TIMEOUT_S)
    crash = run.crash(call)
    said = None if crash else login.reader(run.exit_code, run.output)
    if said:
        return _line(name, "ok", f"logged in ({call})")
    if said is False:
        fix = login.fix or f"log in to {name}"
        if login.keys:
            fix += f" (or set {' or '.join(login.keys)})"
        return _line(name, "fail", f"not logged in ({call})", fix)
    answer = crash or _last_line(run.output) or f"exit {run.exit_code}, no output"
    return _line(
        name,
        "warn",
        f"cannot tell whether it is logged in ({call}: {answer})",
        login.fix,
    )


def _line(name: str, status: str, text: str, fix: str = "") -> dict[str, str]:
    return {"name": name, "status": status, "text": text, "fix": fix}


def _last_line(output: str) -> str:
    """The CLI's last words (where a summary or an error usually is)."""
    lines = [line.strip() for line in strip_ansi(output).splitlines() if line.strip()]
    return lines[-1][:QUOTED_CHARS] if lines else ""


def json_answer(output: str) -> dict[str, Any] | None:
    """The first JSON object in a CLI's answer (pretty-printed or not, after
    any line of noise before it); None when there is none."""
    start = output.find("{")
    while start != -1:
        try:
            value, _ = json.JSONDecoder().raw_decode(output, start)
        except ValueError:
            value = None
        if isinstance(value, dict):
            return value
        start = output.find("{", start + 1)
    return None
