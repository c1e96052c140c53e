"""Reporting a run: summary statistics and the signature, Markdown, the HTML
report, and quality gates.

The HTML report is built in three steps: ``view`` turns a summary and its
records into plain data (with ``details`` for the judge's working and
``histogram`` for the score plots), and ``html`` renders that with the
templates into one self-contained page.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "bootstrap_means": ".summary",
    "check_gates": ".gates",
    "csp_hash": ".html",
    "code_span": ".markdown",
    "escape_markdown": ".markdown",
    "judge_health": ".health",
    "parse_gates": ".gates",
    "score_histogram": ".histogram",
    "signature": ".summary",
    "signature_line": ".summary",
    "summarize_metric": ".summary",
    "summarize_metrics": ".summary",
    "summary_table": ".markdown",
    "to_node": ".details",
    "write_html_report": ".html",
    "write_markdown_report": ".markdown",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
