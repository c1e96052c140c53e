"""A user's documents in: a folder of text, Markdown and HTML files, one such file, or a
JSONL/CSV corpus of ``id`` and ``text`` records, read into a ``Corpus`` (one note per
file skipped, never a traceback), chunked into ``Chunk`` runs of whole sentences with
stable ids, and hashed for a signature. The first step of building a test set from
documents (docs/test-sets.md); the chunks file is written by ``localeval.generate``.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "Chunk": ".chunking",
    "Corpus": ".documents",
    "DEFAULT_MAX_CHARS": ".chunking",
    "DEFAULT_MAX_FILE_MB": ".reading",
    "DEFAULT_MIN_CHARS": ".chunking",
    "DOCUMENT_SUFFIXES": ".reading",
    "Document": ".documents",
    "RECORD_SUFFIXES": ".records",
    "Skipped": ".documents",
    "chunk_documents": ".chunking",
    "chunk_id": ".chunking",
    "chunk_record": ".chunking",
    "corpus_hash": ".documents",
    "html_to_text": ".html_text",
    "read_corpus": ".reading",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
