"""``stepkit mcp`` without the MCP SDK installed: one line saying what to
install, exit 2, nothing on stdout (the client reads stdout as the protocol)."""

from __future__ import annotations

import subprocess

from tests.support.e2e import PY, clean_env

#: runs the CLI with the SDK's import blocked, as if it were not installed
WITHOUT_SDK = (
    "import sys; sys.modules['mcp'] = None; from stepkit.cli import main; sys.exit(main(['mcp']))"
)


def test_stepkit_mcp_without_the_sdk_says_what_to_install(tmp_path):
    done = subprocess.run(
        [PY, "-c", WITHOUT_SDK],
        cwd=tmp_path,
        env=clean_env(),
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.splitlines() == [
        "stepkit: error: stepkit mcp needs the MCP SDK: pip install 'stepkit[mcp]'"
    ]
