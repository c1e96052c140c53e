"""Edge faults of the run path: a negative seed, a huge resample count, a subset as large as
the data, and a DataFrame read from a CSV of numeric ids."""

from __future__ import annotations

import json

import numpy as np
import pytest

import localeval
from localeval.cli.app import main
from localeval.config import MAX_RESAMPLES, check_resamples, check_seed
from localeval.errors import UsageError


def _data(tmp_path, n=6):
    p = tmp_path / "d.jsonl"
    p.write_text("".join(json.dumps({"id": f"q{i}", "question": f"question {i}?",
                                     "retrieved_ids": ["a", "b", f"d{i}"],
                                     "relevant_ids": ["b"] if i % 2 else [f"d{i}"]}) + "\n"
                         for i in range(n)))
    return p


# -- a negative seed: refused before any work ------------------------------------------
def test_a_negative_seed_is_refused_before_the_run(tmp_path, capsys):
    out = tmp_path / "o"
    with pytest.raises(SystemExit) as e:  # an argparse error: usage and one line, exit 2
        main(["run", str(_data(tmp_path)), "-m", "mrr", "-o", str(out), "--no-cache",
              "--seed", "-1"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--seed" in err and ">= 0" in err and "Traceback" not in err
    assert not out.exists(), "refused before the output folder is made, let alone scored"


def test_a_negative_seed_in_the_environment_is_refused_naming_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("LOCALEVAL_SEED", "-1")
    out = tmp_path / "o"
    assert main(["run", str(_data(tmp_path)), "-m", "mrr", "-o", str(out), "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert "LOCALEVAL_SEED" in err and ">= 0" in err and "Traceback" not in err
    assert not out.exists()


def test_a_negative_seed_is_refused_by_evaluate_and_configure(tmp_path):
    rows = [{"id": "a", "retrieved_ids": ["a"], "relevant_ids": ["a"]}]
    with pytest.raises(UsageError, match="seed must be a whole number >= 0"):
        localeval.evaluate(rows, "mrr", judge=False, embedder=False, cache=False,
                           progress=False, seed=-3)
    with pytest.raises(UsageError, match="seed"):
        localeval.configure(seed=-1)
    from localeval.config import get_config

    assert get_config().seed == 0
    assert check_seed(np.int64(7)) == 7
    with pytest.raises(UsageError):
        check_seed(True)


# -- a huge resample count: a usage error, not a memory error --------------------------
def test_huge_resample_counts_are_a_usage_error_not_a_memory_error():
    from localeval.stats import Resamples, bootstrap_ci, bootstrap_means

    with pytest.raises(UsageError, match="1,000,000"):
        bootstrap_means(np.ones((1, 5)), n_resamples=10**12)
    with pytest.raises(UsageError, match="resamples"):
        bootstrap_ci([0.1, 0.5, 0.9], n_resamples=10**12)
    with pytest.raises(UsageError, match="resamples"):
        Resamples(5, 10**12, 0)
    with pytest.raises(UsageError, match=">= 0"):
        bootstrap_means(np.ones((1, 5)), seed=-1)
    assert bootstrap_means(np.ones((1, 5)), n_resamples=MAX_RESAMPLES // 1000).shape == (1, 1000)


def test_the_shared_resamples_check_names_the_option():
    assert check_resamples(9999) == 9999
    with pytest.raises(UsageError, match="--resamples must be at least 100"):
        check_resamples(10)
    with pytest.raises(UsageError, match=r"--n-boot 1,000,000,000,000 is more than"):
        check_resamples(10**12, "--n-boot")


# -- a subset at least as large as the data is the whole data --------------------------
@pytest.mark.parametrize("flag", ["--sample", "--limit"])
def test_a_subset_as_large_as_the_data_records_nothing_and_says_so(tmp_path, capsys, flag):
    out = tmp_path / "o"
    assert main(["run", str(_data(tmp_path)), "-m", "mrr", "-o", str(out), "--no-cache",
                 flag, "100"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["n_samples"] == 6
    assert "subset" not in summary["signature"]
    assert "of6" not in summary["signature_line"] and "100" not in summary["signature_line"]
    err = capsys.readouterr().err
    assert f"{flag} 100" in err and "all 6 samples" in err


def test_a_subset_of_exactly_the_data_and_one_less(tmp_path):
    rows = [{"id": f"q{i}", "retrieved_ids": ["a"], "relevant_ids": ["a"]} for i in range(6)]
    kw = dict(judge=False, embedder=False, cache=False, progress=False)
    told: list[str] = []
    whole = localeval.evaluate(rows, "mrr", sample=6, on_info=told.append, **kw)
    assert "subset" not in whole.summary["signature"] and "sample=6" in told[0]
    part = localeval.evaluate(rows, "mrr", sample=5, **kw)
    assert part.summary["signature"]["subset"] == {"sample": 5, "seed": 0, "kept": 5, "of": 6}


# -- a DataFrame read from a CSV reads as the CSV does ---------------------------------
pd = pytest.importorskip("pandas")

CSV = ("id,question,retrieved_ids,relevant_ids\n"
       '1,q1?,"[""a"", ""b""]","[""a""]"\n'
       '2,q2?,"[""a"", ""b""]","[""b""]"\n'
       '{third},q3?,"[""a"", ""b""]","[""b""]"\n'
       '40,q4?,"[""a"", ""b""]","[""a""]"\n')


@pytest.mark.parametrize("third", ["3", "", "2.5", "12345678901234567890"])
def test_numeric_ids_read_the_same_from_the_file_and_from_pd_read_csv(tmp_path, third):
    path = tmp_path / "d.csv"
    path.write_text(CSV.format(third=third))
    kw = dict(judge=False, embedder=False, cache=False, progress=False)
    from_file = localeval.evaluate(path, "mrr", **kw)
    from_frame = localeval.evaluate(pd.read_csv(path), "mrr", **kw)
    ids = [s.id for s in from_file.samples]
    assert ids == ["1", "2", third, "40"]
    assert [s.id for s in from_frame.samples] == ids
    assert from_frame.summary["metrics"] == from_file.summary["metrics"]


def test_boolean_ids_read_as_the_file_gives_them(tmp_path):
    from localeval.dataset import load_dataset

    path = tmp_path / "d.csv"
    path.write_text("id,question\nTrue,q1?\nFalse,q2?\n")
    assert [s.id for s in load_dataset(pd.read_csv(path))] == \
        [s.id for s in load_dataset(path)] == ["True", "False"]
