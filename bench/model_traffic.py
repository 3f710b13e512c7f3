"""Model traffic of a step: request bytes per node, the cached prefix, and
how often the test command runs.

The real ``anthropic`` SDK talks to the loopback Messages API of
``tests/messages_api.py`` (its fake key; no network), through the real CLI.

**Traffic** (the demo step, ``prepare_demo_project()``): ``--engine
anthropic`` with scripted replies for ``orient`` (a ``read_file`` tool call,
then the answer), ``edge_case_sweep`` and ``write_handoff``; the demo's own
command coder and real ruff/pytest gates.  Per node: the requests' total
bytes (as sent), against the node's content (its system, prefix and prompt
text, once); and the prefix bytes: tools, system and message blocks up to
the last block carrying ``cache_control`` (the prefix the block markers
cache, in the API's order tools → system → messages), as a share of the
request bytes (both measured on compact JSON of the same body).

**Test runs per step**: the same demo step with the built-in coder
(``--coder anthropic``: a plan of complexity 3, an edit with ``write_file``,
a final answer) and ``TEST_CMD`` a script appending a line to a counter file
outside the project.  The coder's own tests gate passes; the step-level
``verify_tests`` may reuse it on a byte-identical tree.  Baseline: the same
run with ``reuse_coder_evidence = false``.  Counted: every run, and the runs
stepkit adds after the coder's round (the critical path: not the coder's own
runs, not the start's measure, which runs beside the coder at the lowest
priority).  Target: 1 run after the coder's round (the step adds a test
module: the earlier tests without it, or the coder's evidence; never both).  The
coder's two nodes are added to the traffic figures.

**Billed tokens** (:func:`billed_steps`): two steps of realistic size
(the demo's step 1 with a detailed plan, a long NOTES.md and a previous
handoff, a 1,200-line module) with the built-in coder, the sweep asking for a
review, the built-in reviewer and the handoff, each reply after a thinking
block: ``fix_rounds`` (one fix round after a failing test run, tool loops of
three to four turns, 23 requests) and ``large_read`` (orient and the
reviewer read the large module, two to three turns a node, 13 requests).
The loopback API does not cache, so :class:`CacheModel` bills the requests
it received by the API's documented rules (:data:`CACHE_MODEL`): full-price
input, cache writes and reads, the billed-equivalent total (writes ×1.25 at
the 5-minute TTL, ×2 at one hour, reads ×0.1, or the request's model's own
read rate where the pricing page gives one: ×0.05 on Sonnet 5.5, the default
model), output and thinking tokens and
the dollars at the price table.  Target: at most
:data:`TARGET_BILLED_RATIO` billed-equivalent per input token sent, on each.
The output format is billed as the system prompt it is sent as.  The reading
nodes (orient, sweep, review, handoff) share one prefix (tools, system,
output format, plan: ``stepkit.plugins.stages.readers``), read across nodes
of one effort.  The scripted replies are the same whatever the code under
test does, so the figures compare request shapes.

Run it directly (``python bench/model_traffic.py``) or call :func:`run`.
"""

from __future__ import annotations

import hashlib
import json
import os
import runpy
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from full_run import stepkit_json
from options import BenchParser

from stepkit.cli.demo import prepare_demo_project
from stepkit.workspace.scope import git
from stepkit.workspace.store import store_dir
from tests.support.e2e import clean_env, sandbox_table
from tests.support.messages_api import API_KEY, MessagesAPI

TARGET_TEST_RUNS = 1
#: the check the scripted coder runs before it answers (not the counted test command)
CODER_CHECK = "python -c 'import textkit; print(textkit.slugify(\"Hello, World!\"))'"
#: logs each run's start (epoch seconds) and niceness: the start's measure runs at the
#: lowest priority, beside the coder
COUNTER_SCRIPT = (
    '#!/bin/sh\necho "$(date +%s.%N) $(nice)" >> "$(dirname "$0")/test_runs.txt"\n'
    'echo "1 passed in 0.01s"\n'
)
PLAN = {
    "files_to_touch": ["textkit/slug.py", "textkit/__init__.py", "tests/test_slug.py"],
    "risks": ["none"],
    "complexity": 3,
    "approach": "add slugify in its own module, re-export it",
}


def _env(api: MessagesAPI, **extra: str) -> dict[str, str]:
    # the demo's gates run ruff and pytest from the environment stepkit runs in
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return clean_env(PATH=path, ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=API_KEY, **extra)


def _run_step(project: Path, api: MessagesAPI, coder: str, **env: str) -> tuple[str, list[dict]]:
    """Run step 1 to the final gate, approve it; the run id and its events."""
    environ = _env(api, **env)
    sets = ["--set", "llm_max_retries=0", "--set", "llm_timeout_s=60"]
    paused = stepkit_json(
        project,
        ["run", "--step", "1", "--engine", "anthropic", "--coder", coder, *sets],
        environ,
        5,
        timeout=300,
    )
    if paused["pending"]["node"] != "gate_user_review":
        raise SystemExit(f"the run paused at {paused['pending']['node']}, not gate_user_review")
    stepkit_json(
        project, ["resume", paused["run_id"], "--answer", "approve"], environ, 0, timeout=300
    )
    run_dir = store_dir(project) / "runs" / paused["run_id"]
    events = [
        json.loads(line)
        for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    return paused["run_id"], events


def _answers(project: Path) -> dict[str, Any]:
    return yaml.safe_load((project / "tools" / "demo_answers.yaml").read_text(encoding="utf-8"))


def _criteria_citing_no_test(answers: dict[str, Any]) -> list[dict[str, Any]]:
    """The demo handoff's criteria by id, as a model names them (C1 …),
    citing no test: the counted test command prints a count, no test ids a
    citation could be checked against."""
    return [
        {"criterion": f"C{number}", "tests": []}
        for number in range(1, len(answers["write_handoff"]["acceptance_criteria"]) + 1)
    ]


def _queue_orient(api: MessagesAPI, answers: dict[str, Any]) -> None:
    api.reply_tool("read_file", {"path": "textkit/__init__.py"})
    api.reply_json(answers["orient"])


def _queue_after_coder(api: MessagesAPI, answers: dict[str, Any]) -> None:
    api.reply_json(answers["edge_case_sweep"])
    api.reply_json(
        {**answers["write_handoff"], "acceptance_criteria": _criteria_citing_no_test(answers)}
    )


def _queue_builtin_coder(api: MessagesAPI, project: Path) -> None:
    """It reads the package's __init__ (a file is changed only once read) and
    plans, then one reply writes the demo coder's three files, then the answer."""
    demo = runpy.run_path(str(project / "tools" / "demo_coder.py"))
    api.reply_tool("read_file", {"path": "textkit/__init__.py"})
    api.reply_json(PLAN)
    writes = {
        "textkit/slug.py": demo["SLUG"],
        "tests/test_slug.py": demo["TESTS"],
        "textkit/__init__.py": demo["INIT"],
    }
    api.reply(
        [
            {
                "type": "tool_use",
                "id": f"toolu_w{n}",
                "name": "write_file",
                "input": {"path": path, "content": text},
            }
            for n, (path, text) in enumerate(writes.items())
        ],
        stop_reason="tool_use",
    )
    api.reply_tool("run_command", {"command": CODER_CHECK})
    api.reply_json({"status": "done", "summary": "added textkit.slugify with tests"})


# -- measuring ------------------------------------------------------------------


def _size(value: Any) -> int:
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def request_figures(body: dict[str, Any]) -> dict[str, int]:
    """Compact-JSON bytes of the body, of its cacheable prefix, of the marked
    blocks themselves, and of its text content (system, user text blocks)."""
    units: list[dict[str, Any]] = [*body.get("tools", []), *body.get("system", [])]
    for message in body["messages"]:
        content = message["content"]
        units.extend(content if isinstance(content, list) else [{"type": "text", "text": content}])
    marked = [i for i, unit in enumerate(units) if "cache_control" in unit]
    content_bytes = sum(len(block["text"].encode()) for block in body.get("system", []))
    first = body["messages"][0]["content"]
    content_bytes += sum(len(b.get("text", "").encode()) for b in first if isinstance(b, dict))
    return {
        "bytes": _size(body),
        "prefix_bytes": sum(_size(u) for u in units[: marked[-1] + 1]) if marked else 0,
        "marked_block_bytes": sum(_size(units[i]) for i in marked),
        "content_bytes": content_bytes,
    }


def traffic_by_node(api: MessagesAPI, events: list[dict]) -> dict[str, dict[str, Any]]:
    """Per node: requests, raw bytes sent, prefix bytes and share, content bytes."""
    nodes = [e["node"] for e in events if e["event"] == "llm_call"]
    if len(nodes) != len(api.requests):
        raise SystemExit(
            f"{len(api.requests)} requests reached the server but {len(nodes)} "
            "llm_call events were recorded"
        )
    per: dict[str, dict[str, Any]] = {}
    for node, request in zip(nodes, api.requests, strict=True):
        figures = request_figures(request.body)
        row = per.setdefault(
            node,
            {
                "requests": 0,
                "raw_bytes": 0,
                "bytes": 0,
                "prefix_bytes": 0,
                "marked_block_bytes": 0,
                "content_bytes": figures["content_bytes"],
            },
        )
        row["requests"] += 1
        row["raw_bytes"] += len(request.raw)
        for key in ("bytes", "prefix_bytes", "marked_block_bytes"):
            row[key] += figures[key]
    for row in per.values():
        row["prefix_share"] = round(row["prefix_bytes"] / row["bytes"], 4)
        row["ratio_to_content"] = round(row["raw_bytes"] / row["content_bytes"], 2)
    return per


# -- the runs ---------------------------------------------------------------------


def demo_traffic(parent: Path) -> dict[str, dict[str, Any]]:
    """The demo step with the demo's command coder; traffic of the three LLM nodes."""
    project = prepare_demo_project(parent)
    with MessagesAPI() as api:
        answers = _answers(project)
        _queue_orient(api, answers)
        _queue_after_coder(api, answers)
        coder = f"command:{sys.executable} tools/demo_coder.py"
        _, events = _run_step(project, api, coder)
        return traffic_by_node(api, events)


def test_runs(parent: Path, reuse: bool) -> dict[str, Any]:
    """The demo step with the built-in coder; how often TEST_CMD ran."""
    project = prepare_demo_project(parent)
    # the counter keeps its count beside the project, which the sandbox lets a gate
    # write only because the project says so (else every run went uncounted: 0)
    settings = "" if reuse else "reuse_coder_evidence = false\n"
    (project / "stepkit.toml").write_text(
        settings + sandbox_table(project.parent), encoding="utf-8"
    )
    counter = project.parent / "test_command.sh"
    counter.write_text(COUNTER_SCRIPT, encoding="utf-8")
    with MessagesAPI() as api:
        answers = _answers(project)
        _queue_orient(api, answers)
        _queue_builtin_coder(api, project)
        _queue_after_coder(api, answers)
        _, events = _run_step(project, api, "anthropic", TEST_CMD=f"sh {counter}")
        runs_file = project.parent / "test_runs.txt"
        lines = runs_file.read_text().splitlines() if runs_file.exists() else []
        runs = [(float(t), int(n)) for t, n in (line.split() for line in lines)]
        coder_end = max(
            e["t"] for e in events if e["event"] == "node_finished" and e["node"] == "implement"
        )
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        coder_gates = [(e["name"], e["status"]) for e in events if e["event"] == "coder_gate"]
        return {
            "test_runs": len(runs),
            "after_coder": sum(1 for t, n in runs if t > coder_end and n <= ours),
            "coder_gates": coder_gates,
            "reused": [e["gate"] for e in events if e["event"] == "gate_reused"],
            "traffic": {
                node: row
                for node, row in traffic_by_node(api, events).items()
                if node.startswith("coder_")
            },
        }


# -- billed input tokens -------------------------------------------------------

#: The cache model :class:`CacheModel` applies (the API's documented rules).
CACHE_MODEL = (
    "prefix order tools → system → messages; a breakpoint (a block's cache_control, or the "
    "request-level one on the last block) caches the prefix up to it when that prefix has at "
    "least the model's minimum (claude-sonnet-5-5: 512 tokens); at most 4 breakpoints; a hit "
    "is looked for at each breakpoint and up to 20 blocks before it; the output format is "
    "billed as the system prompt it is sent as (its JSON's tokens, before the system text); "
    "tool definitions key everything, the output format, thinking and effort key "
    "system and messages (a change there misses from the system on), tool_choice keys the "
    "messages; a TTL never lapses within a step; tokens ≈ compact-JSON characters / 4"
)
CACHE_LOOKBACK = 20
MAX_BREAKPOINTS = 4
CHARS_PER_TOKEN = 4
# Billed-equivalent multipliers of the base input price, from Anthropic's prompt-caching page
# (platform.claude.com/docs/en/build-with-claude/prompt-caching, "Pricing"): a cache write
# costs 1.25x with the default 5-minute TTL and 2x with the one-hour TTL ("ttl": "1h"); a
# cache read 0.1x, but 0.05x on Sonnet 5.5 and Opus 5.5 and 0.025x on Fable 5.1 and Mythos
# 5.1 (the pricing page's prompt-caching table; the price table's rows say the same).  The same page gives the minimum cacheable prefix per model (512 tokens
# for Fable 5.1, Mythos 5.1, Opus 5.5, Opus 5, Sonnet 5.5, Fable 5, Mythos 5 and Haiku 5.5;
# 1,024 for Sonnet 5 and Opus 4.8; 2,048 for Opus 4.7; 4,096 for Opus 4.6, Opus 4.5 and
# Haiku 4.5), kept in stepkit.plugins.llm.pricing, and what invalidates what ("What
# invalidates the cache"): tool_choice only the message blocks; thinking and effort always
# the message blocks and, on some models, the system (taken here: it is not said which);
# the structured-output page adds that the output format is sent as a system prompt of its
# own, so a change of format misses from the system on.
#: The one-hour write's multiplier; the 5-minute write's and the read's are
#: the request's model's, from the price table (``cache_write`` and
#: ``cache_read`` over ``input``: 1.25 and 0.1 for most models, reads 0.05 for
#: Sonnet 5.5 and Opus 5.5 and 0.025 for Fable 5.1 and Mythos 5.1).
WRITE_1H = 2.0


def min_cacheable(model: str) -> int:
    """The minimum cacheable prefix of ``model``, in tokens (the price table's)."""
    from stepkit.plugins.llm.pricing import min_cacheable_tokens

    return min_cacheable_tokens(model)


class CacheModel:
    """Bills a sequence of Messages API request bodies as the API would, by
    :data:`CACHE_MODEL` (one cache, shared by every request of the step)."""

    def __init__(self) -> None:
        self.cached: set[str] = set()

    def bill(self, body: dict[str, Any]) -> dict[str, int]:
        """``input`` (full price), ``cache_write`` and ``cache_read`` tokens of one request."""
        units = _units(body)
        tokens = [
            len(json.dumps(u, separators=(",", ":"), ensure_ascii=False)) // CHARS_PER_TOKEN
            for u, _ in units
        ]
        keys = self._keys(body, units)
        marks = [i for i, (u, _) in enumerate(units) if "cache_control" in u]
        if body.get("cache_control") and units:
            marks.append(len(units) - 1)
        if len(marks) > MAX_BREAKPOINTS:
            raise SystemExit(
                f"{len(marks)} cache breakpoints in one request: the API refuses more "
                f"than {MAX_BREAKPOINTS}"
            )
        marks = sorted(set(marks))
        hit = -1
        for mark in marks:
            for at in range(mark, max(mark - CACHE_LOOKBACK, -1), -1):
                if keys[at] in self.cached:
                    hit = max(hit, at)
                    break
        prefix = [sum(tokens[: i + 1]) for i in range(len(tokens))]
        minimum = min_cacheable(str(body.get("model")))
        written = [m for m in marks if m > hit and prefix[m] >= minimum]
        for mark in written:
            self.cached.add(keys[mark])
        read = prefix[hit] if hit >= 0 else 0
        writes = {"5m": 0, "1h": 0}
        start = read
        for mark in written:  # each breakpoint writes the stretch since the one before it
            control = units[mark][0].get("cache_control") or body.get("cache_control") or {}
            writes["1h" if control.get("ttl") == "1h" else "5m"] += prefix[mark] - start
            start = prefix[mark]
        return {
            "input": prefix[-1] - start if tokens else 0,
            "cache_write": writes["5m"],
            "cache_write_1h": writes["1h"],
            "cache_read": read,
        }

    @staticmethod
    def _keys(body: dict[str, Any], units: list[tuple[dict[str, Any], str]]) -> list[str]:
        """The cumulative cache key of the prefix ending at each unit: the
        settings that key a level join the digest where that level starts."""
        settings = {
            "system": json.dumps([body.get("output_config"), body.get("thinking")], sort_keys=True),
            "messages": json.dumps(body.get("tool_choice"), sort_keys=True),
        }
        digest = hashlib.sha256(str(body.get("model")).encode())
        levels = ("tools", "system", "messages")
        keys, started = [], set()
        for unit, level in units:
            for keyed in levels[1 : levels.index(level) + 1]:
                if keyed not in started:
                    digest.update(settings[keyed].encode())
                    started.add(keyed)
            plain = {k: v for k, v in unit.items() if k != "cache_control"}
            digest.update(json.dumps(plain, sort_keys=True).encode())
            keys.append(digest.copy().hexdigest())
        return keys


def _units(body: dict[str, Any]) -> list[tuple[dict[str, Any], str]]:
    """The request's blocks in cache order, each with its level."""
    units = [(tool, "tools") for tool in body.get("tools") or []]
    output_format = (body.get("output_config") or {}).get("format")
    if output_format:  # sent to the model as a system prompt of its own, billed as one
        units.append(({"type": "output_format", **output_format}, "system"))
    system = body.get("system") or []
    units += [
        ({"type": "text", "text": system} if isinstance(system, str) else block, "system")
        for block in (system if isinstance(system, list) else [system])
    ]
    for message in body["messages"]:
        content = message["content"]
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        units += [({**block, "role": message["role"]}, "messages") for block in blocks]
    return units


def billed_by_node(api: MessagesAPI, events: list[dict]) -> dict[str, dict[str, Any]]:
    """Per node and in total: requests, input tokens sent (``sent``: full
    price + cache writes + cache reads), full-price input, cache writes (5-minute
    and one-hour TTL) and reads, output and thinking (the replies' text and tool
    calls, and their thinking blocks, by the same token estimate), the
    billed-equivalent input tokens and their share of those sent, and the
    dollars of it all at the price table of the request's model."""
    from stepkit.plugins.llm.pricing import price_for

    nodes = [e["node"] for e in events if e["event"] == "llm_call"]
    if len(nodes) != len(api.requests):
        raise SystemExit(
            f"{len(api.requests)} requests reached the server but {len(nodes)} "
            "llm_call events were recorded"
        )
    cache = CacheModel()
    per: dict[str, dict[str, Any]] = {}
    for node, request, reply in zip(nodes, api.requests, api.served, strict=True):
        billed: dict[str, Any] = cache.bill(request.body)
        content = reply.get("content") or []
        billed["thinking"] = _tokens([b for b in content if b.get("type") == "thinking"])
        billed["output"] = _tokens([b for b in content if b.get("type") != "thinking"])
        price = price_for(str(request.body.get("model")))
        billed["billed_equivalent"] = (
            billed["input"]
            + billed["cache_write"] * price.cache_write / price.input
            + billed["cache_write_1h"] * WRITE_1H
            + billed["cache_read"] * price.cache_read / price.input
        )
        billed["usd"] = (
            billed["input"] * price.input
            + billed["cache_write"] * price.cache_write
            + billed["cache_write_1h"] * price.input * WRITE_1H
            + billed["cache_read"] * price.cache_read
            + (billed["output"] + billed["thinking"]) * price.output
        ) / 1_000_000
        for name in (node, "total"):
            row = per.setdefault(name, dict.fromkeys(["requests", *billed], 0))
            row["requests"] += 1
            for key, value in billed.items():
                row[key] += value
    for row in per.values():
        row["sent"] = row["input"] + row["cache_write"] + row["cache_write_1h"] + row["cache_read"]
        row["billed_equivalent"] = round(row["billed_equivalent"])
        row["billed_ratio"] = (
            round(row["billed_equivalent"] / row["sent"], 3) if row["sent"] else 0.0
        )
        row["usd"] = round(row["usd"], 4)
    per["total"] = per.pop("total")
    return per


def _tokens(value: Any) -> int:
    """The token estimate of the cache model: compact-JSON characters / 4."""
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False)) // CHARS_PER_TOKEN


BILLED_COLUMNS = (
    ("node", "node"),
    ("requests", "requests"),
    ("sent", "input sent"),
    ("cache_write", "cache writes"),
    ("cache_read", "cache reads"),
    ("output", "output"),
    ("thinking", "thinking"),
    ("billed_equivalent", "billed-eq. input"),
    ("billed_ratio", "billed / sent"),
    ("usd", "USD"),
)


def billed_table(nodes: dict[str, dict[str, Any]]) -> str:
    """The per-node table of :func:`billed_by_node`, as Markdown (one-hour
    cache writes are added to the writes column when a request made any)."""
    lines = [
        "| " + " | ".join(title for _, title in BILLED_COLUMNS) + " |",
        "|" + "---|" * len(BILLED_COLUMNS),
    ]
    for node, row in nodes.items():
        cells = [f"**{node}**" if node == "total" else node]
        for key, _ in BILLED_COLUMNS[1:]:
            if key == "billed_ratio":
                cells.append(f"{row[key]:.2f}")
            elif key == "usd":
                cells.append(f"{row[key]:.4f}")
            elif key == "cache_write" and row["cache_write_1h"]:
                cells.append(f"{row[key]:,} + {row['cache_write_1h']:,} (1 h)")
            else:
                cells.append(f"{row[key]:,}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: answers valid for the code before and after structured verdicts (extra keys are ignored)
REALISTIC_ANSWERS: dict[str, Any] = {
    "orient": {
        "plan_summary": "Add textkit.slugify with tests, exported from the package.",
        "implementation_brief": "Create textkit/slug.py; re-export; tests/test_slug.py.",
        "staleness_report": "clean",
        "has_major_deviation": False,
        "deviation_summary": "None",
        "findings": [],
    },
    "sweep": {
        "edge_case_report": "- handled: empty text (tests/test_slug.py:12)\n"
        "- punted: transliteration (step 3)",
        "downstream_updates": "None",
        "needs_independent_review": True,
        "annotations": [{"step": 3, "edge_case": "`slug -` reads stdin."}],
    },
    "review": {
        "review_report": "🟢 minor: textkit/slug.py: the docstring could name the regex",
        "findings": [
            {
                "severity": "minor",
                "file": "textkit/slug.py",
                "criterion": "none",
                "problem": "the docstring could name the regex",
            }
        ],
    },
    "handoff": {
        "step_summary": "Added textkit.slugify with tests.",
        "result": "complete",
        "summary": "textkit.slugify turns titles into URL slugs.",
        "completed": "- textkit/slug.py\n- re-export\n- tests",
        "not_completed": "None",
        "deviations": "- tests fix 1: the empty-text test failed; fixed the strip",
        "downstream_plan_updates": "Step 3: an edge case for `slug -`.",
        "edge_cases_discovered": "Non-ASCII letters are dropped.",
        "notes_for_next_step": "Follow the module + re-export pattern.",
        "notes_facts": [],
    },
}
FAILING_ONCE = (
    '#!/bin/sh\nrun="$(dirname "$0")/test_runs.txt"\necho run >> "$run"\n'
    'if [ "$(wc -l < "$run")" -le 1 ]; then echo "FAILED tests/test_slug.py::test_empty_text"; '
    'echo "1 failed, 3 passed in 0.01s"; exit 1; fi\necho "4 passed in 0.01s"\n'
)


def _prose(topic: str, paragraphs: int) -> str:
    """Plan-like text of a realistic density (no repeated sentence)."""
    return "\n\n".join(
        f"- {topic} {n}: the helper keeps the module boundary of textkit/{topic}_{n}.py, "
        f"documents its inputs (empty, whitespace only, mixed case, digits, punctuation run "
        f"number {n}) and is covered by a test named test_{topic}_{n} that states the expected "
        f"output literally, so a reviewer can compare it with the acceptance criterion {n % 5}."
        for n in range(paragraphs)
    )


def realistic_project(parent: Path) -> Path:
    """The demo project grown to a step of realistic size."""
    project = prepare_demo_project(parent)
    plans = project / "plans"
    plan = plans / "steps" / "01-slugify.md"
    plan.write_text(
        plan.read_text(encoding="utf-8") + "\n## Details\n\n" + _prose("detail", 40) + "\n",
        encoding="utf-8",
    )
    (plans / "NOTES.md").write_text("# Notes\n\n" + _prose("note", 25) + "\n", encoding="utf-8")
    handoffs = plans / "handoffs"
    handoffs.mkdir(exist_ok=True)
    (handoffs / "00-bootstrap.md").write_text(
        "---\nstep: 0\ntitle: Bootstrap\nresult: complete\n---\n\n## Summary\n\nSet up textkit.\n\n"
        "## Notes for next step\n\n" + _prose("handoff", 30) + "\n",
        encoding="utf-8",
    )
    (project / "textkit" / "tables.py").write_text(
        "".join(
            f"TABLE_{n} = {{'key': {n}, 'name': 'entry {n}', 'weight': {n * 7 % 13}}}\n"
            for n in range(1200)
        ),
        encoding="utf-8",
    )
    git.commit_all(project, "a step of realistic size", name="bench", email="bench@stepkit.invalid")
    return project


#: the thinking block of every scripted reply of the billed steps (adaptive
#: thinking is on for their nodes): about 250 tokens, sent back in the history
THOUGHT = _prose("thought", 3)


def _queue_fix_rounds(api: MessagesAPI, project: Path) -> None:
    """The step with a fix round: three to four turns per node, 23 requests."""
    demo = runpy.run_path(str(project / "tools" / "demo_coder.py"))
    a = REALISTIC_ANSWERS
    tool, answer = _thinking_replies(api)
    for path in ("textkit/__init__.py", "textkit/tables.py"):
        tool("read_file", {"path": path})
    tool("search", {"pattern": "def word_count"})
    answer(a["orient"])
    tool("read_file", {"path": "textkit/counting.py"})
    tool("read_file", {"path": "textkit/__init__.py"})  # the coder changes it: it reads it first
    tool("list_dir", {"path": "textkit"})
    answer(PLAN)
    tool("write_file", {"path": "textkit/slug.py", "content": demo["SLUG"]})
    tool("write_file", {"path": "tests/test_slug.py", "content": demo["TESTS"]})
    tool("write_file", {"path": "textkit/__init__.py", "content": demo["INIT"]})
    tool("run_command", {"command": CODER_CHECK})
    answer({"status": "done", "summary": "added textkit.slugify with tests"})
    tool("read_file", {"path": "textkit/slug.py"})  # the fix round
    tool("run_command", {"command": CODER_CHECK})
    answer({"status": "done", "summary": "fixed the empty-text case"})
    tool("read_file", {"path": "textkit/slug.py"})
    tool("search", {"pattern": "slugify"})
    answer(a["sweep"])
    tool("read_file", {"path": "textkit/slug.py"})
    tool("read_file", {"path": "tests/test_slug.py"})
    answer(a["review"])
    answer({**a["handoff"], "acceptance_criteria": _criteria_citing_no_test(_answers(project))})


def _queue_large_read(api: MessagesAPI, project: Path) -> None:
    """The step that reads a large module (orient, then the reviewer) and
    passes its tests at once: two or three turns per node, 13 requests."""
    demo = runpy.run_path(str(project / "tools" / "demo_coder.py"))
    a = REALISTIC_ANSWERS
    tool, answer = _thinking_replies(api)
    tool("read_file", {"path": "textkit/tables.py"})
    answer(a["orient"])
    tool("read_file", {"path": "textkit/__init__.py"})
    answer(PLAN)
    writes = {
        "textkit/slug.py": "SLUG",
        "tests/test_slug.py": "TESTS",
        "textkit/__init__.py": "INIT",
    }
    api.reply(
        [
            {
                "type": "tool_use",
                "id": f"toolu_w{n}",
                "name": "write_file",
                "input": {"path": path, "content": demo[key]},
            }
            for n, (path, key) in enumerate(writes.items())
        ],
        stop_reason="tool_use",
        thinking=THOUGHT,
    )
    tool("run_command", {"command": CODER_CHECK})
    answer({"status": "done", "summary": "added textkit.slugify with tests"})
    tool("search", {"pattern": "slugify"})
    answer(a["sweep"])
    tool("read_file", {"path": "textkit/tables.py"})
    tool("read_file", {"path": "textkit/slug.py"})
    answer(a["review"])
    answer({**a["handoff"], "acceptance_criteria": _criteria_citing_no_test(_answers(project))})


def _thinking_replies(api: MessagesAPI) -> tuple[Any, Any]:
    """Queue a tool call / a JSON answer, each after :data:`THOUGHT`."""

    def tool(name: str, args: dict[str, Any]) -> None:
        api.reply_tool(name, args, thinking=THOUGHT)

    def answer(value: dict[str, Any]) -> None:
        api.reply_json(value, thinking=THOUGHT)

    return tool, answer


#: the billed scenarios: name → (what queues the replies, the test command's script)
SCENARIOS = {
    "fix_rounds": (_queue_fix_rounds, FAILING_ONCE),
    "large_read": (_queue_large_read, COUNTER_SCRIPT),
}
#: the bound on billed-equivalent / sent input tokens, per scenario
TARGET_BILLED_RATIO = 0.45


def billed_step(parent: Path, scenario: str) -> dict[str, Any]:
    """One billed scenario on a step of realistic size, through the real CLI."""
    queue, script = SCENARIOS[scenario]
    project = realistic_project(parent)
    counter = project.parent / "test_command.sh"
    counter.write_text(script, encoding="utf-8")
    with MessagesAPI() as api:
        queue(api, project)
        _, events = _run_step(
            project, api, "anthropic", TEST_CMD=f"sh {counter}", CODER_AUTOAPPROVE="1"
        )
        return billed_by_node(api, events)


def billed_steps(parent: Path) -> dict[str, Any]:
    """Every billed scenario; ``ok`` when each is within :data:`TARGET_BILLED_RATIO`."""
    scenarios = {name: billed_step(parent, name) for name in SCENARIOS}
    return {
        "scenarios": scenarios,
        "cache_model": CACHE_MODEL,
        "target_billed_ratio": TARGET_BILLED_RATIO,
        "ok": all(s["total"]["billed_ratio"] <= TARGET_BILLED_RATIO for s in scenarios.values()),
    }


def billed_report(billed: dict[str, Any]) -> str:
    """The billed scenarios' tables, each under its name."""
    return "\n\n".join(
        f"{name}:\n{billed_table(nodes)}" for name, nodes in billed["scenarios"].items()
    )


#: ``--smoke``: the smallest run that still goes through every code path; the
#: default test suite runs it (tests/bench/), so a broken benchmark fails CI.
#: Its figures are not judged: it exits 0 once it ran to the end.
SMOKE: dict = {}


def run() -> dict:
    """Both measurements; print and return the figures."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-traffic-") as tmp:
        parent = Path(tmp)
        traffic = demo_traffic(parent)
        with_reuse = test_runs(parent, reuse=True)
        without_reuse = test_runs(parent, reuse=False)
        billed = billed_steps(parent)
        shutil.rmtree(parent, ignore_errors=True)
    traffic.update(with_reuse.pop("traffic"))
    without_reuse.pop("traffic")
    figures = {
        "traffic": traffic,
        "test_runs_per_step": with_reuse["test_runs"],
        "test_runs_without_reuse": without_reuse["test_runs"],
        "runs_after_coder": with_reuse["after_coder"],
        "runs_after_coder_without_reuse": without_reuse["after_coder"],
        "coder_gates": with_reuse["coder_gates"],
        "reused_gates": with_reuse["reused"],
        "target_test_runs": TARGET_TEST_RUNS,
        "billed": billed,
    }
    figures["ok"] = figures["runs_after_coder"] == TARGET_TEST_RUNS
    print(f"{'node':<16}{'requests':>9}{'bytes':>9}{'content':>9}{'x':>7}{'prefix':>9}{'share':>8}")
    for node, row in traffic.items():
        print(
            f"{node:<16}{row['requests']:>9}{row['raw_bytes']:>9}{row['content_bytes']:>9}"
            f"{row['ratio_to_content']:>7}{row['prefix_bytes']:>9}{row['prefix_share']:>8.1%}"
        )
    print(
        f"test-command runs after the coder's round: {figures['runs_after_coder']} "
        f"(without reuse: {figures['runs_after_coder_without_reuse']}); in all, with the "
        f"coder's own and the start's measure: {figures['test_runs_per_step']} "
        f"(without reuse: {figures['test_runs_without_reuse']}); reused: {figures['reused_gates']}"
    )
    print(f"\nbilled tokens, steps of realistic size ({CACHE_MODEL})")
    print(billed_report(billed))
    return figures


if __name__ == "__main__":
    parser = BenchParser(__doc__)
    parser.modes.add_argument(
        "--billed", action="store_true", help="the billed-token figures alone (billed_steps)"
    )
    parser.add_argument(
        "--json", action="store_true", help="with --billed: the figures as JSON, not the report"
    )
    args = parser.parse_args()
    if args.json and not args.billed:
        parser.error("--json goes with --billed")
    if args.billed:
        with tempfile.TemporaryDirectory(prefix="stepkit-bench-billed-") as tmp:
            result = billed_steps(Path(tmp))
        print(json.dumps(result, indent=1) if args.json else billed_report(result))
        sys.exit(0 if result["ok"] else 1)
    if args.smoke:
        run(**SMOKE)
        sys.exit(0)
    sys.exit(0 if run()["ok"] else 1)
