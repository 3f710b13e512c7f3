"""``bench/run.py --smoke``: every area once, through the table and results.json."""

import pytest

from tests.bench.test_bench_smoke import run_smoke

pytestmark = pytest.mark.bench


def test_the_bench_runner_runs(tmp_path):
    run_smoke("run.py", tmp_path)
