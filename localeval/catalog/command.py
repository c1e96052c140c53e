"""``localeval models list|verify|add|fetch``: running the command, and its tables.

The arguments are in ``args`` (``localeval``'s parser builds the same ones and
calls ``run_models``); the work itself is in ``status``, ``verify``, ``add`` and
``fetch``. rich is imported only when a table is printed, and ``fetch`` (the one
module that opens connections) only by the ``fetch`` action.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any, Sequence

from localeval.catalog.add import add_model
from localeval.catalog.args import add_models_arguments
from localeval.catalog.entry import human_size
from localeval.catalog.ledger import LOCK_NAME
from localeval.catalog.manifest import LOCAL_NAME
from localeval.catalog.resolve import FETCH_HINT, models_dir_default
from localeval.catalog.status import list_models
from localeval.catalog.verify import verify_models
from localeval.errors import LocalevalError, printable

__all__ = ["models_main", "run_models"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="localeval models")
    add_models_arguments(p)
    return p


def _console() -> Any:
    from rich.console import Console

    # Wide when piped, so names and paths are not folded in logs and tests.
    return Console(width=None if sys.stdout.isatty() else 200, soft_wrap=False)


def _t(text: Any, style: str = "") -> Any:
    """A line or cell of model names and paths: a rich ``Text`` (no markup read from a
    name) of ``printable`` lines (no control character reaches the terminal raw)."""
    from rich.text import Text

    return Text("\n".join(printable(line) for line in str(text).split("\n")), style=style)


_STATE_STYLE = {"verified": "green", "recorded": "yellow", "bundled": "green",
                "unverified": "yellow", "absent": "dim", "incomplete": "red", "changed": "red",
                "untracked": "magenta"}
_RESULT_STYLE = {"ok": "green", "recorded": "yellow", "mismatch": "bold red",
                 "missing": "red", "invalid": "bold red"}


def _cmd_list(args: argparse.Namespace, mdir: Path) -> int:
    rows = list_models(mdir)
    if args.json:
        print(json.dumps(rows, indent=2))  # ASCII: every other character as a JSON escape
        return 0
    from rich.table import Table

    table = Table(title=_t(f"models in {mdir}"))
    for col in ("model", "kind", "status", "size", "licence", "where / next step"):
        table.add_column(col, overflow="fold")
    for r in rows:
        name = r["name"] + (" (default)" if r["default"] else "") + (
            " [local]" if r["source"] == "local" else "")
        style = _STATE_STYLE.get(r["state"], "")
        if r["state"] == "absent":
            nxt = r["detail"]
        elif r["state"] in ("verified", "recorded", "bundled"):
            nxt = r["where"]
        else:
            nxt = f"{r['where']}\n{r['detail']}"
        table.add_row(_t(name), _t(r["kind"]), _t(r["state"], style),
                      human_size(r["size"], r["size_approx"]), _t(r["licence"]), _t(nxt))
    con = _console()
    con.print(table)
    for line in licence_notes(rows):
        con.print(_t(line), highlight=False)
    if any(r["state"] == "absent" for r in rows):
        con.print("absent models: fetch on a machine with internet, copy models/ here, then "
                  "`localeval models verify` (docs/air-gap.md)")
    return 0


#: Licences a company may use without terms of their own to read (the manifest's spelling).
PERMISSIVE = ("apache-2.0", "mit")


def licence_notes(rows: Sequence[dict[str, Any]]) -> list[str]:
    """What the licence column means for choosing a judge or a checker (a judge of
    faithfulness): the non-commercial ones named, the ones with terms of their own, and the
    permissive ones."""
    judges = [r for r in rows if r["kind"] in ("judge", "checker") and r["licence"]]
    banned = [r["name"] for r in judges if "non-commercial" in r["licence"].lower()]
    terms = [r["name"] for r in judges if r["name"] not in banned
             and r["licence"].split(" ", 1)[0].lower() not in PERMISSIVE]
    free = [r["name"] for r in judges if r["licence"].split(" ", 1)[0].lower() in PERMISSIVE
            and r["name"] != "demo"]
    out = []
    if banned:
        out.append(f"licence: {', '.join(banned)} may not be used commercially (research "
                   "licence): not in a company's CI or product evaluation")
    if terms:
        out.append(f"licence: {', '.join(terms)} come with terms of their own (read them "
                   "before commercial use)")
    if free and (banned or terms):
        out.append(f"licence: permissive (apache-2.0 or mit): {', '.join(free)}")
    return out


def _cmd_verify(args: argparse.Namespace, mdir: Path) -> int:
    rows = verify_models(args.names, mdir, rerecord=args.record)
    bad = [r for r in rows if r.result in ("mismatch", "missing", "invalid")]
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return 3 if bad or not rows else 0
    con = _console()
    if not rows:
        con.print(_t(f"no model files found in {mdir}/ (and no bundled embedder). Fetch models "
                     f"on a connected machine with `{FETCH_HINT.format(name='NAME')}`, copy the "
                     "folder here and verify again."), highlight=False)
        return 3
    from rich.table import Table

    table = Table(title=_t(f"verify {mdir}"))
    for col in ("model", "file", "size", "result", "detail"):
        table.add_column(col, overflow="fold")
    for r in rows:
        style = _RESULT_STYLE.get(r.result, "")
        table.add_row(_t(r.name), _t(r.file), human_size(r.size) if r.size else "-",
                      _t(r.result.upper(), style), _t(r.detail))
    con.print(table)
    if bad:
        con.print(f"[bold red]{len(bad)} problem(s)[/]", highlight=False)
        missing: dict[str, str] = {}
        for r in bad:
            if r.result == "missing":
                missing.setdefault(r.name, r.detail)
        for name, detail in missing.items():
            if FETCH_HINT.format(name=name) in detail:
                con.print(_t(f"  missing {name}: on a machine with internet run "
                             f"`{FETCH_HINT.format(name=name)}` and copy the folder here"),
                          highlight=False)
            else:  # a model of your own that no URL can fetch: put back or add again
                con.print(_t(f"  missing {name}: {detail}"), highlight=False)
        for r in bad:
            if r.result in ("mismatch", "invalid"):
                con.print(_t(f"  {r.result} {r.file}: damaged or not the published build; "
                             "fetch it again (the lock was not updated for it)"), highlight=False)
        return 3
    ok = _t(f"all {len(rows)} file(s) OK", "green")
    con.print(ok.append(_t(f"; hashes recorded in {mdir / LOCK_NAME}")))
    return 0


def _cmd_add(args: argparse.Namespace, mdir: Path) -> int:
    entry = add_model(args.path, args.name, copy=args.copy, models_dir=mdir,
                      inspect_checker=getattr(args, "inspect_checker", None))
    con = _console()
    where = entry.path or str(mdir / entry.file)
    if entry.kind == "judge":
        facts = [f"architecture {entry.architecture or '?'}",
                 f"{entry.parameters or '?'} parameters", entry.quantisation or "?",
                 f"context {entry.context_length or '?'}",
                 "chat template: yes" if entry.chat_template else "chat template: NO"]
        con.print(_t(f"added judge '{entry.name}' ({', '.join(facts)})"))
    else:
        what = f" ({entry.note})" if entry.kind == "checker" and entry.note else ""
        con.print(_t(f"added {entry.kind} '{entry.name}' ({len(entry.files)} files, "
                     f"{human_size(entry.size_bytes)}){what}"))
    con.print(_t(f"  at {where}\n  sha256 recorded in {mdir / LOCAL_NAME} and "
                 f"{mdir / LOCK_NAME}; use it with --{entry.kind} {entry.name}"))
    return 0


def _cmd_fetch(args: argparse.Namespace, mdir: Path) -> int:
    from localeval.catalog.fetch import fetch_main

    return fetch_main(args, mdir, "localeval")  # "localeval: error: ..." as every action


def run_models(args: argparse.Namespace) -> int:
    """Run parsed ``models`` arguments: 0, 2 (usage) or 3 (model problem)."""
    mdir = args.models_dir or models_dir_default()
    handler = {"list": _cmd_list, "verify": _cmd_verify, "add": _cmd_add,
               "fetch": _cmd_fetch}[args.action]
    try:
        return handler(args, mdir)
    except LocalevalError as e:
        print(printable(f"localeval: error: {e}"), file=sys.stderr)
        return e.exit_code


def models_main(argv: Sequence[str] | None = None) -> int:
    """``localeval models list|verify|add|fetch``. Returns 0, 2 (usage) or 3 (model problem)."""
    parser = _parser()
    try:
        args = parser.parse_args(list(argv) if argv is not None else None)
    except SystemExit as e:  # argparse already printed the message
        return int(e.code or 0) if e.code in (0, None) else 2
    return run_models(args)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(models_main())
