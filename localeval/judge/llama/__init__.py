"""The in-process judge: a GGUF model run by llama.cpp (llama-cpp-python).

``LlamaJudge`` uses ``llama_cpp.Llama`` for what it does well (loading,
tokenising, batched prompt evaluation, keeping the KV cache of the last
prompt) and runs its own small token loop on top: for speed under a grammar,
for strictness the grammar engine lacks (no control tokens, no NUL, only
valid UTF-8), for verdict probabilities without ``logits_all``, and for exact
accounting of prompt tokens reused from the KV cache. The judge is composed of
objects with small typed interfaces, each handed what it uses, one per module:

- ``judge``: ``LlamaJudge``, the Judge protocol, identity and the retry on truncation;
  it builds the parts below and wires them
- ``compat``: the only module that touches llama-cpp-python's private and low-level
  parts (C functions, ctypes arrays, ``Llama._ctx``...); checks the installed version
- ``model``: ``ModelHandle``, the loaded ``Llama``, its vocabulary pieces, EOG mask,
  byte index and tokeniser
- ``chat``: ``ChatTemplate``, chat templates and prompt tokenisation
- ``sampler``: ``Sampler`` (the constrained pick) and ``Decoding`` (one sequence's step)
- ``grammar_filter`` and ``byte_index``: asking the grammar which tokens it accepts, cheaply
- ``utf8``: the strict UTF-8 prefix automaton
- ``verdict``: ``VerdictReader``, probabilities of a verdict field's allowed values
- ``decoder``: the ``Decoder`` protocol and ``SequentialDecoder`` (one call at a time)
- ``batch``: ``BatchEngine``, many calls decoded together (``parallel=N``), one
  ``llama_decode`` per step
- ``slots``: the batch engine's units: a call (``Job``), a KV sequence (``Slot``), the
  table that admits calls (``SlotTable``), prefix length
- ``decode_plan``: the batch engine's counters and the padding of generation decodes
- ``cpu``: core count and the default number of sequences decoded together
- ``drafting``: one generation's prompt-lookup guesses, tied to its ``Decoding``;
  ``ngram`` (``NgramDrafter``, the guesses), ``verify`` (the verification walk),
  ``output_memory`` (``OutputMemory``, guesses from earlier outputs) and ``governor``
  (``DraftGovernor``, the guesses a step may carry and ``draft="auto"``; ``DraftStats``)

Everything the model produces is decoded strictly as UTF-8, parsed with
``json.loads`` and validated by the step's pydantic model
(``localeval.judge.parse``, shared with the HTTP judge).
"""

from __future__ import annotations

import os

from localeval.judge.llama.cxx_runtime import preload_cxx_runtime
from localeval.lazy import lazy_face

# llama.cpp's CPU backend syncs its OpenMP (libgomp) threads several times per
# token. libgomp's idle threads spin 300,000 times before sleeping: 3x faster
# than sleeping at once when the process has the cores to itself, but 60x and
# worse slower when other processes want them (a spinning thread holds the core
# the working one needs). A short spin keeps the first and avoids the second
# (scripts/bench_openmp.py; docs/judge.md). libgomp reads this when it is loaded,
# at `import llama_cpp`, which only this package does; set here (not in the judge
# protocol's face, which every metric imports) so that a process that never builds
# an in-process judge keeps its environment as it was. A user's setting wins.
# Worker processes wait passively (run/workers.py).
os.environ.setdefault("GOMP_SPINCOUNT", "3000")
# Before llama_cpp too: a CUDA build and torch in one process need one C++ runtime.
preload_cxx_runtime()

_WHERE = {
    "LlamaJudge": ".judge",
    "Generation": ".sampler",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
