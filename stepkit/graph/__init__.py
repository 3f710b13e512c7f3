"""The graph: the node models (a pydantic discriminated union on ``kind``,
:mod:`~stepkit.graph.nodes`), the graph model (:mod:`~stepkit.graph.model`),
loading and validation (:mod:`~stepkit.graph.load`), state templates
(:mod:`~stepkit.graph.templates`) and the diagram (:mod:`~stepkit.graph.diagram`).

Generic graph machinery: it names no node of the step protocol.  It may
import the top-level modules (``errors``, ``records``); never ``engine``,
``protocol``, ``cli``, ``workspace`` or ``planrepo``.
"""
