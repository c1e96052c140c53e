"""Which sample of one result set is which of another: :func:`align`.

Two tools rarely agree on ids: a RAGAS export may have none (rows are
numbered), a deepeval run names its cases itself. The rule below pairs by id,
then by row order checked against the question text, then by question text;
every sample left without a partner is reported, never silently dropped.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping

from localeval.agreement.resultset import ResultSet
from localeval.errors import DataError

__all__ = ["Alignment", "align"]


@dataclass
class Alignment:
    """Which sample of A is which of B, by what rule, and what was left over."""

    pairs: list[tuple[str, str]]
    rule: str
    only_a: list[str]
    only_b: list[str]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "matched": len(self.pairs), "only_a": len(self.only_a),
                "only_b": len(self.only_b), "only_a_ids": self.only_a[:20],
                "only_b_ids": self.only_b[:20], "note": self.note}


def _norm_q(q: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", q).split()).casefold()


def align(a: ResultSet | Mapping[str, Any], b: ResultSet | Mapping[str, Any]) -> Alignment:
    """Pair the samples of ``a`` and ``b``.

    The rule, in order:

    1. both sets carry ids -> match on id (unless no id is shared and both
       have question texts, then 3.);
    2. either set is numbered by row order -> pair row i with row i when the
       sets have the same length, and, when both carry question texts, check
       that each pair asks the same question; if any pair differs, use 3.;
    3. match on question text (whitespace- and Unicode-normalised, case-folded);
       a question that occurs more than once on a side is left unmatched
       rather than guessed.

    Samples without a partner are reported, never silently dropped.
    """
    a = a if isinstance(a, ResultSet) else ResultSet.from_scores(a)
    b = b if isinstance(b, ResultSet) else ResultSet.from_scores(b)
    ids_a, ids_b = list(a.scores), list(b.scores)
    have_q = (len(a.questions) == len(a) and len(b.questions) == len(b))
    if a.ids_from == "id" and b.ids_from == "id":
        shared = set(ids_b)
        pairs = [(i, i) for i in ids_a if i in shared]
        if pairs or not have_q:
            sa = {p for p, _ in pairs}
            return Alignment(pairs, "id", [i for i in ids_a if i not in sa],
                             [i for i in ids_b if i not in sa])
        return _by_question(a, b, note="no id is shared; matched on question text")
    if len(a) == len(b):
        pairs = list(zip(ids_a, ids_b))
        if have_q:
            differ = sum(_norm_q(a.questions[x]) != _norm_q(b.questions[y]) for x, y in pairs)
            if differ:
                return _by_question(a, b, note=f"row order disagreed on {differ} question(s); "
                                               "matched on question text")
        return Alignment(pairs, "row order", [], [],
                         "" if have_q else "no question text to check the row order against")
    if have_q:
        return _by_question(a, b, note=f"different lengths ({len(a)} vs {len(b)})")
    raise DataError(f"cannot pair {a.source} ({len(a)} samples) with {b.source} "
                    f"({len(b)} samples): no shared ids, different lengths, and no question "
                    "text to match on. Add an 'id' column to the export.")


def _by_question(a: ResultSet, b: ResultSet, note: str = "") -> Alignment:
    def index(rs: ResultSet) -> tuple[dict[str, str], set[str]]:
        seen: dict[str, str] = {}
        dups: set[str] = set()
        for sid, q in rs.questions.items():
            k = _norm_q(q)
            if k in seen:
                dups.add(k)
            seen[k] = sid
        return seen, dups

    qa, da = index(a)
    qb, db = index(b)
    pairs = []
    for sid in a.scores:
        k = _norm_q(a.questions.get(sid, ""))
        if k and k in qb and k not in da and k not in db:
            pairs.append((sid, qb[k]))
    ma = {x for x, _ in pairs}
    mb = {y for _, y in pairs}
    n_dup = len(da | db)
    if n_dup:
        note = (note + "; " if note else "") + f"{n_dup} repeated question(s) left unmatched"
    return Alignment(pairs, "question text", [i for i in a.scores if i not in ma],
                     [i for i in b.scores if i not in mb], note)
