"""ragas's ``SingleTurnSample`` and ``EvaluationDataset``, as thin shapes over plain rows
(a dataset of conversations holds ``messages.MultiTurnSample`` objects).

localeval's own loader (``localeval.dataset``) validates the rows when they are
evaluated; these classes only give ragas scripts the constructors, conversions
and indexing they use. Unknown fields are kept (localeval passes them through as
metadata); the per-metric ``score(...)`` is where a misspelt keyword raises
TypeError, as ragas's ``ascore(...)`` signature does (``check_fields``).
"""

from __future__ import annotations

import difflib
from typing import Any, Iterator, Mapping, Sequence

from localeval.ragas.messages import MultiTurnSample

__all__ = ["SingleTurnSample", "EvaluationDataset", "RAGAS_FIELDS", "check_fields"]

#: ragas's ``SingleTurnSample`` fields (v2 names), then the v1 names ragas 0.1 scripts use,
#: then localeval's own (retrieval ids, sample id). Anything else is a typo.
RAGAS_FIELDS: tuple[str, ...] = (
    "user_input", "retrieved_contexts", "reference_contexts", "retrieved_context_ids",
    "reference_context_ids", "response", "multi_responses", "reference", "rubrics",
    "persona_name", "query_style", "query_length",
    "question", "answer", "contexts", "ground_truth", "ground_truths",
    "id", "retrieved_ids", "relevant_ids",
)


def check_fields(owner: str, fields: Mapping[str, Any], extra: Sequence[str] = ()) -> None:
    """TypeError naming the first field that is neither a ragas nor a localeval sample field."""
    known = set(RAGAS_FIELDS) | set(extra)
    for name in fields:
        if name not in known:
            close = difflib.get_close_matches(name, sorted(known), n=1)
            hint = f"; did you mean '{close[0]}'?" if close else ""
            raise TypeError(f"{owner} got an unexpected keyword argument '{name}'{hint}")


class SingleTurnSample(dict):
    """ragas's ``SingleTurnSample(user_input=..., response=..., ...)``: a mapping of its
    fields (None ones left out), also readable as attributes (``sample.response``)."""

    def __init__(self, **fields: Any) -> None:
        super().__init__({k: v for k, v in fields.items() if v is not None})

    def __getattr__(self, name: str) -> Any:
        if name in RAGAS_FIELDS:
            return self.get(name)
        raise AttributeError(name)

    def to_dict(self) -> dict[str, Any]:
        return dict(self)


class EvaluationDataset:
    """ragas's ``EvaluationDataset``: a list of samples with its constructors and conversions.

    ``EvaluationDataset(samples=[...])``, ``from_list``, ``from_pandas``, ``from_hf_dataset``;
    ``to_list``, ``to_pandas``, ``to_hf_dataset``; ``len(ds)``, ``ds[0]`` (a sample),
    ``ds[1:3]`` (a dataset), iteration.
    """

    def __init__(self, samples: Sequence[Mapping[str, Any]]) -> None:
        # a conversation (``user_input`` a list of messages) stays a MultiTurnSample
        self.samples: list[Any] = [
            s if isinstance(s, (SingleTurnSample, MultiTurnSample)) else
            MultiTurnSample(**dict(s)) if isinstance(dict(s).get("user_input"), list) else
            SingleTurnSample(**dict(s)) for s in samples]

    @classmethod
    def from_list(cls, rows: Sequence[Mapping[str, Any]]) -> "EvaluationDataset":
        return cls(rows)

    @classmethod
    def from_pandas(cls, df: Any) -> "EvaluationDataset":
        """From a DataFrame with ragas v1 or v2 column names; NaN cells count as absent."""
        rows = df.to_dict(orient="records")
        return cls([{k: v for k, v in r.items() if not _is_missing(v)} for r in rows])

    @classmethod
    def from_hf_dataset(cls, dataset: Any) -> "EvaluationDataset":
        return cls(dataset.to_list())

    @classmethod
    def from_dict(cls, columns: Mapping[str, Sequence[Any]]) -> "EvaluationDataset":
        """From a dict of equal-length columns (as ``datasets.Dataset.from_dict`` takes)."""
        n = {len(v) for v in columns.values()}
        if len(n) > 1:
            raise ValueError("columns have different lengths: "
                             + ", ".join(f"{k}={len(v)}" for k, v in columns.items()))
        return cls([{k: v[i] for k, v in columns.items()} for i in range(n.pop() if n else 0)])

    def to_list(self) -> list[dict[str, Any]]:
        return [dict(s) for s in self.samples]

    def to_pandas(self) -> Any:
        try:
            import pandas as pd
        except ImportError:  # in the default install; absent only after --no-deps
            raise ImportError("EvaluationDataset.to_pandas() needs pandas, part of localeval's "
                              "default install: pip install pandas") from None
        return pd.DataFrame(self.to_list())

    def to_hf_dataset(self) -> Any:
        try:
            from datasets import Dataset
        except ImportError:
            raise ImportError("EvaluationDataset.to_hf_dataset() needs datasets, part of "
                              "localeval's default install: pip install datasets") from None
        return Dataset.from_list(self.to_list())

    def features(self) -> list[str]:
        """The fields present in any sample, in first-seen order."""
        return list(dict.fromkeys(k for s in self.samples for k in s))

    def __len__(self) -> int:
        return len(self.samples)

    def __iter__(self) -> Iterator[Any]:
        return iter(self.samples)

    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            return EvaluationDataset(self.samples[index])
        return self.samples[index]

    def __repr__(self) -> str:
        return f"EvaluationDataset(features={self.features()}, len={len(self)})"


def _is_missing(v: Any) -> bool:
    """A DataFrame's empty cell (None or a float NaN), not a list or a string."""
    return v is None or (isinstance(v, float) and v != v)
