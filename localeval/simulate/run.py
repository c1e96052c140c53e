"""``simulate``: scenarios in, conversations out (``localeval simulate``).

The parts chained: the scenarios (``scenarios.read_scenarios``, or written by the
judge: ``authoring``), the judge built as ``localeval run`` builds it
(``run.build_judge``, the cache), the agent's hook (``agent.Agent``), one
conversation per scenario (``dialogue.converse``) side by side in threads
(``concurrency.ordered_map``), each kept in a checkpoint as it ends
(``checkpoint.Checkpoint``), then the files: ``conversations.jsonl`` (the rows
``localeval run`` reads, in scenario order), ``simulation.json`` (the counts, ends, health, usage and set-up) and
``conversations.html``; with ``--from-tools``/``--from-docs`` also
``scenarios.jsonl`` and ``scenarios_dropped.jsonl``.

The same scenarios, judge, seed, agent and ``max_turns`` give the same
conversations.jsonl, byte for byte, at any ``parallel`` and after any number of
interruptions (the judge decodes greedily unless a temperature is set, and a
batched judge's tokens do not depend on what it decodes beside them; the agent
must be as deterministic as the team made it).
"""

from __future__ import annotations

import os
import threading
import time
from collections import Counter
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from localeval.errors import InvalidArgument, ModelError, UsageError
from localeval.output import SETTINGS_KEY, OutputPolicy, dumps_strict, settings_record
from localeval.simulate.agent import Agent
from localeval.simulate.checkpoint import Checkpoint
from localeval.simulate.dialogue import converse
from localeval.simulate.health import simulator_health
from localeval.simulate.page import write_conversations_page
from localeval.simulate.scenarios import Scenario, read_scenarios
from localeval.simulate.schemas import DOC_STEP, TOOL_STEP, USER_STEP

__all__ = ["simulate", "SimulationResult", "CONVERSATIONS_FILE", "SUMMARY_FILE"]

CONVERSATIONS_FILE = "conversations.jsonl"
#: The simulation's own record (not a run's summary.json: nothing here was scored).
SUMMARY_FILE = "simulation.json"
#: Conversation notes said on the terminal; the rest are counted.
SAID_NOTES = 20


@dataclass(frozen=True)
class SimulationResult:
    """What ``simulate`` wrote: the conversations' rows, how they ended, the health."""

    out: Path
    rows: tuple[dict[str, Any], ...]
    stops: dict[str, int]
    health: tuple[str, ...]
    summary: dict[str, Any]
    resumed: int = 0
    files: dict[str, Path] = field(default_factory=dict)


def simulate(scenarios: str | os.PathLike[str] | None, agent: Any,
             out: str | os.PathLike[str], *, judge: Any = None, max_turns: int = 6,
             seed: int = 0, parallel: int = 1, from_tools: str | os.PathLike[str] | None = None,
             from_docs: str | os.PathLike[str] | None = None, n: int | None = None,
             lang: str | None = None, personas: Sequence[str] = (),
             judge_options: dict[str, Any] | None = None, cache: Any = True,
             progress: bool | None = None, overwrite: bool = False,
             on_note: Callable[[str], None] | None = None) -> SimulationResult:
    """Simulate one conversation per scenario with ``agent`` and write them into ``out``.

    ``scenarios``: a scenarios file (or None with ``from_tools``/``from_docs``: the
    judge writes them, at most ``n``, in ``lang``, for ``personas`` in turn).
    ``agent``: ``"module:function"``, ``"path/file.py:function"`` or a function,
    called with the conversation as OpenAI messages. ``judge``: a Judge or any spec
    ``localeval run`` takes. ``parallel``: conversations at once (the agent must then
    be thread-safe; the in-process judge decodes their turns in one batch).
    An agent failure is a ``UsageError`` naming the scenario and turn (exit 2); the
    conversations finished before it stay in the checkpoint for the next call.
    """
    sources = [s for s in (scenarios, from_tools, from_docs) if s is not None]
    if len(sources) != 1:
        raise InvalidArgument("give one source of scenarios: a scenarios file, --from-tools "
                              "FILE or --from-docs PATH")
    for name, value in (("--max-turns", max_turns), ("--parallel", parallel)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidArgument(f"{name} must be a whole number, 1 or more, not {value!r}")
    notes: list[str] = []

    def note(text: str) -> None:
        notes.append(text)
        if on_note is not None:
            on_note(text)

    hook = Agent(agent)
    policy = OutputPolicy([*sources, hook.file, _cache_file(cache)], overwrite=overwrite)
    folder = policy.check(out, folder=True)
    listed = read_scenarios(scenarios) if scenarios is not None else None
    judging = _door(judge, judge_options, cache, parallel, seed)
    from localeval.prompts import prompt_version

    steps = [USER_STEP, *([TOOL_STEP] if from_tools else []), *([DOC_STEP] if from_docs else [])]
    key = {"judge": _judge_signature(judging.judge),
           "scenarios": _source_key(scenarios, from_tools, from_docs, n, lang, personas),
           "agent": hook.label, "agent_file_hash": hook.version, "max_turns": max_turns,
           "seed": seed, "prompts": {s: prompt_version(s) for s in steps}}
    policy.check_settings(folder / SUMMARY_FILE, key)
    policy.folder(folder)
    files: dict[str, Path] = {}
    authored = None
    if listed is None:
        authored = _authored(from_tools, from_docs, judging, lang, personas, n, seed, note)
        listed = list(authored.kept)
        files["scenarios"] = policy.write_text(
            folder / "scenarios.jsonl", "".join(dumps_strict(s.to_row()) + "\n" for s in listed))
        files["scenarios_dropped"] = policy.write_text(
            folder / "scenarios_dropped.jsonl",
            "".join(dumps_strict(r) + "\n" for r in authored.dropped))
        if not listed:
            raise UsageError(f"the judge wrote no scenario the filters kept ({len(authored.dropped)} "
                             f"dropped: see {files['scenarios_dropped']}); use a larger judge")
    checkpoint = Checkpoint(folder, key, policy=policy, on_note=note)
    done = {s.id: checkpoint.earlier[s.id] for s in listed if s.id in checkpoint.earlier}
    if done:
        note(f"resuming: {len(done)} conversations finished before are taken from "
             f"{checkpoint.path}")
    from localeval.metrics import Accounting

    talking = judging.for_sample(accounting=Accounting())  # the user turns' cost alone
    rows = _converse_all(listed, done, hook, talking, checkpoint, max_turns, parallel, progress)
    _say_notes(rows, done, note)
    usage = {"conversations": talking.usage.to_dict(),
             **({"scenarios": judging.usage.to_dict()} if authored else {})}
    figures, health = simulator_health(rows, usage["conversations"])
    health += list(authored.health if authored else ())
    summary = _summary(listed, rows, key, hook, usage, figures, health, notes, max_turns)
    summary[SETTINGS_KEY] = settings_record(key)
    files["conversations"] = policy.write_text(
        folder / CONVERSATIONS_FILE, "".join(dumps_strict(r) + "\n" for r in rows))
    files["summary"] = policy.write_json(folder / SUMMARY_FILE, summary)
    files["page"] = write_conversations_page(folder, rows, summary)
    checkpoint.remove()
    return SimulationResult(folder, tuple(rows), dict(summary["stops"]), tuple(health), summary,
                            len(done), files)


def _converse_all(listed: Sequence[Scenario], done: dict[str, dict[str, Any]], hook: Agent,
                  judging: Any, checkpoint: Checkpoint, max_turns: int, parallel: int,
                  progress: bool | None) -> list[dict[str, Any]]:
    """Every scenario's row, in scenario order; each new one kept in the checkpoint as it
    ends (from its thread), so Ctrl-C or an agent failure loses none that finished."""
    from localeval.concurrency import ordered_map
    from localeval.run import RunProgress

    bar = RunProgress(len(listed), enabled=progress, description="simulating",
                      usage=judging.usage, unit="conversations")
    lock = threading.Lock()

    def one(s: Scenario) -> dict[str, Any] | None:
        if s.id in done:
            row: dict[str, Any] | None = done[s.id]
        else:
            c = converse(s, hook, judging, max_turns=max_turns)
            row = c.to_row() if c.messages else None
            if row is not None and c.stop != "simulator_failed":
                checkpoint.add(row)
        with lock:
            bar.update(judging.usage)
        return row

    checkpoint.open()
    try:
        results = ordered_map(one, list(listed), workers=min(parallel, len(listed)),
                              window=2 * parallel, stop_on_failure=True,
                              name="localeval-simulate")
        with closing(results):
            return [r for r in results if r is not None]
    except UsageError as e:  # the agent failed: say what is kept and how to go on
        kept = len(checkpoint.earlier) + checkpoint.added
        raise UsageError(f"{e}; the {kept} conversations finished before it are kept in "
                         f"{checkpoint.path}. Fix the agent and run the same command again: "
                         "they are not simulated again") from None
    finally:
        bar.close()
        checkpoint.close()


def _say_notes(rows: Sequence[dict[str, Any]], done: dict[str, Any],
               note: Callable[[str], None]) -> None:
    """The new conversations' notes (a reply cut, an agent loop, a call without a stub),
    the first ``SAID_NOTES`` of them; all are in the rows."""
    said = [n if n.startswith("scenario ") else f"scenario {r['id']}, {n}"
            for r in rows if str(r["id"]) not in done for n in r["simulation"]["notes"]]
    for text in said[:SAID_NOTES]:
        note(text)
    if len(said) > SAID_NOTES:
        note(f"... and {len(said) - SAID_NOTES} more notes: see 'notes' in "
             f"{CONVERSATIONS_FILE}'s simulation column")


def _door(judge: Any, options: dict[str, Any] | None, cache: Any, parallel: int,
          seed: int) -> Any:
    from localeval.metrics import Judging
    from localeval.run import build_judge, open_cache

    if judge is False:
        raise ModelError("localeval simulate needs a judge to play the user")
    opts = dict(options or {})
    opts.setdefault("parallel", parallel)
    loaded = build_judge(judge, open_cache(cache), opts)
    if loaded is None:
        raise ModelError("localeval simulate needs a judge to play the user, and none was "
                         "found: give --judge (demo, a GGUF file, a name from 'localeval models "
                         "list' or an http(s):// URL), or put one GGUF in models/")
    return Judging(loaded, None, seed=seed, fanout=max(1, int(getattr(loaded, "capacity", 1) or 1)))


def _authored(from_tools: Any, from_docs: Any, judging: Any, lang: str | None,
              personas: Sequence[str], n: int | None, seed: int,
              note: Callable[[str], None]) -> Any:
    from localeval.simulate.authoring import scenarios_from_docs, scenarios_from_tools

    started = time.perf_counter()
    if from_tools is not None:
        got = scenarios_from_tools(from_tools, judging, lang=lang or "en", personas=personas,
                                   n=n, seed=seed)
    else:
        got = scenarios_from_docs(from_docs, judging, lang=lang, personas=personas, n=n,
                                  seed=seed, on_note=note)
    note(f"the judge wrote {len(got.kept) + len(got.dropped)} scenarios in "
         f"{time.perf_counter() - started:.1f} s; the filters kept {len(got.kept)}")
    return got


def _source_key(scenarios: Any, tools: Any, docs: Any, n: Any, lang: Any,
                personas: Sequence[str]) -> dict[str, Any]:
    """What the scenarios were: a file's content hash, or how the judge wrote them."""
    import hashlib

    path = scenarios or tools
    if path is not None:
        digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]
        kind = "scenarios" if scenarios is not None else "tools"
        return {kind: digest, **({} if scenarios is not None else
                                 {"n": n, "lang": lang, "personas": list(personas)})}
    from localeval.corpus import corpus_hash, read_corpus

    return {"docs": corpus_hash(read_corpus(docs)), "n": n, "lang": lang,
            "personas": list(personas)}


def _judge_signature(judge: Any) -> dict[str, Any]:
    if hasattr(judge, "signature"):
        return dict(judge.signature())
    return {"judge": getattr(judge, "name", None),
            "fingerprint": getattr(judge, "fingerprint", None)}


def _cache_file(cache: Any) -> Any:
    if cache is True or cache is None:
        from localeval.cache import default_cache_path

        return default_cache_path()
    return cache if isinstance(cache, (str, os.PathLike)) else None


def _summary(listed: Sequence[Scenario], rows: Sequence[dict[str, Any]], key: dict[str, Any],
             hook: Agent, usage: dict[str, Any], figures: dict[str, Any], health: list[str],
             notes: list[str], max_turns: int) -> dict[str, Any]:
    from localeval.version import __version__

    stops = Counter(str(r["simulation"]["stop"]) for r in rows)
    written = {str(r["id"]) for r in rows}
    return {
        "scenarios": len(listed), "conversations": len(rows),
        "not_written": len(listed) - len(rows),
        "not_written_ids": [s.id for s in listed if s.id not in written],
        "stops": dict(sorted(stops.items())),
        "user_turns": sum(int(r["simulation"]["user_turns"]) for r in rows),
        "by_language": dict(Counter(str(r["simulation"]["lang"]) for r in rows)),
        "simulator_health": list(health), "simulator_figures": figures,
        "usage": usage, "notes": list(notes),
        "setup": {**key, "agent_file": hook.file, "max_turns": max_turns,
                      "localeval": __version__},
    }
