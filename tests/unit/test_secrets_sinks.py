"""Secrets never reach what stepkit writes or sends: a gate and a coder that print
secrets of every shape, a coder that writes them into the diff, and a handoff writer
whose prose holds them, run through the real CLI; the logs, the run store (state.json, events.jsonl, output.txt), the gate
evidence, the rendered handoff, NOTES.md and the model requests hold none of them."""

from __future__ import annotations

import pytest

from stepkit.workspace.store import store_dir
from tests.support.e2e import HANDOFF, PY
from tests.support.sdk_e2e import queue_stages, run_sdk, sdk_env

pytest_plugins = ["tests.support.messages_api"]

#: The shapes that leaked before, each with the part that must never be stored.
SECRETS = {
    "DB_PASSWORD=CorrectHorseBatteryStaple": "CorrectHorseBatteryStaple",
    'db_password: "P@ss-w0rd!Strong#2024"': "P@ss-w0rd!Strong#2024",
    "postgres://admin:Pg5ecret@db": "Pg5ecret",
    "https://hooks.slack.com/services/T000/B000/XXXX": "T000/B000/XXXX",
    'client_secret="abc DEF ghi 123"': "abc DEF ghi 123",
    "-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA1c7z5Pad7Oejecs\n-----END RSA PRIVATE KEY-----": "MIIEpAIBAAKCAQEA1c7z5Pad7Oejecs",
    "PGPASSWORD=pgSup3rSecret psql -h db": "pgSup3rSecret",
    "mysql -u root -pMy5qlS3cret app": "My5qlS3cret",
    "curl -u alice:CurlS3cret https://x.test": "CurlS3cret",
    "sshpass -p 'SshS3cret' ssh host": "SshS3cret",
    "<password>XmlS3cret</password>": "XmlS3cret",
    "[db]\npassword=ini value with spaces": "ini value with spaces",
}
#: Secret-named environment variables whose values the gate prints bare.
SECRET_ENV = {
    "PGPASSWORD": "envPgValue1",
    "MYSQL_PWD": "envMyValue2",
    "REDISCLI_AUTH": "envRedisValue3",
    "SSHPASS": "envSshValue4",
}
LEAK = "\n".join(SECRETS)


@pytest.fixture
def project(project):
    leak = project.state_dir / "leak.py"
    # prints the secrets; fails its first run in the project (the step's start, measured
    # in a scratch copy, passes), so its evidence goes to the fixing coder
    leak.write_text(
        "import pathlib, sys\n"
        f"print({LEAK!r})\n"
        f"print(' '.join(__import__('os').environ[name] for name in {sorted(SECRET_ENV)!r}))\n"
        f"runs = pathlib.Path({str(project.state_dir / 'leak_runs')!r})\n"
        f"here = pathlib.Path.cwd().resolve() == pathlib.Path({str(project.root)!r}).resolve()\n"
        "first = here and not runs.exists()\n"
        "if here:\n"
        "    runs.write_text('ran')\n"
        "sys.exit(1 if first else 0)\n"
    )
    config = project.root / "stepkit.toml"
    config.write_text(
        config.read_text().replace(
            f'test = "{PY} check.py"', f'test = "{PY} {leak} && {PY} check.py"'
        )
    )
    project.coder_actions(
        {
            "write": {
                "calc.py": "def add(a, b):\n    return a + b\n\n\n"
                "def mul(a, b):\n    return a * b\n",
                "settings.env": LEAK + "\n",
            },  # in the diff the model reads
            "say": f"coder: connected with\n{LEAK}",
            "sentinel": "CODER_COMPLETE",
        }
    )
    return project


def stored_files(project):
    yield from (p for p in store_dir(project.root).rglob("*") if p.is_file())
    yield project.handoff(1)
    yield project.plans / "NOTES.md"


def assert_no_secret(text: str, where: object) -> None:
    for secret in (*SECRETS.values(), *SECRET_ENV.values()):
        assert secret not in text, (secret, where)


def test_no_sink_of_a_run_holds_a_secret(project):
    prose = {
        **HANDOFF,
        "summary": f"Added calc.mul; used {LEAK}",
        "notes_facts": ["the database is postgres://admin:Pg5ecret@db"],
    }
    env = project.env(**SECRET_ENV)
    paused = project.run(engine=project.script(write_handoff=prose), env=env)
    assert paused.code == 5, paused.stderr + paused.stdout
    done = project.resume("approve", env=env)
    assert done.outcome == "STEP_COMPLETE", done.stderr + done.stdout

    run_dir = store_dir(project.root) / "runs" / done.data["run_id"]
    logs = sorted((run_dir / "logs").iterdir())
    assert any(
        "DB_PASSWORD=[REDACTED]" in log.read_text() for log in logs
    )  # the gate ran and printed
    fix_prompt = project.coder_prompt(1)  # the failed gate's evidence, given to the coder
    assert "postgres://admin:[REDACTED]@db" in fix_prompt
    assert_no_secret(fix_prompt, "the fixing coder's prompt")
    assert "Added calc.mul; used DB_PASSWORD=[REDACTED]" in project.handoff(1).read_text()
    assert (run_dir / "events.jsonl").is_file() and (run_dir / "output.txt").is_file()
    for path in stored_files(project):
        assert_no_secret(path.read_text(), path)
    assert_no_secret(paused.stdout + done.stdout, "stdout")


@pytest.mark.slow
def test_model_requests_hold_no_secret(project, messages_api):
    queue_stages(messages_api)
    env = sdk_env(project, messages_api, **SECRET_ENV)
    paused = run_sdk(project, messages_api, env=env)
    assert paused.code == 5, paused.stderr + paused.stdout
    assert any("+DB_PASSWORD=[REDACTED]" in r.raw.decode() for r in messages_api.requests)
    for request in messages_api.requests:
        assert_no_secret(request.raw.decode(), request.body.get("system"))
    done = project.resume("approve", env=env)
    assert done.outcome == "STEP_COMPLETE", done.stderr + done.stdout
    for path in stored_files(project):
        assert_no_secret(path.read_text(), path)
