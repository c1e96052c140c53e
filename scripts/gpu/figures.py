"""The GPU check's figures: stage results merged into one JSON and one Markdown table.

``measure.py`` writes one JSON object per stage into a parts folder as each stage
ends; this module merges whatever parts exist (so a check cut short by its time
limit still reports the stages it finished) into ``gpu_figures.json`` and
``gpu_figures.md``. Each part is ``{"stage": NAME, "title": ..., "rows": [{"what":
..., "value": ..., "unit": ..., "note": ...}], ...}``; the rows are the table.

    python scripts/gpu/figures.py PARTS_DIR OUT_DIR
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

#: Stage order in the table (others follow, by name).
ORDER = ("env", "build", "judge", "trace", "decode", "batched", "embed", "checkers")


def read_parts(parts: Path) -> list[dict[str, Any]]:
    """Every readable part, in ``ORDER``; an unreadable one becomes a row saying so."""
    found = []
    for path in sorted(parts.glob("*.json")):
        try:
            part = json.loads(path.read_text(encoding="utf-8"))
            if not isinstance(part, dict) or "stage" not in part:
                raise ValueError("not a stage object")
        except (OSError, ValueError) as e:
            part = {"stage": path.stem, "title": path.stem, "error": f"unreadable part: {e}",
                    "rows": []}
        found.append(part)
    rank = {name: i for i, name in enumerate(ORDER)}
    return sorted(found, key=lambda p: (rank.get(p["stage"], len(ORDER)), p["stage"]))


def cell(value: Any) -> str:
    """A table cell: floats to 4 significant digits, text with its pipes escaped."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value).replace("|", "\\|").replace("\n", " ")


def markdown(parts: list[dict[str, Any]]) -> str:
    lines = ["# GPU check", ""]
    for part in parts:
        lines += [f"## {cell(part.get('title', part['stage']))}", ""]
        if part.get("error"):
            lines += [f"Stage failed: {cell(part['error'])}", ""]
        rows = part.get("rows") or []
        if rows:
            lines += ["| what | value | unit | note |", "| --- | --- | --- | --- |"]
            lines += [f"| {cell(r.get('what', ''))} | {cell(r.get('value', ''))} | "
                      f"{cell(r.get('unit', ''))} | {cell(r.get('note', ''))} |" for r in rows]
            lines.append("")
    return "\n".join(lines)


def write(parts_dir: Path, out: Path) -> tuple[Path, Path]:
    """Write ``gpu_figures.json`` and ``gpu_figures.md`` into ``out``; return both paths."""
    parts = read_parts(parts_dir)
    out.mkdir(parents=True, exist_ok=True)
    j, m = out / "gpu_figures.json", out / "gpu_figures.md"
    j.write_text(json.dumps({"stages": parts}, indent=1, ensure_ascii=False) + "\n",
                 encoding="utf-8")
    m.write_text(markdown(parts), encoding="utf-8")
    return j, m


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: figures.py PARTS_DIR OUT_DIR")
    for p in write(Path(sys.argv[1]), Path(sys.argv[2])):
        print(p)
