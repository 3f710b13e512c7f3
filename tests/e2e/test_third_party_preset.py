"""A coding CLI added by a third-party plugin through one hook,
``stepkit_register_presets``: the plugin is an installed distribution whose
``stepkit`` entry point is a module registering a ``Preset``; the CLI is a
small script on PATH that reads the prompt, edits the project and prints its
own JSON.  Real ``stepkit run --coder NAME --reviewer NAME`` processes, real
git project and gates, scripted engine for the LLM stages."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from tests.support.e2e import GOOD_MUL, PY, SWEEP, make_project

#: The plugin: a preset for the CLI ``{name}``, its reader of the CLI's JSON.
PLUGIN = """\
import json

from stepkit import hookimpl
from stepkit.plugins.coders.presets.base import Parsed, Preset
from stepkit.plugins.coders.presets.login import Login
from stepkit.records import Usage


def command(call):
    return "{name} --review" if call.review else "{name} --edit"


def read(output, scratch):
    try:
        data = json.loads(output)
    except ValueError:
        return None
    spent = data["spent"]
    return Parsed(text=data["answer"], usage=Usage(input_tokens=spent[0], output_tokens=spent[1]))


def read_login(exit_code, output):
    if output.startswith("signed out"):
        return False
    return True if exit_code == 0 and output.startswith("signed in") else None


PRESET = Preset(name="{name}", command=command, reader=read, checked=("1.0.0",),
                install="pipx install {name}",
                login=Login(("{name}", "whoami"), read_login, fix="run `{name} login`"))


@hookimpl
def stepkit_register_presets(register):
    register(PRESET)
"""

#: The CLI: records each call, writes mul into calc.py when asked to edit,
#: answers in its own JSON (a review: one finding), says its version and
#: who is signed in (the account file's text; signed out without one).
CLI = """\
#!{python}
import json, os, pathlib, sys
if sys.argv[1:] == ["--version"]:
    print("{name} 1.0.0")
    sys.exit(0)
if sys.argv[1:] == ["whoami"]:
    account = pathlib.Path({calls!r}).with_suffix(".account")
    print(account.read_text() if account.exists() else "signed out")
    sys.exit(0 if account.exists() else 1)
prompt = sys.stdin.read()
with open({calls!r}, "a") as fh:
    fh.write(json.dumps({{"argv": sys.argv[1:], "prompt": prompt, "cwd": os.getcwd()}}) + "\\n")
if "--edit" in sys.argv:
    pathlib.Path("calc.py").write_text({mul!r})
    answer = "added mul\\nCODER_COMPLETE"
else:
    answer = "- 🟢 mul multiplies; check.py covers it"
print(json.dumps({{"answer": answer, "spent": [120, 30]}}))
"""


def install_plugin(tmp_path: Path, name: str) -> tuple[dict[str, str], Path]:
    """The distribution ``thirdplug`` (entry point ``thirdplug``) registering
    the preset ``name``, and the CLI ``name`` on PATH: the environment that
    has both, and the CLI's call log."""
    site = tmp_path / "site"
    dist = site / "thirdplug-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: thirdplug\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[stepkit]\nthirdplug = thirdplug\n")
    (site / "thirdplug.py").write_text(PLUGIN.format(name=name))
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "cli-calls" / f"{name}.jsonl"  # [sandbox] writable: see allow_writes
    calls.parent.mkdir()
    cli = bin_dir / name
    cli.write_text(CLI.format(python=PY, name=name, calls=str(calls), mul=GOOD_MUL))
    cli.chmod(cli.stat().st_mode | stat.S_IXUSR)
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")])),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
    }
    return env, calls


def calls_of(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.mark.slow
def test_a_third_party_preset_codes_and_reviews_a_whole_step(tmp_path):
    project = make_project(tmp_path, reviewer=False)
    extra, log = install_plugin(tmp_path, "fakecli")
    project.allow_writes(log.parent)
    env = project.env(**extra)
    engine = project.script(edge_case_sweep={**SWEEP, "needs_independent_review": True})

    paused = project.run("--reviewer", "fakecli", engine=engine, coder="fakecli", env=env)
    assert paused.code == 5, paused.stderr + paused.stdout
    assert paused.data["pending"]["node"] == "gate_user_review"
    coder, reviewer = calls_of(log)
    assert coder["argv"] == ["--edit"] and "Add mul" in coder["prompt"]
    assert coder["cwd"] == str(project.root)
    assert reviewer["argv"] == ["--review"] and "def mul(a, b)" in reviewer["prompt"]
    assert paused.data["usage"]["input_tokens"] == 240  # both calls, read by the plugin's reader

    done = project.resume("approve", env=env)
    assert done.code == 0 and done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    assert project.plan_status(1) == "complete"
    assert (project.root / "calc.py").read_text() == GOOD_MUL


@pytest.mark.slow
def test_a_third_party_preset_named_like_a_built_in_replaces_it(tmp_path):
    """Its ``claude`` is not the built-in's: the built-in reader cannot read
    this output (it would judge by the exit code and say so); the plugin's
    reads it.  ``stepkit plugins`` names the plugin and whom it replaced."""
    project = make_project(tmp_path, reviewer=False)
    extra, log = install_plugin(tmp_path, "claude")
    project.allow_writes(log.parent)
    env = project.env(**extra)
    where = ("--project-dir", str(project.root))

    done = project.stepkit(
        "stage", "implement", *where, "--step", "1", "--coder", "claude", env=env
    )
    assert done.code == 0, done.stderr
    result = done.data["coder_result"]
    assert result["text"] == "added mul\nCODER_COMPLETE" and result["usage"]["input_tokens"] == 120
    assert [c["argv"] for c in calls_of(log)] == [["--edit"]]

    listed = project.stepkit("plugins", *where, env=env).data["presets"]
    assert [p["name"] for p in listed] == ["claude", "codex", "aider", "opencode"]
    claude = listed[0]
    assert claude["plugin"] == "thirdplug"
    assert claude["overrides"] == ["stepkit.plugins.coders.presets"]
    assert claude["checked"] == ["1.0.0"] and claude["version"] == "1.0.0"
    assert listed[1]["plugin"] == "stepkit.plugins.coders.presets" and not listed[1]["overrides"]
    table = project.stepkit("plugins", *where, env=env, json_out=False).stdout.splitlines()
    row = next(line for line in table if line.startswith("claude "))
    assert row.endswith("1.0.0  (thirdplug; overrides stepkit.plugins.coders.presets)"), row
    codex = next(line for line in table if line.startswith("codex "))
    assert codex.endswith("0.171.0"), codex  # a built-in's row says nothing more


def test_a_projects_preset_beats_the_third_party_one_of_the_same_name(tmp_path):
    """The house rule: local beats third-party beats built-in."""
    project = make_project(tmp_path, reviewer=False)
    extra, _ = install_plugin(tmp_path, "fakecli")
    env = project.env(**extra)
    where = ("--project-dir", str(project.root))
    local = PLUGIN.format(name="fakecli").replace('checked=("1.0.0",)', 'checked=("0.9.0",)')
    (project.root / "stepconf.py").write_text(local)
    assert project.stepkit("trust", *where, env=env, json_out=False).code == 0

    listed = project.stepkit("plugins", *where, env=env).data["presets"]
    fakecli = next(p for p in listed if p["name"] == "fakecli")
    assert (fakecli["plugin"], fakecli["overrides"]) == ("stepconf", ["thirdplug"])
    assert fakecli["checked"] == ["0.9.0"] and not fakecli["checked_version"]


@pytest.mark.slow
def test_doctor_runs_a_third_party_presets_login_check(tmp_path):
    """A plugin's ``Preset.login``: doctor runs its dry call for the coder
    the run would use and reads the answer with the plugin's reader."""
    project = make_project(tmp_path, reviewer=False)
    extra, log = install_plugin(tmp_path, "fakecli")
    env = project.env(**extra)
    args = ("doctor", "--coder", "fakecli", "--engine", f"scripted:{project.script()}")

    out = project.stepkit(*args, env=env, json_out=False)
    assert out.code == 1, out.stdout + out.stderr
    assert "✗ fakecli: not logged in (fakecli whoami)\n    fix: run `fakecli login`" in out.stdout

    log.with_suffix(".account").write_text("signed in as ada")
    signed_in = project.stepkit(*args, env=env)
    assert signed_in.code == 0, signed_in.stdout + signed_in.stderr
    line = next(c for c in signed_in.data["checks"] if c["name"] == "fakecli")
    assert (line["status"], line["text"]) == ("ok", "logged in (fakecli whoami)")

    log.with_suffix(".account").write_text("session expired?")  # neither: a warning
    unsure = project.stepkit(*args, env=env, json_out=False)
    assert unsure.code == 0, unsure.stdout + unsure.stderr
    assert "! fakecli: cannot tell whether it is logged in (fakecli whoami: session expired?)" in (
        unsure.stdout
    )
    assert calls_of(log) == [], "the login check is the only call; nothing is asked to code"
