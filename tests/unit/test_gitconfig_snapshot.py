"""stepkit's git calls read the user's git configuration as it stood when
the run started (stepkit/workspace/scope/gitconfig.py): a filter the user
had still applies, one written later does not.  Real git, a tmp HOME."""

from __future__ import annotations

from pathlib import Path

from stepkit.workspace.scope import git, gitconfig
from tests.support.gitrepo import init_repo

UPPER = '[filter "up"]\n\tsmudge = tr a-z A-Z\n\tclean = cat\n'


def checkout(root: Path, where: Path) -> str:
    assert git.worktree_add(root, where, "HEAD")
    return (where / "a.txt").read_text()


def test_the_snapshot_keeps_the_users_filter_and_ignores_a_later_one(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.delenv("GIT_CONFIG_GLOBAL", raising=False)
    (home / ".gitconfig").write_text(
        UPPER + '[user]\n\tname = "A \\"quoted\\" name"\n\temail = a@b\n'
    )
    (home / ".config" / "git" / "attributes").write_text("a.txt filter=up\n")
    root = tmp_path / "repo"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    init_repo(root)
    snapshot = gitconfig.take(tmp_path / "run" / gitconfig.RUN_DIR_NAME, root)
    # the run goes on: the filter changes, another file gets one
    (home / ".gitconfig").write_text('[filter "up"]\n\tsmudge = rev\n')
    (home / ".config" / "git" / "attributes").write_text("* filter=up\n")
    with gitconfig.pinned(snapshot.parent):
        assert checkout(root, tmp_path / "pinned") == "HELLO\n"  # the user's filter, as it was
        code, out, _ = git.call(["config", "user.name"], root)
        assert (code, out) == (0, b'A "quoted" name\n')
    assert checkout(root, tmp_path / "live") == "olleh\n"  # outside the run: the live one
