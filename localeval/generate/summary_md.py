"""``summary.md``: a generated test set in a few lines of Markdown, and what to run next.

summary.json holds every count for a program; this file is for the person who ran
``localeval generate`` (or a pull request that adds a test set): how many questions
were kept of those asked, why the others were dropped, how they spread over
synthesizers and languages, which documents got none, what the drops say about the
generator, the signature that makes two test sets comparable, and the three
commands that turn the test set into numbers. Every string from the corpus or the
judge goes through ``report.escape_markdown`` (or ``code_span``), as in a run's
summary.md, so a document id cannot open a link or end a table row.
"""

from __future__ import annotations

import json
import os
import re
import shlex
from pathlib import Path
from typing import Any, Mapping

from localeval.report import code_span, escape_markdown

__all__ = ["render_testset_summary", "next_commands", "signature_pairs", "MAX_LISTED"]

#: Documents without a question, and notes, named in summary.md (summary.json holds all).
MAX_LISTED = 50


def next_commands(folder: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(what it does, the shell command) for the steps after ``localeval generate``.

    The paths name the files in ``folder`` as it was given, quoted for a POSIX shell,
    so the commands can be pasted from where ``generate`` ran. ``localeval retrieval``
    takes a TREC run (``qid Q0 docid rank score tag``), which only the user's own
    retriever can write: its qids are the test set's ids and its docids the ids of
    chunks.jsonl, which the qrels name.
    """
    out = Path(folder)

    def q(name: str) -> str:
        return shlex.quote(str(out / name))

    return [
        ("Call your pipeline on each question (MODULE:FUNCTION is your function, "
         "e.g. my_rag:answer)",
         f"localeval answer {q('testset.jsonl')} --pipeline MODULE:FUNCTION -o answered.jsonl"),
        ("Evaluate its answers and contexts against the references",
         "localeval run answered.jsonl -o answered-run"),
        ("Evaluate your retriever: run.txt is its TREC run over the chunks of "
         f"{out / 'chunks.jsonl'} (qid Q0 chunk_id rank score tag, qid the row's id)",
         f"localeval retrieval run.txt {q('qrels.txt')}"),
    ]


def signature_pairs(sig: Mapping[str, Any], prefix: str = "") -> list[tuple[str, str]]:
    """The signature flattened to (``generator.judge``, value) pairs, values as text
    (lists and None as JSON), in the order summary.json holds them."""
    pairs: list[tuple[str, str]] = []
    for key, value in sig.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            pairs += signature_pairs(value, name + ".")
        elif isinstance(value, str):
            pairs.append((name, value))
        else:
            pairs.append((name, json.dumps(value, ensure_ascii=False, default=str)))
    return pairs


def _table(head: tuple[str, ...], rows: list[tuple[Any, ...]]) -> list[str]:
    """A GFM table; the first column is data (escaped), the others counts."""
    lines = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    for first, *rest in rows:
        lines.append("| " + " | ".join([escape_markdown(first), *map(str, rest)]) + " |")
    return lines + [""]


def _fence(text: str) -> str:
    """A code fence longer than any backtick run in ``text``."""
    longest = max((len(r) for r in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 3)


def render_testset_summary(summary: Mapping[str, Any],
                           folder: str | os.PathLike[str] = ".") -> str:
    """summary.md's text for the summary ``generate_testset`` wrote into ``folder``."""
    asked, kept = summary.get("asked", 0), summary.get("kept", 0)
    lines = [f"## localeval test set: {kept} of {asked} questions kept", ""]
    health = summary.get("generator_health") or []
    if health:
        lines += ["> **Generator health: signs of a weak generator.**"]
        lines += [f"> - {escape_markdown(h)}" for h in health] + [""]
    else:
        lines += ["No sign of a weak generator in what the filters dropped.", ""]
    notes = [str(n) for n in summary.get("notes") or []]
    lines += ["> **Notes:**"] if notes else []
    lines += [f"> - {escape_markdown(n)}" for n in notes[:MAX_LISTED]]
    if len(notes) > MAX_LISTED:
        lines.append(f"> - and {len(notes) - MAX_LISTED} more (summary.json lists them all)")
    lines += [""] if notes else []
    lines += _table(("", "count"), [
        ("questions asked", asked), ("written by the generator", summary.get("written", 0)),
        ("kept", kept), ("dropped", summary.get("dropped", 0)),
        ("documents", summary.get("documents", 0)), ("chunks", summary.get("chunks", 0)),
        ("files skipped", summary.get("skipped_files", 0))])
    reasons = summary.get("dropped_by_reason") or {}
    if reasons:
        lines += ["Dropped, by reason:", ""] + _table(("reason", "rows"), list(reasons.items()))
    kept_by = summary.get("kept_by_synthesizer") or {}
    dropped_by = summary.get("dropped_by_synthesizer") or {}
    synths = list(dict.fromkeys([*kept_by, *dropped_by]))
    if synths:
        lines += ["By synthesizer:", ""] + _table(
            ("synthesizer", "kept", "dropped"),
            [(s, kept_by.get(s, 0), dropped_by.get(s, 0)) for s in synths])
    langs = summary.get("kept_by_language") or {}
    if langs:
        lines += ["Kept, by language:", ""] + _table(("language", "kept"), list(langs.items()))
    without = list(summary.get("documents_without_question") or [])
    if without:
        named = ", ".join(code_span(d) for d in without[:MAX_LISTED])
        more = (f", and {len(without) - MAX_LISTED} more (summary.json lists them all)"
                if len(without) > MAX_LISTED else "")
        lines += [f"Documents without a question ({len(without)}): {named}{more}.", ""]
    stages = summary.get("stages") or []
    if stages:
        lines += ["Filters, in the order they ran:", "",
                  "| filter | checked | dropped | how |", "|---|---:|---:|---|"]
        lines += [f"| {escape_markdown(s.get('name', ''))} | {s.get('checked', 0)} | "
                  f"{s.get('dropped', 0)} | {escape_markdown(s.get('note', ''))} |"
                  for s in stages] + [""]
    sig = summary.get("signature") or {}
    if sig:
        lines += ["Signature (two test sets are comparable only when these agree):", ""]
        lines += [f"- {escape_markdown(k)}: {code_span(v)}" for k, v in signature_pairs(sig)]
        lines.append("")
    lines += ["Next: every row, its source chunks and the support of its reference are in "
              "testset.html.", ""]
    lines += ["How many questions a comparison of two versions needs: run both on these "
              "questions as a pilot, then `localeval diff --plan DELTA BASE NEW` says how many "
              "would show a change of DELTA with 80% power (docs/comparing-versions.md).", ""]
    for what, cmd in next_commands(folder):
        fence = _fence(cmd)
        lines += [f"{escape_markdown(what)}:", "", f"{fence}sh", cmd, fence, ""]
    return "\n".join(lines).rstrip("\n") + "\n"
