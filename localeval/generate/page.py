"""``testset.html``: a generated test set as one self-contained page, to read before trusting it.

A test set is only as good as its rows, and a row is judged by reading it beside the
chunks it was written from. This page shows the counts (asked, written, kept, dropped
by reason), how the questions spread over synthesizers, languages and documents, the
documents that got none, the generator health sentences, and every kept and dropped
row; each row opens to its question, reference, the reference's statements marked
supported or not by the support filter, and its source chunks verbatim (chunk id,
document id, text).

It is built with the page toolkit of every page (``report.page_env``,
``report.render_page``, ``report.write_page``): the report's stylesheet and script,
jinja2 with autoescape (every question, reference, chunk and id from the corpus or
the judge is escaped), and the one Content-Security-Policy (``default-src 'none'``, our own style and script by
hash), so it opens offline and a string that slipped through escaping could neither
run nor fetch anything. It stays bounded for a 10,000-row test set: every row is
listed, but only the first ``MAX_FULL_ROWS`` of each list open to their texts and
chunks, every text is cut by the report's ``Clipper`` (the page's text budget), and
long lists of documents are cut with a count. The files beside it hold everything.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any, Mapping, Sequence

from localeval.corpus import Chunk
from localeval.generate.candidates import Candidate
from localeval.generate.filters import MIN_SUPPORT
from localeval.generate.summary_md import next_commands, signature_pairs
from localeval.report import Clipper, excerpt, page_env, render_page, write_page

__all__ = ["write_testset_page", "render_testset_page", "page_view", "MAX_FULL_ROWS",
           "MAX_CHUNKS", "MAX_DOCUMENTS", "MAX_NOTES"]

#: Rows of each list (kept, dropped) that open to their texts, statements and chunks; the
#: rest show their id, question, reason and support, and their chunk ids.
MAX_FULL_ROWS = 200
#: Source chunks shown per row (a multi-hop row has two or three).
MAX_CHUNKS = 20
#: Documents named in the by-document table and in the list of those without a question.
MAX_DOCUMENTS = 500
#: Notes of the run (summary.json's ``notes``) shown at the top.
MAX_NOTES = 20
#: Checks the page shows apart from the others (the support score and its statements).
_SUPPORT_KEYS = ("support", "support_reason", "statements", "unsupported_statements")


def _plain(value: Any) -> str:
    """A check's value as short text: numbers as written, anything else as JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".") if value == value else str(value)
    return json.dumps(value, ensure_ascii=False, default=str)


def _support(checks: Mapping[str, Any], clip: Clipper, where: str) -> dict[str, Any]:
    """The support filter's verdict on a row: its score with a tone, unscored, or not run."""
    if "support" not in checks:
        return {"text": "not checked", "tone": "none", "reason": None, "checked": False}
    value = checks.get("support")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        return {"text": "unscored", "tone": "bad", "checked": True,
                "reason": clip.text(str(checks.get("support_reason") or "no reason given"),
                                    where)}
    tone = "good" if value >= MIN_SUPPORT else "mid" if value >= 0.5 else "bad"
    return {"text": f"{value:.2f}", "tone": tone, "reason": None, "checked": True}


def _statements(checks: Mapping[str, Any], clip: Clipper,
                where: str) -> tuple[list[dict[str, Any]], bool]:
    """The reference's statements marked supported (True) or not (False), and whether
    that is every statement: rows filtered before the filter recorded ``statements``
    carry only their ``unsupported_statements``."""
    marked = checks.get("statements")
    if isinstance(marked, list):
        return [{"text": clip.text(str(m.get("statement", "")), where),
                 "supported": bool(m.get("supported"))}
                for m in marked if isinstance(m, Mapping)], True
    bad = checks.get("unsupported_statements")
    if isinstance(bad, list):
        return [{"text": clip.text(str(s), where), "supported": False} for s in bad], False
    return [], True


def _chunks(c: Candidate, by_id: Mapping[str, Chunk], clip: Clipper) -> list[dict[str, Any]]:
    """The row's source chunks: id, document and the verbatim text the row carries."""
    out = []
    same = len(c.doc_ids) == len(c.chunk_ids)
    for j, cid in enumerate(c.chunk_ids[:MAX_CHUNKS]):
        known = by_id.get(cid)
        doc = known.doc_id if known else (c.doc_ids[j] if same else cid.split("#", 1)[0])
        text = c.contexts[j] if j < len(c.contexts) else (known.text if known else "")
        out.append({"id": cid, "doc": doc, "known": known is not None,
                    "text": clip.text(text, "chunks.jsonl")})
    return out


def _row(c: Candidate, anchor: str, by_id: Mapping[str, Chunk], clip: Clipper, where: str,
         full: bool) -> dict[str, Any]:
    """One row of the page; ``full``: with its texts, statements, chunks and checks."""
    checks = c.checks or {}
    row: dict[str, Any] = {
        "id": c.id, "anchor": anchor, "excerpt": excerpt(c.question) or "(no question)",
        "synthesizer": c.synthesizer, "lang": c.lang, "reason": c.dropped,
        "support": _support(checks, clip, where), "full": full,
        "chunk_ids": list(c.chunk_ids[:MAX_CHUNKS]),
        "more_chunks": max(0, len(c.chunk_ids) - MAX_CHUNKS)}
    if not full:
        return row
    statements, complete = _statements(checks, clip, where)
    row.update(
        question=clip.text(c.question, where), reference=clip.text(c.reference, where),
        persona=c.persona, style=c.style, statements=statements, all_statements=complete,
        chunks=_chunks(c, by_id, clip),
        checks=[(k, clip.text(_plain(v), where)) for k, v in checks.items()
                if k not in _SUPPORT_KEYS])
    return row


def _spread(kept: Sequence[Candidate], dropped: Sequence[Candidate],
            key: Any) -> list[dict[str, Any]]:
    """Kept and dropped rows counted by ``key`` (a synthesizer, a language), most kept first."""
    k, d = Counter(map(key, kept)), Counter(map(key, dropped))
    names = sorted(set(k) | set(d), key=lambda n: (-k[n], -d[n], str(n)))
    return [{"name": n, "kept": k[n], "dropped": d[n]} for n in names]


def _documents(kept: Sequence[Candidate], dropped: Sequence[Candidate],
               chunks: Sequence[Chunk], without: Sequence[str]) -> dict[str, Any]:
    """Questions per document (kept, dropped, chunks), fewest kept first: the documents a
    test set misses are what this table is for."""
    n_chunks = Counter(c.doc_id for c in chunks)
    k = Counter(d for c in kept for d in dict.fromkeys(c.doc_ids))
    d = Counter(d for c in dropped for d in dict.fromkeys(c.doc_ids))
    docs = sorted(set(n_chunks) | set(k) | set(d) | set(without), key=lambda x: (k[x], x))
    rows = [{"id": x, "chunks": n_chunks[x], "kept": k[x], "dropped": d[x]}
            for x in docs[:MAX_DOCUMENTS]]
    return {"rows": rows, "total": len(docs), "more": max(0, len(docs) - MAX_DOCUMENTS)}


def page_view(kept: Sequence[Candidate], dropped: Sequence[Candidate],
                 chunks: Sequence[Chunk], summary: Mapping[str, Any],
                 folder: str | os.PathLike[str] = ".") -> dict[str, Any]:
    """The page's plain data (every string still raw: the template escapes it)."""
    clip = Clipper()
    by_id = {c.id: c for c in chunks}
    kept_rows = [_row(c, f"kept-{i}", by_id, clip, "testset.jsonl", i < MAX_FULL_ROWS)
                 for i, c in enumerate(kept)]
    dropped_rows = [_row(c, f"dropped-{i}", by_id, clip, "dropped.jsonl", i < MAX_FULL_ROWS)
                    for i, c in enumerate(dropped)]
    reasons = summary.get("dropped_by_reason") or dict(
        Counter(c.dropped for c in dropped if c.dropped))
    without = [str(x) for x in summary.get("documents_without_question") or []]
    asked = int(summary.get("asked", len(kept)))
    return {
        "counts": [("asked", asked), ("written", summary.get("written", len(kept) + len(dropped))),
                   ("kept", len(kept)), ("dropped", len(dropped)),
                   ("documents", summary.get("documents", "—")),
                   ("chunks", summary.get("chunks", len(chunks))),
                   ("files skipped", summary.get("skipped_files", 0))],
        "asked": asked, "n_kept": len(kept), "n_dropped": len(dropped),
        "short": len(kept) < asked,
        "reasons": [{"reason": str(r), "count": n} for r, n in reasons.items()],
        "synthesizers": _spread(kept, dropped, lambda c: c.synthesizer),
        "languages": _spread(kept, dropped, lambda c: c.lang),
        "documents": _documents(kept, dropped, chunks, without),
        "without": without[:MAX_DOCUMENTS], "without_total": len(without),
        "health": [str(h) for h in summary.get("generator_health") or []],
        "notes": [clip.text(str(n), "summary.json")
                  for n in (summary.get("notes") or [])[:MAX_NOTES]],
        "notes_more": max(0, len(summary.get("notes") or []) - MAX_NOTES),
        "stages": [{"name": s.get("name", ""), "checked": s.get("checked", 0),
                    "dropped": s.get("dropped", 0), "note": s.get("note", ""),
                    "skipped": bool(s.get("skipped"))}
                   for s in summary.get("stages") or [] if isinstance(s, Mapping)],
        "signature": [(k, clip.text(v, "summary.json"))
                      for k, v in signature_pairs(summary.get("signature") or {})],
        "commands": next_commands(folder),
        "kept": kept_rows, "dropped": dropped_rows, "max_full": MAX_FULL_ROWS,
        "min_support": f"{MIN_SUPPORT:g}", "max_documents": MAX_DOCUMENTS,
    }


def render_testset_page(kept: Sequence[Candidate], dropped: Sequence[Candidate],
                 chunks: Sequence[Chunk], summary: Mapping[str, Any],
                 folder: str | os.PathLike[str] = ".") -> str:
    """The whole page as one string (UTF-8, no external reference)."""
    return render_page(page_env("localeval.generate"), "testset.html.j2", css=("testset.css",),
                       v=page_view(kept, dropped, chunks, summary, folder))


def write_testset_page(out: str | os.PathLike[str], kept: Sequence[Candidate],
                       dropped: Sequence[Candidate], chunks: Sequence[Chunk],
                       summary: Mapping[str, Any]) -> Path:
    """Write ``out/testset.html`` atomically and return its path; an ``OutputError``
    (exit 2) naming the page when it cannot be written."""
    folder = Path(out)
    path = folder / "testset.html"
    return write_page(path, render_testset_page(kept, dropped, chunks, summary, folder))
