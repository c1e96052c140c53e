"""Judges: the protocol, the in-process llama.cpp judge and the HTTP judge.

``base`` is the protocol metrics use; ``llama/`` (in-process) and ``http``
(with ``pool`` over replicas) are the generative backends, which share ``grammar``
(output constraints) and ``parse`` (reading a reply); ``checker_judge`` is a
checker model answering faithfulness's steps (docs/checkers.md); ``cached`` wraps any
judge in the run cache and ``load`` is the registry of backends that builds
one from a ``--judge`` value.

The implementations are imported lazily so that importing the protocol (as
every metric does) loads neither numpy-heavy judge code nor llama_cpp.
"""

from __future__ import annotations

from localeval.lazy import lazy_face

_WHERE = {
    "Judge": ".base", "JudgeBackend": ".base", "declared": ".base", "JudgeReply": ".base",
    "JudgeRequest": ".base", "Message": ".base", "Usage": "localeval.types",
    "LlamaJudge": ".llama.judge",
    "HttpJudge": ".http",
    "JudgePool": ".pool",
    "CachedJudge": ".cached", "with_cache": ".cached",
    "load_judge": ".load", "register_judge_backend": ".load", "unregister_judge_backend": ".load",
    "CheckerJudge": ".checker_judge", "checker_spec": ".checker_judge",
    "is_checker_spec": ".checker_judge", "CHECKER_METRICS": ".checker_judge",
    "CHECKER_STEPS": ".checker_judge", "read_span_reason": ".checker_judge",
    "schema_to_gbnf": ".grammar",
    "stock_gbnf": ".grammar",
    "max_tokens_for": ".grammar",
    "quantize_q8_0": ".llama.compat",  # for testing/tiny_gguf.py: llama_cpp stays behind the fence
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
