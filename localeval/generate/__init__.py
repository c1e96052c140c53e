"""Test sets from documents, offline: what is written from a corpus's chunks (the
chunks file, in the retrieval corpus format) and the candidate rows the synthesizers
write (``candidates.Candidate``), and what a person reads of a test set: ``testset.html``
(``page``) and ``summary.md`` (``summary_md``). It sits above ``results`` (layer 5),
whose atomic writer it uses; the reading and chunking are ``localeval.corpus``'s.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Candidate": ".candidates",
    "SYNTHESIZERS": ".candidates",
    "write_chunks": ".chunks_file",
    "QuestionAnswer": ".schemas",
    "STYLES": ".synthesis",
    "synthesize": ".synthesis",
    "prompt_examples": ".synthesis",
    "PER_CHUNK": ".synthesis",
    "FilterResult": ".filters",
    "FilterStage": ".filters",
    "REASONS": ".filters",
    "filter_candidates": ".filters",
    "TestsetResult": ".run",
    "generate_testset": ".run",
    "parse_distribution": ".run",
    "write_testset_files": ".outputs",
    "TESTSET_FILES": ".outputs",
    "render_testset_page": ".page",
    "write_testset_page": ".page",
    "render_testset_summary": ".summary_md",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
