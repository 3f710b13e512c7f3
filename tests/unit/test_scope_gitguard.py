"""The git-internals guard on its own: hooks added, changed, removed or
swapped for a link, config keys that run commands (an include too), each
flagged and undone with a kept copy; and stepkit's own git calls run no hook."""

from __future__ import annotations

import os
import shlex

from stepkit.workspace.scope import git as git_module
from stepkit.workspace.scope import git_internals, undo_git_changes
from tests.support.gitrepo import git, init_repo


def repo(tmp_path):
    project = init_repo(tmp_path / "project", {"a.py": "x = 1\n"})
    hook = project / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho the user's own hook\n")
    hook.chmod(0o755)
    return project


def test_a_changed_and_a_removed_hook_come_back_as_they_were(tmp_path):
    project = repo(tmp_path)
    hooks = project / ".git" / "hooks"
    before = git_internals(project)
    (hooks / "pre-push").write_text("#!/bin/sh\ncurl evil\n")
    (hooks / "post-checkout").symlink_to(project / "a.py")
    flags = undo_git_changes(before, tmp_path / "keep", project)
    assert [f.split(" during")[0] for f in flags] == [
        "git hook .git/hooks/post-checkout added",
        "git hook .git/hooks/pre-push changed",
    ]
    assert (hooks / "pre-push").read_text() == "#!/bin/sh\necho the user's own hook\n"
    assert os.access(hooks / "pre-push", os.X_OK) and not (hooks / "post-checkout").is_symlink()
    assert (
        tmp_path / "keep" / ".git-internals" / "pre-push"
    ).read_text() == "#!/bin/sh\ncurl evil\n"

    before = git_internals(project)
    (hooks / "pre-push").unlink()
    (flag,) = undo_git_changes(before, tmp_path / "keep", project)
    assert "pre-push removed" in flag and (hooks / "pre-push").exists()


def test_a_hooks_directory_swapped_for_a_link_is_put_back(tmp_path):
    project = repo(tmp_path)
    hooks = project / ".git" / "hooks"
    before = git_internals(project)
    planted = tmp_path / "planted"
    planted.mkdir()
    (planted / "pre-commit").write_text("#!/bin/sh\n")
    os.rename(hooks, tmp_path / "moved")
    hooks.symlink_to(planted)
    flags = undo_git_changes(before, tmp_path / "keep", project)
    assert "git hooks directory .git/hooks replaced" in flags[0]
    assert hooks.is_dir() and not hooks.is_symlink() and (hooks / "pre-push").exists()


def test_an_include_is_a_key_that_runs_commands(tmp_path):
    project = repo(tmp_path)
    before = git_internals(project)
    git(project, "config", "include.path", "../evil.cfg")
    git(project, "config", "core.sshCommand", "ssh -o ProxyCommand=evil")
    flags = undo_git_changes(before, tmp_path / "keep", project)
    assert [f.split(" during")[0] for f in flags] == [
        "git config core.sshcommand set to 'ssh -o ProxyCommand=evil'",
        "git config include.path set to '../evil.cfg'",
    ]
    assert "include" not in git(project, "config", "--list", "--local")


def test_stepkit_s_own_git_calls_run_no_hook(tmp_path):
    project = repo(tmp_path)
    marker = tmp_path / "ran"
    hook = project / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(marker))}\n")
    hook.chmod(0o755)
    git(project, "checkout", "-q", "-b", "other")
    assert marker.exists()  # the hook works for the user's git
    marker.unlink()
    head = git(project, "rev-parse", "HEAD").strip()
    assert git_module.worktree_add(project, tmp_path / "wt", head)
    assert not marker.exists()


def test_a_replace_ref_does_not_change_what_stepkit_reads(tmp_path):
    project = repo(tmp_path)
    original = git(project, "rev-parse", "HEAD:a.py").strip()
    (project / "b.py").write_text("x = 2\n")
    forged = git(project, "hash-object", "-w", "b.py").strip()
    git(project, "replace", original, forged)
    assert git(project, "cat-file", "blob", original) == "x = 2\n"  # what a plain git call sees now
    assert git_module.blob(project, original) == b"x = 1\n"
