"""One pair judged in both orders, and what the two verdicts say together.

Order 1 shows the base answer as A, order 2 the new answer as A. A verdict is
first turned into what it says about the versions ("base", "new", "tie");
the pair's outcome is the common answer of both orders when they agree and
"inconsistent" when they do not, never a win. A pair whose verdict is the same
*letter* in both orders (A then A, or B then B) follows the position: that is
the position-bias count, a part of the inconsistent ones.

With probabilities, each order's preference for new is P(new's letter) plus
half of P(tie) (a tie is half a win, as in the hard rate), and the pair's is
the mean of the two orders: a constant pull towards one position adds in one
order what it takes in the other, and cancels.

A pair whose two answers are the same text (white space aside) and whose
answers saw the same contexts is a tie decided without the judge
(``identical``): asking would measure only the judge's position bias, and a
judge that says "A" to two copies would count as following the position.
"""

from __future__ import annotations

from dataclasses import dataclass

from localeval.types import Sample

__all__ = ["PairJudgement", "side_of", "order_preference", "WIN", "LOSS", "TIE",
           "INCONSISTENT", "UNJUDGED", "same_answers", "identical_pair"]

WIN, LOSS, TIE, INCONSISTENT, UNJUDGED = "win", "loss", "tie", "inconsistent", "unjudged"


def side_of(verdict: str | None, order: int) -> str | None:
    """"base", "new" or "tie" for a verdict letter in ``order`` (1: base is A, 2: new is A)."""
    if verdict == "tie":
        return "tie"
    if verdict not in ("A", "B"):
        return None
    new_letter = "B" if order == 1 else "A"
    return "new" if verdict == new_letter else "base"


def order_preference(probs: dict[str, float] | None, order: int) -> float | None:
    """P(new better) + P(tie)/2 in one order, over the three values renormalised; None
    without probabilities or with no mass on them."""
    if not probs:
        return None
    a, b, t = (max(float(probs.get(k, 0.0)), 0.0) for k in ("A", "B", "tie"))
    total = a + b + t
    if not total > 0:
        return None
    new = b if order == 1 else a
    return (new + t / 2) / total


@dataclass(frozen=True)
class PairJudgement:
    """Both orders of one pair: verdict letters, probabilities and the two answers' lengths."""

    base_id: str
    new_id: str
    #: verdict letters "A" / "B" / "tie" of order 1 (base as A) and order 2 (new as A)
    first: str | None
    second: str | None
    first_probs: dict[str, float] | None = None
    second_probs: dict[str, float] | None = None
    base_chars: int = 0
    new_chars: int = 0
    reasons: tuple[str, str] = ("", "")
    error: str = ""
    #: the same answer on both sides (white space aside): a tie the judge was not asked
    identical: bool = False

    @property
    def sides(self) -> tuple[str | None, str | None]:
        return side_of(self.first, 1), side_of(self.second, 2)

    @property
    def outcome(self) -> str:
        """win (new preferred in both orders), loss, tie, inconsistent or unjudged."""
        s1, s2 = self.sides
        if s1 is None or s2 is None:
            return UNJUDGED
        if s1 != s2:
            return INCONSISTENT
        return {"new": WIN, "base": LOSS, "tie": TIE}[s1]

    @property
    def follows_position(self) -> bool:
        """The same decisive letter in both orders: the verdict went with the position."""
        return self.first == self.second and self.first in ("A", "B")

    def soft(self, orders: tuple[int, ...] = (1, 2)) -> float | None:
        """The mean over ``orders`` of P(new better) + P(tie)/2; None when one lacks
        probabilities; 0.5 for identical answers (a tie, not asked)."""
        if self.identical:
            return 0.5
        vals = [order_preference(self.first_probs if o == 1 else self.second_probs, o)
                for o in orders]
        if any(v is None for v in vals):
            return None
        return sum(v for v in vals if v is not None) / len(vals)

    def hard(self) -> float | None:
        """1 for a win, 0.5 for a tie, 0 for a loss; None for inconsistent or unjudged pairs."""
        return {WIN: 1.0, TIE: 0.5, LOSS: 0.0}.get(self.outcome)

    def winner_longer(self, order: int | None = None) -> bool | None:
        """Whether the preferred answer is the longer one (None: tie, equal length, unjudged).

        ``order`` None reads the pair's agreed outcome; 1 or 2 reads that order alone.
        """
        if self.base_chars == self.new_chars:
            return None
        side = ({WIN: "new", LOSS: "base"}.get(self.outcome) if order is None
                else self.sides[order - 1])
        if side not in ("new", "base"):
            return None
        return (side == "new") == (self.new_chars > self.base_chars)

    def to_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "base_id": self.base_id, "new_id": self.new_id, "outcome": self.outcome,
            "base_as_a": {"verdict": self.first, "probs": self.first_probs,
                          "reason": self.reasons[0]},
            "new_as_a": {"verdict": self.second, "probs": self.second_probs,
                         "reason": self.reasons[1]},
            "new_preference": self.soft(), "follows_position": self.follows_position,
            "chars": {"base": self.base_chars, "new": self.new_chars}}
        if self.error:
            out["error"] = self.error
        if self.identical:
            out["identical"] = True
        return out


def same_answers(base: Sample, new: Sample) -> bool:
    """The two answers are one text once runs of white space are one space, and both
    answers saw the same contexts (or one side records none)."""
    a, b = base.answer or "", new.answer or ""
    same_text = " ".join(a.split()) == " ".join(b.split())
    return same_text and (base.contexts == new.contexts or base.contexts is None
                          or new.contexts is None)


def identical_pair(base: Sample, new: Sample) -> PairJudgement:
    """A pair of identical answers: a tie in both orders, no judge call."""
    return PairJudgement(base.id, new.id, "tie", "tie", None, None, len(base.answer or ""),
                         len(new.answer or ""), ("identical answers: not asked", "identical answers: not asked"),
                         identical=True)
