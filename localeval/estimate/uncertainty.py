"""How unsure a run's judge was on each row: what an active draw leans on."""

from __future__ import annotations

from typing import Sequence

import numpy as np

from localeval.agreement import ResultSet
from localeval.estimate.draw import row_uncertainty

__all__ = ["run_uncertainty"]


def run_uncertainty(rs: ResultSet, ids: Sequence[str], metrics: Sequence[str]
                    ) -> tuple[list[float | None], str]:
    """Per row, the mean uncertainty over ``metrics`` (None where the run holds none), and
    its basis (``soft verdicts``, ``repeats`` or ``uniform``)."""
    out: list[float | None] = []
    bases: set[str] = set()
    for sid in ids:
        us = []
        for m in metrics:
            u, basis = row_uncertainty(rs.details.get(sid, {}).get(m))
            if u is not None:
                us.append(u)
                bases.add(basis)
        out.append(float(np.mean(us)) if us else None)
    return out, " and ".join(sorted(bases)) or "uniform"
