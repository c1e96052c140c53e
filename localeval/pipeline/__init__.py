"""Answers from the user's own RAG pipeline: ``localeval answer`` and ``localeval.answer()``.

A test set of questions (and references) goes through the user's function, row
by row or in threads; its answers, retrieved contexts and ids fill the rows,
written in input order to a JSONL file that ``localeval run`` evaluates and
``localeval diff`` compares between versions. A failed call keeps its row with
a ``pipeline_error``; an interrupted run resumes from the file it wrote.

- ``spec``: ``module:function`` or ``path/to/file.py:function`` to a ``Pipeline``.
- ``contract``: what the function returns (a string, or a dict or object with
  ``answer``, ``contexts``, ``retrieved_ids``) read into an ``Output``.
- ``rows``: the output rows (the input's columns, then the filled fields), their
  key (id, question) and the earlier run's rows.
- ``filling``: ``answer()``, the threads, the in-order writing and the resume.
"""

from localeval.lazy import lazy_face

_WHERE = {
    "AnswerResult": ".filling",
    "ERROR_COLUMN": ".rows",
    "Failure": ".filling",
    "Output": ".contract",
    "Pipeline": ".spec",
    "answer": ".filling",
    "load_pipeline": ".spec",
    "read_output": ".contract",
}

__all__ = sorted(_WHERE)
__getattr__, __dir__ = lazy_face(__name__, _WHERE)
