"""The node models of a graph: one pydantic model per ``kind``, joined in the
discriminated union :data:`Node`.

Each model carries only its kind's fields, so a field of another kind is an
error naming the field (:func:`stepkit.graph.load.parse_graph` words it).
Fields a kind must have are required fields of its model.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal

from pydantic import ConfigDict, Field, PrivateAttr

from stepkit.models import Model


class Edge(Model):
    """A drawn edge: ``key`` is the route label the engine records, ``label``
    what the diagram shows; ``fault`` marks a fallback (dotted) edge."""

    source: str
    to: str
    key: str
    label: str = ""
    fault: bool = False
    #: the node field the edge comes from (``next``, ``routes.KEY``, ``on_other``, ``fallback``)
    field: str = ""


class NodeBase(Model):
    """What every node has: its id (the key in ``nodes``), a description, the
    diagram's kind line and the state keys it declares it sets."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    description: str = ""
    #: the kind line drawn under the id in the diagram (default: the kind)
    label: str | None = None
    #: who starts commands in this node, as reports name it (``the coder``;
    #: default: ``node <id>``)
    who: str | None = None
    #: state keys this node sets (templates may use them; the engine refuses others)
    outputs: list[str] = Field(default_factory=list)

    def edges(self) -> list[Edge]:
        """The node's outgoing edges in drawing order: next, routes, other, fallback."""
        return []

    def targets(self) -> list[str]:
        """Every node this node can route to (drawn edges)."""
        return [e.to for e in self.edges()]

    def state_keys(self) -> set[str]:
        """Every state key this node may set."""
        return set(self.outputs)


class LinkedNode(NodeBase):
    """A node with outgoing edges and labels for them."""

    #: diagram labels by route label, or ``next`` / ``other`` / ``fallback``
    edge_labels: dict[str, str] = Field(default_factory=dict)

    def _edges(
        self,
        next: str | None = None,
        routes: dict[str, str] | None = None,
        other: str | None = None,
        fallback: str | None = None,
    ) -> list[Edge]:
        labels = self.edge_labels
        result = []
        if next:
            result.append(
                Edge(
                    source=self.id, to=next, key="next", label=labels.get("next", ""), field="next"
                )
            )
        for key, target in (routes or {}).items():
            result.append(
                Edge(
                    source=self.id,
                    to=target,
                    key=key,
                    label=labels.get(key, key),
                    field=f"routes.{key}",
                )
            )
        if other:
            result.append(
                Edge(
                    source=self.id,
                    to=other,
                    key="other",
                    label=labels.get("other", "other"),
                    field="on_other",
                )
            )
        if fallback:
            result.append(
                Edge(
                    source=self.id,
                    to=fallback,
                    key="fallback",
                    label=labels.get("fallback", "fault"),
                    fault=True,
                    field="fallback",
                )
            )
        return result


class WorkNode(LinkedNode):
    """A node that does work (a script or a stage) and returns an Outcome."""

    next: str | None = None
    #: route label (what the node returns) → node id
    routes: dict[str, str] = Field(default_factory=dict)
    #: node to go to when this node faults (StageFault, exception, timeout)
    fallback: str | None = None
    max_attempts: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    rerun_on_resume: bool = True
    interrupted_reason: str | None = None

    def edges(self) -> list[Edge]:
        return self._edges(self.next, self.routes, fallback=self.fallback)

    def state_keys(self) -> set[str]:
        return {*self.outputs, f"{self.id}_fault"}


class ScriptNode(WorkNode):
    """A Python callable ``module:function``: ``f(StageContext) -> Outcome``."""

    kind: Literal["script"] = "script"
    call: str

    _fn: Callable[..., Any] | None = PrivateAttr(default=None)

    @property
    def function(self) -> Callable[..., Any] | None:
        """The imported ``call`` (set when the graph is validated)."""
        return self._fn


class StageNode(WorkNode):
    """A named stage, run by the stage runner the engine's caller passes in."""

    kind: Literal["stage"] = "stage"
    stage: str
    #: drawn as a ``[[subroutine]]``
    agent: bool = False


class AskNode(LinkedNode):
    """A node that asks a human through ``stepkit_ask``."""

    #: a template over the state
    question: str
    #: ``--answer NODE=TEXT`` may answer it before the question is shown
    pre_answer: bool = False
    #: route taken (an option, ``other``, or an input node's ``next``) → state
    #: updates; their strings are templates over the state and the answer
    updates: dict[str, dict[str, Any]] = Field(default_factory=dict)

    def state_keys(self) -> set[str]:
        keys = {*self.outputs, f"{self.id}_answer"}
        for updates in self.updates.values():
            keys.update(updates)
        return keys


class ApprovalNode(AskNode):
    """A question with options, each routed; free text goes to ``on_other``
    (stored in ``other_key``) or counts as the option ``other_as``."""

    kind: Literal["approval"] = "approval"
    options: list[str]
    #: option → node id, one per option
    routes: dict[str, str]
    on_other: str | None = None
    other_key: str | None = None
    other_as: str | None = None
    #: option → other words that mean it (``approve: [y, yes, lgtm]``)
    aliases: dict[str, list[str]] = Field(default_factory=dict)
    #: word → a template over the state: on a terminal, typing the word shows
    #: the text and asks again; never an answer (``diff: "{diff}"``)
    views: dict[str, str] = Field(default_factory=dict)

    def edges(self) -> list[Edge]:
        return self._edges(routes=self.routes, other=self.on_other)

    def alias_words(self) -> dict[str, str]:
        """Each alias, casefolded, and the option it means."""
        return {word.casefold(): option for option, words in self.aliases.items() for word in words}

    def state_keys(self) -> set[str]:
        keys = super().state_keys()
        if self.other_key:
            keys.add(self.other_key)
        return keys


class InputNode(AskNode):
    """A free-text question; the answer is stored in ``key``."""

    kind: Literal["input"] = "input"
    key: str
    next: str
    non_empty: bool = False

    def edges(self) -> list[Edge]:
        return self._edges(next=self.next)

    def state_keys(self) -> set[str]:
        return {*super().state_keys(), self.key}


class Ending(Model):
    """How an end node ends the run: the sentinel (always the output's first
    line), the exit code, and the output (a template or a render function)."""

    model_config = ConfigDict(extra="forbid")

    sentinel: str = Field(min_length=1)
    exit_code: int = Field(ge=0, le=255)
    output: str | None = None
    render: str | None = None

    _fn: Callable[..., Any] | None = PrivateAttr(default=None)

    @property
    def function(self) -> Callable[..., Any] | None:
        """The imported ``render`` function (set when the graph is validated)."""
        return self._fn


class EndNode(NodeBase, Ending):
    """Ends the run with its ending, or with the first ``when`` entry whose
    state key is set."""

    kind: Literal["end"] = "end"
    #: state key → the ending to use instead when that key is set (first set key wins)
    when: dict[str, Ending] = Field(default_factory=dict)

    def ending(self, state: dict[str, Any]) -> Ending:
        """The ending for this state: the first ``when`` entry whose key is
        set, else the node's own."""
        for key, ending in self.when.items():
            if state.get(key):
                return ending
        return self


Node = Annotated[
    ScriptNode | StageNode | ApprovalNode | InputNode | EndNode, Field(discriminator="kind")
]

#: The model of each kind, in the order error messages list the kinds.
NODE_TYPES: dict[str, type[NodeBase]] = {
    "script": ScriptNode,
    "stage": StageNode,
    "approval": ApprovalNode,
    "input": InputNode,
    "end": EndNode,
}
KINDS = tuple(NODE_TYPES)
#: Every field some kind has: on another kind it is "not a field of X nodes", not "unknown".
NODE_FIELDS: frozenset[str] = frozenset().union(*(t.model_fields for t in NODE_TYPES.values()))
