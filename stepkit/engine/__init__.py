"""The generic graph driver: runs any validated graph node by node, with a
typed and versioned checkpoint after every node, the run store, asking at
approval and input nodes, and interrupts.

The engine names no node id and no stage: stage nodes run through the stage
runner its caller passes in.  It may import ``graph``, ``workspace`` and the
top-level modules; never ``protocol``, ``planrepo`` or ``cli``.
"""
