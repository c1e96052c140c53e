"""Reporting a run: summary statistics and the signature, Markdown, the HTML
report, and quality gates.

The HTML report is built in three steps: ``view`` turns a summary and its
records into plain data (with ``details`` for the judge's working and
``histogram`` for the score plots), and ``html`` renders that with the
templates into one self-contained page. ``pages`` is the toolkit every page
of every package is built with (environment, Content-Security-Policy, assets,
atomic writer, SVG scales).
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Allowance": ".gates",
    "UnscoredPolicy": ".gates",
    "check_each": ".sample_gates",
    "Clipper": ".clip",
    "MAX_PAGE_TEXT": ".clip",
    "MAX_TEXT_CHARS": ".clip",
    "check_gates": ".gates",
    "csp_hash": ".pages",
    "content_security_policy": ".pages",
    "domain": ".pages",
    "finite": ".pages",
    "page_assets": ".pages",
    "page_env": ".pages",
    "render_page": ".pages",
    "Scale": ".pages",
    "write_page": ".pages",
    "code_span": ".markdown",
    "conversation_text": ".conversation_view",
    "escape_markdown": ".markdown",
    "excerpt": ".numbers",
    "is_conversation": ".conversation_view",
    "EXPLAIN_FILE": ".explained",
    "read_explained": ".explained",
    "judge_fit_failure": ".gates",
    "judge_health": ".health",
    "parse_allow_unscored": ".gates",
    "parse_gates": ".gates",
    "resolve_gate_keys": ".gates",
    "sample_label": ".sample_gates",
    "score_histogram": ".histogram",
    "signature": ".summary",
    "signature_line": ".summary",
    "run_label": ".summary",
    "sample_question": ".conversation_view",
    "summarize_metric": ".summary",
    "summarize_metrics": ".summary",
    "summary_table": ".markdown",
    "to_node": ".details",
    "unscored_policy": ".gates",
    "write_html_report": ".html",
    "write_markdown_report": ".markdown",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
