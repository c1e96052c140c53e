"""Read scored result sets (localeval, RAGAS, deepeval) into one shape, and pair them up.

"Judging the judges" compares two sets of scores for the same samples, or one
set with human labels. The sets come from different tools, so this module
turns each into a :class:`ResultSet` (sample id -> {metric: value or None})
and :func:`align` decides which sample of one set is which sample of the other.

Accepted inputs (see docs/judging-the-judges.md):

* a localeval run directory, or its ``results.jsonl``;
* a RAGAS ``EvaluationResult.to_pandas()`` export written with ``to_csv`` /
  ``to_json`` (any orient) / ``to_json(orient="records", lines=True)``;
  columns ``user_input``/``question``, ``retrieved_contexts``/``contexts``,
  ``response``/``answer``, ``reference``/``ground_truth``, then one numeric
  column per metric;
* a deepeval result as JSON: ``{"test_results": [{"name", "input",
  "metrics_data": [{"name", "score", "success", "reason", "error", ...}]}]}``
  (snake_case as ``EvaluationResult.model_dump()`` gives it, or the camelCase
  ``testCases``/``metricsData`` of deepeval's saved test runs), or a bare list
  of such test results.

Ids: an ``id`` column (or ``sample_id``/``qid``; for deepeval ``additional_metadata.id``
or a test-case name other than deepeval's automatic ``test_case_N``) gives each
sample its id; otherwise samples are numbered by row order ("1", "2", ... as
localeval numbers a dataset without ids). See :func:`align` for how two sets are paired.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping, Sequence

from localeval.dataset import read_jsonl_rows
from localeval.errors import DataError

__all__ = [
    "ResultSet",
    "Alignment",
    "load_result_set",
    "align",
    "read_table",
    "canonical_metric_name",
    "METRIC_ALIASES",
]

#: Metric names used by RAGAS / deepeval exports -> localeval's metric keys.
#: Names not listed are kept as they are (lower-cased, spaces -> "_").
METRIC_ALIASES: dict[str, str] = {
    # RAGAS (0.2 - 0.4) class names that differ from localeval's keys
    "semantic_similarity": "answer_similarity",
    "nv_accuracy": "nv_answer_accuracy",
    "context_relevance": "nv_context_relevance",  # ragas.metrics.collections name
    "llm_context_precision_with_reference": "context_precision",
    "llm_context_precision_without_reference": "context_utilization",
    "response_relevancy": "answer_relevancy",
    "noise_sensitivity(mode=relevant)": "noise_sensitivity",
    "noise_sensitivity_relevant": "noise_sensitivity",
    # deepeval display names (after slugging)
    "contextual_precision": "context_precision",
    "contextual_recall": "context_recall",
    "contextual_relevancy": "context_relevancy",
    "answer_relevance": "answer_relevancy",
}

# RAGAS / dataset input columns: never metrics.
_QUESTION_COLS = ("user_input", "question", "query")
_ID_COLS = ("id", "sample_id", "qid")
_INPUT_COLS = frozenset({
    *_QUESTION_COLS, "retrieved_contexts", "contexts", "response", "answer", "reference",
    "ground_truth", "ground_truths", "reference_contexts", "multi_responses", "rubrics",
    "retrieved_ids", "relevant_ids", "retrieved_context_ids", "reference_context_ids",
    "persona_name", "query_style", "query_length", "synthesizer_name", "label",
    "query_id", "doc_id", "docid", "pair", "pair_id", "group",
})
# Columns pandas writes for the index (to_csv without index=False, reset_index()).
_INDEX_COLS = frozenset({"", "Unnamed: 0", "index", "level_0"})
# Metric keys known to localeval (DESIGN.md): a column with one of these names is
# a metric even when every cell is empty (every sample unscored).
_KNOWN_METRICS = frozenset({
    "faithfulness", "answer_relevancy", "context_precision", "context_utilization",
    "context_recall", "context_entity_recall", "noise_sensitivity", "answer_similarity",
    "answer_correctness", "context_relevancy", "nv_context_relevance", "nv_answer_accuracy",
    "nv_response_groundedness", "hit_rate", "mrr", "precision", "recall", "map", "ndcg",
    "bleu", "rouge1", "rouge2", "rougeL", "factual_correctness",
})
_AUTO_DEEPEVAL_NAME = re.compile(r"^test_case_\d+$")


def canonical_metric_name(name: str) -> str:
    """Map a tool's metric name to localeval's key: ``"Contextual Recall"`` -> ``context_recall``.

    localeval keys (``ndcg@10``, ``answer_correctness:weights=0.5,0.5``) pass through.
    """
    raw = name.strip()
    low = raw.lower()
    if low in METRIC_ALIASES:
        return METRIC_ALIASES[low]
    if raw in _KNOWN_METRICS or "@" in raw or ":" in raw:
        return raw
    slug = re.sub(r"[^0-9a-z@:=.,()]+", "_", low).strip("_")
    slug = re.sub(r"_?\[?geval\]?$", "", slug).strip("_")  # "Correctness [GEval]"
    return METRIC_ALIASES.get(slug, slug)


@dataclass
class ResultSet(Mapping[str, dict[str, "float | None"]]):
    """Scores of one judge (or one tool run): sample id -> {metric: value or None}.

    ``errors`` holds the reason a value is None where the source gave one;
    ``details`` the per-metric working localeval stores (statements, verdicts);
    ``questions`` the question text when the source has it (used to pair
    samples when ids cannot be trusted); ``rows`` the 1-based line/row of each
    sample in the source, for messages. ``ids_from`` is ``"id"`` when the
    source carried ids, ``"row"`` when they are row numbers.
    """

    scores: dict[str, dict[str, float | None]]
    source: str = "<memory>"
    format: str = "table"
    errors: dict[str, dict[str, str]] = field(default_factory=dict)
    details: dict[str, dict[str, Any]] = field(default_factory=dict)
    questions: dict[str, str] = field(default_factory=dict)
    rows: dict[str, int] = field(default_factory=dict)
    ids_from: str = "id"
    name: str = ""
    #: localeval's run signature (judge, prompts, seed...) from summary.json, when known.
    signature: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.name:
            self.name = _short_name(self.source)

    # Mapping protocol: id -> scores
    def __getitem__(self, sid: str) -> dict[str, float | None]:
        return self.scores[sid]

    def __iter__(self) -> Iterator[str]:
        return iter(self.scores)

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def metrics(self) -> list[str]:
        """Metric keys in order of first appearance."""
        seen: dict[str, None] = {}
        for sc in self.scores.values():
            for k in sc:
                seen.setdefault(k, None)
        return list(seen)

    def column(self, metric: str) -> dict[str, float | None]:
        """id -> value for one metric (samples without the metric are left out)."""
        return {sid: sc[metric] for sid, sc in self.scores.items() if metric in sc}

    def reason(self, sid: str, metric: str) -> str | None:
        return self.errors.get(sid, {}).get(metric)

    @classmethod
    def from_scores(cls, scores: Mapping[Any, Mapping[str, float | None]], *,
                    source: str = "<memory>", name: str = "",
                    questions: Mapping[Any, str] | None = None) -> "ResultSet":
        """Build a set in memory (tests, notebooks): ``{id: {metric: value}}``."""
        out: dict[str, dict[str, float | None]] = {}
        for sid, sc in scores.items():
            out[str(sid)] = {m: _clean_number(v) for m, v in sc.items()}
        return cls(out, source=source, format="memory", name=name,
                   questions={str(k): v for k, v in (questions or {}).items()})


def _short_name(source: str) -> str:
    p = Path(source)
    if p.name in ("results.jsonl",) and p.parent.name:
        return p.parent.name
    return p.name or source


def _clean_number(v: Any) -> float | None:
    if v is None:
        return None
    f = float(v)
    return None if math.isnan(f) else f


# -- loading ------------------------------------------------------------------------
def load_result_set(path: str | Path, *, dataset: Any = None, name: str | None = None,
                    format: str | None = None) -> ResultSet:
    """Read a result set from ``path`` (format from the contents; ``format`` forces one).

    ``dataset``: the evaluated dataset (path or localeval Dataset); its
    question texts are attached by id, so that a localeval run can be paired
    by question with an export whose ids differ. ``format``: ``localeval``,
    ``ragas`` (any table) or ``deepeval``.
    """
    p = Path(path)
    if not p.exists():
        raise DataError("file not found", file=str(p))
    if p.is_dir():
        if (p / "results.jsonl").is_file():
            p = p / "results.jsonl"
        else:
            raise DataError("directory has no results.jsonl: pass a localeval run directory "
                            "or a results file", file=str(p))
    elif p.name == "summary.json" and (p.parent / "results.jsonl").is_file():
        p = p.parent / "results.jsonl"
    raw = p.read_bytes()
    if not raw.strip():
        raise DataError("file is empty", file=str(p))
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 (byte offset {e.start}); save the file as UTF-8",
                        file=str(p)) from None
    suffix = p.suffix.lower()
    src = str(p)
    if suffix in (".jsonl", ".ndjson"):
        rows = list(read_jsonl_rows(text, src))
        is_local = (format == "localeval" or
                    (format is None and rows and isinstance(rows[0][1].get("scores"), dict)))
        rs = _from_localeval(rows, src) if is_local else _from_table(rows, src, "line")
        if is_local:
            rs.signature = _signature_next_to(p)
    elif suffix == ".json":
        obj = _json_load(text, src)
        if format == "deepeval" or (format is None and _looks_deepeval(obj)):
            rs = _from_deepeval(obj, src)
        else:
            rs = _from_table(list(_json_table_rows(obj, src)), src, "row")
    elif suffix in (".csv", ".tsv"):
        rs = _from_table(list(_csv_rows(text, src, "\t" if suffix == ".tsv" else ",")), src,
                         "row")
    else:
        raise DataError(f"unknown result file type {p.suffix!r}: pass a localeval run "
                        "directory, results.jsonl, or a RAGAS/deepeval export (.csv, .json, "
                        ".jsonl)", file=src)
    if not rs.scores:
        raise DataError("no samples in the file", file=src)
    if not rs.metrics:
        raise DataError("no metric columns found: expected numeric columns such as "
                        "'faithfulness' next to user_input/response/...", file=src)
    if name:
        rs.name = name
    if dataset is not None:
        _attach_questions(rs, dataset)
    return rs


def read_table(path: str | Path) -> tuple[list[tuple[int, dict[str, Any]]], str, str]:
    """Rows of a CSV / TSV / JSON / JSONL table as ``[(row number, {column: value})]``.

    Returns (rows, source, unit) where unit is "line" or "row" for messages.
    Used for label files too, so every table format reads the same way.
    """
    p = Path(path)
    if not p.is_file():
        raise DataError("file not found", file=str(p))
    try:
        text = p.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise DataError(f"not valid UTF-8 (byte offset {e.start}); save the file as UTF-8",
                        file=str(p)) from None
    if not text.strip():
        raise DataError("file is empty", file=str(p))
    suffix = p.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return list(read_jsonl_rows(text, str(p))), str(p), "line"
    if suffix == ".json":
        return list(_json_table_rows(_json_load(text, str(p)), str(p))), str(p), "row"
    if suffix in (".csv", ".tsv"):
        return list(_csv_rows(text, str(p), "\t" if suffix == ".tsv" else ",")), str(p), "row"
    raise DataError(f"unknown file type {p.suffix!r}: use .csv, .tsv, .json or .jsonl",
                    file=str(p))


def _json_load(text: str, src: str) -> Any:
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise DataError(f"malformed JSON: {e.msg} at column {e.colno}", file=src,
                        row=e.lineno) from None




def _json_table_rows(obj: Any, src: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Every ``DataFrame.to_json`` orient: records, columns, index, split, table, values-less."""
    if isinstance(obj, dict) and isinstance(obj.get("data"), list):
        if "columns" in obj:  # orient="split"
            cols = obj["columns"]
            recs = [dict(zip(cols, r)) if isinstance(r, list) else r for r in obj["data"]]
        else:  # orient="table"
            recs = obj["data"]
        obj = recs
    elif isinstance(obj, dict) and obj and all(isinstance(v, dict) for v in obj.values()):
        # orient="columns" ({col: {index: value}}) or "index" ({index: {col: value}})
        first = next(iter(obj.values()))
        inner_keys = list(first)
        if all(_intlike(k) for k in inner_keys) and not all(_intlike(k) for k in obj):
            cols = list(obj)
            index = list(dict.fromkeys(k for c in cols for k in obj[c]))
            obj = [{c: obj[c].get(i) for c in cols} for i in index]
        else:
            obj = list(obj.values())
    elif isinstance(obj, dict) and obj and all(isinstance(v, list) for v in obj.values()):
        n = max(len(v) for v in obj.values())
        obj = [{k: (v[i] if i < len(v) else None) for k, v in obj.items()} for i in range(n)]
    if not isinstance(obj, list):
        raise DataError("expected a table: a JSON array of objects or a pandas to_json() "
                        "export", file=src)
    for i, r in enumerate(obj, 1):
        if not isinstance(r, dict):
            raise DataError(f"expected a JSON object, got {type(r).__name__}", file=src,
                            row=i, unit="row")
        yield i, r


def _intlike(k: Any) -> bool:
    return isinstance(k, int) or (isinstance(k, str) and k.lstrip("-").isdigit())


def _csv_rows(text: str, src: str, delim: str) -> Iterator[tuple[int, dict[str, Any]]]:
    # The stdlib reader, not pandas: pandas is optional for localeval, and the
    # list columns RAGAS writes (Python reprs) are not needed to compare scores.
    reader = csv.DictReader(io.StringIO(text, newline=""), delimiter=delim)
    if not reader.fieldnames:
        raise DataError("no header row", file=src)
    for i, rec in enumerate(reader, 1):
        if None in rec:
            raise DataError(f"more cells than header columns ({len(reader.fieldnames)})",
                            file=src, row=i, unit="row")
        yield i, {k: (v if v is not None else "") for k, v in rec.items()}


# -- localeval results.jsonl ----------------------------------------------------------
def _from_localeval(rows: Sequence[tuple[int, dict[str, Any]]], src: str) -> ResultSet:
    rs = ResultSet({}, source=src, format="localeval")
    for n, rec in rows:
        sid = rec.get("id")
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            raise DataError("missing or bad 'id' (a string is expected)", file=src, row=n,
                            column="id")
        sid = str(sid)
        if sid in rs.scores:
            raise DataError(f"duplicate id {sid!r} (first at line {rs.rows[sid]})", file=src,
                            row=n, column="id")
        scores = rec.get("scores")
        if not isinstance(scores, dict):
            raise DataError("'scores' must be an object {metric: number or null}", file=src,
                            row=n, column="scores")
        clean: dict[str, float | None] = {}
        for m, v in scores.items():
            clean[m] = _number(v, src, n, f"scores.{m}", "line")
        rs.scores[sid] = clean
        rs.rows[sid] = n
        errs = rec.get("errors") or {}
        if isinstance(errs, dict) and errs:
            rs.errors[sid] = {k: str(v) for k, v in errs.items()}
        det = rec.get("details") or {}
        if isinstance(det, dict) and det:
            rs.details[sid] = det
        q = rec.get("question") or rec.get("user_input")
        if isinstance(q, str):
            rs.questions[sid] = q
    return rs


def _signature_next_to(results: Path) -> dict[str, Any]:
    """The run's signature from summary.json beside results.jsonl ({} if absent or unreadable)."""
    try:
        summary = json.loads((results.parent / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    sig = summary.get("signature") if isinstance(summary, dict) else None
    return sig if isinstance(sig, dict) else {}


def _number(v: Any, src: str, n: int, col: str, unit: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise DataError(f"expected a number or null, got {v!r}", file=src, row=n, column=col,
                        unit=unit)
    f = float(v)
    return None if math.isnan(f) else f


# -- tables: RAGAS to_pandas() exports, label files -------------------------------------
def _cell_number(v: Any) -> tuple[bool, float | None]:
    """(is numeric-or-empty, value). Strings from CSV cells are parsed."""
    if v is None:
        return True, None
    if isinstance(v, bool):
        return False, None
    if isinstance(v, (int, float)):
        f = float(v)
        return True, (None if math.isnan(f) else f)
    if isinstance(v, str):
        s = v.strip()
        if s == "" or s.lower() in ("nan", "none", "null"):
            return True, None
        try:
            f = float(s)
        except ValueError:
            return False, None
        return True, (None if math.isnan(f) else f)
    return False, None


def _from_table(rows: Sequence[tuple[int, dict[str, Any]]], src: str, unit: str) -> ResultSet:
    """A RAGAS-style table: input columns, an optional id column, numeric metric columns.

    A column is a metric when it is not an input column and every non-empty
    cell is a number; a column that is mostly numbers with a stray text cell
    is an error naming that cell. Empty cells are unscored samples (RAGAS
    writes NaN there when a judge call failed).
    """
    cols: list[str] = list(dict.fromkeys(c for _, r in rows for c in r))
    id_col = next((c for c in _ID_COLS if c in cols), None)
    q_col = next((c for c in _QUESTION_COLS if c in cols), None)
    metric_cols: list[str] = []
    for c in cols:
        if c in _INPUT_COLS or c in _INDEX_COLS or c == id_col or c.startswith("human_"):
            continue
        cells = [(n, r.get(c)) for n, r in rows]
        parsed = [(n, v, *_cell_number(v)) for n, v in cells]
        bad = [(n, v) for n, v, ok, _ in parsed if not ok]
        numeric = [f for _, _, ok, f in parsed if ok and f is not None]
        if bad and numeric and len(numeric) >= len(bad):
            n, v = bad[0]
            raise DataError(f"expected a number (or an empty cell for unscored), got {v!r}",
                            file=src, row=n, column=c, unit=unit)
        if bad:
            continue  # a text column (metadata), not a metric
        if not numeric and canonical_metric_name(c) not in _KNOWN_METRICS:
            continue  # all-empty column of unknown meaning
        metric_cols.append(c)
    names = {c: canonical_metric_name(c) for c in metric_cols}
    dup = _first_dup(names.values())
    if dup:
        both = [c for c in metric_cols if names[c] == dup]
        raise DataError(f"columns {both} both map to metric {dup!r}; keep one", file=src)
    rs = ResultSet({}, source=src, format="ragas", ids_from="id" if id_col else "row")
    for i, (n, r) in enumerate(rows, 1):
        if id_col:
            v = r.get(id_col)
            if v is None or v == "" or isinstance(v, bool) or isinstance(v, (list, dict)):
                raise DataError("missing id", file=src, row=n, column=id_col, unit=unit)
            sid = str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
        else:
            sid = str(i)
        if sid in rs.scores:
            raise DataError(f"duplicate id {sid!r} (first at {unit} {rs.rows[sid]})", file=src,
                            row=n, column=id_col, unit=unit)
        rs.rows[sid] = n
        rs.scores[sid] = {names[c]: _cell_number(r.get(c))[1] for c in metric_cols}
        errs = {names[c]: "empty in the source (NaN)" for c in metric_cols
                if rs.scores[sid][names[c]] is None}
        if errs:
            rs.errors[sid] = errs
        if q_col and isinstance(r.get(q_col), str):
            rs.questions[sid] = r[q_col]
    return rs


def _first_dup(items: Iterable[str]) -> str | None:
    seen: set[str] = set()
    for x in items:
        if x in seen:
            return x
        seen.add(x)
    return None


# -- deepeval ---------------------------------------------------------------------------
_DE_LIST_KEYS = ("test_results", "testResults", "test_cases", "testCases")


def _looks_deepeval(obj: Any) -> bool:
    if isinstance(obj, dict):
        return any(isinstance(obj.get(k), list) for k in _DE_LIST_KEYS)
    if isinstance(obj, list) and obj and isinstance(obj[0], dict):
        return "metrics_data" in obj[0] or "metricsData" in obj[0]
    return False


def _from_deepeval(obj: Any, src: str) -> ResultSet:
    cases = obj
    if isinstance(obj, dict):
        key = next((k for k in _DE_LIST_KEYS if isinstance(obj.get(k), list)), None)
        if key is None:
            raise DataError("expected 'test_results': a list of test results", file=src)
        cases = obj[key]
    rs = ResultSet({}, source=src, format="deepeval", ids_from="row")
    explicit: list[str | None] = []
    for i, case in enumerate(cases, 1):
        where = f"test result {i}"
        if not isinstance(case, dict):
            raise DataError(f"{where}: expected an object", file=src)
        md = case.get("metrics_data", case.get("metricsData"))
        if md is None:
            md = []
        if not isinstance(md, list):
            raise DataError(f"{where}: 'metrics_data' must be a list", file=src,
                            column="metrics_data")
        meta = case.get("additional_metadata") or case.get("additionalMetadata") \
            or case.get("metadata") or {}
        cid = meta.get("id") if isinstance(meta, dict) else None
        nm = case.get("name")
        if cid is None and isinstance(nm, str) and nm and not _AUTO_DEEPEVAL_NAME.match(nm):
            cid = nm
        explicit.append(None if cid is None else str(cid))
        scores: dict[str, float | None] = {}
        errs: dict[str, str] = {}
        det: dict[str, Any] = {}
        for j, m in enumerate(md, 1):
            if not isinstance(m, dict) or not isinstance(m.get("name"), str):
                raise DataError(f"{where}, metric {j}: expected an object with a 'name'",
                                file=src, column="metrics_data")
            key = canonical_metric_name(m["name"])
            v = m.get("score")
            if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                raise DataError(f"{where}, metric {m['name']!r}: score must be a number or "
                                f"null, got {v!r}", file=src, column="score")
            scores[key] = _clean_number(v)
            if scores[key] is None:
                errs[key] = str(m.get("error") or "no score in the deepeval result")
            d = {k: m[k] for k in ("success", "threshold", "reason", "evaluation_model",
                                   "evaluationModel", "strict_mode", "strictMode") if k in m}
            if d:
                det[key] = d
        sid = str(i)
        rs.scores[sid] = scores
        rs.rows[sid] = i
        if errs:
            rs.errors[sid] = errs
        if det:
            rs.details[sid] = det
        q = case.get("input")
        if isinstance(q, str):
            rs.questions[sid] = q
    # Explicit ids only when every case has one and they are unique.
    if explicit and all(explicit) and len(set(explicit)) == len(explicit):
        remap = dict(zip([str(i) for i in range(1, len(explicit) + 1)], explicit))
        rs.scores = {remap[k]: v for k, v in rs.scores.items()}
        rs.rows = {remap[k]: v for k, v in rs.rows.items()}
        rs.errors = {remap[k]: v for k, v in rs.errors.items()}
        rs.details = {remap[k]: v for k, v in rs.details.items()}
        rs.questions = {remap[k]: v for k, v in rs.questions.items()}
        rs.ids_from = "id"
    return rs


def _attach_questions(rs: ResultSet, dataset: Any) -> None:
    from localeval.dataset import load_dataset

    ds = load_dataset(dataset)
    for s in ds:
        if s.id in rs.scores and s.question:
            rs.questions.setdefault(s.id, s.question)


# -- pairing two sets ------------------------------------------------------------------
@dataclass
class Alignment:
    """Which sample of A is which of B, by what rule, and what was left over."""

    pairs: list[tuple[str, str]]
    rule: str
    only_a: list[str]
    only_b: list[str]
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"rule": self.rule, "matched": len(self.pairs), "only_a": len(self.only_a),
                "only_b": len(self.only_b), "only_a_ids": self.only_a[:20],
                "only_b_ids": self.only_b[:20], "note": self.note}


def _norm_q(q: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", q).split()).casefold()


def align(a: ResultSet | Mapping[str, Any], b: ResultSet | Mapping[str, Any]) -> Alignment:
    """Pair the samples of ``a`` and ``b``.

    The rule, in order:

    1. both sets carry ids -> match on id (unless no id is shared and both
       have question texts, then 3.);
    2. either set is numbered by row order -> pair row i with row i when the
       sets have the same length, and, when both carry question texts, check
       that each pair asks the same question; if any pair differs, use 3.;
    3. match on question text (whitespace- and Unicode-normalised, case-folded);
       a question that occurs more than once on a side is left unmatched
       rather than guessed.

    Samples without a partner are reported, never silently dropped.
    """
    a = a if isinstance(a, ResultSet) else ResultSet.from_scores(a)
    b = b if isinstance(b, ResultSet) else ResultSet.from_scores(b)
    ids_a, ids_b = list(a.scores), list(b.scores)
    have_q = (len(a.questions) == len(a) and len(b.questions) == len(b))
    if a.ids_from == "id" and b.ids_from == "id":
        shared = set(ids_b)
        pairs = [(i, i) for i in ids_a if i in shared]
        if pairs or not have_q:
            sa = {p for p, _ in pairs}
            return Alignment(pairs, "id", [i for i in ids_a if i not in sa],
                             [i for i in ids_b if i not in sa])
        return _by_question(a, b, note="no id is shared; matched on question text")
    if len(a) == len(b):
        pairs = list(zip(ids_a, ids_b))
        if have_q:
            differ = sum(_norm_q(a.questions[x]) != _norm_q(b.questions[y]) for x, y in pairs)
            if differ:
                return _by_question(a, b, note=f"row order disagreed on {differ} question(s); "
                                               "matched on question text")
        return Alignment(pairs, "row order", [], [],
                         "" if have_q else "no question text to check the row order against")
    if have_q:
        return _by_question(a, b, note=f"different lengths ({len(a)} vs {len(b)})")
    raise DataError(f"cannot pair {a.source} ({len(a)} samples) with {b.source} "
                    f"({len(b)} samples): no shared ids, different lengths, and no question "
                    "text to match on. Add an 'id' column to the export.")


def _by_question(a: ResultSet, b: ResultSet, note: str = "") -> Alignment:
    def index(rs: ResultSet) -> tuple[dict[str, str], set[str]]:
        seen: dict[str, str] = {}
        dups: set[str] = set()
        for sid, q in rs.questions.items():
            k = _norm_q(q)
            if k in seen:
                dups.add(k)
            seen[k] = sid
        return seen, dups

    qa, da = index(a)
    qb, db = index(b)
    pairs = []
    for sid in a.scores:
        k = _norm_q(a.questions.get(sid, ""))
        if k and k in qb and k not in da and k not in db:
            pairs.append((sid, qb[k]))
    ma = {x for x, _ in pairs}
    mb = {y for _, y in pairs}
    n_dup = len(da | db)
    if n_dup:
        note = (note + "; " if note else "") + f"{n_dup} repeated question(s) left unmatched"
    return Alignment(pairs, "question text", [i for i in a.scores if i not in ma],
                     [i for i in b.scores if i not in mb], note)
