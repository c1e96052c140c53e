"""A checker folder is verified before use: damaged, mismatched or code-carrying folders
are refused with one ModelError (exit 3) naming the folder and what is wrong."""

from __future__ import annotations

import json
import shutil

import pytest

from localeval.checker import SETTINGS_FILE, load_checker, pick_device, read_layout
from localeval.errors import ModelError
from localeval.testing.tiny_checkers import build_tiny_checker


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("built")
    return {k: build_tiny_checker(k, root / k) for k in ("roberta", "hhem", "modernbert", "t5")}


@pytest.fixture
def copy(built, tmp_path):
    def make(kind: str):
        dst = tmp_path / kind
        shutil.copytree(built[kind], dst)
        return dst
    return make


def _config(folder, **changes):
    path = folder / "config.json"
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _refused(folder, *words, **kwargs) -> str:
    with pytest.raises(ModelError) as e:
        load_checker(folder, device="cpu", **kwargs)
    text = str(e.value)
    assert e.value.exit_code == 3
    assert str(folder.resolve()) in text or str(folder) in text
    for w in words:
        assert w in text, text
    return text


def test_not_a_folder(tmp_path):
    _refused(tmp_path / "nothing", "not a folder")


def test_no_config(copy):
    f = copy("roberta")
    (f / "config.json").unlink()
    _refused(f, "no config.json")


def test_missing_weights(copy):
    f = copy("roberta")
    (f / "model.safetensors").unlink()
    _refused(f, "no weights")


def test_missing_tokenizer(copy):
    f = copy("roberta")
    (f / "tokenizer.json").unlink()
    _refused(f, "no tokenizer")


def test_unknown_architecture(copy):
    f = copy("roberta")
    _config(f, architectures=["GPT2LMHeadModel"])
    _refused(f, "GPT2LMHeadModel", "not a checker")


def test_label_map_without_a_supported_label(copy):
    f = copy("roberta")
    _config(f, id2label={"0": "contradiction", "1": "neutral", "2": "other"},
            label2id={"contradiction": 0, "neutral": 1, "other": 2})
    _refused(f, "no supported label", SETTINGS_FILE)


def test_label_found_by_name(copy):
    f = copy("roberta")
    _config(f, id2label={"0": "entailment", "1": "neutral", "2": "contradiction"})
    assert read_layout(f).label == 0
    _config(f, id2label={"0": "hallucinated", "1": "consistent"})
    assert read_layout(f).label == 1
    _config(f, id2label={"0": "not_supported", "1": "x"})
    assert read_layout(f).label == 1  # the other of two


def test_span_label_found_by_name(copy):
    f = copy("modernbert")
    assert read_layout(f).label == 1  # LettuceDetect: label 1 = hallucinated
    _config(f, id2label={"0": "hallucinated", "1": "supported"})
    assert read_layout(f).label == 0


def test_weights_lacking_a_tensor(copy):
    from safetensors.torch import load_file, save_file

    f = copy("roberta")
    state = load_file(str(f / "model.safetensors"))
    state.pop("classifier.out_proj.bias")
    save_file(state, str(f / "model.safetensors"), metadata={"format": "pt"})
    _refused(f, "lack 1 tensors", "classifier.out_proj.bias")


def test_weights_of_another_shape(copy):
    f = copy("roberta")
    _config(f, hidden_size=64, intermediate_size=128)  # the config of a bigger model
    _refused(f, "wrong shape", "mixes two models")


def test_garbage_weights(copy):
    f = copy("roberta")
    (f / "model.safetensors").write_bytes(b"\x00not a safetensors file")
    _refused(f, "weights cannot be loaded")


def test_hhem_without_its_foundation(copy):
    f = copy("hhem")
    shutil.rmtree(f / "foundation")
    _refused(f, "google/flan-t5-base", "foundation", "never downloads")


def test_remote_code_is_refused_saying_what_would_run(copy):
    f = copy("roberta")
    (f / "modeling_custom.py").write_text(
        "from transformers import RobertaForSequenceClassification\n"
        "RAN = []\n"
        "class CustomChecker(RobertaForSequenceClassification):\n"
        "    pass\n")
    _config(f, auto_map={"AutoModelForSequenceClassification": "modeling_custom.CustomChecker"})
    text = _refused(f, "modeling_custom.py", "modeling_custom.CustomChecker",
                    "trust_remote_code=True")
    assert "run" in text


def test_remote_code_runs_when_trusted(copy, tmp_path, monkeypatch):
    import transformers.dynamic_module_utils as dyn

    monkeypatch.setattr(dyn, "HF_MODULES_CACHE", str(tmp_path / "modules"))
    f = copy("roberta")
    (f / "modeling_custom.py").write_text(
        "from transformers import RobertaForSequenceClassification\n"
        "class CustomChecker(RobertaForSequenceClassification):\n"
        "    pass\n")
    _config(f, auto_map={"AutoModelForSequenceClassification": "modeling_custom.CustomChecker"})
    checker = load_checker(f, device="cpu", trust_remote_code=True)
    assert type(checker.model).__name__ == "CustomChecker"
    assert 0.0 <= checker.support([("a", "b")])[0] <= 1.0


def test_settings_file_overrides_and_is_checked(copy):
    f = copy("roberta")
    (f / SETTINGS_FILE).write_text(json.dumps({"supported_label": 0, "window_tokens": 200}))
    layout = read_layout(f)
    assert (layout.label, layout.window_tokens) == (0, 200)
    (f / SETTINGS_FILE).write_text(json.dumps({"family": "span"}))
    _refused(f, "family 'span'", "RobertaForSequenceClassification")
    (f / SETTINGS_FILE).write_text(json.dumps({"windw_tokens": 5}))
    _refused(f, SETTINGS_FILE, "windw_tokens")
    (f / SETTINGS_FILE).write_text(json.dumps({"supported_label": 7}))
    _refused(f, "label 7 is outside its 2 labels")


def test_t5_labels_that_share_a_first_token_are_refused(copy):
    f = copy("t5")
    (f / SETTINGS_FILE).write_text(json.dumps({"supported_text": "1", "unsupported_text": "1"}))
    _refused(f, "begin with the same token")


def test_fingerprint_follows_the_files_not_the_path(copy, built, tmp_path):
    a = load_checker(built["roberta"], device="cpu")
    b = load_checker(copy("roberta"), device="cpu")
    assert a.fingerprint == b.fingerprint and a.name == "roberta"
    f = tmp_path / "roberta"
    (f / SETTINGS_FILE).write_text(json.dumps({"window_tokens": 100}))
    assert load_checker(f, device="cpu").fingerprint != a.fingerprint


def test_device_choice(monkeypatch):
    import torch

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert pick_device("auto") == "cpu"
    with pytest.raises(ModelError, match="CUDA is not available"):
        pick_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert pick_device("auto") == "cuda"


def test_cpu_is_float32_whatever_is_asked(built):
    import torch

    c = load_checker(built["roberta"], device="cpu", dtype="bfloat16")
    assert c.dtype == "float32"
    assert next(c.model.parameters()).dtype == torch.float32
