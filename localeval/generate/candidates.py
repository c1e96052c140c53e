"""A candidate test-set row: what a synthesizer writes from chunks, before the filters.

Every row of a generated test set carries where it came from, in the column
names ragas users know and ``localeval run`` reads as they are (``user_input``,
``reference``, ``reference_contexts``, ``synthesizer_name``), so a kept row can be
traced to its chunks (``reference_context_ids``: stable chunk ids, also the
qrels' document ids) and documents. A dropped row keeps its reason.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

__all__ = ["Candidate", "SYNTHESIZERS"]

#: The synthesizers, named as ragas names them.
SYNTHESIZERS = ("single_hop_specific", "multi_hop_specific", "multi_hop_abstract")


@dataclass(frozen=True)
class Candidate:
    """One generated question with its reference and the chunks it was written from."""

    id: str
    question: str
    reference: str
    #: the source chunks' verbatim texts and stable ids, in the same order
    contexts: tuple[str, ...]
    chunk_ids: tuple[str, ...]
    doc_ids: tuple[str, ...]
    synthesizer: str
    lang: str
    persona: str | None = None
    style: str | None = None
    #: why the filters dropped it (None: kept, or not filtered yet)
    dropped: str | None = None
    #: what the filters measured (support, round-trip rank, ...), for the report
    checks: dict[str, Any] = field(default_factory=dict)

    def drop(self, reason: str, **checks: Any) -> "Candidate":
        """This candidate, dropped for ``reason`` (the first reason is kept)."""
        return replace(self, dropped=self.dropped or reason, checks={**self.checks, **checks})

    def measured(self, **checks: Any) -> "Candidate":
        return replace(self, checks={**self.checks, **checks})

    def to_row(self) -> dict[str, Any]:
        """The test-set row (JSONL and CSV), in the column names ragas users know."""
        row: dict[str, Any] = {
            "id": self.id, "user_input": self.question, "reference": self.reference,
            "reference_contexts": list(self.contexts),
            "reference_context_ids": list(self.chunk_ids), "source_doc_ids": list(self.doc_ids),
            "synthesizer_name": self.synthesizer, "persona": self.persona, "style": self.style,
            "lang": self.lang}
        if self.dropped is not None:
            row["dropped"] = self.dropped
        if self.checks:
            row["checks"] = dict(self.checks)
        return row

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> "Candidate":
        """The candidate ``to_row`` wrote (a checkpoint line read back); KeyError or
        TypeError when the row is not one."""
        return cls(id=str(row["id"]), question=str(row["user_input"]),
                   reference=str(row["reference"]),
                   contexts=tuple(map(str, row["reference_contexts"])),
                   chunk_ids=tuple(map(str, row["reference_context_ids"])),
                   doc_ids=tuple(map(str, row["source_doc_ids"])),
                   synthesizer=str(row["synthesizer_name"]), lang=str(row["lang"]),
                   persona=row.get("persona"), style=row.get("style"),
                   dropped=row.get("dropped"), checks=dict(row.get("checks") or {}))
