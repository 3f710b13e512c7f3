"""Helpers shared by the project-type plugins: reading manifests, finding
the lockfiles git tracks, the format placeholder for the changed files, what
the project runs (task runners, CI, pre-commit, tox/nox), the targets a
task-runner file really defines and what they run, and which commands need
a terminal.

Every reader is forgiving: a missing, unreadable or malformed file reads as
"nothing there" (None, ``{}`` or an empty set), so detection never fails a
command and never invents a target.  Nothing here runs a project's tools,
except ``just --summary`` (which only parses the justfile) when ``just`` is
installed; git is asked which lockfiles it tracks through
:mod:`stepkit.workspace.scope.git`.
"""

from __future__ import annotations

import configparser
import copy
import functools
import json
import re
import shutil
import subprocess
import tomllib
from collections.abc import Container, Iterable
from pathlib import Path
from typing import Any, NamedTuple

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.scope import git
from stepkit.yamltext import load_yaml

# -- files -------------------------------------------------------------------


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
    """A TOML file as a dict; ``{}`` when missing or malformed.  The file is
    read each time, parsed once per content (the detection reads
    ``pyproject.toml`` from many plugins); each caller gets its own copy."""
    try:
        data = path.read_bytes()
    except OSError:
        return {}
    return copy.deepcopy(_parsed_toml(data))


@functools.lru_cache(maxsize=32)
def _parsed_toml(data: bytes) -> dict[str, Any]:
    try:
        return tomllib.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
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
    text = read_text(path)
    if not text.strip():
        return {}  # missing or empty: no YAML reader needed (a project without such files never imports it)
    import yaml

    try:
        data = load_yaml(text)
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
    """The tool of the first ``(lockfile, tool)`` pair whose lockfile is the
    project's: it exists and git tracks it (any lockfile that exists counts
    in a project outside git).  An untracked lockfile is one a tool left
    behind (a ``uv run`` creates ``uv.lock``), not a choice the project made."""
    present = [(name, tool) for name, tool in lockfiles if (project_dir / name).is_file()]
    if not present:
        return None
    tracked = git.tracked_named(project_dir, tuple(name for name, _ in present))
    return next((tool for name, tool in present if tracked is None or name in tracked), None)


def is_tracked(project_dir: Path, name: str) -> bool:
    """``name`` exists and is the project's: git tracks it, or the project is not in git."""
    return which_lockfile(project_dir, [(name, name)]) is not None


def changed_files(*extensions: str) -> str:
    """The placeholder a format command takes its files from: the gate runner
    replaces it with the step's changed files (shell-quoted, relative to the
    project), only those with one of ``extensions`` when given, and skips the
    command when there are none — ``{files}`` or ``{files:.py,.pyi}``."""
    return f"{{files:{','.join(extensions)}}}" if extensions else "{files}"


# -- what the project runs ----------------------------------------------------

#: Files where a project says which tools it runs, beside its task runners:
#: pre-commit hooks, tox and nox sessions, CI configuration.
_AUTOMATION_FILES = (
    ".pre-commit-config.yaml",
    "tox.ini",
    "tox.toml",
    "noxfile.py",
    ".gitlab-ci.yml",
)
_CI_DIRS = (".github/workflows", ".circleci", ".gitlab")
#: The tables of manifests that hold commands (a dependency list does not say a tool runs).
_SCRIPT_TABLES = (
    ("pyproject.toml", ("tool", "poe")),
    ("pyproject.toml", ("tool", "hatch", "envs")),
    ("pyproject.toml", ("tool", "pdm", "scripts")),
    ("pyproject.toml", ("tool", "taskipy")),
    ("pyproject.toml", ("tool", "tox")),
)


#: A ``#`` comment of a Makefile, YAML, INI or Python file (``# black compat`` runs nothing).
_COMMENT = lazy_compile(r"(?:^|(?<=\s))#.*$", re.MULTILINE)


def automation_text(project_dir: Path) -> str:
    """The text of everything where the project says what it runs: its
    Makefile, justfile and Taskfile, pre-commit config, tox and nox files,
    CI workflows, the scripts of package.json and deno.json and the task
    tables of pyproject.toml (poe, hatch, pdm, taskipy, tox), and the shell
    scripts of the project these run by path; comments left out."""
    names = (*MAKEFILE_NAMES, *JUSTFILE_NAMES, *TASKFILE_NAMES, *_AUTOMATION_FILES)
    paths = [project_dir / name for name in names]
    for folder in _CI_DIRS:
        if (project_dir / folder).is_dir():
            paths += sorted(
                p for p in (project_dir / folder).rglob("*") if p.suffix in (".yml", ".yaml")
            )
    texts = [_COMMENT.sub("", read_text(path)) for path in paths if path.is_file()]
    texts += [json.dumps(package_scripts(project_dir / "package.json"))]
    for name in ("deno.json", "deno.jsonc"):
        texts.append(json.dumps(read_json(project_dir / name, comments=True).get("tasks") or {}))
    for name, keys in _SCRIPT_TABLES:
        texts.append(json.dumps(table(read_toml(project_dir / name), *keys)))
    texts += _scripts_run(project_dir, "\n".join(texts))
    return "\n".join(texts)


#: A project's own shell script run by path (``scripts/check``, ``./tools/lint.sh``, ``bash x/y``).
_SCRIPT_PATH = lazy_compile(r"""(?:^|(?<=[\s"'=;&|(]))(?:\./)?(?P<path>[\w.-]+(?:/[\w.-]+)+)""")
#: The most of a script that is read (a script this long is no task list).
_SCRIPT_MAX_BYTES = 64 * 1024


def _scripts_run(project_dir: Path, text: str) -> list[str]:
    """The text of each shell script of the project that ``text`` runs by
    its path (starlette's CI runs ``scripts/check``, which runs ``ruff
    format --check``): what it runs, the project runs.  One level deep."""
    found = []
    for rel in dict.fromkeys(m["path"] for m in _SCRIPT_PATH.finditer(text)):
        path = project_dir / rel
        if path.suffix not in ("", ".sh", ".bash") or not path.is_file() or path.is_symlink():
            continue
        if path.stat().st_size <= _SCRIPT_MAX_BYTES and read_text(path).startswith("#!"):
            found.append(_COMMENT.sub("", read_text(path)))
    return found


def runs(project_dir: Path, *commands: str) -> bool:
    """The project runs one of ``commands`` (``ruff format``, ``cargo clippy``)
    in a task runner, CI workflow, pre-commit hook or tox/nox session: its
    words, as a command, appear in one of those files."""
    text = automation_text(project_dir)
    for command in commands:
        words = r"\s+".join(re.escape(word) for word in command.split())
        if re.search(rf"(?<![\w./-]){words}(?![\w-])", text):
            return True
    return False


def precommit_hooks(project_dir: Path) -> set[str]:
    """The ids of the hooks ``.pre-commit-config.yaml`` lists."""
    ids = set()
    for repo in read_yaml(project_dir / ".pre-commit-config.yaml").get("repos") or []:
        for hook in (repo.get("hooks") or []) if isinstance(repo, dict) else []:
            if isinstance(hook, dict) and isinstance(hook.get("id"), str):
                ids.add(hook["id"])
    return ids


# -- commands that need a terminal --------------------------------------------

_NEEDS_TERMINAL = (
    lazy_compile(
        r"\b(?:docker|podman)\s+(?:container\s+)?(?:run|exec|create)\b[^\n;&|]*?"
        r"\s(?:-[a-zA-Z]*t[a-zA-Z]*|--tty)(?=\s|$)"
    ),
    lazy_compile(
        r"\b(?:docker[\s-]compose|podman-compose)\b[^\n;&|]*?\s(?:run|exec)\b"
        r"(?![^\n;&|]*\s(?:-[a-zA-Z]*T[a-zA-Z]*|--no-TTY|--no-tty)(?=\s|$))"
    ),
)


def needs_terminal(script: str) -> str | None:
    """The part of ``script`` that needs a terminal a gate does not have
    (``docker run -it``, ``docker compose run`` without ``-T``), else None."""
    for pattern in _NEEDS_TERMINAL:
        match = pattern.search(script)
        if match:
            return " ".join(match.group(0).split())
    return None


# -- Makefile ----------------------------------------------------------------

MAKEFILE_NAMES = ("GNUmakefile", "makefile", "Makefile")  # make's own search order

_RULE = lazy_compile(r"^(?P<targets>[^\t#:=][^:=#]*?)\s*(?P<colons>::?)(?P<rest>.*)$")
_ASSIGNMENT = lazy_compile(r"^\s*(?:override\s+|export\s+)?[\w.$(){}-]+\s*(?:\+|\?|:|::|!)?=")
_INCLUDE = lazy_compile(r"^-?s?include\s+(?P<files>.+)$")
_DIRECTIVE = lazy_compile(
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
    return set(makefile_recipes(path))


def makefile_recipes(path: Path) -> dict[str, str]:
    """Each explicit target (as :func:`makefile_targets` finds them) and what
    making it runs: its recipe lines, then its prerequisites' recipes."""
    rules: dict[str, tuple[list[str], list[str]]] = {}
    _read_makefile(path, rules, seen=set())

    def recipe(name: str, seen: set[str]) -> list[str]:
        seen.add(name)
        prerequisites, lines = rules[name]
        below = [recipe(p, seen) for p in prerequisites if p in rules and p not in seen]
        return lines + [line for lines_ in below for line in lines_]

    return {name: "\n".join(recipe(name, set())) for name in rules}


def _read_makefile(
    path: Path, rules: dict[str, tuple[list[str], list[str]]], seen: set[Path]
) -> None:
    """Add ``path``'s rules to ``rules`` (target → prerequisites, recipe lines)."""
    resolved = path.resolve()
    if resolved in seen or not path.is_file():
        return
    seen.add(resolved)
    in_define = 0
    current: list[str] = []  # the targets of the rule whose recipe is being read
    for line in _logical_lines(read_text(path)):
        stripped = line.strip()
        if re.match(r"^(?:override\s+|export\s+)?define(?:\s|$)", stripped):
            in_define += 1
            continue
        if in_define:
            in_define -= stripped == "endef"
            continue
        if line.startswith("\t"):
            for name in current:
                rules[name][1].append(stripped)
            continue
        if not stripped or stripped.startswith("#"):
            continue
        current = []
        include = _INCLUDE.match(stripped)
        if include:
            for name in include.group("files").split():
                if "$" not in name and "%" not in name:
                    _read_makefile(path.parent / name, rules, seen)
            continue
        if _ASSIGNMENT.match(line) or _DIRECTIVE.match(stripped):
            continue
        rule = _RULE.match(line)
        if not rule or rule.group("rest").startswith("="):
            continue  # ':=' / '::=' assignments
        if _ASSIGNMENT.match(rule.group("rest").split(";", 1)[0]) and "=" in rule.group("rest"):
            continue  # target-specific variable: 'test: VAR = value'
        prerequisites, _, inline = rule.group("rest").partition(";")
        current = [
            name
            for name in rule.group("targets").split()
            if not name.startswith(".") and "%" not in name and "$" not in name
        ]
        for name in current:
            rules.setdefault(name, ([], []))[0].extend(prerequisites.split())
            if inline.strip():
                rules[name][1].append(inline.strip())


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

_RECIPE = lazy_compile(r"^@?(?P<name>[A-Za-z_][A-Za-z0-9_-]*)(?:\s+[^:]*?)?\s*:(?!=)")
_JUST_KEYWORDS = {"alias", "export", "set", "import", "mod", "unexport"}


def justfile_recipes(path: Path) -> dict[str, str]:
    """The recipes a justfile defines, each with its body (``""`` for one
    whose body is not in this file: an imported recipe).

    Asks ``just --summary`` (which parses without running anything) when
    ``just`` is installed, so imports and modules count; otherwise reads the
    file: a recipe is a line at column 0 of the form ``name params…:``, its
    body the indented lines below it.
    """
    if not path.is_file():
        return {}
    bodies: dict[str, list[str]] = {}
    body: list[str] | None = None
    for line in read_text(path).splitlines():
        if line[:1].isspace():
            if body is not None and line.strip():
                body.append(line.strip())
            continue
        if not line.strip() or line.startswith("#"):
            continue
        match = _RECIPE.match(line)
        body = None
        if match and match.group("name") not in _JUST_KEYWORDS:
            body = bodies.setdefault(match.group("name"), [])
    names = _just_summary(path)
    return {name: "\n".join(bodies.get(name, [])) for name in (bodies if names is None else names)}


def _just_summary(path: Path) -> list[str] | None:
    """The recipe names ``just --summary`` lists; None when just is missing or fails."""
    just = shutil.which("just")
    if not just:
        return None
    try:
        done = subprocess.run(
            [just, "--justfile", str(path), "--working-directory", str(path.parent), "--summary"],
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.split() if done.returncode == 0 else None


# -- Taskfile ----------------------------------------------------------------

TASKFILE_NAMES = (
    "Taskfile.yml",
    "taskfile.yml",
    "Taskfile.yaml",
    "taskfile.yaml",
    "Taskfile.dist.yml",
    "taskfile.dist.yml",
    "Taskfile.dist.yaml",
    "taskfile.dist.yaml",
)


def taskfile_tasks(path: Path) -> dict[str, str]:
    """The tasks a Taskfile defines (the keys of its ``tasks`` mapping), each
    with the commands it lists."""
    tasks = read_yaml(path).get("tasks")
    return (
        {str(name): "\n".join(_strings(task)) for name, task in tasks.items()}
        if isinstance(tasks, dict)
        else {}
    )


def _strings(value: Any) -> Iterable[str]:
    """Every string inside a parsed YAML value."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


# -- JSONC -------------------------------------------------------------------

_JSONC_TOKEN = lazy_compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def _strip_jsonc(text: str) -> str:
    """Remove comments and trailing commas outside strings."""
    return _JSONC_TOKEN.sub(lambda m: m.group(0) if m.group(0).startswith('"') else "", text)
