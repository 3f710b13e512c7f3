"""Knowing that the Anthropic engine can be called costs no import of its
SDK when the environment names a key or a token: the check runs before
every run and resume with the default engine, and the SDK takes over a
second to import; only without them is the SDK asked (a profile, a
header)."""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
from stepkit.plugins.llm.anthropic_engine import AnthropicEngine
print(AnthropicEngine().setup_problem())
print("anthropic" in sys.modules)
"""


def _check(env: dict[str, str]) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", CHECK],
        env={"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", **env},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split("\n")[:2]


@pytest.mark.parametrize("variable", ["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"])
def test_a_key_or_token_in_the_environment_is_enough_without_the_sdk(variable):
    assert _check({variable: "sk-ant-test-0123456789"}) == ["None", "False"]


def test_without_one_the_sdk_is_asked_and_says_there_is_none():
    problem, imported = _check({})
    assert problem.startswith("--engine anthropic: no credentials") and imported == "True"


def test_an_empty_key_is_no_key():
    problem, _ = _check({"ANTHROPIC_API_KEY": ""})
    assert problem.startswith("--engine anthropic: no credentials")
