"""Loading a graph file: YAML to the node and graph models, then every check
a run relies on (targets exist, options are routed, templates name known
keys, callables import, every node is reachable and can reach an end).

Every problem is one line, ``graph <file>: node '<id>' <field>: <problem>``;
:class:`~stepkit.errors.GraphError` carries the first (and how many more).
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from stepkit.errors import GraphError, describe_validation
from stepkit.graph.model import Graph
from stepkit.graph.nodes import (
    KINDS,
    NODE_FIELDS,
    NODE_TYPES,
    ApprovalNode,
    AskNode,
    Ending,
    EndNode,
    InputNode,
    LinkedNode,
    Node,
    NodeBase,
    ScriptNode,
    WorkNode,
)
from stepkit.graph.state import RunState, append_fields, has_key, is_strict, value_problem
from stepkit.graph.templates import strings_in, template_problems
from stepkit.yamltext import load_yaml

_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# mermaid flowchart keywords cannot be node ids
_RESERVED_IDS = {
    "end",
    "graph",
    "subgraph",
    "flowchart",
    "style",
    "class",
    "classDef",
    "click",
    "linkStyle",
    "direction",
    "default",
}
# what pydantic says of a required field that is absent or empty
_MISSING_ERRORS = {"missing", "string_too_short", "too_short"}


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
        data = load_yaml(text)
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
    nodes: dict[str, NodeBase] = {}
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
    graph.nodes = nodes  # type: ignore[assignment]  # each built by its kind's model
    return graph, []


def _build_node(node_id: str, raw: Any) -> tuple[NodeBase | None, str | None]:
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
    model = NODE_TYPES[kind]
    for field in raw:
        if field in NODE_FIELDS and (field == "id" or field not in model.model_fields):
            return None, f"{where} {field}: not a field of {kind} nodes"
    required = [name for name, info in model.model_fields.items() if info.is_required()]
    try:
        node = model.model_validate({**raw, "id": node_id})
    except ValidationError as exc:
        first = exc.errors(include_url=False)[0]
        field = first["loc"][0] if first["loc"] else None
        if field in required and first["type"] in _MISSING_ERRORS:
            return None, f"{where} {field}: missing (required for {kind} nodes)"
        return None, f"{where} {describe_validation(exc)}"
    for field in required:
        if getattr(node, field) in ("", [], {}):
            return None, f"{where} {field}: missing (required for {kind} nodes)"
    return node, None


def validate(graph: Graph) -> list[str]:
    """Every problem of a built graph, one line each, in a stable order."""
    problems: list[str] = []
    nodes = graph.nodes
    if not any(isinstance(n, EndNode) for n in nodes.values()):
        problems.append("nodes: no end node (kind: end)")
    if graph.start not in nodes:
        problems.append(f"start: unknown node '{graph.start}'")
    failure = nodes.get(graph.failure_node)
    if failure is None:
        problems.append(f"failure_node: unknown node '{graph.failure_node}'")
    elif not isinstance(failure, EndNode):
        problems.append(
            f"failure_node: '{graph.failure_node}' is a {failure.kind} node, not an end node"
        )
    for node in nodes.values():
        problems.extend(_check_node(node, nodes))
    state_problems = _check_state_model(
        graph
    )  # first: the model's keys are keys templates may read
    known = graph.known_keys()
    for node in nodes.values():
        question = node.question if isinstance(node, AskNode) else None
        views = node.views if isinstance(node, ApprovalNode) else {}
        templates = [
            ("question", question),
            *((f"views.{word}", template) for word, template in views.items()),
            *((f"{at}output", e.output) for at, e in _endings(node)),
        ]
        for field, template in templates:
            if template:
                problems.extend(
                    f"node '{node.id}' {field}: {p}" for p in template_problems(template, known)
                )
        for key in node.when if isinstance(node, EndNode) else ():
            if key not in known:
                problems.append(
                    f"node '{node.id}' when.{key}: no node sets '{key}' (list it in a node's outputs)"
                )
        for route, updates in node.updates.items() if isinstance(node, AskNode) else ():
            for key, value in updates.items():
                problems.extend(
                    f"node '{node.id}' updates.{route}.{key}: {p}"
                    for template in strings_in(value)
                    for p in template_problems(template, known)
                )
    problems.extend(_check_appends(graph, known))
    problems.extend(state_problems)
    if graph.recheck:
        graph._recheck_fn, problem = import_callable(graph.recheck)
        if problem:
            problems.append(f"recheck: {problem}")
    if not problems:
        problems.extend(_check_reachability(graph))
    return problems


def _check_node(node: Node, nodes: dict[str, Any]) -> list[str]:
    where = f"node '{node.id}'"
    problems = []
    if isinstance(node, WorkNode) and not node.next and not node.routes:
        problems.append(f"{where} next: missing (a {node.kind} node needs next or routes)")
    problems += [
        f"{where} {edge.field}: unknown target '{edge.to}'"
        for edge in node.edges()
        if edge.to not in nodes
    ]
    if isinstance(node, ApprovalNode):
        problems.extend(_check_approval(node, where))
    if isinstance(node, InputNode):
        problems += [
            f"{where} updates.{route}: an input node's only route is 'next'"
            for route in node.updates
            if route != "next"
        ]
    if isinstance(node, LinkedNode):
        routes = node.routes if isinstance(node, (WorkNode, ApprovalNode)) else {}
        problems += [
            f"{where} edge_labels.{key}: no such edge"
            for key in node.edge_labels
            if key not in {*routes, "next", "other", "fallback"}
        ]
    if isinstance(node, ScriptNode):
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


def _check_approval(node: ApprovalNode, where: str) -> list[str]:
    problems = [
        f"{where} routes: no route for option '{option}'"
        for option in node.options
        if option not in node.routes
    ]
    problems += [
        f"{where} routes.{key}: '{key}' is not one of the options"
        for key in node.routes
        if key not in node.options
    ]
    if node.other_as and node.other_as not in node.options:
        problems.append(f"{where} other_as: '{node.other_as}' is not one of the options")
    if node.on_other and node.other_as:
        problems.append(f"{where} other_as: give on_other or other_as, not both")
    if node.other_key and not node.on_other:
        problems.append(f"{where} other_key: only used with on_other")
    problems += [
        f"{where} aliases.{option}: not an option"
        for option in node.aliases
        if option not in node.options
    ]
    words = [w.casefold() for ws in node.aliases.values() for w in ws]
    problems += [
        f"{where} aliases: '{word}' is an option or listed twice"
        for word in sorted(set(words))
        if words.count(word) > 1 or word in {o.casefold() for o in node.options}
    ]
    problems += [
        f"{where} updates.{option}: not an option (or 'other')"
        for option in node.updates
        if option not in node.options and option != "other"
    ]
    answers = {o.casefold() for o in node.options} | set(words)
    problems += [
        f"{where} views: '{word}' is an option or an alias (a view is never an answer)"
        for word in node.views
        if word.casefold() in answers or len(word.split()) != 1
    ]
    return problems


def _check_appends(graph: Graph, known: set[str]) -> list[str]:
    """The ``append`` fields: set by some node, lists where the graph gives
    a value, never replaced by an answer."""
    problems = []
    for key in graph.append:
        if key not in known:
            problems.append(f"append.{key}: no node sets '{key}' (list it in a node's outputs)")
        elif not isinstance(graph.initial_state.get(key, []), list):
            problems.append(
                f"append.{key}: initial_state gives it {graph.initial_state[key]!r}, not a list"
            )
    appended = set(graph.append)
    for node in graph.nodes.values():
        if not isinstance(node, AskNode):
            continue
        where = f"node '{node.id}'"
        answer_key = node.key if isinstance(node, InputNode) else node.other_key
        if answer_key in appended:
            field = "key" if isinstance(node, InputNode) else "other_key"
            problems.append(
                f"{where} {field}: '{answer_key}' is an append field; an answer cannot replace it"
            )
        for route, updates in node.updates.items():
            problems += [
                f"{where} updates.{route}.{key}: '{key}' is an append field; give a list of new items"
                for key, value in updates.items()
                if key in appended and not isinstance(value, list)
            ]
    return problems


def _check_state_model(graph: Graph) -> list[str]:
    """``state``: the model imports; with a strict one, every key a node
    writes (outputs, updates, an answer's key), every ``initial_state``
    value and the ``append`` list agree with it."""
    if graph.state:
        model, problem = import_callable(graph.state)
        if problem:
            return [f"state: {problem.replace('module:function', 'module:Class')}"]
        if not (isinstance(model, type) and issubclass(model, RunState)):
            return [
                f"state: '{graph.state}' is not a state model (a subclass of stepkit.graph.state.RunState)"
            ]
        graph.state_model = model
    model = graph.state_model
    if not is_strict(model):
        return []
    name, ids = model.__name__, graph.nodes.keys()
    problems = []
    for node in graph.nodes.values():
        fields = [("outputs", key) for key in node.outputs]
        if isinstance(node, AskNode):
            fields += [
                (f"updates.{route}.{key}", key)
                for route, updates in node.updates.items()
                for key in updates
            ]
        if isinstance(node, ApprovalNode) and node.other_key:
            fields.append(("other_key", node.other_key))
        if isinstance(node, InputNode):
            fields.append(("key", node.key))
        problems += [
            f"node '{node.id}' {field}: '{key}' is not a key of the state model {name}"
            for field, key in fields
            if not has_key(model, key, ids)
        ]
        for route, updates in node.updates.items() if isinstance(node, AskNode) else ():
            problems += [
                f"node '{node.id}' updates.{route}.{key}: {problem}"
                for key, value in updates.items()
                if has_key(model, key, ids) and (problem := value_problem(model, key, value, ids))
            ]
    problems += [
        f"initial_state.{key}: {problem}"
        for key, value in graph.initial_state.items()
        if (problem := value_problem(model, key, value, ids))
    ]
    appended = append_fields(model)
    problems += [
        f"append.{key}: the state model {name} does not append to '{key}' (Annotated[list[...], APPEND])"
        for key in graph.append
        if key not in appended
    ]
    problems += [
        f"append: misses '{key}', which the state model {name} appends to"
        for key in sorted(appended - set(graph.append))
    ]
    return problems


def _endings(node: NodeBase) -> list[tuple[str, Ending]]:
    """An end node's endings, each with the prefix its fields have in errors:
    the node's own (``output``) and each ``when`` entry (``when.KEY.output``)."""
    if not isinstance(node, EndNode):
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
    problems = [
        f"node '{n}': unreachable from start '{graph.start}'" for n in nodes if n not in seen
    ]
    ends = {n for n, node in nodes.items() if isinstance(node, EndNode)}
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
