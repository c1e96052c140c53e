"""The vocabulary grouped by the bytes its tokens start with.

The grammar reads a token byte by byte, so which one-byte tokens it accepts
now bounds which tokens it can accept at all. This index lets the sampler ask
the grammar about a few hundred candidates instead of the whole vocabulary
(see ``GrammarFilter._constrain_by_first_byte``). Built once per model.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["ByteIndex"]

#: A first-byte group larger than this is split again on the second byte.
_SPLIT_GROUP = 2048


@dataclass
class ByteIndex:
    """The vocabulary grouped by first byte (and, for big groups, second byte)."""

    byte_tokens: np.ndarray  # token ids whose piece is exactly one byte
    byte_values: np.ndarray  # ... and that byte
    byte_token: dict[int, int]  # byte -> its one-byte token
    groups: dict[int, np.ndarray]  # byte -> ids of tokens whose piece starts with it
    no_byte_token: np.ndarray  # ids starting with a byte that has no one-byte token
    eog_ids: np.ndarray
    by_second: dict[int, dict[int, np.ndarray]]  # big groups: second byte -> ids
    short: dict[int, np.ndarray]  # big groups: members one byte long
    second_orphans: dict[int, np.ndarray]  # big groups: second byte has no one-byte token

    @classmethod
    def build(cls, pieces: list[bytes], eog: np.ndarray) -> "ByteIndex":
        """Index ``pieces`` (token id -> bytes); ``eog`` marks end-of-generation tokens."""
        first = np.array([p[0] if p else 256 for p in pieces], dtype=np.int32)
        second = np.array([p[1] if len(p) > 1 else 256 for p in pieces], dtype=np.int32)
        single: dict[int, int] = {}
        for i, p in enumerate(pieces):
            if len(p) == 1 and not eog[i]:
                single.setdefault(p[0], i)
        known = np.array(sorted(single), dtype=np.int32)
        groups = {b: np.flatnonzero((first == b) & ~eog).astype(np.int32) for b in single}
        by_second, short, orphans2 = {}, {}, {}
        for b, ids in groups.items():
            if ids.size <= _SPLIT_GROUP:
                continue
            sec = second[ids]
            by_second[b] = {int(b2): ids[sec == b2] for b2 in np.unique(sec) if b2 in single}
            short[b] = ids[sec == 256]
            orphans2[b] = ids[(sec != 256) & ~np.isin(sec, known)]
        orphans = np.flatnonzero(~np.isin(first, np.append(known, 256)) & ~eog)
        return cls(byte_tokens=np.array(list(single.values()), dtype=np.int32),
                   byte_values=np.array(list(single), dtype=np.int32), byte_token=single,
                   groups=groups, no_byte_token=orphans.astype(np.int32),
                   eog_ids=np.flatnonzero(eog).astype(np.int32), by_second=by_second,
                   short=short, second_orphans=orphans2)
