"""The bundled example dataset, which ``run`` and ``report`` accept by the name ``example``."""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXAMPLE", "example_path"]

#: The dataset argument that means the bundled example.
EXAMPLE = "example"


def example_path() -> Path:
    """The bundled example dataset (package data)."""
    return Path(__file__).resolve().parents[1] / "data" / "example.jsonl"
