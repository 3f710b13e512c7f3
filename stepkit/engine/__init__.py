"""The generic graph driver (:mod:`~stepkit.engine.driver`): runs any
validated graph node by node, with a typed and versioned checkpoint
(:mod:`~stepkit.engine.checkpoint`) saved in the run store
(:mod:`~stepkit.engine.runstore`) after every node, asking at approval and
input nodes (:mod:`~stepkit.engine.asking`, :mod:`~stepkit.engine.pause`),
and time limits and Ctrl-C (:mod:`~stepkit.engine.interrupts`).

The engine names no node id and no stage: stage nodes run through the stage
runner its caller passes in.  It may import ``graph``, ``workspace`` and the
top-level modules; never ``protocol``, ``planrepo`` or ``cli``.
"""
