"""Test helpers shipped with the package, for localeval's tests and yours.

- ``ScriptedJudge``: answers judge steps from a script, to pin metric arithmetic.
- ``OracleJudge`` / ``RandomJudge``: rule-based judges that answer every step
  right / at random from the request's structure: the two ends the judge
  check (``localeval judge check``) must tell apart.
- ``HashEmbedder``: a deterministic embedder with no model, for unit tests.
- ``assert_scores``: metric thresholds as a pytest assertion (a CI gate; unscored
  samples fail it unless ``allow_unscored``; ``fail_if_unfit_judge``);
  ``assert_each``: every sample against the thresholds, failing with the ids,
  questions and working of those under them; ``rows`` / ``assert_row``: one
  test per dataset row with ``pytest.mark.parametrize`` (docs/ci-gates.md).
- ``build_tiny_gguf``: writes a real random-weight GGUF with a real BPE
  tokenizer, so tests run the real llama.cpp path without downloading anything.
- ``build_tiny_checker``: writes a random-weight checker folder of each family
  (RoBERTa, DeBERTa-v2, T5, HHEM, ModernBERT) with a trained tokenizer, for
  ``localeval.checker.load_checker``; the benchmark's real shapes too.
- ``headless_dom``: a page as headless Chromium shows it (DOM and console).
- ``assert_not_worse`` / ``assert_non_inferior`` / ``assert_not_preferred_base``:
  ``localeval diff``'s ``--fail-if-worse``, ``--require-not-worse`` and ``--pairwise
  --fail-if-preferred-base`` as assertions.
- ``metric_util`` (imported as a module): small helpers for metric tests.

Imports are lazy so that importing ``localeval.testing`` loads no model library.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "HashEmbedder": ".fake_embed",
    "SWAPPED": ".trial",
    "SWAPPED_MARK": ".trial",
    "OracleJudge": ".oracle",
    "RandomJudge": ".random_judge",
    "ScriptedJudge": ".scripted",
    "TinyModelSpec": ".tiny_gguf",
    "assert_each": ".assertions",
    "assert_row": ".per_row",
    "assert_not_worse": ".versions",
    "assert_non_inferior": ".versions",
    "assert_not_preferred_base": ".versions",
    "assert_scores": ".assertions",
    "build_tiny_gguf": ".tiny_gguf",
    "build_tiny_checker": ".tiny_checkers",
    "chromium_path": ".browser",
    "headless_dom": ".browser",
    "quote_bias": ".tiny_gguf",
    "rows": ".per_row",
    "trial_versions": ".trial",
    "unfit_judge": ".trial",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
