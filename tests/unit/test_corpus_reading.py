"""Reading a corpus (localeval.corpus.read_corpus): folders, files, corpus files, and one
clear note for every file that gives no document."""

from __future__ import annotations

import builtins
import json
import os
from pathlib import Path
from types import SimpleNamespace

import pytest

from localeval.corpus import Corpus, corpus_hash, html_to_text, read_corpus
from localeval.errors import DataError, InvalidArgument, LocalevalWarning

MB = 1024 * 1024
EXAMPLE = Path(__file__).resolve().parents[2] / "localeval" / "data" / "example_corpus.jsonl"


def _write(root: Path, files: dict[str, str | bytes]) -> Path:
    for rel, content in files.items():
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            p.write_bytes(content)
        else:
            p.write_text(content, encoding="utf-8")
    return root


def _read(path: Path, **kw) -> tuple[Corpus, list[str]]:
    notes: list[str] = []
    return read_corpus(path, on_note=notes.append, **kw), notes


def test_folder_of_text_markdown_and_html_with_relative_posix_ids(tmp_path):
    root = _write(tmp_path / "docs", {
        "a.txt": "Plain text.\r\nSecond line.\r\n",
        "guides/setup.md": "# Setup\n\nInstall it.\n",
        "guides/deep/page.HTML": "<p>Hello <b>there</b>.</p><p>Again.</p>",
        ".git/config": "hidden",
        ".hidden.txt": "hidden",
    })
    corpus, notes = _read(root)
    assert [d.id for d in corpus] == ["a.txt", "guides/deep/page.HTML", "guides/setup.md"]
    assert corpus.documents[0].text == "Plain text.\nSecond line.\n"  # line ends made \n
    assert corpus.documents[1].text == "Hello there.\n\nAgain."
    assert notes == [] and corpus.skipped == ()


def test_a_single_document_file(tmp_path):
    p = _write(tmp_path, {"one.md": "Only one document here."}) / "one.md"
    corpus, _ = _read(p)
    assert [(d.id, d.text) for d in corpus] == [("one.md", "Only one document here.")]


def test_html_drops_scripts_styles_and_head_but_keeps_paragraphs():
    html = ("<html><head><title>Guide</title><style>p{color:red}</style>"
            "<script>var x = '<p>no</p>';</script></head><body><h1>Lamp</h1>"
            "<p>It is   bright &amp;\n warm.</p><noscript>enable js</noscript>"
            "<ul><li>one</li><li>two</li></ul>line<br>break<!-- note --></body></html>")
    assert html_to_text(html) == "Guide\n\nLamp\n\nIt is bright & warm.\n\none\n\ntwo\n\nline\nbreak"


def test_jsonl_corpus_is_read_by_the_dataset_reader(tmp_path):
    corpus, notes = _read(EXAMPLE)
    ids = [json.loads(line)["id"] for line in EXAMPLE.read_text(encoding="utf-8").splitlines()]
    assert [d.id for d in corpus] == sorted(ids) and notes == []
    assert corpus.documents[0].source.endswith("line " + str(ids.index(sorted(ids)[0]) + 1))
    # a broken line is the dataset reader's DataError, naming the file and the line
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"id": "a", "text": "fine"}\n{"id": "b", "text": \n', encoding="utf-8")
    with pytest.raises(DataError, match=r"bad\.jsonl, line 2: malformed JSON"):
        read_corpus(bad)


def test_csv_corpus_and_its_errors(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text('id,text,title\nd1,"First, with a comma.",x\nd2,,y\nd3,Third.,z\n',
                 encoding="utf-8")
    corpus, notes = _read(p)
    assert [(d.id, d.text) for d in corpus] == [("d1", "First, with a comma."), ("d3", "Third.")]
    assert notes == [f"{p}, line 3: skipped: document 'd2' has no text"]
    p.write_text("id,body\nd1,x\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 2: no 'text' column"):
        read_corpus(p)
    p.write_text("id,text\nd1,x\nd1,y\n", encoding="utf-8")
    with pytest.raises(DataError, match=r"line 3, column 'id': id 'd1' is used twice"):
        read_corpus(p)


def test_beir_and_pyserini_column_names(tmp_path):
    p = tmp_path / "beir.jsonl"
    p.write_text('{"_id": 7, "title": "t", "text": "Seven."}\n'
                 '{"_id": "x", "contents": "Ex."}\n', encoding="utf-8")
    assert [(d.id, d.text) for d in read_corpus(p)] == [("7", "Seven."), ("x", "Ex.")]


def test_empty_folder_is_a_data_error(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(DataError, match="no document found: the corpus is empty") as e:
        read_corpus(tmp_path / "empty")
    assert e.value.exit_code == 2


def test_only_unreadable_files_is_a_data_error_listing_each(tmp_path):
    root = _write(tmp_path / "bad", {
        "bin.txt": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR",
        "empty.md": "",
        "blank.txt": " \n\t\n",
        "latin.txt": "caf\u00e9".encode("latin-1"),
        "script.html": "<script>only()</script>",
    })
    with pytest.raises(DataError) as e:
        read_corpus(root, on_note=lambda _: None)
    msg = str(e.value)
    assert msg.startswith(f"{root}: no usable document; skipped:")
    for name, reason in [("bin.txt", "binary file (a NUL byte at offset 8)"),
                         ("empty.md", "empty file"),
                         ("blank.txt", "empty file (only whitespace)"),
                         ("latin.txt", "not UTF-8 text (byte 0xe9 at offset 3)"),
                         ("script.html", "no text left once the HTML markup is removed")]:
        assert f"{root / name}: {reason}" in msg
    assert "Traceback" not in msg


def test_each_bad_file_is_skipped_with_one_note(tmp_path):
    root = _write(tmp_path / "mix", {"good.txt": "Good text.", "zero.txt": "",
                                     "latin.md": "r\u00e9sum\u00e9".encode("latin-1")})
    corpus, notes = _read(root)
    assert [d.id for d in corpus] == ["good.txt"]
    assert notes == [f"{root / 'latin.md'}: skipped: not UTF-8 text (byte 0xe9 at offset 1); "
                     "save it as UTF-8",
                     f"{root / 'zero.txt'}: skipped: empty file"]
    assert [s.source for s in corpus.skipped] == [str(root / "latin.md"), str(root / "zero.txt")]


def test_notes_default_to_warnings(tmp_path):
    root = _write(tmp_path / "w", {"good.txt": "Good.", "zero.txt": ""})
    with pytest.warns(LocalevalWarning, match="zero.txt: skipped: empty file"):
        read_corpus(root)


def test_utf16_and_utf8_with_byte_order_marks_are_read(tmp_path):
    text = "日本語のテキスト。English too."
    root = _write(tmp_path / "enc", {"le.txt": text.encode("utf-16"),  # BOM + native order
                                     "be.txt": b"\xfe\xff" + text.encode("utf-16-be"),
                                     "sig.txt": b"\xef\xbb\xbf" + text.encode("utf-8")})
    corpus, notes = _read(root)
    assert [d.text for d in corpus] == [text] * 3 and notes == []
    # UTF-16 without a mark is half NUL bytes: refused as binary, with the fix named
    (root / "nobom.txt").write_bytes("Plain text.".encode("utf-16-le"))
    _, notes = _read(root)
    assert notes == [f"{root / 'nobom.txt'}: skipped: binary file (a NUL byte at offset 1); "
                     "text must be UTF-8, or UTF-16 with a byte-order mark"]


def test_bad_bytes_after_a_byte_order_mark_name_their_offset(tmp_path):
    p = tmp_path / "bom.txt"
    p.write_bytes(b"\xef\xbb\xbfabc\xffdef")
    notes: list[str] = []
    with pytest.raises(DataError, match=r"not valid UTF-8 after its byte-order mark "
                                        r"\(bytes ff 64 at offset 6\)"):
        read_corpus(p, on_note=notes.append)
    assert notes == [f"{p}: skipped: not valid UTF-8 after its byte-order mark (bytes ff 64 "
                     "at offset 6)"]
    p.write_bytes(b"\xff\xfe" + "ok".encode("utf-16-le") + b"\x00\xd8")  # a lone surrogate
    with pytest.raises(DataError, match=r"not valid UTF-16 after its byte-order mark "
                                        r"\(bytes 00 d8 at offset 6\)"):
        read_corpus(p, on_note=notes.append)


def test_a_50_mb_file_is_refused_without_reading_it(tmp_path, monkeypatch):
    root = _write(tmp_path / "big", {"small.txt": "A small document."})
    big = root / "huge.txt"
    with open(big, "wb") as f:  # sparse: 50 MB on paper, nothing written
        f.truncate(50 * MB)
    opened: list[str] = []
    real_open = builtins.open

    def counting_open(file, *args, **kwargs):
        opened.append(os.fspath(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", counting_open)
    corpus, notes = _read(root)
    assert [d.id for d in corpus] == ["small.txt"]
    assert str(big) not in opened  # refused from its size alone
    assert notes == [f"{big}: skipped: 50 MB, over the 20 MB limit for one document "
                     "(max_file_mb); split it, or raise the limit"]
    corpus, notes = _read(root, max_file_mb=60)  # a higher limit reads it (and finds NULs)
    assert "binary file" in notes[0]


def test_a_file_that_grew_past_the_limit_is_refused_after_limit_bytes(tmp_path, monkeypatch):
    p = tmp_path / "g.txt"
    p.write_text("x" * 3000, encoding="utf-8")
    # stat saw 10 bytes; by the time it is read the file holds 3,000
    monkeypatch.setattr("localeval.corpus.decoding.os",
                        SimpleNamespace(stat=lambda path: SimpleNamespace(st_size=10,
                                                                         st_mode=0o100644)))
    with pytest.raises(DataError, match=r"g\.txt: more than 1,048 bytes, over the 1,048 bytes limit"):
        read_corpus(p, max_file_mb=0.001, on_note=lambda _: None)


def test_unknown_types_are_listed_once_and_pdf_is_named(tmp_path):
    root = _write(tmp_path / "k", {"doc.txt": "Text.", "a.png": b"\x89PNG", "b.png": b"x",
                                   "c.docx": b"PK", "Makefile": "all:", "r.pdf": b"%PDF-1.7"})
    corpus, notes = _read(root)
    assert [d.id for d in corpus] == ["doc.txt"]
    assert len(notes) == 2
    assert notes[0].startswith(f"{root / 'r.pdf'}: skipped: PDF is not read")
    assert notes[1] == (f"{root}: skipped: 4 files of other types ((no suffix) \u00d71, "
                        ".docx \u00d71, .png \u00d72): Makefile, a.png, b.png, c.docx; documents "
                        "are .txt, .text, .md, .markdown, .html, .htm")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes here")
def test_a_named_pipe_is_skipped_not_opened(tmp_path):
    root = _write(tmp_path / "p", {"doc.txt": "Text."})
    os.mkfifo(root / "pipe.txt")  # opening it would wait for a writer for ever
    corpus, notes = _read(root)
    assert [d.id for d in corpus] == ["doc.txt"]
    assert notes == [f"{root / 'pipe.txt'}: skipped: not a regular file"]


def test_bad_paths_and_arguments(tmp_path):
    with pytest.raises(DataError, match="not found"):
        read_corpus(tmp_path / "nope")
    (tmp_path / "x.docx").write_bytes(b"PK")
    with pytest.raises(DataError, match=r"unknown file type '\.docx'"):
        read_corpus(tmp_path / "x.docx")
    with pytest.raises(InvalidArgument, match="max_file_mb"):
        read_corpus(tmp_path, max_file_mb=0)


def test_order_of_listing_does_not_change_the_corpus_or_its_hash(tmp_path, monkeypatch):
    files = {f"d{i}.txt": f"Document number {i}." for i in range(5)}
    a = _write(tmp_path / "a", files)
    b = _write(tmp_path / "b", dict(reversed(files.items())))
    first, _ = _read(a)
    real_walk = os.walk

    def reversed_walk(top, **kw):
        for folder, dirs, names in real_walk(top, **kw):
            dirs.reverse()
            yield folder, dirs, names[::-1]

    monkeypatch.setattr("localeval.corpus.reading.os.walk", reversed_walk)
    second, _ = _read(b)
    assert [(d.id, d.text) for d in first] == [(d.id, d.text) for d in second]
    assert corpus_hash(first) == corpus_hash(second)
    assert corpus_hash(first) == corpus_hash(list(reversed(first.documents)))
    (b / "d3.txt").write_text("Changed.", encoding="utf-8")
    assert corpus_hash(read_corpus(b)) != corpus_hash(first)


def test_corpora_of_only_japanese_and_only_chinese(tmp_path):
    ja = _write(tmp_path / "ja", {"規程/休暇.txt": "有給休暇は年に二十日です。申請は十日前までに行います。",
                                  "食堂.md": "社員食堂は十一時に開きます！"})
    zh = _write(tmp_path / "zh", {"请假.txt": "员工每年有二十天带薪假期。请提前十天申请。"})
    corpus, notes = _read(ja)
    assert [d.id for d in corpus] == ["規程/休暇.txt", "食堂.md"] and notes == []
    corpus, notes = _read(zh)
    assert [d.id for d in corpus] == ["请假.txt"] and notes == []
