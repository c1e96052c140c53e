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

import json
from typing import Any, Sequence

from localeval.cache import text_key
from localeval.lang import normalised_pieces
from localeval.types import MultiTurnSample, Sample

__all__ = ["CONTENT_FIELDS", "HASH_FIELDS", "content_hash", "content_fields", "sample_content"]

#: The hashes a results line may carry: of the contexts, the answer, and a
#: conversation's messages (its turns and tool calls: what a conversation is).
HASH_FIELDS = ("contexts_hash", "answer_hash", "conversation_hash")
#: The content keys of a results line, beside ``id``: question text, then hashes.
CONTENT_FIELDS = ("question", *HASH_FIELDS)
# 16 hex digits (64 bits): collisions among the samples of one data set are
# not a concern, and the lines stay short.
_HASH_CHARS = 16


def content_hash(texts: Sequence[str]) -> str:
    """The hash of a list of texts (contexts) or of one text (``[answer]``), order kept.

    Uses the cache's ``text_key`` (the one sha256-of-texts in localeval) over
    the normalised texts.
    """
    return text_key(*(normalised_pieces(t) for t in texts))[:_HASH_CHARS]


def content_fields(question: Any, contexts: Any, answer: Any,
                   messages: Any = None) -> dict[str, str]:
    """``{"question", "contexts_hash", "answer_hash", "conversation_hash"}``, each only
    when the sample has it (``messages``: a conversation's, as ``Message`` objects or
    their ``to_dict()`` mappings)."""
    out: dict[str, str] = {}
    if isinstance(messages, (list, tuple)) and messages:
        out["conversation_hash"] = content_hash([_turn_text(m) for m in messages])
    if isinstance(question, str):
        out["question"] = question
    if isinstance(contexts, (list, tuple)) and all(isinstance(c, str) for c in contexts):
        out["contexts_hash"] = content_hash(list(contexts))
    if isinstance(answer, str):
        out["answer_hash"] = content_hash([answer])
    return out


def _turn_text(message: Any) -> str:
    """One turn as JSON text, keys sorted: role, text and calls (name and arguments).

    Call ids are left out (OpenAI's data has them, ragas's has not, and no metric
    reads them), so the same conversation read from either shape hashes the same.
    """
    m = message.to_dict() if hasattr(message, "to_dict") else dict(message)
    calls = [{"name": c.get("name"), "args": c.get("args")} for c in m.get("tool_calls") or []
             if isinstance(c, dict)]
    turn = {"role": m.get("role"), "content": m.get("content") or "", "tool_calls": calls}
    return json.dumps(turn, sort_keys=True, ensure_ascii=False, default=str)


def sample_content(sample: Sample) -> dict[str, str]:
    """``content_fields`` of a sample, a conversation's messages included: what a results
    line records, and what a resumed run's lines are checked against."""
    messages = sample.messages if isinstance(sample, MultiTurnSample) else None
    return content_fields(sample.question, sample.contexts, sample.answer, messages)
