"""Secret masking: known token formats, key=value secrets, env values; code stays readable."""

from __future__ import annotations

import time

import pytest

from stepkit.workspace.redact import MASK, redact

SECRETS = [
    "sk-ant-api03-Zx8Qw2Er4Ty6Ui8Op0As2Df4Gh6Jk8Lz",
    "sk-proj-1234567890abcdefABCDEF",
    "ghp_a1B2c3D4e5F6g7H8i9J0a1B2c3D4e5F6g7H8",
    "github_pat_11ABCDEFG0123456789_abcdefghijklmnop",
    "glpat-abcdefghij0123456789",
    "AKIAIOSFODNN7EXAMPLE",
    "xoxb-1234567890-abcdefghijkl",
]


@pytest.mark.parametrize("secret", SECRETS)
def test_token_formats_are_masked(secret):
    out = redact(f"before {secret} after")
    assert secret not in out and out == f"before {MASK} after"


@pytest.mark.parametrize("text, expected", [
    ("API_KEY=0123456789abcdef0123", f"API_KEY={MASK}"),
    ('"access_token": "ya29.a0AfH6SMBx12345"', f'"access_token": "{MASK}"'),
    ("export AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     f"export AWS_SECRET_ACCESS_KEY={MASK}"),
    ("password: hunter22x", f"password: {MASK}"),
    ("Authorization: Bearer abcdef0123456789abcdef", f"Authorization: Bearer {MASK}"),
    ("db_password='s3cr3t-pa55'", f"db_password='{MASK}'"),
])
def test_assignments_of_secrets_are_masked(text, expected):
    assert redact(text) == expected


@pytest.mark.parametrize("text", [
    "token = next_token()",
    "secret = os.environ.get('SECRET')",
    "cache_key = hashlib.sha1(data)",
    "def get_key(self, key_id):",
    "self.api_key = api_key",
    "max_tokens=16000000",
    "passed: 1995, failed: 5",
    "scikit-learn uses sk-learn as a nickname",
])
def test_ordinary_code_and_logs_are_left_alone(text):
    assert redact(text) == text


def test_the_api_key_and_secret_env_values_are_masked_wherever_they_appear(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "plainkeywithoutprefix42")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "tok-9f8e7d6c5b")
    out = redact("a plainkeywithoutprefix42 b tok-9f8e7d6c5b c")
    assert out == f"a {MASK} b {MASK} c"


def test_private_key_blocks_are_masked():
    pem = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\n-----END OPENSSH PRIVATE KEY-----"
    assert redact(f"x\n{pem}\ny") == f"x\n{MASK}\ny"


def test_large_text_is_redacted_line_by_line_and_fast():
    line = "tests/test_x.py::test_foo PASSED [ 10%]\n"
    text = line * 50_000 + "API_KEY=0123456789abcdef0123\n" + line * 50_000
    started = time.perf_counter()
    out = redact(text)
    assert time.perf_counter() - started < 1.0
    assert out == line * 50_000 + f"API_KEY={MASK}\n" + line * 50_000


def test_empty_text():
    assert redact("") == ""


def test_a_secret_that_replaces_another_with_the_same_variable_count_is_masked(monkeypatch):
    from stepkit.workspace.redact import redact

    monkeypatch.setenv("A_TOKEN", "first-secret-123")
    assert "first-secret-123" not in redact("x first-secret-123")
    monkeypatch.delenv("A_TOKEN")
    monkeypatch.setenv("B_TOKEN", "second-secret-456")
    assert "second-secret-456" not in redact("x second-secret-456")
