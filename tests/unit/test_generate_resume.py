"""``generate_testset`` at the edges of a long job: Ctrl-C keeps the questions written
(``candidates.partial.jsonl``) and the same call goes on from them; several questions
asked at once give the same test set; a corpus too small for ``n``; copied few-shot
examples; Japanese-only and Chinese-only corpora; the command's success path on a
real GGUF."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from generate_util import STEPS
from generate_util import statements as _statements
from generate_util import supported as _verdicts

import localeval
from localeval.cli.app import main
from localeval.corpus import Chunk, chunk_id
from localeval.generate import Candidate, filter_candidates, prompt_examples
from localeval.generate.checkpoint import PARTIAL_FILE
from localeval.testing import ScriptedJudge

CORPUS = Path(localeval.__file__).parent / "data" / "example_corpus.jsonl"


def _qa(request):
    first = request.sample.contexts[0]
    head = first.split("。")[0].split(". ")[0][:70]
    return {"question": f"What does the policy say about this: {head}?",
            "answer": first.split(". ")[0].rstrip(".") + "."}


class Judge(ScriptedJudge):
    """The scripted judge; ``stop_after`` synthesis calls, Ctrl-C (as a user presses it)."""

    def __init__(self, qa=_qa, stop_after: int | None = None) -> None:
        super().__init__({**{s: qa for s in STEPS}, "statements": _statements,
                          "faithfulness_verdicts": _verdicts})
        self.stop_after = stop_after

    def ask(self, request):
        if request.step in STEPS and self.stop_after is not None:
            if len([r for r in self.requests if r.step in STEPS]) >= self.stop_after:
                raise KeyboardInterrupt
        return super().ask(request)

    def synth_calls(self) -> int:
        return len([r for r in self.requests if r.step in STEPS])


class WideJudge(Judge):
    """The same replies, from a judge that says it serves four calls at once."""

    capacity = 4


def make(out, judge, n=10, docs=CORPUS, **kw):
    kw.setdefault("cache", True)
    return localeval.generate_testset(docs, n, out, judge=judge, embedder=False, seed=3,
                                      progress=False, **kw)


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_CACHE", str(tmp_path / "cache.sqlite"))


def test_interrupted_then_resumed_equals_one_uninterrupted_run(tmp_path):
    whole = make(tmp_path / "whole", Judge(), cache=False)
    assert whole.kept and not (tmp_path / "whole" / PARTIAL_FILE).exists()
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path / "out", Judge(stop_after=4), cache=False)
    partial = (tmp_path / "out" / PARTIAL_FILE).read_text(encoding="utf-8").splitlines()
    assert "checkpoint" in json.loads(partial[0]) and len(partial) == 1 + 4
    assert not (tmp_path / "out" / "testset.jsonl").exists()
    # a torn last line (the interruption came mid-write) is asked again, not fatal
    with open(tmp_path / "out" / PARTIAL_FILE, "a", encoding="utf-8") as f:
        f.write('{"id": "q-torn", "user_in')
    again = Judge()
    notes: list[str] = []
    res = make(tmp_path / "out", again, on_note=notes.append)
    assert again.synth_calls() == 10 - 4
    assert any("resuming: 4 questions" in n for n in notes)
    for name in ("testset.jsonl", "dropped.jsonl", "qrels.txt"):
        assert (tmp_path / "out" / name).read_bytes() == (tmp_path / "whole" / name).read_bytes()
    assert [c.id for c in res.kept] == [c.id for c in whole.kept]
    assert not (tmp_path / "out" / PARTIAL_FILE).exists()


def test_a_checkpoint_of_other_settings_is_not_taken(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        make(tmp_path / "out", Judge(stop_after=3), cache=False)
    judge, notes = Judge(), []
    localeval.generate_testset(CORPUS, 10, tmp_path / "out", judge=judge, embedder=False,
                               seed=4, progress=False, cache=False, on_note=notes.append)
    assert judge.synth_calls() == 10
    assert any("other settings" in n for n in notes)


def test_several_at_once_give_the_same_test_set(tmp_path):
    one, four = Judge(), WideJudge()
    make(tmp_path / "one", one, n=12, cache=False)
    make(tmp_path / "four", four, n=12, cache=False)
    for name in ("testset.jsonl", "dropped.jsonl", "qrels.txt", "chunks.jsonl"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "four" / name).read_bytes()
    assert four.synth_calls() == one.synth_calls() == 12


def test_a_small_corpus_gives_what_it_can_and_says_so(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "leave.txt").write_text(
        "Employees receive twenty days of paid annual leave each year. Unused leave may be "
        "carried over for one year only.", encoding="utf-8")
    judge = Judge()
    res = make(tmp_path / "out", judge, n=50, docs=docs, cache=False)
    chunks = res.summary["chunks"]
    assert judge.synth_calls() == res.summary["written"] == 3 * chunks < 50
    assert any(f"at most {3 * chunks} questions" in n for n in res.summary["notes"])
    assert res.shortfall() is not None


def test_a_question_copying_the_prompts_example_is_dropped():
    shown = prompt_examples()
    assert any("Golden Gate" in line for line in shown)
    assert any("東京タワー" in line for line in shown) and any("鲁迅" in line for line in shown)
    text = "Employees receive twenty days of paid annual leave."
    chunk = Chunk(id=chunk_id("hr", 0, text), doc_id="hr", position=0, text=text, lang="en",
                  char_start=0, char_end=len(text))
    base = dict(contexts=(text,), chunk_ids=(chunk.id,), doc_ids=("hr",),
                synthesizer="single_hop_specific", lang="en")
    copy = Candidate(id="q1", question="When did the Golden Gate Bridge open?",
                     reference="The Golden Gate Bridge opened in 1937.", **base)
    own = Candidate(id="q2", question="How many days of paid annual leave do employees get?",
                    reference="Employees receive twenty days of paid annual leave.", **base)
    res = filter_candidates([copy, own], [chunk], examples=shown, k=1)
    assert [c.id for c in res.dropped] == ["q1"] and res.dropped[0].dropped == "copies_example"


JA_DOCS = {
    "kyuka.txt": "年次有給休暇は入社6か月後に10日付与される。付与日から2年で時効により消滅する。"
                 "取得の際は3日前までに上長へ申請すること。",
    "kenko.txt": "健康診断は毎年4月に本社の会議室で実施される。受診しなかった社員は6月末までに"
                 "指定の病院で受診しなければならない。",
}
ZH_DOCS = {
    "jiaqi.txt": "员工入职满一年后可享受五天带薪年假。年假须提前三个工作日通过内部系统申请。"
                 "未使用的年假不能结转到下一年。",
    "baoxiao.txt": "差旅费用须在出差结束后十五天内提交报销。报销时必须附上原始发票和审批单。"
                   "超过期限的申请将不予受理。",
}


def _cjk_qa(request):
    first = request.sample.contexts[0]
    sentence = first.split("。")[0]
    lang = "ja" if any("\u3040" <= ch <= "\u30ff" for ch in first) else "zh"
    question = f"{sentence[:12]}について教えてください？" if lang == "ja" else f"{sentence[:12]}是怎么规定的？"
    return {"question": question, "answer": sentence + "。"}


@pytest.mark.parametrize("docs, lang", [(JA_DOCS, "ja"), (ZH_DOCS, "zh")])
def test_a_corpus_of_one_cjk_language_end_to_end(tmp_path, docs, lang):
    folder = tmp_path / "docs"
    folder.mkdir()
    for name, text in docs.items():
        (folder / name).write_text(text, encoding="utf-8")
    res = make(tmp_path / "out", Judge(qa=_cjk_qa), n=4, docs=folder, cache=False)
    assert res.kept, res.counts
    assert {c.lang for c in res.kept} == {lang}
    assert res.summary["kept_by_language"] == {lang: len(res.kept)}
    assert "wrong_language" not in res.counts
    rows = [json.loads(x) for x in
            (tmp_path / "out" / "testset.jsonl").read_text(encoding="utf-8").splitlines()]
    qrels = (tmp_path / "out" / "qrels.txt").read_text(encoding="utf-8").split()
    assert all(r["reference_context_ids"][0] in qrels for r in rows)


def test_the_command_writes_a_test_set_with_a_real_gguf(tmp_path, tiny_gguf, capsys):
    code = main(["generate", str(CORPUS), "-n", "2", "-o", str(tmp_path / "out"),
                 "--judge", str(tiny_gguf), "--embedder", "none", "--no-cache", "--quiet",
                 "--n-ctx", "2048", "--threads", "1"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "localeval generate:" in out.out and "testset.jsonl" in out.out
    summary = json.loads((tmp_path / "out" / "summary.json").read_text(encoding="utf-8"))
    assert summary["written"] == 2 and summary["usage"]["synthesis"]["calls"] >= 2
    assert summary["kept"] + summary["dropped"] == 2
    assert any(step.startswith("synth_") for step in summary["signature"]["prompts"])
    assert not (tmp_path / "out" / PARTIAL_FILE).exists()


def test_a_generator_that_copies_its_example_is_said_to_be_too_small(tmp_path):
    def copier(request):
        """The prompt's own example, whenever the prompt shows one (the retry does not)."""
        for line in request.messages[-1]["content"].splitlines():
            if line.startswith('{"question"'):
                return json.loads(line)
        return _qa(request)

    judge = Judge(qa=copier)
    res = make(tmp_path / "out", judge, n=6, cache=False)
    assert judge.synth_calls() == 12  # each first reply copied: asked again without it
    assert res.summary["usage"]["synthesis"]["copied_calls"] == 6
    said = [h for h in res.health if "copied its prompt's example in 6 of 6" in h]
    assert said and said == [h for h in res.summary["generator_health"] if "copied" in h]
    # the second replies are the judge's own work, and nothing copied reached the set
    assert not any("Golden Gate" in c.question for c in res.kept)
