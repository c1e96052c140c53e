"""Ray scale-out on a local two-CPU Ray instance with the tiny GGUF judge.

One Ray instance serves the module (start-up is slow); it binds loopback
only and is shut down at the end. The runs must equal a single-process run
line for line, also when an actor is killed mid-run (a test hook makes the
actor ``os._exit`` on its second sample), and a second run over the same
cache must be answered entirely from it.
"""

from __future__ import annotations

import json

import pytest

import localeval
from localeval.cli.app import example_path
from localeval.run.ray import CRASH_HOOK_ENV

ray = pytest.importorskip("ray")  # ray is in the test extra; this only guards odd installs

METRICS = ["faithfulness", "nv_answer_accuracy", "answer_similarity", "mrr"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, _node_ip_address="127.0.0.1",
             log_to_driver=False, configure_logging=False)
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    rows = [json.loads(x) for x in example_path().read_text(encoding="utf-8").splitlines()]
    p = tmp_path_factory.mktemp("data") / "five.jsonl"
    p.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows[:5]) + "\n",
                 encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def reference(tiny_gguf, bias, data, tmp_path_factory):
    d = tmp_path_factory.mktemp("ref")
    res = localeval.evaluate(data, METRICS, judge=str(tiny_gguf), cache=d / "c.sqlite",
                             judge_options={"n_ctx": 4096, "n_threads": 1, "logit_bias": bias},
                             progress=False, out_dir=d / "out")
    return res, d / "out"


def _kw(tiny_gguf, bias):
    return dict(judge=str(tiny_gguf), progress=False,
                judge_options={"n_ctx": 4096, "n_threads": 1, "logit_bias": bias})


def test_ray_equals_single_process_and_resumes_from_cache(local_ray, tiny_gguf, bias, data,
                                                          reference, tmp_path):
    one, one_dir = reference
    two = localeval.evaluate(data, METRICS, cache=tmp_path / "c.sqlite", ray=True,
                             ray_actors=2, out_dir=tmp_path / "out", **_kw(tiny_gguf, bias))
    assert two.records() == one.records()
    assert (tmp_path / "out" / "results.jsonl").read_text() == \
        (one_dir / "results.jsonl").read_text()
    assert two.summary["metrics"] == one.summary["metrics"]
    assert two.summary["signature"] == one.summary["signature"]
    assert two.summary["usage"]["calls"] == one.summary["usage"]["calls"] > 0
    assert two.summary["usage"]["cache_hits"] == one.summary["usage"]["cache_hits"]
    # the actors wrote every call into the driver's cache file: a rerun computes nothing
    again = localeval.evaluate(data, METRICS, cache=tmp_path / "c.sqlite", ray=True,
                               ray_actors=2, **_kw(tiny_gguf, bias))
    assert again.records() == one.records()
    assert again.summary["usage"]["cache_hits"] == again.summary["usage"]["calls"] > 0


def test_lost_actor_is_replaced_and_results_are_the_same(local_ray, tiny_gguf, bias, data,
                                                         reference, tmp_path, monkeypatch):
    one, _ = reference
    marker = tmp_path / "crashed"
    monkeypatch.setenv(CRASH_HOOK_ENV, str(marker))
    res = localeval.evaluate(data, METRICS, cache=tmp_path / "c.sqlite", ray=True,
                             ray_actors=2, **_kw(tiny_gguf, bias))
    assert marker.exists(), "the test hook did not kill an actor"
    assert res.records() == one.records()
    assert res.summary["metrics"] == one.summary["metrics"]


def test_ray_needs_models_by_name(local_ray, data):
    from localeval.errors import UsageError
    from localeval.testing.scripted import ScriptedJudge

    with pytest.raises(UsageError, match="--ray needs the judge as a path"):
        localeval.evaluate(data, ["faithfulness"], judge=ScriptedJudge(), embedder=False,
                           ray=True, progress=False, cache=False)


def test_cli_ray_options():
    from localeval.cli.app import build_parser

    p = build_parser()
    assert p.parse_args(["run", "d.jsonl"]).ray is None
    args = p.parse_args(["run", "d.jsonl", "--ray", "--ray-actors", "3"])
    assert args.ray == "auto" and args.ray_actors == 3
    assert p.parse_args(["run", "d.jsonl", "--ray", "ray://head:10001"]).ray == "ray://head:10001"
