"""``stepkit status`` stays light: no pydantic, no model SDK, and a parse
cache in the run store that never gives an answer parsing would not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from stepkit.workspace.store import cache_dir
from tests.support.cli import stepkit


def status(project: Path, *args: str) -> dict:
    done = stepkit("status", "--json", *args, cwd=project)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def write_old(path: Path, text: str, age_s: float = 60) -> None:
    """Write ``path`` with a modification time ``age_s`` in the past (older than the racy window)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    then = time.time() - age_s
    os.utime(path, (then, then))


def test_status_imports_neither_pydantic_nor_anthropic(tmp_path):
    write_old(tmp_path / "plans" / "steps" / "01-a.md", "---\ntitle: A\n---\n")
    write_old(tmp_path / "stepkit.toml", 'plans_dir = "plans"\n')
    script = (
        "import sys\nfrom stepkit.cli import main\ncode = main(['status'])\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'pydantic', 'anthropic', 'openai'}))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert done.stdout.strip().splitlines()[-1] == "[]"


def test_a_cached_plan_is_read_again_when_it_changes(tmp_path):
    step = tmp_path / "plans" / "steps" / "01-a.md"
    write_old(step, "---\ntitle: First\nstatus: pending\n---\nbody\n")
    write_old(tmp_path / "plans" / "handoffs" / "01-a.md", "---\nstep: 1\nresult: partial\n---\n")
    first = status(tmp_path)
    assert (cache_dir(tmp_path) / "plans.json").is_file()
    assert status(tmp_path) == first  # from the cache
    write_old(step, "---\ntitle: Second\nstatus: complete\n---\nbody\n", age_s=30)
    again = status(tmp_path)
    assert (again["steps"][0]["title"], again["steps"][0]["status"]) == ("Second", "complete")
    (tmp_path / "plans" / "handoffs" / "01-a.md").unlink()
    assert status(tmp_path)["steps"][0]["handoff"] is None


def test_a_file_written_just_now_or_with_dates_is_never_taken_from_the_cache(tmp_path):
    step = tmp_path / "plans" / "steps" / "01-a.md"
    step.parent.mkdir(parents=True)
    step.write_text("---\ntitle: Now\n---\n", encoding="utf-8")  # modified within the racy window
    write_old(tmp_path / "plans" / "steps" / "02-b.md", "---\ntitle: B\ndue: 2024-05-01\n---\n")
    status(tmp_path)
    cache = cache_dir(tmp_path) / "plans.json"
    assert not cache.exists() or json.loads(cache.read_text())["files"] == {}
    step.write_text("---\ntitle: Later\n---\n", encoding="utf-8")  # same size, same second
    assert status(tmp_path)["steps"][0]["title"] == "Later"


def test_a_cache_that_cannot_be_read_is_rebuilt(tmp_path):
    write_old(tmp_path / "plans" / "steps" / "01-a.md", "---\ntitle: A\n---\n")
    cache = cache_dir(tmp_path) / "plans.json"
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text("{not json", encoding="utf-8")
    assert status(tmp_path)["steps"][0]["title"] == "A"
    assert json.loads(cache.read_text())["version"] == 1


_READ_PROBE = (
    "import json, sys\nfrom stepkit.cli import main\nmain(['status', '--json'])\n"
    "print(json.dumps('stepkit.planrepo.document' in sys.modules))\n"
)


def reads_plan_files(project: Path) -> bool:
    """Whether ``stepkit status --json`` parsed any plan file (the frontmatter reader was needed)."""
    done = subprocess.run(
        [sys.executable, "-c", _READ_PROBE],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_an_unchanged_plan_repo_is_not_read_again(tmp_path):
    for n in (1, 2, 3):
        write_old(
            tmp_path / "plans" / "steps" / f"0{n}-s.md",
            f"---\ntitle: S{n}\ndepends_on: [{n - 1 or ''}]\n---\n",
        )
    write_old(tmp_path / "plans" / "handoffs" / "01-s.md", "---\nstep: 1\nresult: complete\n---\n")
    first = status(tmp_path)
    assert not reads_plan_files(tmp_path)  # the kept report: no file parsed
    assert status(tmp_path) == first
    write_old(tmp_path / "plans" / "handoffs" / "02-s.md", "---\nstep: 2\nresult: complete\n---\n")
    assert reads_plan_files(tmp_path)  # a file more: the repo is read again
    again = status(tmp_path)
    assert not first["steps"][2]["deps_satisfied"] and again["steps"][2]["deps_satisfied"]
    assert again["steps"][1]["handoff_result"] == "complete"


def test_no_report_is_kept_while_a_file_was_just_written(tmp_path):
    write_old(tmp_path / "plans" / "steps" / "01-a.md", "---\ntitle: A\n---\n")
    (tmp_path / "plans" / "steps" / "02-b.md").write_text("---\ntitle: B\n---\n", encoding="utf-8")
    status(tmp_path)
    assert reads_plan_files(tmp_path)
    (tmp_path / "plans" / "steps" / "02-b.md").write_text(
        "---\ntitle: C\n---\n", encoding="utf-8"
    )  # same size
    assert status(tmp_path)["steps"][1]["title"] == "C"


def test_the_table_of_an_unchanged_repo_reads_it_as_before(tmp_path):
    write_old(tmp_path / "plans" / "steps" / "01-a.md", "---\ntitle: Alpha\n---\n")
    status(tmp_path)
    done = stepkit("status", cwd=tmp_path, check=True)
    assert "Alpha" in done.stdout and "next: step 1 (Alpha)" in done.stdout
