"""What BLEU and ROUGE share: which samples have a text pair, and its language.

Both score the answer against the reference, unscore samples lacking either,
and tokenise each pair in one language (the metric's, else the run's, else
detected from the pair).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from localeval.lang import LANGS, resolve_lang
from localeval.types import Sample, Score

if TYPE_CHECKING:
    from localeval.metrics.model_access import Judging

__all__ = ["split_missing", "filled", "pair_language", "check_lang"]


def split_missing(samples: Sequence[Sample], fields: Sequence[str]
                  ) -> tuple[list[Score | None], list[int]]:
    """Unscored results for samples lacking a field, and the indices to score."""
    out: list[Score | None] = [None] * len(samples)
    todo: list[int] = []
    for i, s in enumerate(samples):
        miss = [f for f in fields if getattr(s, f, None) is None]
        if miss:
            out[i] = Score.unscored(f"missing field: {', '.join(miss)}")
        else:
            todo.append(i)
    return out, todo


def filled(out: Sequence[Score | None]) -> list[Score]:
    """``split_missing``'s list once every index to score has its Score (an error if one has not)."""
    if any(sc is None for sc in out):
        raise RuntimeError("a sample was neither scored nor left unscored")
    return [sc for sc in out if sc is not None]


def pair_language(configured: str, ctx: Judging | None, ref: str, hyp: str) -> str:
    """The metric's ``lang``, else the run's ``--lang``, else detected from the pair.

    Detection looks at reference and answer together so that both sides of a
    pair are tokenised alike (a kanji-only Japanese answer would otherwise be
    taken for Chinese and segmented differently from its reference).
    """
    if configured == "auto" and ctx is not None:
        configured = getattr(ctx, "lang", "auto") or "auto"
    if configured == "auto" and ref.isascii() and hyp.isascii():
        return "en"  # what detection would say, without its regex passes
    return resolve_lang(configured, ref, hyp)


def check_lang(lang: str) -> None:
    """Reject a ``lang`` parameter other than auto or a supported language."""
    if lang != "auto" and lang not in LANGS:
        raise ValueError(f"unknown language {lang!r}; use auto, en, ja or zh")
