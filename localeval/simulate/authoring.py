"""Scenarios written by the judge: a goal per tool (``--from-tools``) or per document
section (``--from-docs``), filtered as generated questions are.

Each goal and its outcome is one judge step (``simulate_goal_tool`` or
``simulate_goal_doc``, ``schemas.ScenarioDraft``) with the tool's specification or
the section's text as the sample's one context. The drafts then go through
``generate``'s filters (``generate.filter_candidates``), the goal as the question and
the outcome as the reference: empty or looping text, an outcome that repeats the
goal, a goal that copies its tool or section, a copy of the prompt's example, a goal
in another language than asked, near-duplicate goals, and a goal its own tool or
section does not rank in the top ``ROUND_TRIP_K`` for (BM25 among all of them).
Nothing is taken on the judge's word; what was dropped is kept, with its reason.

Tools are read by ``dataset``'s table reader (JSON, JSONL: OpenAI's
``{"type": "function", "function": {"name", "description", "parameters"}}`` or the
bare ``{"name", "description", "parameters"}``); documents by ``corpus`` (a folder,
a file, a JSONL/CSV corpus), cut into sections as ``localeval generate`` cuts them.
"""

from __future__ import annotations

import json
import os
import random
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from localeval.corpus import Chunk, chunk_documents, read_corpus
from localeval.dataset import read_table
from localeval.errors import DataError, JudgeCallError
from localeval.generate import Candidate, filter_candidates
from localeval.simulate.scenarios import LANGS, Scenario
from localeval.simulate.schemas import DOC_STEP, TOOL_STEP, ScenarioDraft
from localeval.types import Sample

__all__ = ["Authored", "scenarios_from_tools", "scenarios_from_docs", "scenario_examples",
           "ROUND_TRIP_K"]

#: A written goal's own tool or section must rank in this many of all of them (BM25).
ROUND_TRIP_K = 3


@dataclass(frozen=True)
class Authored:
    """The scenarios kept, the drafts dropped (rows with ``dropped``) and the filters'
    health sentences."""

    kept: tuple[Scenario, ...]
    dropped: tuple[dict[str, Any], ...]
    health: tuple[str, ...]


def scenario_examples() -> list[str]:
    """The few-shot lines of the scenario prompts, in every language: what a copied
    example is compared with (rendered with and without the example, as the door does)."""
    from localeval.prompts import example_lines, render

    sample = Sample(id="example", contexts=["-"])
    lines: list[str] = []
    for step in (TOOL_STEP, DOC_STEP):
        for lang in LANGS:
            with_ex = render(step, sample, lang=lang, persona="", avoid=[])[0][-1]["content"]
            bare = render(step, sample, lang=lang, examples=False, persona="",
                          avoid=[])[0][-1]["content"]
            lines += [ln for ln in example_lines(with_ex, bare)
                      if ln.strip() and ln.strip() != "Example" and ln not in lines]
    return lines


def _tool_text(rec: dict[str, Any]) -> tuple[str, str]:
    inner = rec.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else rec
    name = fn.get("name")
    if not isinstance(name, str) or not name.strip():
        raise ValueError("a tool needs a name (OpenAI's {\"type\": \"function\", \"function\": "
                         "{\"name\", \"description\", \"parameters\"}} or the bare object)")
    text = f"{name}: {fn.get('description') or ''}".strip()
    params = fn.get("parameters")
    if params:
        text += "\nParameters: " + json.dumps(params, ensure_ascii=False, sort_keys=True)
    return name.strip(), text


def read_tools(path: str | os.PathLike[str], lang: str) -> list[Chunk]:
    """Each tool of ``path`` as a chunk (its name, description and parameters)."""
    table = read_table(path)
    chunks: list[Chunk] = []
    for n, rec in table.rows:
        try:
            name, text = _tool_text(rec)
        except ValueError as e:
            raise DataError(str(e), file=table.source, row=n, unit=table.unit) from None
        chunks.append(Chunk(id=f"tool:{name}", doc_id=name, position=0, text=text, lang=lang,
                            char_start=0, char_end=len(text)))
    if not chunks:
        raise DataError("no tools: the file holds no tool specification", file=table.source)
    return chunks


def scenarios_from_tools(path: str | os.PathLike[str], judging: Any, *, lang: str = "en",
                         personas: Sequence[str] = (), n: int | None = None,
                         seed: int = 0) -> Authored:
    """A scenario per tool of ``path`` (at most ``n``), written by the judge and filtered."""
    chunks = read_tools(path, lang)
    return _author(chunks, TOOL_STEP, "tool", judging, lang, personas, n, seed)


def scenarios_from_docs(path: str | os.PathLike[str], judging: Any, *, lang: str | None = None,
                        personas: Sequence[str] = (), n: int | None = None, seed: int = 0,
                        on_note: Callable[[str], None] | None = None) -> Authored:
    """A scenario per section of the documents ``path`` (at most ``n``, chosen by ``seed``)."""
    chunks = chunk_documents(read_corpus(path, on_note=on_note), on_note=on_note)
    if not chunks:
        raise DataError("no sections: the documents hold no text", file=str(path))
    return _author(chunks, DOC_STEP, "doc", judging, lang, personas, n, seed)


def _author(chunks: list[Chunk], step: str, kind: str, judging: Any, lang: str | None,
            personas: Sequence[str], n: int | None, seed: int) -> Authored:
    picked = list(range(len(chunks)))
    if n is not None and n < len(picked):
        picked = sorted(random.Random(f"{seed}:scenarios").sample(picked, n))
    drafts: list[Candidate] = []
    for k, i in enumerate(picked):
        c = chunks[i]
        want = lang or (c.lang if c.lang in LANGS else "en")
        persona = personas[k % len(personas)] if personas else ""
        base = Candidate(id=f"{kind}-{k + 1}", question="", reference="", contexts=(c.text,),
                         chunk_ids=(c.id,), doc_ids=(c.doc_id,), synthesizer=f"scenario_{kind}",
                         lang=want, persona=persona or None)
        door = judging.for_sample(lang=want)
        try:
            out = door.ask(step, ScenarioDraft, Sample(id=base.id, contexts=[c.text]),
                           persona=persona, avoid=[]).output
        except JudgeCallError as e:
            # the door asked again without the example and the judge copied it again: the
            # filters' own reason, so the copies are counted together
            copied = "copied the prompt's example" in str(e)
            drafts.append(base.drop("copies_example" if copied else f"judge failed: {e}"))
            continue
        drafts.append(replace(base, question=out.goal.strip(), reference=out.outcome.strip()))
    result = filter_candidates(drafts, chunks, k=min(ROUND_TRIP_K, len(chunks)), lang=lang,
                               examples=scenario_examples())
    kept = tuple(Scenario(id=c.id, goal=c.question, persona=c.persona or "", lang=c.lang,
                          reference=c.reference,
                          extra={"source": {"kind": kind, "id": c.doc_ids[0],
                                            "text": c.contexts[0]}})
                 for c in result.kept)
    dropped = tuple({"id": c.id, "goal": c.question, "reference": c.reference, "lang": c.lang,
                     "dropped": c.dropped, "source": c.doc_ids[0]} for c in result.dropped)
    health = tuple(h.replace("questions", "goals").replace("question", "goal")
                   for h in result.health)
    return Authored(kept, dropped, health)
