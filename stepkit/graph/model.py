"""The declarative graph: the :class:`Graph` model and the graph file's schema.

A graph file is a mapping with graph settings and ``nodes`` (node id → node).
Node kinds: ``script`` (a Python callable ``module:function`` taking one
:class:`~stepkit.records.StageContext` and returning an
:class:`~stepkit.records.Outcome`), ``stage`` (a named stage run by
:func:`stepkit.protocol.stages.run_stage`), ``approval`` (a question with options,
answered through ``stepkit_ask``), ``input`` (a free-text question) and
``end`` (emits a sentinel and an exit code); their models are in
:mod:`stepkit.graph.nodes`.  :func:`stepkit.graph.load.load_graph` validates
the whole graph before any run and raises :class:`~stepkit.errors.GraphError`
with one line naming the node and the field.

Schema (``stepkit/protocol/step_runner.yaml`` is the full example)::

    name: my_graph                # optional
    start: first_node             # required
    failure_node: end_failure     # an end node; engine-level failures go there
    max_loop_iterations: 20       # a node entered more often fails the run
    timeout: 7200                 # whole run, seconds of active time
    state: module:Class           # the state's typed model (stepkit.graph.state);
                                  # default: RunState, which takes any key
    recheck: module:function      # f(StageContext, path) -> Outcome | None, called at
                                  # every resume and before a successful end (exit 0):
                                  # an Outcome sends the run to the node its route names
    initial_state: {key: value}   # --set KEY=VALUE overrides / adds keys
    append: [key, ...]            # list fields: a node returns only its new items
                                  # (with a strict state model: its APPEND fields)
    nodes:
      <id>:                       # letters, digits, _ (not a mermaid keyword)
        kind: script|stage|approval|input|end
        description: text
        label: text               # kind line in the diagram (default: the kind)
        who: the coder            # who starts its commands, in processes_ended
        outputs: [key, ...]       # state keys it sets (for the template check)
        edge_labels: {<route>|next|other|fallback: text}   # diagram labels
        # script and stage:
        call: module:function     # script: f(StageContext) -> Outcome
        stage: name               # stage: run_stage(name, ctx) -> Outcome
        agent: true               # stage drawn as [[subroutine]]
        next: <id>                # taken when the Outcome's route is None
        routes: {<route label>: <id>}
        fallback: <id>            # on StageFault, exception or timeout
        max_attempts: 2           # retries only where set
        timeout: 60               # seconds per attempt
        rerun_on_resume: true     # false: an interrupted run fails instead
        interrupted_reason: text  # the failure reason when it does
        # approval (answered through stepkit_ask):
        question: "template {key}"
        options: [a, b]
        routes: {a: <id>, b: <id>}  # one per option
        on_other: <id>            # free text goes there ...
        other_key: key            # ... and is stored in this state key
        other_as: b               # or: any other answer counts as option b
        aliases: {a: [y, yes]}    # other words for an option
        updates: {a: {key: value}, other: {...}}   # strings are templates
        pre_answer: true          # --answer NODE=TEXT may answer it up front
        # input:
        question: "template"
        key: key                  # the answer's state key
        non_empty: true
        next: <id>
        updates: {next: {key: value}}   # strings are templates
        # end:
        sentinel: STEP_COMPLETE   # always the output's first line
        exit_code: 0
        output: "template"        # or
        render: module:function   # f(StageContext) -> str
        when:                     # another outcome when a state key is set
          <key>: {sentinel: ..., exit_code: ..., output|render: ...}

Templates are ``str.format`` fields over the state (:mod:`stepkit.graph.templates`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic import ConfigDict, Field, PrivateAttr

from stepkit.graph.nodes import Edge, Node
from stepkit.graph.state import ENGINE_KEYS, RunState, is_strict
from stepkit.models import Model

__all__ = ["ENGINE_KEYS", "Graph"]


class Graph(Model):
    """A validated graph: settings plus nodes in file order."""

    model_config = ConfigDict(extra="forbid")

    name: str = "graph"
    description: str = ""
    start: str
    failure_node: str = "end_failure"
    max_loop_iterations: int = Field(default=20, ge=1)
    timeout: float = Field(default=7200, gt=0)
    #: the state's typed model, ``module:Class`` (empty: :class:`RunState`)
    state: str = ""
    #: ``module:function`` run at every resume and before a successful end
    recheck: str = ""
    initial_state: dict[str, Any] = Field(default_factory=dict)
    #: list fields of the state a node's updates append to (its new items) instead of replacing
    append: list[str] = Field(default_factory=list)
    nodes: dict[str, Node]
    #: where the graph came from: "builtin" or an absolute file path
    source: str = "builtin"

    _state_model: type[RunState] = PrivateAttr(default=RunState)
    _recheck_fn: Callable[..., Any] | None = PrivateAttr(default=None)

    @property
    def recheck_function(self) -> Callable[..., Any] | None:
        """The imported ``recheck`` (set when the graph is validated)."""
        return self._recheck_fn

    @property
    def state_model(self) -> type[RunState]:
        """The class ``state`` names (set when the graph is validated)."""
        return self._state_model

    @state_model.setter
    def state_model(self, model: type[RunState]) -> None:
        self._state_model = model

    def sentinels(self) -> tuple[str, ...]:
        """Every outcome word a run of this graph can print first: its end
        nodes' sentinels (their ``when`` endings too) and ``PAUSED``."""
        words = {"PAUSED"}
        for node in self.nodes.values():
            if node.kind == "end":
                words.add(node.sentinel)
                words.update(ending.sentinel for ending in node.when.values())
        return tuple(sorted(words))

    def edges(self) -> list[Edge]:
        """Every drawn edge of the graph, node by node."""
        return [edge for node in self.nodes.values() for edge in node.edges()]

    def approves_the_step(self, node_id: str) -> bool:
        """Whether ``node_id`` is an approval node with a route straight to a
        successful end (the step-runner's gate_user_review): only a person
        answers it."""
        node = self.nodes.get(node_id)
        if node is None or node.kind != "approval":
            return False
        ends = [self.nodes[target] for target in node.routes.values()]
        return any(end.kind == "end" and end.exit_code == 0 for end in ends)

    def known_keys(self) -> set[str]:
        """State keys a template may use: initial state, run inputs, engine
        records and everything a node may set."""
        keys = set(self.initial_state) | set(ENGINE_KEYS)
        for node in self.nodes.values():
            keys.update(node.state_keys())
        model = getattr(self, "_state_model", None)
        if model is not None and is_strict(model):
            keys.update(model.model_fields)  # what the caller sets too (a rerun's kept handoff)
        return keys
