"""The step protocol: ``step_runner.yaml``, its script nodes and routers, the
stage adapters that call the stage hooks, and handoff rendering, checking
and NOTES.

The only package that knows the step-runner's nodes.  It may import
``engine``, ``graph``, ``planrepo``, ``workspace`` and the top-level
modules; never ``cli`` or ``api``.
"""

#: The outcome words a step-runner run prints first (``Graph.sentinels`` of the built-in graph).
SENTINELS = ("PAUSED", "STEP_BLOCKED", "STEP_COMPLETE", "STEP_FAILED", "STEP_REJECTED")
