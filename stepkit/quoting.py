"""How an argument vector becomes the text a tool parses back into the same words.

stepkit keeps what it adds to a command as a list of words (a report path,
a flag, a test id) and turns it into text only here, once per parser: the
shell that runs a command (:func:`shell`), pytest reading ``PYTEST_ADDOPTS``
(:func:`pytest_addopts`) and a path option's value (:func:`pytest_path`), node reading ``NODE_OPTIONS`` (:func:`node_options`).
So a project path holding a space, a quote, a ``$`` or a non-ASCII letter
reaches the tool as one word, whatever the path.  :func:`extend_variable`
appends words to such a variable, keeping what the user's environment
already holds there.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path


def shell(words: Iterable[str]) -> str:
    """``words`` as a POSIX shell reads them (a gate command, ``sh -c``)."""
    return shlex.join(words)


def pytest_addopts(words: Iterable[str]) -> str:
    """``words`` as pytest reads ``PYTEST_ADDOPTS``: it splits the variable
    with ``shlex.split``, so the shell's quoting is its."""
    return shlex.join(words)


#: The variable naming a path pytest would expand (:func:`pytest_path`).
PYTEST_PATH_VARIABLE = "STEPKIT_PYTEST_PATH"


def pytest_path(path: Path) -> tuple[str, dict[str, str]]:
    """``path`` as the value of a pytest path option (``--junitxml``), which
    pytest expands with ``os.path.expandvars``, and the variables it needs:
    a path holding a ``$`` is named through :data:`PYTEST_PATH_VARIABLE`
    (expanded once, so the ``$`` in its value stay)."""
    text = str(path)
    if "$" not in text:
        return text, {}
    return f"${{{PYTEST_PATH_VARIABLE}}}", {PYTEST_PATH_VARIABLE: text}


def node_options(words: Iterable[str]) -> str:
    """``words`` as node reads ``NODE_OPTIONS``: split at spaces outside
    double quotes, a backslash escaping the next character inside them (no
    single quotes, no other whitespace splits)."""
    return " ".join(_node_word(word) for word in words)


def _node_word(word: str) -> str:
    if word and not any(c in word for c in ' "\\'):
        return word
    return '"' + word.replace("\\", "\\\\").replace('"', '\\"') + '"'


#: The parser of each variable stepkit adds options to.
OPTION_VARIABLES: dict[str, Callable[[Iterable[str]], str]] = {
    "PYTEST_ADDOPTS": pytest_addopts,
    "NODE_OPTIONS": node_options,
}


def extend_variable(name: str, words: Iterable[str], base_env: Mapping[str, str] | None) -> str:
    """The value of the options variable ``name`` with ``words`` after what
    ``base_env`` (default: this process's environment) holds there."""
    existing = (base_env if base_env is not None else os.environ).get(name, "").strip()
    return f"{existing} {OPTION_VARIABLES[name](words)}".strip()
