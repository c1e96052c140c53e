"""Documents cut to a checker's window (sentences packed, overlapping, exact slices), the
claim supported if any window supports it, and the cache of checker calls."""

from __future__ import annotations

import pytest

from localeval.cache import Cache
from localeval.checker import CachedChecker, load_checker, windows
from localeval.testing.tiny_checkers import build_tiny_checker

EN = " ".join(f"Sentence number {i} says that tower {i} is {i * 3} metres tall." for i in range(80))
JA = "".join(f"第{i}の塔は高さ{i * 3}メートルです。" for i in range(120))
ZH = "".join(f"第{i}座塔高{i * 3}米。" for i in range(150))


@pytest.fixture(scope="module")
def roberta(tmp_path_factory):
    folder = build_tiny_checker("roberta", tmp_path_factory.mktemp("w") / "roberta")
    return load_checker(folder, device="cpu")


@pytest.mark.parametrize("doc", [EN, JA, ZH], ids=["en", "ja", "zh"])
def test_windows_fit_cover_and_overlap(roberta, doc):
    claim = "Tower 7 is 21 metres tall."
    got = windows(doc, claim, roberta)
    assert len(got) > 1
    room = roberta.max_tokens - roberta.count_tokens(claim)
    for w in got:
        assert w in doc  # an exact slice of the document
        assert roberta.count_tokens(w) <= min(roberta.window_tokens, room)
    # every sentence of the document is in some window
    pos = 0
    for w in got:
        start = doc.find(w, max(0, pos - len(w)))
        assert start <= pos + 1, "a gap between windows"
        pos = max(pos, start + len(w))
    assert pos >= len(doc.rstrip()) - 1
    # consecutive windows share their boundary sentence
    for a, b in zip(got, got[1:]):
        assert doc.find(b) < doc.find(a) + len(a)


def test_short_document_is_one_window(roberta):
    assert windows("The tower is tall.", "It is tall.", roberta) == ["The tower is tall."]
    assert windows("", "claim", roberta) == [""]


def test_a_sentence_longer_than_the_window_is_cut_in_overlapping_pieces(roberta):
    doc = "tower " * 1500  # one sentence, no full stop
    got = windows(doc, "x", roberta)
    assert len(got) > 2
    assert all(roberta.count_tokens(w) <= roberta.window_tokens for w in got)
    assert all(w in doc for w in got)


def test_a_long_claim_leaves_less_room(roberta):
    claim = "tall " * 100
    got = windows(EN, claim, roberta)
    budget = roberta.max_tokens - roberta.count_tokens(claim)
    assert budget < roberta.window_tokens
    assert all(roberta.count_tokens(w) <= budget for w in got)
    assert len(got) > len(windows(EN, "short", roberta))


def test_supported_if_any_window_supports(roberta):
    claim = "Tower 7 is 21 metres tall."
    parts = windows(EN, claim, roberta)
    probs = roberta.support([(w, claim) for w in parts])
    assert max(probs) == pytest.approx(max(roberta.support([(w, claim)])[0] for w in parts),
                                       abs=1e-5)


def test_cache_answers_the_second_call_without_the_model(roberta, tmp_path):
    cache = Cache(tmp_path / "cache.sqlite")
    cached = CachedChecker(roberta, cache)
    pairs = [("The tower is in Paris.", "It is in Paris."), ("東京は首都です。", "首都"),
             ("The tower is in Paris.", "It is in Paris.")]
    before = roberta.calls
    first = cached.support(pairs)
    assert roberta.calls > before and cached.misses == 2  # the repeated pair asked once
    assert first == pytest.approx(roberta.support(pairs), abs=1e-6)
    calls = roberta.calls
    again = CachedChecker(roberta, Cache(tmp_path / "cache.sqlite"))  # a new run, same file
    assert again.support(pairs) == first
    assert roberta.calls == calls and again.hits == 3 and again.misses == 0
    assert again.fingerprint == roberta.fingerprint and again.family == "pair"


def test_cache_keys_on_the_fingerprint(roberta, tmp_path):
    cache = Cache(tmp_path / "cache.sqlite")
    CachedChecker(roberta, cache).support([("a", "b")])

    class Other:
        name, fingerprint = "other", "0" * 64

        def support(self, pairs):
            return [0.25 for _ in pairs]

    other = CachedChecker(Other(), cache)
    assert other.support([("a", "b")]) == [0.25] and other.misses == 1


def test_damaged_cache_entry_is_recomputed(roberta, tmp_path):
    from localeval.checker.cached import support_key

    cache = Cache(tmp_path / "cache.sqlite")
    cache.put_call(support_key(roberta.fingerprint, "a", "b"), "x", "checker-support",
                   {"p": 7.0})
    got = CachedChecker(roberta, cache).support([("a", "b")])
    assert got == pytest.approx(roberta.support([("a", "b")]), abs=1e-6)


def test_spans_are_cached(tmp_path):
    folder = build_tiny_checker("modernbert", tmp_path / "m", plant="unsupported")
    inner = load_checker(folder, device="cpu")
    cached = load_checker(folder, device="cpu", cache=Cache(tmp_path / "c.sqlite"))
    assert isinstance(cached, CachedChecker) and cached.marks_spans
    first = cached.spans(["ctx"], "q", "An answer.")
    calls = cached.inner.calls
    assert cached.spans(["ctx"], "q", "An answer.") == first == inner.spans("ctx", "q",
                                                                            "An answer.")
    assert cached.inner.calls == calls and cached.hits == 1
