"""Judging the judges: read result sets (localeval, ragas, deepeval), align them,
and measure agreement between two judges (compare) or with labels (validate).

Modules: ``readers`` finds a file's format and hands it to ``read_localeval``,
``read_ragas`` or ``read_deepeval`` (tables via ``tables``), each giving a
``resultset.ResultSet``; ``alignment`` pairs two sets; ``statistics`` (with
``resampling``) computes agreement with bootstrap CIs; ``comparison`` and
``validation`` (with ``labels``, ``separation``, ``human_agreement``) are the
two analyses; ``pages`` and ``scatter`` write their files.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Alignment": ".alignment",
    "Comparison": ".comparison",
    "ID_COLUMNS": ".tables",
    "Labels": ".labels",
    "ResultSet": ".resultset",
    "Validation": ".validation",
    "align": ".alignment",
    "canonical_metric_name": ".resultset",
    "compare": ".comparison",
    "load_labels": ".labels",
    "load_result_set": ".readers",
    "read_table": ".tables",
    "row_id": ".tables",
    "scatter_svg": ".scatter",
    "validate": ".validation",
    "write_comparison": ".pages",
    "write_validation": ".pages",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
