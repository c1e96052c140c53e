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

The line also keeps a hash of each other input a metric may read (``INPUT_FIELDS``:
reference, reference contexts, the ids, a conversation's references) under
``input_hashes``, so that ``explain`` and a resumed run can tell a sample changed in any
of them (``changed_content``); ``metadata`` columns are left out, as no judged metric
reads them.
"""

from __future__ import annotations

import json
from typing import Any, Mapping, Sequence

from localeval.cache import text_key
from localeval.lang import normalised_pieces
from localeval.types import MultiTurnSample, Sample

__all__ = ["CONTENT_FIELDS", "HASH_FIELDS", "INPUT_FIELDS", "changed_content", "content_hash",
           "content_fields", "sample_content"]

#: The hashes a results line may carry: of the contexts, the answer, and a
#: conversation's messages (its turns and tool calls: what a conversation is).
HASH_FIELDS = ("contexts_hash", "answer_hash", "conversation_hash")
#: The sample's other inputs a metric may read (reference, its contexts, the ids, a
#: conversation's expected calls and topics): a results line keeps one hash of each.
INPUT_FIELDS = ("reference", "reference_contexts", "retrieved_ids", "relevant_ids",
                "reference_tool_calls", "reference_topics", "tools", "possible_answers",
                "reference_trajectory")
#: The key of those hashes in a results line (field -> hash; absent in older lines).
_INPUTS_KEY = "input_hashes"
#: The content keys of a results line, beside ``id``: question text, then hashes.
CONTENT_FIELDS = ("question", *HASH_FIELDS, _INPUTS_KEY)
#: The sample field each top-level content key records.
_FIELD_OF = {"question": "question", "contexts_hash": "contexts", "answer_hash": "answer",
             "conversation_hash": "messages"}
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


def sample_content(sample: Sample) -> dict[str, Any]:
    """``content_fields`` of a sample, a conversation's messages included, and the hashes
    of its other inputs (``input_hashes``): what a results line records, and what a
    resumed run's lines and ``explain``'s samples are checked against."""
    messages = sample.messages if isinstance(sample, MultiTurnSample) else None
    out: dict[str, Any] = content_fields(sample.question, sample.contexts, sample.answer,
                                         messages)
    out[_INPUTS_KEY] = {f: _input_hash(f, v) for f in INPUT_FIELDS
                        if (v := getattr(sample, f, None)) is not None}
    return out


def _input_hash(name: str, value: Any) -> str:
    """The hash of one other input: texts as ``content_hash`` (normalised), ids and tool
    calls exactly (``Doc1`` and ``doc1`` are other documents). Ids are joined, not
    JSON-encoded: a retrieval run writes a million lines, and ``json.dumps`` of a
    ranking costs ten times the join."""
    if name == "reference":
        return content_hash([value])
    if name in ("reference_contexts", "reference_topics"):
        return content_hash(list(value))
    if name == "retrieved_ids":
        text = "\x00".join(value)
    elif name == "relevant_ids":
        text = "\x00".join(f"{k}\x1f{g!r}" for k, g in sorted(value.items()))
    elif name in ("tools", "possible_answers", "reference_trajectory"):  # JSON as written
        text = json.dumps(value, sort_keys=True, default=str)
    else:  # reference_tool_calls; call ids left out, as in ``_turn_text``
        text = json.dumps([{"name": c.name, "args": c.args} for c in value], sort_keys=True,
                          default=str)
    return text_key(text)[:_HASH_CHARS]


def changed_content(record: Mapping[str, Any], sample: Sample) -> tuple[list[str], list[str]]:
    """(changed, unchecked): the fields in which ``sample`` differs from the sample a
    results line recorded, and the fields the line keeps no record of (a line written
    before ``input_hashes`` existed), by the sample's field names.

    The one rule for "is this the sample the run scored": a field present on one side
    only counts as changed, except where an older line could not have recorded it.
    """
    now = sample_content(sample)
    full = isinstance(record.get(_INPUTS_KEY), Mapping)  # a line that records every input
    was: Mapping[str, Any] = record[_INPUTS_KEY] if full else {}
    changed: list[str] = []
    unchecked: list[str] = []
    for key, name in _FIELD_OF.items():
        if key in record:
            if record[key] != now.get(key):
                changed.append(name)
        elif key in now:
            (changed if full else unchecked).append(name)
    mine = now[_INPUTS_KEY]
    for name in INPUT_FIELDS:
        if full:
            if was.get(name) != mine.get(name):
                changed.append(name)
        elif name in mine:
            unchecked.append(name)
    return changed, unchecked
