"""What the suite's autouse isolation gives the processes a test starts."""

import subprocess
import sys
from pathlib import Path


def test_a_pytest_a_test_starts_keeps_its_temp_dirs_out_of_the_shared_root(
    tmp_path, tmp_path_factory
):
    # A pytest started by a test (a gate's run, a documented example) that
    # asks for tmp_path removes, when it ends, every older numbered session
    # under its temp root but the last three.  Under the shared
    # /tmp/pytest-of-<user> that is the trees earlier suites left there:
    # gigabytes on a reused CI machine, and the inner run outlived its
    # test's timeout deleting them.
    (tmp_path / "test_where.py").write_text(
        "def test_where(tmp_path):\n    print('BASETEMP', tmp_path.parent.parent)\n",
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "test_where.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    where = Path(
        next(line for line in done.stdout.splitlines() if "BASETEMP" in line).split("BASETEMP ", 1)[
            1
        ]
    )
    assert where.is_relative_to(tmp_path_factory.getbasetemp()), where
