"""The step protocol: ``step_runner.yaml``, its script nodes and routers, the
stage adapters that call the stage hooks, and handoff rendering, checking
and NOTES.

The only package that knows the step-runner's nodes.  It may import
``engine``, ``graph``, ``planrepo``, ``workspace`` and the top-level
modules; never ``cli`` or ``api``.
"""
