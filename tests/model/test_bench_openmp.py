"""``scripts/bench_openmp.py``: its measurements run llama.cpp for real (no timing asserted)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "bench_openmp.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_openmp", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_teams_mode_times_one_and_two_calling_threads(bench, tiny_gguf):
    times = bench.measure_teams(str(tiny_gguf), threads=2, tokens=3)
    assert len(times) == 3 and all(t > 0 for t in times)


def test_wait_policy_mode_times_a_setting(bench, tiny_gguf):
    ms = bench.measure(str(tiny_gguf), {"GOMP_SPINCOUNT": "3000"}, threads=1, tokens=3, busy=0)
    assert ms > 0
