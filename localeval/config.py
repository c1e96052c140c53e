"""The run's settings: one frozen ``RunConfig``, filled by one precedence rule.

Every entry point that scores (``localeval run``, ``localeval.evaluate``, the
RAGAS-style layer, ``judge check``) builds its settings with ``run_config``:

    explicit argument  >  ``configure()``  >  environment (``LOCALEVAL_*``)  >  default

An argument left at None counts as not given. RAGAS scripts never name a model
at the call site (they rely on an API key in the environment), so the
compatibility layer needs somewhere else to find one: ``configure(judge=...)`` or
``LOCALEVAL_JUDGE``. The environment variables are ``LOCALEVAL_JUDGE``,
``LOCALEVAL_EMBEDDER``, ``LOCALEVAL_LANG``, ``LOCALEVAL_SEED``,
``LOCALEVAL_TEMPERATURE``, ``LOCALEVAL_VERDICTS``, ``LOCALEVAL_REASONS``, ``LOCALEVAL_DEVICE`` and
``LOCALEVAL_JUDGE_CHECK`` (0, false, no or off: skip the judge check that runs
before a run's first judge call, for a process that runs many small evaluations
with a judge already checked). ``LOCALEVAL_MODELS`` (the models folder) and
``LOCALEVAL_CACHE`` (the cache file) are read where those are opened. ``ENV_VARS``
lists every variable and what it takes; a bad value is one UsageError naming the
variable, its value and that (``env_error``), and a blank one counts as unset.

An unknown key (to ``configure``, ``run_config`` or ``evaluate``'s settings) is a
``UsageError`` naming it and the known ones, never a silently ignored option.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Mapping

from localeval.errors import UsageError, printable

__all__ = ["configure", "get_config", "run_config", "RunConfig", "JUDGE_OPTION_KEYS",
           "check_seed", "check_resamples", "MAX_RESAMPLES", "REASON_MODES", "VERDICT_MODES",
           "LANG_CHOICES", "DRAFT_MODES", "ENV_VARS", "env_error", "env_flag", "env_text"]

#: Options that go to the judge's loader (``load_judge``) rather than to the run.
JUDGE_OPTION_KEYS = frozenset({"n_ctx", "n_gpu_layers", "n_threads", "chat_format",
                               "judge_model", "logit_bias", "max_tokens", "parallel", "draft",
                               "per_endpoint_concurrency", "health_interval", "timeout"})


#: How much the judge writes before each binary verdict: ``full`` (a reason, as ragas's
#: prompts ask), ``short`` (a reason of a few words) or ``none`` (the verdict alone).
REASON_MODES = ("full", "short", "none")

#: A binary verdict as the judge's pick (``hard``) or its probability of yes (``soft``).
VERDICT_MODES = ("hard", "soft")

#: The languages of the prompts, sentence splitting and tokenising (``auto``: detected per
#: sample; ``lang.LANGS`` are the detected ones).
LANG_CHOICES = ("auto", "en", "ja", "zh")

#: The in-process judge's prompt-lookup drafting (``--draft``).
DRAFT_MODES = ("auto", "lookup", "none")


#: The most bootstrap resamples a command draws. The resamples' means are held at once
#: (8 bytes each per metric), and past this many an interval's last digit no longer moves:
#: scipy's default is 9,999. A larger request is a UsageError, not a memory error.
MAX_RESAMPLES = 1_000_000


def check_seed(value: Any, name: str = "seed") -> int:
    """``value`` as a seed: a whole number >= 0, else a UsageError naming ``name``.

    numpy's random generators (the bootstrap, the label-sheet draws) refuse a
    negative seed, so one is refused before any work, not after the scoring. The
    shared check of every option and setting that takes a seed (``--seed``,
    ``LOCALEVAL_SEED``, ``seed=``).
    """
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise UsageError(f"{name} must be a whole number >= 0, got {value!r}")
    if value.__index__() < 0:
        raise UsageError(f"{name} must be a whole number >= 0, got {value}: a seed cannot be "
                         "negative (numpy's random generators refuse one)")
    return value.__index__()


def check_resamples(value: Any, name: str = "--resamples", minimum: int = 100) -> int:
    """``value`` as a number of bootstrap resamples: ``minimum`` to ``MAX_RESAMPLES``, else
    a UsageError naming ``name`` (``--resamples``, ``--n-boot``)."""
    if isinstance(value, bool) or not hasattr(value, "__index__"):
        raise UsageError(f"{name} must be a whole number, got {value!r}")
    n = value.__index__()
    if n < minimum:
        raise UsageError(f"{name} must be at least {minimum}, got {n}")
    if n > MAX_RESAMPLES:
        raise UsageError(f"{name} {n:,} is more than the {MAX_RESAMPLES:,} resamples localeval "
                         "draws at most (their means are held at once; 9,999 is the default)")
    return n


@dataclass(frozen=True)
class RunConfig:
    """What a run is asked to do, besides the data and the metrics. Frozen: a run
    reads it, nothing changes it (``dataclasses.replace`` makes a changed copy)."""

    #: A Judge, GGUF path, model name, http(s) URL, None (the single GGUF in models/) or False.
    judge: Any = None
    #: An Embedder, folder or model name, None (the default model) or False.
    embedder: Any = None
    judge_options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    lang: str = "auto"
    seed: int = 0
    #: None: 0 (greedy), or 0.7 when ``repeats`` > 1.
    temperature: float | None = None
    verdicts: str = "hard"
    #: One of ``REASON_MODES``: the reason the judge writes before each verdict.
    reasons: str = "full"
    repeats: int = 1
    #: True (``$LOCALEVAL_CACHE`` or ~/.cache/localeval), a path, a ``Cache`` or False.
    cache: Any = True
    device: str = "auto"
    workers: int = 1
    ray: Any = None
    ray_actors: int | None = None
    #: Run the judge check before a run's first judge call (a number: pairs per metric).
    judge_check: bool | int = True

    def __post_init__(self) -> None:
        # The one place the run's settings are checked, whoever filled them.
        if self.verdicts not in VERDICT_MODES:
            raise UsageError(f"verdicts must be 'hard' or 'soft', not {self.verdicts!r}")
        if self.reasons not in REASON_MODES:
            raise UsageError(f"reasons must be one of {', '.join(REASON_MODES)}, "
                             f"not {self.reasons!r}")
        if self.repeats < 1:
            raise UsageError("repeats must be at least 1")
        if self.workers < 1:
            raise UsageError("workers must be at least 1")
        object.__setattr__(self, "seed", check_seed(self.seed))
        object.__setattr__(self, "judge_options", MappingProxyType(dict(self.judge_options)))

    @classmethod
    def keys(cls) -> list[str]:
        """The settings' names (judge options aside)."""
        return [f.name for f in dataclasses.fields(cls)]

    @classmethod
    def build(cls, **given: Any) -> "RunConfig":
        """A config from ``given`` (None: not given), judge options sorted into ``judge_options``."""
        run, judge_opts = split_settings(given)
        opts = {**(run.pop("judge_options", None) or {}), **judge_opts}
        return cls(judge_options=opts, **{k: v for k, v in run.items() if v is not None})


def split_settings(given: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """(run settings, judge options) of ``given``; an unknown key is a UsageError."""
    known = set(RunConfig.keys())
    unknown = [k for k in given if k not in known and k not in JUDGE_OPTION_KEYS]
    if unknown:
        raise UsageError(f"unknown setting {unknown[0]!r}; known settings: "
                         + ", ".join(sorted(known | JUDGE_OPTION_KEYS)))
    return ({k: v for k, v in given.items() if k in known},
            {k: v for k, v in given.items() if k in JUDGE_OPTION_KEYS})


#: What ``configure`` set, run settings and judge options alike (None: not set).
_CONFIGURED: dict[str, Any] = {}


def configure(**settings: Any) -> RunConfig:
    """Set defaults for this process's runs: any ``RunConfig`` field (judge, embedder,
    lang, seed, temperature, verdicts, reasons, repeats, cache, device, workers, judge_check...)
    or judge option (n_ctx, n_gpu_layers, n_threads, chat_format, judge_model, ...).

    ``localeval.evaluate``, the RAGAS-style layer and ``judge check`` honour them;
    an argument given to those still wins. Returns the settings now in force.
    """
    split_settings(settings)  # unknown keys fail here, before anything is set
    if "judge_options" in settings:
        settings = {**(settings.pop("judge_options") or {}), **settings}
    before = dict(_CONFIGURED)
    _CONFIGURED.update({k: v for k, v in settings.items() if v is not None})
    try:
        return run_config()  # a bad value (verdicts="maybe") fails here, not at the first run
    except UsageError:
        _CONFIGURED.clear()  # and is not kept: the settings stay as they were
        _CONFIGURED.update(before)
        raise


# -- the environment ----------------------------------------------------------------
#: Yes/no words of a flag variable (any case).
_FLAG_WORDS = {"1": True, "true": True, "yes": True, "on": True,
               "0": False, "false": False, "no": False, "off": False}
_FLAG_TEXT = "yes or no (1, true, yes, on; 0, false, no, off)"
_DEVICE = re.compile(r"auto|cpu|mps|cuda(:\d+)?")

#: Every ``LOCALEVAL_*`` variable the package reads, and what it accepts: the one list
#: that error messages and the tests go by. Unset and blank are the same: the default.
ENV_VARS: dict[str, str] = {
    "LOCALEVAL_JUDGE": "a GGUF file, a model name or an http(s) URL",
    "LOCALEVAL_EMBEDDER": "a model folder or name",
    "LOCALEVAL_LANG": "one of " + ", ".join(LANG_CHOICES),
    "LOCALEVAL_SEED": "a whole number >= 0",
    "LOCALEVAL_TEMPERATURE": "a finite number >= 0, e.g. 0.7",
    "LOCALEVAL_VERDICTS": "one of " + ", ".join(VERDICT_MODES),
    "LOCALEVAL_REASONS": "one of " + ", ".join(REASON_MODES),
    "LOCALEVAL_DEVICE": "one of auto, cpu, cuda, cuda:N, mps",
    "LOCALEVAL_JUDGE_CHECK": _FLAG_TEXT,
    "LOCALEVAL_MODELS": "the models folder (default ./models)",
    "LOCALEVAL_CACHE": "the cache file (default ~/.cache/localeval/cache.sqlite)",
    "LOCALEVAL_API_KEY": "the HTTP judge server's key",
    "LOCALEVAL_ALLOW_LLAMA_CPP_VERSION": _FLAG_TEXT,
    "LOCALEVAL_RAY_CRASH_MARKER": "a file (a test hook: a Ray worker stops when it exists)",
}


def env_error(var: str, text: str, why: str = "") -> UsageError:
    """The one message for a bad environment variable: its name, its value (control
    characters made visible) and what it accepts."""
    return UsageError(f"environment variable {var} takes {ENV_VARS[var]}, not "
                      f"'{printable(text)}'" + (f" ({why})" if why else ""))


def env_text(var: str) -> str | None:
    """The text of ``var``, or None when it is unset or blank (``VAR= localeval ...``)."""
    text = os.environ.get(var)
    return text if text is not None and text.strip() else None


def env_flag(var: str, default: bool) -> bool:
    """A yes/no variable (``_FLAG_TEXT``); any other word is a UsageError naming it."""
    text = env_text(var)
    if text is None:
        return default
    value = _FLAG_WORDS.get(text.strip().lower())
    if value is None:
        raise env_error(var, text)
    return value


def _choice(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError("")
        return text
    return parse


def _seed(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise ValueError("") from None
    if value < 0:
        raise ValueError("a seed cannot be negative")
    return value


def _temperature(text: str) -> float:
    value = float(text)  # float() takes nan and inf: refused below
    if not math.isfinite(value) or value < 0:
        raise ValueError("")
    return value


def _device(text: str) -> str:
    if not _DEVICE.fullmatch(text.lower()):
        raise ValueError("")
    return text


def _flag(text: str) -> bool:
    value = _FLAG_WORDS.get(text.lower())
    if value is None:
        raise ValueError("")
    return value


#: Environment variables and how their text becomes a setting (ValueError: not valid).
_ENV: dict[str, tuple[str, Callable[[str], Any]]] = {
    "judge": ("LOCALEVAL_JUDGE", str),
    "embedder": ("LOCALEVAL_EMBEDDER", str),
    "lang": ("LOCALEVAL_LANG", _choice(LANG_CHOICES)),
    "seed": ("LOCALEVAL_SEED", _seed),
    "temperature": ("LOCALEVAL_TEMPERATURE", _temperature),
    "verdicts": ("LOCALEVAL_VERDICTS", _choice(VERDICT_MODES)),
    "reasons": ("LOCALEVAL_REASONS", _choice(REASON_MODES)),
    "device": ("LOCALEVAL_DEVICE", _device),
    "judge_check": ("LOCALEVAL_JUDGE_CHECK", _flag),
}


def _environment() -> dict[str, Any]:
    """The settings the environment gives; every variable is checked here, before any run
    starts, and a bad one is refused by name (``env_error``)."""
    out: dict[str, Any] = {}
    for key, (var, parse) in _ENV.items():
        raw = env_text(var)
        if raw is None:
            continue
        try:
            out[key] = parse(raw.strip())
        except ValueError as e:
            why = "" if "could not convert" in str(e) else str(e)  # float()'s own words
            raise env_error(var, raw, why) from None
    return out


def run_config(**explicit: Any) -> RunConfig:
    """The settings of one run: ``explicit`` > ``configure()`` > environment > default.

    An explicit None means "not given"; ``judge_options`` are merged key by key
    in the same order.
    """
    split_settings(explicit)
    merged: dict[str, Any] = dict(_environment())
    for layer in (_CONFIGURED, explicit):
        run, judge_opts = split_settings(layer)
        opts = {**merged.get("judge_options", {}), **(run.pop("judge_options", None) or {}),
                **judge_opts}
        merged.update({k: v for k, v in run.items() if v is not None})
        merged["judge_options"] = {k: v for k, v in opts.items() if v is not None}
    return RunConfig.build(**merged)


def get_config() -> RunConfig:
    """The configured defaults with the environment filling what was not set."""
    return run_config()


def reset() -> None:
    """Forget everything ``configure`` set (for tests)."""
    _CONFIGURED.clear()
