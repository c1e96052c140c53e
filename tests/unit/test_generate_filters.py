"""The filters of generated rows (localeval.generate.filter_candidates): each drops what it
should and keeps what it should, in order, with counts, reasons and the generator's health."""

from __future__ import annotations

import pytest

from localeval.corpus import Chunk
from localeval.generate import REASONS, Candidate, filter_candidates
from localeval.metrics import Judging
from localeval.testing import HashEmbedder, ScriptedJudge

TEXTS = {
    "lamp": "The Lumo lamp has three brightness levels. Hold the button for two seconds "
            "to switch between warm and cold light.",
    "leave": "Employees receive twenty-five days of paid annual leave. Unused days expire "
             "at the end of March of the following year.",
    "bike": "The Strada bicycle frame is made of aluminium and weighs 1.4 kilograms. "
            "Its warranty covers the frame for ten years.",
    "tea": "Green tea should steep for two minutes in water at eighty degrees. Boiling "
           "water makes it bitter.",
    "train": "The night train to Vienna leaves at 22:40 from platform seven and arrives "
             "at 07:15 the next morning.",
    "ja": "有給休暇は年に二十日です。申請は十日前までに上司に行います。",
}


def chunk(name: str) -> Chunk:
    text = TEXTS[name]
    lang = "ja" if name == "ja" else "en"
    return Chunk(id=f"{name}.md#0-abcd", doc_id=f"{name}.md", position=0, text=text, lang=lang,
                 char_start=0, char_end=len(text))


CHUNKS = [chunk(n) for n in TEXTS]


def cand(id: str, question: str, reference: str, source: str = "lamp", **kw) -> Candidate:
    c = chunk(source)
    return Candidate(id=id, question=question, reference=reference, contexts=(c.text,),
                     chunk_ids=(c.id,), doc_ids=(c.doc_id,), synthesizer="single_hop_specific",
                     lang=c.lang, **kw)


GOOD = [
    cand("q1", "How many brightness levels does the Lumo lamp have?", "Three.", "lamp"),
    cand("q2", "How many days of paid annual leave do employees get?", "Twenty-five.", "leave"),
    cand("q3", "What is the Strada bicycle frame made of?", "Aluminium.", "bike"),
    cand("q4", "How long should green tea steep?", "Two minutes.", "tea"),
    cand("q5", "When does the night train to Vienna leave?", "At 22:40.", "train"),
    cand("q6", "有給休暇は年に何日ありますか？", "二十日です。", "ja"),
]


def by_id(result):
    return {c.id: c for c in (*result.kept, *result.dropped)}


def test_good_rows_are_all_kept_and_measured():
    res = filter_candidates(GOOD, CHUNKS)
    assert [c.id for c in res.kept] == [c.id for c in GOOD]
    assert res.dropped == () and res.counts == {}
    for c in res.kept:
        assert c.checks["round_trip_rank"] == 1 and c.checks["round_trip_method"] == "bm25"
        assert c.checks["chunk_copy"] < 0.9
    assert res.stage("round_trip").note == "bm25"
    assert res.stage("support").skipped and "no judge" in res.stage("support").note
    assert res.health == ()


def test_degenerate_rows_are_dropped_with_their_reason():
    rows = [
        cand("e1", "   ", "Three."),
        cand("e2", "How many brightness levels does the Lumo lamp have?", ""),
        cand("e3", "Three brightness levels?", "three brightness levels"),
        cand("e4", "Hold the button for two seconds to switch between warm and cold light?",
             "Yes."),
        cand("e5", "What is the boiling point of water at sea level?", "100 degrees Celsius."),
        cand("e6", "How many days of leave do employees get?", "二十日です。", "ja"),
        cand("k1", "How many brightness levels does the Lumo lamp have?", "Three."),
    ]
    res = filter_candidates(rows, CHUNKS,
                            examples=["What is the boiling point of water at sea level?",
                                      "100 degrees Celsius."])
    got = by_id(res)
    assert got["e1"].dropped == "empty" and got["e1"].checks["empty"] == "question"
    assert got["e2"].dropped == "empty" and got["e2"].checks["empty"] == "reference"
    assert got["e3"].dropped == "reference_is_question"
    assert got["e4"].dropped == "copies_chunk" and got["e4"].checks["chunk_copy"] >= 0.9
    assert got["e5"].dropped == "copies_example" and got["e5"].checks["copied"]
    # a Japanese chunk with an English question
    assert got["e6"].dropped == "wrong_language"
    assert got["e6"].checks["question_lang"] == "en" and got["e6"].checks["expected_lang"] == "ja"
    assert [c.id for c in res.kept] == ["k1"]
    assert res.stage("degenerate").dropped == 6


def test_punctuation_and_loops_are_degenerate_but_lists_are_not():
    rows = [
        cand("p1", "How many brightness levels does the Lumo lamp have?", ","),
        cand("p2", "?!", "Three."),
        cand("l1", "What is the answer to the question: What is the answer to the question: "
                   "What is the answer to the question: What is the answer to the question?",
             "Three."),
        cand("l2", "有給休暇は年に何日ありますか？", "これは、これは、これは、これは、これは、これは、", "ja"),
        # a question that names several things, and a reference that lists them, are fine
        cand("k1", "What is on the Lumo lamp: brightness levels, a button and warm and cold "
                   "light?", "Three levels, a button, warm and cold light."),
        cand("k2", "How many days of paid annual leave do employees get, and when do unused "
                   "days expire?", "Twenty-five days; unused days expire at the end of March "
                                   "of the following year.", "leave"),
    ]
    got = by_id(filter_candidates(rows, CHUNKS))
    assert got["p1"].dropped == "empty" and got["p1"].checks["empty"] == "reference"
    assert got["p2"].dropped == "empty" and got["p2"].checks["empty"] == "question"
    assert got["l1"].dropped == "repetitive" and got["l1"].checks["repetitive"] == "question"
    assert got["l1"].checks["repetition"] >= 0.6
    assert got["l2"].dropped == "repetitive" and got["l2"].checks["repetitive"] == "reference"
    assert got["k1"].dropped is None and got["k2"].dropped is None, (got["k1"], got["k2"])


def test_a_question_that_shares_words_with_its_chunk_is_not_a_copy():
    c = cand("q", "Does the Lumo lamp have three brightness levels?", "Yes, three.")
    res = filter_candidates([c], CHUNKS)
    assert res.kept and 0.4 < res.kept[0].checks["chunk_copy"] < 0.9


def test_language_can_be_set_for_cross_lingual_sets():
    en_about_ja = cand("x", "How many days of paid leave are there per year?", "Twenty.", "ja")
    assert filter_candidates([en_about_ja], CHUNKS).dropped[0].dropped == "wrong_language"
    kept = filter_candidates([en_about_ja], CHUNKS, lang="en", k=6).kept
    assert [c.id for c in kept] == ["x"]


def test_near_duplicates_keep_the_first_by_id_order():
    rows = [
        cand("q10", "how many brightness levels does the Lumo lamp have", "Three."),
        cand("q2", "How many brightness levels does the Lumo lamp have?", "Three."),
        cand("q3", "How many brightness levels does the Lumo lamp have ?!", "3."),
        cand("q4", "How long should green tea steep?", "Two minutes.", "tea"),
    ]
    res = filter_candidates(rows, CHUNKS)
    got = by_id(res)
    assert got["q2"].dropped is None and got["q4"].dropped is None
    assert got["q3"].dropped == "near_duplicate" and got["q3"].checks["duplicate_of"] == "q2"
    assert got["q10"].dropped == "near_duplicate" and got["q10"].checks["duplicate_of"] == "q2"
    assert got["q10"].checks["duplicate_jaccard"] == 1.0
    assert [c.id for c in res.kept] == ["q2", "q4"]  # input order
    assert res.counts == {"near_duplicate": 2}


def test_near_duplicates_by_embedding_cosine():
    rows = [cand("a", "How many brightness levels does the Lumo lamp have?", "Three."),
            cand("b", "How many brightness levels has the Lumo lamp got?", "Three.")]
    loose = filter_candidates(rows, CHUNKS, embedder=HashEmbedder(dim=512), near_cosine=0.5)
    assert by_id(loose)["b"].dropped == "near_duplicate"
    assert "duplicate_cosine" in by_id(loose)["b"].checks
    assert "embedding cosine" in loose.stage("near_duplicates").note
    assert not filter_candidates(rows, CHUNKS).dropped  # Jaccard alone: not the same


@pytest.mark.parametrize("embedder", [None, HashEmbedder(dim=1024)], ids=["bm25", "embedder"])
def test_round_trip_keeps_questions_their_chunk_ranks_for(embedder):
    rows = [
        cand("ok", "When does the night train to Vienna leave from platform seven?", "22:40.",
             "train"),
        # written from the lamp chunk, but about the bicycle
        cand("off", "How much does the Strada bicycle frame weigh in kilograms?", "1.4 kg.",
             "lamp"),
    ]
    res = filter_candidates(rows, CHUNKS, embedder=embedder, k=1)
    got = by_id(res)
    assert got["ok"].dropped is None and got["ok"].checks["round_trip_rank"] == 1
    assert got["off"].dropped == "not_retrieved" and got["off"].checks["round_trip_rank"] > 1
    method = res.stage("round_trip").note
    assert method == ("bm25" if embedder is None else "embedding (hash-1024)")
    assert got["ok"].checks["round_trip_method"] == method


def test_round_trip_lexical_fallback_and_ties():
    rows = [cand("none", "Qu'est-ce que c'est?", "Rien.", "lamp"),
            cand("lost", "How many brightness levels?", "Three.", "lamp")]
    lost = rows[1]
    rows[1] = Candidate(**{**lost.__dict__, "chunk_ids": ("missing#0-0000",)})
    res = filter_candidates(rows, CHUNKS, embedder=HashEmbedder(), lexical=True)
    got = by_id(res)
    # no word shared with any chunk: ties count against it, so it ranks last
    assert got["none"].dropped == "not_retrieved"
    assert got["none"].checks["round_trip_rank"] == len(CHUNKS)
    assert got["lost"].dropped == "unknown_chunk"
    assert res.stage("round_trip").note == "bm25"


def test_a_chunk_repeated_in_another_document_does_not_count_against_the_question():
    twin = Chunk(id="copy.md#0-abcd", doc_id="copy.md", position=0, text=TEXTS["lamp"],
                 lang="en", char_start=0, char_end=len(TEXTS["lamp"]))
    res = filter_candidates(GOOD[:1], [twin, *CHUNKS], k=1)
    assert res.kept[0].checks["round_trip_rank"] == 1


def _verdicts(request):
    n = request.schema.model_json_schema()["properties"]["verdicts"].get("maxItems", 1)
    text = request.messages[-1]["content"]
    v = 0 if "purple" in text.lower() else 1
    return {"verdicts": [{"reason": "r", "verdict": v if i == 0 else 1} for i in range(n)]}


def _statements(request):
    text = request.messages[-1]["content"]
    return {"statements": ["The lamp is purple." if "purple" in text.lower() else "A fact."]}


def test_support_filter_through_the_judge_door():
    rows = [cand("s1", "How many brightness levels does the Lumo lamp have?", "Three."),
            cand("s2", "What colour is the Lumo lamp?", "The lamp is purple.")]
    judge = ScriptedJudge({"statements": _statements, "faithfulness_verdicts": _verdicts})
    res = filter_candidates(rows, CHUNKS, judging=Judging(judge))
    got = by_id(res)
    assert got["s1"].dropped is None and got["s1"].checks["support"] == 1.0
    assert got["s2"].dropped == "unsupported" and got["s2"].checks["support"] == 0.0
    assert got["s2"].checks["unsupported_statements"] == ["The lamp is purple."]
    st = res.stage("support")
    assert not st.skipped and (st.checked, st.dropped) == (2, 1)
    # the door was asked for the references' statements, never for the questions
    assert judge.calls("statements") and len(judge.calls("statements")) == 2


def test_order_counts_and_passed_through_rows():
    pre = cand("p0", "How long should green tea steep?", "Two.", "tea").drop("generator_error")
    rows = [
        pre,
        cand("a1", "", "x"),                                            # degenerate
        cand("a2", "How many brightness levels does the Lumo lamp have?", "Three."),
        cand("a3", "How many brightness levels does the Lumo lamp have", "3"),  # duplicate
        cand("a4", "What weighs 1.4 kilograms in the Strada frame?", "The frame.", "tea"),
        cand("a5", "What colour is the Lumo lamp?", "The lamp is purple."),
    ]
    judge = ScriptedJudge({"statements": _statements, "faithfulness_verdicts": _verdicts})
    res = filter_candidates(rows, CHUNKS, judging=Judging(judge), k=1)
    assert [s.name for s in res.stages] == ["degenerate", "near_duplicates", "round_trip",
                                            "support"]
    assert [(s.checked, s.dropped) for s in res.stages] == [(5, 1), (4, 1), (3, 1), (2, 1)]
    assert res.counts == {"empty": 1, "near_duplicate": 1, "not_retrieved": 1,
                          "unsupported": 1, "generator_error": 1}
    assert list(res.counts)[:4] == [r for r in REASONS if r in res.counts]
    assert [c.id for c in res.kept] == ["a2"]
    assert [c.id for c in res.dropped] == ["p0", "a1", "a3", "a4", "a5"]
    assert all(c.dropped for c in res.dropped)
    assert res.to_dict()["counts"] == res.counts
    row = by_id(res)["a3"].to_row()
    assert row["dropped"] == "near_duplicate" and row["checks"]["duplicate_of"] == "a2"


def test_health_when_most_rows_copy_their_chunk():
    sentences = [s.strip() + "?" for t in TEXTS.values() if "." in t
                 for s in t.split(".") if len(s.strip()) > 20][:6]
    rows = [cand(f"c{i}", s, "Yes.", next(n for n, t in TEXTS.items() if s[:-1] in t))
            for i, s in enumerate(sentences)]
    rows.append(GOOD[0])
    res = filter_candidates(rows, CHUNKS)
    assert res.counts.get("copies_chunk") == len(sentences)
    assert res.figures["chunk_copy_share"] == pytest.approx(len(sentences) / len(rows), abs=1e-3)
    assert any("copied its chunk" in h and f"{len(sentences)} of {len(rows)}" in h
               for h in res.health)


def test_health_names_the_most_repeated_opening():
    rows = [cand(f"w{i}", q, "x", src) for i, (q, src) in enumerate([
        ("What is the Lumo lamp's number of brightness levels?", "lamp"),
        ("What is the paid annual leave of employees?", "leave"),
        ("What is the Strada bicycle frame made of?", "bike"),
        ("What is the steeping time for green tea?", "tea"),
        ("What is the departure time of the night train to Vienna?", "train"),
    ])]
    res = filter_candidates(rows, CHUNKS)
    assert res.figures["most_repeated_opening"] == "what is the"
    assert any('start with "what is the"' in h for h in res.health)


def test_k_must_be_positive():
    with pytest.raises(ValueError):
        filter_candidates(GOOD, CHUNKS, k=0)


def test_a_question_about_nothing_is_not_retrieved_on_common_words():
    """BM25 gives no weight to words in more than half the chunks: "what is the" alone
    does not carry a question into a small corpus's top k."""
    texts = [f"The {w} is the thing to see and the place to be in {w}." for w in
             ("Vienna", "Kyoto", "Lima", "Oslo", "Accra", "Hanoi", "Quito", "Perth")]
    texts[0] = "The thing, the thing to see, is the thing to see: the Prater wheel."
    chunks = [Chunk(id=f"c{i}#0-abcd", doc_id=f"c{i}", position=0, text=t, lang="en",
                    char_start=0, char_end=len(t)) for i, t in enumerate(texts)]

    def ask(id_, q, i):
        return Candidate(id=id_, question=q, reference="It is.", contexts=(texts[i],),
                         chunk_ids=(chunks[i].id,), doc_ids=(chunks[i].doc_id,),
                         synthesizer="single_hop_specific", lang="en")

    res = filter_candidates([ask("vague", "What is the thing to see?", 0),
                             ask("named", "What is the thing to see in Kyoto?", 1)],
                            chunks, k=5)
    got = by_id(res)
    assert got["vague"].dropped == "not_retrieved" and got["named"].dropped is None
    assert got["named"].checks["round_trip_rank"] == 1
