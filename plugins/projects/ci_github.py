"""A GitHub Actions workflow read as its runner would run it for a push to
the default branch on this machine (Linux).

- The workflow counts only when a push to that branch, a pull request, a
  merge queue or a call from the project's own CI (``workflow_call``) triggers it; one only on ``release``, ``schedule``,
  ``workflow_dispatch`` … is passed over.
- A job's matrix is expanded (``include``/``exclude`` as GitHub does) and one
  entry chosen: on Linux (else macOS; never Windows), matching this machine
  (the Python, Node, Go and Rust versions and Rust targets here,
  :mod:`stepkit.plugins.projects.machine`) in most of the keys set up from,
  else the first such entry; then the entries that differ from it only in
  keys that are not the machine's (``tox_env: [dev, type]``), whose new
  lines come after its own.
- ``if:`` of the job and of each step is evaluated
  (:mod:`stepkit.plugins.projects.ci_expr`) with ``github`` for that push,
  ``runner.os == 'Linux'``, the chosen ``matrix`` and ``env``; a condition
  that is false or cannot be evaluated here leaves the lines out.
- ``${{ … }}`` in a line is put in; so are the ``env:`` variables (workflow,
  job, step) it uses as ``$NAME``; ``defaults.run.working-directory`` and a
  step's ``working-directory`` are honoured.
- Left out, with the reason: a job with ``services:``, one that downloads
  another job's artifacts, a job or line on a Rust channel (``nightly``,
  ``-Z``) that is not this machine's rustc, a line building for a target
  this machine has no standard library for, a line using a matrix version
  this machine lacks, a step CI lets fail (``continue-on-error``), a job
  working in a checkout of another repository.
- A workflow or job for benchmarks, releases, docs, nightly builds,
  publishing, cross-compiling, code scanning or autofixing, or one that
  runs in a ``container:`` image, is set aside: its lines come after the
  others.  A job that calls a reusable workflow of another repository is
  named in the notes.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import Any, NamedTuple

import yaml

from stepkit.lazyregex import lazy_compile
from stepkit.plugins.projects import machine
from stepkit.plugins.projects.ci_expr import UNKNOWN, Closed, as_text, condition, substitute
from stepkit.plugins.projects.ci_yaml import (
    OTHER_SHELLS,
    PLAIN_VALUE,
    CiCommand,
    compose,
    get,
    in_dir,
    items,
    relative,
    runnable,
    script_lines,
    text,
    value,
)
from stepkit.workspace.scope import git


class Read(NamedTuple):
    """What one workflow runs, and what stepkit could not read of it."""

    commands: list[CiCommand]
    notes: list[str]


def workflow(path: Path, project_dir: Path, push: dict[str, str]) -> Read:
    """The lines of the workflow at ``path`` as CI runs them for ``push``
    (``github``'s ``ref``, ``ref_name``, ``repository`` …, :func:`github_push`)."""
    root = compose(path)
    name = relative(path, project_dir)
    title = text(get(root, "name"))
    off = _trigger_reason(get(root, "on"), push["ref_name"])
    aside = _aside(path.stem, title)
    github = {
        **push,
        "event_name": "push",
        "workflow": title or name,
        "head_ref": "",
        "base_ref": "",
        "event": {},
    }
    found: list[CiCommand] = []
    notes: list[str] = []
    base = {"github": github, "runner": {"os": "Linux", "arch": "X64"}, "inputs": {}}
    workflow_env = _env(get(root, "env"), {**base, "env": Env()})
    workflow_dir = text(get(get(get(root, "defaults"), "run"), "working-directory"))
    for job_id, job in items(get(root, "jobs")):
        uses = get(job, "uses")
        if uses is not None and not text(uses).startswith("./"):
            notes.append(
                f"CI calls the reusable workflow `{text(uses)}` of another repository "
                f"({name}:{uses.start_mark.line + 1}, job {job_id}); "
                "stepkit does not read what it runs"
            )
            continue
        job_aside = aside or _aside(job_id, text(get(job, "name"))) or _in_container(job)
        found += _job(
            job,
            Where(name, job_id, workflow_dir, job_aside, off),
            {**base, "github": {**github, "job": job_id}},
            workflow_env,
        )
    return Read(found, notes)


class Where(NamedTuple):
    file: str
    job: str
    directory: str
    aside: str
    #: why the whole workflow is passed over ("" when it runs).
    off: str


def _job(job: yaml.Node, where: Where, base: dict[str, Any], workflow_env: Env) -> list[CiCommand]:
    """The job's lines for the matrix entry this machine runs, then the new
    lines of each other entry it runs too (:func:`_matrix_entries`)."""
    found: list[CiCommand] = []
    for entry, mismatched in _matrix_entries(job, base):
        seen = {command.command for command in found}
        found += [
            command
            for command in _job_entry(job, where, base, workflow_env, entry, mismatched)
            if command.command not in seen
        ]
    return found


def _job_entry(
    job: yaml.Node,
    where: Where,
    base: dict[str, Any],
    workflow_env: Env,
    entry: Any,
    mismatched: dict[str, str],
) -> list[CiCommand]:
    os_name = _os(text(get(job, "runs-on")) or _sequence_text(get(job, "runs-on")), entry, base)
    if os_name == "Windows":
        return []
    context = {**base, "runner": {"os": os_name, "arch": "X64"}, "matrix": entry}
    job_env = _env(get(job, "env"), {**context, "env": Env(workflow_env)}, workflow_env)
    why = where.off or _job_not_here(job, {**context, "env": job_env})
    job_run = get(get(job, "defaults"), "run")
    job_dir = text(get(job_run, "working-directory")) or where.directory
    found: list[CiCommand] = []
    steps = get(job, "steps")
    for step in steps.value if isinstance(steps, yaml.SequenceNode) else []:
        run = get(step, "run")
        shell = (text(get(step, "shell")) or text(get(job_run, "shell"))).split()
        if not isinstance(run, yaml.ScalarNode) or (shell and shell[0] in OTHER_SHELLS):
            continue
        step_env = _env(get(step, "env"), {**context, "env": Env(job_env)}, job_env)
        scope = {**context, "env": step_env}
        skipped = why or _step_not_here(step, scope)
        directory = substitute(text(get(step, "working-directory")) or job_dir, scope)
        if directory is UNKNOWN:
            directory, skipped = "", skipped or "its working-directory is not known here"
        for line, at in script_lines(run):
            command, line_why = _as_run(line, scope, step_env, mismatched)
            found.append(
                CiCommand(
                    in_dir(command, directory),
                    f"{where.file}:{at}",
                    f"{where.file}:{where.job}",
                    text(get(step, "name")),
                    skipped or line_why,
                    where.aside,
                    os_name == "macOS",
                )
            )
    return found


# -- the push: triggers, purpose --------------------------------------------------

#: Events of the checks of a change; ``workflow_call``: a reusable workflow of the project's, which
#: its CI calls (``uses: ./.github/workflows/x.yml``), read where it is.
_CHECK_EVENTS = {"pull_request", "pull_request_target", "merge_group", "workflow_call"}


def _trigger_reason(on: yaml.Node | None, branch: str) -> str:
    """Why a push to ``branch`` (or a pull request) does not run the
    workflow; "" when it does, or when the workflow names no trigger."""
    if on is None:
        return ""
    events: dict[str, yaml.Node | None]
    if isinstance(on, yaml.ScalarNode):
        events = {on.value: None}
    elif isinstance(on, yaml.SequenceNode):
        events = {text(item): None for item in on.value}
    else:
        events = dict(items(on))
    if events.keys() & _CHECK_EVENTS:
        return ""
    if "push" in events:
        push = events["push"]
        branches = [text(n) for n in getattr(get(push, "branches"), "value", [])]
        ignored = [text(n) for n in getattr(get(push, "branches-ignore"), "value", [])]
        if isinstance(get(push, "branches"), yaml.ScalarNode):
            branches = [text(get(push, "branches"))]
        tags_only = get(push, "tags") is not None and get(push, "branches") is None
        if (
            not tags_only
            and (not branches or _glob(branches, branch))
            and not _glob(ignored, branch)
        ):
            return ""
        return f"its workflow runs on a push only to {', '.join(branches) or 'tags'}"
    return f"its workflow runs only on {', '.join(sorted(events))}, not on a push"


def _glob(patterns: list[str], branch: str) -> bool:
    """``branch`` matches one of GitHub's branch filters (``*``, ``**``, ``v[0-9]``)."""
    for pattern in patterns:
        regex = re.escape(pattern).replace(r"\*\*", ".*").replace(r"\*", "[^/]*")
        regex = (
            regex.replace(r"\[", "[").replace(r"\]", "]").replace(r"\?", "?").replace(r"\+", "+")
        )
        if re.fullmatch(regex, branch):
            return True
    return False


#: Name words of a workflow or job that runs something other than the checks of a change.
_ASIDE = (
    ("bench", "benchmarks"),
    ("releas", "releases"),
    ("publish", "publishing"),
    ("deploy", "deploys"),
    ("doc", "docs"),
    ("pages", "docs"),
    ("nightly", "nightly builds"),
    ("cross", "cross-compiling"),
    ("fuzz", "fuzzing"),
    ("miri", "miri"),
    ("autofix", "fixing the tree and committing it"),
    ("codeql", "code scanning"),
)


def _in_container(job: yaml.Node) -> str:
    """Why a job that runs in a container image (``container:``) is set aside: its
    lines run on that image's system, not the runner's; "" without one."""
    container = get(job, "container")
    image = (
        text(get(container, "image"))
        if isinstance(container, yaml.MappingNode)
        else text(container)
    )
    return f"its job runs in the container image `{image}`, not on the runner" if image else ""


def _aside(*names: str) -> str:
    """What ``names`` (a file stem, a workflow's or job's name) say the
    workflow or job is for, when that is not checking a change; else ""."""
    words = re.findall(
        r"[a-z]+", " ".join(re.sub(r"([a-z])([A-Z])", r"\1 \2", n) for n in names).lower()
    )
    for word in words:
        for prefix, purpose in _ASIDE:
            if word.startswith(prefix) and not (prefix == "doc" and word.startswith("docker")):
                return (
                    f"its workflow or job is for {purpose} (`{' / '.join(n for n in names if n)}`)"
                )
    return ""


# -- the matrix -------------------------------------------------------------------


def _matrix_entries(job: yaml.Node, base: dict[str, Any]) -> list[tuple[Any, dict[str, str]]]:
    """The matrix entries this machine runs, each with its keys whose version
    this machine lacks and the reason: first the one it matches best
    (Closed; {} without a matrix, or UNKNOWN for a matrix from an
    expression), then every other entry on the same OS and the same versions
    that differs from it only in a key that is not the machine's (a tox
    environment, a feature set: ``tox_env: [dev, type, docs]`` runs each)."""
    matrix = get(get(job, "strategy"), "matrix")
    if matrix is None:
        return [(Closed(), {})]
    if not isinstance(matrix, yaml.MappingNode):
        return [(UNKNOWN, {})]
    entries = _expand(matrix)
    if entries is None:
        return [(UNKNOWN, {})]
    if not entries:
        return [(Closed(), {})]
    kinds = _kinds(job, [key for entry in entries for key in entry])
    runs_on = text(get(job, "runs-on")) or _sequence_text(get(job, "runs-on"))

    def rank(indexed: tuple[int, dict[str, Any]]) -> tuple[int, int, int, int]:
        index, entry = indexed
        os_rank = {"Linux": 0, "macOS": 1}.get(_os(runs_on, Closed(entry), base), 2)
        verdicts = [
            _matches(kind, as_text(entry.get(key))) for key, kind in kinds.items() if key in entry
        ]
        return os_rank, verdicts.count(False), -verdicts.count(True), index

    _, chosen = min(enumerate(entries), key=rank)
    mismatched = {
        key: f"it uses `matrix.{key}` = {as_text(chosen[key])}, and this machine has {_have(kind)}"
        for key, kind in kinds.items()
        if key in chosen and _matches(kind, as_text(chosen[key])) is False
    }

    def machine_of(entry: dict[str, Any]) -> tuple[str, list[str]]:
        return _os(runs_on, Closed(entry), base), [as_text(entry.get(key)) for key in kinds]

    alike = [e for e in entries if e is not chosen and machine_of(e) == machine_of(chosen)]
    return [(Closed(entry), mismatched) for entry in [chosen, *alike]]


def _expand(matrix: yaml.MappingNode) -> list[dict[str, Any]] | None:
    """The combinations of a matrix, as GitHub makes them; None when one of
    its lists is an expression."""
    lists: dict[str, list[Any]] = {}
    for key, node in items(matrix):
        if key in ("include", "exclude"):
            continue
        if not isinstance(node, yaml.SequenceNode):
            return None
        lists[key] = value(node)
    combos = [dict(zip(lists, combo, strict=True)) for combo in itertools.product(*lists.values())]
    if not lists:
        combos = []
    for exclude in _mappings(get(matrix, "exclude")):
        combos = [c for c in combos if not all(_same(c.get(k), v) for k, v in exclude.items())]
    original = list(
        combos
    )  # an include joins only the combinations of the lists, never another include
    for include in _mappings(get(matrix, "include")):
        fits = [
            c for c in original if all(_same(c[k], v) for k, v in include.items() if k in lists)
        ]
        for combo in fits:
            combo.update(include)
        if not fits:
            combos.append(dict(include))
    return combos


def _mappings(node: yaml.Node | None) -> list[dict[str, Any]]:
    found = value(node) if isinstance(node, yaml.SequenceNode) else []
    return [item for item in found if isinstance(item, dict)]


def _same(a: Any, b: Any) -> bool:
    return as_text(a).casefold() == as_text(b).casefold()


#: Setup actions, and the input naming the version they set up.
_SETUP = (
    ("actions/setup-python", "python-version", "python"),
    ("actions/setup-node", "node-version", "node"),
    ("actions/setup-go", "go-version", "go"),
    ("dtolnay/rust-toolchain", "toolchain", "rust"),
    ("dtolnay/rust-toolchain", "target", "target"),
    ("dtolnay/rust-toolchain", "targets", "target"),
    ("actions-rs/toolchain", "toolchain", "rust"),
    ("actions-rs/toolchain", "target", "target"),
    ("actions-rust-lang/setup-rust-toolchain", "toolchain", "rust"),
    ("actions-rust-lang/setup-rust-toolchain", "target", "target"),
)
#: Matrix key names that say what they version when no setup step says it.
_KEY_KINDS = (
    (lazy_compile(r"(?i)^(?:py|pyver|python(?:[-_]?version)?)$"), "python"),
    (lazy_compile(r"(?i)^node(?:[-_]?version)?$"), "node"),
    (lazy_compile(r"(?i)^go(?:[-_]?version)?$"), "go"),
    (lazy_compile(r"(?i)^(?:rust|toolchain|rust[-_]?(?:version|toolchain))$"), "rust"),
    (lazy_compile(r"(?i)^target$"), "target"),
)


def _kinds(job: yaml.Node, keys: list[str]) -> dict[str, str]:
    """The matrix keys that choose a version this machine must have, and of what."""
    kinds = {}
    for key in dict.fromkeys(keys):
        for pattern, kind in _KEY_KINDS:
            if pattern.match(key):
                kinds[key] = kind
    steps = get(job, "steps")
    for step in steps.value if isinstance(steps, yaml.SequenceNode) else []:
        uses = text(get(step, "uses")).split("@")[0]
        for action, field, kind in _SETUP:
            bound = re.fullmatch(
                r"\$\{\{\s*matrix\.([\w-]+)\s*\}\}", text(get(get(step, "with"), field))
            )
            if uses == action and bound:
                kinds[bound[1]] = kind
    return kinds


def _matches(kind: str, wanted: str) -> bool | None:
    """This machine has ``wanted`` of ``kind``: True, False, or None (no opinion)."""
    wanted = wanted.strip().lower()
    if kind == "target":
        rust = machine.rust()
        return rust is not None and wanted in rust.targets
    if kind == "rust":
        rust = machine.rust()
        if rust is None:
            return False
        if wanted in ("stable", "beta", "nightly") or wanted.startswith("nightly-"):
            return wanted.split("-")[0] == rust.channel
        return _version_matches(wanted, rust.release)
    have = machine.version(kind)
    if have is None:
        return False
    if kind == "go" and wanted in ("stable", "oldstable"):
        return wanted == "stable"
    return _version_matches(wanted, have)


def _version_matches(wanted: str, have: str) -> bool:
    """``3.11`` / ``3.x`` / ``v20`` / ``20.x`` names the version ``have`` (``3.11.7``)."""
    parts = wanted.removeprefix("v").split(".")
    if not parts or not all(p.isdigit() or p in ("x", "*") for p in parts):
        return False
    return all(p in ("x", "*") or p == h for p, h in zip(parts, have.split("."), strict=False))


def _have(kind: str) -> str:
    if kind in ("rust", "target"):
        rust = machine.rust()
        if rust is None:
            return "no rustc"
        if kind == "target":
            return "no standard library for it"
        return f"rustc {rust.release} ({rust.channel})"
    return f"{kind} {machine.version(kind) or 'missing'}"


def _sequence_text(node: yaml.Node | None) -> str:
    return " ".join(text(n) for n in node.value) if isinstance(node, yaml.SequenceNode) else ""


def _os(runs_on: str, entry: Any, base: dict[str, Any]) -> str:
    """The OS of ``runs-on`` (with the matrix entry put in): Windows, macOS
    or Linux (also when it cannot be told: most runners are)."""
    label = substitute(runs_on, {**base, "matrix": entry}) if entry is not UNKNOWN else runs_on
    label = as_text(label).lower() if label is not UNKNOWN else ""
    if "windows" in label:
        return "Windows"
    if "macos" in label or "mac-" in label:
        return "macOS"
    return "Linux"


# -- the job and its steps --------------------------------------------------------


class Env(Closed):
    """``env:`` variables, each with the matrix keys its value was made from."""

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.matrix_keys: dict[str, set[str]] = (
            dict(getattr(args[0], "matrix_keys", {})) if args else {}
        )


def _env(node: yaml.Node | None, context: dict[str, Any], outer: Env | None = None) -> Env:
    """``env:`` evaluated over ``outer``'s variables; a value that cannot be
    known here is UNKNOWN."""
    found = Env(outer or {})
    matrix = context.get("matrix")
    for key, item in items(node):
        if isinstance(matrix, Closed):
            matrix.touched.clear()
        found[key] = substitute(text(item), context)
        found.matrix_keys[key] = set(matrix.touched) if isinstance(matrix, Closed) else set()
    return found


def _job_not_here(job: yaml.Node, context: dict[str, Any]) -> str:
    """Why none of the job's lines run here as CI runs them; "" when they do."""
    verdict = _if(job, context)
    if verdict:
        return f"its job's {verdict}"
    if get(job, "services") is not None:
        services = ", ".join(key for key, _ in items(get(job, "services")))
        return f"its job needs the service containers {services}, which a gate does not start"
    steps = get(job, "steps")
    other = _other_checkout(steps, context)
    if other:
        return f"its job works in a checkout of another repository ({other}), not this project's"
    uses = [text(get(step, "uses")) for step in getattr(steps, "value", [])]
    if get(job, "needs") is not None and any(
        u.startswith("actions/download-artifact") for u in uses
    ):
        return "its job works on artifacts another job built (`needs:` and `actions/download-artifact`)"
    channel = _job_channel(job, context)
    rust = (
        machine.rust() if channel else None
    )  # rustc is asked only about a job that names a channel
    if channel and (rust is None or rust.channel != channel):
        have = f"rustc here is {rust.channel}" if rust else "there is no rustc here"
        return f"its job runs on the {channel} Rust toolchain, and {have}"
    if condition(text(get(job, "continue-on-error")) or "false", context) is not False:
        return "CI lets its job fail (`continue-on-error`)"
    return ""


def _other_checkout(steps: yaml.Node | None, context: dict[str, Any]) -> str:
    """The repository an ``actions/checkout`` step puts at the workspace's root
    when it is not this project (``repository:`` without ``path:``); else ""."""
    for step in getattr(steps, "value", []):
        if not text(get(step, "uses")).startswith("actions/checkout"):
            continue
        options = get(step, "with")
        repository = substitute(text(get(options, "repository")), context)
        if repository is UNKNOWN or not repository or text(get(options, "path")):
            continue  # not known here, this project, or beside this project's checkout
        if repository.lower() != str(context["github"].get("repository", "")).lower():
            return repository
    return ""


def _job_channel(job: yaml.Node, context: dict[str, Any]) -> str:
    """The Rust channel the job sets up when it is not stable (``nightly``, ``beta``), else ""."""
    steps = get(job, "steps")
    for step in getattr(steps, "value", []):
        uses, _, ref = text(get(step, "uses")).partition("@")
        named = text(get(get(step, "with"), "toolchain"))
        if uses == "dtolnay/rust-toolchain" and not named:
            named = ref
        elif uses not in {action for action, _, kind in _SETUP if kind == "rust"}:
            runs = re.search(r"rustup\s+(?:default|override\s+set)\s+(\S+)", text(get(step, "run")))
            named = runs[1] if runs else ""
        toolchain = as_text(substitute(named, context)).lower()
        if toolchain.startswith(("nightly", "beta")):
            return toolchain.split("-")[0]
    return ""


def _if(node: yaml.Node, context: dict[str, Any]) -> str:
    """What is wrong with ``node``'s ``if:`` here ("" when it holds or is absent)."""
    expression = get(node, "if")
    if expression is None:
        return ""
    verdict = condition(text(expression), context)
    if verdict is UNKNOWN:
        return f"`if: {text(expression)}` cannot be evaluated here"
    return "" if verdict else f"`if: {text(expression)}` is false here{_entry(context)}"


def _entry(context: dict[str, Any]) -> str:
    matrix = context.get("matrix")
    if not matrix or matrix is UNKNOWN:
        return ""
    return " (matrix: " + ", ".join(f"{k}={as_text(v)}" for k, v in matrix.items()) + ")"


def _step_not_here(step: yaml.Node, context: dict[str, Any]) -> str:
    verdict = _if(step, context)
    if verdict:
        return f"its step's {verdict}"
    if condition(text(get(step, "continue-on-error")) or "false", context) is not False:
        return "CI lets its step fail (`continue-on-error`)"
    return ""


_ENV_USE = lazy_compile(r"\$\{?([A-Za-z_]\w*)\}?")
_TARGET = lazy_compile(r"(?:^|\s)--target(?:=|\s+)(\S+)")
_UNSTABLE = lazy_compile(r"(?:^|\s)-Z\s*[\w-]|(?:^|\s)\+(nightly|beta)\b")


def _as_run(
    line: str, scope: dict[str, Any], env: Env, mismatched: dict[str, str]
) -> tuple[str, str]:
    """The line as CI runs it, and why it cannot run here ("" when it can)."""
    matrix = scope.get("matrix")
    if isinstance(matrix, Closed):
        matrix.touched.clear()
    command = substitute(line, scope)
    if command is UNKNOWN:
        return line, "it uses a GitHub expression whose value is not known here"
    used = {name for name in _ENV_USE.findall(command) if name in env}
    unknown = sorted(
        name for name in used if env[name] is UNKNOWN or not PLAIN_VALUE.fullmatch(env[name])
    )
    if unknown:
        return (
            command,
            f"it uses `${unknown[0]}`, whose value CI sets and stepkit cannot put in here",
        )
    command = _ENV_USE.sub(lambda m: env[m[1]] if m[1] in used else m[0], command)
    touched = set(matrix.touched) if isinstance(matrix, Closed) else set()
    touched |= {key for name in used for key in env.matrix_keys.get(name, ())}
    for key in sorted(touched & mismatched.keys()):
        return command, mismatched[key]
    if not command.strip():
        return command, "it is empty for this matrix entry"
    if not runnable(command):
        return command, "it uses a variable only CI has"
    return command, _rust_reason(command)


def _rust_reason(command: str) -> str:
    """Why a cargo or rustc line cannot build here: a target without its
    standard library, a nightly flag on another channel."""
    if not re.search(r"(?:^|[\s;&|(])(?:cargo|rustc|rustdoc)(?:\s|$)", command):
        return ""
    rust = machine.rust()
    target = _TARGET.search(command)
    if target and (rust is None or target[1] not in rust.targets):
        return f"it builds for the target {target[1]}, which this machine's Rust does not have"
    unstable = _UNSTABLE.search(command)
    if unstable:
        channel = unstable[1] or "nightly"
        if rust is None or (
            channel not in rust.channels if unstable[1] else rust.channel != "nightly"
        ):
            return f"it needs the {channel} Rust toolchain, which is not this machine's"
    return ""


def github_push(project_dir: Path) -> dict[str, str]:
    """``github``'s context for a push to the project's default branch: ``ref``,
    ``ref_name``, ``ref_type`` and, when the ``origin`` remote names it,
    ``repository`` and ``repository_owner``."""
    branch = "main"
    origin_head = git.run(
        ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], project_dir
    )
    if origin_head:
        branch = git.text(origin_head).strip().split("/", 1)[-1]
    else:
        for name in ("main", "master"):
            if git.run(["rev-parse", "--verify", "--quiet", f"refs/heads/{name}"], project_dir):
                branch = name
                break
    push = {"ref": f"refs/heads/{branch}", "ref_name": branch, "ref_type": "branch"}
    url = git.run(["remote", "get-url", "origin"], project_dir)
    found = (
        re.search(r"[:/]([\w.-]+)/([\w.-]+?)(?:\.git)?/?$", git.text(url).strip()) if url else None
    )
    if found:
        push |= {"repository": f"{found[1]}/{found[2]}", "repository_owner": found[1]}
    return push
