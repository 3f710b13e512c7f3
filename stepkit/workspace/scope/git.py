"""The one place stepkit runs git.

Every git process stepkit starts is spawned here (:func:`command` builds
its argv), each with ``GIT_OPTIONAL_LOCKS=0`` (a read never takes the index
lock a user's git may be waiting for) and ``LC_ALL=C`` (stable output), and
with nothing the repository configures run along the way: hooks, the
fsmonitor, a pager or an editor (:data:`NOTHING_RUNS`); during a run, with
the user's git configuration as it stood when the run started
(:func:`pinned`, :mod:`stepkit.workspace.scope.gitconfig`); the coder can write
``.git/`` (:mod:`stepkit.workspace.scope.gitguard` flags and undoes that).  The readers return
None (or an empty answer) when git is missing, the directory is not a work
tree or the command failed: the callers then fall back to walking files.

Paths git prints are relative to the work tree's root; :func:`project_rel`
turns them into paths relative to the project, which may be a subdirectory
of the work tree (its ``prefix``, ending in ``/``).  A submodule is a work
tree of its own: its paths are put under its place in the project (its
``base``, e.g. ``vendor/lib/``), so a change inside it is a change like any.

Git holds bytes: its files (config, attributes, the ``.git`` file of a
linked work tree), ref names and paths are in no promised encoding.  What
stepkit reads from git is decoded by :func:`text` (UTF-8, a byte that is
not UTF-8 kept as a surrogate) and written back by :func:`raw`, so such a
byte is kept as it was and never stops a run; :func:`read_text` reads a
file of git's that way.  Only :func:`last_error`, a message for a person,
replaces what it cannot decode.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from stepkit.workspace import headstart
from stepkit.workspace.scope.listing import LISTING, Index, parse_listing, text
from stepkit.workspace.scope.virtualenvs import Inside

#: Options that keep a repository's own commands out of stepkit's git calls.
NOTHING_RUNS = (
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.pager=cat",
    "-c",
    "core.editor=true",
    "-c",
    "sequence.editor=true",
)
#: The same for the environment (which outranks configuration for these).
#: ``GIT_NO_REPLACE_OBJECTS``: a ``git replace`` ref the coder made must not
#: change what stepkit reads as the step-start bytes.
_QUIET_ENV = {
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "true",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_NO_REPLACE_OBJECTS": "1",
}


def raw(value: str) -> bytes:
    """The bytes of what :func:`text` decoded (or of a str stepkit writes for git)."""
    return value.encode("utf-8", "surrogateescape")


def read_text(path: Path) -> str:
    """A file of git's (config, attributes, ``.git``, ``commondir``), decoded by :func:`text`.

    :raises OSError: it cannot be read."""
    return text(Path(path).read_bytes())


#: The environment that points every git call at the run's copy of the
#: user's configuration while a run goes on (:func:`pinned`).
_PINNED: dict[str, str] = {}


@contextmanager
def pinned(env: Mapping[str, str]) -> Iterator[None]:
    """Every git call made inside the block runs with ``env`` too: the
    configuration a run copied when it started
    (:mod:`stepkit.workspace.scope.gitconfig`)."""
    before = dict(_PINNED)
    _PINNED.update(env)
    try:
        yield
    finally:
        _PINNED.clear()
        _PINNED.update(before)


def run(args: list[str], cwd: Path) -> bytes | None:
    """``git ARGS`` in ``cwd``: its stdout, or None when it failed or git is missing."""
    try:
        proc = _spawn(args, cwd, check=False)
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def call(
    args: list[str], cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[int, bytes, bytes]:
    """``git ARGS`` in ``cwd`` whatever its exit code: (exit code, stdout,
    stderr); exit code 127 when git cannot be started."""
    try:
        proc = _spawn(args, cwd, check=False, env=env)
    except OSError as exc:
        return 127, b"", str(exc).encode()
    return proc.returncode, proc.stdout, proc.stderr


def last_error(err: bytes, default: str = "git failed") -> str:
    """The last line of a failed git command's stderr (what git says went wrong), or ``default``."""
    lines = err.decode("utf-8", "replace").strip().splitlines()
    return lines[-1] if lines else default


def location(project: Path) -> tuple[str, str] | None:
    """(work tree root, the project's prefix inside it), None outside git."""
    out = run(["rev-parse", "--show-toplevel", "--show-prefix"], project)
    if out is None:
        return None
    lines = text(out).split("\n")
    if not lines[0]:
        return None
    return lines[0], lines[1] if len(lines) > 1 else ""


def location_and_head(project: Path) -> tuple[str, str, str | None] | None:
    """:func:`location` and :func:`head` in one git process: (work tree root,
    the project's prefix, the commit HEAD names or None before the first
    commit); None outside git."""
    code, out, _ = call(
        ["rev-parse", "--show-toplevel", "--show-prefix", "-q", "--verify", "HEAD"], project
    )
    # 1: the work tree was shown, HEAD names no commit yet; anything else is git's failure
    lines = text(out).split("\n") if code in (0, 1) else [""]
    if not lines[0]:
        return None
    named = lines[2].strip() if code == 0 and len(lines) > 2 else ""
    return lines[0], lines[1] if len(lines) > 1 else "", named or None


def head(root: Path) -> str | None:
    """The commit HEAD names, None before the first commit (or outside git)."""
    out = run(["rev-parse", "-q", "--verify", "HEAD"], root)
    if out is None:
        return None
    return text(out).strip() or None


def status(root: Path, prefix: str, base: str = "") -> tuple[str | None, dict[str, str | None]]:
    """HEAD (None before the first commit) and the project-relative paths git
    sees as modified, staged, deleted or untracked, each with its id in HEAD
    (None: not in HEAD).  Submodules are left out: each is looked at from
    the inside (:func:`submodules`), by its own status."""
    out = (
        run(
            [
                "status",
                "--porcelain=v2",
                "-z",
                "--branch",
                "-uall",
                "--no-renames",
                "--ignore-submodules=all",
            ],
            root,
        )
        or b""
    )
    commit = None
    paths: dict[str, str | None] = {}
    in_virtualenv = Inside(root)
    for entry in out.split(b"\0"):
        kind = entry[:2]
        if kind == b"# ":
            key, _, value = entry[2:].partition(b" ")
            if key == b"branch.oid" and value != b"(initial)":
                commit = text(value)
            continue
        if kind == b"1 ":  # 1 XY sub mH mI mW hH hI path
            fields = entry.split(b" ", 8)
            name, oid = fields[8], fields[6]
        elif kind == b"u ":  # u XY sub m1 m2 m3 mW h1 h2 h3 path: stage 2 is HEAD's
            fields = entry.split(b" ", 10)
            name, oid = fields[10], fields[8]
        elif kind == b"? ":
            name, oid = entry[2:], None
            if in_virtualenv(text(name)):
                continue  # an environment, not the project's files
        else:
            continue
        rel = project_rel(text(name), prefix, base)
        if rel is None:
            continue
        # setdefault: a path both deleted from the index and untracked keeps
        # the id of its tracked entry, which comes first
        paths.setdefault(rel, text(oid) if oid and oid.strip(b"0") else None)
    return commit, paths


def paths_between(
    root: Path, old: str | None, new: str | None, prefix: str, base: str = ""
) -> set[str]:
    """Project-relative paths that differ between two commits (one of them
    None: every path of the other)."""
    if old and new:
        out = run(["diff", "--name-only", "-z", "--no-renames", old, new], root)
    else:
        out = run(["ls-tree", "-r", "-z", "--name-only", new or old or "HEAD"], root)
    paths = set()
    for name in (out or b"").split(b"\0"):
        rel = project_rel(text(name), prefix, base)
        if name and rel is not None:
            paths.add(rel)
    return paths


def commit_ids(root: Path, commit: str, prefix: str, base: str = "") -> dict[str, str]:
    """Project-relative path → blob id of every file in ``commit``."""
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    if prefix:
        args += ["--", prefix.rstrip("/")]
    ids = {}
    for entry in (run(args, root) or b"").split(b"\0"):
        if b"\t" not in entry:
            continue
        meta, name = entry.split(b"\t", 1)
        kind, oid = meta.split()[1:3]
        rel = project_rel(text(name), prefix, base)
        if kind == b"blob" and rel is not None:
            ids[rel] = text(oid)
    return ids


def index_ids(directory: Path) -> Index | None:
    """The index's view of ``directory``'s files, in one git process; None outside git."""
    out = run(LISTING, directory)
    return None if out is None else parse_listing(out, directory)


def submodules(root: Path, prefix: str, base: str = "") -> list[tuple[Path, str]]:
    """(work tree root, base) of each checked-out submodule ``.gitmodules``
    declares inside the project, nested ones too (none without ``.gitmodules``:
    no git process then)."""
    if not (root / ".gitmodules").is_file():
        return []
    out = run(["config", "-z", "-f", ".gitmodules", "--get-regexp", r"^submodule\..*\.path$"], root)
    found: list[tuple[Path, str]] = []
    for entry in (out or b"").split(b"\0"):
        path = text(entry.partition(b"\n")[2]).strip("/")
        rel = project_rel(path, prefix, base) if path else None
        if rel is None or not (root / path / ".git").exists():
            continue  # outside the project, or not checked out
        found.append((root / path, rel + "/"))
        found.extend(submodules(root / path, "", rel + "/"))
    return found


def tracked_named(directory: Path, names: tuple[str, ...]) -> list[str] | None:
    """The files git tracks anywhere under ``directory`` whose name is one of
    ``names``, relative to it, in one git process; None outside git."""
    out = run(["ls-files", "-z", "--", *(f":(glob)**/{name}" for name in names)], directory)
    if out is None:
        return None
    return sorted({text(name) for name in out.split(b"\0") if name})


def blob(root: Path, oid: str) -> bytes | None:
    """The bytes of a blob in the repository at ``root``."""
    return run(["cat-file", "blob", oid], root)


def merge_file(
    ours: Path, base: Path, theirs: Path, labels: tuple[str, str, str]
) -> tuple[bytes, int] | None:
    """``git merge-file -p --diff3`` of three files (no repository needed):
    the merged bytes, each conflict left with diff3 markers named by
    ``labels`` (ours, base, theirs), and the number of conflicts; None when
    git is missing or could not merge (a binary file)."""
    args = ["merge-file", "-p", "--diff3"]
    for label in labels:
        args += ["-L", label]
    try:
        proc = _spawn([*args, str(ours), str(base), str(theirs)], ours.parent, check=False)
    except OSError:
        return None
    return (proc.stdout, proc.returncode) if 0 <= proc.returncode < 128 else None


def resolve_commit(root: Path, ref: str) -> str | None:
    """The commit ``ref`` names (a branch, tag, sha, ``HEAD~1`` …), None when it names none."""
    if not ref or ref.startswith("-"):
        return None
    out = run(["rev-parse", "-q", "--verify", "--end-of-options", f"{ref}^{{commit}}"], root)
    return text(out).strip() or None if out is not None else None


def worktree_add(root: Path, path: Path, commit: str) -> bool:
    """Check ``commit`` out, detached, into a new work tree at ``path`` (the
    user's work tree, index and branches untouched); False when git failed."""
    return (
        run(["worktree", "add", "--detach", "--force", "-q", str(path), commit], root) is not None
    )


def worktrees(root: Path) -> list[Path]:
    """The work trees git has on record for the repository at ``root`` (the
    main one first); empty when git failed."""
    out = run(["worktree", "list", "--porcelain", "-z"], root) or b""
    return [
        Path(text(entry[len(b"worktree ") :]))
        for entry in out.split(b"\0")
        if entry.startswith(b"worktree ")
    ]


def worktree_remove(root: Path, path: Path) -> None:
    """Remove the work tree at ``path`` that :func:`worktree_add` made, and
    git's record of it (also when its directory is already gone)."""
    run(["worktree", "remove", "--force", "--force", str(path)], root)
    run(["worktree", "prune"], root)


def commit_all(project: Path, message: str, name: str, email: str) -> bool:
    """Make ``project`` a git repository whose first commit holds all its files.

    :return: False when git is not installed (nothing done).
    :raises subprocess.CalledProcessError: a git command failed.
    """
    if shutil.which("git") is None:
        return False
    identity = {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", message]):
        _spawn(args, project, check=True, env=identity)
    return True


def command(args: list[str]) -> list[str]:
    """The argv of ``git ARGS`` as stepkit runs it: :data:`NOTHING_RUNS` first."""
    return ["git", *NOTHING_RUNS, *args]


def blobs(root: Path, specs: list[str]) -> list[bytes | None]:
    """The bytes of each ``<commit>:<path>`` (None: no such file there), in one git process."""
    if not specs:
        return []
    try:
        proc = _spawn(
            ["cat-file", "--batch"],
            root,
            check=False,
            stdin=raw("\n".join(specs) + "\n"),
        )
    except OSError:
        return [None] * len(specs)
    out = proc.stdout if proc.returncode == 0 else b""
    found: list[bytes | None] = []
    for _ in specs:
        header, _, out = out.partition(b"\n")
        parts = header.split()
        if len(parts) == 3 and parts[1] == b"blob":
            size = int(parts[2])
            found.append(out[:size])
            out = out[size + 1 :]
        else:
            found.append(None)
    return found


def _spawn(
    args: list[str],
    cwd: Path,
    check: bool,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[bytes]:
    argv, full_env = command(args), {**os.environ, **_QUIET_ENV, **_PINNED, **(env or {})}
    done = headstart.take("git", argv, cwd, full_env, stdin)
    if done is None:
        done = subprocess.run(
            argv, cwd=cwd, capture_output=True, check=False, input=stdin, env=full_env
        )
        headstart.ran(argv, cwd, done)
    if check:
        done.check_returncode()
    return done


def project_rel(repo_path: str, prefix: str, base: str = "") -> str | None:
    """A path relative to the work tree as the project sees it (None: outside
    the project): the project's ``prefix`` cut off, the work tree's ``base``
    put in front."""
    if prefix and not repo_path.startswith(prefix):
        return None
    return base + repo_path[len(prefix) :]
