"""Git is not a door: what a coder round did to the repository's hooks and
to configuration keys that run commands is flagged and undone.

A hook (``.git/hooks/pre-commit``) or a key such as ``core.fsmonitor``,
``filter.<driver>.clean`` or ``alias.<name>`` that the coder writes runs a
command of its choosing inside later git calls: stepkit's own (which run
with :data:`stepkit.workspace.scope.git.NOTHING_RUNS` anyway) and the
user's next commit.  :func:`git_internals` holds the hooks directory and the
config files in memory before the round; :func:`undo_git_changes` compares
after it, puts back what changed (a hook added, changed or removed; a config
file in which a key of :data:`COMMAND_KEYS` changed; ``info/exclude``, which
would hide a new file from the step's changes, and ``info/attributes``;
an ``assume-unchanged`` or ``skip-worktree`` index flag, which hides a
changed file),
keeps what it displaces under a keep directory, and returns one tamper flag
per change naming the hook or file, or the key and its value.
"""

from __future__ import annotations

import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from stepkit.lazyregex import lazy_compile
from stepkit.workspace.files import replace_entry
from stepkit.workspace.scope import git
from stepkit.workspace.scope.tree import shown_path

#: Configuration keys (lower case, as ``git config --list`` prints them)
#: whose value is a command git runs, a place git takes commands from, or
#: more configuration.
COMMAND_KEYS = lazy_compile(
    r"core\.(hookspath|fsmonitor|sshcommand|editor|pager|askpass|gitproxy|worktree|attributesfile"
    r"|alternaterefscommand)"
    r"|sequence\.editor|diff\.external|diff\..+\.(textconv|command)|merge\..+\.driver"
    r"|filter\..+\.(clean|smudge|process)|alias\..+|include\.path|includeif\..+\.path"
    r"|credential(\..+)?\.helper|gpg(\..+)?\.program|uploadpack\.packobjectshook"
    r"|receive\.procreceiverefs|remote\..+\.(uploadpack|receivepack|proxy)|url\..+\.(insteadof|pushinsteadof)"
    r"|submodule\..+\.update|pager\..+|interactive\.difffilter|web\.browser|browser\..+\.(cmd|path)"
    r"|man\..+\.(cmd|path)|http\.(.+\.)?proxy|protocol\..+\.allow|safe\.directory"
)


_LINK = -1  # the "permission bits" of a hook that is a symbolic link (its bytes: the target)


@dataclass
class GitInternals:
    """The hooks directory and the config files of one repository, as they were."""

    hooks_dir: Path
    #: hook file name -> (bytes, permission bits or ``_LINK``); None: no hooks directory
    hooks: dict[str, tuple[bytes, int]] | None
    #: config file -> its bytes (None: it did not exist)
    configs: dict[Path, bytes | None] = field(default_factory=dict)
    #: the repository's own ignore and attribute files (``info/exclude``
    #: hides a new file from the step's changes, ``info/attributes`` assigns
    #: filters) -> their bytes
    info: dict[Path, bytes | None] = field(default_factory=dict)
    #: project-relative path -> the index flags that make git status blind
    #: to its changes (``assume-unchanged``, ``skip-worktree``)
    blind: dict[str, tuple[str, ...]] = field(default_factory=dict)
    project: Path = Path(".")


def git_internals(project_dir: Path) -> GitInternals | None:
    """The repository's hooks and config files now (None outside git)."""
    out = git.run(["rev-parse", "--absolute-git-dir", "--git-common-dir"], project_dir)
    if out is None:
        return None
    lines = git.text(out).splitlines()
    git_dir = Path(lines[0])
    common = (
        (Path(project_dir) / lines[1]).resolve() if len(lines) > 1 else git_dir
    )  # relative to the cwd
    hooks_dir = common / "hooks"
    return GitInternals(
        hooks_dir,
        _read_hooks(hooks_dir),
        {path: _read(path) for path in (common / "config", git_dir / "config.worktree")},
        {
            path: _read(path)
            for path in (common / "info" / "exclude", common / "info" / "attributes")
        },
        _blind_entries(project_dir),
        Path(project_dir),
    )


def undo_git_changes(before: GitInternals, keep_dir: Path, project_dir: Path) -> list[str]:
    """Put back the hooks and the command-running config of ``before``,
    keeping what is displaced under ``keep_dir``; one tamper flag per change
    (empty: nothing changed that could run a command)."""
    flags = []
    for path, old in before.configs.items():
        new = _read(path)
        if new == old:
            continue
        changed = _command_keys_changed(old, new, path)
        if not changed:
            continue  # a change that runs nothing (user.name, a remote's url) is the step's business
        kept: str | None = _keep(path, keep_dir, project_dir)
        _put_back(path, old)
        where = shown_path(path, project_dir)
        for key, value in changed:
            what = f"set to {value!r}" if value is not None else "removed"
            flags.append(
                f"git config {key} {what} during the step ({where}): undone by the harness; "
                f"the changed file is kept at {kept}"
            )
    for path, old in before.info.items():
        if _read(path) == old:
            continue
        kept = _keep(path, keep_dir, project_dir) if path.exists() or path.is_symlink() else None
        _put_back(path, old)
        keeping = f"; the changed file is kept at {kept}" if kept else ""
        flags.append(
            f"git {path.parent.name}/{path.name} {'added' if old is None else 'changed'} during the step "
            f"({shown_path(path, project_dir)}): undone by the harness{keeping}"
        )
    flags.extend(_undo_hooks(before, keep_dir, project_dir))
    flags.extend(_undo_blind_entries(before))
    return flags


def _blind_entries(project_dir: Path) -> dict[str, tuple[str, ...]]:
    """Index entries git status does not look at (``git ls-files -v``: a
    lower-case tag is assume-unchanged, ``S`` skip-worktree)."""
    found = {}
    for entry in (git.run(["ls-files", "-v", "-z"], project_dir) or b"").split(b"\0"):
        if len(entry) < 3:
            continue
        tag, rel = git.text(entry[:1]), git.text(entry[2:])
        marks = (
            *(("assume-unchanged",) if tag.islower() else ()),
            *(("skip-worktree",) if tag in "Ss" else ()),
        )
        if marks:
            found[rel] = marks
    return found


def _undo_blind_entries(before: GitInternals) -> list[str]:
    """Clear the index flags the round set, so that git sees those files' changes again."""
    new = {
        rel: added
        for rel, marks in _blind_entries(before.project).items()
        if (added := tuple(mark for mark in marks if mark not in before.blind.get(rel, ())))
    }
    if not new:
        return []
    for mark in ("assume-unchanged", "skip-worktree"):  # one flag per call: git keeps only the last
        paths = sorted(rel for rel, marks in new.items() if mark in marks)
        if paths:
            git.run(["update-index", f"--no-{mark}", "--", *paths], before.project)
    return [
        f"git index flag {'/'.join(marks)} set on {rel} during the step (git status no longer sees its "
        f"changes): cleared by the harness"
        for rel, marks in sorted(new.items())
    ]


def _put_back(path: Path, old: bytes | None) -> None:
    """``path`` as it was: ``old``'s bytes, or absent."""
    if path.is_symlink() or path.exists():
        path.unlink()
    if old is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        replace_entry(path, old)


def _undo_hooks(before: GitInternals, keep_dir: Path, project_dir: Path) -> list[str]:
    hooks_dir = before.hooks_dir
    old = before.hooks or {}
    if hooks_dir.is_symlink() or (hooks_dir.exists() and not hooks_dir.is_dir()):
        kept: str | None = _keep(hooks_dir, keep_dir, project_dir)
        hooks_dir.unlink()
        new: dict[str, tuple[bytes, int]] = {}
        flags = [
            (
                f"git hooks directory {shown_path(hooks_dir, project_dir)} replaced during the step: "
                f"undone by the harness; what was there is kept at {kept}"
            )
        ]
    else:
        new = _read_hooks(hooks_dir) or {}
        flags = []
    for name in sorted(old.keys() | new.keys()):
        if old.get(name) == new.get(name):
            continue
        path = hooks_dir / name
        how = "added" if name not in old else "removed" if name not in new else "changed"
        kept = _keep(path, keep_dir, project_dir) if name in new else None
        if name in new:
            path.unlink()
        if name in old:
            hooks_dir.mkdir(parents=True, exist_ok=True)
            data, mode = old[name]
            if mode == _LINK:
                os.symlink(git.text(data), path)
            else:
                replace_entry(path, data, mode)
                os.chmod(path, mode)
        keeping = f"; the coder's version is kept at {kept}" if kept else ""
        flags.append(
            f"git hook {shown_path(path, project_dir)} {how} during the step: undone by the harness"
            f"{keeping}"
        )
    return flags


def _command_keys_changed(
    old: bytes | None, new: bytes | None, path: Path
) -> list[tuple[str, str | None]]:
    """The command-running keys whose values differ between two versions of
    a config file, each with its new value (None: removed).  A file git
    cannot read counts as changing every such key it may hold."""
    before, after = _entries(old, path), _entries(new, path)
    if after is None:
        return [("(unreadable config)", (new or b"").decode("utf-8", "replace")[:200])]
    changed: list[tuple[str, str | None]] = []
    for key in sorted(set(before or {}) | set(after)):
        if not COMMAND_KEYS.fullmatch(key) or (before or {}).get(key) == after.get(key):
            continue
        values = after.get(key)
        changed.append((key, "; ".join(values) if values else None))
    return changed


def _entries(data: bytes | None, path: Path) -> dict[str, list[str]] | None:
    """key -> values of a config file's bytes, read by git itself from a copy
    (``git config --file``, which follows no include and runs nothing);
    None: git cannot read it."""
    if data is None:
        return {}
    copy = path.with_name(f".{path.name}.guard-read-{os.getpid()}")
    try:
        copy.write_bytes(data)
        out = git.run(["config", "--file", str(copy), "--no-includes", "--list", "-z"], path.parent)
    finally:
        copy.unlink(missing_ok=True)
    if out is None:
        return None
    entries: dict[str, list[str]] = {}
    for item in out.split(b"\0"):
        if item:
            key, _, value = git.text(item).partition("\n")
            entries.setdefault(key.lower(), []).append(value)
    return entries


def _read_hooks(hooks_dir: Path) -> dict[str, tuple[bytes, int]] | None:
    if hooks_dir.is_symlink() or not hooks_dir.is_dir():
        return None
    found = {}
    for entry in os.scandir(hooks_dir):
        try:
            st = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(st.st_mode):
                found[entry.name] = (Path(entry.path).read_bytes(), stat.S_IMODE(st.st_mode))
            elif stat.S_ISLNK(st.st_mode):
                found[entry.name] = (
                    git.raw(os.readlink(entry.path)),
                    _LINK,
                )
        except OSError:
            continue
    return found


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _keep(path: Path, keep_dir: Path, project_dir: Path) -> str:
    """Copy ``path`` (a link as a link) under ``keep_dir``; its place as shown."""
    target = keep_dir / ".git-internals" / path.name
    n = 1
    while target.exists() or target.is_symlink():
        n += 1
        target = keep_dir / ".git-internals" / f"{path.name}.{n}"
    target.parent.mkdir(parents=True, exist_ok=True)
    if path.is_symlink():
        os.symlink(os.readlink(path), target)
    else:
        shutil.copy2(path, target)
    return shown_path(target, project_dir)
