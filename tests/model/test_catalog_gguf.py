"""The tiny GGUF builder, GGUF checks and metadata, file hashing, model loading errors."""

from __future__ import annotations

import hashlib
import json
import random
import subprocess
import sys
import textwrap

import pytest

from localeval.errors import ModelError
from localeval.catalog.gguf import check_gguf, read_gguf_metadata
from localeval.catalog.hashing import _memo, file_sha256
from localeval.testing import TinyModelSpec, build_tiny_gguf
from localeval.testing.tiny_gguf import CHATML_TEMPLATE, train_tokenizer


def sha(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_builder_is_deterministic(tmp_path, tiny_gguf):
    a = build_tiny_gguf(tmp_path / "a.gguf")
    assert sha(a) == sha(tiny_gguf)
    b = build_tiny_gguf(tmp_path / "b.gguf", TinyModelSpec(seed=1))
    assert sha(b) != sha(a)


def test_llama_cpp_tokenises_like_the_trained_tokenizer(tiny_gguf):
    import llama_cpp

    hf = train_tokenizer(TinyModelSpec())
    llm = llama_cpp.Llama(str(tiny_gguf), n_ctx=256, n_threads=1, verbose=False)
    texts = ["The Eiffel Tower is in Paris.", '{"verdict": 1, "reason": "ok"}',
             "東京は日本の首都です。", "  odd   spacing\tand\nnewlines ", "émoji 😀 ünïcode",
             "<|im_start|>user\nhi<|im_end|>"]
    for t in texts:
        assert llm.tokenize(t.encode(), add_bos=False, special=True) == hf.encode(t).ids, t
    llm.close()


def test_metadata(tiny_gguf):
    spec = TinyModelSpec()
    m = read_gguf_metadata(tiny_gguf)
    E, F, V, L = spec.embd, spec.ff, spec.vocab, spec.layers
    e_kv = E // spec.heads * spec.kv_heads
    per_layer = 2 * E + 2 * E * E + 2 * E * e_kv + 3 * E * F
    assert m["architecture"] == "llama"
    assert m["parameters"] == 2 * V * E + E + L * per_layer
    assert m["file_type"] == "F32"
    assert m["context_length"] == spec.ctx
    assert m["chat_template"] == CHATML_TEMPLATE
    assert m["vocab_size"] == V
    assert (m["bos_token_id"], m["eos_token_id"], m["add_bos_token"]) == (0, 2, False)
    assert m["size_bytes"] == tiny_gguf.stat().st_size


def _bad_files(tmp_path, good):
    data = good.read_bytes()
    files = {
        "missing": tmp_path / "nope.gguf",
        "text": tmp_path / "notes.gguf",
        "empty": tmp_path / "empty.gguf",
        "header": tmp_path / "header.gguf",
        "half": tmp_path / "half.gguf",
        "almost": tmp_path / "almost.gguf",
        "garbage": tmp_path / "garbage.gguf",
    }
    files["text"].write_text("this is not a model\n")
    files["empty"].write_bytes(b"")
    files["header"].write_bytes(data[:10])
    files["half"].write_bytes(data[: len(data) // 2])
    files["almost"].write_bytes(data[:-100])
    files["garbage"].write_bytes(data[:24] + random.Random(0).randbytes(4096))
    return files


@pytest.mark.parametrize("kind, needle", [
    ("missing", "model file not found"),
    ("text", "not a GGUF file"),
    ("empty", "not a GGUF file"),
    ("header", "truncated GGUF file"),
    ("half", "GGUF file"),
    ("almost", "truncated GGUF file: tensor"),
    ("garbage", "corrupt or truncated GGUF file"),
])
def test_bad_files_are_model_errors_naming_the_path(tmp_path, tiny_gguf, kind, needle):
    path = _bad_files(tmp_path, tiny_gguf)[kind]
    with pytest.raises(ModelError) as e:
        check_gguf(path)
    assert e.value.exit_code == 3
    assert str(e.value).startswith(str(path) + ":")
    assert needle in str(e.value)


def test_the_judge_refuses_bad_files_without_crashing(tmp_path, tiny_gguf):
    """Run in a child so that a crash inside llama.cpp would show as a failure, not kill pytest."""
    files = _bad_files(tmp_path, tiny_gguf)
    code = textwrap.dedent(f"""
        import json
        from localeval.errors import ModelError
        from localeval.judge.llama import LlamaJudge
        out = {{}}
        for kind, path in {json.dumps({k: str(v) for k, v in files.items()})}.items():
            try:
                LlamaJudge(path, n_threads=1)
                out[kind] = "loaded"
            except ModelError as e:
                out[kind] = [e.exit_code, str(e)]
        print(json.dumps(out))
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    out = json.loads(r.stdout.strip().splitlines()[-1])
    for kind, path in files.items():
        assert out[kind][0] == 3, (kind, out[kind])
        assert str(path) in out[kind][1]


def test_quantised_model_loads_and_generates(tmp_path):
    """Q8_0 through llama_model_quantize; on AMX CPUs this needs the extra-buffer workaround."""
    q = build_tiny_gguf(tmp_path / "q8.gguf", TinyModelSpec(quant="q8_0"))
    assert read_gguf_metadata(q)["file_type"] == "Q8_0"
    code = textwrap.dedent(f"""
        from localeval.judge.base import JudgeRequest
        from localeval.judge.llama import LlamaJudge
        from localeval.metrics.schemas import Rating012
        j = LlamaJudge({str(q)!r}, n_threads=1)
        r = j.ask(JudgeRequest(step="s", schema=Rating012,
                               messages=({{"role": "user", "content": "Rate it."}},)))
        print(r.output.rating)
    """)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr[-2000:]
    assert r.stdout.strip() in ("0", "1", "2")


def test_file_hash_is_memoised_by_size_and_mtime(tmp_path):
    f = tmp_path / "m.bin"
    f.write_bytes(b"x" * 1000)
    memo = tmp_path / "hashes.json"
    real = hashlib.sha256(b"x" * 1000).hexdigest()
    assert file_sha256(f, memo) == real
    entry = json.loads(memo.read_text())[str(f.resolve())]
    assert entry["sha256"] == real and entry["size"] == 1000
    # a stored entry for the same (size, mtime) is trusted: plant a fake to prove it is read
    _memo.clear()
    entry["sha256"] = "f" * 64
    memo.write_text(json.dumps({str(f.resolve()): entry}))
    assert file_sha256(f, memo) == "f" * 64
    # a changed file (new mtime and size) is hashed again
    _memo.clear()
    f.write_bytes(b"y" * 1001)
    assert file_sha256(f, memo) == hashlib.sha256(b"y" * 1001).hexdigest()
