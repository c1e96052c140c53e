"""The dataset's version: a content hash of the loaded samples, the same for the same rows.

A run's numbers belong to the data they were computed on. The file's bytes are
the wrong thing to hash: the same rows as CSV, JSONL, Parquet or a DataFrame,
in any order, with other column names (``response`` or ``answer``) or extra
metadata columns, are the same evaluation. So the hash is taken from what
``load_dataset`` gives, the validated ``Sample`` fields the metrics read, and
it is independent of the row order.

What is hashed, exactly (version tag ``localeval-data-1``):

1. Each sample is written as two canonical JSON texts (``json.dumps`` with
   ``sort_keys=True``, ``ensure_ascii=False``, separators ``","`` and ``":"``),
   each an object of the sample's fields that are set (a field that is None is
   left out; an empty string or list is kept, as the metrics tell the two apart):

   - the *test* part: ``question``, ``reference``, ``reference_contexts``,
     ``relevant_ids`` (what the pipeline is asked and what it should give);
   - the *output* part: ``answer``, ``contexts``, ``retrieved_ids`` (what the
     pipeline gave).

   A conversation (``MultiTurnSample``) adds ``reference_tool_calls``,
   ``reference_topics``, ``tools``, ``possible_answers``, ``reference_trajectory`` (each
   as the data wrote it, when given) and ``user_turns`` (the texts of its user messages: what
   the assistant was asked) to its test part and ``messages`` to its output part,
   each message and call as its ``to_dict()`` writes it; single-turn samples have
   none of these, so their digests are what they were.

   Lists keep their order (a ranking's order is what retrieval metrics score);
   ``relevant_ids`` is a mapping id -> grade (floats, as loading makes them), its
   keys sorted by the JSON writer.
2. A row's digest is ``cache.text_key(test, output)`` (the one sha256-of-texts
   in localeval: each text followed by a NUL byte) and its test digest
   ``cache.text_key(test)``.
3. The digests are sorted, so row order does not matter (a repeated row counts
   twice), and ``content`` is ``text_key("localeval-data-1", *sorted row digests)``;
   ``testset`` is the same over the test digests.

Not hashed: sample ids (a record without one gets its position, which a
shuffle changes, and no metric reads it), metadata columns, and where the data
came from. ``content`` changes with any cell a metric reads: it is the
dataset's version, which a run's folder is kept by. ``testset`` stays the same
across versions of a pipeline run on the same questions and references: it is
what ``localeval diff`` checks, and what groups runs over time.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from localeval.cache import text_key
from localeval.types import MultiTurnSample, Sample

__all__ = ["DataVersion", "data_version", "TEST_FIELDS", "OUTPUT_FIELDS"]

#: Fields that define the test: the same across versions of a pipeline.
TEST_FIELDS = ("question", "reference", "reference_contexts", "relevant_ids",
               "reference_tool_calls", "reference_topics", "tools", "possible_answers",
               "reference_trajectory")
#: Fields the pipeline produces.
OUTPUT_FIELDS = ("answer", "contexts", "retrieved_ids", "messages")
_TAG = "localeval-data-1"


@dataclass(frozen=True)
class DataVersion:
    """The dataset's content hash, its test-set hash (sha256 hex) and its row count."""

    content: str
    testset: str
    rows: int

    def signature_fields(self) -> dict[str, Any]:
        """The keys a run's signature records (``report.signature``)."""
        return {"dataset_hash": self.content, "testset_hash": self.testset,
                "dataset_rows": self.rows}


def data_version(samples: Iterable[Sample]) -> DataVersion:
    """The ``DataVersion`` of ``samples`` (see the module docstring for what is hashed)."""
    rows: list[str] = []
    tests: list[str] = []
    for s in samples:
        test, output = _part(s, TEST_FIELDS), _part(s, OUTPUT_FIELDS)
        rows.append(text_key(test, output))
        tests.append(text_key(test))
    rows.sort()
    tests.sort()
    return DataVersion(text_key(_TAG, *rows), text_key(_TAG, *tests), len(rows))


# one encoder for every row: building one per call was a third of the time
_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                         allow_nan=False)


def _part(s: Sample, fields: tuple[str, ...]) -> str:
    part = {f: _plain(v) for f in fields if (v := getattr(s, f, None)) is not None}
    if fields is TEST_FIELDS and isinstance(s, MultiTurnSample):
        part["user_turns"] = [m.content for m in s.messages if m.role == "user"]
    return _JSON.encode(part)


def _plain(v: Any) -> Any:
    """A conversation's messages and calls as their JSON shape; other values as they are."""
    if isinstance(v, list) and v and hasattr(v[0], "to_dict"):
        return [x.to_dict() for x in v]
    return v
