"""The plan repo: step plans, handoffs and NOTES.md.

- ``model``: the step plan and handoff model and :class:`PlanRepo` (lenient loading);
- ``document``: frontmatter reading;
- ``edits``: byte-preserving edits of plan files (status, edge cases);
- ``sections``: the one markdown parser (sections, code fences, list items);
- ``checks``: per-file field checks and cross-step checks;
- ``mergedriver`` and ``mergesetup``: the git merge driver that keeps every branch's
  NOTES facts and Edge-cases annotations, and its registration in a repository.

It may import ``workspace.files``, ``workspace.scope.git`` (the merge driver runs git) and
the top-level modules; never ``engine``, ``protocol``, ``graph`` or ``cli``.
"""
