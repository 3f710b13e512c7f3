"""The ``--set`` tunables: every key a run can be tuned with, its type and range.

Two kinds, checked before anything runs:

- the graph's budgets: its ``initial_state`` keys named ``max_*`` whose
  default is a whole number (``max_fix_attempts``, ``max_review_attempts`` in
  the step-runner), from 0 to one less than the graph's
  ``max_loop_iterations`` (a node entered more often fails the run anyway);
- the settings that the built-in plugins read from ``ctx.settings``
  (:data:`SETTINGS`), and ``model_<node>`` and ``effort_<node>`` (one of
  :data:`EFFORTS`) for a node of the graph.

A graph file's own tunables are its ``initial_state`` keys (its script
nodes read them; the value reaches the initial state as given).  Every other
key the graph's state uses (counters, records, node outputs:
``fix_attempts``, ``gates``, ``usage`` …) is run state that ``--set`` cannot
touch, and a key that is neither is refused, from the command line and the
Python API alike.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from stepkit.errors import UsageError

if TYPE_CHECKING:
    from stepkit.graph.model import Graph


@dataclass(frozen=True)
class Tunable:
    """One ``--set`` key: ``kind`` is int, float, bool or str; numbers are
    bounded by ``minimum`` (excluded when ``above``) and ``maximum``."""

    name: str
    kind: type
    minimum: float = 0
    maximum: float | None = None
    above: bool = False
    choices: tuple[str, ...] = ()

    def takes(self) -> str:
        """What the key takes, for the error message."""
        if self.kind is bool:
            return "true or false"
        if self.choices:
            return "one of " + ", ".join(self.choices)
        if self.kind is str:
            return "a model name"
        noun = "a whole number" if self.kind is int else "a number"
        if self.maximum is not None:
            return f"{noun} from {self.minimum:g} to {self.maximum:g}"
        return (
            f"{noun} above {self.minimum:g}"
            if self.above
            else f"{noun} of at least {self.minimum:g}"
        )

    def convert(self, value: Any) -> Any:
        """``value`` as this key's type.

        :raises ValueError: it is not one, or it is out of range.
        :raises TypeError: it is not even a scalar.
        """
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError
            return value
        if self.kind is str:
            if not isinstance(value, str) or not value.strip():
                raise ValueError
            if self.choices and value.strip() not in self.choices:
                raise ValueError
            return value.strip()
        if isinstance(value, bool) or (self.kind is int and not isinstance(value, int)):
            raise ValueError
        number = self.kind(value)  # a float tunable also takes "1e9", which YAML leaves a string
        if (
            not math.isfinite(number)
            or number < self.minimum
            or (self.above and number == self.minimum)
            or (self.maximum is not None and number > self.maximum)
        ):
            raise ValueError
        return number


#: The effort levels ``effort_<node>`` takes (the Messages API's ``output_config.effort``).
EFFORTS = ("low", "medium", "high", "max")

#: The settings the built-in plugins read (the engine, the coders, the ask plugin).
SETTINGS = (
    Tunable("max_cost_usd", float, above=True),
    Tunable("max_tokens", int, 1),
    Tunable("interactive", bool),
    Tunable("llm_max_retries", int),
    Tunable("llm_max_retry_wait_s", float),
    Tunable("llm_timeout_s", float, above=True),
    Tunable("llm_max_output_tokens", int, 1),
    Tunable("llm_context_budget_tokens", int, 1000),
    Tunable("coder_max_turns", int, 1),
    Tunable("coder_max_budget_usd", float, above=True),
    Tunable("coder_fix_budget", int, 1),
)


def budgets(graph: Graph) -> list[Tunable]:
    """The graph's budgets: ``initial_state`` keys ``max_*`` with a whole-number default."""
    return [
        Tunable(key, int, 0, graph.max_loop_iterations - 1)
        for key, default in graph.initial_state.items()
        if key.startswith("max_") and isinstance(default, int) and not isinstance(default, bool)
    ]


def check_sets(values: dict[str, Any], graph: Graph) -> dict[str, Any]:
    """``values`` checked against ``graph``'s tunables, converted to their types.

    :raises UsageError: one line naming the key and what it takes.
    """
    tunables = {t.name: t for t in (*budgets(graph), *SETTINGS)}
    own_keys = set(graph.initial_state) - set(tunables) if graph.source != "builtin" else set()
    state_keys = graph.known_keys()
    result = {}
    for key, value in values.items():
        tunable = tunables.get(key) or _model_tunable(key, graph)
        if key in own_keys:
            result[key] = value
        elif tunable is not None:
            try:
                result[key] = tunable.convert(value)
            except (TypeError, ValueError):
                raise UsageError(
                    f"--set {key}={_shown(value)}: {key} takes {tunable.takes()}"
                ) from None
        elif key in state_keys:
            raise UsageError(
                f"--set {key}=…: {key} is run state the graph keeps itself, not a tunable "
                f"(tunables: {_names(tunables)})"
            )
        elif key.startswith(_PER_NODE):
            stages = ", ".join(n.id for n in graph.nodes.values() if n.kind == "stage")
            node = key.split("_", 1)[1]
            raise UsageError(
                f"--set {key}=…: graph {graph.name} has no node '{node}' "
                f"(nodes that ask a model: {stages})"
            )
        else:
            raise UsageError(
                f"--set {key}=…: unknown key {key!r} (tunables: {_names(tunables, own_keys)})"
            )
    return result


#: the per-node keys: ``model_<node>`` (a model name), ``effort_<node>``
_PER_NODE = ("model_", "effort_")


def _model_tunable(key: str, graph: Graph) -> Tunable | None:
    for prefix in _PER_NODE:
        if key.startswith(prefix) and key[len(prefix) :] in graph.nodes:
            return Tunable(key, str, choices=EFFORTS if prefix == "effort_" else ())
    return None


def _names(tunables: dict[str, Tunable], own_keys: Iterable[str] = ()) -> str:
    return ", ".join([*tunables, *sorted(own_keys), "model_<node>", "effort_<node>"])


def _shown(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, default=str)
