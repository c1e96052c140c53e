"""A run never replaces another run's folder by accident.

Each run rewrites its output folder whole (``results.jsonl`` from its first
line, then summary.json and the reports). Running the same command again is how
a stopped run resumes: the judge cache answers every call already made, so that
must keep working. But a run of other data, or scored another way, into the
folder of an earlier run (the default ``localeval-out`` makes that easy) would
silently replace it. So, under the folder's lock and before anything is written,
the new run is compared with the run the folder holds, part by part of the run's identity
(``results.Identity``, the one list of what makes a run the run it is, also
behind the default folder's key):

- before any model loads (``check_request``): the "request" parts: the
  dataset's content hash (``dataset.data_version``), the metrics (and the
  user-defined ones' definitions), the seed, verdict and reasons modes,
  language, repeats and the localeval version (which fixes the prompt templates);
- once the models are loaded, before the judge check (``check_models``): the
  judge's and the embedder's fingerprints (not with ``workers``/``ray``, whose
  judges other processes load).

Any difference is one ``UsageError`` (exit 2) naming each, that nothing was
written, and the ways out: another folder, or ``--overwrite``. Not compared: the
``--limit``/``--sample`` subset (a trial of a few rows and the run of all of them
are one run growing, over the same cache), the name and tags, and the run's
speed settings. A folder whose summary.json cannot be read, or is not a run's,
is refused too (it may be anything); one whose run stopped before writing its
summary.json (killed) may be resumed if every line of its results.jsonl is a
sample of this dataset with this run's metrics.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Any, Mapping, Sequence

from localeval.dataset import Dataset, DataVersion
from localeval.errors import DataError, UsageError, printable
from localeval.results import (
    CONTENT_FIELDS,
    RESULTS_FILE,
    SUMMARY_FILE,
    Identity,
    RunRecord,
    SignatureEntry,
    read_record,
    sample_content,
)

__all__ = ["FolderRule", "requested_identity"]



class FolderRule:
    """The run the output folder holds, and the check that a new run may replace it."""

    def __init__(self, folder: Path, *, overwrite: bool = False, name: str | None = None,
                 options_as: str = "python") -> None:
        self.folder = folder
        self.overwrite = overwrite
        self.name = name
        self.cli = options_as == "cli"
        #: the record of the run the folder holds (None: none, or not readable)
        self.old: RunRecord | None = None
        #: why the folder's summary.json cannot be taken for a run's
        self.unreadable: str | None = None
        #: the folder holds results.jsonl lines and no summary.json (a killed run)
        self.partial = False
        if overwrite:
            return
        if (folder / SUMMARY_FILE).exists():
            try:
                self.old = read_record(folder)
            except DataError as e:
                self.unreadable = str(e)
        else:
            results = folder / RESULTS_FILE
            self.partial = results.is_file() and results.stat().st_size > 0

    def check_request(self, ds: Dataset, data: DataVersion, metrics: Sequence[str], *,
                      version: str, seed: int, verdicts: str, lang: str, repeats: int,
                      reasons: str = "full",
                      definitions: Mapping[str, str] | None = None) -> None:
        """Refuse (UsageError) when the folder holds a run of other data or settings.

        ``definitions``: the user-defined metrics' definition hashes known before the
        run (``metrics.known_versions``), compared with those the folder's signature
        recorded among its prompt versions: an edited criterion is another run."""
        if self.unreadable is not None:
            self._refuse([f"its summary.json is not a run's that can be read "
                          f"({self.unreadable})"], "something else")
        if self.partial:
            why = _partial_differs(self.folder / RESULTS_FILE, ds, set(metrics))
            if why:
                self._refuse([why], "a run that stopped before writing its summary.json")
        if self.old is None:
            return
        here = requested_identity(data, metrics, definitions or {}, version=version, seed=seed,
                                  verdicts=verdicts, lang=lang, repeats=repeats,
                                  reasons=reasons)
        diffs = self.old.identity.refusals(here, "request")
        if diffs:
            self._refuse(diffs, _described(self.old))

    def check_models(self, judge: Any, embedder: Any, *, pooled: bool) -> None:
        """Refuse when the folder's run had another judge or embedder (models loaded here);
        ``pooled``: the judges are loaded by other processes, so only the embedder is compared."""
        if self.old is None:
            return
        here = Identity(SignatureEntry(
            judge=getattr(judge, "name", None), judge_fingerprint=getattr(judge, "fingerprint", None),
            embedder=getattr(embedder, "name", None),
            embedder_fingerprint=getattr(embedder, "fingerprint", None)))
        diffs = self.old.identity.refusals(here, "models", skip=("judge",) if pooled else ())
        if diffs:
            self._refuse(diffs, _described(self.old))

    def _refuse(self, diffs: list[str], what: str) -> None:
        other = self.folder / (self.name or date.today().isoformat())
        out, over = ((f"-o {other}", "--overwrite") if self.cli else
                     (f"out_dir={str(other)!r}", "overwrite=True"))
        raise UsageError(f"{self.folder} holds another run ({what}), which this one would "
                         f"replace: {'; '.join(diffs)}. Nothing was written. To keep it, "
                         f"write this run to another folder ({out}); to replace it, "
                         f"add {over}.")


def requested_identity(data: DataVersion, metrics: Sequence[str], definitions: Mapping[str, str],
                       *, version: str, seed: int, verdicts: str, lang: str, repeats: int,
                       reasons: str, judge: str | None = None,
                       embedder: str | None = None) -> Identity:
    """The identity of the run asked for, before any model loads: its judge and embedder as
    named (``judge``/``embedder``; their fingerprints are not known yet)."""
    sig = SignatureEntry(localeval=version, seed=seed, verdicts=verdicts, lang=lang,
                         repeats=repeats, reasons=reasons, judge=judge, embedder=embedder,
                         **data.signature_fields())
    return Identity(sig, tuple(metrics), dict(definitions))


def _described(record: RunRecord) -> str:
    """``started 2025-05-01T09:30:00Z, named 'v1'`` from a summary's ``run`` section."""
    run = record.run
    if run is None:
        return "written by an earlier localeval"
    words = [f"started {printable(run.started)}"]
    if run.name is not None:
        words.append(f"named '{printable(run.name)}'")
    return ", ".join(words)


def _listed(keys: Sequence[str]) -> str:
    return ", ".join(printable(k) for k in keys) or "none"


def _partial_differs(path: Path, ds: Dataset, metrics: set[str]) -> str | None:
    """Why the lines of a killed run's results.jsonl are not this run's, or None.

    Each line must be a sample of ``ds`` (same id, same question, contexts and
    answer, compared as ``results.content_fields`` records them) scored on the
    same metrics. A last line cut short by the kill is passed over.
    """
    by_id = {s.id: s for s in ds}
    bad = None
    try:
        with open(path, "rb") as f:
            for n, line in enumerate(f, 1):
                if not line.strip():
                    continue
                if bad is not None:
                    return f"line {bad} of its results.jsonl is not a results line"
                try:
                    rec = json.loads(line)
                except ValueError:
                    bad = n
                    continue
                if not isinstance(rec, dict):
                    return f"line {n} of its results.jsonl is not a results line"
                s = by_id.get(str(rec.get("id")))
                if s is None:
                    return (f"its results.jsonl has sample '{printable(rec.get('id'))}' "
                            f"(line {n}), which this dataset has not")
                mine = sample_content(s)
                if any(rec.get(k) != mine.get(k) for k in CONTENT_FIELDS if k in rec):
                    return f"sample '{printable(s.id)}' differs (line {n} of its results.jsonl)"
                scored = rec.get("scores")
                if not isinstance(scored, dict) or set(scored) != metrics:
                    have = sorted(scored) if isinstance(scored, dict) else []
                    return f"metrics {_listed(have)} there, {_listed(sorted(metrics))} here"
    except OSError as e:
        return f"its results.jsonl cannot be read ({e.strerror or e})"
    return None
