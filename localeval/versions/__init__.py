"""Did my change help? Two versions of a RAG pipeline compared sample by sample.

Modules: ``load`` reads a version (any result set ``resultsets`` reads, plus
its texts; ``resultsets.pair_versions`` pairs the samples by id, else by question);
``estimate`` holds the paired difference with its interval (the bootstrap,
or the paired randomization test below 100 pairs) and Holm's correction;
``reliability`` where simulation found the interval unreliable;
``corrected`` adds the difference corrected by labels of both versions
(PPI++, through ``estimate``'s face); ``changes`` holds one paired sample
and counts the pairs unscored on either side; ``diff`` builds the
:class:`VersionDiff`; ``signatures`` says whether one set-up scored both
(only what the compared metrics use); ``fitness`` carries each side's judge
check beside every judged verdict; ``gate`` is ``--fail-if-worse`` and ``--require-not-worse`` (their
margins parsed by ``metrics``' METRIC=VALUE parser, unscored pairs allowed
by ``report``'s ``--allow-unscored`` rule; the one-sided tests in ``gate_tests``,
each gate's line in ``gate_lines``) and ``--fail-if-unfit-judge``;
``verdicts`` says what a comparison could have shown beside "not shown";
``plan`` is ``--plan``, the questions a change needs from a pilot; ``tables`` (terminal, Markdown), ``view`` and
``pages`` write the files.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Difference": ".estimate",
    "add_corrected": ".corrected",
    "check_margins": ".gate",
    "MetricDiff": ".diff",
    "VersionDiff": ".diff",
    "Version": ".load",
    "diff_runs": ".diff",
    "load_version": ".load",
    "paired_difference": ".estimate",
    "signature_notes": ".signatures",
    "parse_worse_gates": ".gate",
    "terminal_table": ".tables",
    "unfit_judge_failures": ".gate",
    "unscored_allowance": ".gate",
    "worse_failures": ".gate",
    "write_diff": ".pages",
    "GateResult": ".gate",
    "gate_results": ".gate",
    "not_worse_failures": ".gate",
    "check_delta": ".plan",
    "plan_table": ".plan",
    "plan_lines": ".plan",
    "power_facts": ".verdicts",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
