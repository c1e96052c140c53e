"""What a results line records of its sample's content, so that result sets can be aligned.

``localeval compare`` and ``validate`` pair the samples of two result sets by
id, then by content. A results line therefore carries the question text and
short hashes of the contexts and of the answer (not the texts themselves: a
results file is often shared where the corpus may not be). Readers of other
tools' exports (RAGAS, deepeval) compute the same hashes from their columns
with :func:`content_hash`, so a hash written here matches one computed there.

Texts are normalised with ``lang.normalise`` before hashing (NFKC, case and
white space folded), so a CSV round trip that turns ``\\n`` into ``\\r\\n``
or a full-width digit into an ASCII one does not break the match.
"""

from __future__ import annotations

from typing import Any, Sequence

from localeval.cache import text_key
from localeval.lang import normalised_pieces

__all__ = ["CONTENT_FIELDS", "content_hash", "content_fields"]

#: The content keys of a results line, beside ``id``: question text, then hashes.
CONTENT_FIELDS = ("question", "contexts_hash", "answer_hash")
# 16 hex digits (64 bits): collisions among the samples of one data set are
# not a concern, and the lines stay short.
_HASH_CHARS = 16


def content_hash(texts: Sequence[str]) -> str:
    """The hash of a list of texts (contexts) or of one text (``[answer]``), order kept.

    Uses the cache's ``text_key`` (the one sha256-of-texts in localeval) over
    the normalised texts.
    """
    return text_key(*(normalised_pieces(t) for t in texts))[:_HASH_CHARS]


def content_fields(question: Any, contexts: Any, answer: Any) -> dict[str, str]:
    """``{"question", "contexts_hash", "answer_hash"}``, each only when the sample has it."""
    out: dict[str, str] = {}
    if isinstance(question, str):
        out["question"] = question
    if isinstance(contexts, (list, tuple)) and all(isinstance(c, str) for c in contexts):
        out["contexts_hash"] = content_hash(list(contexts))
    if isinstance(answer, str):
        out["answer_hash"] = content_hash([answer])
    return out
