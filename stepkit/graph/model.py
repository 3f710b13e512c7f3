"""The declarative graph: pydantic models of a graph YAML file, its loader and
its validator.

A graph file is a mapping with graph settings and ``nodes`` (node id → node).
Node kinds: ``script`` (a Python callable ``module:function`` taking one
:class:`~stepkit.records.StageContext` and returning an
:class:`~stepkit.records.Outcome`), ``stage`` (a named stage run by
:func:`stepkit.protocol.stages.run_stage`), ``approval`` (a question with options,
answered through ``stepkit_ask``), ``input`` (a free-text question) and
``end`` (emits a sentinel and an exit code).  :func:`load_graph` validates
the whole graph before any run and raises :class:`~stepkit.errors.GraphError`
with one line naming the node and the field.

Schema (``stepkit/protocol/step_runner.yaml`` is the full example)::

    name: my_graph                # optional
    start: first_node             # required
    failure_node: end_failure     # an end node; engine-level failures go there
    max_loop_iterations: 20       # a node entered more often fails the run
    timeout: 7200                 # whole run, seconds of active time
    initial_state: {key: value}   # --set KEY=VALUE overrides / adds keys
    nodes:
      <id>:                       # letters, digits, _ (not a mermaid keyword)
        kind: script|stage|approval|input|end
        description: text
        label: text               # kind line in the diagram (default: the kind)
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
        updates: {a: {key: value}, other: {...}}
        pre_answer: true          # --answer NODE=TEXT may answer it up front
        # input:
        question: "template"
        key: key                  # the answer's state key
        non_empty: true
        next: <id>
        # end:
        sentinel: STEP_COMPLETE   # always the output's first line
        exit_code: 0
        output: "template"        # or
        render: module:function   # f(StageContext) -> str
        when:                     # another outcome when a state key is set
          <key>: {sentinel: ..., exit_code: ..., output|render: ...}

Templates are ``str.format`` fields over the state; a list renders as
``- item`` lines, a missing or None value as ``(none)``.
"""

from __future__ import annotations

import importlib
import re
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError

from stepkit.errors import GraphError, describe_validation

KINDS = ("script", "stage", "approval", "input", "end")

#: State keys every run has without any node declaring them: the run inputs
#: set by :func:`stepkit.api.run_step` and what the engine records itself.
ENGINE_KEYS = ("prompt", "step_request", "usage", "fault_note", "failure_reason", "last_fault_node")

_COMMON = {"kind", "description", "next", "routes", "fallback", "edge_labels", "max_attempts",
           "timeout", "rerun_on_resume", "interrupted_reason", "outputs", "label"}
_ASK = {"question", "pre_answer"}
#: Fields each kind may carry (anything else is an error naming the field).
FIELDS = {
    "script": _COMMON | {"call"},
    "stage": _COMMON | {"stage", "agent"},
    "approval": {"kind", "description", "routes", "edge_labels", "outputs", "label", "options",
                 "on_other", "other_key", "other_as", "updates"} | _ASK,
    "input": {"kind", "description", "next", "edge_labels", "outputs", "label", "key",
              "non_empty"} | _ASK,
    "end": {"kind", "description", "outputs", "label", "sentinel", "exit_code", "output", "render", "when"},
}
#: Fields each kind must carry.
REQUIRED = {
    "script": ("call",),
    "stage": ("stage",),
    "approval": ("question", "options", "routes"),
    "input": ("question", "key", "next"),
    "end": ("sentinel", "exit_code"),
}
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# mermaid flowchart keywords cannot be node ids
_RESERVED_IDS = {"end", "graph", "subgraph", "flowchart", "style", "class", "classDef",
                 "click", "linkStyle", "direction", "default"}


class Ending(BaseModel):
    """One entry of an end node's ``when``: another way to end the run, with
    the end node's own ending fields: the sentinel (always the output's first
    line), the exit code, and the output (a template or a render function)."""

    model_config = ConfigDict(extra="forbid")

    sentinel: str = Field(min_length=1)
    exit_code: int = Field(ge=0, le=255)
    output: str | None = None
    render: str | None = None

    _fn: Callable[..., Any] | None = PrivateAttr(default=None)

    @property
    def function(self) -> Callable[..., Any] | None:
        """The imported ``render`` function."""
        return self._fn


class Node(BaseModel):
    """One node of a graph.  Which fields apply depends on ``kind`` (see FIELDS)."""

    model_config = ConfigDict(extra="forbid")

    id: str = ""
    kind: str
    description: str = ""
    #: the kind line drawn under the id in the diagram (default: the kind)
    label: str | None = None
    next: str | None = None
    #: route label (what a script/stage returns, or an approval option) → node id
    routes: dict[str, str] = Field(default_factory=dict)
    #: node to go to when this node faults (StageFault, exception, timeout)
    fallback: str | None = None
    #: diagram labels by route label, or ``next`` / ``other`` / ``fallback``
    edge_labels: dict[str, str] = Field(default_factory=dict)
    max_attempts: int | None = Field(default=None, ge=1)
    timeout: float | None = Field(default=None, gt=0)
    rerun_on_resume: bool = True
    interrupted_reason: str | None = None
    #: state keys this node may set (for the template check)
    outputs: list[str] = Field(default_factory=list)
    call: str | None = None
    stage: str | None = None
    agent: bool = False
    question: str | None = None
    pre_answer: bool = False
    options: list[str] = Field(default_factory=list)
    on_other: str | None = None
    other_key: str | None = None
    other_as: str | None = None
    updates: dict[str, dict[str, Any]] = Field(default_factory=dict)
    key: str | None = None
    non_empty: bool = False
    sentinel: str | None = None
    exit_code: int | None = Field(default=None, ge=0, le=255)
    output: str | None = None
    render: str | None = None
    #: end: state key → the ending to use instead when that key is set (first set key wins)
    when: dict[str, Ending] = Field(default_factory=dict)

    _fn: Callable[..., Any] | None = PrivateAttr(default=None)

    @property
    def function(self) -> Callable[..., Any] | None:
        """The imported ``call`` (script) or ``render`` (end) function."""
        return self._fn

    def ending(self, state: dict[str, Any]) -> Node | Ending:
        """An end node's ending for this state: the first ``when`` entry whose
        key is set, else the node itself (its own sentinel, exit code, output
        and render function)."""
        for key, ending in self.when.items():
            if state.get(key):
                return ending
        return self

    def targets(self) -> list[str]:
        """Every node this node can route to (drawn edges)."""
        return [e.to for e in self.edges()]

    def edges(self) -> list[Edge]:
        """The node's outgoing edges in drawing order: next, routes, other, fallback."""
        labels = self.edge_labels
        result = []
        if self.next:
            result.append(Edge(source=self.id, to=self.next, key="next", label=labels.get("next", "")))
        for key, target in self.routes.items():
            result.append(Edge(source=self.id, to=target, key=key, label=labels.get(key, key)))
        if self.on_other:
            result.append(Edge(source=self.id, to=self.on_other, key="other",
                               label=labels.get("other", "other")))
        if self.fallback:
            result.append(Edge(source=self.id, to=self.fallback, key="fallback",
                               label=labels.get("fallback", "fault"), fault=True))
        return result


class Edge(BaseModel):
    """A drawn edge: ``key`` is the route label the engine records, ``label``
    what the diagram shows; ``fault`` marks a fallback (dotted) edge."""

    source: str
    to: str
    key: str
    label: str = ""
    fault: bool = False


class Graph(BaseModel):
    """A validated graph: settings plus nodes in file order."""

    model_config = ConfigDict(extra="forbid")

    name: str = "graph"
    description: str = ""
    start: str
    failure_node: str = "end_failure"
    max_loop_iterations: int = Field(default=20, ge=1)
    timeout: float = Field(default=7200, gt=0)
    initial_state: dict[str, Any] = Field(default_factory=dict)
    nodes: dict[str, Node]
    #: where the graph came from: "builtin" or an absolute file path
    source: str = "builtin"

    def edges(self) -> list[Edge]:
        """Every drawn edge of the graph, node by node."""
        return [edge for node in self.nodes.values() for edge in node.edges()]

    def known_keys(self) -> set[str]:
        """State keys a template may use: initial state, run inputs, engine
        records and everything a node declares it sets."""
        keys = set(self.initial_state) | set(ENGINE_KEYS)
        for node in self.nodes.values():
            keys.update(node.outputs)
            if node.kind in ("script", "stage"):
                keys.add(f"{node.id}_fault")
            if node.kind in ("approval", "input"):
                keys.add(f"{node.id}_answer")
            for key in (node.other_key, node.key):
                if key:
                    keys.add(key)
            for updates in node.updates.values():
                keys.update(updates)
        return keys


def load_graph(path: str | Path, source: str | None = None) -> Graph:
    """Load and validate a graph file.

    :param source: what checkpoints record as the graph's source (default:
        the file's absolute path).
    :raises GraphError: one line, ``graph <file>: node '<id>' <field>: <problem>``.
    """
    file = Path(path)
    shown = str(path) if source is None else file.name
    try:
        text = file.read_text(encoding="utf-8")
    except OSError as exc:
        raise GraphError(f"graph {shown}: cannot read: {exc.strerror or exc}") from None
    return parse_graph(text, shown, source or str(file.resolve()))


def parse_graph(text: str, shown: str = "graph.yaml", source: str = "builtin") -> Graph:
    """Parse and validate graph YAML text; ``shown`` names it in errors."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise GraphError(f"graph {shown}: not valid YAML: {problem}{where}") from None
    graph, problems = _build(data, source)
    if graph is not None:
        problems = validate(graph)
    if problems:
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise GraphError(f"graph {shown}: {problems[0]}{more}")
    assert graph is not None
    return graph


def _build(data: Any, source: str) -> tuple[Graph | None, list[str]]:
    """The pydantic models, or the problems that prevent building them."""
    if not isinstance(data, dict):
        return None, ["expected a mapping with 'start' and 'nodes'"]
    raw_nodes = data.get("nodes")
    if not isinstance(raw_nodes, dict) or not raw_nodes:
        return None, ["nodes: missing (a mapping of node id to node)"]
    problems: list[str] = []
    nodes: dict[str, Node] = {}
    for node_id, raw in raw_nodes.items():
        node_id = str(node_id)
        node, problem = _build_node(node_id, raw)
        if problem:
            problems.append(problem)
        elif node is not None:
            nodes[node_id] = node
    settings = {k: v for k, v in data.items() if k != "nodes"}
    try:
        graph = Graph.model_validate({**settings, "nodes": {}, "source": source})
    except ValidationError as exc:
        return None, [describe_validation(exc), *problems]
    if problems:
        return None, problems
    graph.nodes = nodes
    return graph, []


def _build_node(node_id: str, raw: Any) -> tuple[Node | None, str | None]:
    where = f"node '{node_id}'"
    if not _ID.match(node_id):
        return None, f"{where}: an id is letters, digits and underscores, not starting with a digit"
    if node_id in _RESERVED_IDS:
        return None, f"{where}: '{node_id}' is a reserved word in mermaid; pick another id"
    if not isinstance(raw, dict):
        return None, f"{where}: expected a mapping of fields"
    kind = raw.get("kind")
    if kind is None:
        return None, f"{where} kind: missing (one of {', '.join(KINDS)})"
    if kind not in KINDS:
        return None, f"{where} kind: unknown kind '{kind}' (expected one of {', '.join(KINDS)})"
    for field in raw:
        if field not in FIELDS[kind] and field in Node.model_fields:
            return None, f"{where} {field}: not a field of {kind} nodes"
    try:
        node = Node.model_validate({**raw, "id": node_id})
    except ValidationError as exc:
        return None, f"{where} {describe_validation(exc)}"
    for field in REQUIRED[kind]:
        if field not in node.model_fields_set or getattr(node, field) in (None, "", [], {}):
            return None, f"{where} {field}: missing (required for {kind} nodes)"
    return node, None


def validate(graph: Graph) -> list[str]:
    """Every problem of a built graph, one line each, in a stable order."""
    problems: list[str] = []
    nodes = graph.nodes
    if not any(n.kind == "end" for n in nodes.values()):
        problems.append("nodes: no end node (kind: end)")
    if graph.start not in nodes:
        problems.append(f"start: unknown node '{graph.start}'")
    failure = nodes.get(graph.failure_node)
    if failure is None:
        problems.append(f"failure_node: unknown node '{graph.failure_node}'")
    elif failure.kind != "end":
        problems.append(f"failure_node: '{graph.failure_node}' is a {failure.kind} node, not an end node")
    for node in nodes.values():
        problems.extend(_check_node(node, nodes))
    known = graph.known_keys()
    for node in nodes.values():
        templates = [("question", node.question), *((f"{at}output", e.output) for at, e in _endings(node))]
        for field, template in templates:
            if template:
                problems.extend(f"node '{node.id}' {field}: {p}" for p in template_problems(template, known))
        for key in node.when:
            if key not in known:
                problems.append(f"node '{node.id}' when.{key}: no node sets '{key}' (list it in a node's outputs)")
    if not problems:
        problems.extend(_check_reachability(graph))
    return problems


def _check_node(node: Node, nodes: dict[str, Node]) -> list[str]:
    where = f"node '{node.id}'"
    problems = []
    if node.kind in ("script", "stage") and not node.next and not node.routes:
        problems.append(f"{where} next: missing (a {node.kind} node needs next or routes)")
    for key, target in node.routes.items():
        if target not in nodes:
            problems.append(f"{where} routes.{key}: unknown target '{target}'")
    for field in ("next", "fallback", "on_other"):
        target = getattr(node, field)
        if target and target not in nodes:
            problems.append(f"{where} {field}: unknown target '{target}'")
    if node.kind == "approval":
        for option in node.options:
            if option not in node.routes:
                problems.append(f"{where} routes: no route for option '{option}'")
        for key in node.routes:
            if key not in node.options:
                problems.append(f"{where} routes.{key}: '{key}' is not one of the options")
        if node.other_as and node.other_as not in node.options:
            problems.append(f"{where} other_as: '{node.other_as}' is not one of the options")
        if node.on_other and node.other_as:
            problems.append(f"{where} other_as: give on_other or other_as, not both")
        if node.other_key and not node.on_other:
            problems.append(f"{where} other_key: only used with on_other")
        for option in node.updates:
            if option not in node.options and option != "other":
                problems.append(f"{where} updates.{option}: not an option (or 'other')")
    allowed_labels = set(node.routes) | {"next", "other", "fallback"}
    for key in node.edge_labels:
        if key not in allowed_labels:
            problems.append(f"{where} edge_labels.{key}: no such edge")
    if node.call:
        node._fn, problem = import_callable(node.call)
        if problem:
            problems.append(f"{where} call: {problem}")
    for at, ending in _endings(node):
        if not ending.output and not ending.render:
            problems.append(f"{where} {at}output: missing (an end node needs output or render)")
        if ending.render:
            ending._fn, problem = import_callable(ending.render)
            if problem:
                problems.append(f"{where} {at}render: {problem}")
    return problems


def _endings(node: Node) -> list[tuple[str, Node | Ending]]:
    """An end node's endings, each with the prefix its fields have in errors:
    the node's own (``output``) and each ``when`` entry (``when.KEY.output``)."""
    if node.kind != "end":
        return []
    return [("", node), *((f"when.{key}.", ending) for key, ending in node.when.items())]


def _check_reachability(graph: Graph) -> list[str]:
    nodes = graph.nodes
    seen = {graph.start, graph.failure_node}
    todo = [graph.start, graph.failure_node]
    while todo:
        for target in nodes[todo.pop()].targets():
            if target not in seen:
                seen.add(target)
                todo.append(target)
    problems = [f"node '{n}': unreachable from start '{graph.start}'" for n in nodes if n not in seen]
    ends = {n for n, node in nodes.items() if node.kind == "end"}
    reaches_end = set(ends)
    changed = True
    while changed:
        changed = False
        for node in nodes.values():
            if node.id not in reaches_end and any(t in reaches_end for t in node.targets()):
                reaches_end.add(node.id)
                changed = True
    problems += [f"node '{n}': cannot reach an end node" for n in nodes if n not in reaches_end]
    return problems


def import_callable(spec: str) -> tuple[Callable[..., Any] | None, str | None]:
    """Import ``module:function``; return it, or None and the problem."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        return None, f"'{spec}' is not 'module:function'"
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure is a graph error
        return None, f"cannot import '{spec}' ({type(exc).__name__}: {exc})"
    fn = getattr(module, attr, None)
    if fn is None:
        return None, f"cannot import '{spec}' (module '{module_name}' has no '{attr}')"
    if not callable(fn):
        return None, f"cannot import '{spec}' (not callable)"
    return fn, None


def template_keys(template: str) -> list[str]:
    """The state keys a ``{key}`` template reads.

    :raises ValueError: the template is malformed.
    """
    keys = []
    for _, field, _, _ in string.Formatter().parse(template):
        if field is None:
            continue
        base = re.split(r"[.\[]", field, maxsplit=1)[0]
        if not base or base.isdigit():
            raise ValueError(f"'{{{field}}}' names no state key")
        keys.append(base)
    return keys


def template_problems(template: str, known: set[str]) -> list[str]:
    """Problems of one template against the keys the graph can set."""
    try:
        keys = template_keys(template)
    except ValueError as exc:
        return [f"bad template: {exc}"]
    return [f"unknown key '{key}' (not in initial_state or any node's outputs)"
            for key in dict.fromkeys(keys) if key not in known]


class _TemplateState(dict):
    """State as templates see it: lists become bullet lines, missing or None
    values ``(none)``."""

    def __getitem__(self, key: str) -> Any:
        value = dict.get(self, key)
        if value is None:
            return "(none)"
        if isinstance(value, list):
            return "\n".join(f"- {_item_text(item)}" for item in value) or "(none)"
        return value


def _item_text(item: Any) -> str:
    if isinstance(item, dict) and "name" in item and "status" in item:  # a gate record
        from stepkit.records import GateResult

        return GateResult.model_validate(item).status_line()
    return str(item)


def render_template(template: str, state: dict[str, Any]) -> str:
    """Fill ``{key}`` fields from the state (see :class:`_TemplateState`)."""
    return template.format_map(_TemplateState(state))
