"""localeval changes a process's environment only where it needs to."""

from __future__ import annotations

import os
import subprocess
import sys


def _child(code: str) -> str:
    env = {k: v for k, v in os.environ.items() if k != "GOMP_SPINCOUNT"}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          check=True, timeout=120).stdout.strip()


def test_importing_metrics_leaves_the_openmp_spin_alone():
    """Every metric imports the judge protocol; only the in-process judge's package sets
    libgomp's spin count (before llama.cpp loads), so a user's process that never builds
    an in-process judge keeps its environment."""
    out = _child("import os\nimport localeval\nfrom localeval.metrics import parse_metrics\n"
                 "from localeval.judge import JudgeRequest\nparse_metrics('faithfulness,mrr')\n"
                 "print(os.environ.get('GOMP_SPINCOUNT'))")
    assert out == "None"


def test_the_in_process_judge_sets_a_short_spin_unless_the_user_did():
    code = "import os\nfrom localeval.judge import LlamaJudge\nprint(os.environ.get('GOMP_SPINCOUNT'))"
    assert _child(code) == "3000"
    assert _child("import os\nos.environ['GOMP_SPINCOUNT'] = '7'\n" + code) == "7"
