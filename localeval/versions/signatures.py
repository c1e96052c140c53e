"""Were both versions scored the same way? The two runs' signatures, compared in words.

A difference between two runs is the pipeline's only when the same judge,
prompts, embedder and verdict mode scored both; otherwise part of it may be
the judge's. localeval runs carry their signature in summary.json (read by
``agreement``'s reader into ``ResultSet.signature``, written by
``report.signature``); exports from other tools carry none, which is said too.
"""

from __future__ import annotations

from typing import Any, Mapping

__all__ = ["signature_notes", "signature_text"]

# (what, signature keys that identify it) in the order they are reported.
_PARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("judge", ("judge", "judge_fingerprint")),
    ("prompts", ("prompts_hash",)),
    ("embedder", ("embedder", "embedder_fingerprint")),
    ("verdict mode", ("verdicts",)),
    ("repeats", ("repeats",)),
    ("language", ("lang",)),
)


def signature_text(sig: Mapping[str, Any]) -> str:
    """The run's signature as ``report.signature_line`` writes it; "" when there is none."""
    from localeval.report import signature_line

    return signature_line(sig) if sig else ""


def _value(sig: Mapping[str, Any], keys: tuple[str, ...]) -> str:
    vals = [str(sig.get(k)) for k in keys if sig.get(k) not in (None, "", {})]
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
                    new_name: str = "new") -> tuple[list[str], bool]:
    """(plain sentences, same): what differs between the two runs' scoring set-ups.

    ``same`` is False when any part differs or a side records no signature
    (then the reader cannot tell, and the page says so).
    """
    missing = [n for n, s in ((base_name, base), (new_name, new)) if not s]
    if missing:
        return ([f"{' and '.join(missing)} record{'s' if len(missing) == 1 else ''} no "
                 "signature (not a localeval run, or summary.json is missing): cannot tell "
                 "whether the same judge, prompts and embedder scored both runs"], False)
    notes = []
    for what, keys in _PARTS:
        va, vb = _value(base, keys), _value(new, keys)
        if va != vb:
            extra = _prompt_names(base, new) if what == "prompts" else ""
            notes.append(f"the {what} differs{extra}: {base_name} {va}, {new_name} {vb}")
    if notes:
        notes.append("a difference below may be the judge's, not the pipeline's")
    return notes, not notes
