"""Did my change help? Two versions of a RAG pipeline compared sample by sample.

Modules: ``load`` reads a version (any result set ``agreement`` reads, plus
its texts); ``pairing`` pairs the samples by id, else by question;
``estimate`` holds the paired difference with its bootstrap interval and
Holm's correction; ``corrected`` adds the difference corrected by labels of
both versions (PPI++, through ``estimate``'s face); ``diff`` builds the
:class:`VersionDiff`; ``signatures`` says whether one set-up scored both;
``gate`` is ``--fail-if-worse``; ``tables`` (terminal, Markdown), ``view`` and ``pages`` write the files.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Estimate": ".estimate",
    "add_corrected": ".corrected",
    "MetricDiff": ".diff",
    "VersionDiff": ".diff",
    "diff_runs": ".diff",
    "load_version": ".load",
    "pair_versions": ".pairing",
    "paired_difference": ".estimate",
    "parse_worse_gates": ".gate",
    "terminal_table": ".tables",
    "worse_failures": ".gate",
    "write_diff": ".pages",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
