"""Generator health: signs of a weak generator, said in plain words, never a drop.

The filters drop bad rows one by one; what they dropped, taken together, says
whether the generator did the task at all (as ``report.health`` says it of a
judge): a small model copies its chunk or its prompt's example instead of asking,
writes the same question many times, or starts every question the same way.
Each finding becomes one sentence; the figures behind them are kept too.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

from localeval.generate.candidates import Candidate
from localeval.generate.filters_rank import NOT_RETRIEVED
from localeval.generate.filters_text import COPIES_CHUNK, COPIES_EXAMPLE, NEAR_DUPLICATE, WRONG_LANGUAGE
from localeval.lang import detect_lang, normalise

__all__ = ["generator_health", "door_copy_health", "question_opening", "CHUNK_COPY_WARN", "EXAMPLE_COPY_WARN",
           "DUPLICATE_WARN", "OPENING_WARN", "WRONG_LANGUAGE_WARN", "NOT_RETRIEVED_WARN"]

#: Warn when this share of the rows copied their chunk ...
CHUNK_COPY_WARN = 0.2
#: ... the prompt's example (as a judge's copying is warned of at 5%) ...
EXAMPLE_COPY_WARN = 0.05
#: ... were near-duplicates of another question ...
DUPLICATE_WARN = 0.2
#: ... were written in another language than their chunk ...
WRONG_LANGUAGE_WARN = 0.1
#: ... or were not retrieved by their own chunk.
NOT_RETRIEVED_WARN = 0.5
#: Warn when one opening starts this share of the questions (of at least OPENING_MIN_N).
OPENING_WARN = 0.5
OPENING_MIN_N = 5

_WORDS = re.compile(r"\S+")


def question_opening(question: str) -> str:
    """The first three words (English) or four characters (Japanese, Chinese), normalised."""
    q = normalise(question)
    if detect_lang(q) in ("ja", "zh"):
        return q.replace(" ", "")[:4]
    return " ".join(_WORDS.findall(q)[:3])


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def generator_health(rows: Sequence[Candidate]) -> tuple[dict[str, Any], list[str]]:
    """(figures, warnings) for the filtered ``rows`` (kept and dropped together)."""
    n = len(rows)
    reasons = Counter(r.dropped for r in rows if r.dropped)
    openings = Counter(question_opening(r.question) for r in rows if (r.question or "").strip())
    top, top_n = openings.most_common(1)[0] if openings else ("", 0)
    asked = sum(openings.values())
    share = {key: (reasons[key] / n if n else 0.0)
             for key in (COPIES_CHUNK, COPIES_EXAMPLE, NEAR_DUPLICATE, WRONG_LANGUAGE,
                         NOT_RETRIEVED)}
    figures: dict[str, Any] = {
        "rows": n,
        "chunk_copy_share": round(share[COPIES_CHUNK], 4),
        "example_copy_share": round(share[COPIES_EXAMPLE], 4),
        "near_duplicate_share": round(share[NEAR_DUPLICATE], 4),
        "wrong_language_share": round(share[WRONG_LANGUAGE], 4),
        "not_retrieved_share": round(share[NOT_RETRIEVED], 4),
        "most_repeated_opening": top,
        "most_repeated_opening_share": round(top_n / asked, 4) if asked else 0.0,
    }
    w: list[str] = []
    if n and share[COPIES_CHUNK] >= CHUNK_COPY_WARN:
        w.append(f"the generator copied its chunk instead of asking about it in "
                 f"{_pct(share[COPIES_CHUNK])} of rows ({reasons[COPIES_CHUNK]} of {n}): "
                 "it may be too small for the task")
    if n and share[COPIES_EXAMPLE] >= EXAMPLE_COPY_WARN:
        w.append(f"the generator copied the prompt's example in {_pct(share[COPIES_EXAMPLE])} "
                 f"of rows ({reasons[COPIES_EXAMPLE]} of {n}): it is repeating, not writing")
    if n and share[NEAR_DUPLICATE] >= DUPLICATE_WARN:
        w.append(f"{_pct(share[NEAR_DUPLICATE])} of rows ({reasons[NEAR_DUPLICATE]} of {n}) "
                 "repeat another question: the generator varies little")
    if n and share[WRONG_LANGUAGE] >= WRONG_LANGUAGE_WARN:
        w.append(f"{_pct(share[WRONG_LANGUAGE])} of rows ({reasons[WRONG_LANGUAGE]} of {n}) "
                 "are not in their chunk's language: the generator may not write it")
    if n and share[NOT_RETRIEVED] >= NOT_RETRIEVED_WARN:
        w.append(f"{_pct(share[NOT_RETRIEVED])} of rows ({reasons[NOT_RETRIEVED]} of {n}) ask "
                 "questions their own chunk does not rank high for: they are too generic, "
                 "or about something else")
    if asked >= OPENING_MIN_N and top_n / asked >= OPENING_WARN:
        w.append(f"{_pct(top_n / asked)} of questions ({top_n} of {asked}) start with "
                 f"\"{top}\": the generator varies little")
    return figures, w


def door_copy_health(usage: dict[str, Any]) -> list[str]:
    """A sentence when the generator's first replies copied its prompt's example, from the
    judge door's count (``usage``: the synthesis calls' ``Usage.to_dict()``).

    The door asks again without the example, so those copies never reach the filters
    and ``generator_health`` cannot see them; warned of at ``EXAMPLE_COPY_WARN``, as
    copies that did reach the filters are."""
    copied, calls = int(usage.get("copied_calls", 0)), int(usage.get("calls", 0))
    asked = calls - copied  # each copy cost one more call
    if asked <= 0 or copied / asked < EXAMPLE_COPY_WARN:
        return []
    return [f"the generator copied its prompt's example in {copied} of {asked} first replies "
            f"({_pct(copied / asked)}) and was asked again without it: it is likely too small "
            "to write questions; use a larger judge"]
