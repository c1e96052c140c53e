"""The judge-suite cost benchmark's modules (``scripts/bench_suite.py`` is the command).

- ``accounting``: the metered judge, per-call records and their totals, the
  judge's speeds, the compute floor and a simulated single-slot prefix cache;
- ``ragas_prompts``: ragas 0.4's own prompts for the same samples, and the
  comparison with localeval's calls;
- ``tables``: the text tables and the targets;
- ``qwen_shape``: the Qwen2-0.5B-shaped random-weight judge (built once, cached),
  shared with ``bench_lookup.py`` and ``bench_reasons.py``.
"""
