"""``localeval metrics`` as a user runs it: every name whole, whatever the terminal width."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest


def _metrics(*args: str, columns: int) -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": str(columns)}
    return subprocess.run([sys.executable, "-m", "localeval.cli", "metrics", *args], env=env,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("columns", [60, 80, 200])
def test_metric_names_are_never_cut(columns):
    rows = json.loads(_metrics("--json", columns=columns).stdout)
    names = [r["name"] for r in rows]
    assert "nv_response_groundedness" in names and "context_entity_recall" in names
    run = _metrics(columns=columns)
    assert run.returncode == 0, run.stderr
    # first cell of each table line, with the "(@k)" parameter and alias lines dropped;
    # too narrow for the table (60 columns), the first word of each unindented line
    lines = run.stdout.splitlines()
    cells = {m.group(1) for line in lines if (m := re.match(r"│ (\S+)", line))}
    if columns < 90:
        assert not cells and "  alias: agent_goal_accuracy_with_reference" in lines
        cells = {m.group(1) for line in lines if (m := re.match(r"(\w\S*)", line))}
    else:
        assert cells, "wide enough for the table"
    for name in names:
        assert name in cells, (columns, name)
    # descriptions are wrapped, not cut with an ellipsis
    assert "…" not in run.stdout
    longest = max(rows, key=lambda r: len(r["description"]))["description"]
    words = re.findall(r"[A-Za-z]{4,}", longest)
    assert all(w in run.stdout for w in words), words
