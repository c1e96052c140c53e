"""Were both versions scored the same way? The two runs' signatures, compared in words.

A difference between two runs is the pipeline's only when the same judge,
prompts, embedder, verdict mode and reason mode scored both; otherwise part of
it may be the judge's. Only what the compared metrics use is compared: the
judge, its prompts, verdict and reason modes and repeats matter to judged metrics only, the embedder
to embedding metrics only (a diff of BLEU and ROUGE says nothing of judges).
localeval runs carry their signature in summary.json (read by ``resultsets``'
reader into ``ResultSet.signature``, written by ``report.signature``); exports
from other tools carry none, which is said too.

The test set is compared as well: two versions of a pipeline are compared on
the same questions and references, and the signature's ``testset_hash``
(``dataset.data_version``: the questions, references, reference contexts and
relevant ids, not the pipeline's answers, contexts or rankings) says whether
they were. It is compared only when both runs record it (earlier runs do not).
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["signature_notes", "signature_text", "same_setup_text"]

# (what, signature keys that identify it, what uses it: "judge", "embedder" or "all"),
# in the order they are reported.
_PARTS: tuple[tuple[str, tuple[str, ...], str], ...] = (
    ("judge", ("judge", "judge_fingerprint"), "judge"),
    ("prompts", ("prompts_hash",), "judge"),
    ("embedder", ("embedder", "embedder_fingerprint"), "embedder"),
    ("verdict mode", ("verdicts",), "judge"),
    ("reason mode", ("reasons",), "judge"),
    ("repeats", ("repeats",), "judge"),
    ("language", ("lang",), "all"),
)
#: Parts named with a plural noun ("the prompts differ").
_PLURAL = ("prompts", "repeats")
#: What a signature that does not record a key meant: runs before ``--reasons`` wrote full reasons.
_DEFAULTS = {"reasons": "full"}


def _relevant(judged: bool, embedded: bool) -> list[tuple[str, tuple[str, ...]]]:
    uses = {"all"} | ({"judge"} if judged else set()) | ({"embedder"} if embedded else set())
    return [(what, keys) for what, keys, used in _PARTS if used in uses]


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def same_setup_text(judged: bool = True, embedded: bool = True) -> str:
    """The sentence for two runs scored the same way, naming only what the metrics use."""
    parts = [w for w, _ in _relevant(judged, embedded)
             if w not in ("repeats", "language", "reason mode")]
    if not parts:
        return ("the same language settings scored both runs (no compared metric uses a "
                "judge or an embedder)")
    return f"the same {_listed(parts)} scored both runs"


def signature_text(sig: Mapping[str, Any]) -> str:
    """The run's signature as ``report.signature_line`` writes it; "" when there is none."""
    from localeval.report import signature_line

    return signature_line(sig) if sig else ""


def _value(sig: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    vals = [str(sig.get(k, _DEFAULTS.get(k))) for k in keys
            if sig.get(k, _DEFAULTS.get(k)) not in (None, "", {})]
    if len(keys) == 2 and len(vals) == 2:  # name@fingerprint, as in the signature line
        return f"{vals[0]}@{vals[1][:12]}"
    return " ".join(vals) or "none"


def _prompt_names(a: Mapping[str, Any], b: Mapping[str, Any]) -> str:
    pa, pb = a.get("prompts") or {}, b.get("prompts") or {}
    if not isinstance(pa, Mapping) or not isinstance(pb, Mapping):
        return ""
    names = sorted(k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k))
    return f" ({', '.join(names[:8])}{', …' if len(names) > 8 else ''})" if names else ""


def signature_notes(base: Mapping[str, Any], new: Mapping[str, Any], base_name: str = "base",
                    new_name: str = "new", *, judged: bool = True, embedded: bool = True
                    ) -> tuple[list[str], bool]:
    """(plain sentences, same): what differs between the two runs' scoring set-ups.

    ``judged`` / ``embedded``: whether a compared metric uses a judge / an
    embedder; a part no compared metric uses is not compared. ``same`` is
    False when a compared part differs or a side records no signature (then
    the reader cannot tell, and the page says so).
    """
    relevant = _relevant(judged, embedded)
    missing = [n for n, s in ((base_name, base), (new_name, new)) if not s]
    if missing:
        names = [w for w, _ in relevant if w in ("judge", "prompts", "embedder")]
        what = f"the same {_listed(names)}" if names else "the same settings"
        return ([f"{' and '.join(missing)} record{'s' if len(missing) == 1 else ''} no "
                 "signature (not a localeval run, or summary.json is missing): cannot tell "
                 f"whether {what} scored both runs"], False)
    notes: list[str] = []
    differs: list[str] = []
    for what, keys in relevant:
        va, vb = _value(base, keys), _value(new, keys)
        if va != vb:
            extra = _prompt_names(base, new) if what == "prompts" else ""
            verb = "differ" if what in _PLURAL else "differs"
            notes.append(f"the {what} {verb}{extra}: {base_name} {va}, {new_name} {vb}")
            differs.append(what)
    if notes:
        whose = (["the judge's"] if set(differs) - {"embedder", "language"} else []) + (
            ["the embedder's"] if "embedder" in differs else []) or ["the set-up's"]
        notes.append(f"a difference below may be {' or '.join(whose)}, not the pipeline's")
    data = _testset_note(base, new, base_name, new_name)
    if data:
        notes = [data, *(notes or [same_setup_text(judged, embedded)])]
    return notes, not notes


def _testset_note(base: Mapping[str, Any], new: Mapping[str, Any], base_name: str,
                  new_name: str) -> str:
    """The sentence for two runs on different test sets; "" when the same or not known."""
    a, b = base.get("testset_hash"), new.get("testset_hash")
    if not (isinstance(a, str) and isinstance(b, str) and a and b) or a == b:
        return ""
    return (f"the test sets differ: {base_name} {a[:12]} ({base.get('dataset_rows')} rows), "
            f"{new_name} {b[:12]} ({new.get('dataset_rows')} rows); the paired samples' "
            "questions, references or relevant ids may differ, so a difference below may be "
            "the data's, not the pipeline's")
