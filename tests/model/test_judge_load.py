"""--judge resolution: URL, path, a name in models/, or the only GGUF there."""

from __future__ import annotations

import shutil

import pytest

from localeval.catalog import locate_model
from localeval.errors import ModelError
from localeval.judge.load import load_judge


def test_nothing_given(tmp_path, tiny_gguf):
    models = tmp_path / "models"
    assert load_judge(None, models_dir=models) is None  # no models/ at all
    models.mkdir()
    assert load_judge(None, models_dir=models) is None  # empty
    shutil.copy(tiny_gguf, models / "judge.gguf")
    j = load_judge(None, models_dir=models, n_threads=1)
    assert type(j).__name__ == "LlamaJudge" and j.name == "judge.gguf"
    j.close()
    shutil.copy(tiny_gguf, models / "other.gguf")
    assert load_judge(None, models_dir=models) is None  # ambiguous: the user must choose


def test_names_and_paths(tmp_path, tiny_gguf, monkeypatch):
    models = tmp_path / "models"
    models.mkdir()
    shutil.copy(tiny_gguf, models / "qwen-tiny.gguf")
    assert locate_model("qwen-tiny", "judge", models) == models / "qwen-tiny.gguf"
    assert locate_model("qwen-tiny.gguf", "judge", models) == models / "qwen-tiny.gguf"
    assert locate_model(str(tiny_gguf), "judge", models) == tiny_gguf
    monkeypatch.chdir(tmp_path)
    assert locate_model("models/qwen-tiny.gguf", "judge", "elsewhere").resolve() == (
        models / "qwen-tiny.gguf").resolve()
    j = load_judge("qwen-tiny", models_dir=models, n_threads=1, seed=3)
    assert j.name == "qwen-tiny.gguf" and j.seed == 3
    j.close()


def test_not_found_says_what_to_do(tmp_path):
    with pytest.raises(ModelError) as e:
        load_judge("my-own-judge", models_dir=tmp_path / "models")
    msg = str(e.value)
    assert msg.startswith("judge model not found: my-own-judge")
    assert "put the GGUF file in" in msg and "or pass a path" in msg
    assert e.value.exit_code == 3
    with pytest.raises(ModelError, match="judge model not found: /no/such/model.gguf"):
        load_judge("/no/such/model.gguf")
    # a manifest name that is absent: which file to place where, and how to fetch it
    with pytest.raises(ModelError) as e:
        load_judge("qwen2.5-7b-instruct", models_dir=tmp_path / "models")
    msg = str(e.value)
    assert "place Qwen2.5-7B-Instruct-Q4_K_M.gguf" in msg and "fetch_models.py" in msg
    assert e.value.exit_code == 3


def test_urls_give_an_http_judge():
    from test_judge_http import Scripted

    s = Scripted()
    try:
        j = load_judge(s.url.removesuffix("/v1"), judge_model="served-name", backoff=0.01)
        assert type(j).__name__ == "HttpJudge" and j.model == "served-name"
    finally:
        s.close()
