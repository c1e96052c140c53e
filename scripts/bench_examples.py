"""Where should a judge prompt's few-shot example go? Copy rate against prefix reuse.

A small judge copies the example into its answer. Moving the example changes
how often it does, and also what the KV cache can reuse: localeval's layout is
[system][sample][task + example], so every step of a sample reuses the sample.
This script measures four layouts on the same samples, steps and judge:

- ``after-sample``: the example inside the task, after the sample (localeval's layout);
- ``system``: the example appended to the system message (the task has none);
- ``before-sample``: the example first in the user message, then the sample and task;
- ``none``: no example at all (the grammar alone fixes the format).

For each: the share of judge calls whose output copies the example (the same
test ``Judging.ask`` applies), prompt tokens sent and evaluated after prefix
reuse, and seconds. Steps: the answer's statements, one faithfulness verdict
per answer sentence, and context_precision per context, back to back per
sample as the runner issues them.

    .venv/bin/python scripts/bench_examples.py --judge demo --samples 6
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from localeval.dataset import load_dataset  # noqa: E402
from localeval.judge import JudgeRequest, load_judge  # noqa: E402
from localeval.lang import split_sentences  # noqa: E402
from localeval.metrics.schemas import ContextVerdict, Statements, Verdicts, sized  # noqa: E402
from localeval.prompts import render, sample_language, system_text  # noqa: E402
from localeval.prompts.examples import copied_strings, example_lines, example_strings  # noqa: E402

LAYOUTS = ("after-sample", "system", "before-sample", "none")


def messages_for(layout: str, step: str, sample: Any, lang: str, **inputs: Any
                 ) -> tuple[list[dict[str, str]], frozenset[str], str, str]:
    """The messages of ``layout``, plus what the copy test needs."""
    with_ex = render(step, sample, lang=lang, examples=True, **inputs)[0][-1]["content"]
    without = render(step, sample, lang=lang, examples=False, **inputs)[0][-1]["content"]
    example = "\n".join(example_lines(with_ex, without))
    system = system_text()
    if layout == "after-sample":
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": with_ex}]
    elif layout == "system":
        msgs = [{"role": "system", "content": system + "\n\n" + example},
                {"role": "user", "content": without}]
    elif layout == "before-sample":
        msgs = [{"role": "system", "content": system},
                {"role": "user", "content": example + "\n\n" + without}]
    else:
        msgs = [{"role": "system", "content": system}, {"role": "user", "content": without}]
    return msgs, example_strings(with_ex, without), without, example


def run_layout(judge: Any, layout: str, samples: list[Any]) -> dict[str, Any]:
    calls = copied = 0
    sent = reused = generated = 0
    t0 = time.perf_counter()
    for s in samples:
        lang = sample_language(s, "auto")
        sentences = split_sentences(s.answer or "", lang)[:6] or [s.answer or ""]
        steps: list[tuple[str, Any, dict[str, Any]]] = [
            ("statements", Statements, {"target": "answer"}),
            ("faithfulness_verdicts", sized(Verdicts, len(sentences)), {"statements": sentences}),
        ] + [("context_precision", ContextVerdict, {"k": k}) for k in range(1, len(s.contexts or []) + 1)]
        for step, schema, inputs in steps:
            msgs, examples, without, example = messages_for(layout, step, s, lang, **inputs)
            reply = judge.ask(JudgeRequest(step=step, messages=tuple(msgs), schema=schema))
            calls += 1
            copied += bool(copied_strings(reply.output, examples, without, example))
            sent += reply.usage.prompt_tokens
            reused += reply.usage.reused_tokens
            generated += reply.usage.generated_tokens
    return {"layout": layout, "calls": calls, "copied": copied,
            "copy_rate": round(copied / calls, 3) if calls else 0.0,
            "prompt_tokens": sent, "evaluated_tokens": sent - reused,
            "generated_tokens": generated, "seconds": round(time.perf_counter() - t0, 1)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--judge", default="demo", help="GGUF path or manifest name (default: demo)")
    ap.add_argument("--data", default=str(ROOT / "localeval" / "data" / "example.jsonl"))
    ap.add_argument("--samples", type=int, default=6,
                    help="samples taken alternately from the English and Japanese ones")
    ap.add_argument("--layouts", default=",".join(LAYOUTS))
    ap.add_argument("--json", help="also write the table as JSON here")
    args = ap.parse_args(argv)
    ds = load_dataset(args.data)
    en = [s for s in ds.samples if not s.id.startswith("ja")]
    ja = [s for s in ds.samples if s.id.startswith("ja")]
    picked = [x for pair in zip(en, ja) for x in pair][: args.samples]
    judge = load_judge(args.judge)
    rows = []
    for layout in args.layouts.split(","):
        row = run_layout(judge, layout, picked)
        rows.append(row)
        print(f"{layout:14s} calls {row['calls']:3d}  copied {row['copied']:3d} "
              f"({100 * row['copy_rate']:.0f}%)  prompt {row['prompt_tokens']:6d}  "
              f"evaluated {row['evaluated_tokens']:6d}  generated {row['generated_tokens']:5d}  "
              f"{row['seconds']:6.1f} s", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps({"judge": judge.name, "samples": [s.id for s in picked],
                                               "layouts": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
