"""Which sample of the base run is which of the new run: :func:`pair_versions`.

Two versions of a pipeline answer the same questions with *different*
answers and contexts, so the content check of ``alignment.align`` (which
refuses a pair whose answer differs: it is built for two judges of the same
answers) does not fit. Versions pair by id, else by question text (a
conversation's first user turn, read from the data set given with the run); samples
found in one run only are listed, never dropped, and a question that occurs
twice in a run cannot be paired by question (refused with a clear message).
"""

from __future__ import annotations

from typing import Any

from localeval.errors import DataError
from localeval.lang import normalise
from localeval.resultsets.alignment import Alignment
from localeval.resultsets.resultset import ResultSet

__all__ = ["pair_versions", "describe_pairing", "pairing_dict"]


def _questions(rs: ResultSet) -> dict[str, str]:
    """id -> normalised question, for the samples that have one."""
    return {sid: normalise(q) for sid, q in rs.questions.items() if sid in rs.scores}


def _where(rs: ResultSet, sid: str) -> str:
    return (f"row {rs.rows[sid]} " if sid in rs.rows else "") + f"(id {sid!r})"


def _short(q: str) -> str:
    return q[:60] + ("…" if len(q) > 60 else "")


def _first_question_clash(base: ResultSet, new: ResultSet,
                          pairs: list[tuple[str, str]]) -> str | None:
    """A message naming the first id whose question differs between the runs, or None."""
    qa, qb = _questions(base), _questions(new)
    for ia, ib in pairs:
        if ia in qa and ib in qb and qa[ia] != qb[ib]:
            return (f"id {ia!r} holds different questions: {_short(base.questions[ia])!r} in "
                    f"{base.source}, {_short(new.questions[ib])!r} in {new.source}")
    return None


def _duplicates(rs: ResultSet, qs: dict[str, str]) -> None:
    """Refuse a run in which one question occurs twice: which copy pairs with which is unknown."""
    seen: dict[str, str] = {}
    for sid in rs.scores:
        q = qs.get(sid)
        if q is None:
            continue
        if q in seen:
            raise DataError(
                f"the question {_short(rs.questions[sid])!r} occurs twice ({_where(rs, seen[q])} "
                f"and {_where(rs, sid)}), so its samples cannot be paired by question. Give "
                "every sample an id (an 'id' column or field) in both runs, or remove the "
                "duplicate", file=rs.source)
        seen[q] = sid


def _by_question(base: ResultSet, new: ResultSet, note: str) -> Alignment:
    qa, qb = _questions(base), _questions(new)
    missing = [rs.source for rs, qs in ((base, qa), (new, qb)) if not qs]
    if missing:
        raise DataError(
            f"cannot pair {base.source} with {new.source}: they share no ids, and "
            f"{' and '.join(missing)} record{'s' if len(missing) == 1 else ''} no question "
            "text. Add an 'id' column (or the question column) to the export, or pass the "
            "evaluated data set (--base-data / --new-data; a conversation's question is "
            "its first user turn)")
    _duplicates(base, qa)
    _duplicates(new, qb)
    by_q = {q: sid for sid, q in qb.items()}
    pairs = [(sid, by_q[qa[sid]]) for sid in base.scores if qa.get(sid) in by_q]
    if not pairs:
        raise DataError(f"no question of {base.source} occurs in {new.source}: are they "
                        "runs of the same data set?")
    pa, pb = {a for a, _ in pairs}, {b for _, b in pairs}
    return Alignment(pairs, "question", [s for s in base.scores if s not in pa],
                     [s for s in new.scores if s not in pb], note, checked=("question",))


def pair_versions(base: ResultSet, new: ResultSet) -> Alignment:
    """Pair the samples of two versions: by id, else by question (answers may differ).

    1. Both runs carry ids and share some: pair on id, checking the question
       where both record it. If an id holds different questions in the two
       runs, the ids are not the same samples: pair by question instead.
    2. Otherwise pair on the normalised question text (``lang.normalise``);
       a question occurring twice in one run is refused (DataError).
    Samples of one run without a partner are in ``only_a`` / ``only_b``.
    """
    if base.ids_from == "id" and new.ids_from == "id":
        shared = set(new.scores)
        pairs = [(s, s) for s in base.scores if s in shared]
        if pairs:
            clash = _first_question_clash(base, new, pairs)
            if clash is None:
                checked = bool(_questions(base)) and bool(_questions(new))
                pa = {a for a, _ in pairs}
                return Alignment(pairs, "id", [s for s in base.scores if s not in pa],
                                 [s for s in new.scores if s not in pa],
                                 "" if checked else "no question text on one side: ids "
                                 "not checked against questions",
                                 checked=("question",) if checked else ())
            return _by_question(base, new, f"{clash}; paired by question instead")
    why = ("ids are row numbers in " + " and ".join(
        rs.source for rs in (base, new) if rs.ids_from != "id")
           if "row" in (base.ids_from, new.ids_from) else "no id occurs in both runs")
    return _by_question(base, new, why)


def describe_pairing(al: Alignment, base: str, new: str) -> str:
    """One sentence: how many samples paired, by what, and what was left over."""
    s = f"{len(al.pairs)} samples paired by {al.rule}"
    if al.note:
        s += f" ({al.note})"
    left = []
    if al.only_a:
        left.append(f"{len(al.only_a)} only in {base}")
    if al.only_b:
        left.append(f"{len(al.only_b)} only in {new}")
    return s + ("; " + ", ".join(left) if left else "; every sample found in both runs")


def pairing_dict(al: Alignment) -> dict[str, Any]:
    """The pairing for diff.json: rule, counts and every unpaired id (none are dropped)."""
    return {"rule": al.rule, "paired": len(al.pairs), "note": al.note,
            "only_base": list(al.only_a), "only_new": list(al.only_b)}
