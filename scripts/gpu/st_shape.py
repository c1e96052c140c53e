"""A random-weight sentence-transformers model of all-MiniLM-L6-v2's shape, built offline.

BERT with 6 layers, 384 wide, 12 heads, a 1,536 feed-forward and a 30,522-entry
WordPiece vocabulary (the MiniLM card's config), mean pooling and normalisation:
the cost of embedding on a device is the shape's, whatever the weights hold.
The vocabulary is made up (specials, single characters, then numbered pieces):
the tokenizer is a real WordPiece tokenizer over it.
"""

from __future__ import annotations

from pathlib import Path


def vocabulary(size: int) -> list[str]:
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    chars = [chr(c) for c in range(33, 127)] + list("東京の会議室日本語中文")
    pieces = [f"w{i}" for i in range(size)] + [f"##p{i}" for i in range(size)]
    return (specials + chars + pieces)[:size]


def build_minilm_shape(folder: Path, small: bool = False, seed: int = 0) -> Path:
    """Write the model to ``folder`` (once) and return it."""
    if (folder / "modules.json").exists():
        return folder
    import torch
    from sentence_transformers import SentenceTransformer, models
    from transformers import BertConfig, BertModel, BertTokenizerFast

    torch.manual_seed(seed)
    size = 2048 if small else 30522
    hf = folder / "hf"
    hf.mkdir(parents=True, exist_ok=True)
    (hf / "vocab.txt").write_text("\n".join(vocabulary(size)) + "\n", encoding="utf-8")
    BertTokenizerFast(vocab_file=str(hf / "vocab.txt"), do_lower_case=True).save_pretrained(hf)
    config = BertConfig(vocab_size=size, hidden_size=128 if small else 384,
                        num_hidden_layers=2 if small else 6, num_attention_heads=4 if small else 12,
                        intermediate_size=256 if small else 1536, max_position_embeddings=512)
    BertModel(config).save_pretrained(hf)
    word = models.Transformer(str(hf), max_seq_length=256)
    pool = models.Pooling(word.get_word_embedding_dimension(), pooling_mode="mean")
    SentenceTransformer(modules=[word, pool, models.Normalize()], device="cpu").save(str(folder))
    return folder
