"""Build random-weight checker folders of each family, for tests and benchmarks.

No checker can be downloaded where localeval runs its tests, so the tests write
them: the real architectures (RoBERTa, DeBERTa-v2, T5, HHEM's T5 token
classifier with its foundation subfolder, ModernBERT) with seeded random
weights and real tokenizers trained by ``tokenizers`` on a small corpus (byte
level BPE for RoBERTa and ModernBERT, a unigram model written the SentencePiece
way for DeBERTa and T5), saved with ``save_pretrained`` as the published
folders are. ``load_checker`` reads them on its real code path; only their
verdicts are meaningless, unless ``plant`` fixes the verdict (a classifier bias,
or for T5 a decoder cut off from the encoder and an output row pointed at its
one hidden state), which the label-map tests use.

``shape`` picks the size: ``tiny`` for tests, or the published models' shapes
(``roberta-base``, ``hhem``, ``modernbert-large``, ``flan-t5-large``) for the
benchmark, the vocabulary padded to the real size.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from localeval.output import make_folder, write_text
from localeval.testing.tiny_gguf import DEFAULT_CORPUS

__all__ = ["Kind", "KINDS", "SHAPES", "CheckerShape", "build_tiny_checker", "checker_corpus"]

Kind = Literal["roberta", "deberta", "t5", "hhem", "modernbert"]
KINDS: tuple[str, ...] = ("roberta", "deberta", "t5", "hhem", "modernbert")


@dataclass(frozen=True)
class CheckerShape:
    layers: int
    hidden: int
    heads: int
    ff: int
    vocab: int = 0  # 0: the trained tokenizer's size
    positions: int = 1024


SHAPES: dict[str, CheckerShape] = {
    "tiny": CheckerShape(2, 32, 4, 64),
    "roberta-base": CheckerShape(12, 768, 12, 3072, 50265, 514),
    "hhem": CheckerShape(12, 768, 12, 2048, 32128),  # Flan-T5-base's encoder
    "modernbert-large": CheckerShape(28, 1024, 16, 2624, 50368, 8192),
    "flan-t5-large": CheckerShape(24, 1024, 16, 2816, 32128),
}

_EXTRA = """\
东京是日本的首都。富士山是日本最高的山，海拔三千七百七十六米。
光合作用是植物利用阳光把二氧化碳和水变成养分的过程。
The claim is 1 when supported and 0 when not. 0 1 2 3 4 5 6 7 8 9 10 25 180
"""


def checker_corpus(extended: bool = False) -> str:
    """The tests' tokenizer corpus (English, Japanese, JSON) with Chinese and digits added;
    ``extended`` adds the texts of the bundled example data, so that a benchmark's
    tokenizer cuts them into about as many tokens as a published one would."""
    base = DEFAULT_CORPUS.read_text(encoding="utf-8") if DEFAULT_CORPUS.is_file() else (
        "The Eiffel Tower is in Paris. It was built from 1887 to 1889.\n"
        "東京は日本の首都です。富士山は日本で最も高い山です。\n")
    if not extended:
        return base + _EXTRA
    data = Path(__file__).resolve().parents[1] / "data"
    texts = [base, _EXTRA]
    for path in sorted(data.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                texts.extend(_strings(json.loads(line)))
    return "\n".join(texts)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _bpe(specials: list[str], vocab: int, corpus: str) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE(unk_token=None))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus.splitlines(keepends=True), trainers.BpeTrainer(
        vocab_size=vocab, min_frequency=1, special_tokens=specials, show_progress=False,
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    return tok


def _unigram(specials: list[str], unk: str, vocab: int, corpus: str) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.Unigram())
    tok.pre_tokenizer = pre_tokenizers.Metaspace()
    tok.decoder = decoders.Metaspace()
    tok.train_from_iterator(corpus.splitlines(), trainers.UnigramTrainer(
        vocab_size=vocab, special_tokens=specials, unk_token=unk, show_progress=False))
    return tok


def _tokenizer(kind: str, big: bool = False) -> Any:
    """A trained fast tokenizer with the family's special tokens and template (``big``:
    a larger vocabulary over the extended corpus, for the benchmark's shapes)."""
    from tokenizers import processors
    from transformers import PreTrainedTokenizerFast

    corpus = checker_corpus(extended=big)
    n = 8000 if big else 700
    if kind == "roberta":
        tok = _bpe(["<s>", "<pad>", "</s>", "<unk>", "<mask>"], n, corpus)
        tok.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0),
                                                          trim_offsets=True)
        names = dict(bos_token="<s>", eos_token="</s>", sep_token="</s>", cls_token="<s>",
                     pad_token="<pad>", unk_token="<unk>", mask_token="<mask>")
    elif kind == "modernbert":
        tok = _bpe(["[CLS]", "[PAD]", "[SEP]", "[UNK]", "[MASK]"], n, corpus)
        tok.post_processor = processors.Sequence([
            processors.ByteLevel(trim_offsets=True),
            processors.TemplateProcessing(single="[CLS] $A [SEP]",
                                          pair="[CLS] $A [SEP] $B:1 [SEP]:1",
                                          special_tokens=[("[CLS]", 0), ("[SEP]", 2)])])
        names = dict(cls_token="[CLS]", sep_token="[SEP]", pad_token="[PAD]",
                     unk_token="[UNK]", mask_token="[MASK]")
    elif kind == "deberta":
        tok = _unigram(["[PAD]", "[CLS]", "[SEP]", "[UNK]", "[MASK]"], "[UNK]", n - 100, corpus)
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
            special_tokens=[("[CLS]", 1), ("[SEP]", 2)])
        names = dict(cls_token="[CLS]", sep_token="[SEP]", eos_token="[SEP]",
                     bos_token="[CLS]", pad_token="[PAD]", unk_token="[UNK]",
                     mask_token="[MASK]")
    else:  # t5 and hhem's foundation
        tok = _unigram(["<pad>", "</s>", "<unk>"], "<unk>", n - 100, corpus)
        tok.post_processor = processors.TemplateProcessing(
            single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", 1)])
        names = dict(eos_token="</s>", pad_token="<pad>", unk_token="<unk>")
    return PreTrainedTokenizerFast(tokenizer_object=tok, **names)


def _model(kind: str, shape: CheckerShape, vocab: int) -> Any:
    import transformers as tf

    s = shape
    cfg: dict[str, Any]  # the config classes take their fields as keyword arguments
    if kind == "roberta":
        cfg = dict(vocab_size=vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
                   num_attention_heads=s.heads, intermediate_size=s.ff, pad_token_id=1,
                   bos_token_id=0, eos_token_id=2, max_position_embeddings=min(s.positions, 514),
                   num_labels=2)
        return tf.RobertaForSequenceClassification(tf.RobertaConfig(**cfg))
    if kind == "deberta":
        cfg = dict(vocab_size=vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
                   num_attention_heads=s.heads, intermediate_size=s.ff, pad_token_id=0,
                   max_position_embeddings=512, relative_attention=True, position_buckets=256,
                   pos_att_type=["p2c", "c2p"], position_biased_input=False, num_labels=2)
        return tf.DebertaV2ForSequenceClassification(tf.DebertaV2Config(**cfg))
    if kind == "modernbert":
        cfg = dict(vocab_size=vocab, hidden_size=s.hidden, num_hidden_layers=s.layers,
                   num_attention_heads=s.heads, intermediate_size=s.ff, pad_token_id=1,
                   cls_token_id=0, sep_token_id=2, bos_token_id=0, eos_token_id=2,
                   max_position_embeddings=s.positions, global_attn_every_n_layers=3,
                   local_attention=128, num_labels=2)
        return tf.ModernBertForTokenClassification(tf.ModernBertConfig(**cfg))
    cfg = dict(vocab_size=vocab, d_model=s.hidden, d_kv=s.hidden // s.heads, d_ff=s.ff,
               num_layers=s.layers, num_decoder_layers=s.layers, num_heads=s.heads,
               feed_forward_proj="gated-gelu", tie_word_embeddings=False,
               pad_token_id=0, eos_token_id=1, decoder_start_token_id=0, num_labels=2)
    if kind == "hhem":
        return tf.T5ForTokenClassification(tf.T5Config(**cfg))
    return tf.T5ForConditionalGeneration(tf.T5Config(**cfg))


def _quick(kind: str, shape: str, vocab: int) -> Any:
    """A model of a benchmark's shape without transformers' initialisation (truncated
    normals drawn tensor by tensor take minutes at 400M parameters on a small CPU): matrices
    drawn N(0, 0.02) in one call each, norms 1, biases 0. Speed is all it is for."""
    import torch
    from transformers.initialization import no_init_weights

    with no_init_weights():
        model = _model(kind, SHAPES[shape], vocab)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2:
                p.normal_(0.0, 0.02)
            elif name.endswith("bias"):
                p.zero_()
            else:
                p.fill_(1.0)
    model.tie_weights()  # as the initialising constructor leaves them (T5's embeddings)
    return model


def _plant(kind: str, model: Any, tokenizer: Any, plant: str) -> None:
    """Fix the verdict: ``supported`` or ``unsupported`` whatever the input."""
    import torch

    good = plant == "supported"
    with torch.no_grad():
        if kind == "t5":
            for block in model.decoder.block:  # the decoder no longer sees the encoder
                block.layer[1].EncDecAttention.o.weight.zero_()
            ids = tokenizer(["x"], return_tensors="pt")
            out = model(**ids, decoder_input_ids=torch.zeros((1, 1), dtype=torch.long),
                        output_hidden_states=True)
            h = out.decoder_hidden_states[-1][0, 0]
            one = tokenizer("1", add_special_tokens=False)["input_ids"][0]
            zero = tokenizer("0", add_special_tokens=False)["input_ids"][0]
            unit = h / h.norm() ** 2 * 10.0
            model.lm_head.weight[one] = unit if good else -unit
            model.lm_head.weight[zero] = -unit if good else unit
            return
        head = model.classifier.out_proj if kind == "roberta" else model.classifier
        # label 1 is "supported" for the pair families, "hallucinated" for ModernBERT
        high = 1 if good != (kind == "modernbert") else 0
        head.bias.zero_()
        head.bias[high] = 10.0
        head.bias[1 - high] = -10.0


def build_tiny_checker(kind: Kind, folder: str | os.PathLike[str], *, shape: str = "tiny",
                       seed: int = 0, plant: Literal["supported", "unsupported"] | None = None
                       ) -> Path:
    """Write a random-weight checker folder of ``kind`` at ``folder`` and return it."""
    import torch

    if kind not in KINDS:
        raise ValueError(f"unknown checker kind {kind!r}; one of {KINDS}")
    out = Path(folder)
    make_folder(out)
    tokenizer = _tokenizer(kind, big=shape != "tiny")
    vocab = max(SHAPES[shape].vocab, len(tokenizer))
    torch.manual_seed(seed)
    model = _model(kind, SHAPES[shape], vocab) if shape == "tiny" else _quick(kind, shape, vocab)
    model.eval()
    if plant is not None:
        _plant(kind, model, tokenizer, plant)
    if kind != "hhem":
        model.save_pretrained(out)
        tokenizer.save_pretrained(out)
        return out
    # HHEM: the weights under "t5.", the foundation's config and tokenizer beside them,
    # the published config (auto_map and all) and a code file that must never be imported
    from safetensors.torch import save_file

    state = {f"t5.{k}": v.contiguous() for k, v in model.state_dict().items()
             if k != "transformer.encoder.embed_tokens.weight"}  # one name of a shared tensor
    save_file(state, str(out / "model.safetensors"), metadata={"format": "pt"})
    model.config.save_pretrained(out / "foundation")
    tokenizer.save_pretrained(out / "foundation")
    write_text(out / "config.json", json.dumps({
        "architectures": ["HHEMv2ForSequenceClassification"],
        "auto_map": {"AutoConfig": "configuration_hhem_v2.HHEMv2Config",
                     "AutoModelForSequenceClassification":
                         "modeling_hhem_v2.HHEMv2ForSequenceClassification"},
        "model_type": "HHEMv2", "foundation": "google/flan-t5-base",
        "prompt": "<pad> Determine if the hypothesis is true given the premise?\n\n"
                  "Premise: {text1}\n\nHypothesis: {text2}"}, indent=2))
    for name in ("modeling_hhem_v2.py", "configuration_hhem_v2.py"):
        write_text(out / name, 'raise RuntimeError("localeval imported a model folder\'s code")\n')
    return out
