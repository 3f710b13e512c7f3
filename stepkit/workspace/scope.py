"""Scope guard: what a step changed, undoing plan-repo edits, tamper flags.

A :class:`Snapshot` is taken when the step starts.  In a git work tree it
records HEAD plus the id of every dirty or untracked file (the clean ones are
known to git); elsewhere it records the id of every file.  File ids are git
blob ids (sha1 of ``blob <size>\\0<bytes>``), so a clean file's id comes from
git and a dirty one's from its bytes, and the two compare.  The bytes of the
dirty/untracked text files (all text files outside git) and of every plan repo
file are kept in a content-addressed store under ``.stepkit/objects``, so that
:func:`step_changes` can read the "before" side (for the diff and the
tamper flags) and :func:`restore_plan_repo` can put the plan repo back.

The plan repo is the harness's business: its files never count as changed
files, never enter the diff and are never flagged; edits the coder makes
there are undone by :func:`restore_plan_repo`.
"""

from __future__ import annotations

import difflib
import hashlib
import os
import re
import stat
import subprocess
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal, NamedTuple

from pydantic import BaseModel, Field

from stepkit.workspace.files import atomic_write, stepkit_dir

#: Directories never walked outside git (caches, dependencies, build output).
EXCLUDED_DIRS = frozenset({
    ".git", ".hg", ".svn", ".stepkit", "node_modules", "__pycache__", ".venv", "venv",
    ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".gradle", ".idea",
    ".next", ".cache", "target", "build", "dist",
})
#: Never the step's changes, even when git tracks or does not ignore them.
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".stepkit"})
STORE_FILE_LIMIT = 1_000_000  # bytes of one text file kept for the diff
STORE_TOTAL_LIMIT = 100_000_000  # bytes kept per snapshot
PLAN_FILE_LIMIT = 5_000_000
DIFF_FILE_LIMIT = 1_000_000  # larger files are named, not diffed
DIFF_MAX_CHARS = 200_000
DIFF_FILE_MAX_CHARS = 40_000

class Snapshot(BaseModel):
    """The tree as it was when the step started (JSON-serialisable).

    :ivar mode: ``git`` (HEAD + dirty files), ``files`` (every file) or
        ``plan`` (only the plan repo copy, for :func:`restore_plan_repo`).
    :ivar files: project-relative path → blob id (None = deleted in the work
        tree): in git mode the dirty and untracked files, else every file.
    :ivar stats: ``files`` mode: path → [size, mtime_ns], to skip re-hashing.
    :ivar plan_files: path relative to ``plans_dir`` → blob id.
    :ivar store: the object store holding the kept bytes.
    """

    project_dir: str
    mode: Literal["git", "files", "plan"]
    head: str | None = None
    git_root: str | None = None
    prefix: str = ""
    files: dict[str, str | None] = Field(default_factory=dict)
    stats: dict[str, list[int]] = Field(default_factory=dict)
    plans_dir: str | None = None
    plan_files: dict[str, str] = Field(default_factory=dict)
    store: str
    taken_at: str


# -- public API ----------------------------------------------------------------


def take_snapshot(
    project_dir: Path, plans_dir: Path | None = None, *, plan_only: bool = False
) -> Snapshot:
    """Record the tree of ``project_dir`` and a byte copy of the plan repo.

    :param project_dir: the project root.
    :param plans_dir: the plan repo (default ``<project_dir>/plans``).
    :param plan_only: copy only the plan repo (cheap; take one right before
        each coder run so :func:`restore_plan_repo` undoes exactly the coder's
        edits and not the harness's own, such as sweep annotations).
    """
    project = Path(project_dir).resolve()
    plans = Path(plans_dir).resolve() if plans_dir is not None else project / "plans"
    store = _Store(project / ".stepkit" / "objects")
    snap = Snapshot(
        project_dir=str(project), mode="plan", plans_dir=str(plans), store=str(store.root),
        taken_at=datetime.now(UTC).isoformat(timespec="seconds"),
    )
    snap.plan_files = {rel: store.put_file(plans / rel, PLAN_FILE_LIMIT, text_only=False)
                       for rel in walk_files(plans)}
    if plan_only:
        return snap
    git = _git_location(project)
    skip = _plan_prefix(snap)
    if git is not None:
        snap.mode, (snap.git_root, snap.prefix) = "git", git
        snap.head, dirty = _git_status(snap)
        for rel in sorted(dirty):
            if not _excluded(rel, skip):
                snap.files[rel] = store.put_file(project / rel, STORE_FILE_LIMIT)
    else:
        snap.mode = "files"
        for rel in walk_files(project, EXCLUDED_DIRS):
            if _excluded(rel, skip):
                continue
            st = (project / rel).lstat()
            snap.files[rel] = store.put_file(project / rel, STORE_FILE_LIMIT)
            snap.stats[rel] = [st.st_size, st.st_mtime_ns]
    return snap


class StepChanges(NamedTuple):
    """What the step changed since its snapshot (fields named as the run
    state names them)."""

    #: project-relative paths (sorted) whose content differs: modified, added
    #: and deleted files, the plan repo excluded
    changed_files: list[str]
    #: unified diff (``a/`` before, ``b/`` now); binary or very large files are
    #: named, not diffed; each file's diff is cut at DIFF_FILE_MAX_CHARS and the
    #: whole at ``max_chars``, with a marker saying what was left out
    diff: str
    #: signs that verification was weakened, each naming its file: deleted test
    #: files, new skip/xfail/ignore markers, loosened lint or coverage
    #: configuration (lowered thresholds, new ignore/exclude entries, deleted configs)
    tamper_flags: list[str]


def step_changes(before: Snapshot, project_dir: Path, max_chars: int = DIFF_MAX_CHARS) -> StepChanges:
    """The changed files, the step diff and the tamper flags from one look at
    the tree: each changed file's before and now bytes are read once."""
    project = Path(project_dir).resolve()
    changes = _changes(before, project)
    reader = _Reader(before)
    parts: list[str] = []
    flags: list[str] = []
    total, truncated = 0, False
    for index, (path, old_id, new_id) in enumerate(changes):
        old = reader.read(old_id)
        new = _read_bytes(project / path) if new_id is not None else None
        flags.extend(_file_flags(path, old_id, new_id, old, new))
        if truncated:
            continue
        piece = _file_diff(path, old_id, new_id, old, new)
        if total + len(piece) > max_chars:
            parts.append(f"[... diff truncated: {len(changes) - index} more file(s) not shown ...]\n")
            truncated = True
            continue
        parts.append(piece)
        total += len(piece)
    return StepChanges([path for path, _old, _new in changes], "".join(parts), flags)


def restore_plan_repo(before: Snapshot, project_dir: Path, plans_dir: Path) -> list[str]:
    """Undo every change to the plan repo since ``before``: modified and
    deleted files get their saved bytes back, added files are removed.

    :return: one line per undone change, naming the file (empty: untouched).
    """
    project = Path(project_dir).resolve()
    plans = Path(plans_dir).resolve()
    reader = _Reader(before)
    undone = []
    for rel, old_id in sorted(before.plan_files.items()):
        path = plans / rel
        current = _blob_id(path)
        if current == old_id:
            continue
        data = reader.read(old_id)
        shown = _display(path, project)
        if data is None:
            undone.append(f"{shown} (changed, but its saved copy is missing: left as it is)")
            continue
        atomic_write(path, data)
        undone.append(f"{shown} ({'deleted' if current is None else 'modified'}; restored)")
    for rel in walk_files(plans):
        if rel not in before.plan_files:
            (plans / rel).unlink()
            undone.append(f"{_display(plans / rel, project)} (added; removed)")
    return undone


def file_ids(project_dir: Path) -> dict[str, str]:
    """``{path: content id}`` of the tracked and untracked non-ignored files
    (all files outside git, minus :data:`EXCLUDED_DIRS`), ``.stepkit/`` and
    caches left out.  Two maps compare equal when the files are byte-identical."""
    project = Path(project_dir).resolve()
    # one git process: the index ids (H), the files whose bytes differ from
    # them (C changed, R removed, M unmerged) and the untracked ones (?),
    # paths relative to the project dir
    listing = _run_git(["ls-files", "-z", "-t", "-s", "-m", "-d", "-o", "--exclude-standard"], project)
    ids: dict[str, str | None] = {}
    if listing is not None:
        dirty: set[str] = set()
        for entry in listing.split(b"\0"):
            tag, _, rest = entry.partition(b" ")
            meta, tab, name = rest.partition(b"\t")
            if not tab:
                if tag == b"?":
                    dirty.add(rest.decode("utf-8", "surrogateescape"))
                continue
            rel = name.decode("utf-8", "surrogateescape")
            mode, oid = meta.split()[:2]
            if tag in (b"C", b"R", b"M") and mode != b"160000":  # a submodule: its recorded commit
                dirty.add(rel)
            else:
                ids[rel] = oid.decode()
        for rel in dirty:
            if not _excluded(rel, None):
                ids[rel] = _blob_id(project / rel)
    else:
        for rel in walk_files(project, EXCLUDED_DIRS):
            ids[rel] = _blob_id(project / rel)
    return {rel: i for rel, i in ids.items() if i is not None and not _excluded(rel, None)}


def changed_between(before: dict[str, str], after: dict[str, str]) -> list[str]:
    """Paths added, removed or changed between two :func:`file_ids` maps, sorted."""
    return sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p))


def tree_hash(project_dir: Path) -> str:
    """One hash of :func:`file_ids`: equal hashes mean the gates would see
    byte-identical files."""
    return hash_ids(file_ids(project_dir))


def hash_ids(ids: dict[str, str]) -> str:
    """The :func:`tree_hash` of a :func:`file_ids` map already taken."""
    digest = hashlib.sha256()
    for rel, blob in sorted(ids.items()):
        digest.update(f"{rel}\0{blob}\n".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


# -- comparing -----------------------------------------------------------------


def _changes(before: Snapshot, project_dir: Path) -> list[tuple[str, str | None, str | None]]:
    """(path, id before, id now) of every changed file, sorted by path."""
    if before.mode == "plan":
        raise ValueError("a plan-only snapshot records no project files")
    project = Path(project_dir).resolve()
    skip = _plan_prefix(before)
    if before.mode == "git":
        old_ids = _git_before_ids(before, project)
        new_ids = {rel: _blob_id(project / rel) for rel in old_ids}
    else:
        now = {rel: (project / rel).lstat() for rel in walk_files(project, EXCLUDED_DIRS)}
        old_ids = {rel: before.files.get(rel) for rel in set(now) | set(before.files)}
        new_ids = {}
        for rel in old_ids:
            st = now.get(rel)
            if st is None:
                new_ids[rel] = None
            elif before.stats.get(rel) == [st.st_size, st.st_mtime_ns]:
                new_ids[rel] = old_ids[rel]
            else:
                new_ids[rel] = _blob_id(project / rel)
    return [(rel, old_ids[rel], new_ids[rel]) for rel in sorted(old_ids)
            if old_ids[rel] != new_ids[rel] and not _excluded(rel, skip)]


def _git_before_ids(before: Snapshot, project: Path) -> dict[str, str | None]:
    """Ids before the step of every file that may have changed since."""
    root = Path(before.git_root or project)
    head, dirty = _git_status(before)
    if head == before.head:
        # a file clean when the step started was as HEAD has it
        return {**dirty, **before.files}
    candidates = set(dirty)
    if before.head and head:
        out = _run_git(["diff", "--name-only", "-z", "--no-renames", before.head, head], root)
    else:
        out = _run_git(["ls-tree", "-r", "-z", "--name-only", head or before.head or "HEAD"], root)
    for name in (out or b"").split(b"\0"):
        rel = _project_rel(name.decode("utf-8", "surrogateescape"), before.prefix)
        if name and rel is not None:
            candidates.add(rel)
    tracked = _ls_tree(root, before.head, before.prefix) if before.head else {}
    return {**{rel: tracked.get(rel) for rel in candidates}, **before.files}


def _ls_tree(root: Path, commit: str, prefix: str) -> dict[str, str]:
    args = ["ls-tree", "-r", "-z", "--full-tree", commit]
    if prefix:
        args += ["--", prefix.rstrip("/")]
    ids = {}
    for entry in (_run_git(args, root) or b"").split(b"\0"):
        if b"\t" not in entry:
            continue
        meta, name = entry.split(b"\t", 1)
        kind, oid = meta.split()[1:3]
        rel = _project_rel(name.decode("utf-8", "surrogateescape"), prefix)
        if kind == b"blob" and rel is not None:
            ids[rel] = oid.decode()
    return ids


# -- git -----------------------------------------------------------------------


def _run_git(args: list[str], cwd: Path) -> bytes | None:
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, capture_output=True, check=False,
                              env={**os.environ, "GIT_OPTIONAL_LOCKS": "0", "LC_ALL": "C"})
    except OSError:
        return None
    return proc.stdout if proc.returncode == 0 else None


def _git_location(project: Path) -> tuple[str, str] | None:
    """(work tree root, project prefix inside it) or None outside git."""
    out = _run_git(["rev-parse", "--show-toplevel", "--show-prefix"], project)
    if out is None:
        return None
    lines = out.decode("utf-8", "surrogateescape").split("\n")
    if not lines[0]:
        return None
    return lines[0], lines[1] if len(lines) > 1 else ""


def _git_status(snap: Snapshot) -> tuple[str | None, dict[str, str | None]]:
    """HEAD (None before the first commit) and the project-relative paths git
    sees as modified, staged, deleted or untracked, each with its id in HEAD
    (None: not in HEAD)."""
    root = Path(snap.git_root or snap.project_dir)
    out = _run_git(["status", "--porcelain=v2", "-z", "--branch", "-uall", "--no-renames",
                    "--ignore-submodules=all"], root) or b""
    head = None
    paths: dict[str, str | None] = {}
    for entry in out.split(b"\0"):
        kind = entry[:2]
        if kind == b"# ":
            key, _, value = entry[2:].partition(b" ")
            if key == b"branch.oid" and value != b"(initial)":
                head = value.decode()
            continue
        if kind == b"1 ":  # 1 XY sub mH mI mW hH hI path
            fields = entry.split(b" ", 8)
            name, oid = fields[8], fields[6]
        elif kind == b"u ":  # u XY sub m1 m2 m3 mW h1 h2 h3 path: stage 2 is HEAD's
            fields = entry.split(b" ", 10)
            name, oid = fields[10], fields[8]
        elif kind == b"? ":
            name, oid = entry[2:], None
        else:
            continue
        rel = _project_rel(name.decode("utf-8", "surrogateescape"), snap.prefix)
        if rel is None or rel.startswith(".stepkit/"):
            continue
        # setdefault: a path both deleted from the index and untracked keeps
        # the id of its tracked entry, which comes first
        paths.setdefault(rel, oid.decode() if oid and oid.strip(b"0") else None)
    return head, paths


def _project_rel(repo_path: str, prefix: str) -> str | None:
    if prefix and not repo_path.startswith(prefix):
        return None
    return repo_path[len(prefix):]


# -- files and the object store ------------------------------------------------


def walk_files(root: Path, excluded: frozenset[str] = frozenset({".git"})) -> list[str]:
    """Relative posix paths of the files (and symlinks) under ``root``."""
    if not root.is_dir():
        return []
    found = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in excluded)
        base = Path(dirpath)
        found.extend((base / name).relative_to(root).as_posix() for name in filenames)
    return sorted(found)


def _data_id(data: bytes) -> str:
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def _blob_id(path: Path) -> str | None:
    """Git blob id of a file (of the link text for a symlink), None if absent."""
    try:
        if path.is_symlink():
            return _data_id(os.readlink(path).encode("utf-8", "surrogateescape"))
        digest = hashlib.sha1()
        with path.open("rb") as fh:
            digest.update(b"blob %d\0" % os.fstat(fh.fileno()).st_size)
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError, PermissionError):
        return None


def _read_bytes(path: Path) -> bytes | None:
    try:
        if path.is_symlink():
            return os.readlink(path).encode("utf-8", "surrogateescape")
        return path.read_bytes()
    except OSError:
        return None


class _Store:
    """Content-addressed copies of file bytes, keyed by blob id."""

    def __init__(self, root: Path):
        self.root = root
        self.kept = 0

    def put_file(self, path: Path, limit: int, text_only: bool = True) -> str | None:
        """Keep a copy of ``path`` (when small enough) and return its blob id."""
        try:
            st = path.lstat()
        except OSError:
            return None
        if stat.S_ISLNK(st.st_mode) or st.st_size > limit or self.kept + st.st_size > STORE_TOTAL_LIMIT:
            return _blob_id(path)
        data = _read_bytes(path)
        if data is None:
            return None
        oid = _data_id(data)
        if (text_only and b"\0" in data[:8192]) or self._path(oid).exists():
            return oid
        try:
            stepkit_dir(self.root.parent.parent)
            atomic_write(self._path(oid), data)
            self.kept += len(data)
        except OSError:
            pass  # an unwritable store only costs the "before" side of the diff
        return oid

    def get(self, oid: str) -> bytes | None:
        try:
            return self._path(oid).read_bytes()
        except OSError:
            return None

    def _path(self, oid: str) -> Path:
        return self.root / oid[:2] / oid[2:]


class _Reader:
    """Bytes of a file as it was before: the object store, else git's objects."""

    def __init__(self, before: Snapshot):
        self.store = _Store(Path(before.store))
        self.git_root = Path(before.git_root) if before.git_root else None

    def read(self, oid: str | None) -> bytes | None:
        if oid is None:
            return None
        data = self.store.get(oid)
        if data is None and self.git_root is not None:
            data = _run_git(["cat-file", "blob", oid], self.git_root)
        return data


def _plan_prefix(snap: Snapshot) -> str | None:
    """The plan repo's project-relative prefix (``plans/``), None if outside."""
    if not snap.plans_dir:
        return None
    try:
        rel = Path(snap.plans_dir).relative_to(snap.project_dir).as_posix()
    except ValueError:
        return None
    return "" if rel == "." else rel + "/"


def _excluded(rel: str, plan_prefix: str | None) -> bool:
    # caches and tool dirs never count as the step's changes, in git mode too
    # (a project without a .gitignore still has __pycache__ after its tests)
    if rel.startswith(".stepkit/") or not CACHE_DIRS.isdisjoint(rel.split("/")[:-1]):
        return True
    return plan_prefix is not None and (plan_prefix == "" or rel.startswith(plan_prefix))


def _display(path: Path, project: Path) -> str:
    try:
        return path.relative_to(project).as_posix()
    except ValueError:
        return str(path)


# -- diff ----------------------------------------------------------------------


def _text(data: bytes | None) -> str | None:
    """Decoded text, or None for binary or too large content."""
    if data is None or len(data) > DIFF_FILE_LIMIT or b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")


def _file_diff(path: str, old_id: str | None, new_id: str | None,
               old: bytes | None, new: bytes | None) -> str:
    if old_id is not None and old is None:
        return f"--- a/{path}\n+++ b/{path}\n[content before the step was not kept; file changed]\n"
    old_text = _text(old) if old is not None else ""
    new_text = _text(new) if new is not None else ""
    if old_text is None or new_text is None:
        return f"Binary or large file changed: {path}\n"
    lines = difflib.unified_diff(
        old_text.splitlines(keepends=True), new_text.splitlines(keepends=True),
        fromfile="/dev/null" if old_id is None else f"a/{path}",
        tofile="/dev/null" if new_id is None else f"b/{path}",
    )
    text = "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                   for line in lines)
    if len(text) > DIFF_FILE_MAX_CHARS:
        text = text[:DIFF_FILE_MAX_CHARS] + f"\n[... diff of {path} cut at {DIFF_FILE_MAX_CHARS} characters ...]\n"
    return text


# -- tamper flags ----------------------------------------------------------------

_TEST_PATH = re.compile(
    r"(^|/)(tests?|spec|specs|__tests__)/"
    r"|(^|/)test_[^/]*\.(py|rb)$|_test\.(py|go|rb|exs)$|_spec\.rb$"
    r"|\.(test|spec)\.[cm]?[jt]sx?$|(^|/)[^/]*Tests?\.(java|kt|cs|swift)$"
)

_MARKERS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (label, re.compile(pattern)) for label, pattern in (
        ("pytest skip/xfail marker", r"pytest\.mark\.(skip|skipif|xfail)\b|pytest\.(skip|xfail)\("),
        ("unittest skip", r"@unittest\.skip\w*|\bunittest\.skip\w*\(|\.skipTest\("),
        ("skipped JS test", r"\b(it|test|describe)\.(skip|todo)\(|\bx(it|test|describe)\("),
        ("JUnit @Disabled/@Ignore", r"@(Disabled|Ignore)\b"),
        ("#[ignore]", r"#\[ignore\b"),
        ("t.Skip", r"\bt\.Skip(Now|f)?\("),
        ("# noqa", r"#\s*noqa\b"),
        ("# type: ignore", r"#\s*type:\s*ignore"),
        ("pylint disable", r"pylint:\s*disable"),
        ("eslint-disable", r"eslint-disable"),
        ("@ts-ignore/@ts-nocheck", r"@ts-(ignore|nocheck|expect-error)"),
        ("pragma: no cover", r"pragma:\s*no\s*cover"),
        ("//nolint", r"//\s*nolint\b"),
    )
)


def _file_flags(path: str, old_id: str | None, new_id: str | None,
                old: bytes | None, new: bytes | None) -> list[str]:
    """The tamper flags of one changed file (:func:`tamper_flags`)."""
    if new_id is None:
        if _TEST_PATH.search(path):
            return [f"deleted test file: {path}"]
        if _is_quality_config(path):
            return [f"deleted lint/coverage config: {path}"]
        return []
    old_text, new_text = _text(old) if old_id else "", _text(new)
    if old_text is None or new_text is None:
        return []
    flags = _new_markers(path, old_text, new_text)
    if _is_quality_config(path):
        flags.extend(_loosened_config(path, old_text, new_text))
    return flags


def _new_markers(path: str, old: str, new: str) -> list[str]:
    flags = []
    for label, pattern in _MARKERS:
        added = len(pattern.findall(new)) - len(pattern.findall(old))
        if added > 0:
            flags.append(f"new {label} in {path} (+{added})")
    return flags


_QUALITY_CONFIG = re.compile(
    r"(^|/)(pyproject\.toml|setup\.cfg|tox\.ini|\.flake8|\.?ruff\.toml|\.coveragerc|\.?pylintrc"
    r"|\.?mypy\.ini|pytest\.ini|package\.json|\.eslintrc(\.\w+)?|eslint\.config\.\w+"
    r"|(jest|vitest)\.config\.\w+|\.golangci\.(yml|yaml|toml)|\.?clippy\.toml|codecov\.ya?ml"
    r"|\.nycrc(\.\w+)?|\.c8rc(\.\w+)?|\.rubocop\.yml|phpstan\.neon(\.dist)?|phpunit\.xml(\.dist)?"
    r"|\.swiftlint\.yml|detekt\.yml|tsconfig\.json)$"
)
# INI/TOML files that also hold unrelated settings: only these sections count
_SHARED_CONFIG = re.compile(r"(^|/)(pyproject\.toml|setup\.cfg|tox\.ini)$")
_QUALITY_SECTION = re.compile(
    r"ruff|flake8|coverage|pylint|mypy|pytest|isort|black|bandit|pyright|pycodestyle|pydocstyle", re.IGNORECASE
)
_LOOSENING_KEY = re.compile(
    r"ignore|exclude|omit|disable|skip|allow|noqa", re.IGNORECASE
)
_LOOSENING_VALUE = re.compile(r"[\"']off[\"']|:\s*off\b|[\"']?strict[\"']?\s*[:=]\s*false|--no-cov|-p\s+no:", re.IGNORECASE)
_THRESHOLD = re.compile(
    r"(?P<key>fail[_-]under|cov-fail-under|min(?:imum)?[_-]coverage|[\"']?(?:lines|branches|functions|statements)[\"']?)"
    r"\s*[=:]\s*(?P<value>\d+(?:\.\d+)?)", re.IGNORECASE
)
_KEY_LINE = re.compile(r"^\s*[\"']?(?P<key>[\w.\-]+)[\"']?\s*[=:]")
_SECTION_LINE = re.compile(r"^\s*\[+(?P<name>[^\]]+)\]+\s*$")


def _is_quality_config(path: str) -> bool:
    return bool(_QUALITY_CONFIG.search(path))


def _loosened_config(path: str, old: str, new: str) -> list[str]:
    flags = []
    shared = bool(_SHARED_CONFIG.search(path))
    before, after = _thresholds(old, shared), _thresholds(new, shared)
    for key, value in sorted(before.items()):
        if key not in after:
            flags.append(f"coverage threshold removed in {path}: {key} was {value:g}")
        elif after[key] < value:
            flags.append(f"coverage threshold lowered in {path}: {key} {value:g} -> {after[key]:g}")
    old_lines, new_lines = old.splitlines(), new.splitlines()
    matcher = difflib.SequenceMatcher(a=old_lines, b=new_lines, autojunk=False)
    for tag, _i1, _i2, j1, j2 in matcher.get_opcodes():
        if tag not in ("insert", "replace"):
            continue
        for index in range(j1, j2):
            line = new_lines[index].strip()
            if not line or line.startswith(("#", "//", ";")):
                continue
            section, key = _context(new_lines, index)
            if shared and not _QUALITY_SECTION.search(section):
                continue
            if _LOOSENING_KEY.search(key) or _LOOSENING_VALUE.search(line):
                flags.append(f"loosened lint/coverage config in {path}: {line[:120]}")
    return flags


def _thresholds(text: str, shared: bool) -> dict[str, float]:
    found: dict[str, float] = {}
    section = ""
    for line in text.splitlines():
        header = _SECTION_LINE.match(line)
        if header:
            section = header.group("name")
            continue
        if shared and not _QUALITY_SECTION.search(section) and "cov-fail-under" not in line:
            continue
        for match in _THRESHOLD.finditer(line):
            key = match.group("key").strip("\"'").lower().replace("-", "_")
            found[key] = max(found.get(key, 0.0), float(match.group("value")))
    return found


def _context(lines: list[str], index: int) -> tuple[str, str]:
    """(section header, nearest key) governing line ``index``: a list item
    belongs to the key that opened the list above it."""
    section = key = ""
    for line in reversed(lines[: index + 1]):
        if not key:
            match = _KEY_LINE.match(line)
            if match:
                key = match.group("key")
        header = _SECTION_LINE.match(line)
        if header:
            section = header.group("name")
            break
    return section, key
