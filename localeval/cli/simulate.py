"""``localeval simulate SCENARIOS --agent MODULE:FUNCTION -o OUT``: conversations from goals,
offline: the local judge plays the user, your agent answers
(:func:`localeval.simulate.simulate`; docs/conversations-and-agents.md).

Exit codes: 0 written, 2 bad input, a bad ``--agent`` or the agent failed on a turn
(the conversations finished before it are kept; the same command goes on), 3 no
usable judge, 130 interrupted (the same command goes on).
"""

from __future__ import annotations

import argparse

from localeval.cli import options as opt
from localeval.cli.console import note, say, say_json
from localeval.cli.options import judge_options, positive_int

__all__ = ["add_simulate_parser", "cmd_simulate"]


def add_simulate_parser(sub: argparse._SubParsersAction) -> None:
    """``localeval simulate SCENARIOS --agent MODULE:FUNCTION -o OUT``."""
    p = sub.add_parser(
        "simulate", help="write conversations from goals: the local judge plays the user "
                         "of your agent",
        description="For each scenario (a goal, a persona, optional reference tool calls and "
                    "outcome, first message, language and tool stubs), the judge writes the "
                    "user's turns and your agent answers through --agent, until the user "
                    "reaches the goal, gives up, or --max-turns. Writes OUT/conversations.jsonl "
                    "(what 'localeval run' scores: agent_goal_accuracy, tool_call_accuracy...), "
                    "simulation.json and conversations.html (read them before trusting them). "
                    "Interrupted, the same command simulates only the conversations not "
                    "finished. Exit codes: 0 written, 2 bad input or --agent, or the agent "
                    "failed on a turn (the finished conversations are kept), 3 no usable "
                    "judge, 130 interrupted.",
        parents=[opt.out("the output folder", metavar="OUT", required=True),
                 opt.overwrite("conversations OUT holds"), opt.judge(),
                 opt.lang(), opt.seed(0), opt.quiet(), opt.cache(),
                 opt.json_flag("what was written")])
    p.add_argument("scenarios", nargs="?", help="the scenarios: JSONL, JSON, CSV or TSV, a goal "
                                                "per row (docs/conversations-and-agents.md)")
    p.add_argument("--agent", required=True, metavar="MODULE:FUNCTION",
                   help="your agent, imported from the current directory or PYTHONPATH "
                        "(my_agent:reply) or from a file (path/to/agent.py:reply); called as "
                        "function(messages) with the conversation as OpenAI chat messages, it "
                        "returns an assistant message (a dict with content and optionally "
                        "tool_calls) or a list of assistant and tool messages")
    p.add_argument("--from-tools", metavar="FILE",
                   help="instead of SCENARIOS: the judge writes a goal per tool of FILE (JSON "
                        "or JSONL tool specifications, OpenAI's shape)")
    p.add_argument("--from-docs", metavar="PATH",
                   help="instead of SCENARIOS: the judge writes a goal per section of the "
                        "documents PATH (a folder, a file, or a JSONL/CSV corpus)")
    p.add_argument("-n", type=positive_int, metavar="N",
                   help="with --from-tools/--from-docs: at most N scenarios (default: one per "
                        "tool or section)")
    p.add_argument("--persona", action="append", metavar="TEXT",
                   help="with --from-tools/--from-docs: a persona for the written scenarios "
                        "(repeatable; handed out in turn)")
    p.add_argument("--max-turns", type=positive_int, default=6, metavar="N",
                   help="user messages per conversation at most (default: %(default)s)")
    p.add_argument("--parallel", type=positive_int, default=1, metavar="N",
                   help="conversations at once; your agent must then be thread-safe (the "
                        "in-process judge writes their turns in one batch). The result is "
                        "the same at any N (default: %(default)s)")
    p.set_defaults(func=cmd_simulate)


def cmd_simulate(args: argparse.Namespace) -> int:
    from localeval.errors import UsageError
    from localeval.simulate import simulate

    given = [x for x in (args.scenarios, args.from_tools, args.from_docs) if x is not None]
    if len(given) != 1:
        raise UsageError("give one source of scenarios: a SCENARIOS file, --from-tools FILE "
                         "or --from-docs PATH")
    lang = None if args.lang in (None, "auto") else args.lang
    res = simulate(args.scenarios, args.agent, args.out, judge=args.judge,
                   max_turns=args.max_turns, seed=args.seed, parallel=args.parallel,
                   from_tools=args.from_tools, from_docs=args.from_docs, n=args.n, lang=lang,
                   personas=args.persona or (), judge_options=judge_options(args),
                   cache=False if args.no_cache else (args.cache or True),
                   progress=False if (args.quiet or args.json) else None,
                   overwrite=bool(args.overwrite), on_note=note)
    conversations = res.files["conversations"]
    if args.json:
        from localeval.results import dumps_strict

        say_json(dumps_strict({"out": str(res.out), "conversations": str(conversations),
                               "written": len(res.rows), "resumed": res.resumed,
                               "stops": res.stops, "simulator": list(res.health),
                               "page": str(res.files["page"])}, indent=2))
        return 0
    ends = ", ".join(f"{k}: {v}" for k, v in res.stops.items()) or "none"
    say(f"localeval simulate: {len(res.rows)} conversations to {conversations} ({ends})")
    for line in res.health:
        note(line, kind="simulator")
    say(f"read them: {res.files['page']}")
    if res.rows:
        say(f"next: localeval run {conversations} -m agent_goal_accuracy,tool_call_accuracy "
            "-o RUN_DIR")
    return 0
