"""One pytest test per dataset row: ``rows`` for parametrize, ``assert_row`` for the check.

Run as a user's suite would be (pytest in a subprocess), so the test ids, the
failure messages and the hidden frames are what a user sees.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from localeval.errors import DataError
from localeval.testing import ScriptedJudge, assert_row, rows

ROWS = [{"id": "ok", "question": "Where is the service desk?", "answer": "On floor 2.",
         "contexts": ["The service desk is on floor 2."]},
        {"id": "bad", "question": "When does the cafeteria open, and on which days of the week?",
         "answer": "An unfaithful answer.", "contexts": ["The cafeteria opens at 8."]},
        {"id": "gap", "question": "BROKEN", "answer": "x", "contexts": ["c"]}]

USER_SUITE = f'''
import sys

import pytest
from localeval.testing import assert_row, rows

sys.path.insert(0, {str(Path(__file__).parent)!r})
from test_gates import gate_judge  # the scripted judge of the CLI gate tests

JUDGE = gate_judge()


@pytest.mark.parametrize("row", rows("golden.jsonl"))
def test_answer(row):
    assert_row(row, {{"faithfulness": 0.5}}, judge=JUDGE, cache=False)
'''


def test_rows_and_assert_row_in_a_user_suite(tmp_path):
    (tmp_path / "golden.jsonl").write_text("".join(json.dumps(r) + "\n" for r in ROWS),
                                           encoding="utf-8")
    (tmp_path / "test_golden.py").write_text(USER_SUITE, encoding="utf-8")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LOCALEVAL_JUDGE_CHECK": "0",
           "LOCALEVAL_CACHE": str(tmp_path / "cache.sqlite")}
    p = subprocess.run([sys.executable, "-m", "pytest", "-v", "-p", "no:cacheprovider",
                        "-W", "ignore", "test_golden.py"], capture_output=True, text=True,
                       cwd=tmp_path, env=env, timeout=120)
    out = p.stdout
    assert p.returncode == 1, out[-3000:]
    # readable ids: the row's id and its question, shortened
    assert "test_answer[ok: Where is the service desk?] PASSED" in out
    assert "test_answer[bad: When does the cafeteria open, and on wh...] FAILED" in out
    # the message: id, question, score and the judge's working; an unscored row fails too
    assert ('localeval: gate failed: faithfulness at least 0.5 on every sample: 1 of 1 samples '
            'under it') in out
    assert 'bad "When does the cafeteria open, and on which days of the week?": ' \
           "faithfulness 0.000 < 0.5; working: " in out and "not in the context" in out
    assert 'gap "BROKEN": faithfulness unscored (reply did not parse)' in out
    # __tracebackhide__: the traceback stops at the user's call, not in localeval's source
    assert "per_row.py" not in out and "assertions.py" not in out
    assert "check_result(" not in out


def test_rows_reads_and_checks_the_data_at_collection(tmp_path):
    params = rows(ROWS)
    assert [p.id for p in params] == [
        "ok: Where is the service desk?",
        "bad: When does the cafeteria open, and on wh...", "gap: BROKEN"]
    assert params[0].values[0].answer == "On floor 2."
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "q", "answer": "a"}\n{oops\n', encoding="utf-8")
    with pytest.raises(DataError, match="line 2"):
        rows(bad)


def test_assert_row_allows_an_unscored_row_only_when_asked():
    judge = ScriptedJudge({"statements": {"statements": ["a claim"]}}, auto=True)
    row = rows([{"id": "x", "question": "q", "answer": "a", "contexts": ["c"]}])[0].values[0]
    # no judge at all: unscored, and that fails unless allowed
    with pytest.raises(AssertionError, match=r'x "q": faithfulness unscored \(.*judge'):
        assert_row(row, {"faithfulness": 0.5}, judge=False, cache=False)
    assert_row(row, {"faithfulness": 0.5}, judge=False, cache=False, allow_unscored=True)
    assert_row(row, {"faithfulness": 0.0}, judge=judge, cache=False)
