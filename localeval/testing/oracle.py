"""Rule-based test judge: ``OracleJudge`` answers every step right (``RandomJudge`` lives in random_judge.py).

They are the two ends a judge check has to tell apart without a language
model: ``localeval judge check`` must call the oracle fit and the random judge
unfit. Both answer from structure (``JudgeRequest.step``, ``.schema``,
``.sample``, ``.inputs``), never from the prompt text, and both are driven by
the output schema: a field is filled by its name (``statements``,
``verdicts``, ``rating``, ``entities``...), lists are cut or padded to the
schema's item bounds and strings to their length, so a step whose schema
changes keeps working.

The oracle's rules, in all three languages:

- a text's units are its content words (English: stemmed, stop words dropped)
  and, for Japanese and Chinese, its Han and katakana characters; numbers are
  units too, and a claim with a number its source lacks is never supported;
- a claim is supported by a source when at least ``SUPPORTED`` of its units
  occur in the source and the source sentence closest to it does not deny it
  (a negation the claim lacks); a context is useful when it holds at least
  ``USEFUL`` of the reference's or the answer's units, and relevant to the
  question when it holds ``RELEVANT`` of the question's;
- statements are the sentences of the source text; entities are capitalised
  words, numbers, katakana runs and Han runs (CJK has no word boundaries, so
  candidates come from every field of the sample and are kept where they occur
  in the text: the same entity is spelt the same way on both sides);
- answer_relevancy's questions are the answer rephrased as a question,
  noncommittal when the answer is evasive ("not sure", "わかりません", "不知道");
- of two answers (``pairwise_preference``) the better is the one with the larger
  share of sentences its contexts and the reference support; equal shares tie;
- conversations (goal reached, topics answered): oracle_turns.py.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any, Callable

from pydantic import BaseModel

from localeval.judge import JudgeReply, JudgeRequest
from localeval.lang import detect_lang, porter_stem, split_sentences
from localeval.testing.oracle_turns import conversation_steps
from localeval.testing.scripted import ScriptedJudge

__all__ = ["OracleJudge", "resolve_node", "support", "entities", "fill", "SUPPORTED", "USEFUL",
           "RELEVANT"]

#: Share of a claim's units its source must hold for the claim to be supported.
SUPPORTED = 0.75
#: Share of the target's units (reference or answer) a context must hold to be useful.
USEFUL = 0.5
#: Share of the question's units a context sentence must hold to be relevant to it.
RELEVANT = 0.65

_STOP_EN = frozenset("""a an the is are was were be been being it its this that these those of in
on at to for by with from and or as about into than then there their they he she his her we you
your our i me my do does did can could will would should may might must has have had what which
who whom whose when where why how also up so if""".split())
# Particles, copulas and question words that carry no content in a CJK claim.
_STOP_CJK = frozenset("的了是在吗呢和与有为约将于这那个么也都就很及被把从对每何几哪谁什吧之其以而且或")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_LATIN = re.compile(r"[a-zà-öø-ÿ]+")
_CJK_CHAR = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u30a1-\u30fa\u30fc]")
_KATAKANA_RUN = re.compile(r"[\u30a1-\u30fa\u30fc]{2,}")
_HAN_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_CAPITALISED = re.compile(r"\b[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*")
_STRIP_LEAD = re.compile(r"^(?:(?:The|A|An|In|At|On|It|Its|This|That|What|Who|How|When|Where|"
                         r"Which|About|Our|To|For|By|Of)\s+)+")
_NEGATION = re.compile(r"\b(?:not|no|never|none)\b|n't|ない|ません|ず[、。]|没有|不是|未|无")
_EVASIVE = ("not sure", "don't know", "do not know", "cannot answer", "can't answer", "no idea",
            "わかりません", "分かりません", "答えられません", "不知道", "不确定", "不清楚", "无法回答")


def _fold(text: str) -> str:
    return unicodedata.normalize("NFKC", text or "").casefold().replace("\u2019", "'")


def _numbers(text: str) -> list[str]:
    return [n.replace(",", "") for n in _NUMBER.findall(_fold(text))]


def units(text: str) -> list[str]:
    """Numbers, stemmed English content words and CJK content characters of ``text``."""
    folded = _fold(text)
    rest = _NUMBER.sub(" ", folded)
    out = _numbers(text)
    out += [porter_stem(w) for w in _LATIN.findall(rest) if len(w) > 1 and w not in _STOP_EN]
    out += [c for c in _CJK_CHAR.findall(rest) if c not in _STOP_CJK]
    return out


def _found(unit: str, theirs: set[str]) -> bool:
    if unit in theirs:
        return True
    # English stems of one word can differ ("employe" / "employ"): a shared stem prefix counts
    return len(unit) >= 4 and unit.isalpha() and unit.isascii() and any(
        len(t) >= 4 and (t.startswith(unit) or unit.startswith(t)) for t in theirs)


def support(claim: str, source: str) -> float:
    """Share of ``claim``'s units found in ``source``; 0 when a number of the claim is not
    there, or when the source sentence closest to the claim denies it ("... is not covered")."""
    mine = units(claim)
    if not mine:
        return 1.0  # nothing to check: "Yes." is not a claim against anything
    theirs = set(units(source))
    if any(n not in theirs for n in _numbers(claim)):
        return 0.0
    sentences = _sentences(source) or [source]
    closest = max(sentences, key=lambda x: len(set(mine) & set(units(x))))
    if _NEGATION.search(_fold(closest)) and not _NEGATION.search(_fold(claim)):
        return 0.0
    return sum(_found(u, theirs) for u in mine) / len(mine)


def _judged(text: str, source: str, where: str, need: float = SUPPORTED) -> dict[str, Any]:
    share = support(text, source)
    return {"statement": text, "verdict": int(share >= need),
            "reason": f"{round(100 * share)}% of the key terms appear in the {where}"}


def _rating(fraction: float) -> float:
    """1 for all, 0.5 for some, 0 for none: mapped onto the schema's rating literals."""
    return 1.0 if fraction >= 0.999 else 0.5 if fraction > 0 else 0.0


def _sentences(text: str) -> list[str]:
    return split_sentences(text or "", detect_lang(text or ""))


def entities(text: str, vocabulary: str) -> list[str]:
    """Candidate entities of ``vocabulary`` (one field a line) that occur in ``text``,
    without overlaps, the most salient first.

    English names are runs of capitalised words ("Maria Okafor"), the longest
    kept; CJK runs come from every field, the shortest kept, so that the run a
    short reference names ("十五天") is found inside a longer context run.
    """
    latin = {_STRIP_LEAD.sub("", c) for c in _CAPITALISED.findall(vocabulary)}
    latin |= set(_NUMBER.findall(vocabulary))
    latin = {c for c in latin if c and c.casefold() not in _STOP_EN}
    cjk = set(_KATAKANA_RUN.findall(vocabulary))
    for run in _HAN_RUN.findall(vocabulary):
        cjk |= {p for p in re.split("[" + "".join(_STOP_CJK) + "]", run) if len(p) >= 2}
    taken: list[tuple[int, int, str]] = []
    order = sorted(latin, key=lambda c: -len(c)) + sorted(cjk, key=len)
    for c in order:
        edge = "(?<![A-Za-z0-9])" if c.isascii() else ""
        for m in re.finditer(edge + re.escape(c) + ("(?![A-Za-z0-9])" if edge else ""), text):
            if not any(m.start() < e and s < m.end() for s, e, _ in taken):
                taken.append((m.start(), m.end(), c))
    # Most salient first, as the schema may keep only the first few: numbers, then
    # names, then the runs the sample mentions in the most places.
    def rank(item: tuple[int, int, str]) -> tuple[int, int, int]:
        start, _, c = item
        kind = 0 if _NUMBER.fullmatch(c) else 1 if c.isascii() else 2
        return kind, -sum(c in f for f in fields), start

    fields = vocabulary.split("\n")
    out: list[str] = []
    for _, _, c in sorted(taken, key=rank):
        if c not in out:
            out.append(c)
    return out


def _evasive(answer: str) -> bool:
    folded = _fold(answer)
    return any(p in folded for p in _EVASIVE)


def _as_question(answer: str, i: int) -> str:
    a = answer.strip().rstrip(".。!！?？")
    if detect_lang(a) == "ja":
        return f"{a}か？" if i == 0 else f"{a}というのは本当ですか？"
    if detect_lang(a) == "zh":
        return f"{a}吗？" if i == 0 else f"{a}，是真的吗？"
    return f"{a}?" if i == 0 else f"Is it true that {a[:1].lower()}{a[1:]}?"


# -- what each step's right answer is, as parts named like schema fields -------------------
def _joined(sample: Any) -> str:
    return "\n".join(sample.contexts or [])


def _statements(req: JudgeRequest, s: Any) -> dict[str, Any]:
    text = s.answer if req.inputs.get("target") == "answer" else s.reference
    return {"statements": _sentences(text)}


def _statement_verdicts(req: JudgeRequest, s: Any) -> dict[str, Any]:
    src = req.inputs.get("source")
    if isinstance(src, int) and s.contexts and 1 <= src <= len(s.contexts):
        source, where = s.contexts[src - 1], f"context [{src}]"
    elif src == "reference":
        source, where = s.reference or "", "reference"
    else:
        source, where = _joined(s), "contexts"
    return {"verdicts": [_judged(t, source, where) for t in req.inputs.get("statements", [])]}


def _claim_verdicts(req: JudgeRequest, s: Any) -> dict[str, Any]:
    # FactualCorrectness: the other side's text, read with the question (as _correctness)
    where = "answer" if req.inputs.get("source") == "answer" else "reference"
    source = "\n".join([getattr(s, where) or "", s.question or ""])
    return {"verdicts": [_judged(t, source, where) for t in req.inputs.get("statements", [])]}


def _usefulness(target: str) -> Callable[[JudgeRequest, Any], dict[str, Any]]:
    def step(req: JudgeRequest, s: Any) -> dict[str, Any]:
        k = int(req.inputs.get("k", 1))
        ctx = (s.contexts or [""])[k - 1] if 0 < k <= len(s.contexts or []) else ""
        return _judged(getattr(s, target) or "", ctx, f"context [{k}]", USEFUL)
    return step


def _recall(req: JudgeRequest, s: Any) -> dict[str, Any]:
    given = req.inputs.get("sentences") or req.inputs.get("statements")
    sents = list(given) if given else _sentences(s.reference or "")
    return {"verdicts": [_judged(t, _joined(s), "contexts") for t in sents]}


def _entities(req: JudgeRequest, s: Any) -> dict[str, Any]:
    text = _joined(s) if req.inputs.get("target") == "contexts" else s.reference or ""
    vocab = "\n".join([s.question or "", s.answer or "", s.reference or "", _joined(s)])
    return {"entities": entities(text, vocab)}


def _correctness(req: JudgeRequest, s: Any) -> dict[str, Any]:
    # A reference is read with its question: "1958年に完成しました。" names no subject.
    a_st = list(req.inputs.get("answer_statements", []))
    g_st = list(req.inputs.get("reference_statements", []))
    ref = "\n".join(g_st + [s.question or ""])
    ans = "\n".join(a_st + [s.question or ""])
    a_rows = [_judged(t, ref, "reference") for t in a_st]
    g_rows = [_judged(t, ans, "answer") for t in g_st]
    return {"answer": a_rows, "reference": g_rows}


def _relevancy(req: JudgeRequest, s: Any) -> dict[str, Any]:
    given = req.inputs.get("sentences")
    sents = list(given) if given else [x for c in s.contexts or [] for x in _sentences(c)]
    picked = [(i, t) for i, t in enumerate(sents) if support(s.question or "", t) >= RELEVANT]
    return {"sentences": picked}


def _questions(req: JudgeRequest, s: Any) -> dict[str, Any]:
    n = int(req.inputs.get("n", 1))
    flag = int(_evasive(s.answer or ""))
    return {"questions": [{"question": _as_question(s.answer or "", i), "noncommittal": flag}
                          for i in range(n)]}


def _share(claims: list[str], source: str) -> float:  # share of claims the source supports
    return sum(support(c, source) >= SUPPORTED for c in claims) / len(claims) if claims else 0.0


def _nv_context(req: JudgeRequest, s: Any) -> dict[str, Any]:
    cover = support(s.question or "", _joined(s))
    return {"rating": 1.0 if cover >= RELEVANT else 0.5 if cover >= RELEVANT / 2 else 0.0}


def _nv_accuracy(req: JudgeRequest, s: Any) -> dict[str, Any]:
    ans, ref = _sentences(s.answer or ""), _sentences(s.reference or "")
    q = s.question or ""
    return {"rating": _rating(min(_share(ans, f"{s.reference}\n{q}"),
                                  _share(ref, f"{s.answer}\n{q}")))}


def _nv_grounded(req: JudgeRequest, s: Any) -> dict[str, Any]:
    return {"rating": _rating(_share(_sentences(s.answer or ""), _joined(s)))}


def _pairwise(req: JudgeRequest, s: Any) -> dict[str, Any]:
    # The answer more of whose sentences its contexts and the reference support is better;
    # equal shares are a tie (pairwise_preference, asked in both orders)
    def share(side: str) -> float:
        own = req.inputs.get(f"contexts_{side}")
        source = "\n".join(list(own if own is not None else s.contexts or [])
                           + [s.reference or ""])
        return _share(_sentences(req.inputs.get(f"answer_{side}") or ""), source)

    a, b = share("a"), share("b")
    return {"reason": f"supported sentences: A {round(100 * a)}%, B {round(100 * b)}%",
            "verdict": "A" if a > b else "B" if b > a else "tie"}


_STEPS: dict[str, Callable[[JudgeRequest, Any], dict[str, Any]]] = {
    "statements": _statements, "entities": _entities, "answer_relevancy": _questions,
    "faithfulness_verdicts": _statement_verdicts, "noise_verdicts": _statement_verdicts,
    "context_precision": _usefulness("reference"), "context_utilization": _usefulness("answer"),
    "context_recall": _recall, "answer_correctness": _correctness,
    "context_relevancy": _relevancy, "nv_context_relevance": _nv_context,
    "nv_answer_accuracy": _nv_accuracy, "nv_response_groundedness": _nv_grounded,
    "claims": _statements, "claim_verdicts": _claim_verdicts,
    "pairwise_preference": _pairwise,
    **conversation_steps(support, USEFUL),  # agent goal accuracy, topic adherence
}


# -- filling a schema ----------------------------------------------------------------------
def resolve_node(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        node = defs[node["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in node:  # Optional[...]: the non-null branch
        node = next((n for n in node["anyOf"] if n.get("type") != "null"), node["anyOf"][0])
        return resolve_node(node, defs)
    return node


def _part(parts: dict[str, Any], name: str) -> Any:
    """The part for field ``name``: by exact name, else by the input it is about."""
    if name in parts:
        return parts[name]
    for key in ("reference", "answer", "verdicts"):
        if key in name and key in parts:
            return parts[key]
    return None


def _conform(value: Any, node: dict[str, Any], defs: dict[str, Any]) -> Any:
    """``value`` made valid for schema ``node``: sizes, lengths, literals, index bases."""
    node = resolve_node(node, defs)
    kind = node.get("type")
    if "enum" in node or "const" in node:
        allowed = sorted(node.get("enum") or [node["const"]])
        if isinstance(value, tuple):  # (0-based index, text) of a selectable item
            value = value[0] + (1 if min(allowed) >= 1 else 0)
        elif isinstance(value, float) and all(isinstance(a, int) for a in allowed):
            return allowed[round(value * (len(allowed) - 1))]  # a 0..1 grade onto the literals
        return value if value in allowed else allowed[0]
    if kind == "object":
        src = value if isinstance(value, dict) else {}
        return {k: _conform(src.get(k, _part(src, k)), v, defs)
                for k, v in node.get("properties", {}).items()}
    if kind == "array":
        items = list(value or [])[: node.get("maxItems", len(value or []))]
        while len(items) < node.get("minItems", 0):
            items.append({} if resolve_node(node.get("items", {}), defs).get("type") == "object"
                         else "")
        return [_conform(x, node.get("items", {}), defs) for x in items]
    if kind == "integer":
        if isinstance(value, tuple):  # (0-based index, text): numbered as the schema counts
            value = value[0] + (1 if node.get("minimum", 1) >= 1 else 0)
        v = int(value or 0)
        return max(v, int(node.get("minimum", v)))
    if kind == "string":
        text = value[1] if isinstance(value, tuple) else value
        return str(text if text is not None else "")[: node.get("maxLength", 10**6)]
    if kind == "number":
        return float(value or 0.0)
    if kind == "boolean":
        return bool(value)
    return value


def fill(schema: type[BaseModel], parts: dict[str, Any]) -> dict[str, Any]:
    """A valid output for ``schema`` whose fields are taken from ``parts`` by name."""
    js = schema.model_json_schema()
    return _conform(parts, js, js.get("$defs", {}))


class OracleJudge(ScriptedJudge):
    """A judge that answers every step right, by rule (see the module docstring)."""

    fingerprint = "oracle"
    name = "oracle"

    def __init__(self) -> None:
        super().__init__({})

    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        base = re.sub(r"_[12]$", "", request.step)
        if base not in _STEPS or request.sample is None:
            raise KeyError(f"OracleJudge has no rule for step {request.step!r}")
        return self._reply(request, fill(request.schema, _STEPS[base](request, request.sample)))
