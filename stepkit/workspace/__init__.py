"""The project's working tree: processes, the one gate runner, evidence,
stall detection, secret masking, file writes, and ``scope`` (snapshots, the
one git module, diffs, tamper flags).

It may import the top-level modules only; never ``engine``, ``protocol``,
``graph``, ``planrepo`` or ``cli``.
"""
