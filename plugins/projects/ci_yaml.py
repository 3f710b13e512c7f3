"""Reading the commands out of CI files (:mod:`stepkit.plugins.projects.ci_files`
lists the files and says which commands are kept), each a :class:`CiCommand`:
the YAML composed with line numbers, GitHub's steps, GitLab's scripts and
pre-commit's local hooks.  Imported only when a project has a CI file,
with PyYAML."""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import yaml

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared
from stepkit.yamltext import safe_loader


class CiCommand(NamedTuple):
    """One command a CI file runs."""

    #: the command as the gate would run it (``cd sub && make test`` for a working-directory).
    command: str
    #: ``.github/workflows/ci.yml:42`` — the file, relative to the project, and the 1-based line.
    source: str
    #: the file and job it runs in (``.github/workflows/ci.yml:test``): commands of one job run in line order.
    job: str = ""
    #: what CI calls it: the GitHub step's ``name``, the GitLab job's (``Run tests``, ``lint``)
    title: str = ""


#: Words that make a line CI-only: GitHub expressions and the runners' own variables.
_CI_ONLY = lazy_compile(r"\$\{\{|\$\{?(?:GITHUB_|RUNNER_|CI_JOB_TOKEN|CI_REGISTRY)|\bsecrets\.")
_OTHER_SHELLS = ("pwsh", "powershell", "cmd")


@lru_cache(maxsize=16)
def parsed(project_dir: Path, stamps: tuple[tuple[str, int, int], ...]) -> tuple[CiCommand, ...]:
    """The commands of the CI files ``stamps`` names (path, size, mtime: the cache key), in
    :func:`~stepkit.plugins.projects.ci_files.ci_commands`'s order."""
    workflows: list[tuple[bool, list[CiCommand]]] = []
    found: list[CiCommand] = []
    for name, _size, _mtime in stamps:
        path = Path(name)
        if path.name == ".gitlab-ci.yml":
            found += _gitlab(path, project_dir)
        elif path.name == ".pre-commit-config.yaml":
            found += _precommit(path, project_dir)
        else:
            root = _compose(path)
            workflows.append((not _checks_changes(root), _github(root, path, project_dir)))
    # workflows a push or pull request triggers first: a release or docs workflow is not the check
    ordered = [
        command for _, commands in sorted(workflows, key=lambda w: w[0]) for command in commands
    ]
    return tuple(ordered + found)


def _checks_changes(root: yaml.Node | None) -> bool:
    """The workflow runs on a push or a pull request (``on:`` as a name, a list or a mapping)."""
    on = _get(root, "on")
    if isinstance(on, yaml.ScalarNode):
        names = {on.value}
    elif isinstance(on, yaml.SequenceNode):
        names = {_text(item) for item in on.value}
    else:
        names = {key for key, _ in _items(on)}
    return bool(names & {"push", "pull_request", "pull_request_target", "merge_group"})


# -- YAML with line numbers -----------------------------------------------------


def _compose(path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(_shared.read_text(path), Loader=safe_loader())
    except yaml.YAMLError:
        return None


def _get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of ``key`` in a mapping node."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def _items(node: yaml.Node | None) -> list[tuple[str, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(k.value, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)]


def _text(node: yaml.Node | None) -> str:
    return node.value if isinstance(node, yaml.ScalarNode) else ""


def _script_lines(node: yaml.ScalarNode) -> list[tuple[str, int]]:
    """Each shell line of a scalar with its 1-based line in the file;
    backslash continuations are joined onto their first line."""
    block = node.style == "|"  # a folded (">") scalar is one line already
    first = node.start_mark.line + (2 if node.style in ("|", ">") else 1)
    lines: list[tuple[str, int]] = []
    pending, pending_at = "", 0
    depth = 0  # inside if/for/while/case: the line runs only on a condition CI decides
    directory = ""  # a line `cd DIR` alone moves the lines below it
    for offset, raw in enumerate(node.value.split("\n") if block else [node.value]):
        line = raw.strip()
        if pending:
            line, at = f"{pending} {line}", pending_at
        else:
            at = first + offset
        if line.endswith("\\"):
            pending, pending_at = line[:-1].strip(), at
            continue
        pending = ""
        if not line or line.startswith("#"):
            continue
        first_word = line.split()[0].rstrip(";")
        if first_word in _OPENERS and re.search(r"\b(?:fi|done|esac)$", line):
            continue  # a one-line conditional
        depth += first_word in _OPENERS
        if first_word in _CLOSERS:
            depth = max(depth - 1, 0)
            continue
        if depth:
            continue
        if first_word == "cd" and len(line.split()) == 2:
            directory = f"{directory}/{line.split()[1]}" if directory else line.split()[1]
            continue
        lines.append((_in_dir(line, directory) if directory else line, at))
    return lines


_OPENERS = {"if", "for", "while", "until", "case", "select"}
_CLOSERS = {"fi", "done", "esac"}


def _relative(path: Path, project_dir: Path) -> str:
    return path.relative_to(project_dir).as_posix()


def _in_dir(command: str, directory: str) -> str:
    directory = directory.strip().removeprefix("./").rstrip("/")
    return command if directory in ("", ".") else f"{quoting.shell(['cd', directory])} && {command}"


def _runnable(command: str) -> bool:
    return not _CI_ONLY.search(command)


# -- GitHub Actions --------------------------------------------------------------


def _github(root: yaml.Node | None, path: Path, project_dir: Path) -> list[CiCommand]:
    name = _relative(path, project_dir)
    found: list[CiCommand] = []
    on_macos: list[CiCommand] = []
    workflow_dir = _text(_get(_get(_get(root, "defaults"), "run"), "working-directory"))
    for job_name, job in _items(_get(root, "jobs")):
        runs_on = _text(_get(job, "runs-on")).lower()
        if "windows" in runs_on:
            continue
        into = on_macos if "macos" in runs_on or "mac-" in runs_on else found
        job_run = _get(_get(job, "defaults"), "run")
        job_dir = _text(_get(job_run, "working-directory")) or workflow_dir
        steps = _get(job, "steps")
        for step in steps.value if isinstance(steps, yaml.SequenceNode) else []:
            run = _get(step, "run")
            shell = (_text(_get(step, "shell")) or _text(_get(job_run, "shell"))).split()
            if not isinstance(run, yaml.ScalarNode) or (shell and shell[0] in _OTHER_SHELLS):
                continue
            directory = _text(_get(step, "working-directory")) or job_dir
            if not _runnable(directory):
                continue
            ci_vars = _ci_only_vars(root, job, step)
            into += [
                CiCommand(
                    _in_dir(line, directory),
                    f"{name}:{at}",
                    f"{name}:{job_name}",
                    _text(_get(step, "name")),
                )
                for line, at in _script_lines(run)
                if _runnable(line) and not _uses(line, ci_vars)
            ]
    return (
        found + on_macos
    )  # a job only on macOS: its commands, after the others (most run here too)


def _ci_only_vars(*scopes: yaml.Node | None) -> set[str]:
    """The ``env:`` variables of the workflow, job or step whose value is a
    GitHub expression (``PYTHON: ${{ matrix.python }}``): unset here."""
    return {
        key
        for scope in scopes
        for key, value in _items(_get(scope, "env"))
        if not _runnable(_text(value))
    }


def _uses(line: str, variables: set[str]) -> bool:
    return any(re.search(rf"\$\{{?{re.escape(var)}\b", line) for var in variables)


# -- GitLab CI -------------------------------------------------------------------

_GITLAB_KEYWORDS = {
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
}


def _gitlab(path: Path, project_dir: Path) -> list[CiCommand]:
    name = _relative(path, project_dir)
    found = []
    for job_name, job in _items(_compose(path)):
        if job_name in _GITLAB_KEYWORDS or job_name.startswith("."):
            continue  # a keyword, or a hidden job (a template)
        script = _get(job, "script")
        entries = script.value if isinstance(script, yaml.SequenceNode) else [script]
        for entry in entries:
            if isinstance(entry, yaml.ScalarNode):
                found += [
                    CiCommand(line, f"{name}:{at}", f"{name}:{job_name}", job_name)
                    for line, at in _script_lines(entry)
                    if _runnable(line)
                ]
    return found


# -- pre-commit ------------------------------------------------------------------


def _precommit(path: Path, project_dir: Path) -> list[CiCommand]:
    """The ``entry`` of each ``repo: local`` hook in the ``system`` language:
    a command of the project's own, run as written (other hooks install
    their tools from the network first)."""
    name = _relative(path, project_dir)
    found = []
    repos = _get(_compose(path), "repos")
    for repo in repos.value if isinstance(repos, yaml.SequenceNode) else []:
        hooks = _get(repo, "hooks")
        if _text(_get(repo, "repo")) != "local" or not isinstance(hooks, yaml.SequenceNode):
            continue
        for hook in hooks.value:
            entry = _get(hook, "entry")
            if _text(_get(hook, "language")) == "system" and isinstance(entry, yaml.ScalarNode):
                found.append(CiCommand(entry.value.strip(), f"{name}:{entry.start_mark.line + 1}"))
    return found
