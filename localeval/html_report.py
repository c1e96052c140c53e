"""The report people read: one self-contained HTML file per run.

``report.html`` must open on an air-gapped laptop, in a mail attachment or a
CI artefact viewer, so everything is inline: CSS and JS are embedded, plots
are inline SVG, there are no fonts, images or scripts from anywhere else. A
Content-Security-Policy meta tag pins that down (``default-src 'none'`` plus
hashes of our own style and script), so even if a dataset string slipped
through escaping it could neither run nor fetch anything.

Escaping is Jinja's job (``autoescape=True``): every dataset or judge string
reaches the template as plain data and is escaped on output. This module
never builds HTML itself; it turns the summary and records into a small view
model (numbers, strings and "nodes" describing how to show the judge's
working) and the template renders that.

The histograms are hand-written SVG rather than matplotlib: matplotlib would
be a ~40 MB dependency (plus a font-cache build on first import) for a dozen
rectangles per metric, and its SVG output embeds glyph paths and styles that
make each plot tens of kilobytes; ours is a few hundred bytes, crisp at any
zoom, and styled by the page's own CSS.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import jinja2
import numpy as np
from markupsafe import Markup

from localeval.errors import DataError
from localeval.summary import fmt

__all__ = ["render_html", "write_html_report", "read_run", "WORST_K"]

#: How many samples the "worst samples" list shows per metric.
WORST_K = 5
#: Lists longer than this in the judge's working are cut (with a note) to keep
#: one runaway detail from making the page unusable.
MAX_LIST_ITEMS = 200
#: Deeper nesting than this is shown as JSON text.
MAX_DEPTH = 6
#: Histogram bins for metrics bounded in [0, 1].
BINS = 10

_TEMPLATES = "templates"

# Friendlier labels for keys metrics commonly put in their details; any other
# key is shown with underscores turned into spaces. Matched case-insensitively.
LABELS: dict[str, str] = {
    "statements": "Statements",
    "statement": "Statement",
    "verdicts": "Verdicts",
    "verdict": "Verdict",
    "reason": "Reason",
    "reasons": "Reasons",
    "tp": "True positives (TP)",
    "fp": "False positives (FP)",
    "fn": "False negatives (FN)",
    "questions": "Generated questions",
    "question": "Question",
    "cosine": "Cosine",
    "cosines": "Cosines",
    "similarity": "Similarity",
    "similarities": "Similarities",
    "noncommittal": "Noncommittal",
    "ratings": "Judge ratings",
    "rating": "Rating",
    "classifications": "Reference statements",
    "entities": "Entities",
    "context_entities": "Context entities",
    "reference_entities": "Reference entities",
    "sentences": "Relevant sentences",
    "sentence": "Sentence",
    "contexts": "Contexts",
    "context": "Context",
    "repeats": "Score per repeat",
    "std": "Std. dev. over repeats",
    "f1": "F1",
    "weights": "Weights",
    "probabilities": "Verdict probabilities",
    "probs": "Verdict probabilities",
}
# Keys whose 0/1 (or bool) values are verdicts: shown as check / cross.
_VERDICT_KEYS = {"verdict", "verdicts", "attributed", "supported", "relevant", "useful",
                 "faithful", "present"}
# Keys whose value 1 is a bad sign (shown as a warning, not a check mark).
_FLAG_BAD_KEYS = {"noncommittal"}
# Section tones for the TP/FP/FN classification.
_TONES = {"tp": "good", "fp": "bad", "fn": "bad"}
# A dict holding one of these lists plus parallel lists of the same length
# (verdicts, cosines...) is shown as one table, one row per item.
_PRIMARY_LISTS = ("statements", "questions", "sentences", "contexts", "claims")
_PARALLEL_LISTS = ("verdicts", "cosines", "similarities", "scores", "reasons", "ratings",
                   "noncommittal", "probabilities", "probs")
# Column order in tables: the text first, then the judgement, then the reason.
_COLUMN_RANK = {k: 0 for k in ("id", "statement", "question", "sentence", "claim", "text",
                               "context", "entity")}
_COLUMN_RANK.update({k: 1 for k in ("verdict", "rating", "noncommittal", "cosine",
                                    "similarity", "score", "probability")})
_COLUMN_RANK["reason"] = 2
_SINGULAR = {"statements": "statement", "questions": "question", "sentences": "sentence",
             "contexts": "context", "claims": "claim", "verdicts": "verdict",
             "cosines": "cosine", "similarities": "similarity", "scores": "score",
             "reasons": "reason", "ratings": "rating", "probabilities": "probability",
             "probs": "probability"}


def label(key: str) -> str:
    """The heading shown for a details key."""
    k = str(key)
    if k.lower() in LABELS:
        return LABELS[k.lower()]
    # plain snake_case keys read better as words; anything else (step names,
    # ids, mixed case) may be data and is shown as written
    return k.replace("_", " ").capitalize() if re.fullmatch(r"[a-z][a-z0-9_]*", k) else k


# --------------------------------------------------------------------------- nodes
# A node is a plain dict the template's recursive macro renders:
#   {"kind": "text", "text": str, "tone": str}     a string or number
#   {"kind": "verdict", "ok": bool, "text": str, "title": str}
#   {"kind": "list", "entries": [node], "ordered": bool, "inline": bool, "more": int}
#   {"kind": "table", "columns": [str], "rows": [{"cells": [node], "bad": bool}], "more": int}
#   {"kind": "dict", "entries": [(label, tone, node)]}


def _text(s: str, tone: str = "") -> dict[str, Any]:
    return {"kind": "text", "text": s, "tone": tone}


def _num(v: float | int) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int) or (isinstance(v, float) and v.is_integer() and abs(v) < 1e15):
        return str(int(v))
    if isinstance(v, float) and not math.isfinite(v):
        return str(v)
    # up to 4 decimals without trailing zeros: 0.75, 0.6363, 0.0012
    return f"{v:.4f}".rstrip("0").rstrip(".") if abs(v) >= 1e-3 else f"{v:.3g}"


def _verdict(v: Any, key: str) -> dict[str, Any] | None:
    """A check/cross node for verdict-like keys, None when ``v`` is not a verdict value."""
    k = key.lower()
    if isinstance(v, str) or v not in (0, 1):  # True/False compare equal to 1/0
        return None
    if k in _VERDICT_KEYS:
        ok = bool(v)
        return {"kind": "verdict", "ok": ok, "text": "✓" if ok else "✗",
                "title": "yes (1)" if ok else "no (0)"}
    if k in _FLAG_BAD_KEYS:
        return {"kind": "verdict", "ok": not bool(v), "text": "yes" if v else "no",
                "title": key}
    return None


def _is_scalar(v: Any) -> bool:
    return v is None or isinstance(v, (str, int, float, bool))


def to_node(value: Any, key: str = "", depth: int = 0) -> dict[str, Any]:
    """Turn any JSON-like value into a node, with friendlier shapes for known keys."""
    if depth > MAX_DEPTH:
        return _text(json.dumps(value, ensure_ascii=False, default=str), "mono")
    if value is None:
        return _text("null", "muted")
    if _is_scalar(value):
        v = _verdict(value, key)
        if v is not None:
            return v
        if isinstance(value, str):
            return _text(value) if value else _text("(empty)", "muted")
        return _text(_num(value), "num")
    if isinstance(value, Mapping):
        return _dict_node(value, depth)
    if isinstance(value, (list, tuple)):
        return _list_node(list(value), key, depth)
    return _text(str(value))


def _dict_node(d: Mapping[str, Any], depth: int) -> dict[str, Any]:
    d = dict(d)
    items: list[tuple[str, str, dict[str, Any]]] = []
    for prim in _PRIMARY_LISTS:
        if prim in d and isinstance(d[prim], list):
            merged = _merge_parallel(d, prim)
            if merged is not None:
                rows, used = merged
                for k in used:
                    d.pop(k)
                items.append((label(prim), "", _list_node(rows, prim, depth + 1)))
    for k, v in d.items():
        items.append((label(k), _TONES.get(str(k).lower(), ""), to_node(v, str(k), depth + 1)))
    return {"kind": "dict", "entries": items}


def _merge_parallel(d: Mapping[str, Any],
                    prim: str) -> tuple[list[dict[str, Any]], list[str]] | None:
    """Zip ``d[prim]`` with same-length parallel lists into rows; None if there are none."""
    base = d[prim]
    n = len(base)
    partners = [k for k in _PARALLEL_LISTS
                if k != prim and isinstance(d.get(k), list) and len(d[k]) == n]
    if not partners or n == 0:
        return None
    rows: list[dict[str, Any]] = []
    for i in range(n):
        row: dict[str, Any] = {}
        for k in (prim, *partners):
            item = d[k][i]
            if isinstance(item, Mapping):
                # e.g. verdicts [{"reason", "verdict"}]: their keys become columns
                for ik, iv in item.items():
                    row.setdefault(ik, iv)
            else:
                row[_SINGULAR.get(k, k)] = item
        rows.append(row)
    return rows, [prim, *partners]


def _list_node(items: list[Any], key: str, depth: int) -> dict[str, Any]:
    if not items:
        return _text("(none)", "muted")
    more = max(0, len(items) - MAX_LIST_ITEMS)
    items = items[:MAX_LIST_ITEMS]
    child_key = _SINGULAR.get(key.lower(), key)
    if all(isinstance(x, Mapping) for x in items) and all(
            _is_scalar(v) or _small(v) for x in items for v in x.values()):
        cols: list[str] = []
        for x in items:
            for k in x:
                if k not in cols:
                    cols.append(k)
        cols.sort(key=lambda c: _COLUMN_RANK.get(str(c).lower(), 1))
        rows = []
        for x in items:
            cells = [to_node(x[c], str(c), depth + 1) if c in x else _text("", "muted")
                     for c in cols]
            # a row whose verdict is "no" is tinted, so failures stand out
            bad = any(c["kind"] == "verdict" and not c["ok"] for c in cells)
            rows.append({"cells": cells, "bad": bad})
        return {"kind": "table", "columns": [label(c) for c in cols], "rows": rows,
                "more": more}
    nodes = [to_node(x, child_key, depth + 1) for x in items]
    # numbers, verdicts and short names (entities, ids) read best on one line
    short_names = key.lower().endswith(("entities", "ids")) and all(
        isinstance(x, str) and len(x) <= 60 for x in items)
    inline = short_names or all(not isinstance(x, str) and _is_scalar(x) for x in items)
    return {"kind": "list", "entries": nodes, "ordered": not inline and len(items) > 1,
            "inline": inline, "more": more}


def _small(v: Any) -> bool:
    """Short lists of scalars may sit in a table cell."""
    return isinstance(v, (list, tuple)) and len(v) <= 8 and all(_is_scalar(x) for x in v)


# --------------------------------------------------------------------------- numbers

def _bounded(values: Sequence[float]) -> bool:
    return bool(values) and all(0.0 <= v <= 1.0 for v in values)


def tone(value: float | None, *, bounded: bool, lower_is_better: bool = False) -> str:
    """CSS class for a score: red below 0.5, amber below 0.8, green above (in [0, 1])."""
    if value is None:
        return "none"
    if not bounded:
        return "plain"
    v = 1.0 - value if lower_is_better else value
    return "good" if v >= 0.8 else "mid" if v >= 0.5 else "bad"


@dataclass
class Histogram:
    """Geometry of one inline-SVG histogram (all numbers; the template draws it)."""

    width: int = 320
    height: int = 150
    left: int = 34
    right: int = 10
    top: int = 28
    bottom: int = 26
    bars: list[dict[str, Any]] = field(default_factory=list)
    xticks: list[dict[str, Any]] = field(default_factory=list)
    ymax: int = 0
    mean_x: float | None = None
    mean_anchor: str = "middle"
    ci: tuple[float, float] | None = None
    n: int = 0

    @property
    def plot_w(self) -> int:
        return self.width - self.left - self.right

    @property
    def plot_h(self) -> int:
        return self.height - self.top - self.bottom

    @property
    def base_y(self) -> int:
        return self.top + self.plot_h


def histogram(values: Sequence[float], *, mean: float | None = None,
              ci: Sequence[float] | None = None, lower_is_better: bool = False) -> Histogram:
    """Bin ``values`` (fixed [0, 1] bins for bounded metrics) and lay the bars out."""
    h = Histogram(n=len(values))
    bounded = _bounded(values) or not values
    if bounded:
        lo, hi = 0.0, 1.0
    else:
        lo, hi = float(min(values)), float(max(values))
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(np.asarray(values, dtype=float), bins=BINS, range=(lo, hi))
    h.ymax = int(counts.max()) if counts.size else 0
    span = hi - lo

    def x_of(v: float) -> float:
        return round(h.left + (v - lo) / span * h.plot_w, 2)

    bw = h.plot_w / BINS
    for i, c in enumerate(counts):
        c = int(c)
        bh = 0.0 if h.ymax == 0 else round(c / h.ymax * h.plot_h, 2)
        mid = (edges[i] + edges[i + 1]) / 2
        h.bars.append({
            "x": round(h.left + i * bw + 1, 2), "w": round(bw - 2, 2),
            "y": round(h.base_y - bh, 2), "h": bh, "count": c,
            "label": f"{_num(float(edges[i]))}–{_num(float(edges[i + 1]))}: "
                     f"{c} sample{'s' if c != 1 else ''}",
            "tone": tone(float(mid), bounded=bounded, lower_is_better=lower_is_better),
            "tx": round(h.left + i * bw + bw / 2, 2),
        })
    ticks = [lo, (lo + hi) / 2, hi]
    h.xticks = [{"x": x_of(t), "text": f"{t:.3g}"} for t in ticks]
    if mean is not None and lo <= mean <= hi:
        h.mean_x = x_of(mean)
        # keep the "mean 0.123" label inside the plot near either edge
        f = (mean - lo) / span
        h.mean_anchor = "start" if f < 0.2 else "end" if f > 0.8 else "middle"
    if ci and ci[0] is not None and ci[1] is not None:
        a, b = max(lo, ci[0]), min(hi, ci[1])
        if a <= b:
            h.ci = (x_of(a), max(x_of(b) - x_of(a), 1.0))
    return h


# --------------------------------------------------------------------------- view model

def _excerpt(s: Any, n: int = 140) -> str:
    s = " ".join(str(s or "").split())
    return s if len(s) <= n else s[: n - 1] + "…"


def _pair_samples(records: Sequence[Mapping[str, Any]],
                  samples: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The sample for each record: by id, else by position (records may be fewer)."""
    by_id: dict[Any, Mapping[str, Any]] = {}
    for s in samples:
        by_id.setdefault(s.get("id"), s)
    out = []
    for i, r in enumerate(records):
        s = by_id.get(r.get("id"))
        if s is None and i < len(samples):
            s = samples[i]
        out.append(s or {})
    return out


def _context_rows(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    ctxs = sample.get("contexts") or []
    ids = sample.get("retrieved_ids") or []
    rel = sample.get("relevant_ids") or {}
    if isinstance(rel, list):
        rel = {k: 1 for k in rel}
    rows = []
    for i, c in enumerate(ctxs):
        cid = ids[i] if len(ids) == len(ctxs) else None
        grade = rel.get(cid) if cid is not None else None
        rows.append({"text": c, "id": cid, "grade": None if grade is None else _num(grade)})
    return rows


def _id_rows(sample: Mapping[str, Any]) -> list[dict[str, Any]]:
    rel = sample.get("relevant_ids") or {}
    if isinstance(rel, list):
        rel = {k: 1 for k in rel}
    return [{"id": i, "grade": None if rel.get(i) is None else _num(rel[i])}
            for i in (sample.get("retrieved_ids") or [])]


def build_view(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
               samples: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Everything the template shows, as plain data (the template escapes all of it)."""
    mets: dict[str, Any] = dict(summary.get("metrics") or {})
    # metrics that appear only in records (an interrupted summary) still get a column
    for r in records:
        for k in r.get("scores") or {}:
            mets.setdefault(k, {"mean": None, "ci95": None, "n": 0, "unscored": 0})
    keys = list(mets)
    paired = _pair_samples(records, samples)
    columns: dict[str, list[tuple[int, float]]] = {k: [] for k in keys}
    for i, r in enumerate(records):
        for k, v in (r.get("scores") or {}).items():
            if v is not None and k in columns:
                columns[k].append((i, float(v)))

    metrics_view = []
    for k in keys:
        e = mets[k]
        lib = bool(e.get("lower_is_better"))
        vals = [v for _, v in columns[k]]
        bounded = _bounded(vals) or (not vals and e.get("mean") is not None
                                     and 0 <= e["mean"] <= 1)
        ci = e.get("ci95")
        # perfect scores are never "worst": a metric where all but two samples
        # score 1.0 lists those two, not three perfect ones besides
        perfect = (0.0 if lib else 1.0) if bounded else None
        worst = sorted((t for t in columns[k] if t[1] != perfect),
                       key=lambda t: ((-t[1] if lib else t[1]), t[0]))[:WORST_K]
        reasons = e.get("unscored_reasons") or {}
        metrics_view.append({
            "key": k,
            "anchor": f"m-{len(metrics_view)}",
            "lower_is_better": lib,
            "mean": fmt(e.get("mean")),
            "mean_short": fmt(e.get("mean"), 3),
            "mean_tone": tone(e.get("mean"), bounded=bounded, lower_is_better=lib),
            "ci": f"[{fmt(ci[0], 3)}, {fmt(ci[1], 3)}]" if ci else "–",
            "n": e.get("n", len(vals)),
            "unscored": e.get("unscored", 0),
            "reasons": [{"text": str(t), "count": c} for t, c in reasons.items()],
            "extra": _extras(e),
            "hist": histogram(vals, mean=e.get("mean"), ci=ci, lower_is_better=lib),
            "worst": [{
                "index": i, "anchor": f"s-{i}", "id": str(records[i].get("id", i)),
                "value": fmt(v, 3),
                "tone": tone(v, bounded=bounded, lower_is_better=lib),
                "question": _excerpt(paired[i].get("question")),
            } for i, v in worst],
            "bounded": bounded,
        })
    mview = {m["key"]: m for m in metrics_view}

    sample_views = []
    for i, (r, s) in enumerate(zip(records, paired, strict=True)):
        scores = r.get("scores") or {}
        errors = r.get("errors") or {}
        details = r.get("details") or {}
        rows = []
        for k in keys:
            if k not in scores and k not in errors and k not in details:
                continue
            v = scores.get(k)
            m = mview[k]
            rows.append({
                "key": k,
                "value": fmt(v, 3) if v is not None else "–",
                "tone": tone(v, bounded=m["bounded"], lower_is_better=m["lower_is_better"]),
                "error": errors.get(k) if v is None else None,
                "working": to_node(details[k], k) if k in details and details[k] else None,
            })
        extra = {k: v for k, v in s.items() if k not in (
            "id", "question", "answer", "contexts", "reference", "retrieved_ids",
            "relevant_ids", "metadata")}
        sample_views.append({
            "index": i, "anchor": f"s-{i}", "id": str(r.get("id", s.get("id", i))),
            "question": s.get("question"), "answer": s.get("answer"),
            "reference": s.get("reference"), "contexts": _context_rows(s),
            "retrieved": _id_rows(s) if not (s.get("contexts") and len(
                s.get("retrieved_ids") or []) == len(s.get("contexts") or [])) else [],
            "metadata": to_node(s["metadata"]) if s.get("metadata") else None,
            "extra": to_node(extra) if extra else None,
            "excerpt": _excerpt(s.get("question"), 110),
            "rows": rows,
            "unscored": any(row["error"] is not None or row["value"] == "–" for row in rows),
            "known": bool(s),
        })

    sig = summary.get("signature") or {}
    usage = summary.get("usage") or {}
    return {
        "title": "localeval report",
        "n_samples": summary.get("n_samples", len(records)),
        "n_records": len(records),
        "metrics": metrics_view,
        "samples": sample_views,
        "signature_line": summary.get("signature_line") or "",
        "signature": [(k, "–" if val is None else str(val)) for k, val in sig.items()
                      if k != "prompts"],
        "prompts": sorted((str(k), str(val)) for k, val in (sig.get("prompts") or {}).items()),
        "usage": _usage_rows(usage),
        "notes": [str(n) for n in summary.get("notes") or []],
        "interrupted": summary.get("interrupted"),
        "missing_samples": sum(1 for s in paired if not s),
    }


def _extras(e: Mapping[str, Any]) -> list[str]:
    """Repeat statistics, when the run used --repeats."""
    out = []
    if e.get("run_means"):
        out.append("run means " + ", ".join(fmt(x, 3) for x in e["run_means"]))
    if e.get("run_spread") is not None:
        out.append(f"spread across runs {fmt(e['run_spread'], 4)}")
    if e.get("mean_sample_std") is not None:
        out.append(f"mean per-sample std {fmt(e['mean_sample_std'], 4)}")
    return out


def _usage_rows(u: Mapping[str, Any]) -> list[tuple[str, str]]:
    if not u or not u.get("calls"):
        return []
    evaluated = u.get("evaluated_tokens",
                      u.get("prompt_tokens", 0) - u.get("reused_tokens", 0))
    rows = [("judge calls", str(u.get("calls", 0))),
            ("from cache", str(u.get("cache_hits", 0))),
            ("prompt tokens", f"{u.get('prompt_tokens', 0):,}"),
            ("reused (KV prefix)", f"{u.get('reused_tokens', 0):,}"),
            ("evaluated", f"{evaluated:,}"),
            ("generated tokens", f"{u.get('generated_tokens', 0):,}"),
            ("judge time", f"{float(u.get('seconds', 0.0)):.1f} s")]
    return rows


# --------------------------------------------------------------------------- rendering

def _env() -> jinja2.Environment:
    return jinja2.Environment(
        loader=jinja2.PackageLoader("localeval", _TEMPLATES),
        autoescape=True,  # every dataset string is escaped; never turn this off
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode()


def render_html(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                samples: Sequence[Mapping[str, Any]]) -> str:
    """The whole report as one HTML string (UTF-8, no external references)."""
    env = _env()
    css = env.loader.get_source(env, "report.css")[0]  # type: ignore[union-attr]
    js = env.loader.get_source(env, "report.js")[0]  # type: ignore[union-attr]
    view = build_view(summary, records, samples)
    # Our own CSS/JS are static package files, not data: they go in unescaped.
    return env.get_template("report.html.j2").render(
        v=view, css=Markup(css), js=Markup(js),
        css_hash=_csp_hash(css), js_hash=_csp_hash(js))


def write_html_report(out_dir: str | os.PathLike[str], summary: Mapping[str, Any],
                      records: Sequence[Mapping[str, Any]],
                      samples: Sequence[Mapping[str, Any]]) -> Path:
    """Write ``out_dir/report.html`` (atomically) and return its path."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / "report.html"
    tmp = path.with_suffix(".html.tmp")
    tmp.write_text(render_html(summary, records, samples), encoding="utf-8")
    os.replace(tmp, path)
    return path


def read_run(out_dir: str | os.PathLike[str]) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Read ``summary.json`` and ``results.jsonl`` from a results directory.

    Raises DataError naming the file and line on anything unreadable, so
    ``localeval report DIR`` fails with one clear message.
    """
    d = Path(out_dir)
    sp, rp = d / "summary.json", d / "results.jsonl"
    for p in (sp, rp):
        if not p.is_file():
            raise DataError(f"not found (is {d} a localeval results directory?)", file=str(p))
    try:
        summary = json.loads(sp.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise DataError(f"not valid JSON: {e}", file=str(sp)) from None
    if not isinstance(summary, dict) or not isinstance(summary.get("metrics"), dict):
        raise DataError("no 'metrics' object", file=str(sp))
    records = list(_read_jsonl(rp))
    return summary, records


def _read_jsonl(path: Path) -> Iterable[dict[str, Any]]:
    from localeval.dataset import read_jsonl_rows

    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8: {e}", file=str(path)) from None
    for n, obj in read_jsonl_rows(text, path):
        if "id" not in obj:
            raise DataError("expected an object with an 'id'", file=str(path), row=n)
        yield obj
