"""The plan repo: the step plan and handoff model, frontmatter reading,
byte-preserving edits of plan files, plan checks and markdown section
helpers.

It may import ``workspace.files`` and the top-level modules; never
``engine``, ``protocol``, ``graph`` or ``cli``.
"""
