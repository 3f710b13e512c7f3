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


def test_the_same_strings_walked_again_are_not_masked_again(monkeypatch):
    # the engine walks the run's settings at every save: the same few hundred strings each time
    monkeypatch.setenv("DB_PASSWORD", SECRET)
    masked = []
    real = runstore.redact
    monkeypatch.setattr(
        runstore, "redact", lambda text, env: masked.append(text) or real(text, env)
    )
    key = f"key={SECRET} walked again"
    settings = {"hashes": [f"sha-{n}-of-a-file-walked-again" for n in range(100)], "key": key}

    first = runstore.redacted(settings)
    again = runstore.redacted({**settings, "answers": {"gate": "approve-walked-again"}})

    assert again == {**first, "answers": {"gate": "approve-walked-again"}}
    assert SECRET not in repr(again)
    assert sorted(masked) == sorted([*settings["hashes"], key, "approve-walked-again"])


def test_a_walk_of_more_strings_than_a_small_cache_holds_is_masked_once(monkeypatch):
    # the settings of a run whose gates use a large toolchain hold thousands of
    # installed files' hashes; walked in the same order at every save, a cache
    # smaller than that evicts each string just before it is asked for again
    masked = []
    real = runstore.redact
    monkeypatch.setattr(
        runstore, "redact", lambda text, env: masked.append(text) or real(text, env)
    )
    settings = {"hashes": [f"sha-{n}-of-one-of-many-installed-files" for n in range(6000)]}
    runstore.redacted(settings)
    runstore.redacted(settings)
    assert len(masked) == 6000
