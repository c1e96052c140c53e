"""Judging the judges: agreement between two judges (compare) or with labels (validate).

Result sets are read and aligned by ``localeval.resultsets``. Modules:
``statistics`` computes agreement with its intervals; ``comparison`` and
``validation`` (with ``labels``, validate's view of the one labels reader,
``separation``, ``human_agreement``) are the two analyses; ``pages`` and
``scatter`` write their files.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Comparison": ".comparison",
    "Labels": ".labels",
    "Validation": ".validation",
    "compare": ".comparison",
    "load_labels": ".labels",
    "scatter_svg": ".scatter",
    "validate": ".validation",
    "write_comparison": ".pages",
    "write_validation": ".pages",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
