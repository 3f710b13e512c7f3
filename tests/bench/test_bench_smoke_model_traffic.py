"""``bench/run.py --smoke --only model_traffic``: the model traffic against its loopback API."""

import pytest

from tests.bench.test_bench_smoke import run_smoke

pytestmark = pytest.mark.bench


def test_the_model_traffic_bench_runs(tmp_path):
    run_smoke(("model_traffic",), tmp_path)
