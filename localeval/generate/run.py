"""``generate_testset``: documents in, a filtered test set out (``localeval generate``).

The parts chained: ``corpus.read_corpus`` and ``chunk_documents``, the judge and
embedder built as ``localeval run`` builds them (``run.build_judge``,
``run.build_embedder``), ``synthesize`` through a ``metrics.Judging`` door,
``filter_candidates``, and the files of ``outputs``. Fewer rows than asked for is
an honest short test set whose summary says why, never an error.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from localeval.errors import InvalidArgument, ModelError
from localeval.generate.candidates import SYNTHESIZERS, Candidate
from localeval.generate.checkpoint import Checkpoint
from localeval.generate.filters import filter_candidates
from localeval.generate.filters_health import door_copy_health
from localeval.generate.outputs import write_testset_files
from localeval.generate.planning import counts
from localeval.generate.synthesis import PER_CHUNK, STEPS, prompt_examples, synthesize
from localeval.output import SETTINGS_KEY, OutputPolicy, settings_record
from localeval.run import RunProgress

__all__ = ["generate_testset", "TestsetResult", "parse_distribution"]

#: Short names ``--distribution`` accepts for the synthesizers.
SHORT_NAMES = {"single": "single_hop_specific", "multi": "multi_hop_specific",
               "abstract": "multi_hop_abstract"}


@dataclass(frozen=True)
class TestsetResult:
    """What ``generate_testset`` wrote and why it holds fewer rows than asked, if it does."""

    out: Path
    asked: int
    kept: tuple[Candidate, ...]
    dropped: tuple[Candidate, ...]
    counts: dict[str, int]
    health: tuple[str, ...]
    summary: dict[str, Any]
    files: dict[str, Path] = field(default_factory=dict)

    def shortfall(self) -> str | None:
        """One sentence when fewer rows were kept than asked for; None otherwise."""
        if len(self.kept) >= self.asked:
            return None
        why = ", ".join(f"{r}: {n}" for r, n in self.counts.items()) or "no candidates written"
        return (f"kept {len(self.kept)} of the {self.asked} questions asked for "
                f"(dropped: {why}); see {self.out / 'dropped.jsonl'}")


def parse_distribution(spec: str | Mapping[str, float] | None) -> dict[str, float] | None:
    """``"single=0.5,multi=0.25,abstract=0.25"`` (or full synthesizer names) -> a mapping."""
    if spec is None or isinstance(spec, Mapping):
        return None if spec is None else {SHORT_NAMES.get(k, k): float(v) for k, v in spec.items()}
    out: dict[str, float] = {}
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        name, eq, value = part.partition("=")
        name = SHORT_NAMES.get(name.strip(), name.strip())
        if not eq or name not in SYNTHESIZERS:
            raise InvalidArgument(f"--distribution: {part!r} is not NAME=SHARE with NAME one of "
                                  f"{', '.join([*SHORT_NAMES, *SYNTHESIZERS])}")
        try:
            out[name] = float(value)
        except ValueError:
            raise InvalidArgument(f"--distribution: {value!r} is not a number") from None
    return out


def generate_testset(docs: str | os.PathLike[str], n: int, out: str | os.PathLike[str], *,
                     judge: Any = None, embedder: Any = None, seed: int = 0,
                     distribution: str | Mapping[str, float] | None = None, k: int = 5,
                     max_chars: int = 1500, min_chars: int = 20, overlap_sentences: int = 0,
                     personas: Sequence[str] | None = None, styles: Sequence[str] | None = None,
                     judge_options: dict[str, Any] | None = None, cache: Any = True,
                     device: str | None = None, parallel: int | str | None = None,
                     progress: bool | None = None, overwrite: bool = False,
                     on_note: Callable[[str], None] | None = None) -> TestsetResult:
    """Write a test set of about ``n`` questions from the documents ``docs`` into ``out``.

    ``judge``: a Judge or any spec ``localeval run`` takes (``"demo"``, a GGUF, a URL;
    None: the single GGUF in models/); ``embedder``: an embedder, a spec, None (the
    default one) or False (none: multi-hop pairs by shared rare words, round trip by
    BM25). Writes testset.jsonl/.csv, dropped.jsonl, qrels.txt, chunks.jsonl,
    summary.json, summary.md and testset.html (docs/test-sets.md).

    ``parallel``: questions the in-process judge writes at once (as ``localeval run
    --parallel``; default "auto"); a judge that serves several calls at once is
    asked that many at once. Each question is kept in ``candidates.partial.jsonl``
    as it is written, so an interrupted call, made again, asks only for the rest
    (``checkpoint``). ``progress``: None shows a bar on a terminal (a line every
    30 s in a log), False nothing.

    Every option, the corpus and the models are checked before anything is
    written; ``out`` may not be or lie inside the documents (the next call would
    read the test set as a document), and a test set ``out`` holds that was
    written with other settings is replaced only with ``overwrite``
    (``output.OutputPolicy``). ``embedder`` None chooses as ``localeval run``
    does (``run.choose_embedder``: multilingual for Japanese or Chinese text),
    said in a note and in summary.json's signature.
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidArgument(f"-n must be a whole number of questions, 1 or more, not {n!r}")
    if k < 1:
        raise InvalidArgument(f"--k must be 1 or more, not {k!r}")
    shares = parse_distribution(distribution)
    counts(n, shares)  # a bad distribution fails here, before anything is read or written
    synthesize([], 0, judging=None, personas=personas, styles=styles)  # bad personas/styles
    from localeval.corpus import chunk_documents, corpus_hash, read_corpus

    policy = OutputPolicy([docs, _cache_file(cache)], overwrite=overwrite)
    folder = policy.check(out, folder=True)  # -o inside the documents: refused before reading
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        if on_note is not None:
            on_note(text)

    corpus = read_corpus(docs, on_note=on_note)
    chunks = chunk_documents(corpus, max_chars=max_chars, min_chars=min_chars,
                             overlap_sentences=overlap_sentences, on_note=on_note)
    options = dict(judge_options or {})
    if parallel is not None:
        options["parallel"] = parallel
    loaded_judge, loaded_embedder = _models(judge, embedder, options, cache, device,
                                            [c.text for c in chunks], note)
    from localeval.metrics import Judging

    capacity = max(1, int(getattr(loaded_judge, "capacity", 1) or 1))
    judging = Judging(loaded_judge, loaded_embedder, seed=seed, fanout=capacity)
    hash_ = corpus_hash(corpus)
    chunking = {"max_chars": max_chars, "min_chars": min_chars,
                "overlap_sentences": overlap_sentences}
    key = _checkpoint_key(loaded_judge, hash_, chunking, seed=seed, n=n, distribution=shares,
                          personas=personas, styles=styles, embedder=loaded_embedder)
    settings = {**key, "k": k}
    policy.check_settings(folder / "summary.json", settings)  # a set of other settings: kept
    policy.folder(folder)  # made only now: every option and model has been checked
    checkpoint = Checkpoint(folder, key, on_note=note, policy=policy)
    if checkpoint.earlier:
        note(f"resuming: {len(checkpoint.earlier)} questions written before are taken from "
             f"{checkpoint.path}")
    started = time.perf_counter()
    distinct = len({c.id for c in chunks})
    bar = RunProgress(min(n, PER_CHUNK * distinct), enabled=progress,
                      description="writing questions", usage=judging.usage, unit="questions")

    def ready(c: Candidate, resumed: bool) -> None:
        if not resumed:
            checkpoint.add(c)
        bar.update(judging.usage)

    try:
        checkpoint.open()
        candidates = synthesize(chunks, n, judging=judging, embedder=loaded_embedder,
                                seed=seed, distribution=shares, personas=personas,
                                styles=styles, parallel=capacity, done=checkpoint.earlier,
                                on_candidate=ready, on_note=note)
    finally:
        bar.close()
        checkpoint.close()
    usage = {"synthesis": _phase(judging.usage.to_dict(), started)}
    started, before = time.perf_counter(), judging.usage.to_dict()
    bars: list[RunProgress] = []

    def on_stage(name: str, total: int) -> Callable[[], None]:
        bar = RunProgress(total, enabled=progress, description="checking references",
                          usage=judging.usage, unit="questions")
        bars.append(bar)
        return lambda: bar.update(judging.usage)

    try:
        result = filter_candidates(candidates, chunks, embedder=loaded_embedder,
                                   judging=judging, k=k, examples=prompt_examples(),
                                   on_stage=on_stage)
    finally:
        for b in bars:
            b.close()
    usage["filters"] = _phase(_minus(judging.usage.to_dict(), before), started)
    summary = _summary(corpus, chunks, candidates, result, loaded_judge, loaded_embedder, n,
                       seed=seed, distribution=shares, k=k, chunking=chunking, docs=docs,
                       hash_=hash_)
    health = (*result.health, *door_copy_health(usage["synthesis"]))
    summary["generator_health"] = list(health)
    summary["usage"] = usage
    summary["notes"] = notes
    summary["signature"]["prompts"] = dict(sorted(judging.prompt_versions.items()))
    summary[SETTINGS_KEY] = settings_record(settings)
    files = write_testset_files(folder, result.kept, result.dropped, chunks, summary)
    checkpoint.remove()
    return TestsetResult(folder, n, result.kept, result.dropped, dict(result.counts),
                         health, summary, files)


def _checkpoint_key(judge: Any, corpus_hash: str, chunking: dict[str, int], *, seed: int, n: int,
                    distribution: Any, personas: Any, styles: Any,
                    embedder: Any) -> dict[str, Any]:
    """What the questions of a checkpoint were written for (``checkpoint.Checkpoint``)."""
    from localeval.prompts import prompt_version

    return {"generator": _judge_signature(judge), "corpus_hash": corpus_hash,
            "chunking": chunking, "seed": seed, "n": n, "distribution": distribution,
            "personas": list(personas or []), "styles": None if styles is None else list(styles),
            "embedder": _embedder_name(embedder),
            "prompts": {step: prompt_version(step) for step in STEPS.values()}}


def _judge_signature(judge: Any) -> dict[str, Any]:
    if hasattr(judge, "signature"):
        return dict(judge.signature())
    return {"judge": getattr(judge, "name", None),
            "fingerprint": getattr(judge, "fingerprint", None)}


def _embedder_name(embedder: Any) -> str | None:
    return None if embedder is None else getattr(embedder, "name", type(embedder).__name__)


def _phase(usage: dict[str, Any], started: float) -> dict[str, Any]:
    """A phase's judge usage with its wall-clock seconds (judge time is ``seconds``)."""
    return {**usage, "wall_seconds": round(time.perf_counter() - started, 3)}


def _minus(after: dict[str, Any], before: dict[str, Any]) -> dict[str, Any]:
    return {k: round(v - before.get(k, 0), 3) if isinstance(v, (int, float)) else v
            for k, v in after.items()}


def _models(judge: Any, embedder: Any, options: dict[str, Any] | None, cache: Any,
            device: str | None, texts: Sequence[str],
            note: Callable[[str], None]) -> tuple[Any, Any]:
    """The judge, and the embedder chosen as ``localeval run`` chooses (``choose_embedder``:
    a multilingual one for Japanese or Chinese chunks), each choice said through ``note``."""
    from localeval.config import run_config
    from localeval.run import build_embedder, build_judge, choose_embedder, open_cache

    store = open_cache(cache)
    if judge is False:
        raise ModelError("localeval generate needs a judge to write the questions")
    loaded = build_judge(judge, store, options)
    if loaded is None:
        raise ModelError("localeval generate needs a judge to write the questions, and none "
                         "was found: give --judge (demo, a GGUF file, a name from 'localeval "
                         "models list' or an http(s):// URL), or put one GGUF in models/")
    if embedder is not None and isinstance(embedder, str) and embedder.lower() == "none":
        embedder = False
    dev = run_config(device=device).device
    chosen, said = choose_embedder(embedder, texts, lambda e: build_embedder(e, store, dev))
    for text in said:
        note(text)
    return loaded, chosen


def _cache_file(cache: Any) -> Any:
    """The cache file a ``cache`` argument names (an input: -o may not be it), else None."""
    if cache is True or cache is None:
        from localeval.cache import default_cache_path

        return default_cache_path()
    return cache if isinstance(cache, (str, os.PathLike)) else None


def _summary(corpus: Any, chunks: Sequence[Any], candidates: Sequence[Candidate], result: Any,
             judge: Any, embedder: Any, n: int, *, seed: int, distribution: Any, k: int,
             chunking: dict[str, int], docs: Any, hash_: str) -> dict[str, Any]:
    from localeval.version import __version__

    kept, dropped = result.kept, result.dropped
    used = {d for c in kept for d in c.doc_ids}
    return {
        "asked": n, "written": len(candidates), "kept": len(kept), "dropped": len(dropped),
        "dropped_by_reason": dict(result.counts),
        "kept_by_synthesizer": dict(Counter(c.synthesizer for c in kept)),
        "dropped_by_synthesizer": dict(Counter(c.synthesizer for c in dropped)),
        "kept_by_language": dict(Counter(c.lang for c in kept)),
        "documents": len(corpus.documents), "chunks": len(chunks),
        "documents_without_question": sorted(d.id for d in corpus.documents if d.id not in used),
        "skipped_files": len(corpus.skipped),
        "stages": [s.to_dict() for s in result.stages],
        "generator_health": list(result.health),
        "signature": {
            "generator": _judge_signature(judge),
            "embedder": _embedder_name(embedder),
            "seed": seed, "distribution": distribution, "k": k,
            "corpus": str(docs), "corpus_hash": hash_,
            "chunking": chunking,
            "localeval": __version__},
    }
