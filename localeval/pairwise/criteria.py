"""The pairwise criterion taken from a metrics TOML file (``--criteria-file``).

The file is the one ``localeval run --metrics-file`` reads, read by the same
reader (``metrics.load_metrics_file``): a file with errors gives that
reader's message, naming the file, the table and the key (exit 2). A table
of type ``aspect_critic`` gives its ``definition``, one of type ``geval`` its
``criteria`` followed by its ``evaluation_steps`` when it has them; a rubric
(``rubrics_score``, ``instance_rubrics``) scores one answer by levels and has
no criterion to compare two by, so it is refused by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from localeval.errors import UsageError, printable

__all__ = ["criterion_from_file", "criterion_text", "resolve_criterion"]


def criterion_text(metric: Any) -> str | None:
    """The criterion a user-defined metric states, or None (a rubric states none)."""
    definition = getattr(metric, "definition", None)
    if isinstance(definition, str) and definition.strip():
        return definition.strip()
    criteria = getattr(metric, "criteria", None)
    if not (isinstance(criteria, str) and criteria.strip()):
        return None
    steps = getattr(metric, "evaluation_steps", None) or ()
    return criteria.strip() + "".join(f"\n{i}. {s}" for i, s in enumerate(steps, 1))


def criterion_from_file(path: str | Path, name: str | None = None) -> tuple[str, str]:
    """(criterion text, table name) from the metrics TOML file at ``path``.

    ``name`` picks a table; without it the file must hold exactly one table
    with a criterion. Every problem is one UsageError naming the file.
    """
    from localeval.metrics import load_metrics_file

    metrics = load_metrics_file(path)
    texts = {n: criterion_text(m) for n, m in metrics.items()}
    usable = [n for n, t in texts.items() if t]
    where = f"criteria file {path}"
    if name is not None:
        if name not in metrics:
            raise UsageError(f"{where}: no table [{printable(name)}]; its tables: "
                             + ", ".join(printable(n) for n in metrics))
        if not texts[name]:
            raise UsageError(f"{where}: [{printable(name)}] is a rubric, which scores one "
                             "answer by levels and states no criterion to compare two answers "
                             "by; pairwise takes an aspect_critic table (its definition) or a "
                             "geval table (its criteria)")
        return texts[name] or "", name
    if not usable:
        raise UsageError(f"{where}: no aspect_critic or geval table (a definition or criteria "
                         "to compare two answers by); its tables are rubrics: "
                         + ", ".join(printable(n) for n in metrics))
    if len(usable) > 1:
        raise UsageError(f"{where}: {len(usable)} criteria ("
                         + ", ".join(printable(n) for n in usable)
                         + "): choose one with --criterion-name NAME (Python: name=)")
    return texts[usable[0]] or "", usable[0]


def resolve_criterion(criterion: str | None, criteria_file: str | Path | None,
                      criterion_name: str | None) -> tuple[str | None, str | None]:
    """The command line's ``--criterion`` / ``--criteria-file`` / ``--criterion-name``
    checked before any work: (criterion text or None, where it came from or None)."""
    if criterion_name is not None and criteria_file is None:
        raise UsageError("--criterion-name picks a table of --criteria-file: give the file")
    if criteria_file is None:
        return criterion, None
    if criterion is not None:
        raise UsageError("give the criterion as --criterion TEXT or from --criteria-file, "
                         "not both")
    text, name = criterion_from_file(criteria_file, criterion_name)
    return text, f"{criteria_file} [{name}]"
