"""``bench/run.py --smoke --only parallel``: three steps side by side and in turn, real worktrees."""

import pytest

from tests.bench.test_bench_smoke import run_smoke

pytestmark = pytest.mark.bench


def test_the_parallel_bench_runs(tmp_path):
    run_smoke(("parallel",), tmp_path)
