"""Signs of life: the stage line while models load, live judge statistics, a token-based ETA."""

from __future__ import annotations

import io

from localeval.judge import Usage
from localeval.run.progress import RunProgress, TokenEta, loading_stage, model_label


def test_eta_from_tokens_counts_down_between_calls_and_moves_with_each_call():
    eta = TokenEta(total=4)
    u = Usage()
    assert eta.update(u, 0, now=0.0) is None  # nothing processed yet: no guess
    # the first call of sample 1: 100 tokens in 1 s
    u.calls, u.prompt_tokens, u.seconds = 1, 100, 1.0
    first = eta.update(u, 0, now=1.0)
    assert first == 3 * 100 / 100 + 0.0  # sample 1 costs >= 100 tokens; 3 more samples
    # no call finished for 2 s: the same estimate, counting down with the clock
    assert eta.update(u, 0, now=2.0) == first - 1.0
    assert eta.update(u, 0, now=3.5) == first - 2.5
    # sample 1 finished at 200 tokens (2 s), then one call of sample 2 (50 tokens, 0.5 s)
    u.calls, u.prompt_tokens, u.seconds = 2, 200, 2.0
    assert eta.update(u, 1, now=4.0) == 3 * 200 / 100
    u.calls, u.prompt_tokens, u.seconds = 3, 250, 2.5
    # 3 samples of 200 tokens are left, 50 of them already done, at 100 tok/s
    assert eta.update(u, 1, now=4.5) == (3 * 200 - 50) / 100
    assert eta.update(u, 4, now=9.0) == 0.0


def test_statistics_follow_the_live_usage_per_call_not_per_sample():
    u = Usage()
    bar = RunProgress(3, enabled=False, usage=u)
    assert bar.status_text() == "eta -:--:--"
    u.calls, u.cache_hits, u.prompt_tokens, u.generated_tokens, u.seconds = 2, 1, 90, 10, 2.0
    # no sample finished, no update() call: the text already shows the two calls;
    # 100 tokens at 50 tok/s, the first sample costs >= 100, two more to go: 4 s
    assert bar.status_text() == "eta 0:00:04 · calls 2 · cache 1 · 50 tok/s"
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
