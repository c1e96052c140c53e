"""Question synthesis from chunks through the judge door: distribution, fair coverage,
multi-hop pairing, prompt language, determinism, the candidates' fields, and one real
grammar-constrained llama.cpp call on the tiny random-weight GGUF."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from localeval.corpus import Chunk, chunk_id
from localeval.errors import InvalidArgument, JudgeCallError
from localeval.generate import STYLES, QuestionAnswer, synthesize
from localeval.generate.pairing import related_chunks
from localeval.generate.planning import counts, interleave
from localeval.metrics import Judging
from localeval.testing import ScriptedJudge

STEPS = ("synth_single_hop_specific", "synth_multi_hop_specific", "synth_multi_hop_abstract")


def chunk(doc: str, pos: int, text: str, lang: str = "en") -> Chunk:
    return Chunk(id=chunk_id(doc, pos, text), doc_id=doc, position=pos, text=text, lang=lang,
                 char_start=0, char_end=len(text))


KYOTO = [chunk("kyoto.md", 0, "The Gion Matsuri fills Kyoto every July; decorated yamaboko "
                              "floats parade through the Shijo district."),
         chunk("kyoto.md", 1, "Yasaka Shrine organises the Gion Matsuri, which began in 869 "
                              "when yamaboko floats carried prayers against a plague.")]
TAX = [chunk("tax.md", 0, "Income tax returns are due on March 15. Submitting returns late "
                          "costs interest on the unpaid amount."),
       chunk("tax.md", 1, "Employers deduct payroll withholding every month before wages "
                          "reach an employee's account.")]
OTHER = [chunk(f"doc{i}.md", 0, f"Document {i} describes topic number {i} in plain words.")
         for i in range(4)]
JA = [chunk("tower.md", 0, "東京タワーは1958年に完成した電波塔である。", "ja")]
CORPUS = KYOTO + TAX + OTHER + JA


def script(prefix: str = "Q") -> dict:
    """A reply per call: its question names the step and the first context it was shown."""
    def reply(request):
        first = request.sample.contexts[0][:20]
        return {"question": f"{prefix} {request.step} about {first}?", "answer": f"From: {first}"}
    return {s: reply for s in STEPS}


def run(chunks=CORPUS, n=8, **kw):
    judge = ScriptedJudge(script())
    return synthesize(chunks, n, judging=Judging(judge), **kw), judge


def test_distribution_default_and_custom():
    out, _ = run(n=8)
    assert Counter(c.synthesizer for c in out) == {"single_hop_specific": 4,
                                                   "multi_hop_specific": 2,
                                                   "multi_hop_abstract": 2}
    out, _ = run(n=10, distribution={"single_hop_specific": 1, "multi_hop_abstract": 1})
    assert Counter(c.synthesizer for c in out) == {"single_hop_specific": 5,
                                                   "multi_hop_abstract": 5}
    assert counts(3) == {"single_hop_specific": 1, "multi_hop_specific": 1,
                         "multi_hop_abstract": 1}  # largest remainders
    assert counts(5) == {"single_hop_specific": 3, "multi_hop_specific": 1,
                         "multi_hop_abstract": 1}
    plan = interleave(counts(8))
    assert plan[:4].count("single_hop_specific") == 2 and len(plan) == 8
    with pytest.raises(InvalidArgument, match="unknown synthesizer"):
        run(distribution={"reasoning": 1.0})
    with pytest.raises(InvalidArgument):
        run(distribution={"single_hop_specific": -1})
    with pytest.raises(InvalidArgument):
        run(n=-1)
    with pytest.raises(InvalidArgument, match="unknown style"):
        run(styles=["shouting"])
    assert run(n=0)[0] == [] and run(chunks=[])[0] == []


def test_an_impossible_synthesizer_gives_its_share_to_the_others():
    """Single-chunk documents with nothing in common: no multi-hop question of either kind."""
    out, _ = run(chunks=OTHER, n=4)
    assert [c.synthesizer for c in out] == ["single_hop_specific"] * 4


def test_documents_are_covered_round_robin_before_any_is_reused():
    docs = sorted({c.doc_id for c in CORPUS})
    out, _ = run(n=len(docs), distribution={"single_hop_specific": 1})
    assert sorted(c.doc_ids[0] for c in out) == docs
    out, _ = run(n=2 * len(docs), distribution={"single_hop_specific": 1})
    uses = Counter(c.doc_ids[0] for c in out)
    assert set(uses.values()) == {2}
    # a document's second question comes from its other chunk where it has one
    kyoto = {c.chunk_ids[0] for c in out if c.doc_ids == ("kyoto.md",)}
    assert kyoto == {k.id for k in KYOTO}
    # the order of the documents depends on the seed, the coverage does not
    first = [c.doc_ids[0] for c in run(n=len(docs), seed=1,
                                       distribution={"single_hop_specific": 1})[0]]
    assert sorted(first) == docs


def test_multi_hop_pairs_related_chunks_and_never_unrelated_ones():
    partners = related_chunks(CORPUS)
    by_id = {c.id: [CORPUS[p.index].id for p in ps] for c, ps in zip(CORPUS, partners)}
    assert by_id[KYOTO[0].id] == [KYOTO[1].id] and by_id[KYOTO[1].id] == [KYOTO[0].id]
    assert all(by_id[c.id] == [] for c in TAX + OTHER + JA)  # two tax chunks share no rare words
    out, _ = run(n=6, distribution={"multi_hop_specific": 1})
    assert {c.chunk_ids for c in out} == {(KYOTO[0].id, KYOTO[1].id)}
    assert all(len(c.contexts) == 2 for c in out)


class TopicEmbedder:
    """Vectors by topic word: kyoto and tax chunks related within their topic only."""

    english_only = False
    name = fingerprint = "topics"

    def __init__(self):
        self.own: dict[str, int] = {}

    def embed(self, texts):
        rows = []
        for t in texts:
            v = np.zeros(3 + 64)
            v[:3] = [("Gion" in t) * 1.0, ("tax" in t or "payroll" in t) * 1.0, 0.1]
            v[3 + self.own.setdefault(t, len(self.own))] = 0.6  # each text its own part
            rows.append(v / np.linalg.norm(v))
        return np.asarray(rows, dtype=np.float32)


def test_multi_hop_by_embedding_similarity():
    out, _ = run(n=8, embedder=TopicEmbedder(), distribution={"multi_hop_specific": 1})
    pairs = {c.chunk_ids for c in out}
    assert pairs == {(KYOTO[0].id, KYOTO[1].id), (TAX[0].id, TAX[1].id)}
    for c in out:  # both chunks of one topic, so of one document here
        assert len(set(c.doc_ids)) == 1


def test_abstract_questions_take_several_chunks_of_one_document_in_order():
    out, _ = run(n=3, distribution={"multi_hop_abstract": 1})
    for c in out:
        assert len(c.contexts) >= 2 and len(c.doc_ids) == 1
        assert c.chunk_ids in {(KYOTO[0].id, KYOTO[1].id), (TAX[0].id, TAX[1].id)}
    assert {c.doc_ids[0] for c in out[:2]} == {"kyoto.md", "tax.md"}


def test_a_japanese_chunk_gets_a_japanese_prompt():
    out, judge = run(chunks=JA + OTHER[:1], n=2, distribution={"single_hop_specific": 1})
    ja = next(r for r in judge.requests if r.sample.contexts == [JA[0].text])
    task = ja.messages[1]["content"].split("# Task", 1)[1]
    assert "in Japanese" in task and "東京タワーの高さ" in task and "Golden Gate" not in task
    en = next(r for r in judge.requests if r.sample.contexts == [OTHER[0].text])
    assert "in English" in en.messages[1]["content"]
    assert {c.lang for c in out} == {"ja", "en"}


def test_personas_styles_and_the_questions_already_asked_reach_the_prompt():
    out, judge = run(chunks=KYOTO[:1], n=3, personas=["a tourist in Kyoto"],
                     styles=["misspelled", "web search like"])
    assert {c.persona for c in out} == {"a tourist in Kyoto"}
    assert [c.style for c in out] in (["misspelled", "web search like", "misspelled"],
                                      ["web search like", "misspelled", "web search like"])
    prompts = [r.messages[1]["content"] for r in judge.requests]
    assert all("a tourist in Kyoto" in p for p in prompts)
    assert "spelling mistakes" in prompts[0] or "search box" in prompts[0]
    # the same chunk again: the earlier questions are listed, so the prompt differs
    assert out[0].question in prompts[1] and len(set(prompts)) == 3
    assert set(STYLES) == {"perfect grammar", "web search like", "poor grammar", "misspelled"}


def test_same_seed_same_candidates_and_stable_ids():
    a, _ = run(n=9, seed=3, personas=["p1", "p2"], styles=list(STYLES))
    b, _ = run(n=9, seed=3, personas=["p1", "p2"], styles=list(STYLES))
    assert a == b
    shuffled, _ = run(chunks=CORPUS[::-1], n=9, seed=3, personas=["p1", "p2"], styles=list(STYLES))
    assert shuffled == a  # the order the chunks come in does not matter
    assert len({c.id for c in a}) == len(a)
    assert all(c.id.startswith("q-") and len(c.id) == 18 for c in a)
    # another seed, another order of the documents (the same documents covered)
    single = {"single_hop_specific": 1}
    firsts = {tuple(c.doc_ids[0] for c in run(n=7, seed=s, distribution=single)[0])
              for s in range(4)}
    assert len(firsts) > 1 and len({frozenset(f) for f in firsts}) == 1


def test_candidate_fields_are_filled():
    out, judge = run(n=8, personas=["an analyst"], styles=["perfect grammar"])
    texts = {c.id: c.text for c in CORPUS}
    docs = {c.id: c.doc_id for c in CORPUS}
    for c in out:
        assert c.question.endswith("?") and c.reference.startswith("From: ")
        assert c.contexts == tuple(texts[i] for i in c.chunk_ids)
        assert c.doc_ids == tuple(dict.fromkeys(docs[i] for i in c.chunk_ids))
        assert c.synthesizer in ("single_hop_specific", "multi_hop_specific",
                                 "multi_hop_abstract")
        assert c.lang == CORPUS[[x.id for x in CORPUS].index(c.chunk_ids[0])].lang
        assert c.persona == "an analyst" and c.style == "perfect grammar" and c.dropped is None
        row = c.to_row()
        assert row["user_input"] == c.question and row["reference_context_ids"] == list(c.chunk_ids)
    # every request went through the door: a context block, the schema bounded
    for r in judge.requests:
        assert r.messages[1]["content"].startswith("# Sample")
        assert issubclass(r.schema, QuestionAnswer)
        assert r.schema.model_json_schema()["properties"]["answer"]["maxLength"] <= 600


def test_a_failed_call_is_a_dropped_candidate():
    judge = ScriptedJudge({"synth_single_hop_specific": [JudgeCallError("truncated"),
                                                         {"question": " ", "answer": "a"},
                                                         {"question": "Q?", "answer": "A."}]})
    out = synthesize(OTHER[:3], 3, judging=Judging(judge),
                     distribution={"single_hop_specific": 1})
    assert [c.dropped for c in out] == ["judge failed: truncated", "the judge wrote no question",
                                        None]
    assert out[2].question == "Q?" and out[2].reference == "A."


def test_grammar_path_with_the_tiny_gguf(tiny_gguf, bias):
    """A real llama.cpp call, held by the grammar, gives a schema-valid candidate."""
    from localeval.judge import LlamaJudge

    judge = LlamaJudge(tiny_gguf, n_threads=1, logit_bias=bias)
    try:
        door = Judging(judge, copy_check=False)
        out = synthesize(KYOTO, 2, judging=door, distribution={"single_hop_specific": 1,
                                                               "multi_hop_specific": 1})
    finally:
        judge.close()
    assert len(out) == 2 and door.usage.calls == 2
    for c in out:
        assert c.dropped is None or c.dropped.startswith("judge failed"), c.dropped
        if c.dropped is None:
            QuestionAnswer.model_validate({"question": c.question, "answer": c.reference})
    assert any(c.dropped is None for c in out)
