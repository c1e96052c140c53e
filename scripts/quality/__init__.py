"""The judge-quality benchmark's modules (``scripts/bench_quality.py`` is the command).

- ``data``: the labelled sets, the seeded draw, ``--limit``;
- ``scoring``: localeval's scores through ``localeval.evaluate``;
- ``stats``: agreement with the labels, with CIs and coverage;
- ``server`` and ``ragas_baseline``: ragas's own prompts on the same judge;
- ``report``: quality.md.
"""
