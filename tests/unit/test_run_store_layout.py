"""The run store's layout has one home, and its records are sealed.

Every module of ``stepkit`` and of ``plugins`` is read as text: only
``stepkit/workspace/store.py`` may spell the store's directory name; every
other module asks it for paths.  The seal's key is created 0600 outside the
project, and a record with a changed byte, a missing seal or another
record's seal is refused by name.
"""

from __future__ import annotations

import json
import re
import stat
import subprocess
from pathlib import Path

import pytest

from stepkit.workspace import seal
from stepkit.workspace.files import state_home
from stepkit.workspace.store import STORE_NAME, ensure_store, lock_files, store_dir
from tests.support.gitrepo import git

ROOT = Path(__file__).resolve().parents[2]
HOME = ROOT / "stepkit" / "workspace" / "store.py"
#: the directory name as a path component (``tool.stepkit``, ``hook.stepkit_x`` are not it)
SPELLED = re.compile(r"(?<![\w.])\.stepkit(?!\w)")


def test_only_the_store_module_spells_the_store_directory():
    spelled = [
        f"{path.relative_to(ROOT)}:{n}"
        for package in ("stepkit", "plugins")
        for path in sorted((ROOT / package).rglob("*.py"))
        if path != HOME
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if SPELLED.search(line)
    ]
    assert spelled == [], (
        f"ask stepkit.workspace.store for the run store's paths instead: {spelled}"
    )
    assert SPELLED.search(f'"{STORE_NAME}/"') and not SPELLED.search(
        "[tool.stepkit] pm.hook.stepkit_ask"
    )


def git_init(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q")
    return path


def test_the_store_is_in_the_git_dir_per_worktree_and_in_the_project_outside_git(tmp_path):
    repo = git_init(tmp_path / "repo")
    assert store_dir(repo) == repo.resolve() / ".git" / "stepkit" / "main"
    assert store_dir(repo / "sub" / "pkg") == repo.resolve() / ".git" / "stepkit" / "main--sub--pkg"
    subprocess.run(
        [
            "git",
            "-C",
            str(repo),
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "x",
        ],
        check=True,
    )
    subprocess.run(
        ["git", "-C", str(repo), "worktree", "add", "-q", str(tmp_path / "wt")], check=True
    )
    assert store_dir(tmp_path / "wt") == repo.resolve() / ".git" / "stepkit" / "worktrees" / "wt"

    plain = tmp_path / "plain"
    plain.mkdir()
    root = ensure_store(plain)
    assert root == plain.resolve() / STORE_NAME and (root / ".gitignore").read_text() == "*\n"


def test_the_lock_lives_outside_the_project(tmp_path):
    lock, record = lock_files(tmp_path)
    assert lock.parent == record.parent == state_home() / "locks"
    assert not lock.is_relative_to(tmp_path) and lock_files(tmp_path / "other")[0] != lock


def test_a_sealed_record_reads_back_and_its_key_is_private(tmp_path):
    record = tmp_path / "run" / "state.json"
    seal.write_sealed(record, '{"a": 1}')
    assert seal.read_sealed(record) == '{"a": 1}'
    assert json.loads(record.read_text())["a"] == 1  # still the JSON object programs read
    seal.write_sealed(record, "{}")
    assert seal.read_sealed(record) == "{}"
    key = state_home() / "secret"
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and not key.is_relative_to(tmp_path)


@pytest.mark.parametrize(
    "tamper",
    [
        lambda record: record.write_text(record.read_text().replace('"a": 1', '"a": 2')),
        lambda record: record.write_text('{"a": 1}'),
        lambda record: record.write_text(re.sub("[0-9a-f]{64}", "0" * 64, record.read_text())),
        lambda record: record.write_text(record.read_text()[:-1] + ', "b": 2}'),
        lambda record: record.write_text(record.read_text()[:-1] + ', "b": "' + "x" * 200 + '"}'),
    ],
)
def test_an_edited_or_unsealed_record_is_refused_by_name(tmp_path, tamper):
    record = tmp_path / "run" / "state.json"
    seal.write_sealed(record, '{"a": 1}')
    tamper(record)
    with pytest.raises(seal.SealBroken, match=re.escape(f"forged or edited: {record}")):
        seal.read_sealed(record)


def test_a_big_record_reads_back_by_its_seal_at_the_end(tmp_path):
    record = tmp_path / "run" / "state.json"
    text = json.dumps({"files": {f"lib/m{n}.py": "0" * 64 for n in range(20_000)}})
    seal.write_sealed(record, text)
    assert seal.read_sealed(record) == text
    record.write_text(record.read_text().replace("m7.py", "m8.py", 1))
    with pytest.raises(seal.SealBroken):
        seal.read_sealed(record)


def test_one_records_seal_does_not_pass_for_another(tmp_path):
    mine, other = tmp_path / "run-a" / "state.json", tmp_path / "run-b" / "state.json"
    seal.write_sealed(mine, '{"a": 1}')
    other.parent.mkdir()
    other.write_bytes(mine.read_bytes())
    with pytest.raises(seal.SealBroken):
        seal.read_sealed(other)


def test_json_lines_keeps_objects_and_the_other_lines_in_order():
    from stepkit.workspace.jsonlines import json_lines

    text = '{"a": 1}\nplain\n  {"b": 2}  \n{not json\n[1, 2]\n"str"\n'
    assert json_lines(text) == ([{"a": 1}, {"b": 2}], ["plain", "{not json", "[1, 2]", '"str"'])


def test_json_lines_are_read_by_one_function():
    """No other module parses JSON line by line (``json.loads`` of a line)."""
    per_line = re.compile(r"json\.loads\((line|stripped_line|raw_line)\b")
    readers = [
        str(path.relative_to(ROOT))
        for package in ("stepkit", "plugins")
        for path in sorted((ROOT / package).rglob("*.py"))
        if per_line.search(path.read_text(encoding="utf-8"))
    ]
    assert readers == []
