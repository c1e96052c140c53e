"""Each checker family on a random-weight model of its real architecture.

What is fed (the exact strings and token ids of each published format), which
label is read (a planted verdict gives the documented answer), en/ja/zh text,
and batches equal to one pair at a time.
"""

from __future__ import annotations

import pytest

from localeval.checker import HHEM_PROMPT, lettuce_prompt, load_checker, pair_text, t5_text
from localeval.testing.tiny_checkers import Kind, build_tiny_checker

PAIRS = [
    ("The Eiffel Tower is in Paris. It was built from 1887 to 1889.", "The tower is in Paris."),
    ("東京は日本の首都です。富士山は日本で最も高い山です。", "富士山は日本で最も高い山です。"),
    ("东京是日本的首都。富士山是日本最高的山。", "富士山是日本最高的山。"),
    ("Photosynthesis makes food from carbon dioxide and water.", "Plants eat sunlight."),
    ("Short.", "A much longer claim that runs on for a while about towers and mountains."),
]
KINDS: tuple[Kind, ...] = ("roberta", "deberta", "t5", "hhem", "modernbert")


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("checkers")
    out = {}
    for kind in KINDS:
        for plant in (None, "supported", "unsupported"):
            out[kind, plant] = build_tiny_checker(kind, root / f"{kind}-{plant}", plant=plant)
    return out


@pytest.fixture(scope="module")
def checkers(folders):
    return {kind: load_checker(folders[kind, None], device="cpu", batch_size=4)
            for kind in KINDS}


def test_families_and_capabilities(checkers):
    got = {k: (c.family, c.marks_spans) for k, c in checkers.items()}
    assert got == {"roberta": ("pair", False), "deberta": ("pair", False),
                   "t5": ("text2text", False), "hhem": ("pair", False),
                   "modernbert": ("span", True)}
    assert checkers["roberta"].window_tokens == 400 and checkers["roberta"].max_tokens == 512
    assert checkers["t5"].window_tokens == 500 and checkers["hhem"].window_tokens == 2000
    assert all(len(c.fingerprint) == 64 for c in checkers.values())
    assert len({c.fingerprint for c in checkers.values()}) == len(KINDS)


@pytest.mark.parametrize("kind", ["roberta", "deberta", "t5", "hhem"])
@pytest.mark.parametrize("plant,high", [("supported", True), ("unsupported", False)])
def test_planted_label_gives_the_documented_verdict(folders, kind, plant, high):
    checker = load_checker(folders[kind, plant], device="cpu")
    probs = checker.support(PAIRS)
    assert all((p > 0.99) if high else (p < 0.01) for p in probs), probs


def test_span_checker_reads_label_1_as_hallucinated(folders):
    answer = "It is in Rome. 东京是首都。"
    bad = load_checker(folders["modernbert", "unsupported"], device="cpu")
    spans = bad.spans(["The tower is in Paris."], "Where is it?", answer)
    assert len(spans) == 1
    assert (spans[0].start, spans[0].end, spans[0].text) == (0, len(answer), answer)
    assert spans[0].probability > 0.99
    assert bad.support(PAIRS[:2]) == pytest.approx([0.0, 0.0], abs=1e-6)
    good = load_checker(folders["modernbert", "supported"], device="cpu")
    assert good.spans("The tower is in Paris.", "Where is it?", answer) == []
    assert good.support(PAIRS[:2]) == pytest.approx([1.0, 1.0], abs=1e-6)


def test_span_offsets_are_characters_of_the_answer(checkers):
    answer = "It is in Rome, 東京は首都です。"
    for span in checkers["modernbert"].spans(["x"], "q", answer):
        assert answer[span.start:span.end] == span.text and 0 <= span.start < span.end


def test_minicheck_pair_format(checkers):
    c = checkers["roberta"]
    doc, claim = PAIRS[0]
    assert c.texts([(doc, claim)]) == [f"{doc}</s>{claim}"] == [pair_text(doc, claim, "</s>")]
    ids = c.tokenizer(c.texts([(doc, claim)])[0])["input_ids"]
    tok = c.tokenizer
    want = ([tok.bos_token_id] + tok(doc, add_special_tokens=False)["input_ids"]
            + [tok.eos_token_id] + tok(claim, add_special_tokens=False)["input_ids"]
            + [tok.eos_token_id])
    assert ids == want  # <s> document </s> claim </s>
    deberta = checkers["deberta"]
    assert deberta.texts([(doc, claim)]) == [f"{doc}[SEP]{claim}"]


def test_t5_format_and_label_tokens(checkers):
    c = checkers["t5"]
    doc, claim = PAIRS[0]
    assert c.texts([(doc, claim)]) == [f"predict: {doc}</s>{claim}"] == [
        t5_text(doc, claim, "</s>")]
    first = [c.tokenizer(t, add_special_tokens=False)["input_ids"][0] for t in ("1", "0")]
    assert c.label_ids == tuple(first) and first[0] != first[1]
    assert c.decoder_start == 0


def test_t5_probability_is_the_softmax_of_the_two_label_logits(checkers):
    import torch

    c = checkers["t5"]
    text = c.texts([PAIRS[0]])
    enc = c.tokenizer(text, return_tensors="pt")
    with torch.no_grad():
        logits = c.model(**enc, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long)).logits
    sup, uns = logits[0, 0, c.label_ids[0]], logits[0, 0, c.label_ids[1]]
    want = float(torch.sigmoid(sup - uns))
    assert c.support([PAIRS[0]]) == pytest.approx([want], abs=1e-6)


def test_hhem_prompt_and_first_token(checkers):
    c = checkers["hhem"]
    doc, claim = PAIRS[0]
    text = c.texts([(doc, claim)])[0]
    assert text == HHEM_PROMPT.format(text1=doc, text2=claim)
    assert text.startswith("<pad> Determine if the hypothesis is true given the premise?\n\n"
                           "Premise: ")
    assert c.tokenizer(text)["input_ids"][0] == c.tokenizer.pad_token_id


def test_hhem_never_imports_the_folders_code(folders):
    # the folder's modeling_hhem_v2.py raises when imported; loading and scoring must not
    checker = load_checker(folders["hhem", None], device="cpu", trust_remote_code=False)
    assert len(checker.support(PAIRS[:1])) == 1


def test_lettuce_prompt_matches_lettucedetect():
    prompt = lettuce_prompt(["A.", "B."], "Why?")
    assert prompt == (
        "Briefly answer the following question:\nWhy?\nBear in mind that your response "
        "should be strictly based on the following 2 passages:\npassage 1: A.\npassage 2: B."
        "\nIn case the passages do not contain the necessary information to answer the "
        "question, please reply with: \"Unable to answer based on given passages.\"\noutput:")
    assert lettuce_prompt(["A."], None) == "Summarize the following text:\npassage 1: A.\noutput:"
    assert lettuce_prompt(["甲。"], "为什么？", "cn").startswith("请简短回答以下问题：\n为什么？\n")


def test_lettuce_answer_is_the_second_sequence(checkers):
    c = checkers["modernbert"]
    prompt, answer = lettuce_prompt(["The tower is in Paris."], "Where?"), "In Paris."
    enc = c.tokenizer(prompt, answer)
    tok = c.tokenizer
    want = ([tok.cls_token_id] + tok(prompt, add_special_tokens=False)["input_ids"]
            + [tok.sep_token_id] + tok(answer, add_special_tokens=False)["input_ids"]
            + [tok.sep_token_id])
    assert enc["input_ids"] == want


@pytest.mark.parametrize("kind", KINDS)
def test_batches_equal_one_at_a_time(checkers, kind):
    c = checkers[kind]
    together = c.support(PAIRS)
    alone = [c.support([p])[0] for p in PAIRS]
    assert together == pytest.approx(alone, abs=1e-5)
    assert together == pytest.approx(alone, rel=1e-3, abs=1e-12)  # small ones too (HHEM)
    assert len(set(round(p, 6) for p in together)) > 1  # the inputs matter


def test_batch_size_sets_the_number_of_model_calls(folders):
    c = load_checker(folders["roberta", None], device="cpu", batch_size=2)
    c.support(PAIRS)
    assert c.calls == 3


def test_long_contexts_make_groups_and_a_token_is_supported_if_any_group_supports_it(checkers):
    c = checkers["modernbert"]
    answer = "The tower is in Paris and was built in 1889."
    long = ["The Eiffel Tower is in Paris. " * 300, "It was built from 1887 to 1889. " * 300]
    prompts = c.prompts(long, "When?", answer)
    assert len(prompts) > 1
    assert all(c.count_tokens(p) + c.count_tokens(answer) + 3 <= c.max_tokens for p in prompts)
    per_group = [probs for probs, _ in c.score_prompts([(p, answer) for p in prompts])]
    merged, offsets = c.token_probs([(long, "When?", answer)])[0]
    assert merged == pytest.approx([min(col) for col in zip(*per_group)], abs=1e-6)
    assert len(offsets) == len(merged) > 0
    for span in c.spans(long, "When?", answer):
        assert answer[span.start:span.end] == span.text
