"""The step-runner graph's script nodes and end-node renderers.

Each function is named after its node in ``step_runner.yaml``, takes the
node's :class:`~stepkit.records.StageContext` and returns an
:class:`~stepkit.records.Outcome` whose ``route`` is one of the labels drawn
on that node's edges in the seed diagram.  One module per concern:

- :mod:`~stepkit.protocol.nodes.routes`: the routers and the nodes that only
  turn state into state;
- :mod:`~stepkit.protocol.nodes.verify`: the gates, the step-level fix loop
  and the handoff check;
- :mod:`~stepkit.protocol.nodes.endings`: the end nodes' renderers.

=====================  ==========  ===================================================
node                   module      route labels
=====================  ==========  ===================================================
resolve_step           routes      ``deps satisfied`` · ``deps unsatisfied`` · ``error``
route_staleness        routes      ``major deviation`` · ``else``
route_coder_result     routes      ``CODER_COMPLETE`` · ``REJECTED / FAILED``
route_sweep            routes      ``5+ files or boundary`` · ``else``
route_review           routes      ``🔴 critical findings`` · ``else``
revise_from_choice     routes      (next)
note_llm_fault         routes      (next)
verify_format_lint     verify      ``pass`` · ``fail`` · ``error``
verify_build           verify      ``pass`` · ``fail`` · ``error``
verify_tests           verify      ``pass`` · ``fail`` · ``error``
fix_loop_gate          verify      ``budget left`` · ``budget spent``
check_handoff          verify      ``schema valid`` · ``one retry`` · ``invalid twice``
=====================  ==========  ===================================================

The harness, never a model, decides what passed.
"""
