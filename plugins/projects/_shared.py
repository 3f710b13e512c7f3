"""Helpers shared by the project-type plugins: recognising a project by a
file, reading manifests, finding lockfiles, listing the targets a
task-runner file really defines.

Every reader is forgiving: a missing, unreadable or malformed file reads as
"nothing there" (None, ``{}`` or an empty set), so detection never fails a
command and never invents a target.  Nothing here runs a project's tools,
except ``just --summary`` (which only parses the justfile) when ``just`` is
installed.
"""

from __future__ import annotations

import configparser
import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Callable, Container, Iterable
from pathlib import Path
from typing import Any, NamedTuple

import yaml

# -- files -------------------------------------------------------------------


def recognised_by(*names: str) -> Callable[[Path], Path | None]:
    """A ``read`` for a project type recognised by a file (``go.mod``): the
    project dir when one of ``names`` is a file in it, else None."""
    return lambda project_dir: project_dir if first_file(project_dir, names) else None


def first_file(project_dir: Path, names: Iterable[str]) -> Path | None:
    """The first of ``names`` that is a file in ``project_dir``."""
    for name in names:
        path = project_dir / name
        if path.is_file():
            return path
    return None


def read_text(path: Path) -> str:
    """The file's text, or ``""`` when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


def read_toml(path: Path) -> dict[str, Any]:
    """A TOML file as a dict; ``{}`` when missing or malformed."""
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def read_json(path: Path, *, comments: bool = False) -> dict[str, Any]:
    """A JSON object file as a dict; ``{}`` when missing, malformed or not an object.

    :param comments: accept JSONC (``//`` and ``/* */`` comments, trailing
        commas), as in ``deno.jsonc`` and ``tsconfig.json``.
    """
    text = read_text(path)
    if comments:
        text = _strip_jsonc(text)
    try:
        data = json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def read_yaml(path: Path) -> dict[str, Any]:
    """A YAML mapping file as a dict; ``{}`` when missing, malformed or not a mapping."""
    try:
        data = yaml.safe_load(read_text(path))
    except yaml.YAMLError:
        return {}
    return data if isinstance(data, dict) else {}


def read_ini(path: Path) -> configparser.ConfigParser:
    """An INI file (setup.cfg, tox.ini, mypy.ini); empty when missing or malformed."""
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(read_text(path), source=str(path))
    except configparser.Error:
        return configparser.ConfigParser(interpolation=None)
    return parser


def table(data: dict[str, Any], *keys: str) -> dict[str, Any]:
    """``data[k1][k2]…`` when every level is a table, else ``{}``."""
    for key in keys:
        value = data.get(key)
        if not isinstance(value, dict):
            return {}
        data = value
    return data


class Targets(NamedTuple):
    """What a runner defines (npm scripts, deno tasks, Makefile targets) and
    how it runs one."""

    #: the command that runs a target: ``npm run``, ``deno task``, ``make``.
    runner: str
    #: the names defined.
    defined: Container[str]

    def command(self, *names: str) -> str | None:
        """``runner`` and the first of ``names`` that is defined (``npm run
        lint``); None when none is."""
        name = next((name for name in names if name in self.defined), None)
        return f"{self.runner} {name}" if name else None


def package_scripts(path: Path) -> dict[str, str]:
    """The ``scripts`` table of a package.json / composer.json (names → commands)."""
    scripts = read_json(path).get("scripts")
    if not isinstance(scripts, dict):
        return {}
    return {str(k): v if isinstance(v, str) else json.dumps(v) for k, v in scripts.items()}


def which_lockfile(project_dir: Path, lockfiles: Iterable[tuple[str, str]]) -> str | None:
    """The tool of the first ``(lockfile, tool)`` pair whose lockfile exists."""
    for name, tool in lockfiles:
        if (project_dir / name).is_file():
            return tool
    return None


# -- Makefile ----------------------------------------------------------------

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")  # make's own search order

_RULE = re.compile(r"^(?P<targets>[^\t#:=][^:=#]*?)\s*(?P<colons>::?)(?P<rest>.*)$")
_ASSIGNMENT = re.compile(r"^\s*(?:override\s+|export\s+)?[\w.$(){}-]+\s*(?:\+|\?|:|::|!)?=")
_INCLUDE = re.compile(r"^-?s?include\s+(?P<files>.+)$")
_DIRECTIVE = re.compile(
    r"^(?:ifeq|ifneq|ifdef|ifndef|else|endif|vpath|undefine|unexport|private|override|export)(?=[\s(]|$)"
)


def makefile_targets(path: Path) -> set[str]:
    """The explicit targets a Makefile defines (and the files it includes literally).

    A careful reading of make's syntax rather than running make: recipe
    lines, ``define`` blocks, variable assignments, target-specific
    variables, special (``.PHONY``) and pattern (``%``) targets and targets
    named through variables are skipped; ``include`` lines naming plain
    files are followed.
    """
    return _makefile_targets(path, seen=set())


def _makefile_targets(path: Path, seen: set[Path]) -> set[str]:
    resolved = path.resolve()
    if resolved in seen or not path.is_file():
        return set()
    seen.add(resolved)
    targets: set[str] = set()
    in_define = 0
    for line in _logical_lines(read_text(path)):
        stripped = line.strip()
        if re.match(r"^(?:override\s+|export\s+)?define(?:\s|$)", stripped):
            in_define += 1
            continue
        if in_define:
            in_define -= stripped == "endef"
            continue
        if line.startswith("\t") or not stripped or stripped.startswith("#"):
            continue
        include = _INCLUDE.match(stripped)
        if include:
            for name in include.group("files").split():
                if "$" not in name and "%" not in name:
                    targets |= _makefile_targets(path.parent / name, seen)
            continue
        if _ASSIGNMENT.match(line) or _DIRECTIVE.match(stripped):
            continue
        rule = _RULE.match(line)
        if not rule or rule.group("rest").startswith("="):
            continue  # ':=' / '::=' assignments
        if _ASSIGNMENT.match(rule.group("rest").split(";", 1)[0]) and "=" in rule.group("rest"):
            continue  # target-specific variable: 'test: VAR = value'
        for name in rule.group("targets").split():
            if not name.startswith(".") and "%" not in name and "$" not in name:
                targets.add(name)
    return targets


def _logical_lines(text: str) -> list[str]:
    """Join backslash-continued lines, as make reads them."""
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        if raw.endswith("\\"):
            pending += raw[:-1] + " "
            continue
        lines.append(pending + raw)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


# -- justfile ----------------------------------------------------------------

JUSTFILE_NAMES = ("justfile", "Justfile", ".justfile", "JUSTFILE")

_RECIPE = re.compile(r"^@?(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?:\s+[^:]*?)?\s*:(?!=)")
_JUST_KEYWORDS = {"alias", "export", "set", "import", "mod", "unexport"}


def justfile_recipes(path: Path) -> set[str]:
    """The recipes a justfile defines.

    Asks ``just --summary`` (which parses without running anything) when
    ``just`` is installed, so imports and modules count; otherwise reads the
    file: a recipe is a line at column 0 of the form ``name params…:``.
    """
    if not path.is_file():
        return set()
    just = shutil.which("just")
    if just:
        try:
            done = subprocess.run(
                [just, "--justfile", str(path), "--working-directory", str(path.parent), "--summary"],
                capture_output=True, text=True, timeout=20, check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            done = None
        if done is not None and done.returncode == 0:
            return set(done.stdout.split())
    recipes = set()
    for line in read_text(path).splitlines():
        if line[:1].isspace() or line.startswith("#"):
            continue
        match = _RECIPE.match(line)
        if match and match.group("name") not in _JUST_KEYWORDS:
            recipes.add(match.group("name"))
    return recipes


# -- Taskfile ----------------------------------------------------------------

TASKFILE_NAMES = (
    "Taskfile.yml", "taskfile.yml", "Taskfile.yaml", "taskfile.yaml",
    "Taskfile.dist.yml", "taskfile.dist.yml", "Taskfile.dist.yaml", "taskfile.dist.yaml",
)


def taskfile_tasks(path: Path) -> set[str]:
    """The task names a Taskfile defines (the keys of its ``tasks`` mapping)."""
    tasks = read_yaml(path).get("tasks")
    return {str(name) for name in tasks} if isinstance(tasks, dict) else set()


# -- JSONC -------------------------------------------------------------------

_JSONC_TOKEN = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def _strip_jsonc(text: str) -> str:
    """Remove comments and trailing commas outside strings."""
    return _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
