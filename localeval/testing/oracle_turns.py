"""``OracleJudge``'s rules for the conversation steps (agent goal accuracy, topic adherence,
conversation completeness, turn relevancy, knowledge retention).

Kept apart from oracle.py (which would pass 400 lines) and handed oracle.py's
``support`` by ``conversation_steps``, so that the rules are the same as the
single-turn steps' and this module imports nothing of oracle.py's.

- the user's goal is the text of the user turns; the end state is what the
  assistant wrote (else the last tool result);
- an arrived outcome reaches the desired one when it holds at least ``USEFUL`` of
  its units and no sentence of it denies it (``support``'s negation rule);
- the topics are the user turns; a topic was answered unless the assistant's
  reply to that turn refuses ("sorry, I can't", "申し訳ありません", "抱歉");
- a topic falls into a reference topic when it holds ``USEFUL`` of that topic's units;
- the user's intentions are the user turns, each satisfied when what the assistant
  wrote holds ``USEFUL`` of its units and does not deny it;
- an assistant turn is relevant when it holds ``USEFUL`` of the last user turn's
  units, or refuses it;
- a user message's facts are its sentences; an assistant message forgets them when
  it asks a question ``USEFUL`` of whose units the facts already hold.
"""

from __future__ import annotations

import re
from typing import Any, Callable

from localeval.judge import JudgeRequest
from localeval.lang import detect_lang, split_sentences

__all__ = ["conversation_steps"]

Rule = Callable[[JudgeRequest, Any], dict[str, Any]]
_QUESTION = re.compile(r"[?？]|か。?$|吗")
_REFUSAL = re.compile(r"sorry|can't help|cannot help|can not help|unable to|申し訳|お答えできません|"
                      r"対応できません|抱歉|无法|不能", re.IGNORECASE)


def _turns(s: Any, role: str) -> list[str]:
    return [m.content for m in getattr(s, "messages", []) if m.role == role and m.content.strip()]


def _outcome(req: JudgeRequest, s: Any) -> dict[str, Any]:
    said = _turns(s, "assistant") or _turns(s, "tool")[-1:]
    return {"user_goal": " ".join(_turns(s, "user")), "end_state": " ".join(said)}


def _reply_to(s: Any, topic: str) -> str:
    """The assistant's text after the user turn ``topic``, up to the next user turn."""
    out: list[str] = []
    inside = False
    for m in getattr(s, "messages", []):
        if m.role == "user":
            if inside:
                break
            inside = m.content.strip() == topic.strip()
        elif inside and m.role == "assistant":
            out.append(m.content)
    return " ".join(out)


def conversation_steps(support: Callable[[str, str], float], useful: float) -> dict[str, Rule]:
    """The oracle's rule per conversation step, given its ``support`` share and threshold."""

    def compare(req: JudgeRequest, s: Any) -> dict[str, Any]:
        share = support(str(req.inputs.get("desired", "")), str(req.inputs.get("arrived", "")))
        return {"reason": f"{round(100 * share)}% of the desired outcome was reached",
                "verdict": int(share >= useful)}

    def topics(req: JudgeRequest, s: Any) -> dict[str, Any]:
        return {"topics": _turns(s, "user")}

    def answered(req: JudgeRequest, s: Any) -> dict[str, Any]:
        reply = _reply_to(s, str(req.inputs.get("topic", "")))
        refused = not reply.strip() or bool(_REFUSAL.search(reply))
        return {"reason": "the AI refused" if refused else "the AI answered",
                "verdict": int(not refused)}

    def classified(req: JudgeRequest, s: Any) -> dict[str, Any]:
        refs = list(req.inputs.get("reference_topics") or [])
        return {"verdicts": [
            {"reason": "a reference topic" if hit else "no reference topic", "verdict": int(hit)}
            for hit in (any(support(r, t) >= useful for r in refs)
                        for t in req.inputs.get("statements", []))]}

    def satisfied(req: JudgeRequest, s: Any) -> dict[str, Any]:
        said = " ".join(_turns(s, "assistant"))
        return {"verdicts": [{"reason": f"{round(100 * share)}% of it was done",
                              "verdict": int(share >= useful)}
                             for share in (support(i, said) for i in req.inputs.get(
                                 "statements", []))]}

    def relevant(req: JudgeRequest, s: Any) -> dict[str, Any]:
        rows = list(req.inputs.get("conversation") or [])
        reply = rows[-1]["content"] if rows else ""
        asked = next((r["content"] for r in reversed(rows) if r["role"] == "user"), "")
        share = support(asked, reply)
        ok = share >= useful or bool(_REFUSAL.search(reply))
        return {"reason": f"{round(100 * share)}% of the request is taken up", "verdict": int(ok)}

    def facts(req: JudgeRequest, s: Any) -> dict[str, Any]:
        rows = list(req.inputs.get("conversation") or [])
        text = rows[-1]["content"] if rows else ""
        return {"facts": split_sentences(text, detect_lang(text))}

    def retained(req: JudgeRequest, s: Any) -> dict[str, Any]:
        rows = list(req.inputs.get("conversation") or [])
        reply = rows[-1]["content"] if rows else ""
        known = " ".join(req.inputs.get("statements") or [])
        asks = bool(_QUESTION.search(reply)) and support(reply, known) >= useful
        return {"reason": "it asks again for a stated fact" if asks else "it keeps the facts",
                "verdict": int(not asks)}

    return {"turn_relevancy": relevant, "knowledge_facts": facts,
            "knowledge_retention": retained,
            "conversation_intentions": lambda req, s: {"intentions": _turns(s, "user")},
            "conversation_completeness": satisfied,
            "agent_goal_outcome": _outcome, "agent_goal_compare": compare,
            "topic_extraction": topics, "topic_refused": answered,
            "topic_classification": classified}
