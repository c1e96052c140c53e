"""`localeval compare` and `validate` wired into the CLI, with the HTML page of plots."""

from __future__ import annotations

import json
from html.parser import HTMLParser

import localeval
from localeval.cli.app import main

ROWS = [{"id": f"q{i}", "retrieved_ids": ["a", "b", "c"],
         "relevant_ids": [["a"], ["b"], ["c"], ["z"]][i % 4]} for i in range(12)]


class _Tags(HTMLParser):
    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)


def test_compare_cli_writes_table_and_plots(tmp_path, capsys):
    localeval.evaluate(ROWS, ["mrr", "hit_rate@1"], judge=False, cache=False,
                       out_dir=tmp_path / "a", progress=False)
    shuffled = [dict(r, retrieved_ids=list(reversed(r["retrieved_ids"]))) for r in ROWS]
    localeval.evaluate(shuffled, ["mrr", "hit_rate@1"], judge=False, cache=False,
                       out_dir=tmp_path / "b", progress=False)
    code = main(["compare", str(tmp_path / "a"), str(tmp_path / "b"), "-o", str(tmp_path / "c"),
                 "--json"])
    assert code == 0
    out = json.loads(capsys.readouterr().out)
    assert set(out["metrics"]) == {"mrr", "hit_rate@1"}
    assert out["metrics"]["mrr"]["n"] == 12
    page = (tmp_path / "c" / "comparison.html").read_text()
    p = _Tags()
    p.feed(page)
    assert p.tags.count("svg") == 2 and p.tags.count("script") == 1  # our own, CSP-pinned
    assert "Cohen&#39;s kappa @0.5" in page and "<details class=\"notes\">" in page


def test_validate_cli(tmp_path, capsys):
    localeval.evaluate(ROWS, ["hit_rate@1"], judge=False, cache=False, out_dir=tmp_path / "r",
                       progress=False)
    labels = tmp_path / "labels.jsonl"
    labels.write_text("\n".join(json.dumps({"id": r["id"], "label": "positive" if
                                            r["relevant_ids"] == ["a"] else "negative"})
                                for r in ROWS))
    assert main(["validate", str(tmp_path / "r"), str(labels), "--json"]) == 0
    out = capsys.readouterr().out
    assert "hit_rate@1" in out
