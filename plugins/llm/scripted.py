"""The scripted engine (``--engine scripted:FILE``): offline answers per node id.

This is a labelled offline engine for the demo and for tests of custom
graphs and plugins; it is not a stand-in for the real model (no prompt is
read, no tool is called, no token is spent).  FILE is YAML mapping a graph
node id to its answer::

    orient:                     # one answer, given at every call of the node
      plan_summary: ...
      has_major_deviation: false
    write_handoff:              # a list: consumed one per call, in order
      - {fault: "overloaded"}   # this call raises StageFault("overloaded")
      - step_summary: ...

Every answer is validated by the schema the stage asks for (an invalid one
is a StageFault naming the file and node).  A file written before a field
was added to a schema still works: the fields a schema lists in its
``ADDED_AFTER_RELEASE`` (name -> safe default, e.g. the handoff's
``acceptance_criteria: []``) are filled in when an answer leaves them out.  A node missing from the file,
or a list that has run out, is a StageFault too.

Resume safety: list positions are counted per node in
``<run_dir>/scripted_calls.json`` (written atomically before the answer is
returned), so a resumed run continues where it stopped instead of starting
the list again.  Outside a run (``run_dir`` None) the count lives in the
engine object.  A node interrupted after taking an answer but before its
checkpoint takes the next answer when it is re-run.

A relative FILE is looked up in the current directory, then in the project
directory.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from stepkit.errors import UsageError, describe_validation
from stepkit.plugins.llm.tools import Tool
from stepkit.records import StageContext, StageFault
from stepkit.workspace.files import atomic_write
from stepkit.yamltext import load_yaml

M = TypeVar("M", bound=BaseModel)
COUNTER_FILE = "scripted_calls.json"


class ScriptedEngine:
    """Answers from a YAML file, per node id."""

    def __init__(self, path: Path, answers: dict[str, Any]):
        self.path = path
        self.answers = answers
        self._counts: dict[str, int] = {}

    @classmethod
    def load(cls, name: str, project_dir: Path) -> ScriptedEngine:
        """Read FILE (relative: to the current dir, else the project dir); a
        missing or malformed file is a :class:`UsageError`."""
        path = Path(name).expanduser()
        if not path.is_absolute() and not path.exists():
            path = Path(project_dir) / path
        try:
            answers = load_yaml(path.read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"scripted engine: cannot read {name}: {exc.strerror}") from None
        except yaml.YAMLError as exc:
            raise UsageError(f"scripted engine: {path} is not valid YAML: {exc}") from None
        if not isinstance(answers, dict):
            raise UsageError(f"scripted engine: {path} must map node ids to answers")
        return cls(path, answers)

    def structured(
        self,
        *,
        node: str,
        system: str,
        prompt: str,
        schema: type[M],
        tools: list[Tool] | None,
        ctx: StageContext,
        max_turns: int = 20,
        prefix: str | None = None,
    ) -> M:
        """Return the node's next scripted answer, validated by ``schema``."""
        if node not in self.answers:
            raise StageFault(f"scripted engine: {self.path} has no answer for node {node}")
        entry = self.answers[node]
        index = self._take(node, ctx)
        if isinstance(entry, list):
            if index >= len(entry):
                raise StageFault(
                    f"scripted engine: node {node} was called {index + 1} times "
                    f"but {self.path} has {len(entry)} answer(s) for it"
                )
            entry = entry[index]
        ctx.emit(
            "llm_call",
            node=node,
            engine="scripted",
            model=f"scripted:{self.path.name}",
            call=index + 1,
            input_tokens=0,
            output_tokens=0,
            cache_read_tokens=0,
            cache_write_tokens=0,
            cost_usd=0.0,
        )
        if isinstance(entry, dict) and set(entry) == {"fault"}:
            raise StageFault(str(entry["fault"]))
        if isinstance(entry, dict):
            later = getattr(schema, "ADDED_AFTER_RELEASE", {})
            entry = {**{name: copy.deepcopy(value) for name, value in later.items()}, **entry}
        try:
            return schema.model_validate(entry)
        except ValidationError as exc:
            raise StageFault(
                f"scripted engine: the answer for node {node} in {self.path} does "
                f"not match {schema.__name__}: {describe_validation(exc)}"
            ) from None

    def _take(self, node: str, ctx: StageContext) -> int:
        """The node's call index (0-based), advancing the persisted counter."""
        if ctx.run_dir is None:
            index = self._counts.get(node, 0)
            self._counts[node] = index + 1
            return index
        counter = Path(ctx.run_dir) / COUNTER_FILE
        counter.parent.mkdir(parents=True, exist_ok=True)
        counts = json.loads(counter.read_text()) if counter.exists() else {}
        index = counts.get(node, 0)
        counts[node] = index + 1
        atomic_write(counter, json.dumps(counts, indent=1))
        return index
