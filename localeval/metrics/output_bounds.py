"""Judge output held to its inputs: bounds from the source, duplicates, entity matching.

A judge step's worst-case output (the token budget the judge derives from the
schema) must scale with what it works on: a one-sentence answer cannot hold
24 statements of 240 characters, and a grammar that allows them lets a
looping model write 17,000 tokens. ``statement_bounds`` and
``entity_bounds`` derive a step's item count and string length from the
source's sentences; ``reason_chars`` bounds a reason by the statements it is
about. ``merge_duplicates`` and ``occurs_in`` check what came back against
the inputs, with the one text normalisation (``localeval.lang.normalise``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable, Sequence

from localeval.lang import normalise, split_sentences
from localeval.metrics.schemas import (
    ENTITY_CHARS,
    MAX_ENTITIES,
    MAX_STATEMENTS,
    REASON_CHARS,
    STATEMENT_CHARS,
)

__all__ = [
    "Source",
    "source",
    "statement_bounds",
    "entity_bounds",
    "reason_chars",
    "merge_duplicates",
    "occurs_in",
    "STATEMENTS_PER_SENTENCE",
]

#: A sentence rarely holds more facts than this.
STATEMENTS_PER_SENTENCE = 4
#: An entity's length bound never falls below this (a title of several words).
ENTITY_FLOOR_CHARS = 32
#: A statement may replace "it" with the name it stands for.
STATEMENT_MARGIN = 40
#: A reason may quote its statement and add a few words.
REASON_MARGIN = 60


@dataclass(frozen=True)
class Source:
    """The sentences of the text a step extracts from."""

    sentences: tuple[str, ...]

    @property
    def count(self) -> int:
        return len(self.sentences)

    @property
    def longest(self) -> int:
        return max((len(s) for s in self.sentences), default=0)

    @property
    def chars(self) -> int:
        return sum(len(s) for s in self.sentences)

    @property
    def words(self) -> int:
        """Words of alphabetic scripts and numbers, plus one per two CJK characters."""
        text = " ".join(self.sentences)
        cjk = sum(1 for c in text if c.isalnum() and not _word_char(c))
        return len(_WORD.findall(text)) + cjk // 2


def source(text: str | None, lang: str) -> Source:
    """``text`` split into sentences as the metrics count them (pysbd, CJK fixes)."""
    return Source(tuple(split_sentences(text or "", lang)))


def statement_bounds(src: Source) -> tuple[int, int]:
    """(most statements, longest statement in characters) for a source.

    A few statements per sentence, each no longer than the longest sentence
    plus a margin, within the schema's ceilings; at least one of each.
    """
    items = min(MAX_STATEMENTS, STATEMENTS_PER_SENTENCE * max(src.count, 1))
    chars = min(STATEMENT_CHARS, max(src.longest, 1) + STATEMENT_MARGIN)
    return items, chars


def entity_bounds(src: Source) -> tuple[int, int]:
    """(most entities, longest entity in characters) for a source.

    Entities are copied from the source and do not overlap: there are no more
    of them than words, none is longer than the longest sentence, and
    together they are about as long as the text (each may take twice its
    share, and never less than ``ENTITY_FLOOR_CHARS``).
    """
    items = min(MAX_ENTITIES, max(src.words, 1))
    share = max(ENTITY_FLOOR_CHARS, 2 * src.chars // items)
    chars = min(ENTITY_CHARS, max(src.longest, 1), share)
    return items, chars


def reason_chars(items: Iterable[str]) -> int:
    """Bound of a reason about ``items``: the longest item plus a margin, within the ceiling."""
    return min(REASON_CHARS, max((len(s) for s in items), default=0) + REASON_MARGIN)


def merge_duplicates(items: Sequence[str]) -> tuple[list[str], int]:
    """Stripped items with blanks dropped and normalised repeats merged into the first.

    Returns the kept items and how many repeats were merged: a judge that
    writes one statement three times must not have it judged three times.
    """
    kept: list[str] = []
    seen: set[str] = set()
    merged = 0
    for item in items:
        key = normalise(item)
        if not key:
            continue
        if key in seen:
            merged += 1
            continue
        seen.add(key)
        kept.append(item.strip())
    return kept, merged


def _word_char(c: str) -> bool:
    # Letters and digits of alphabetic scripts; CJK has no word boundaries.
    return c.isalnum() and ord(c) < 0x2E80


_WORD = re.compile(r"[^\W_\u2e80-\U0010ffff]+")


def occurs_in(item: str, text: str) -> bool:
    """Does ``item`` occur in ``text`` after normalisation (NFKC, case, white space)?

    Where the item begins or ends with a letter or digit of an alphabetic
    script, the text must not continue the word there: "Paris" is not in
    "Parisian", "5" is not in "15". CJK items match anywhere.
    """
    needle, hay = normalise(item), normalise(text)
    if not needle:
        return False
    start = hay.find(needle)
    while start != -1:
        end = start + len(needle)
        before_ok = start == 0 or not (_word_char(needle[0]) and _word_char(hay[start - 1]))
        after_ok = end == len(hay) or not (_word_char(needle[-1]) and _word_char(hay[end]))
        if before_ok and after_ok:
            return True
        start = hay.find(needle, start + 1)
    return False
