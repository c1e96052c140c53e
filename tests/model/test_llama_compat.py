"""The in-process judge's fence around llama-cpp-python (``judge/llama/compat.py``) and the
seams its decoders offer a draft-and-verify loop: k tokens in one decode with the logits
of each, rolling the KV cache back, and asking the grammar without committing."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from localeval.errors import LocalevalWarning, ModelError
from localeval.judge import LlamaJudge
from localeval.judge.grammar import schema_to_gbnf
from localeval.judge.llama import compat
from localeval.metrics.schemas import Rating012

MSGS = ({"role": "system", "content": "You are a careful judge. Answer only with JSON."},
        {"role": "user", "content": "Where is the Eiffel Tower? Context: it is in Paris."})


@pytest.fixture(autouse=True)
def _forget_checked(monkeypatch):
    monkeypatch.setattr(compat, "_checked", set())
    monkeypatch.delenv(compat.ALLOW_ENV, raising=False)


def test_the_installed_version_is_supported_and_others_are_refused_with_what_to_do():
    import llama_cpp

    compat.check_version()  # the installed one: the tests run on it
    compat.check_version(llama_cpp.__version__)
    for bad in ("0.2.90", "0.4.0", "0.3.2", "1.0.0", "dev"):
        with pytest.raises(ModelError) as e:
            compat.check_version(bad)
        msg = str(e.value)
        assert e.value.exit_code == 3
        assert f"llama-cpp-python {bad} is installed" in msg
        assert compat.supported_text() in msg and "pip install" in msg
        assert compat.ALLOW_ENV in msg


def test_the_escape_hatch_turns_the_refusal_into_a_warning(monkeypatch):
    monkeypatch.setenv(compat.ALLOW_ENV, "1")
    with pytest.warns(LocalevalWarning, match="llama-cpp-python 0.4.1 is installed"):
        compat.check_version("0.4.1")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        compat.check_version("0.4.1")  # told once per process


def test_the_cli_refuses_another_version_with_one_error_exit_3(tiny_gguf, tmp_path,
                                                               monkeypatch, capsys):
    import llama_cpp

    from localeval.cli.app import main

    monkeypatch.setattr(llama_cpp, "__version__", "0.2.90")
    monkeypatch.setenv("LOCALEVAL_JUDGE_CHECK", "0")
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "s0", "question": "Where?", "answer": "Paris.",
                                "reference": "Paris.", "contexts": ["It is in Paris."]}) + "\n")
    code = main(["run", str(data), "-m", "context_precision", "--judge", str(tiny_gguf),
                 "-o", str(tmp_path / "out"), "--cache", str(tmp_path / "c.sqlite"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 3, err
    assert err.count("localeval: error:") == 1 and "Traceback" not in err
    assert "llama-cpp-python 0.2.90 is installed" in err


def one_at_a_time(j: LlamaJudge, prompt: list[int], tokens: list[int]) -> np.ndarray:
    """Logits after prompt + each prefix of ``tokens``, every token a decode of its own."""
    return np.stack([j.decoder.logits_after(prompt + tokens[:i + 1])[0].copy()
                     for i in range(len(tokens))])


def test_sequential_decoder_evaluates_k_tokens_in_one_decode_and_rolls_back(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=1)
    try:
        dec = j.decoder
        prompt = j.prompt_tokens(MSGS)
        gen = j.generate(prompt, None, 4)
        want = one_at_a_time(j, prompt, gen.tokens)
        dec.logits_after(prompt)
        rows = dec.decode_rows(gen.tokens)  # type: ignore[attr-defined]
        assert rows.shape == (4, j.n_vocab)
        # a k-row decode and one-row decodes differ in the last float32 bits only
        np.testing.assert_allclose(rows, want, atol=1e-4)
        dec.truncate(len(prompt) + 1)  # type: ignore[attr-defined]
        again, reused = dec.logits_after(prompt + gen.tokens[:2])
        assert reused == len(prompt)  # cut back to there (less the last two), not emptied
        np.testing.assert_allclose(again, want[1], atol=1e-4)
    finally:
        j.close()


def test_decoding_tests_a_token_against_the_grammar_without_committing_it(tiny_gguf):
    j = LlamaJudge(tiny_gguf, n_threads=1)
    try:
        seq = j.sampler.start(schema_to_gbnf(Rating012), 50, 0.0, 0)
        try:
            brace = j.model.tokenize(b"{")[0]
            letter = j.model.tokenize(b"x")[0]
            assert seq.allows(brace) and not seq.allows(letter)
            assert seq.allows(brace) and seq.tokens == []  # asking committed nothing
            logits = np.full(j.n_vocab, -10.0, dtype=np.float32)
            logits[brace] = 10.0
            assert seq.step(logits) == brace and seq.tokens == [brace]
            assert not seq.allows(brace)  # "{{" is not JSON
        finally:
            seq.free()
    finally:
        j.close()
