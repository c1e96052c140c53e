"""Every run kept, on one page: ``localeval history``.

Modules: ``runs`` (one run as the page shows it: a localeval run folder read
by ``resultsets.find_runs``, or another tool's export read by
``resultsets.load_result_set``), ``groups`` (runs grouped by dataset version,
and the set-up changes between consecutive runs, in ``localeval diff``'s
words), ``chart`` (a metric's trend as inline SVG), ``diffs`` (``--diffs``: the
diff pages of consecutive runs, written by ``versions``) and ``page`` (the
self-contained HTML page). A package of its own at layer 7, beside
``versions``: it reads through ``resultsets``' face and writes diffs through
``versions``' face, and nothing below it needs a history.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "History": ".page",
    "HistoryRun": ".runs",
    "MAX_ROWS": ".page",
    "build_history": ".page",
    "history_html": ".page",
    "parse_added": ".runs",
    "write_history": ".page",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
