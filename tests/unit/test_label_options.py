"""The label options are one group with one spelling on ``run``, ``estimate`` and ``diff``."""

from __future__ import annotations

import pytest

from localeval.cli.app import build_parser

COMMANDS = {"run": ["run", "data.jsonl", "--labels", "l.csv"],
            "estimate": ["estimate", "run", "l.csv"],
            "diff": ["diff", "a", "b", "--labels-base", "x.csv", "--labels-new", "y.csv"]}


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_long_spelling_works_everywhere(command: str) -> None:
    args = build_parser().parse_args(COMMANDS[command] + [
        "--labels-scale", "1-5", "--labels-random-draw", "--labels-reference-interval"])
    assert args.labels_scale == (1.0, 5.0)
    assert args.labels_random_draw and args.labels_reference_interval


@pytest.mark.parametrize("command", ["estimate", "diff"])
def test_the_short_spelling_stays_where_it_was(command: str) -> None:
    args = build_parser().parse_args(COMMANDS[command] + [
        "--scale", "0-10", "--random-draw", "--reference-interval"])
    assert args.labels_scale == (0.0, 10.0)
    assert args.labels_random_draw and args.labels_reference_interval


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize("bad", ["0-inf", "nan-1", "5-1", "1_0-5"])
def test_a_bad_scale_is_refused_by_every_command(command: str, bad: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        build_parser().parse_args(COMMANDS[command] + [f"--labels-scale={bad}"])
    assert e.value.code == 2 and "--labels-scale" in capsys.readouterr().err
