"""Running an evaluation: ``evaluate()`` and what it is built from.

- ``runner``: ``evaluate()`` itself (validate, batch the cheap metrics,
  score sample by sample, aggregate, write the run folder).
- ``wiring``: from the judge / embedder / cache a caller named to loaded ones.
- ``sample_scoring``: one sample's model metrics back to back (each through
  ``metrics.score_one``); ``MetricObserver``.
- ``strategies``: single process, worker processes, judge-pool threads;
  ``ray``: Ray actors; ``workers``: the set-up worker processes and actors share.
- ``aggregate``: the summary; ``result``: ``EvaluationResult``, the reports and the
  ``summary_sections`` hook's sections; ``progress``: the bar; ``judge_check_step``:
  the judge check before the first judge call; ``lean``: what a run that keeps no
  samples keeps; ``naming``: a run's name and tags; ``folder_rule``: a run never
  replaces another run's folder by accident; ``run_folders``: the command line's
  default output, one folder per run under ``localeval-out/`` and ``latest``;
  ``explaining``: ``explain``, the judge's reasons for a few samples of a run, asked afterwards.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "CRASH_HOOK_ENV": ".ray",
    "EvaluationResult": ".result",
    "MetricObserver": ".sample_scoring",
    "RunProgress": ".progress",
    "loading_stage": ".progress",
    "evaluate": ".runner",
    "explain": ".explaining",
    "RunFolders": ".run_folders",
    "check_name": ".naming",
    "parse_tags": ".naming",
    "open_cache": ".wiring",
    "build_embedder": ".wiring",
    "choose_embedder": ".wiring",
    "build_judge": ".wiring",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
