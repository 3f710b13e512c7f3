"""A tox or nox command narrowed to the one interpreter this machine has.

tox and nox run a project's interpreter matrix: ``tox`` runs every env of
``env_list`` (``py310``, ``py311``, ``py312`` …), ``nox -s tests`` every
Python of ``@nox.session(python=[…])``.  CI gives each job one Python; here
the interpreters the machine lacks would be skipped (``skip_missing_interpreters``,
nox outside CI), which reads as a pass.  So a gate command that runs tox
or nox runs only what runs on this machine's ``python3``
(:func:`~stepkit.plugins.projects._sessions.runs_here`):

- tox: the envs it selects (``-e``, ``-f``, else ``env_list``) that name
  another interpreter (a factor such as ``py312``/``3.12``/``pypy3.10``, or
  ``basepython``) are left out: ``tox`` → ``tox -e py311,lint``;
- nox: a session it selects (``-s``, else ``nox.options.sessions``, else
  every default session) run on several Pythons becomes the one of this
  machine's (``nox -s tests`` → ``nox -s tests-3.11``); one pinned to
  another Python is left out.

A command that already runs only this machine's interpreter (``tox -e
py``, ``tox run -f lint``, ``nox -s tests-3.11``) is kept as it is, and so
is one stepkit cannot read (shell operators, variables, ``-m`` labels,
``--python``/``--force-python``, a ``python=`` that is not a literal).
When every interpreter it selects is another one, nothing narrows it: the
command is kept and :attr:`Narrowed.fault` says why it cannot run here,
naming the envs and the ``stepkit.toml`` line that would run one here.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _sessions, machine

#: One shell word, with its quotes.
_WORD = lazy_compile(r"""(?:[^\s'"\\]|\\.|'[^']*'|"(?:[^"\\]|\\.)*")+""")
#: What stepkit cannot see through: several commands, substitutions, variables.
_OPAQUE = lazy_compile(r"&&|\|\||[;|`<>]|\$")
#: tox subcommands that run environments (``tox -e py`` runs them too).
_TOX_RUNS = frozenset({"run", "r", "run-parallel", "p", "legacy", "le"})
#: tox and nox options whose selection stepkit does not narrow.
_TOX_OPAQUE = frozenset({"-m", "--labels", "-c", "--conf", "--root"})
_NOX_OPAQUE = frozenset(
    {"-p", "--python", "--pythons", "-P", "--force-python", "--extra-python", "--extra-pythons"}
    | {"-k", "--keywords", "-t", "--tags", "-f", "--noxfile"}
)
_TOX_ENV = frozenset({"-e", "--env", "--envlist"})
_NOX_SESSIONS = frozenset({"-s", "-e", "--session", "--sessions"})


class Narrowed(NamedTuple):
    """A gate command as it runs on this machine's interpreter."""

    command: str
    #: why it cannot run here (every interpreter it selects is another one); "" when it can.
    fault: str = ""


class _Words(NamedTuple):
    texts: list[str]
    values: list[str]


def narrow(command: str, project_dir: Path, gate: str) -> Narrowed:
    """``command`` running only this machine's interpreter (see the module's doc)."""
    words = _words(command)
    tool = None if words is None else _tool_index(words.values)
    # the version is asked of python3, a process: only of a command it can narrow
    here = machine.version("python") if tool is not None else None
    if words is None or tool is None or not here:
        return Narrowed(command)
    version = ".".join(here.split(".")[:2])
    if Path(words.values[tool]).name == "tox":
        return _narrow_tox(words, tool, project_dir, gate, version) or Narrowed(command)
    return _narrow_nox(words, tool, project_dir, gate, version) or Narrowed(command)


def _words(command: str) -> _Words | None:
    if _OPAQUE.search(command):
        return None
    texts = _WORD.findall(command)
    try:
        values = [shlex.split(text)[0] if text else text for text in texts]
    except (ValueError, IndexError):
        return None
    return _Words(texts, values)


def _tool_index(values: list[str]) -> int | None:
    """Where tox or nox is in the command: the first ``tox``/``nox`` word
    that its own arguments follow (``uv run --only-group tox tox run -f
    lint``: the second)."""
    for index, value in enumerate(values):
        if Path(value).name not in ("tox", "nox"):
            continue
        after = values[index + 1] if index + 1 < len(values) else None
        if after is None or after.startswith("-") or after in _TOX_RUNS:
            return index
    return None


def _option(value: str, names: frozenset[str]) -> bool:
    """``value`` is one of the options ``names``, alone or with its argument
    joined (``-epy311``, ``--env=py311``)."""
    return any(
        value == name or value.startswith(name + "=") or (len(name) == 2 and value.startswith(name))
        for name in names
    )


# -- tox ----------------------------------------------------------------------


def _narrow_tox(
    words: _Words, tool: int, project_dir: Path, gate: str, version: str
) -> Narrowed | None:
    envs = _sessions.tox_envs(project_dir)
    values = words.values
    start = tool + 1
    if start < len(values) and not values[start].startswith("-"):
        if values[start] not in _TOX_RUNS:
            return None  # list, config, devenv …: runs no env
        start += 1
    picked: list[int] = []  # the words that select the envs
    selected: list[str] | None = None
    index = start
    while index < len(values) and values[index] != "--":
        value = values[index]
        if _option(value, _TOX_OPAQUE):
            return None
        joined = None
        if value in _TOX_ENV:
            picked += [index, index + 1]
            index += 1
            joined = values[index] if index < len(values) else ""
        elif _option(value, _TOX_ENV):
            picked.append(index)
            joined = value.split("=", 1)[1] if "=" in value else value[2:]
        elif value in ("-f", "--factors"):
            picked.append(index)
            factors: list[str] = []
            while index + 1 < len(values) and not values[index + 1].startswith("-"):
                index += 1
                picked.append(index)
                factors.append(values[index])
            selected = [name for name in envs.names() if set(factors) <= set(name.split("-"))]
        if joined is not None:
            names = _sessions.env_names(joined)
            selected = envs.names() if names == ["ALL"] else names
        index += 1
    if selected is None:
        selected = envs.env_list or ["py"]
    pinned = [name for name in selected if _sessions.tox_python(name, envs) is not None]
    here = [name for name in pinned if _sessions.runs_here(_sessions.tox_python(name, envs) or "")]
    if not pinned or here == pinned:
        return None
    if not here:
        first = pinned[0]
        factor = _sessions.tox_python(first, envs) or ""
        suggestion = None
        if factor in first.split("-"):  # named for its Python, not pinned by basepython
            mine = _as_factor(factor, version)
            instead = "-".join(mine if part == factor else part for part in first.split("-"))
            suggestion = _rewritten(words, start - 1, picked, ["-e", instead])
        found = [
            f"{name} ({_version(python)})"
            for name in envs.names()
            if (python := _sessions.tox_python(name, envs)) is not None
        ]
        fault = _fault("tox environment", pinned, found, version, gate, suggestion)
        return Narrowed(" ".join(words.texts), fault)
    kept = [name for name in selected if name not in pinned or name in here]
    return Narrowed(_rewritten(words, start - 1, picked, ["-e", ",".join(kept)]))


def _as_factor(factor: str, version: str) -> str:
    """This machine's ``version`` written as the project writes ``factor``
    (``py312`` → ``py311``, ``py3.12`` → ``py3.11``, ``3.12`` → ``3.11``)."""
    spec = re.match(r"^([a-z]*)(\d)(\.?)", factor)
    prefix, dot = (spec[1], spec[3]) if spec else ("py", "")
    return prefix + (version if dot or not prefix else version.replace(".", ""))


# -- nox ----------------------------------------------------------------------


def _narrow_nox(
    words: _Words, tool: int, project_dir: Path, gate: str, version: str
) -> Narrowed | None:
    noxfile = _sessions.nox_sessions(project_dir)
    values = words.values
    picked: list[int] = []
    selected: list[str] | None = None
    index = tool + 1
    while index < len(values) and values[index] != "--":
        value = values[index]
        if _option(value, _NOX_OPAQUE):
            return None
        if value in _NOX_SESSIONS:
            picked.append(index)
            selected = []
            while index + 1 < len(values) and not values[index + 1].startswith("-"):
                index += 1
                picked.append(index)
                selected.append(values[index])
        elif _option(value, _NOX_SESSIONS):
            return None  # ``--session=x`` and the like: rare, kept as written
        index += 1
    if selected is None:
        selected = noxfile.default_sessions or [
            name for name, session in noxfile.sessions.items() if session.default
        ]
    kept: list[str] = []
    pinned: list[str] = []
    for name in selected:
        session = noxfile.sessions.get(name)
        if session is not None and session.pythons is None:
            return None
        if session is None or not session.pythons:
            kept.append(name)  # one Python given (``tests-3.11``), none, or not a session we know
            continue
        pinned.append(name)
        if version in session.pythons:
            kept.append(name if len(session.pythons) == 1 else f"{name}-{version}")
    if not pinned or kept == selected:
        return None
    if len(kept) == len(selected) - len(pinned):
        suggestion = _rewritten(words, tool, picked, ["-s", *pinned, "--force-python", version])
        found = [
            f"{name} ({', '.join(session.pythons)})"
            for name, session in noxfile.sessions.items()
            if session.pythons
        ]
        fault = _fault("nox session", pinned, found, version, gate, suggestion)
        return Narrowed(" ".join(words.texts), fault)
    return Narrowed(_rewritten(words, tool, picked, ["-s", *kept]))


# -- both ---------------------------------------------------------------------


def _rewritten(words: _Words, after: int, picked: list[int], selection: list[str]) -> str:
    """The command with the words ``picked`` replaced by ``selection`` (put
    where the first of them was, else after word ``after``)."""
    where = picked[0] if picked else after + 1
    texts = [text for index, text in enumerate(words.texts) if index not in picked[1:]]
    new = [shlex.quote(word) for word in selection]
    if picked:
        texts[where : where + 1] = new
    else:
        texts[where:where] = new
    return " ".join(texts)


def _version(python: str) -> str:
    """A tox factor as the Python it names: ``py312`` → ``3.12``, ``pypy3.10`` → ``pypy3.10``."""
    spec = re.match(r"^(?:py|python|cpython)?(\d)\.?(\d*)(t?)$", Path(python).name)
    return f"{spec[1]}{'.' if spec[2] else ''}{spec[2]}{spec[3]}" if spec else python


def _fault(
    what: str,
    selected: list[str],
    found: list[str],
    version: str,
    gate: str,
    suggestion: str | None,
) -> str:
    """Why a command whose every interpreter is another one cannot run here."""
    key = "test" if gate == "tests" else gate
    line = f'[commands] {key} = "{suggestion}"' if suggestion else f"[commands] {key}"
    return (
        f"no {what} it runs ({', '.join(selected)}) is for this machine's Python {version}; "
        f"the project's: {', '.join(found)}. Install one of those Pythons, or set the gate's "
        f"command in stepkit.toml: {line}"
    )
