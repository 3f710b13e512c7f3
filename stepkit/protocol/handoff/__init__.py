"""Handoff files, one module per job:

- :mod:`~stepkit.protocol.handoff.render`: render a handoff from a stage's
  prose and the recorded gates (the Evidence is stepkit's, never the model's);
- :mod:`~stepkit.protocol.handoff.check`: check a handoff against the
  protocol's schema and the recorded gates;
- :mod:`~stepkit.protocol.handoff.claims`: the sentences that say a gate
  passed when it did not;
- :mod:`~stepkit.protocol.handoff.notes`: append durable facts to NOTES.md.
"""
