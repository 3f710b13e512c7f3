"""Where the jobs of ``stepkit ci`` install stepkit from, for the PEP 610
records pip writes (``direct_url.json``) that the end-to-end tests in
tests/e2e/test_ci_cli.py do not install."""

from __future__ import annotations

import pytest

from stepkit.cisource import recorded_source
from stepkit.errors import UsageError

COMMIT = "0123456789abcdef0123456789abcdef01234567"
SHA256 = "ab" * 32


@pytest.mark.parametrize(
    "direct_url, requirement",
    [
        (  # pip install 'git+https://github.com/o/mono.git@v1#subdirectory=tools/stepkit'
            {
                "url": "https://github.com/o/mono.git",
                "vcs_info": {"vcs": "git", "requested_revision": "v1", "commit_id": COMMIT},
                "subdirectory": "tools/stepkit",
            },
            f"stepkit @ git+https://github.com/o/mono.git@{COMMIT}#subdirectory=tools/stepkit",
        ),
        (  # pip install https://example.com/stepkit-0.1.0-py3-none-any.whl (pip >= 22.3)
            {
                "url": "https://example.com/stepkit-0.1.0-py3-none-any.whl",
                "archive_info": {"hash": f"sha256={SHA256}", "hashes": {"sha256": SHA256}},
            },
            f"stepkit @ https://example.com/stepkit-0.1.0-py3-none-any.whl#sha256={SHA256}",
        ),
        (  # an older pip: the hash only
            {"url": "https://example.com/s.tar.gz", "archive_info": {"hash": "sha256=00"}},
            "stepkit @ https://example.com/s.tar.gz#sha256=00",
        ),
    ],
    ids=["git-subdirectory", "wheel-url", "sdist-old-pip"],
)
def test_a_record_a_runner_can_install_from_gives_the_same_stepkit(
    tmp_path, direct_url, requirement
):
    assert recorded_source(direct_url, tmp_path) == requirement


@pytest.mark.parametrize(
    "direct_url, says",
    [
        (
            {"url": "file:///tmp/stepkit-0.1.0-py3-none-any.whl", "archive_info": {}},
            "file:///tmp/stepkit-0.1.0-py3-none-any.whl, which the jobs cannot reach",
        ),
        (  # pip keeps an environment variable in place of a password
            {
                "url": "https://${TOKEN}@git.example.com/stepkit.git",
                "vcs_info": {"vcs": "git", "commit_id": COMMIT},
            },
            "https://git.example.com/stepkit.git, which the jobs cannot reach",
        ),
        (
            {
                "url": "ssh://git@github.com/o/stepkit.git",
                "vcs_info": {"vcs": "git", "commit_id": COMMIT},
            },
            "ssh://github.com/o/stepkit.git, which the jobs cannot reach",
        ),
    ],
    ids=["local-wheel", "credentials", "ssh"],
)
def test_a_record_no_runner_can_reach_is_refused_with_the_choices(tmp_path, direct_url, says):
    with pytest.raises(UsageError) as refused:
        recorded_source(direct_url, tmp_path)
    message = str(refused.value)
    assert says in message and "--stepkit-source URL" in message and "\n" not in message
