"""How unsure a run's judge was on each row: what an active draw leans on."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from localeval.estimate.draw import UNIFORM, row_uncertainty
from localeval.resultsets import ResultSet

__all__ = ["run_uncertainty"]


def run_uncertainty(rs: ResultSet, ids: Sequence[str], metrics: Sequence[str], *,
                    legacy: bool = False) -> tuple[list[float | None], tuple[str, ...]]:
    """Per row, the mean uncertainty over ``metrics`` (None where the run holds none), and
    what it rests on: ``draw.SOFT_VERDICTS`` and/or ``draw.REPEATS``, else ``(UNIFORM,)``
    (a draw names them joined by "and"). ``legacy``: as versions before soft ratings read
    it (``draw.row_uncertainty``)."""
    out: list[float | None] = []
    bases: set[str] = set()
    for sid in ids:
        us = []
        for m in metrics:
            u, basis = row_uncertainty(rs.details.get(sid, {}).get(m), legacy=legacy)
            if u is not None:
                us.append(u)
                bases.add(basis)
        out.append(float(np.mean(us)) if us else None)
    return out, tuple(sorted(bases)) or (UNIFORM,)
