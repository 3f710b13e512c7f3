"""The graph model: nodes (a discriminated union on ``kind``), loading and
validation, state templates and the diagram.

Generic graph machinery: it names no node of the step protocol.  It may
import the top-level modules (``errors``, ``records``); never ``engine``,
``protocol``, ``cli``, ``workspace`` or ``planrepo``.
"""
