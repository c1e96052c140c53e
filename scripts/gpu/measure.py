"""The GPU check's stages: each measures one thing and writes one part (figures.py).

    python scripts/gpu/measure.py STAGE --work DIR --parts DIR [--device cuda] [--small]

Stages (``scripts/gpu_check.sh`` runs them in order, each under its own time limit):

- ``env``: the GPU, driver, CUDA, torch and llama-cpp-python, and whether the
  build offloads.
- ``judge``: the bundled example (``--sample 3`` per language, as ``make example``
  runs it; faithfulness, context recall and precision) judged by a random-weight
  model of the demo judge's shape (SmolLM2-135M, f16) on the CPU and fully
  offloaded, through the ``localeval run`` command: scores, judge seconds, tokens/s,
  and every judge call of one side against the other (the two caches joined by key).
- ``trace``: where the two sides' judge calls differ, why: the same prompts decoded
  greedily by llama.cpp on the CPU and on the GPU, with the largest difference of
  their logits and, at the first step where they pick different tokens, the margin
  between the two tokens on each side.
- ``decode``: a random-weight LLaMA-2-7B-shaped model in Q4_0 (built here, never
  carried): llama.cpp's pp512 and tg128, the figures of its published GPU tables.
- ``batched``: the same model judging 16 samples at ``--parallel`` 1, 4, 8, 16
  (``scripts/bench_parallel.py``): seconds per sample and identical scores.
- ``embed``: a random-weight sentence-transformers model of all-MiniLM-L6-v2's shape,
  2,000 texts on CUDA against the CPU: texts/s and the largest difference.
- ``checkers``: ``scripts/bench_checkers.py --device cuda`` where it exists.

``--small`` swaps every model for a tiny one of the same architecture and the
device for the CPU: the tests run each stage so, on a machine without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, Callable

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

from gpu import figures  # noqa: E402

JUDGE_METRICS = "faithfulness,context_recall,context_precision"


def row(what: str, value: Any, unit: str = "", note: str = "") -> dict[str, Any]:
    return {"what": what, "value": value, "unit": unit, "note": note}


def cmd_out(cmd: list[str]) -> str:
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError) as e:
        return f"unavailable ({e.__class__.__name__})"


# -- env ------------------------------------------------------------------------------
def stage_env(a: argparse.Namespace) -> dict[str, Any]:
    from localeval.judge.llama.cxx_runtime import preload_cxx_runtime

    preloaded = preload_cxx_runtime()  # one C++ runtime before llama_cpp, as the judge does
    import llama_cpp

    gpu = cmd_out(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                   "--format=csv,noheader"])
    try:
        import torch
        cuda = torch.version.cuda if torch.cuda.is_available() else "none"
        tv = torch.__version__
    except ImportError:
        cuda, tv = "no torch", "no torch"
    offload = bool(llama_cpp.llama_supports_gpu_offload())
    return {"title": "Machine and build", "rows": [
        row("GPU", gpu), row("CUDA (torch)", cuda), row("torch", tv),
        row("llama-cpp-python", llama_cpp.__version__),
        row("GPU offload in this build", offload),
        # torch is imported after llama_cpp above: with a CUDA build that segfaulted
        # until the judge preloaded the C++ runtime (localeval/judge/llama/cxx_runtime.py)
        row("C++ runtime preloaded before llama.cpp", preloaded,
            note="torch imported after llama.cpp: no crash"),
        row("CPU", platform.processor() or cmd_out(["uname", "-m"]),
            note=f"{os.cpu_count()} cores"),
        row("Python", platform.python_version())]}


# -- judge: the example on the CPU and offloaded --------------------------------------
def model_spec(kind: str, small: bool):
    from localeval.testing.tiny_gguf import TinyModelSpec

    if small:
        return TinyModelSpec(dtype="f16", quant="q4_0" if kind == "7b" else None,
                             pad_tokens="random", vocab=2048, embd=128, ff=256)
    return TinyModelSpec.llama2_7b_q4_0() if kind == "7b" else TinyModelSpec.smollm2_135m()


def build_model(a: argparse.Namespace, kind: str) -> tuple[Path, float]:
    from localeval.testing.tiny_gguf import build_tiny_gguf

    path = Path(a.work) / f"{kind}{'-small' if a.small else ''}.gguf"
    t0 = time.perf_counter()
    if not path.exists():
        build_tiny_gguf(path, model_spec(kind, a.small))
    return path, time.perf_counter() - t0


def localeval_run(model: Path, out: Path, cache: Path, gpu_layers: int, parallel: int) -> float:
    cmd = [sys.executable, "-m", "localeval.cli", "run", "example", "--judge", str(model),
           "-m", JUDGE_METRICS, "--sample", "3", "--no-judge-check", "--seed", "0",
           "--n-gpu-layers", str(gpu_layers), "--parallel", str(parallel),
           "--cache", str(cache), "-o", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          env={**os.environ, "HF_HUB_OFFLINE": "1", "NO_COLOR": "1"})
    if proc.returncode != 0:
        raise RuntimeError(f"localeval run exited {proc.returncode}: {proc.stderr[-2000:]}")
    return time.perf_counter() - t0


def calls_of(cache: Path) -> dict[str, tuple[str, str]]:
    import sqlite3

    con = sqlite3.connect(cache)
    try:
        out = {}
        for key, step, value in con.execute("SELECT key, step, value FROM judge_calls"):
            v = json.loads(value)
            out[key] = (step, v.get("raw") if "raw" in v else v.get("error", ""))
        return out
    finally:
        con.close()


def first_difference(x: str, y: str) -> int:
    return next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))


def compare(one: dict[str, Any], two: dict[str, Any]) -> tuple[int, list[str], list[Any]]:
    """Calls both sides made, the keys whose outputs differ, the (sample, metric) scores that do."""
    shared = sorted(set(one["calls"]) & set(two["calls"]))
    differ = [k for k in shared if one["calls"][k][1] != two["calls"][k][1]]
    scores = [(r1.get("id"), m) for r1, r2 in zip(one["rows"], two["rows"])
              for m in JUDGE_METRICS.split(",")
              if (r1.get("scores") or {}).get(m) != (r2.get("scores") or {}).get(m)]
    return len(shared), differ, scores


def stage_judge(a: argparse.Namespace) -> dict[str, Any]:
    from localeval.results import read_record

    model, built = build_model(a, "135m")
    gpu_layers = -1 if a.device == "cuda" else 0
    work = Path(a.work) / "judge"
    sides: dict[str, Any] = {}
    # One sequence on each device isolates the device; the GPU's default of 8
    # sequences (--parallel) is then compared with its one sequence.
    for name, layers, parallel in (("cpu", 0, 1), ("gpu", gpu_layers, 1),
                                   ("gpu-parallel8", gpu_layers, 8)):
        cache = work / f"{name}.sqlite"
        wall = localeval_run(model, work / name, cache, layers, parallel)
        rec = read_record(work / name)
        usage = rec.summary.get("usage") or {}
        means = {m: e.get("mean") for m, e in (rec.summary.get("metrics") or {}).items()}
        rows = [json.loads(line) for line in (work / name / "results.jsonl").open(encoding="utf-8")]
        sides[name] = {"wall": wall, "usage": usage, "means": means, "rows": rows,
                       "calls": calls_of(cache)}
    out_rows = [row("model", "SmolLM2-135M shape, random f16 weights",
                    note=f"built in {built:.1f} s; example --sample 3, {JUDGE_METRICS}")]
    for name, side in sides.items():
        u = side["usage"]
        secs = float(u.get("seconds") or 0)
        gen = int(u.get("generated_tokens") or 0)
        out_rows += [row(f"{name}: judge seconds", secs, "s", f"wall {side['wall']:.1f} s"),
                     row(f"{name}: generated tokens/s", gen / secs if secs else 0.0, "tok/s",
                         f"{gen} tokens, {u.get('calls')} calls")]
    for m in JUDGE_METRICS.split(","):
        vals = [side["means"].get(m) for side in sides.values()]
        out_rows.append(row(f"{m} mean " + " / ".join(sides), " / ".join(map(str, vals)),
                            note="equal" if len(set(map(str, vals))) == 1 else "differ"))
    detail: dict[str, Any] = {}
    for one, two in (("cpu", "gpu"), ("gpu", "gpu-parallel8")):
        n, differ, scores = compare(sides[one], sides[two])
        out_rows += [row(f"{one} vs {two}: judge calls compared", n, note="joined by cache key"),
                     row(f"{one} vs {two}: calls with a different output", len(differ)),
                     row(f"{one} vs {two}: sample scores that differ", len(scores),
                         note=", ".join(f"{i}:{m}" for i, m in scores[:8]))]
        c1, c2 = sides[one]["calls"], sides[two]["calls"]
        detail[f"{one} vs {two}"] = [
            {"step": c1[k][0], "first_difference_at_char": first_difference(c1[k][1], c2[k][1]),
             one: c1[k][1][:300], two: c2[k][1][:300]} for k in differ[:12]]
    return {"title": "The example judged on the CPU and on the GPU", "rows": out_rows,
            "differing_calls": detail}


# -- trace: logits of the two backends ------------------------------------------------
def stage_trace(a: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from localeval.dataset import load_dataset
    from localeval.judge.llama.compat import load_llama

    model, _ = build_model(a, "135m")
    samples = load_dataset(str(ROOT / "localeval" / "data" / "example.jsonl")).samples[:6]
    llms = {name: load_llama(False, model_path=str(model), n_gpu_layers=layers, n_ctx=2048,
                             logits_all=True, verbose=False, seed=0)
            for name, layers in (("cpu", 0), ("gpu", -1 if a.device == "cuda" else 0))}
    rows, steps = [], 48
    for s in samples:
        prompt = (f"Contexts: {' '.join(s.contexts or [])}\nQuestion: {s.question}\n"
                  f"Answer: {s.answer}\nList the statements of the answer as JSON:")
        toks = llms["cpu"].tokenize(prompt.encode("utf-8"))
        picks: dict[str, list[int]] = {}
        logits: dict[str, list[Any]] = {}
        for name, llm in llms.items():
            llm.reset()
            llm.eval(toks)
            seq, lg = [], []
            for _ in range(steps):
                row_logits = np.array(llm.scores[llm.n_tokens - 1], dtype=np.float64)
                tok = int(row_logits.argmax())
                seq.append(tok)
                lg.append(row_logits)
                llm.eval([tok])
            picks[name], logits[name] = seq, lg
        same = next((i for i, (p, q) in enumerate(zip(picks["cpu"], picks["gpu"])) if p != q), None)
        k = same if same is not None else steps - 1
        diff = float(max(np.abs(logits["cpu"][i] - logits["gpu"][i]).max() for i in range(k + 1)))
        note = "the same tokens"
        if same is not None:
            c, g = picks["cpu"][same], picks["gpu"][same]
            m_cpu = logits["cpu"][same][c] - logits["cpu"][same][g]
            m_gpu = logits["gpu"][same][g] - logits["gpu"][same][c]
            note = (f"first different pick at step {same}: cpu prefers its token by {m_cpu:.2e}, "
                    f"gpu its own by {m_gpu:.2e}")
        rows.append(row(f"sample {s.id}: largest logit difference", diff, "", note))
    return {"title": "Why calls differ: llama.cpp's logits on the CPU and the GPU", "rows": rows}


# -- decode and batched: the 7B shape -------------------------------------------------
def stage_decode(a: argparse.Namespace) -> dict[str, Any]:
    from bench_parallel import llama_batched_tg, llama_pp

    from localeval.judge import LlamaJudge

    model, built = build_model(a, "7b")
    judge = LlamaJudge(model, n_ctx=4096, parallel=1, n_gpu_layers=-1 if a.device == "cuda" else 0)
    try:
        toks = list(range(10, 522))
        pp = llama_pp(judge, toks, repeats=3)
        tg = llama_batched_tg(judge, 1, toks[:1], steps=128)
    finally:
        judge.close()
    size = model.stat().st_size / 2**30
    return {"title": "LLaMA-2-7B shape, Q4_0: llama.cpp's own speeds", "rows": [
        row("model", f"{size:.2f} GiB", note=f"random Q4_0 blocks, built in {built:.0f} s"),
        row("pp512", pp, "tok/s", "prompt of 512 tokens"),
        row("tg128", tg, "tok/s", "128 tokens, one sequence")]}


def stage_batched(a: argparse.Namespace) -> dict[str, Any]:
    import bench_parallel

    model, _ = build_model(a, "7b")
    raw = Path(a.work) / "batched.json"
    levels = "1,2,4" if a.small else "1,4,8,16"
    argv = ["--model", str(model), "--samples", "4" if a.small else "16", "--parallel", levels,
            "--parallel-metrics", "faithfulness,context_precision", "--quote-bias",
            "--json", str(raw)]
    rep = bench_parallel.main(argv)
    rows = [row(f"--parallel {r['parallel']}", r["wall_s"] / len(rep["samples"]), "s/sample",
                f"x{r['speedup_vs_n1']} of N=1; gen {r['gen_tokens_per_s']} tok/s; "
                f"llama.cpp tg(N) {r['tgN_tok_s']} tok/s; same scores as N=1: "
                f"{r['scores_identical_to_n1']}") for r in rep["rows"]]
    return {"title": "Batched judging, LLaMA-2-7B shape", "rows": rows, "raw": rep["rows"]}


# -- embeddings -----------------------------------------------------------------------
def stage_embed(a: argparse.Namespace) -> dict[str, Any]:
    import numpy as np

    from gpu.st_shape import build_minilm_shape
    from localeval.embed import SentenceTransformerEmbedder

    folder = build_minilm_shape(Path(a.work) / ("minilm-small" if a.small else "minilm"),
                                small=a.small)
    texts = [f"Document {i}: the policy number {i * 7} covers {i % 13} rooms and "
             f"{'東京の会議室' if i % 3 == 0 else 'the annual leave'} of team {i % 17}."
             for i in range(200 if a.small else 2000)]
    out, rows = {}, []
    for dev, fp16 in (("cpu", False), (a.device, False), (a.device, True)):
        emb = SentenceTransformerEmbedder(folder, device=dev, fp16=fp16, batch_size=64)
        emb.embed(texts[:64])  # warm-up
        t0 = time.perf_counter()
        vecs = np.asarray(emb.embed(texts), dtype=np.float64)
        secs = time.perf_counter() - t0
        out[(dev, fp16)] = vecs
        rows.append(row(f"{dev}{' fp16' if fp16 else ''}: texts/s", len(texts) / secs, "texts/s"))
    ref = out[("cpu", False)]
    for key in ((a.device, False), (a.device, True)):
        v = out[key]
        cos = (ref * v).sum(1) / (np.linalg.norm(ref, axis=1) * np.linalg.norm(v, axis=1))
        rows.append(row(f"{key[0]}{' fp16' if key[1] else ''} vs cpu: largest difference",
                        float(np.abs(ref - v).max()), "", f"lowest cosine {cos.min():.6f}"))
    return {"title": "Embeddings: MiniLM shape, CUDA against CPU", "rows": rows}


def stage_checkers(a: argparse.Namespace) -> dict[str, Any]:
    """``bench_checkers.py`` on the device, in float32 and then bfloat16 (the same folders)."""
    script = ROOT / "scripts" / "bench_checkers.py"
    if not script.exists():
        return {"title": "Checkers", "rows": [row("checkers", "not in this checkout")]}
    rows, raw = [], {}
    for dtype in ("float32",) if a.small or a.device == "cpu" else ("float32", "bfloat16"):
        out = Path(a.work) / f"checkers-{dtype}.json"
        cmd = [sys.executable, str(script), "--device", a.device, "--dtype", dtype,
               "--skip-judge", "--keep", str(Path(a.work) / "checkers"), "--out", str(out)]
        cmd += (["--models", "roberta-base", "--samples", "1", "--pairs", "8"] if a.small
                else ["--pairs", "256", "--batch-size", "32", "--samples", "3"])
        subprocess.run(cmd, check=True, timeout=a.timeout)
        raw[dtype] = json.loads(out.read_text(encoding="utf-8"))
        for c in raw[dtype]["checkers"]:
            rows.append(row(f"{c['stands_for']} ({c['params_m']}M), {dtype}",
                            c["sentences_per_s"], "sentences/s",
                            f"{c['seconds_per_sample']} s/sample; {c['pairs']} pairs of "
                            f"~{c['mean_tokens_per_pair']} tokens; load {c['load_s']} s"))
    return {"title": "Checkers on the device (random weights of the real shapes)", "rows": rows,
            "raw": raw}


STAGES: dict[str, Callable[[argparse.Namespace], dict[str, Any]]] = {
    "env": stage_env, "judge": stage_judge, "trace": stage_trace, "decode": stage_decode,
    "batched": stage_batched, "embed": stage_embed, "checkers": stage_checkers}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("stage", choices=sorted(STAGES))
    ap.add_argument("--work", required=True)
    ap.add_argument("--parts", required=True)
    ap.add_argument("--out", help="write gpu_figures.json/.md here after the stage")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--small", action="store_true")
    ap.add_argument("--timeout", type=int, default=300)
    a = ap.parse_args(argv)
    Path(a.work).mkdir(parents=True, exist_ok=True)
    Path(a.parts).mkdir(parents=True, exist_ok=True)
    t0 = time.perf_counter()
    try:
        part = STAGES[a.stage](a)
        rc = 0
    except Exception as e:  # a stage's failure is a figure of the check, not its end
        import traceback

        traceback.print_exc()
        part = {"title": a.stage, "error": f"{e.__class__.__name__}: {e}"[:2000], "rows": []}
        rc = 1
    part.update(stage=a.stage, seconds=round(time.perf_counter() - t0, 1))
    (Path(a.parts) / f"{a.stage}.json").write_text(
        json.dumps(part, indent=1, ensure_ascii=False, default=str), encoding="utf-8")
    if a.out:
        figures.write(Path(a.parts), Path(a.out))
    print(f"stage {a.stage}: {'ok' if rc == 0 else 'FAILED'} in {part['seconds']} s", flush=True)
    return rc


if __name__ == "__main__":
    sys.exit(main())
