"""``stepkit run --worktree``: a step in a git work tree of its own; and
``stepkit run --parallel``: several at once.

- :mod:`~stepkit.worktrees.layout`: where the work trees live and how their
  branches are named;
- :mod:`~stepkit.worktrees.create`: the work tree and its branch, made from
  the user's HEAD (or another base) before the run starts;
- :mod:`~stepkit.worktrees.finish`: at the end of a run, the step's one
  commit, the merge ``--merge`` asked for (:mod:`~stepkit.worktrees.merge`)
  and the removal of a work tree whose branch holds everything (made as
  :mod:`~stepkit.worktrees.identity` says);
- :mod:`~stepkit.worktrees.runs`: the runs of every stepkit work tree of a
  repository, for ``stepkit resume`` from the user's tree;
- :mod:`~stepkit.worktrees.listing`: what ``stepkit status`` shows of them
  (no pydantic, no git process when there is no ``stepkit/`` branch).

``stepkit run --parallel N``, each step a ``--worktree`` run of its own:

- :mod:`~stepkit.worktrees.schedule`: which steps are ready;
- :mod:`~stepkit.worktrees.parallel`: the child processes, how they are
  stopped, and the exit code of them all;
- :mod:`~stepkit.worktrees.runstatus`: the file each child keeps of where
  it stands, which :mod:`~stepkit.worktrees.progress` draws as one line per run.

The record that says a work tree is stepkit's is
:mod:`stepkit.workspace.worktree_record`.  Nothing here touches the user's
work tree, index or HEAD, except the merge ``--merge`` asks for.
"""
