"""A tests command's tests, listed without running them: the ids of the
step's start, which test-id conservation reads when every one of them
passed after the step (:func:`~stepkit.workspace.start_outcomes.conserved_by_listing`),
without waiting for the start's whole run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from stepkit.workspace import process
from stepkit.workspace.gates import code_env
from stepkit.workspace.runners import runners
from stepkit.workspace.testrunners import listing_invocation


def list_tests(
    pm: Any, project_dir: Path, command: str, log_dir: Path, config: Any
) -> list[str] | None:
    """The test ids ``command`` collects in ``project_dir`` (run as the gates
    run it: the sandbox and the priority of the calling thread), every one
    of them; None when its runner cannot list them, or the listing did not
    end with a complete list."""
    listing = listing_invocation(
        command, project_dir, log_dir / "listing.report", None, runners(pm)
    )
    if listing is None:
        return None
    env = code_env(os.environ)
    env.update(listing.env)
    limits = config.timeouts
    printed: list[str] = []  # all of it: a run's output keeps only its head and tail
    ran = process.run(
        listing.command,
        cwd=project_dir,
        env=env,
        timeout=limits.gate("tests"),
        no_output_timeout=limits.no_output,
        log_path=log_dir / "listing.log",
        on_text=printed.append,
    )
    # pytest exits 5 when it collected no test: an empty list, complete
    if ran.expired is not None or ran.exit_code not in (0, 5):
        return None
    return listing.read("".join(printed))
