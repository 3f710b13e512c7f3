"""The gates: the one table every part of stepkit that lists gates iterates.

A row says what a gate is called, where a user sets its command by hand
(the environment variable, the ``[commands]`` keys), how long it may run,
whether its failure fails the step, and, by its place in :data:`GATES`, when
it runs.  The configuration models (:mod:`stepkit.config`), the overrides
plugin, the hook each gate's command is asked through
(``stepkit_gate_command``), the gate runner, the gate nodes, the fix loop,
the reports and the coder's prompt read it; docs/architecture.md ("Adding a
gate") shows a gate added as one more row.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gate:
    """One gate.

    :param name: the gate's name, in every record and ``--json`` (``tests``)
        and its ``[timeouts]`` key.
    :param env: the environment variable that sets its command (``TEST_CMD``).
    :param keys: its ``[commands]`` keys, the first as the configuration
        model names it, each accepted in ``[commands]`` and ``[timeouts]``
        (``("test", "tests")``).
    :param timeout: its default wall-clock limit in seconds (``[timeouts]``).
    :param fails_step: a failure of the gate fails the step and enters the
        fix loop; False: it is recorded and the step goes on (the formatter).
    :param legacy_hook: the per-gate hook that named its command before
        ``stepkit_gate_command`` (deprecated, still called); None for a
        gate added since.
    """

    name: str
    env: str
    keys: tuple[str, ...]
    timeout: float
    fails_step: bool = True
    legacy_hook: str | None = None


#: Every gate, in the order the gates run (a project's CI may reorder them:
#: ``stepkit_gate_order``).
GATES: tuple[Gate, ...] = (
    Gate(
        name="format",
        env="FORMAT_CMD",
        keys=("format",),
        timeout=300,
        fails_step=False,
        legacy_hook="stepkit_format_command",
    ),
    Gate(
        name="lint",
        env="LINT_CMD",
        keys=("lint",),
        timeout=300,
        legacy_hook="stepkit_lint_command",
    ),
    Gate(
        name="build",
        env="BUILD_CMD",
        keys=("build",),
        timeout=600,
        legacy_hook="stepkit_build_command",
    ),
    Gate(
        name="tests",
        env="TEST_CMD",
        keys=("test", "tests"),
        timeout=1200,
        legacy_hook="stepkit_test_command",
    ),
)

#: The gates' names, in run order.
GATE_ORDER: tuple[str, ...] = tuple(row.name for row in GATES)

_BY_NAME = {row.name: row for row in GATES}


def gate(name: str) -> Gate:
    """The row of gate ``name``.

    :raises ValueError: no gate has that name.
    """
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ValueError(
            f"unknown gate {name!r}; expected one of {', '.join(GATE_ORDER)}"
        ) from None
