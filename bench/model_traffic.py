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
run with ``reuse_coder_evidence = false``.  Target: 1 run per step.  The
coder's two nodes are added to the traffic figures.

Run it directly (``python bench/model_traffic.py``) or call :func:`run`.
"""

from __future__ import annotations

import json
import os
import runpy
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from stepkit.cli.demo import prepare_demo_project
from tests.support.e2e import clean_env
from tests.support.messages_api import API_KEY, MessagesAPI

TARGET_TEST_RUNS = 1
COUNTER_SCRIPT = '#!/bin/sh\necho run >> "$(dirname "$0")/test_runs.txt"\necho "1 passed"\n'
PLAN = {"files_to_touch": ["textkit/slug.py", "textkit/__init__.py", "tests/test_slug.py"],
        "risks": ["none"], "complexity": 3, "approach": "add slugify in its own module, re-export it"}


def _env(api: MessagesAPI, **extra: str) -> dict[str, str]:
    # the demo's gates run ruff and pytest from the environment stepkit runs in
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return clean_env(PATH=path, ANTHROPIC_BASE_URL=api.base_url, ANTHROPIC_API_KEY=API_KEY, **extra)


def _stepkit(project: Path, args: list[str], env: dict[str, str], expect: int) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "stepkit", *args, "--project-dir", str(project), "--json"],
        cwd=project, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300,
        check=False,
    )
    if done.returncode != expect:
        raise SystemExit(f"stepkit {args[0]} exited {done.returncode}, expected {expect}:\n"
                         f"{done.stdout[-3000:]}{done.stderr[-2000:]}")
    return json.loads(done.stdout)


def _run_step(project: Path, api: MessagesAPI, coder: str, **env: str) -> tuple[str, list[dict]]:
    """Run step 1 to the final gate, approve it; the run id and its events."""
    environ = _env(api, **env)
    sets = ["--set", "llm_max_retries=0", "--set", "llm_timeout_s=60"]
    paused = _stepkit(project, ["run", "--step", "1", "--engine", "anthropic", "--coder", coder, *sets],
                      environ, expect=5)
    if paused["pending"]["node"] != "gate_user_review":
        raise SystemExit(f"the run paused at {paused['pending']['node']}, not gate_user_review")
    _stepkit(project, ["resume", paused["run_id"], "--answer", "approve"], environ, expect=0)
    run_dir = project / ".stepkit" / "runs" / paused["run_id"]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text(encoding="utf-8").splitlines()]
    return paused["run_id"], events


def _answers(project: Path) -> dict[str, Any]:
    return yaml.safe_load((project / "tools" / "demo_answers.yaml").read_text(encoding="utf-8"))


def _queue_orient(api: MessagesAPI, answers: dict[str, Any]) -> None:
    api.reply_tool("read_file", {"path": "textkit/__init__.py"})
    api.reply_json(answers["orient"])


def _queue_after_coder(api: MessagesAPI, answers: dict[str, Any]) -> None:
    api.reply_json(answers["edge_case_sweep"])
    api.reply_json(answers["write_handoff"])


def _queue_builtin_coder(api: MessagesAPI, project: Path) -> None:
    """Plan, then one reply writing the demo coder's three files, then the answer."""
    demo = runpy.run_path(str(project / "tools" / "demo_coder.py"))
    api.reply_json(PLAN)
    writes = {"textkit/slug.py": demo["SLUG"], "tests/test_slug.py": demo["TESTS"],
              "textkit/__init__.py": demo["INIT"]}
    api.reply([{"type": "tool_use", "id": f"toolu_w{n}", "name": "write_file",
                "input": {"path": path, "content": text}} for n, (path, text) in enumerate(writes.items())],
              stop_reason="tool_use")
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
        raise SystemExit(f"{len(api.requests)} requests reached the server but {len(nodes)} "
                         "llm_call events were recorded")
    per: dict[str, dict[str, Any]] = {}
    for node, request in zip(nodes, api.requests, strict=True):
        figures = request_figures(request.body)
        row = per.setdefault(node, {"requests": 0, "raw_bytes": 0, "bytes": 0, "prefix_bytes": 0,
                                    "marked_block_bytes": 0, "content_bytes": figures["content_bytes"]})
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
    if not reuse:
        (project / "stepkit.toml").write_text("reuse_coder_evidence = false\n", encoding="utf-8")
    counter = project.parent / "test_command.sh"
    counter.write_text(COUNTER_SCRIPT, encoding="utf-8")
    with MessagesAPI() as api:
        answers = _answers(project)
        _queue_orient(api, answers)
        _queue_builtin_coder(api, project)
        _queue_after_coder(api, answers)
        _, events = _run_step(project, api, "anthropic", TEST_CMD=f"sh {counter}")
        runs_file = project.parent / "test_runs.txt"
        runs = len(runs_file.read_text().splitlines()) if runs_file.exists() else 0
        coder_gates = [(e["name"], e["status"]) for e in events if e["event"] == "coder_gate"]
        return {
            "test_runs": runs,
            "coder_gates": coder_gates,
            "reused": [e["gate"] for e in events if e["event"] == "gate_reused"],
            "traffic": {node: row for node, row in traffic_by_node(api, events).items()
                        if node.startswith("coder_")},
        }


def run() -> dict:
    """Both measurements; print and return the figures."""
    with tempfile.TemporaryDirectory(prefix="stepkit-bench-traffic-") as tmp:
        parent = Path(tmp)
        traffic = demo_traffic(parent)
        with_reuse = test_runs(parent, reuse=True)
        without_reuse = test_runs(parent, reuse=False)
        shutil.rmtree(parent, ignore_errors=True)
    traffic.update(with_reuse.pop("traffic"))
    without_reuse.pop("traffic")
    figures = {
        "traffic": traffic,
        "test_runs_per_step": with_reuse["test_runs"],
        "test_runs_without_reuse": without_reuse["test_runs"],
        "coder_gates": with_reuse["coder_gates"],
        "reused_gates": with_reuse["reused"],
        "target_test_runs": TARGET_TEST_RUNS,
    }
    figures["ok"] = figures["test_runs_per_step"] == TARGET_TEST_RUNS
    print(f"{'node':<16}{'requests':>9}{'bytes':>9}{'content':>9}{'x':>7}{'prefix':>9}{'share':>8}")
    for node, row in traffic.items():
        print(f"{node:<16}{row['requests']:>9}{row['raw_bytes']:>9}{row['content_bytes']:>9}"
              f"{row['ratio_to_content']:>7}{row['prefix_bytes']:>9}{row['prefix_share']:>8.1%}")
    print(f"test-command runs per step: {figures['test_runs_per_step']} "
          f"(without reuse: {figures['test_runs_without_reuse']}); reused: {figures['reused_gates']}")
    return figures


if __name__ == "__main__":
    sys.exit(0 if run()["ok"] else 1)
