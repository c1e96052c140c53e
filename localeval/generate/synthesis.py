"""``synthesize``: questions and their reference answers written from chunks by the judge.

Three synthesizers, named as ragas names them:

- ``single_hop_specific``: one chunk; a question one of its facts answers;
- ``multi_hop_specific``: two related chunks (``pairing``); a question that needs a
  fact of each;
- ``multi_hop_abstract``: several chunks of one document, in order; a question
  about them as a whole (a theme, a comparison, a change).

Each question is one call of the judge door (``localeval.metrics.Judging.ask``),
so the prompt is rendered from the step's template (``prompts/synth_*.j2``) in the
chunks' language, the reply is held by the grammar to ``schemas.QuestionAnswer``,
cached, counted and checked against the prompt's example like a metric's. The
sample the door sees holds only the contexts: the chunks' verbatim texts.

Everything is decided from the chunks and the seed (``planning``): the same
chunks, seed and judge give the same candidates, with the same ids.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from dataclasses import replace
from typing import Any, Callable, Mapping, Sequence

from localeval.corpus import Chunk
from localeval.errors import InvalidArgument, JudgeCallError
from localeval.generate.candidates import SYNTHESIZERS, Candidate
from localeval.generate.checkpoint import JUDGE_FAILED
from localeval.generate.jobs import Job, run_jobs
from localeval.generate.pairing import Partner, related_chunks
from localeval.generate.planning import Rotation, counts, interleave
from localeval.generate.schemas import qa_schema
from localeval.types import Sample

__all__ = ["synthesize", "STYLES", "STEPS", "ABSTRACT_CHUNKS", "ABSTRACT_CHARS", "AVOID",
           "PER_CHUNK", "prompt_examples"]

#: The query styles (ragas's names); each template says what each one means.
STYLES = ("perfect grammar", "web search like", "poor grammar", "misspelled")
#: The judge step (prompt template) of each synthesizer.
STEPS = {s: f"synth_{s}" for s in SYNTHESIZERS}
#: An abstract question is written from at most this many chunks of one document ...
ABSTRACT_CHUNKS = 3
#: ... holding at most this many characters (but always at least two chunks).
ABSTRACT_CHARS = 4000
#: A prompt lists at most this many questions already written from the same chunks.
AVOID = 5
#: A corpus gives at most this many questions a chunk: more would repeat themselves.
PER_CHUNK = 3


def synthesize(chunks: Sequence[Chunk], n: int, *, judging: Any, embedder: Any = None,
               seed: int = 0, distribution: Mapping[str, float] | None = None,
               personas: Sequence[str] | None = None,
               styles: Sequence[str] | None = None, parallel: int = 1,
               done: Mapping[str, Candidate] | None = None,
               on_candidate: Callable[[Candidate, bool], None] | None = None,
               on_note: Callable[[str], None] | None = None) -> list[Candidate]:
    """``n`` candidate questions written by the judge from ``chunks`` (docs/test-sets.md).

    ``judging`` is a ``localeval.metrics.Judging`` door with a judge; ``embedder``
    (a ``localeval.embed`` embedder) relates the chunks of multi-hop questions,
    else shared rare words do. ``distribution`` maps synthesizer names to shares
    (default 50/25/25); ``personas`` (short descriptions of users) and ``styles``
    (of ``STYLES``) are handed out in turn from a seeded start. A call the judge
    fails gives a dropped candidate that says why.

    A small corpus gives at most ``PER_CHUNK`` questions a chunk (said through
    ``on_note``). ``parallel``: questions asked at once (threads; a judge that
    serves several calls at once, ``Judge.capacity``); ``done``: candidates an
    earlier, interrupted run wrote, by id, taken as they are; ``on_candidate(c,
    resumed)`` is called as each candidate is ready. The result is the same, in
    the same order, at any ``parallel`` and from any resumed state.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise InvalidArgument(f"n must be a whole number of questions, 0 or more, not {n!r}")
    personas = _checked_list("personas", personas, None)
    styles = _checked_list("styles", styles, STYLES)
    chunks = sorted({c.id: c for c in chunks}.values(), key=lambda c: (c.doc_id, c.position, c.id))
    if n == 0 or not chunks:
        return []
    if n > PER_CHUNK * len(chunks):
        if on_note is not None:
            on_note(f"the corpus's {len(chunks)} chunks can give at most "
                    f"{PER_CHUNK * len(chunks)} questions ({PER_CHUNK} a chunk); writing "
                    f"{PER_CHUNK * len(chunks)} of the {n} asked for")
        n = PER_CHUNK * len(chunks)
    jobs = _plan(chunks, n, seed, distribution, embedder, personas, styles)
    return run_jobs(jobs, lambda job, avoid: _write(judging, job, avoid), parallel=parallel,
                    done=done or {}, on_candidate=on_candidate, avoid_last=AVOID)


def _plan(chunks: list[Chunk], n: int, seed: int, distribution: Mapping[str, float] | None,
          embedder: Any, personas: list[str], styles: list[str]) -> list[Job]:
    """Every question to ask, in order: its id, synthesizer, chunks, persona and style.

    Decided from the chunks and the seed alone, before the judge writes anything,
    so the plan (and every id) is the same however the asking goes."""
    rotation = Rotation(chunks, seed)
    partners: list[tuple[Partner, ...]] = [() for _ in chunks]
    if counts(n, distribution)["multi_hop_specific"]:
        partners = related_chunks(chunks, embedder)
    feasible = [s for s in SYNTHESIZERS if _serves(s, rotation, partners)]
    plan = interleave(counts(n, distribution, feasible=feasible))
    turns = random.Random(f"{seed}:turns")
    persona_start = turns.randrange(len(personas)) if personas else 0
    style_start = turns.randrange(len(styles)) if styles else 0
    seen: dict[str, int] = defaultdict(int)
    jobs = []
    for k, synthesizer in enumerate(plan):
        used = tuple(chunks[i] for i in _pick(synthesizer, rotation, partners))
        key = "\n".join([*(c.id for c in used), synthesizer])
        cid = "q-" + hashlib.sha256(f"{key}\n{seen[key]}".encode()).hexdigest()[:16]
        seen[key] += 1
        jobs.append(Job(cid, synthesizer, used,
                        personas[(persona_start + k) % len(personas)] if personas else None,
                        styles[(style_start + k) % len(styles)] if styles else None))
    return jobs


#: The per-call inputs of a synthesis prompt, empty (to render its example alone).
_NO_INPUTS: dict[str, Any] = {"persona": "", "style": "", "avoid": []}


def prompt_examples(langs: Sequence[str] = ("en", "ja", "zh")) -> list[str]:
    """The few-shot lines of every synthesizer's prompt, in every language: what the
    filters' copied-example check compares questions and references with. A question
    that copies any prompt's example is a copy, whichever prompt it answered.

    Found by rendering each template with and without its example, as the judge
    door does, so they never go stale when a template changes."""
    from localeval.prompts import example_lines, render

    sample = Sample(id="example", contexts=["-"])
    lines: list[str] = []
    for step in STEPS.values():
        for lang in langs:
            with_ex = render(step, sample, lang=lang, examples=True, **_NO_INPUTS)[0][-1]["content"]
            without = render(step, sample, lang=lang, examples=False, **_NO_INPUTS)[0][-1]["content"]
            lines += [ln for ln in example_lines(with_ex, without)
                      if ln.strip() and ln.strip() != "Example" and ln not in lines]
    return lines


def _checked_list(name: str, values: Sequence[str] | None,
                  allowed: Sequence[str] | None) -> list[str]:
    if values is None:
        return []
    if isinstance(values, str):
        values = [values]
    out = list(values)
    for v in out:
        if not isinstance(v, str) or not v.strip():
            raise InvalidArgument(f"{name} must be non-empty strings, got {v!r}")
        if allowed is not None and v not in allowed:
            raise InvalidArgument(f"unknown style {v!r}; known: {', '.join(allowed)}")
    return out


def _serves(synthesizer: str, rotation: Rotation, partners: list[tuple[Partner, ...]]) -> bool:
    return rotation.next_document(lambda d: _able(synthesizer, d, rotation, partners)) is not None


def _able(synthesizer: str, doc: str, rotation: Rotation,
          partners: list[tuple[Partner, ...]]) -> bool:
    members = rotation.by_doc[doc]
    if synthesizer == "multi_hop_specific":
        return any(partners[i] for i in members)
    if synthesizer == "multi_hop_abstract":
        return len(members) >= 2
    return True


def _pick(synthesizer: str, rotation: Rotation, partners: list[tuple[Partner, ...]]) -> list[int]:
    """The chunks (indexes, in corpus order) of the next question of ``synthesizer``."""
    doc = rotation.next_document(lambda d: _able(synthesizer, d, rotation, partners))
    assert doc is not None  # the plan holds only synthesizers some document serves
    members = rotation.by_doc[doc]
    if synthesizer == "single_hop_specific":
        picked = rotation.order(members)[:1]
    elif synthesizer == "multi_hop_specific":
        anchor = rotation.order(i for i in members if partners[i])[0]
        rank = {p.index: r for r, p in enumerate(partners[anchor])}
        partner = min(rank, key=lambda j: (rotation.chunk_uses[j], rank[j]))
        picked = sorted([anchor, partner])
    else:
        picked = _window(rotation, members, rotation.order(members)[0])
    rotation.use(doc, picked)
    return picked


def _window(rotation: Rotation, members: list[int], start: int) -> list[int]:
    """Consecutive chunks of one document from ``start`` on (back from the end when it
    is near the end), at most ``ABSTRACT_CHUNKS`` and ``ABSTRACT_CHARS``, at least two."""
    at = members.index(start)
    window = [start]
    ahead, behind = members[at + 1:], members[:at][::-1]
    chars = len(rotation.chunks[start].text)
    for i in ahead + behind:
        size = len(rotation.chunks[i].text)
        if len(window) >= ABSTRACT_CHUNKS or (len(window) >= 2 and chars + size > ABSTRACT_CHARS):
            break
        window.append(i)
        chars += size
    return sorted(window)


def _write(judging: Any, job: Job, avoid: list[str]) -> Candidate:
    """Ask the judge for one question and its answer; a failed call is a dropped candidate."""
    cid, synthesizer, used, persona, style = (job.id, job.synthesizer, job.chunks, job.persona,
                                              job.style)
    lang = used[0].lang
    texts = [c.text for c in used]
    base = Candidate(id=cid, question="", reference="", contexts=tuple(texts),
                     chunk_ids=tuple(c.id for c in used),
                     doc_ids=tuple(dict.fromkeys(c.doc_id for c in used)),
                     synthesizer=synthesizer, lang=lang, persona=persona, style=style)
    door = judging.for_sample(lang=lang)
    sample = Sample(id=cid, contexts=list(texts))
    schema = qa_schema(sum(len(t) for t in texts))
    try:
        reply = door.ask(STEPS[synthesizer], schema, sample, persona=persona or "",
                         style=style or "", avoid=list(avoid))
    except JudgeCallError as e:
        return base.drop(f"{JUDGE_FAILED}: {e}")
    question, answer = reply.output.question.strip(), reply.output.answer.strip()
    filled = replace(base, question=question, reference=answer)
    if not question:
        return filled.drop("the judge wrote no question")
    if not answer:
        return filled.drop("the judge wrote no answer")
    return filled
