"""Which answer is better? Two versions' answers judged side by side, in both orders.

Modules: ``step`` holds the judge step (``PairwiseVerdict``, its schema, and
one order asked through the judge door; the template is
``prompts/pairwise_preference.j2``); ``judgement`` one pair's two verdicts and
what they say together (win, loss, tie, inconsistent; the order-averaged
probability); ``summary`` the counts, the preference for NEW with its
bootstrap interval over pairs (``stats``) and the judge's position and length
bias; ``compare`` reads and pairs two versions as ``versions`` does
(``resultsets.pair_versions``) and asks the judge (``compare_pairwise``);
``checking`` runs the known-answer pairwise judge check (``judge_check``'s
probes) through the pairwise door and refuses soft verdicts asked for without
probabilities; ``criteria`` takes the criterion from a metrics TOML file;
``gate`` is ``--fail-if-preferred-base`` and the pairwise judge's fitness gate;
``equivalence`` the indifference margin (0.5 +/- 0.05 by default: NEW preferred
only when the interval leaves it, no practical difference when it lies within) and
the preference's interval (the randomization test below 100 judged pairs).
``ranking`` fits Bradley-Terry strengths of several versions with bootstrap
intervals over questions and ranks them, saying between which neighbours the order
is not shown; ``rank`` judges every two of several versions (``rank_versions``); ``page``
writes ``localeval rank``'s rank.html (``write_rank_page``).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "PairJudgement": ".judgement",
    "PairwiseResult": ".summary",
    "PairwiseVerdict": ".step",
    "RankResult": ".rank",
    "Ranking": ".ranking",
    "bradley_terry": ".ranking",
    "fit_strengths": ".ranking",
    "rank_html": ".page",
    "rank_lines": ".rank",
    "rank_view": ".page",
    "rank_versions": ".rank",
    "win_table": ".ranking",
    "write_rank_page": ".page",
    "compare_pairwise": ".compare",
    "criterion_from_file": ".criteria",
    "resolve_criterion": ".criteria",
    "preferred_base_failure": ".gate",
    "preferred_base_gate": ".gate",
    "DEFAULT_MARGIN": ".equivalence",
    "check_margin": ".equivalence",
    "strength_margin": ".equivalence",
    "unfit_pairwise_failure": ".gate",
    "order_preference": ".judgement",
    "summarise": ".summary",
    "terminal_lines": ".compare",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
