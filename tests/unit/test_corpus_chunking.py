"""Chunking a corpus (localeval.corpus.chunk_documents): whole sentences, stable ids,
never over max_chars, Japanese and Chinese cut at 。！？, and the chunks file."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pytest

from localeval.corpus import Chunk, Corpus, Document, chunk_documents, chunk_id, corpus_hash, read_corpus
from localeval.errors import DataError, InvalidArgument
from localeval.generate import write_chunks

EN = ("The lamp has three brightness levels. Press the button once to switch it on! "
      "Does it dim? Yes, hold the button for two seconds. Dr. Smith wrote the manual in 2021. ")
JA = "有給休暇は年に二十日です。申請は十日前までに行います！本当ですか？彼は「はい。」と言った。"
ZH = "员工每年有二十天带薪假期。请提前十天申请！真的吗？他说：“是的。”然后走了。"


def _corpus(docs: dict[str, str]) -> Corpus:
    return Corpus(tuple(Document(i, t, i) for i, t in sorted(docs.items())), (), "<test>")


def _chunks(docs: dict[str, str], **kw) -> tuple[list[Chunk], list[str]]:
    notes: list[str] = []
    return chunk_documents(_corpus(docs), on_note=notes.append, **kw), notes


def _check_slices(chunks: list[Chunk], docs: dict[str, str]) -> None:
    for c in chunks:
        assert c.text == docs[c.doc_id][c.char_start:c.char_end]
        assert c.id == f"{c.doc_id}#{c.position}-" + \
            hashlib.sha256(c.text.encode()).hexdigest()[:8]


def test_english_chunks_end_at_sentence_ends_and_fit():
    docs = {"manual.txt": EN * 8}
    chunks, notes = _chunks(docs, max_chars=200, min_chars=10)
    assert len(chunks) > 3 and notes == []
    assert all(len(c.text) <= 200 for c in chunks)
    assert all(c.text.endswith((".", "!", "?")) for c in chunks)
    assert all(c.lang == "en" for c in chunks)
    assert [c.position for c in chunks] == list(range(len(chunks)))
    # "Dr. Smith" is not a sentence end: no chunk starts with "Smith"
    assert not any(c.text.startswith("Smith") for c in chunks)
    _check_slices(chunks, docs)


@pytest.mark.parametrize("text, lang", [(JA, "ja"), (ZH, "zh")])
def test_japanese_and_chinese_are_cut_at_sentence_ends(text, lang):
    docs = {f"{lang}.txt": text * 10}
    chunks, notes = _chunks(docs, max_chars=60, min_chars=5)
    assert len(chunks) > 5 and notes == []
    assert all(len(c.text) <= 60 for c in chunks)
    assert all(c.lang == lang for c in chunks)
    # every chunk ends at 。！？ (or the quotation closed after one), never inside a quote
    assert all(re.search(r"[。！？][」”]?$", c.text) for c in chunks), [c.text for c in chunks]
    assert not any(c.text.startswith(("」", "”", "と言った", "然后")) and
                   not c.text.startswith("然后走了") for c in chunks)
    _check_slices(chunks, docs)


def test_a_corpus_of_only_japanese_read_and_chunked(tmp_path):
    (tmp_path / "ja").mkdir()
    (tmp_path / "ja" / "休暇.txt").write_text(JA * 3, encoding="utf-8")
    (tmp_path / "ja" / "食堂.md").write_text("# 社員食堂\n\n社員食堂は十一時に開きます。"
                                            "定食は五百円です！", encoding="utf-8")
    chunks = chunk_documents(read_corpus(tmp_path / "ja"), max_chars=80, min_chars=5)
    assert {c.lang for c in chunks} == {"ja"}
    assert [c.doc_id for c in chunks].count("食堂.md") == 1
    assert all(len(c.text) <= 80 for c in chunks)


def test_a_corpus_of_only_chinese_read_and_chunked(tmp_path):
    (tmp_path / "zh").mkdir()
    (tmp_path / "zh" / "请假.txt").write_text(ZH * 4, encoding="utf-8")
    chunks = chunk_documents(read_corpus(tmp_path / "zh"), max_chars=70, min_chars=5)
    assert {c.lang for c in chunks} == {"zh"} and len(chunks) > 1
    assert all(c.text.endswith(("。", "！", "？", "”")) for c in chunks)


def test_ids_are_stable_across_runs_and_order_and_an_edit_changes_only_its_document():
    docs = {f"d{i}.md": EN * (i + 2) for i in range(4)}
    first, _ = _chunks(docs, max_chars=150)
    again = chunk_documents(list(reversed(_corpus(docs).documents)), max_chars=150,
                            on_note=lambda _: None)
    assert [c.id for c in first] == [c.id for c in again]
    edited = dict(docs, **{"d2.md": docs["d2.md"].replace("two seconds", "three seconds")})
    after, _ = _chunks(edited, max_chars=150)
    changed = {c.doc_id for c in set(after) ^ set(first)}
    assert changed == {"d2.md"}
    assert corpus_hash(_corpus(edited)) != corpus_hash(_corpus(docs))


def test_chunk_id_rule():
    assert chunk_id("a/b.md", 3, "Hi.") == "a/b.md#3-" + hashlib.sha256(b"Hi.").hexdigest()[:8]


def test_chunks_never_mix_documents_and_keep_paragraph_breaks():
    docs = {"a.txt": "First paragraph here.\n\nSecond paragraph here.", "b.txt": "Other doc."}
    chunks, _ = _chunks(docs, max_chars=500, min_chars=5)
    assert [(c.doc_id, c.text) for c in chunks] == [
        ("a.txt", "First paragraph here.\n\nSecond paragraph here."), ("b.txt", "Other doc.")]


def test_an_over_long_sentence_is_cut_and_reported():
    long_sentence = "This sentence goes on, " * 30 + "and ends here."
    docs = {"long.txt": "Short one. " + long_sentence + " Short two."}
    chunks, notes = _chunks(docs, max_chars=100, min_chars=5)
    assert all(len(c.text) <= 100 for c in chunks)
    assert len(notes) == 1
    assert notes[0].startswith(f"long.txt: a sentence of {len(long_sentence)} characters "
                               "(at character 11) is longer than max_chars=100; cut into")
    assert "at a clause" in notes[0]
    # every character of the document is in a chunk, in order
    assert "".join(c.text for c in chunks).replace(" ", "") == \
        docs["long.txt"].replace(" ", "")
    # CJK without punctuation is cut hard
    chunks, notes = _chunks({"z.txt": "字" * 250}, max_chars=100, min_chars=5)
    assert [len(c.text) for c in chunks] == [100, 100, 50] and "(hard)" in notes[0]


def test_overlap_repeats_the_last_sentences_when_they_fit():
    sentences = [f"Sentence number {i} is here." for i in range(12)]
    docs = {"o.txt": " ".join(sentences)}
    chunks, _ = _chunks(docs, max_chars=90, overlap_sentences=1)
    for a, b in zip(chunks, chunks[1:]):
        last = re.findall(r"Sentence number \d+ is here\.", a.text)[-1]
        assert b.text.startswith(last)
        assert b.char_start < a.char_end < b.char_end
    assert all(len(c.text) <= 90 for c in chunks)
    assert chunks[-1].text.endswith("11 is here.")


def test_min_chars_drops_tiny_documents_with_a_note_and_rebalances_a_short_tail():
    chunks, notes = _chunks({"tiny.txt": "Hi.", "ok.txt": "A sentence long enough."},
                            min_chars=10)
    assert [c.doc_id for c in chunks] == ["ok.txt"]
    assert notes == ["tiny.txt: no chunk: its text is shorter than min_chars=10"]
    text = "Alpha beta gamma delta. Epsilon zeta eta theta. Iota kappa lambda mu. Ok."
    chunks, _ = _chunks({"t.txt": text}, max_chars=50, min_chars=20)
    assert all(len(c.text) >= 20 for c in chunks), [c.text for c in chunks]
    with pytest.raises(DataError, match="all 1 document are shorter than min_chars=10"):
        _chunks({"tiny.txt": "Hi."}, min_chars=10)


@pytest.mark.parametrize("kw, match", [({"max_chars": 5}, "max_chars"),
                                       ({"min_chars": -1}, "min_chars"),
                                       ({"min_chars": 100, "max_chars": 100}, "below"),
                                       ({"overlap_sentences": 1.5}, "overlap")])
def test_bad_settings(kw, match):
    with pytest.raises(InvalidArgument, match=match):
        _chunks({"a.txt": "Text."}, **kw)


def test_markdown_headings_are_their_own_sentences():
    docs = {"m.md": "# Leave policy\nStaff get 25 days. Five carry over.\n## Requests\nAsk early."}
    chunks, _ = _chunks(docs, max_chars=30, min_chars=5)
    assert [c.text for c in chunks] == ["# Leave policy", "Staff get 25 days.",
                                        "Five carry over.\n## Requests", "Ask early."]


def test_write_chunks_writes_the_retrieval_corpus_format_atomically(tmp_path):
    docs = {"a.txt": EN * 3, "b.txt": JA * 2}
    chunks, _ = _chunks(docs, max_chars=120)
    out = write_chunks(tmp_path / "chunks.jsonl", chunks)
    lines = [json.loads(x) for x in out.read_text(encoding="utf-8").splitlines()]
    assert [x["id"] for x in lines] == [c.id for c in chunks]
    assert set(lines[0]) == {"id", "text", "doc_id", "lang", "position", "char_start",
                             "char_end"}
    assert not list(tmp_path.glob("*.tmp"))
    # the file is itself a corpus: read back, the chunk ids are its document ids
    back = read_corpus(out)
    assert {d.id: d.text for d in back} == {c.id: c.text for c in chunks}


def test_the_example_corpus_chunks_one_passage_each():
    example = Path(__file__).resolve().parents[2] / "localeval" / "data" / "example_corpus.jsonl"
    corpus = read_corpus(example)
    chunks, notes = _chunks({d.id: d.text for d in corpus})
    assert len(chunks) == len(corpus) and notes == []
    assert {c.lang for c in chunks} == {"en", "ja", "zh"}
