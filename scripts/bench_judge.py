"""Benchmark the llama.cpp judge on a Qwen2-0.5B-shaped random-weight GGUF.

Prints:
  1. generation speed, tokens/s: unconstrained vs grammar-constrained, for
     localeval's loop (grammar checked on the picked token first, as upstream
     llama.cpp does; and the full-vocabulary pass, as llama-cpp-python does)
     and for llama-cpp-python's own create_completion(grammar=...);
  2. one sample's judge calls (shared system + sample block, then each
     step's instruction) with and without KV prefix reuse.

Random weights: the numbers measure speed, never judgement quality.

    .venv/bin/python scripts/bench_judge.py [--model PATH] [--threads N] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from localeval.judge import JudgeRequest  # noqa: E402
from localeval.judge import schema_to_gbnf, stock_gbnf  # noqa: E402
from localeval.judge import LlamaJudge  # noqa: E402
from localeval.testing import TinyModelSpec, build_tiny_gguf  # noqa: E402


class Reasoned(BaseModel):
    """A long-ish constrained output: a reason string then a verdict."""

    reason: str = Field(max_length=200)
    verdict: Literal[0, 1]


class Rating(BaseModel):
    rating: Literal[0, 1, 2]


SYSTEM = ("You are a careful, impartial judge of retrieval-augmented answers. Read the sample, "
          "follow the step's instruction exactly and answer only with JSON that matches the "
          "schema you are given. Do not add commentary.")

SAMPLE = """## Sample
Question: When was the Eiffel Tower built, and how tall is it?
Context 1: The Eiffel Tower is a wrought-iron lattice tower on the Champ de Mars in Paris,
France. It is named after the engineer Gustave Eiffel, whose company designed and built the
tower from 1887 to 1889 as the centrepiece of the 1889 World's Fair. Although initially
criticised by some of France's leading artists and intellectuals for its design, it has
since become a global cultural icon of France and one of the most recognisable structures
in the world.
Context 2: The tower is 330 metres tall, about the same height as an 81-storey building,
and the tallest structure in Paris. Its base is square, measuring 125 metres on each side.
During its construction, the Eiffel Tower surpassed the Washington Monument to become the
tallest human-made structure in the world, a title it held for 41 years.
Context 3: Mount Fuji is the highest mountain in Japan, at 3,776 metres. It is an active
stratovolcano that last erupted in 1707.
Answer: The Eiffel Tower was built between 1887 and 1889 and is 330 metres tall.
Reference: Built from 1887 to 1889, the Eiffel Tower stands 330 metres high.
"""

STEPS = {
    "statements": "Break the answer into short, self-contained statements without pronouns.",
    "faithfulness": "For each statement decide whether it can be inferred from the contexts.",
    "answer_relevancy": "Write a question that the answer answers; flag noncommittal answers.",
    "context_precision_1": "Was context 1 useful in arriving at the reference answer?",
    "context_precision_2": "Was context 2 useful in arriving at the reference answer?",
    "context_precision_3": "Was context 3 useful in arriving at the reference answer?",
    "context_recall": "Classify each reference sentence as attributable to the contexts or not.",
    "nv_context_relevance": "Rate how relevant the contexts are to the question: 0, 1 or 2.",
}


def messages(step: str) -> tuple[dict[str, str], ...]:
    return ({"role": "system", "content": SYSTEM},
            {"role": "user", "content": SAMPLE + "\n## Step\n" + STEPS[step]})


def interleaved(rows, repeats: int) -> dict[str, tuple[float, int]]:
    """Median tokens/s per row, rows interleaved so load changes hit all alike."""
    rates: dict[str, list[float]] = {label: [] for label, _ in rows}
    counts: dict[str, int] = {}
    for _ in range(repeats):
        for label, fn in rows:
            t0 = time.perf_counter()
            n = fn()
            rates[label].append(n / (time.perf_counter() - t0))
            counts[label] = n
    return {label: (statistics.median(r), counts[label]) for label, r in rates.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--model", help="an existing GGUF (default: build the Qwen2-0.5B shape)")
    ap.add_argument("--keep", help="directory to build/keep the model in (reused if present)")
    ap.add_argument("--threads", type=int, default=None, help="generation threads")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--tokens", type=int, default=96, help="unconstrained tokens per run")
    args = ap.parse_args()

    tmp = None
    if args.model:
        path = Path(args.model)
    else:
        d = Path(args.keep) if args.keep else Path(tmp := tempfile.mkdtemp(prefix="bench-judge-"))
        path = d / "qwen2-05b-shape-q8_0.gguf"
        if not path.exists():
            t0 = time.perf_counter()
            build_tiny_gguf(path, TinyModelSpec.qwen2_05b())
            print(f"built {path.name}: {path.stat().st_size / 2**20:.0f} MiB in "
                  f"{time.perf_counter() - t0:.1f} s")

    t0 = time.perf_counter()
    judge = LlamaJudge(path, n_threads=args.threads)
    print(f"loaded in {time.perf_counter() - t0:.2f} s: n_ctx={judge.n_ctx} "
          f"threads={judge.n_threads}/{judge.n_threads_batch} vocab={judge.n_vocab} "
          f"gpu_layers={judge.n_gpu_layers}")

    prompt = judge.prompt_tokens(messages("faithfulness"))
    judge.generate(prompt, None, 4)  # warm up (first decode allocates)
    results: dict[str, float] = {}

    # -- 1. generation speed -------------------------------------------------------
    slow_path: dict[str, tuple[int, int]] = {}

    def ours(gbnf: str | None, budget: int, mode: str) -> int:
        judge.grammar_mode = mode
        g = judge.generate(prompt, gbnf, budget)
        slow_path[mode if gbnf else "none"] = (g.grammar_rejections, len(g.tokens) + 1)
        return len(g.tokens)

    strict, stock = schema_to_gbnf(Reasoned), stock_gbnf(Reasoned)
    rows = [
        ("localeval loop, unconstrained", lambda: ours(None, args.tokens, "check-first")),
        ("localeval loop, strict grammar, check-first", lambda: ours(strict, 400, "check-first")),
        ("localeval loop, strict grammar, full pass", lambda: ours(strict, 400, "full")),
    ]
    import llama_cpp

    llm = judge._llm

    def stock_completion(grammar) -> int:
        r = llm.create_completion(prompt, max_tokens=400 if grammar else args.tokens,
                                  temperature=0.0, grammar=grammar)
        return int(r["usage"]["completion_tokens"])

    rows += [
        ("llama-cpp-python create_completion, unconstrained", lambda: stock_completion(None)),
        ("llama-cpp-python create_completion, stock grammar",
         lambda: stock_completion(llama_cpp.LlamaGrammar.from_string(stock))),
    ]
    print(f"\n1. generation speed (median of {args.repeats}; prompt {len(prompt)} tokens "
          "cached)")
    for label, (rate, n) in interleaved(rows, args.repeats).items():
        results[label] = rate
        print(f"   {label:55s} {rate:7.1f} tok/s  ({n} tokens)")
    judge.grammar_mode = "check-first"
    for mode, (slow, picks) in slow_path.items():
        print(f"   first choice refused (slow path), {mode}: {slow} of {picks} picks")
    base = results["localeval loop, unconstrained"]
    stock = (results["llama-cpp-python create_completion, stock grammar"]
             / results["llama-cpp-python create_completion, unconstrained"])
    print(f"   constrained/unconstrained: check-first "
          f"{results['localeval loop, strict grammar, check-first'] / base:.0%}, "
          f"full pass {results['localeval loop, strict grammar, full pass'] / base:.0%}; "
          f"llama-cpp-python stock {stock:.0%}")

    # -- 2. one sample's calls, with and without prefix reuse ---------------------------------
    print("\n2. one sample's judge calls (Rating schema; shared system + sample block)")
    for reuse in (True, False):
        judge._llm.reset()
        total = {"prompt": 0, "reused": 0, "gen": 0}
        t0 = time.perf_counter()
        for step in STEPS:
            if not reuse:
                judge._llm.reset()
            r = judge.ask(JudgeRequest(step=step, messages=messages(step), schema=Rating))
            total["prompt"] += r.usage.prompt_tokens
            total["reused"] += r.usage.reused_tokens
            total["gen"] += r.usage.generated_tokens
        dt = time.perf_counter() - t0
        print(f"   prefix reuse {'on ' if reuse else 'off'}: {len(STEPS)} calls, "
              f"{total['prompt']} prompt tokens, {total['reused']} reused, "
              f"{total['prompt'] - total['reused']} evaluated, {total['gen']} generated: "
              f"{dt:.2f} s")
    print("\n" + json.dumps({k: round(v, 1) for k, v in results.items()}))
    judge.close()
    if tmp:
        import shutil

        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
