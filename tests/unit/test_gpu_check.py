"""The CPU side of the GPU check (scripts/gpu_check.sh, scripts/gpu/).

The GPU run itself is never a test dependency; what can be checked here is:
the archive pruning that makes llama-cpp-python's source fit the carry limit,
the wheel list, the figures writer, the random Q4_0 model of the 7B shape
(written as raw blocks, loaded by llama.cpp), and the whole script end to end
with every stage on tiny models on the CPU.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import tarfile
from importlib import metadata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def load(name: str):
    spec = importlib.util.spec_from_file_location(f"gpu_{name}", ROOT / "scripts" / "gpu" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


prepare = load("prepare")
figures = load("figures")


def make_sdist(path: Path) -> dict[str, bytes]:
    files = {
        "pkg-1.0/CMakeLists.txt": b"project(x)\n",
        "pkg-1.0/vendor/llama.cpp/ggml/src/ggml-cuda/mmq.cu": b"// kernel\n",
        "pkg-1.0/vendor/llama.cpp/models/ggml-vocab-llama.gguf": b"G" * 5000,
        "pkg-1.0/vendor/llama.cpp/models/templates/chat.jinja": b"{{ x }}",
        "pkg-1.0/vendor/llama.cpp/docs/ops/CUDA.csv": b"a,b\n" * 100,
        "pkg-1.0/.git/modules/vendor/llama.cpp/objects/pack/p.pack": b"P" * 5000,
        "pkg-1.0/.git/HEAD": b"ref\n",
    }
    with tarfile.open(path, "w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode, info.mtime = len(data), 0o644, 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return files


def test_prune_keeps_the_build_and_drops_git_models_and_docs(tmp_path):
    files = make_sdist(tmp_path / "in.tar.gz")
    kept, dropped = prepare.prune_sdist(tmp_path / "in.tar.gz", tmp_path / "out.tar.gz")
    with tarfile.open(tmp_path / "out.tar.gz") as tar:
        names = tar.getnames()
        got = {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}
    assert names == ["pkg-1.0/CMakeLists.txt", "pkg-1.0/vendor/llama.cpp/ggml/src/ggml-cuda/mmq.cu",
                     "pkg-1.0/vendor/llama.cpp/models/templates/chat.jinja"]
    assert all(got[n] == files[n] for n in names)  # kept bytes unchanged
    assert (kept, dropped) == (3, 4)


def test_wheel_pins_are_the_installed_versions():
    pins = prepare.wheel_pins()
    assert [p.split("==")[0] for p in pins] == list(prepare.WHEELS)
    assert all(p.split("==")[1] == metadata.version(p.split("==")[0]) for p in pins)
    # the run imports pydantic and llama-cpp-python's diskcache: both must travel
    assert {"pydantic", "pydantic-core", "diskcache", "gguf"} <= set(prepare.WHEELS)


def test_figures_merge_parts_in_order_and_say_what_failed(tmp_path):
    parts = tmp_path / "parts"
    parts.mkdir()
    (parts / "embed.json").write_text(json.dumps({"stage": "embed", "title": "Embeddings",
        "rows": [{"what": "cuda | fp16", "value": 1234.56789, "unit": "texts/s", "note": "a\nb"}]}))
    (parts / "env.json").write_text(json.dumps({"stage": "env", "title": "Machine",
        "rows": [{"what": "offload", "value": True}]}))
    (parts / "judge.json").write_text(json.dumps({"stage": "judge", "title": "Judge",
        "error": "stopped at its limit of 120 s (exit 124)", "rows": []}))
    (parts / "decode.json").write_text("{not json")
    j, m = figures.write(parts, tmp_path / "out")
    stages = [p["stage"] for p in json.loads(j.read_text())["stages"]]
    assert stages == ["env", "judge", "decode", "embed"]
    md = m.read_text()
    assert "| cuda \\| fp16 | 1235 | texts/s | a b |" in md
    assert "| offload | yes |" in md
    assert "Stage failed: stopped at its limit of 120 s (exit 124)" in md
    assert "Stage failed: unreadable part" in md


@pytest.mark.model
def test_random_q4_0_model_is_real_q4_0_and_loads(tmp_path):
    import gguf

    from localeval.judge import LlamaJudge
    from localeval.testing.tiny_gguf import TinyModelSpec, build_tiny_gguf

    spec = TinyModelSpec(dtype="f16", quant="q4_0", vocab=2048, embd=128, ff=256)
    path = build_tiny_gguf(tmp_path / "q.gguf", spec)
    kinds = {t.name: t.tensor_type.name for t in gguf.GGUFReader(str(path)).tensors}
    assert kinds["blk.0.ffn_down.weight"] == "Q4_0" and kinds["output.weight"] == "Q8_0"
    assert kinds["blk.0.attn_norm.weight"] == "F32"
    assert build_tiny_gguf(tmp_path / "q2.gguf", spec).read_bytes() == path.read_bytes()
    judge = LlamaJudge(path, n_ctx=256, n_gpu_layers=0)
    try:
        toks = judge.llm.tokenize(b"The tower is in Paris.", add_bos=False)
        judge.llm.eval(toks)  # decodes: the blocks are valid Q4_0 for llama.cpp's kernels
        assert judge.llm.n_tokens == len(toks)
    finally:
        judge.close()
    big = TinyModelSpec.llama2_7b_q4_0()
    assert (big.layers, big.embd, big.ff, big.vocab, big.kv_heads) == (32, 4096, 11008, 32000, 32)


@pytest.mark.slow
@pytest.mark.model
@pytest.mark.subprocess
def test_the_check_end_to_end_on_tiny_models_on_the_cpu(tmp_path):
    work = tmp_path / "work"
    (work / "llama").mkdir(parents=True)
    import llama_cpp

    # the build step is the GPU machine's; here the installed llama-cpp-python stands in
    (work / "llama" / "llama_cpp").symlink_to(Path(llama_cpp.__file__).parent)
    env = {**os.environ, "GPU_WORK": str(work), "GPU_DEVICE": "cpu", "GPU_SMALL": "1",
           "PYTHON": sys.executable, "GPU_SKIP_WHEELS": "1", "GPU_DEADLINE": "400"}
    out = tmp_path / "out"
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "gpu_check.sh"), str(out)], cwd=ROOT,
                          env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    stages = {p["stage"]: p for p in json.loads((out / "gpu_figures.json").read_text())["stages"]}
    assert set(stages) >= {"env", "judge", "decode", "batched", "embed", "trace", "checkers"}
    assert not [s for s, p in stages.items() if p.get("error")], stages
    judge = {r["what"]: r for r in stages["judge"]["rows"]}
    assert judge["cpu vs gpu: judge calls compared"]["value"] > 0
    # here both sides are the CPU: identical, one sequence or eight
    assert judge["cpu vs gpu: calls with a different output"]["value"] == 0
    assert judge["gpu vs gpu-parallel8: sample scores that differ"]["value"] == 0
    assert all(r["value"] == 0 for r in stages["trace"]["rows"])  # identical logits
    embed = {r["what"]: r["value"] for r in stages["embed"]["rows"]}
    assert embed["cpu vs cpu: largest difference"] == 0
    assert 0 < embed["cpu fp16 vs cpu: largest difference"] < 0.05
    assert (out / "gpu_figures.md").read_text().startswith("# GPU check")
    assert "stage batched" in (out / "gpu_check.log").read_text()
