"""``generate_testset``: documents in, a filtered test set out (``localeval generate``).

The parts chained: ``corpus.read_corpus`` and ``chunk_documents``, the judge and
embedder built as ``localeval run`` builds them (``run.build_judge``,
``run.build_embedder``), ``synthesize`` through a ``metrics.Judging`` door,
``filter_candidates``, and the files of ``outputs``. Fewer rows than asked for is
an honest short test set whose summary says why, never an error.
"""

from __future__ import annotations

import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from localeval.errors import InvalidArgument, ModelError
from localeval.generate.candidates import SYNTHESIZERS, Candidate
from localeval.generate.filters import filter_candidates
from localeval.generate.outputs import write_testset_files
from localeval.generate.synthesis import synthesize

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
                     device: str | None = None,
                     on_note: Callable[[str], None] | None = None) -> TestsetResult:
    """Write a test set of about ``n`` questions from the documents ``docs`` into ``out``.

    ``judge``: a Judge or any spec ``localeval run`` takes (``"demo"``, a GGUF, a URL;
    None: the single GGUF in models/); ``embedder``: an embedder, a spec, None (the
    default one) or False (none: multi-hop pairs by shared rare words, round trip by
    BM25). Writes testset.jsonl/.csv, dropped.jsonl, qrels.txt, chunks.jsonl and
    summary.json (docs/test-sets.md).
    """
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise InvalidArgument(f"-n must be a whole number of questions, 1 or more, not {n!r}")
    if k < 1:
        raise InvalidArgument(f"--k must be 1 or more, not {k!r}")
    shares = parse_distribution(distribution)
    from localeval.corpus import chunk_documents, corpus_hash, read_corpus
    from localeval.results import make_output_folder

    corpus = read_corpus(docs, on_note=on_note)
    chunks = chunk_documents(corpus, max_chars=max_chars, min_chars=min_chars,
                             overlap_sentences=overlap_sentences, on_note=on_note)
    folder = Path(out)
    make_output_folder(folder)
    loaded_judge, loaded_embedder = _models(judge, embedder, judge_options, cache, device)
    from localeval.metrics import Judging

    judging = Judging(loaded_judge, loaded_embedder, seed=seed)
    candidates = synthesize(chunks, n, judging=judging, embedder=loaded_embedder, seed=seed,
                            distribution=shares, personas=personas, styles=styles)
    # synthesis does not expose its prompts' few-shot strings, so the filters'
    # copied-example check does not run here (the judge door still checks each reply)
    result = filter_candidates(candidates, chunks, embedder=loaded_embedder, judging=judging,
                               k=k)
    summary = _summary(corpus, chunks, candidates, result, loaded_judge, loaded_embedder, n,
                       seed=seed, distribution=shares, k=k, max_chars=max_chars,
                       min_chars=min_chars, overlap=overlap_sentences, docs=docs,
                       hash_=corpus_hash(corpus))
    files = write_testset_files(folder, result.kept, result.dropped, chunks, summary)
    return TestsetResult(folder, n, result.kept, result.dropped, dict(result.counts),
                         tuple(result.health), summary, files)


def _models(judge: Any, embedder: Any, options: dict[str, Any] | None, cache: Any,
            device: str | None) -> tuple[Any, Any]:
    from localeval.config import run_config
    from localeval.run import build_embedder, build_judge, open_cache

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
    return loaded, build_embedder(embedder, store, dev)


def _summary(corpus: Any, chunks: Sequence[Any], candidates: Sequence[Candidate], result: Any,
             judge: Any, embedder: Any, n: int, *, seed: int, distribution: Any, k: int,
             max_chars: int, min_chars: int, overlap: int, docs: Any,
             hash_: str) -> dict[str, Any]:
    from localeval.version import __version__

    kept, dropped = result.kept, result.dropped
    used = {d for c in kept for d in c.doc_ids}
    judge_sig = judge.signature() if hasattr(judge, "signature") else {
        "judge": getattr(judge, "name", None), "fingerprint": getattr(judge, "fingerprint", None)}
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
            "generator": {k2: v for k2, v in judge_sig.items()},
            "embedder": None if embedder is None else getattr(embedder, "name", type(embedder).__name__),
            "seed": seed, "distribution": distribution, "k": k,
            "corpus": str(docs), "corpus_hash": hash_,
            "chunking": {"max_chars": max_chars, "min_chars": min_chars,
                         "overlap_sentences": overlap},
            "localeval": __version__},
    }
