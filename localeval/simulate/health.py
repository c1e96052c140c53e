"""Simulator health: signs that the judge played the user poorly, said in plain words.

A conversation is evidence about the agent only if the user in it behaved like a
user. What a small judge does instead, each measured over the conversations and
warned of in one sentence when it is common:

- **copied examples**: its first reply copied the prompt's example (the judge door
  asked again without it, ``Usage.copied_calls``) or copied it again (the turn
  failed, ``copy_failures``);
- **looping users**: a user message repeats an earlier user message of the same
  conversation (normalised text);
- **a user who never states the goal**: fewer than ``GOAL_COVERAGE`` of the goal's
  words (characters, in Japanese and Chinese) appear in any user message, so the
  agent was never told what to do;
- **a parroted prompt**: a user message holds a run of at least ``PARROT_CHARS``
  characters of the simulator's own instructions ("You play the Human ..."), which a
  user never writes;
- **giving up at once**: the user gave up right after the agent's first reply, in
  most conversations (a small judge's way of ending a task it cannot follow);
- **simulator failures**: conversations the judge could not go on with.

The figures behind the sentences are kept in simulation.json (``simulator_figures``).
"""

from __future__ import annotations

import difflib
from collections import Counter
from functools import cache
from typing import Any, Mapping, Sequence

from localeval.lang import char_words, normalise

__all__ = ["simulator_health", "states_goal", "loops", "parrots_prompt", "GOAL_COVERAGE",
           "LOOP_WARN", "PARROT_CHARS",
           "UNSTATED_WARN", "COPY_WARN"]

#: A user states the goal when at least this share of the goal's words is in their messages.
GOAL_COVERAGE = 0.3
#: Warn when this share of conversations has a looping user ...
LOOP_WARN = 0.2
#: ... or a user who never stated the goal ...
UNSTATED_WARN = 0.2
#: ... or this share of the user turns copied the prompt's example (as a judge's copying
#: is warned of elsewhere).
COPY_WARN = 0.05
#: A user message parrots the prompt when it holds this many characters of its instructions.
PARROT_CHARS = 30
#: Warn when this share of conversations has a parroted prompt ...
PARROT_WARN = 0.2
#: ... or ended with the user giving up after the agent's first reply.
QUICK_GIVE_UP_WARN = 0.5
#: English words this short carry no goal ("a", "to", "at").
_SHORT = 3


def _words(text: str) -> set[str]:
    return {w for w in char_words(normalise(text))
            if len(w) >= _SHORT or not w.isascii()}


def states_goal(goal: str, user_texts: Sequence[str]) -> bool:
    """Whether the user messages carry at least ``GOAL_COVERAGE`` of the goal's words."""
    wanted = _words(goal)
    if not wanted:
        return True
    said = set().union(*(_words(t) for t in user_texts)) if user_texts else set()
    return len(wanted & said) / len(wanted) >= GOAL_COVERAGE


def loops(user_texts: Sequence[str]) -> bool:
    """Whether a user message repeats an earlier one of the same conversation."""
    seen = Counter(normalise(t) for t in user_texts if t.strip())
    return any(n > 1 for n in seen.values())


@cache
def _instructions() -> str:
    """The simulator's instructions (the same English text for every language), as the
    judge reads them: rendered, not copied, so they never go stale."""
    from localeval.prompts import render
    from localeval.simulate.schemas import USER_STEP
    from localeval.types import MultiTurnSample

    texts = [render(USER_STEP, MultiTurnSample(id="-"), lang="en", examples=False, goal="",
                    persona="", opening=opening, conversation=[])[0][-1]["content"]
             for opening in (True, False)]
    return normalise("\n".join(texts))


def parrots_prompt(text: str) -> bool:
    """Whether ``text`` holds ``PARROT_CHARS`` characters of the simulator's instructions
    in a row (``difflib``'s longest common block)."""
    a, b = normalise(text), _instructions()
    if len(a) < PARROT_CHARS:
        return False
    m = difflib.SequenceMatcher(None, a, b, autojunk=False).find_longest_match(0, len(a), 0,
                                                                              len(b))
    return m.size >= PARROT_CHARS


def _pct(x: float) -> str:
    return f"{100 * x:.0f}%"


def simulator_health(rows: Sequence[Mapping[str, Any]],
                     usage: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """(figures, warnings) for the conversations' ``rows`` and the user turns' judge
    ``usage`` (``Usage.to_dict()``)."""
    n = len(rows)
    looping, unstated, failed, parrots, quick = [], [], [], [], []
    for r in rows:
        users = [m.get("content") or "" for m in r.get("messages") or []
                 if m.get("role") == "user"]
        sim = r.get("simulation") or {}
        if loops(users):
            looping.append(str(r.get("id")))
        if not states_goal(str(sim.get("goal") or ""), users):
            unstated.append(str(r.get("id")))
        if sim.get("stop") == "simulator_failed":
            failed.append(str(r.get("id")))
        if any(parrots_prompt(t) for t in users):
            parrots.append(str(r.get("id")))
        if sim.get("stop") == "give_up" and len(users) == 1:
            quick.append(str(r.get("id")))
    copied, failures = int(usage.get("copied_calls", 0)), int(usage.get("copy_failures", 0))
    asked = int(usage.get("calls", 0)) - copied
    figures: dict[str, Any] = {
        "conversations": n, "looping_users": looping, "goal_never_stated": unstated,
        "simulator_failed": failed, "parroted_prompt": parrots, "gave_up_at_once": quick,
        "copied_example_calls": copied,
        "copy_failures": failures, "user_turn_calls": max(asked, 0)}
    w: list[str] = []
    if n and len(looping) / n >= LOOP_WARN:
        w.append(f"the simulated user repeated an earlier message of their own in "
                 f"{_pct(len(looping) / n)} of conversations ({len(looping)} of {n}): the "
                 "judge is looping, not playing a user; use a larger judge")
    if n and len(unstated) / n >= UNSTATED_WARN:
        w.append(f"the simulated user never stated the goal in {_pct(len(unstated) / n)} of "
                 f"conversations ({len(unstated)} of {n}): the agent was not told what to do, "
                 "so these conversations say little about it")
    if n and len(parrots) / n >= PARROT_WARN:
        w.append(f"the simulated user repeated the simulator's own instructions in "
                 f"{_pct(len(parrots) / n)} of conversations ({len(parrots)} of {n}): the judge "
                 "is echoing its prompt, not playing a user; use a larger judge")
    if n and len(quick) / n >= QUICK_GIVE_UP_WARN:
        w.append(f"the simulated user gave up right after the agent's first reply in "
                 f"{_pct(len(quick) / n)} of conversations ({len(quick)} of {n}): a judge too "
                 "small to follow the conversation ends it so; read a few before blaming the "
                 "agent")
    if asked > 0 and copied / asked >= COPY_WARN:
        w.append(f"the judge copied its prompt's example in {copied} of {asked} user turns "
                 f"({_pct(copied / asked)})" + (f", {failures} of them again without it"
                                                   if failures else "")
                 + ": it is likely too small to play a user")
    if failed:
        w.append(f"the judge failed a user turn in {len(failed)} of {n} conversations "
                 "(ended as simulator_failed); their notes say why")
    return figures, w
