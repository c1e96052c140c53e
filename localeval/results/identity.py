"""What makes two runs the same run, said once: the parts of a run's identity.

Five things ask whether two runs were made the same way, and each used to
decide it on its own: the default output folder's key (``run`` picks the same
folder for the same run), the folder rule's refusals (a run never replaces
another run's folder), ``diff``'s set-up notes (was the difference the
pipeline's or the judge's?), ``history``'s change marks and the report's
signature line. Each now iterates over :data:`PARTS`, so a part added there
(one row, beside its field in ``schema.SignatureEntry``) is in the folder key,
refused by the folder rule, named by ``diff`` and ``history`` and printed in
the signature line at once; ``tests/unit/test_run_identity.py`` adds one and
checks all five.

A part says which of these it takes part in:

- ``folder``: the folder key and the folder rule (two runs that differ in it
  are two runs, in two folders);
- ``setup``: ``diff`` and ``history`` (a difference in it may explain a
  difference of scores), for the metrics that use it (``uses``: a judge, an
  embedder or all of them: a change of judge says nothing about ROUGE);
- ``token``: its piece of the signature line, sacrebleu style
  (``judge:NAME@HASH|prompts:HASH|...``), or None where it has none.

The folder rule compares a part when its value is known: ``stage`` "request"
parts before any model loads, "models" parts (the judge's and embedder's
fingerprints) once the models are loaded.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Literal, Mapping, Sequence

from localeval.results.schema import SignatureEntry

__all__ = ["IdentityPart", "PARTS", "Identity", "same_setup_text", "relevant_parts"]

Uses = Literal["judge", "embedder", "all"]
Blame = Literal["judge", "embedder", "set-up", "data"]


def _short(h: Any, n: int = 12) -> str:
    return str(h)[:n] if h else "none"


def _shown(value: Any) -> str:
    """A recorded value in a message: control characters made visible."""
    from localeval.errors import printable

    return printable(value)


@dataclass(frozen=True)
class IdentityPart:
    """One part of a run's identity (see the module docstring)."""

    #: the words for it in messages ("judge", "verdict mode")
    name: str
    #: the signature keys that hold it
    keys: tuple[str, ...]
    uses: Uses = "all"
    stage: Literal["request", "models"] = "request"
    folder: bool = True
    setup: bool = True
    #: named where a side records no signature ("cannot tell whether the same judge,
    #: prompts and embedder scored both runs")
    headline: bool = False
    #: named in "the same judge, prompts, embedder and verdict mode scored both runs"
    said_same: bool = False
    #: whose a difference in it may be, when it differs ("the judge's, not the pipeline's")
    blame: Blame = "set-up"
    plural: bool = False
    #: its piece of the signature line, None where it has none
    token: Callable[[SignatureEntry], str | None] | None = None
    #: its value as compared and shown (default: the keys' values, ``name@hash`` for two)
    value: Callable[[Identity], str | None] | None = None

    def of(self, ident: Identity) -> str | None:
        """The part's value in ``ident`` (None: not recorded)."""
        if self.value is not None:
            return self.value(ident)
        vals = [getattr(ident.signature, k, None) for k in self.keys]
        if len(vals) == 2:  # a model: name@fingerprint; compared by fingerprint when known
            name, fp = vals
            if not name and not fp:
                return None
            return f"{name or 'none'}@{_short(fp)}" if fp else str(name)
        v = vals[0]
        return None if v is None or v == "" else str(v)

    def compared(self, ident: Identity) -> str | None:
        """What two identities compare: a model's fingerprint when recorded, else its value."""
        if len(self.keys) == 2 and self.value is None:
            fp = getattr(ident.signature, self.keys[1], None)
            if fp:
                return str(fp)
        return self.of(ident)


def _model_token(prefix: str, name_key: str, fp_key: str) -> Callable[[SignatureEntry], str]:
    return lambda s: (f"{prefix}:{getattr(s, name_key) or 'none'}@"
                      f"{_short(getattr(s, fp_key))}")


def _data_value(key: str) -> Callable[[Identity], str | None]:
    """A data hash as shown and compared: ``HASH12 (N rows)``, None when not recorded."""
    def value(ident: Identity) -> str | None:
        h = getattr(ident.signature, key)
        return f"{h[:12]} ({ident.signature.dataset_rows} rows)" if h else None
    return value


def _subset_token(s: SignatureEntry) -> str | None:
    sub = s.subset
    if sub is None:
        return None
    if sub.limit is not None:
        return f"limit:{sub.limit}of{sub.of}"
    return f"sample:{sub.sample}of{sub.of}@seed{sub.seed}"


def _metrics_value(ident: Identity) -> str | None:
    if ident.metrics is None:
        return None
    return ", ".join(_shown(k) for k in sorted(ident.metrics)) or "none"


#: The parts, in the signature line's order. Add a run setting here (and its field in
#: ``schema.SignatureEntry``); ``tests/unit/test_run_identity.py`` checks both agree.
PARTS: tuple[IdentityPart, ...] = (
    IdentityPart("judge", ("judge", "judge_fingerprint"), uses="judge", stage="models",
                 headline=True, said_same=True, blame="judge",
                 token=_model_token("judge", "judge", "judge_fingerprint")),
    IdentityPart("prompts", ("prompts_hash",), uses="judge", folder=False, headline=True,
                 said_same=True, blame="judge", plural=True,
                 token=lambda s: f"prompts:{s.prompts_hash or 'none'}"),
    IdentityPart("seed", ("seed",), setup=False, token=lambda s: f"seed:{s.seed}"),
    IdentityPart("embedder", ("embedder", "embedder_fingerprint"), uses="embedder",
                 stage="models", headline=True, said_same=True, blame="embedder",
                 token=_model_token("embed", "embedder", "embedder_fingerprint")),
    IdentityPart("verdict mode", ("verdicts",), uses="judge", said_same=True, blame="judge",
                 token=lambda s: f"verdicts:{s.verdicts}"),
    IdentityPart("language", ("lang",), token=lambda s: f"lang:{s.lang}"),
    # said in the line only when not the default, like repeats
    IdentityPart("reason mode", ("reasons",), uses="judge", blame="judge",
                 token=lambda s: f"reasons:{s.reasons}" if s.reasons != "full" else None),
    IdentityPart("repeats", ("repeats",), uses="judge", blame="judge", plural=True,
                 token=lambda s: f"repeats:{s.repeats}" if s.repeats != 1 else None),
    # the data: the folder compares all rows (answers too); diff and history compare the
    # test set (two versions of a pipeline answer the same questions differently)
    IdentityPart("dataset", ("dataset_hash",), setup=False, blame="data",
                 value=_data_value("dataset_hash"),
                 token=lambda s: (f"data:{_short(s.dataset_hash)}|rows:{s.dataset_rows}"
                                  if s.dataset_hash else None)),
    IdentityPart("test sets", ("testset_hash",), folder=False, blame="data", plural=True,
                 value=_data_value("testset_hash")),
    # a --limit trial and the run of all rows are one run growing, in one folder
    IdentityPart("subset", ("subset",), folder=False, setup=False, token=_subset_token),
    IdentityPart("localeval", ("localeval",), setup=False, token=lambda s: f"v:{s.localeval}"),
    IdentityPart("metrics", (), setup=False, plural=True, value=_metrics_value),
)


@dataclass(frozen=True)
class Identity:
    """A run's identity: its signature, the metrics it scored, and its user-defined
    metrics' definition hashes (``metrics.known_versions``; a recorded run's are among
    its prompt versions)."""

    signature: SignatureEntry = field(default_factory=SignatureEntry)
    #: the metric keys, None where not known
    metrics: tuple[str, ...] | None = None
    definitions: Mapping[str, str] = field(default_factory=dict)
    #: False when the summary recorded no signature (an export, a damaged summary)
    recorded: bool = True

    @classmethod
    def of_summary(cls, signature: SignatureEntry | None,
                   metrics: Sequence[str] | None) -> Identity:
        """The identity a summary records."""
        if signature is None:
            return cls(SignatureEntry(), tuple(metrics) if metrics is not None else None,
                       recorded=False)
        return cls(signature, tuple(metrics) if metrics is not None else None,
                   dict(signature.prompts))

    @classmethod
    def of_signature(cls, signature: Mapping[str, Any] | None) -> Identity:
        """The identity of a signature as a mapping (``ResultSet.signature``); an empty or
        unreadable one is an identity that records nothing."""
        from pydantic import ValidationError

        if not signature:
            return cls(recorded=False)
        try:
            sig = SignatureEntry.model_validate(dict(signature))
        except ValidationError:
            return cls(recorded=False)
        return cls(sig, None, dict(sig.prompts))

    # -- the signature line -------------------------------------------------------------

    def line(self) -> str:
        """``judge:NAME@HASH|prompts:HASH|seed:0|embed:NAME@HASH|verdicts:hard|lang:auto|...``"""
        return "|".join(t for p in PARTS if p.token is not None
                        and (t := p.token(self.signature)) is not None)

    # -- the folder key and the folder rule ---------------------------------------------

    def folder_key(self) -> str:
        """The hash of every ``folder`` part (a request's models as named); 64 hex digits."""
        from localeval.cache import text_key

        values = [f"{p.name}={p.of(self)}" for p in PARTS if p.folder]
        defs = [f"{k}={v}" for k, v in sorted(self.definitions.items())]
        return text_key("localeval-run-folder-2", values, defs)

    def refusals(self, here: Identity, stage: Literal["request", "models"],
                 skip: Sequence[str] = ()) -> list[str]:
        """Why a run with identity ``here`` is not the run recorded in ``self`` (one phrase
        each, "seed 0 there, 1 here"), comparing the ``folder`` parts of ``stage`` but
        those named in ``skip`` (a judge that other processes load)."""
        out = []
        for p in PARTS:
            if not p.folder or p.stage != stage or p.name in skip:
                continue
            there, now = p.compared(self), p.compared(here)
            if there != now:
                old = p.of(self) or ("not recorded (an earlier localeval)"
                                     if p.name == "dataset" else "none")
                out.append(f"{p.name} {_shown(old)} there, {_shown(p.of(here) or 'none')} here")
        if stage == "request":
            for entry, now_hash in sorted(here.definitions.items()):
                then = self.definitions.get(entry)
                if isinstance(then, str) and then != now_hash:
                    out.append(f"metric '{_shown(entry.partition(':')[2])}' defined otherwise "
                               f"({then[:12]} there, {now_hash[:12]} here)")
        return out

    # -- diff's set-up notes and history's marks ----------------------------------------

    def setup_changes(self, new: Identity, *, judged: bool = True, embedded: bool = True
                      ) -> list[tuple[IdentityPart, str, str]]:
        """The ``setup`` parts that differ between ``self`` (base) and ``new``, for metrics
        that use a judge (``judged``) and/or an embedder (``embedded``): (part, base's
        value, new's value). A part recorded on one side only is not a change."""
        out = []
        for p in relevant_parts(judged, embedded):
            a, b = p.compared(self), p.compared(new)
            if p.blame == "data" and (a is None or b is None):
                continue  # only when both record it (earlier runs do not)
            if a != b:
                out.append((p, p.of(self) or "none", p.of(new) or "none"))
        return out

    def setup_notes(self, new: Identity, base_name: str = "base", new_name: str = "new", *,
                    judged: bool = True, embedded: bool = True) -> tuple[list[str], bool]:
        """(plain sentences, same): what differs between the two runs' scoring set-ups.

        ``same`` is False when a compared part differs or a side records no signature
        (then the reader cannot tell, and says so)."""
        missing = [n for n, s in ((base_name, self), (new_name, new)) if not s.recorded]
        if missing:
            names = [p.name for p in relevant_parts(judged, embedded) if p.headline]
            what = f"the same {_listed(names)}" if names else "the same settings"
            return ([f"{' and '.join(missing)} record{'s' if len(missing) == 1 else ''} no "
                     "signature (not a localeval run, or summary.json is missing): cannot tell "
                     f"whether {what} scored both runs"], False)
        changes = self.setup_changes(new, judged=judged, embedded=embedded)
        data = [_data_sentence(p, a, b, base_name, new_name) for p, a, b in changes
                if p.blame == "data"]
        notes = []
        for p, a, b in changes:
            if p.blame == "data":
                continue
            extra = _prompt_names(self, new) if p.name == "prompts" else ""
            notes.append(f"the {p.name} {'differ' if p.plural else 'differs'}{extra}: "
                         f"{base_name} {_shown(a)}, {new_name} {_shown(b)}")
        if notes:
            blamed = {p.blame for p, _, _ in changes}
            whose = (["the judge's"] if "judge" in blamed else []) + (
                ["the embedder's"] if "embedder" in blamed else []) or ["the set-up's"]
            notes.append(f"a difference below may be {' or '.join(whose)}, not the pipeline's")
        if data:
            notes = [*data, *(notes or [same_setup_text(judged, embedded)])]
        return notes, not notes


def relevant_parts(judged: bool, embedded: bool) -> list[IdentityPart]:
    """The ``setup`` parts that matter to metrics using a judge and/or an embedder."""
    uses = {"all"} | ({"judge"} if judged else set()) | ({"embedder"} if embedded else set())
    return [p for p in PARTS if p.setup and p.uses in uses]


def _listed(names: list[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def same_setup_text(judged: bool = True, embedded: bool = True) -> str:
    """The sentence for two runs scored the same way, naming only what the metrics use."""
    parts = [p.name for p in relevant_parts(judged, embedded) if p.said_same]
    if not parts:
        return ("the same language settings scored both runs (no compared metric uses a "
                "judge or an embedder)")
    return f"the same {_listed(parts)} scored both runs"


def _prompt_names(a: Identity, b: Identity) -> str:
    pa, pb = a.signature.prompts, b.signature.prompts
    names = sorted(k for k in set(pa) | set(pb) if pa.get(k) != pb.get(k))
    return (f" ({', '.join(_shown(n) for n in names[:8])}{', …' if len(names) > 8 else ''})"
            if names else "")


def _data_sentence(p: IdentityPart, a: str, b: str, base_name: str, new_name: str) -> str:
    return (f"the {p.name} {'differ' if p.plural else 'differs'}: {base_name} {_shown(a)}, "
            f"{new_name} {_shown(b)}; the paired samples' questions, references or relevant "
            "ids may differ, so a difference below may be the data's, not the pipeline's")
