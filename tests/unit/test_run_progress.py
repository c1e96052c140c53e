"""Signs of life: the stage line while models load, live judge statistics, a token-based ETA."""

from __future__ import annotations

import io

from localeval.judge import Usage
from localeval.run.progress import RunProgress, WorkEta, loading_stage, model_label


def test_eta_from_the_work_left_not_from_samples_done():
    # samples 1-2 need one judge metric, 3-4 need three; every metric takes 10 s of wall
    # time, of which the judge's own seconds are half (rendering, grammar, re-asks)
    eta = WorkEta([1, 1, 3, 3], start=0.0)
    u = Usage()
    assert eta.update(u, 0, now=5.0) is None  # nothing finished: no measured cost yet
    u.calls, u.prompt_tokens, u.seconds = 1, 100, 5.0
    # sample 1 done at 10 s: 7 metrics left at 10 s each (by samples: 3 x 10 s = 30 s;
    # by judge seconds: half of that)
    assert eta.update(u, 1, now=10.0) == 70.0
    assert eta.update(u, 1, now=15.0) == 65.0  # counts down with the clock
    # a call of sample 2 finished (50 tokens: half a metric's 100)
    u.calls, u.prompt_tokens, u.seconds = 2, 150, 7.5
    assert eta.update(u, 1, now=16.0) == (7 - 0.5) * 10
    u.calls, u.prompt_tokens, u.seconds = 3, 200, 10.0
    assert eta.update(u, 2, now=20.0) == 60.0  # 6 metrics left
    assert eta.update(u, 4, now=80.0) == 0.0


def test_statistics_follow_the_live_usage_per_call_not_per_sample():
    u = Usage()
    bar = RunProgress(3, enabled=False, usage=u)
    assert bar.status_text() == "eta -:--:--"
    u.calls, u.cache_hits, u.prompt_tokens, u.generated_tokens, u.seconds = 2, 1, 90, 10, 2.0
    # no sample finished, no update() call: the text already shows the two calls
    # (no ETA before a sample has measured what the work costs)
    assert bar.status_text() == "eta -:--:-- · calls 2 · cache 1 · 50 tok/s"
    bar.update(u)
    u.calls = 3
    assert "calls 3" in bar.status_text()


def test_loading_stage_shows_on_a_terminal_only(monkeypatch, capsys):
    with loading_stage("loading judge tiny.gguf", enabled=False):
        pass
    assert capsys.readouterr().err == ""
    with loading_stage("loading judge tiny.gguf", enabled=True):
        pass
    err = capsys.readouterr().err
    assert "loading judge tiny.gguf: done in" in err
    assert model_label("/m/qwen2.5-7b.gguf", "x") == "qwen2.5-7b.gguf"
    assert model_label("http://h:8080/v1", "x") == "http://h:8080/v1"
    assert model_label(None, "from models/") == "from models/"
    assert model_label(io.StringIO(), "d") == "d"
