"""Criteria the user writes: AspectCritic (yes/no, ragas's), and what every
user-defined judged metric shares.

A user-defined metric is named by the user (``polite``), so its ``name`` is
an instance field and its key is that name alone (``--fail-under polite=0.8``);
its definition (criterion, rubric, steps, scale, strictness) is not in the
key but in the run's signature: each metric records ``{step}:{key}`` -> hash
of its definition among the prompt versions, hashed with the project's one
text hash (``localeval.cache.text_key``), so two runs with the same name but
different wording are told apart.

AspectCritic follows ragas: ``strictness`` votes, an even strictness is
raised by one so that the majority is never a tie, and the verdict is the
most common vote (``collections.Counter``, as ragas; when a failed vote leaves
a tie, the earliest vote's verdict wins, as ``Counter.most_common`` does). A
local judge at temperature 0 would cast the same vote every time, so votes
are sampled at ``VOTE_TEMPERATURE`` (or the run's temperature if set) with
seeds ``seed, seed+1, ...``. With ``--verdicts soft`` one call gives
P(yes) = p, and the score is the probability that a majority of ``strictness``
votes drawn from p says yes (p itself for strictness 1), the expectation of
the hard score.
"""

from __future__ import annotations

import dataclasses
import math
import unicodedata
from collections import Counter
from dataclasses import dataclass
from typing import Any, ClassVar, Iterable

from pydantic import Field, StrictInt, StrictStr

from localeval.cache import text_key
from localeval.errors import InvalidArgument, JudgeCallError, printable
from localeval.metrics.base import Metric
from localeval.metrics.model_access import Judging
from localeval.metrics.parameters import Parameters, check_parameters, refuse
from localeval.metrics.schemas import CriterionVerdict, reason_room, with_reason
from localeval.metrics.steps import reason_of, verdict_values
from localeval.types import Sample, Score

__all__ = ["AspectCritic", "UserDefined", "majority_probability", "definition_hash", "check_name",
           "known_versions",
           "VOTE_TEMPERATURE", "SAMPLE_COLUMNS", "REASON_SUFFIX"]

#: The columns beside the metrics' in results.csv (``results.table``) and ``to_pandas()``
#: (``run.result``): a metric of one of these names would overwrite the column.
SAMPLE_COLUMNS = frozenset({"id", "question", "user_input", "retrieved_contexts", "response",
                            "reference"})
#: results.csv and ``to_pandas()`` name each metric's unscored-reason column ``<metric>_reason``.
REASON_SUFFIX = "_reason"
# Characters a name must not hold: control (ESC, tab, newline), format (the bidi controls
# U+202A-U+202E, U+2066-U+2069, U+200E/U+200F and other invisibles), line and paragraph
# separators, surrogates, private-use and unassigned code points.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"})

#: Votes of a strictness > 1 critic are sampled at this temperature when the run's is 0.
VOTE_TEMPERATURE = 0.7


def definition_hash(*parts: Any) -> str:
    """Short hash of a metric's definition (the project's one text hash)."""
    return text_key(*(repr(p) for p in parts))[:12]


def majority_probability(p: float, n: int) -> float:
    """P(more than half of ``n`` independent yes/no votes say yes), each yes with ``p``."""
    need = n // 2 + 1
    return float(sum(math.comb(n, k) * p ** k * (1 - p) ** (n - k) for k in range(need, n + 1)))


@dataclass(frozen=True)
class UserDefined(Metric):
    """Base of user-defined judged metrics: name-as-key and the signature entry."""

    uses_judge: ClassVar[bool] = True
    #: The judge step whose prompt the definition fills.
    step: ClassVar[str] = ""
    #: The types of the parameters, checked strictly before anything else (``check``).
    parameters: ClassVar[type[Parameters]] = Parameters

    def check(self) -> None:
        """The name, then every parameter's type (InvalidArgument naming the key)."""
        check_name(self.name)
        check_parameters(self, self.parameters)

    @property
    def key(self) -> str:
        """The user's name, nothing else: parameters are part of the definition (signature)."""
        return self.name

    def definition_parts(self) -> tuple[Any, ...]:
        """What the metric is made of: every parameter but its name (hashed into the signature)."""
        return tuple((f.name, getattr(self, f.name)) for f in dataclasses.fields(self)
                     if f.name != "name")

    def known_version(self) -> str | None:
        """The hash ``record`` will write, known before any judge call, so that a run
        of an edited definition is not taken for the run an output folder holds; None
        where the hash takes in the judge's own output (G-Eval's generated steps)."""
        return definition_hash(type(self).__name__, *self.definition_parts())

    def record(self, ctx: Judging, *extra: Any) -> str:
        """Put ``{step}:{key}`` -> definition hash among the run's prompt versions."""
        h = definition_hash(type(self).__name__, *self.definition_parts(), *extra)
        ctx.prompt_versions[f"{self.step}:{self.key}"] = h
        return h


def check_name(name: str) -> None:
    """A user's metric name must be usable in ``-m`` and ``--fail-under``, safe to print, and
    not a column that results.csv or ``to_pandas()`` already has (InvalidArgument, a ValueError, if not).

    Column names are compared case-insensitively: a spreadsheet or pandas user
    would not tell ``ID`` from ``id`` apart either.
    """
    if not isinstance(name, str) or not name.strip():
        raise InvalidArgument("a user-defined metric needs a name (text)")
    bad = next((c for c in name if unicodedata.category(c) in _REFUSED_CATEGORIES), None)
    if bad is not None:
        raise InvalidArgument(f"metric name '{printable(name)}' holds the control or bidirectional "
                              f"character {printable(bad)} (U+{ord(bad):04X}); names are shown in "
                         "terminals, reports and spreadsheets: use visible characters only")
    if any(c in name for c in ",:;@=") or name != name.strip():
        raise InvalidArgument(f"metric name {name!r} must not contain , : ; @ = or outer spaces")
    low = name.casefold()
    if low in SAMPLE_COLUMNS:
        raise InvalidArgument(f"metric name {name!r} is the name of a column of results.csv and "
                         f"to_pandas() ({', '.join(sorted(SAMPLE_COLUMNS))}); choose another")
    if low.endswith(REASON_SUFFIX):
        raise InvalidArgument(f"metric name {name!r} ends in {REASON_SUFFIX!r}, which names the "
                         "column of a metric's unscored reasons in results.csv and "
                         "to_pandas(); choose another")


class CriticParameters(Parameters):
    definition: StrictStr = Field(description="text (the yes/no criterion in your words)")
    strictness: StrictInt = Field(description="an integer from 1 to 15 (the number of votes)")


@dataclass(frozen=True)
class AspectCritic(UserDefined):
    """A yes/no criterion in the user's words, judged on the sample (1.0 = meets it)."""

    name: str = ""  # type: ignore[misc]  # a dataclass field where Metric has a ClassVar: set per criterion
    definition: str = ""
    strictness: int = 1

    requires: ClassVar[tuple[str, ...]] = ("answer",)
    # An empty answer meets no criterion: never a "yes" for nothing.
    on_empty: ClassVar[tuple[tuple[str, float | None], ...]] = (("answer", 0.0),)
    step: ClassVar[str] = "aspect_critic"
    gives_reasons: ClassVar[bool] = True
    description: ClassVar[str] = "user's yes/no criterion; majority of strictness votes"
    parameters: ClassVar[type[Parameters]] = CriticParameters

    def __post_init__(self) -> None:
        self.check()
        if not self.definition.strip():
            raise InvalidArgument(f"AspectCritic {self.name!r} needs a definition")
        if not 1 <= self.strictness <= 15:
            refuse(self, "strictness", f"must be from 1 to 15, not {self.strictness}")
        # ragas: an odd number of votes, so that the majority is never a tie
        s = self.strictness
        object.__setattr__(self, "strictness", s if s % 2 else s + 1)

    def score(self, sample: Sample, ctx: Judging) -> Score:
        self.record(ctx)
        if ctx.verdicts == "soft":
            return self._soft(sample, ctx)
        if self.strictness == 1:
            out = ctx.ask(self.step, _schema(ctx), sample, definition=self.definition).output
            return Score(float(out.verdict), details={"verdict": out.verdict, **reason_of(out)})
        return self._votes(sample, ctx)

    def _votes(self, sample: Sample, ctx: Judging) -> Score:
        temperature = ctx.temperature if ctx.temperature > 0 else VOTE_TEMPERATURE
        votes: list[dict[str, Any]] = []
        errors: list[JudgeCallError] = []

        def vote(i: int) -> Any:
            voter = ctx.for_sample(seed=ctx.seed + i, temperature=temperature)
            try:
                return voter.ask(self.step, _schema(ctx), sample, definition=self.definition)
            except JudgeCallError as e:
                return e

        for out in ctx.map(vote, range(self.strictness)):  # independent votes
            if isinstance(out, JudgeCallError):
                errors.append(out)
                continue
            votes.append({"verdict": out.output.verdict, **reason_of(out.output)})
        if not votes:
            raise errors[0]
        verdict = Counter(v["verdict"] for v in votes).most_common(1)[0][0]
        details: dict[str, Any] = {"verdict": verdict, "votes": votes,
                                   "strictness": self.strictness, "temperature": temperature}
        if errors:
            details["failed_votes"] = [str(e) for e in errors]
        return Score(float(verdict), details=details)

    def _soft(self, sample: Sample, ctx: Judging) -> Score:
        reply = ctx.ask(self.step, _schema(ctx), sample, prob_field="verdict",
                        definition=self.definition)
        out = reply.output
        p = verdict_values([out.verdict], reply.probs)[0]
        value = majority_probability(p, self.strictness)
        return Score(value, details={"verdict": out.verdict, **reason_of(out),
                                     "p_yes": round(p, 6), "strictness": self.strictness})


def _schema(ctx: Judging) -> type[CriterionVerdict]:
    """The criterion's verdict with the reason the run's reason mode asks for."""
    return with_reason(CriterionVerdict, reason_room(ctx.reasons))


def known_versions(metrics: Iterable[Any]) -> dict[str, str]:
    """``{"{step}:{key}": hash}`` of the user-defined metrics among ``metrics`` whose
    definition hash is known before the run (``UserDefined.known_version``), as the
    signature's ``prompts`` will hold them."""
    return {f"{m.step}:{m.key}": v for m in metrics
            if isinstance(m, UserDefined) and (v := m.known_version()) is not None}
