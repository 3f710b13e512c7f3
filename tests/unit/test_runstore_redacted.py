"""A checkpoint's state is masked as a whole: every string at any depth,
with the secret environment values read once per walk, not once per string
(each read scans the whole environment; a whole-step run saves dozens of
states of hundreds of strings)."""

from __future__ import annotations

from stepkit.engine import runstore
from stepkit.workspace import redact

SECRET = "s3cr3t-value-of-the-db-password"


def test_every_string_at_any_depth_is_masked_and_the_environment_is_read_once(monkeypatch):
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    reads = []
    real = redact.secret_env_values
    for module in (runstore, redact):  # whoever reads them, the walk or each string's masking
        monkeypatch.setattr(module, "secret_env_values", lambda: reads.append(1) or real())
    state = {
        "summary": f"used {SECRET}",
        "gates": [{"log": [f"x {SECRET}", "plain"]}] * 50,
        "count": 3,
    }

    masked = runstore.redacted(state)

    assert SECRET not in repr(masked)
    assert masked["gates"][49]["log"][1] == "plain" and masked["count"] == 3
    assert len(reads) == 1


def test_a_secret_set_between_two_walks_is_masked_by_the_next(monkeypatch):
    monkeypatch.delenv("DB_PASSWORD", raising=False)
    assert runstore.redacted({"a": [SECRET]}) == {"a": [SECRET]}
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    assert SECRET not in repr(runstore.redacted({"a": [SECRET]}))
