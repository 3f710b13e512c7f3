"""Reading the commands out of CI files (:mod:`stepkit.plugins.projects.ci_files`
lists the files and merges what they run), each a :class:`CiCommand`: the
YAML composed with line numbers and the shell lines of a script, GitLab's
scripts and pre-commit's local hooks (GitHub's workflows are
:mod:`stepkit.plugins.projects.ci_github`'s).  Imported only when a project
has a CI file, with PyYAML."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from stepkit import quoting
from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import _shared
from stepkit.plugins.projects.ci_expr import UNKNOWN, Closed, evaluate, truthy
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
    #: why it cannot run here as CI runs it (``its step's `if:` is false here``); "" when it can.
    skipped: str = ""
    #: why its workflow or job is not for checking changes (``it is for benchmarks``); "" when it is.
    aside: str = ""
    #: it runs only on macOS (most such commands run here too, after the others).
    on_macos: bool = False


#: Words that make a line CI-only: GitHub expressions and the runners' own variables.
CI_ONLY = lazy_compile(r"\$\{\{|\$\{?(?:GITHUB_|RUNNER_|CI_JOB_TOKEN|CI_REGISTRY)|\bsecrets\.")
OTHER_SHELLS = ("pwsh", "powershell", "cmd")


# -- YAML with line numbers -----------------------------------------------------


def compose(path: Path) -> yaml.Node | None:
    try:
        return yaml.compose(_shared.read_text(path), Loader=safe_loader())
    except yaml.YAMLError:
        return None


def get(node: yaml.Node | None, key: str) -> yaml.Node | None:
    """The value node of ``key`` in a mapping node."""
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.value == key:
                return v
    return None


def items(node: yaml.Node | None) -> list[tuple[str, yaml.Node]]:
    if not isinstance(node, yaml.MappingNode):
        return []
    return [(k.value, v) for k, v in node.value if isinstance(k, yaml.ScalarNode)]


def text(node: yaml.Node | None) -> str:
    return node.value if isinstance(node, yaml.ScalarNode) else ""


def script_lines(node: yaml.ScalarNode) -> list[tuple[str, int]]:
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
        lines.append((in_dir(line, directory) if directory else line, at))
    return lines


_OPENERS = {"if", "for", "while", "until", "case", "select"}
_CLOSERS = {"fi", "done", "esac"}


def relative(path: Path, project_dir: Path) -> str:
    return path.relative_to(project_dir).as_posix()


def in_dir(command: str, directory: str) -> str:
    directory = directory.strip().removeprefix("./").rstrip("/")
    return command if directory in ("", ".") else f"{quoting.shell(['cd', directory])} && {command}"


def runnable(command: str) -> bool:
    return not CI_ONLY.search(command)


def value(node: yaml.Node | None) -> Any:
    """A node as an expression value: mappings and sequences as dicts and
    lists, a boolean or null scalar as such, any other scalar as its text
    (``3.10`` stays ``"3.10"``)."""
    if isinstance(node, yaml.MappingNode):
        return {key: value(item) for key, item in items(node)}
    if isinstance(node, yaml.SequenceNode):
        return [value(item) for item in node.value]
    if isinstance(node, yaml.ScalarNode):
        if node.tag.endswith(":bool"):
            return node.value.lower() in ("true", "yes", "on")
        if node.tag.endswith(":null"):
            return None
        return node.value
    return None


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


def gitlab(path: Path, project_dir: Path, branch: str) -> list[CiCommand]:
    """Each job's ``script:`` lines as GitLab runs them for a push to
    ``branch``, the default branch: the job's and the file's ``variables:``
    put in, and a job passed over (its lines kept, with the reason) when its
    ``rules:`` or ``only:``/``except:`` leave it out of that pipeline, it waits
    for a click (``when: manual``) or it needs ``services:``."""
    name = relative(path, project_dir)
    root = compose(path)
    defaults = _variables(get(root, "variables"))
    found = []
    for job_name, job in items(root):
        if job_name in _GITLAB_KEYWORDS or job_name.startswith("."):
            continue  # a keyword, or a hidden job (a template)
        variables = {**defaults, **_variables(get(job, "variables"))}
        why = _gitlab_not_here(job, {**_gitlab_predefined(branch), **variables})
        script = get(job, "script")
        entries = script.value if isinstance(script, yaml.SequenceNode) else [script]
        for entry in entries:
            if isinstance(entry, yaml.ScalarNode):
                for line, at in script_lines(entry):
                    line = _put_variables(line, variables)
                    skipped = why or ("" if runnable(line) else "it uses a variable only CI has")
                    found.append(
                        CiCommand(line, f"{name}:{at}", f"{name}:{job_name}", job_name, skipped)
                    )
    return found


def _variables(node: yaml.Node | None) -> dict[str, str]:
    """``variables:`` (``NAME: value`` or ``NAME: {value: …}``) as text."""
    return {key: text(value) or text(get(value, "value")) for key, value in items(node)}


def _gitlab_predefined(branch: str) -> dict[str, str]:
    """GitLab's own variables in a branch pipeline for a push to ``branch``."""
    return {
        "CI": "true",
        "GITLAB_CI": "true",
        "CI_PIPELINE_SOURCE": "push",
        "CI_COMMIT_BRANCH": branch,
        "CI_COMMIT_REF_NAME": branch,
        "CI_COMMIT_REF_SLUG": branch,
        "CI_DEFAULT_BRANCH": branch,
    }


def _gitlab_not_here(job: yaml.Node, variables: dict[str, str]) -> str:
    """Why ``job`` does not run (as written) in the pipeline of a push to the
    default branch; "" when it does."""
    if get(job, "services") is not None:
        return "its job needs service containers (`services:`), which a gate does not start"
    when = text(get(job, "when"))
    rules = get(job, "rules")
    if isinstance(rules, yaml.SequenceNode):
        for rule in rules.value:
            condition = text(get(rule, "if"))
            verdict = _gitlab_condition(condition, variables) if condition else True
            if verdict is None:
                return f"its job's rule `if: {condition}` cannot be evaluated here"
            if verdict:
                when = text(get(rule, "when")) or when
                break
        else:
            return "no rule of its job runs it in a push pipeline of the default branch"
    if when in ("manual", "never", "delayed"):
        return f"its job runs only `when: {when}`"
    refs = {text(n) for n in _sequence(get(job, "only")) + _sequence(get(get(job, "only"), "refs"))}
    if refs and not refs & {"branches", "pushes", variables["CI_COMMIT_BRANCH"]}:
        return f"its job runs only on {', '.join(sorted(refs))}"
    return ""


def _sequence(node: yaml.Node | None) -> list[yaml.Node]:
    return list(node.value) if isinstance(node, yaml.SequenceNode) else []


#: ``$VAR``/``${VAR}`` in a GitLab rule or script, a double-quoted string, and the regex operators.
_GITLAB_VARIABLE = lazy_compile(r"\$\{?(\w+)\}?")


def _gitlab_condition(condition: str, variables: dict[str, str]) -> bool | None:
    """A ``rules: if:`` with GitLab's own variables and the job's: True,
    False or None (it cannot be known here: a regex match, an unknown form)."""
    if re.search(r"[=!]~", condition):
        return None
    names = Closed(variables)
    expression = _GITLAB_VARIABLE.sub(lambda m: f"vars['{m[1]}']", condition)
    expression = re.sub(
        r'"((?:[^"\\]|\\.)*)"', lambda m: "'" + m[1].replace("'", "''") + "'", expression
    )
    verdict = truthy(evaluate(expression, {"vars": names}))
    return None if verdict is UNKNOWN else bool(verdict)


def _put_variables(line: str, variables: dict[str, str]) -> str:
    """``line`` with the variables the CI file sets put in (plain values only)."""
    return _GITLAB_VARIABLE.sub(
        lambda m: variables[m[1]] if PLAIN_VALUE.fullmatch(variables.get(m[1], "$")) else m[0],
        line,
    )


#: A value put into a command as it is: no word splitting, quoting or expansion can change it.
PLAIN_VALUE = lazy_compile(r"[\w.,:/=+@%^-]*")


# -- pre-commit ------------------------------------------------------------------


def precommit(path: Path, project_dir: Path) -> list[CiCommand]:
    """The ``entry`` of each ``repo: local`` hook in the ``system`` language:
    a command of the project's own, run as written (other hooks install
    their tools from the network first)."""
    name = relative(path, project_dir)
    found = []
    repos = get(compose(path), "repos")
    for repo in repos.value if isinstance(repos, yaml.SequenceNode) else []:
        hooks = get(repo, "hooks")
        if text(get(repo, "repo")) != "local" or not isinstance(hooks, yaml.SequenceNode):
            continue
        for hook in hooks.value:
            entry = get(hook, "entry")
            if text(get(hook, "language")) == "system" and isinstance(entry, yaml.ScalarNode):
                found.append(CiCommand(entry.value.strip(), f"{name}:{entry.start_mark.line + 1}"))
    return found
