"""``RandomJudge``: answers every judge step with a random schema-valid output.

The judge check must call such a judge unfit; tests use it for that, and
for "a judge that guesses" baselines.
"""

from __future__ import annotations

import hashlib
import json
import random
from typing import Any

from localeval.judge import JudgeReply, JudgeRequest
from localeval.testing.oracle import resolve_node
from localeval.testing.scripted import ScriptedJudge

__all__ = ["RandomJudge"]

_WORDS = ("data", "river", "three", "blue", "model", "east", "paper", "light", "station", "open",
          "資料", "東京", "天气", "公司", "42", "1999", "yes", "no")


class RandomJudge(ScriptedJudge):
    """A judge that answers every step with a random schema-valid output.

    The output depends only on ``seed`` and the request, so a cached run and a
    fresh one agree and threads do not change it.
    """

    def __init__(self, seed: int = 0) -> None:
        super().__init__({})
        self.seed = seed
        self.fingerprint = self.name = f"random-{seed}"

    def ask(self, request: JudgeRequest) -> JudgeReply:
        self.requests.append(request)
        blob = json.dumps([self.seed, request.step, list(request.messages)], ensure_ascii=False)
        rng = random.Random(hashlib.sha256(blob.encode()).hexdigest())
        js = request.schema.model_json_schema()
        return self._reply(request, _random(js, js.get("$defs", {}), rng))


def _random(node: dict[str, Any], defs: dict[str, Any], rng: random.Random) -> Any:
    node = resolve_node(node, defs)
    if "enum" in node or "const" in node:
        return rng.choice(node.get("enum") or [node["const"]])
    kind = node.get("type")
    if kind == "object":
        return {k: _random(v, defs, rng) for k, v in node.get("properties", {}).items()}
    if kind == "array":
        lo = node.get("minItems", 0)
        n = rng.randint(lo, max(lo, min(node.get("maxItems", 4), 4)))
        return [_random(node.get("items", {}), defs, rng) for _ in range(n)]
    if kind == "string":
        text = " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 6)))
        return text[: node.get("maxLength", len(text))]
    if kind == "integer":
        lo = int(node.get("minimum", 0))
        return rng.randint(lo, int(node.get("maximum", lo + 9)))
    if kind == "number":
        return rng.random()
    return rng.random() < 0.5
