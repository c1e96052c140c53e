"""Which sample of one result set is which of another: :func:`align`.

Two tools rarely agree on ids: a RAGAS export may have none (rows are
numbered), a deepeval run names its cases itself, and an export saved after
a ``df.sample()`` or a ``sort_values`` has its rows in another order. Pairing
by position would then compare different samples and report a wrong
correlation with a straight face. So samples are paired by id, then by
content (question text, hashes of contexts and answer: see
``results.content``), and :func:`align` refuses (``DataError``, exit 2) naming
the first sample it cannot place. Pairing by position happens only when
asked for (``how="position"``, ``--align position``).
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Mapping

from localeval.errors import DataError, UsageError
from localeval.lang import normalise
from localeval.results import HASH_FIELDS
from localeval.resultsets.resultset import ResultSet

__all__ = ["Alignment", "align", "ALIGN_RULES", "pairing_id", "id_index"]

#: What ``how`` may be: ``auto`` tries id, then content.
ALIGN_RULES = ("auto", "id", "content", "position")
# Content keys, in the order they are named in messages.
_KEYS = ("question", *HASH_FIELDS)
_WHAT = {"question": "question", "contexts_hash": "contexts", "answer_hash": "answer",
         "conversation_hash": "conversation"}


@dataclass
class Alignment:
    """Which sample of A is which of B, by what rule, and what was left over."""

    pairs: list[tuple[str, str]]
    rule: str
    only_a: list[str]
    only_b: list[str]
    note: str = ""
    #: content fields the pairs were matched or checked on ("question", "contexts_hash", ...)
    checked: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "matched": len(self.pairs), "only_a": len(self.only_a),
                "only_b": len(self.only_b), "only_a_ids": self.only_a[:20],
                "only_b_ids": self.only_b[:20], "checked": list(self.checked),
                "note": self.note}


def _content(rs: ResultSet, sid: str) -> dict[str, str]:
    """The normalised content of one sample: what two sets are matched and checked on."""
    out = dict(rs.hashes.get(sid, {}))
    q = rs.questions.get(sid)
    if q is not None:
        out["question"] = normalise(q)
    return out


def _shared_keys(a: ResultSet, b: ResultSet) -> tuple[str, ...]:
    """Content fields every sample of both sets has (a partial field cannot key a match)."""
    def keys(rs: ResultSet) -> set[str]:
        ks = set(_KEYS)
        for sid in rs.scores:
            ks &= set(_content(rs, sid))
        return ks
    both = keys(a) & keys(b)
    return tuple(k for k in _KEYS if k in both)


def _describe(rs: ResultSet, sid: str) -> str:
    """``row 3 (id 'q2', question 'What is…')`` of a sample, for messages."""
    where = f"row {rs.rows[sid]} " if sid in rs.rows else ""
    q = rs.questions.get(sid)
    qs = f", question {q[:60] + ('…' if len(q) > 60 else '')!r}" if q else ""
    return f"{where}(id {sid!r}{qs})"


def align(a: ResultSet | Mapping[str, Any], b: ResultSet | Mapping[str, Any], *,
          how: str = "auto") -> Alignment:
    """Pair the samples of ``a`` and ``b``; refuse (DataError) rather than guess.

    ``how="auto"``, in order:

    1. both sets carry ids and share some -> match on id, and check each pair's
       content (question, contexts and answer hashes, where both sides have
       them); if a pair's content differs, match on content instead, or refuse
       naming the first pair that differs. Ids pair in their NFC form without
       outer white space (:func:`pairing_id`);
    2. otherwise match on content (the fields every sample of both sets has);
       two samples of one set with the same content are refused (which is which
       cannot be known). Every sample of the smaller set must find a partner, else refuse naming the first that does
       not; samples only in the larger set are reported;
    3. no shared id and no content on both sides: refuse.

    ``how="id"`` or ``"content"`` forces that rule (still checked; ``id`` refuses
    a set without ids rather than falling back to content);
    ``how="position"`` pairs row i with row i and checks nothing.
    """
    if how not in ALIGN_RULES:
        raise UsageError(f"align must be one of {', '.join(ALIGN_RULES)}, not {how!r}")
    a = a if isinstance(a, ResultSet) else ResultSet.from_scores(a)
    b = b if isinstance(b, ResultSet) else ResultSet.from_scores(b)
    if how == "position":
        return _by_position(a, b)
    keys = _shared_keys(a, b)
    if how == "id":
        for rs in (a, b):
            if rs.ids_from != "id":
                raise DataError(f"{rs.source} has no id column (its samples are numbered by "
                                "row), so --align id cannot pair it; add an 'id' column, or "
                                "use --align content or --align position")
    if how in ("auto", "id") and a.ids_from == "id" and b.ids_from == "id":
        by_b = id_index(b)
        id_index(a)  # refuses ids of A that collide once normalised
        pairs = [(i, by_b[k]) for i in a.scores if (k := pairing_id(i)) in by_b]
        if how == "id" and not pairs:
            raise DataError(f"no id of {a.source} occurs in {b.source}; align by content "
                            "or by position (--align content / --align position)")
        if pairs:
            bad = _first_difference(a, b, pairs, keys)
            if bad is None:
                sa, sb = {p for p, _ in pairs}, {q for _, q in pairs}
                return Alignment(pairs, "id", [i for i in a.scores if i not in sa],
                                 [i for i in b.scores if i not in sb], checked=keys)
            if how == "id" or not keys:
                raise DataError(bad)
            try:
                return _by_content(a, b, keys, note="the same ids hold different samples ("
                                   + bad + "); matched on content")
            except DataError as e:
                raise DataError(f"{bad}; matching on content failed too: {e}") from None
    if not keys:
        missing = [rs.source for rs in (a, b) if not _shared_keys(rs, rs)]
        why = ("no question text or content hashes in " + " and ".join(missing)
               if missing else "the two sets record different content fields")
        raise DataError(f"cannot pair {a.source} ({len(a)} samples) with {b.source} "
                        f"({len(b)} samples): no shared ids, and {why}. Add an 'id' column "
                        "(or the question column) to the export, pass the evaluated dataset "
                        "(--dataset), or pair row by row with --align position.")
    return _by_content(a, b, keys)


def pairing_id(sid: str) -> str:
    """The form of an id that pairs: NFC and without outer white space, so that an id
    written by macOS (NFD) or with a trailing space still finds its partner."""
    return unicodedata.normalize("NFC", sid).strip()


def id_index(rs: ResultSet) -> dict[str, str]:
    """pairing id -> id of ``rs``; refuses two ids that differ only in normalisation or
    outer white space (they could not be told apart when pairing)."""
    out: dict[str, str] = {}
    for sid in rs.scores:
        k = pairing_id(sid)
        if k in out:
            raise DataError(f"ids {out[k]!r} and {sid!r} differ only in Unicode "
                            f"normalisation or white space around them ({_describe(rs, out[k])}"
                            f" and {_describe(rs, sid)}); make them distinct", file=rs.source)
        out[k] = sid
    return out


def _first_difference(a: ResultSet, b: ResultSet, pairs: list[tuple[str, str]],
                      keys: tuple[str, ...]) -> str | None:
    """A message naming the first id pair whose content differs, or None."""
    for ia, ib in pairs:
        ca, cb = _content(a, ia), _content(b, ib)
        for k in _KEYS:
            if k in ca and k in cb and ca[k] != cb[k]:
                return (f"id {ia!r} holds different samples: {_WHAT[k]} differs between "
                        f"{a.source} {_describe(a, ia)} and {b.source} {_describe(b, ib)}")
    return None


def _by_content(a: ResultSet, b: ResultSet, keys: tuple[str, ...], note: str = "") -> Alignment:
    def key(rs: ResultSet, sid: str) -> tuple[str, ...]:
        c = _content(rs, sid)
        return tuple(c[k] for k in keys)

    waiting: dict[tuple[str, ...], list[str]] = {}
    for rs in (a, b):
        _refuse_shared_keys(rs, keys, key)
    for sid in b.scores:
        waiting.setdefault(key(b, sid), []).append(sid)
    pairs: list[tuple[str, str]] = []
    for sid in a.scores:
        bucket = waiting.get(key(a, sid))
        if bucket:
            pairs.append((sid, bucket.pop()))
    ma, mb = {x for x, _ in pairs}, {y for _, y in pairs}
    only_a = [i for i in a.scores if i not in ma]
    only_b = [i for i in b.scores if i not in mb]
    small, other, left = (a, b, only_a) if len(a) <= len(b) else (b, a, only_b)
    if left:
        what = ", ".join(_WHAT[k] for k in keys)
        raise DataError(f"cannot align {small.source} with {other.source}: "
                        f"{_describe(small, left[0])} has no sample with the same {what} in "
                        f"{other.source} ({len(left)} of {len(small)} unmatched). Check that "
                        "both sets score the same data set, or pair row by row with "
                        "--align position.")
    return Alignment(pairs, "content", only_a, only_b, note, checked=keys)


def _refuse_shared_keys(rs: ResultSet, keys: tuple[str, ...], key: Any) -> None:
    """Refuse samples of one set that share their content key: which of them is which
    sample of the other set cannot be known, and pairing them in row order would
    guess without a word."""
    seen: dict[tuple[str, ...], str] = {}
    for sid in rs.scores:
        k = key(rs, sid)
        if k in seen:
            what = ", ".join(_WHAT[x] for x in keys)
            raise DataError(f"{_describe(rs, seen[k])} and {_describe(rs, sid)} have the same "
                            f"{what}, so they cannot be paired by content: add an 'id' "
                            "column to both sets, or pair row by row with --align position",
                            file=rs.source)
        seen[k] = sid


def _by_position(a: ResultSet, b: ResultSet) -> Alignment:
    if len(a) != len(b):
        raise DataError(f"cannot pair by position: {a.source} has {len(a)} samples, "
                        f"{b.source} has {len(b)}")
    return Alignment(list(zip(a.scores, b.scores)), "position", [], [],
                     "paired row by row as asked (--align position); content not checked")
