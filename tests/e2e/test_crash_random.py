"""Randomized crash test: SIGKILL and SIGTERM at random moments of full runs
(the e2e project: a command coder, real lint/build/test gates, the scripted
engine), each resumed to its end (the final gate answered ``approve``).

Random delays are the point here, not synchronisation: each round waits
(bounded) until the invocation has started its run, sleeps a random part of
the window in which the run works, and signals it.  Every round must end
consistent: NOTES.md's fact neither lost nor doubled, exactly one handoff
when the step completed (none elsewhere), the plan marked complete iff the
run ended STEP_COMPLETE, and no process of the run left alive.

The seed is printed (``-s``) and named in every failure; ``CRASH_SEED=N``
replays a seed's choices (the timing is the machine's); ``CRASH_ROUNDS=N``
runs more rounds than the default suite's.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from stepkit.workspace.store import store_dir
from tests.support.crash import is_running
from tests.support.e2e import GOOD_MUL, HANDOFF, PY, SWEEP, Project, make_project

#: Rounds in the default suite (about 40 signals); CRASH_ROUNDS raises it for a longer hunt.
ROUNDS = int(os.environ.get("CRASH_ROUNDS", "14"))
#: Rounds at a time: each mostly waits (for its subprocesses, fsync, its random delays).
WORKERS = 4
#: Seconds after the run started within which the signal falls (a run's work
#: takes about 0.4 s; a resume that answers the final gate much less).
WINDOW = {"run": 0.5, "resume": 0.4, "approve": 0.1}
#: The chance that an invocation is signalled, by kind; at most MAX_SIGNALS a round.  Every
#: round's run is signalled, so that no seed's choices leave a round without a signal.
SIGNAL_P = {"run": 1.0, "resume": 0.3, "approve": 0.3}
MAX_SIGNALS = 3
MAX_INVOCATIONS = 10
DEADLINE_S = 60.0
FACT = f"- {HANDOFF['notes_facts'][0]} (step 1)"
EDGE_CASE = f"- {SWEEP['annotations'][0]['edge_case']}"
CUT_CODER = "implement was interrupted mid-edit"
#: how the log shows a signal that ended its invocation
LANDED = ("SIGKILL=-9", "SIGTERM=143", "SIGTERM=-15")


def seed() -> int:
    chosen = os.environ.get("CRASH_SEED")
    return int(chosen) if chosen else random.SystemRandom().randrange(2**32)


@pytest.mark.slow
def test_random_kills_and_terms_then_resume_leave_every_round_consistent(tmp_path):
    base = seed()
    print(f"crash test seed: {base} (CRASH_SEED={base} replays it)")
    with ThreadPoolExecutor(WORKERS) as pool:
        rounds = list(pool.map(lambda n: one_round(tmp_path, base, n), range(ROUNDS)))
    for n, (_, log) in enumerate(rounds):
        print(f"round {n:02d}: {log}")
    problems = [
        f"round {n}: {problem} [{log}]" for n, (problem, log) in enumerate(rounds) if problem
    ]
    assert not problems, f"seed {base}:\n" + "\n".join(problems)
    # a signal that finds its invocation ended already tests nothing: most must land
    landed = sum(log.count(mark) for _, log in rounds for mark in LANDED)
    assert landed >= ROUNDS // 3, f"seed {base}: only {landed} signals landed in {ROUNDS} rounds"


def one_round(tmp_path: Path, base: int, n: int) -> tuple[str | None, str]:
    """Drive one step to its end through random signals; (the problem found
    or None, what happened)."""
    rng = random.Random(f"{base}-{n}")
    project = make_project(tmp_path / f"round-{n:02d}", reviewer=False)
    notes_before = (project.plans / "NOTES.md").read_text()
    log: list[str] = []
    try:
        problem = drive_round(project, rng, log) or check_round(project, notes_before)
    finally:
        left = leftover_processes(project)
    if left and not problem:
        problem = f"processes of the run still running: {left}"
    return problem, " ".join(log)


def drive_round(project: Project, rng: random.Random, log: list[str]) -> str | None:
    """Run, resume after each signal, approve at the final gate, until the run ends."""
    kind, signals = "run", 0
    for _ in range(MAX_INVOCATIONS):
        sig = None
        if signals < MAX_SIGNALS and rng.random() < SIGNAL_P[kind]:
            sig = rng.choice([signal.SIGKILL, signal.SIGTERM])
            signals += 1
        code, out = invoke(project, kind, sig, rng.uniform(0, WINDOW[kind]))
        log.append(
            f"{kind}{'+' + sig.name if sig else ''}={code}" + (f" ({out})" if code == 2 else "")
        )
        problem = after_signal(project, sig, code)
        if problem:
            return problem
        data = json.loads(out) if out.strip().startswith("{") else {}
        if code == 5 and (data.get("pending") or {}).get("node") == "gate_user_review":
            kind = "approve"
        elif code in (-signal.SIGKILL, 128 + signal.SIGTERM, -signal.SIGTERM):
            kind = (
                "resume" if the_checkpoint(project) else "run"
            )  # killed before it began: run again
        else:
            return None
    return "the run did not end"


def invoke(
    project: Project, kind: str, sig: signal.Signals | None, delay: float
) -> tuple[int, str]:
    """One ``stepkit run`` / ``resume``; with ``sig``, signalled ``delay``
    seconds after its run started (or resumed), if it is still running."""
    args = project.run_args() if kind == "run" else ["resume", "--project-dir", str(project.root)]
    if kind == "approve":
        args += ["--answer", "approve"]
    events_before = event_count(project)
    proc = subprocess.Popen(
        [PY, "-m", "stepkit", *args, "--json"],
        cwd=project.root,
        env=project.env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        if sig is not None:
            deadline = time.monotonic() + DEADLINE_S
            while event_count(project) <= events_before and proc.poll() is None:
                assert time.monotonic() < deadline, "the run never started"
                time.sleep(0.005)
            time.sleep(delay)
            if proc.poll() is None:
                proc.send_signal(sig)
        out, err = proc.communicate(timeout=DEADLINE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    if proc.returncode == 2:  # a usage error: the run finished already, or none was there
        out = err.strip().splitlines()[-1] if err.strip() else ""
    return proc.returncode, out


def event_count(project: Project) -> int:
    return sum(
        len(path.read_bytes().splitlines())
        for path in store_dir(project.root).glob("runs/*/events.jsonl")
    )


def the_checkpoint(project: Project) -> dict | None:
    found = list(store_dir(project.root).glob("runs/*/state.json"))
    assert len(found) <= 1, found
    return json.loads(found[0].read_text()) if found else None


def after_signal(project: Project, sig: signal.Signals | None, code: int) -> str | None:
    """A SIGTERMed stepkit never leaves its checkpoint saying running."""
    cp = the_checkpoint(project)
    if sig == signal.SIGTERM and cp is not None and cp["status"] == "running":
        return f"SIGTERM (exit {code}) left the checkpoint running at {cp['node']} ({cp['phase']})"
    return None


def check_round(project: Project, notes_before: str) -> str | None:
    cp = the_checkpoint(project)
    if cp is None or cp["status"] != "finished":
        return f"the run did not finish: {cp and cp['status']}"
    outcome, reason = cp["outcome"], cp["state"].get("failure_reason") or ""
    complete = outcome == "STEP_COMPLETE"
    if not complete and not (outcome == "STEP_FAILED" and CUT_CODER in reason):
        return f"ended {outcome}: {reason}"
    status = project.plan_status(1)
    if (status == "complete") != complete:
        return f"{outcome} with the plan {status}"
    notes = (project.plans / "NOTES.md").read_text()
    if not notes.startswith(notes_before):
        return "NOTES.md lost what it had"
    facts = notes.splitlines().count(FACT)
    if facts > 1 or (complete and facts != 1):
        return f"{outcome} with the NOTES fact {facts} times"
    handoffs = (
        sorted(p.name for p in (project.plans / "handoffs").glob("*"))
        if (project.plans / "handoffs").is_dir()
        else []
    )
    if complete and handoffs != ["01-mul.md"] or len(handoffs) > 1:
        return f"{outcome} with handoffs {handoffs}"
    if (project.plans / "steps" / "03-pow.md").read_text().splitlines().count(EDGE_CASE) > 1:
        return "the sweep's edge case was added twice"
    if complete and (project.root / "calc.py").read_text() != GOOD_MUL:
        return "complete without the coder's change"
    stray = sorted(
        p.relative_to(project.plans).as_posix()
        for p in project.plans.rglob("*")
        if p.is_file() and p.name.endswith(".tmp")
    )
    if stray:
        return f"temp files left in the plan repo: {stray}"
    return None


def leftover_processes(project: Project, seconds: float = 5.0) -> list[str]:
    """Processes of the round (their environment names its state dir) still
    running ``seconds`` after it ended; SIGKILLed once found."""
    marker = f"E2E_STATE_DIR={project.state_dir}".encode()
    deadline = time.monotonic() + seconds
    while True:
        found = [pid for pid in _pids() if is_running(pid) and marker in _environ(pid)]
        if not found or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    left = []
    for pid in found:
        left.append(f"{pid}: {_cmdline(pid)}")
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    return left


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _cmdline(pid: int) -> str:
    try:
        return (
            Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        )
    except OSError:
        return "?"
