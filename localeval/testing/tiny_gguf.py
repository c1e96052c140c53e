"""Build a real, random-weight GGUF judge model for tests and benchmarks.

No judge model can be downloaded where localeval runs its tests, so the suite
writes one: a llama- (or qwen2-) architecture network with seeded random
weights and a real byte-level BPE tokenizer trained by ``tokenizers`` on a
small corpus shipped with the tests. llama.cpp loads it like any other model,
so loading, tokenising, chat templates, grammar-constrained sampling, caching,
determinism and speed are all exercised on the real code path; only the
*quality* of its judgements is meaningless.

The file is a pure function of the spec: same spec, same bytes.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

import numpy as np

from localeval.output import make_folder, move_into_place

__all__ = ["TinyModelSpec", "build_tiny_gguf", "train_tokenizer", "quote_bias",
           "CHATML_TEMPLATE", "DEFAULT_CORPUS"]

#: The ChatML template as Qwen2 ships it (system prompt optional).
CHATML_TEMPLATE = (
    "{% for message in messages %}"
    "{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)

SPECIALS = ("<|endoftext|>", "<|im_start|>", "<|im_end|>")

#: Corpus the tokenizer is trained on: the tests' file when this runs from a
#: checkout, else a built-in paragraph (the wheel does not ship tests/).
DEFAULT_CORPUS = Path(__file__).resolve().parents[2] / "tests" / "data" / "tokenizer_corpus.txt"

_FALLBACK_CORPUS = """\
The Eiffel Tower is in Paris. It was built from 1887 to 1889.
{"statements": ["The tower is in Paris."], "verdict": 1, "reason": "supported"}
東京は日本の首都です。富士山は日本で最も高い山です。
"""


@dataclass(frozen=True)
class TinyModelSpec:
    """Shape and encoding of the generated model.

    ``vocab`` is the tokenizer size to train (at most what the corpus
    supports; the rest is padding). ``pad_tokens`` says what fills the gap:
    ``"unused"`` (type UNUSED, never sampled under a grammar) or ``"random"``
    (unique random byte strings of type NORMAL, so that a padded 152K vocab
    costs a grammar as much as a real one does: the benchmark needs that).
    """

    layers: int = 2
    embd: int = 128
    heads: int = 4
    kv_heads: int = 2
    ff: int = 256
    vocab: int = 512
    ctx: int = 2048
    arch: Literal["llama", "qwen2"] = "llama"
    qkv_bias: bool = False
    tie_embeddings: bool = False
    dtype: Literal["f32", "f16"] = "f32"
    quant: Literal["q8_0", "q4_0"] | None = None
    pad_tokens: Literal["unused", "random"] = "unused"
    seed: int = 0
    std: float = 0.02
    chat_template: str | None = CHATML_TEMPLATE
    train_vocab: int = 1024  # cap on trained BPE size; a few KB of text supports ~1-2K

    def __post_init__(self) -> None:
        if self.embd % self.heads or self.heads % self.kv_heads:
            raise ValueError("embd must divide by heads and heads by kv_heads")

    @classmethod
    def qwen2_05b(cls, quant: Literal["q8_0"] | None = "q8_0") -> "TinyModelSpec":
        """Shaped like Qwen2-0.5B-Instruct: for speed benchmarks, not for tests."""
        return cls(layers=24, embd=896, heads=14, kv_heads=2, ff=4864, vocab=151936,
                   ctx=32768, arch="qwen2", qkv_bias=True, tie_embeddings=True,
                   dtype="f16", quant=quant, pad_tokens="random")

    @classmethod
    def smollm2_135m(cls) -> "TinyModelSpec":
        """Shaped like SmolLM2-135M-Instruct, the demo judge (f16): for the GPU check."""
        return cls(layers=30, embd=576, heads=9, kv_heads=3, ff=1536, vocab=49152,
                   ctx=8192, tie_embeddings=True, dtype="f16", pad_tokens="random")

    @classmethod
    def llama2_7b_q4_0(cls) -> "TinyModelSpec":
        """Shaped like LLaMA-2-7B in Q4_0, the model of llama.cpp's published GPU tables.

        Its weights are drawn directly as Q4_0 blocks (``quant="q4_0"``): quantising
        7B random floats would take minutes and give random blocks all the same.
        """
        return cls(layers=32, embd=4096, heads=32, kv_heads=32, ff=11008, vocab=32000,
                   ctx=4096, dtype="f16", quant="q4_0", pad_tokens="random")


def _corpus(corpus: str | None) -> str:
    if corpus is not None:
        return corpus
    if DEFAULT_CORPUS.is_file():
        return DEFAULT_CORPUS.read_text(encoding="utf-8")
    return _FALLBACK_CORPUS


def train_tokenizer(spec: TinyModelSpec, corpus: str | None = None):
    """The ``tokenizers`` BPE that ``build_tiny_gguf`` embeds (for comparisons in tests)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=min(spec.vocab, spec.train_vocab),
        min_frequency=1,
        special_tokens=list(SPECIALS),
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    tok.train_from_iterator(_corpus(corpus).splitlines(keepends=True), trainer)
    return tok


def _vocab(spec: TinyModelSpec, corpus: str) -> tuple[list[str], list[int], list[str]]:
    """Tokens, token types and merges, padded to ``spec.vocab``."""
    import json

    from tokenizers import pre_tokenizers

    tok = train_tokenizer(spec, corpus)
    by_id = sorted(tok.get_vocab().items(), key=lambda kv: kv[1])
    if [i for _, i in by_id] != list(range(len(by_id))):
        raise RuntimeError("trained tokenizer has gaps in its ids")
    tokens = [t for t, _ in by_id]
    types = [3 if t in SPECIALS else 1 for t in tokens]
    merges_raw = json.loads(tok.to_str())["model"]["merges"]
    merges = [m if isinstance(m, str) else " ".join(m) for m in merges_raw]
    if len(tokens) > spec.vocab:
        raise ValueError(f"vocab {spec.vocab} is smaller than the trained tokenizer")

    n_pad = spec.vocab - len(tokens)
    if spec.pad_tokens == "unused":
        tokens += [f"[PAD{i}]" for i in range(n_pad)]
        types += [5] * n_pad
    else:
        # Unique random "words" over the byte-level alphabet: never produced
        # by the merges, but sampled and grammar-checked like real entries.
        rng = np.random.default_rng(spec.seed + 7)
        alphabet = sorted(pre_tokenizers.ByteLevel.alphabet())
        letters = [c for c in alphabet if c.isascii() and c.isalpha()]
        seen = set(tokens)
        while len(tokens) < spec.vocab:
            n = int(rng.integers(2, 9))
            pool = letters if rng.random() < 0.85 else alphabet
            word = "".join(pool[j] for j in rng.integers(0, len(pool), n))
            if rng.random() < 0.5:
                word = "Ġ" + word  # byte-level spelling of a leading space
            if word not in seen:
                seen.add(word)
                tokens.append(word)
                types.append(1)
    return tokens, types, merges


def _write_f_model(spec: TinyModelSpec, path: Path, corpus: str) -> None:
    import gguf

    tokens, types, merges = _vocab(spec, corpus)
    E, F, V, H, KV = spec.embd, spec.ff, spec.vocab, spec.heads, spec.kv_heads
    head_dim = E // H
    e_kv = head_dim * KV
    wdtype = np.float32 if spec.dtype == "f32" else np.float16
    rng = np.random.default_rng(spec.seed)

    def weight(*shape: int) -> np.ndarray:
        # numpy shape is ggml's reversed: (rows=out, cols=in)
        return (rng.standard_normal(shape, dtype=np.float32) * spec.std).astype(wdtype)

    def ones(n: int) -> np.ndarray:
        return np.ones(n, dtype=np.float32)

    def add_weight(name: str, rows: int, cols: int) -> None:
        if spec.quant != "q4_0":
            w.add_tensor(name, weight(rows, cols))
            return
        # Q4_0 blocks drawn directly: an f16 scale, then 32 four-bit values
        # (value = scale * (q - 8)); the output matrix is Q8_0 (an f16 scale and
        # 32 int8), near the Q6_K that llama.cpp's quantiser gives it.
        q8 = name == "output.weight"
        size, kind = (34, gguf.GGMLQuantizationType.Q8_0) if q8 else (18, gguf.GGMLQuantizationType.Q4_0)
        blocks = rng.integers(0, 256, (rows, cols // 32, size), dtype=np.uint8)
        scale = np.float16(spec.std / (36.9 if q8 else 4.6))  # std of int8 / of (q - 8)
        blocks[:, :, 0:2] = np.frombuffer(scale.tobytes(), dtype=np.uint8)
        w.add_tensor(name, blocks.reshape(rows, -1), raw_dtype=kind)

    def bias(n: int) -> np.ndarray:
        return rng.standard_normal(n, dtype=np.float32) * spec.std

    w = gguf.GGUFWriter(str(path), arch=spec.arch)
    w.add_name(f"localeval-tiny-{spec.arch}")
    w.add_context_length(spec.ctx)
    w.add_embedding_length(E)
    w.add_block_count(spec.layers)
    w.add_feed_forward_length(F)
    w.add_head_count(H)
    w.add_head_count_kv(KV)
    w.add_layer_norm_rms_eps(1e-6)
    w.add_rope_dimension_count(head_dim)
    w.add_rope_freq_base(10000.0 if spec.arch == "llama" else 1000000.0)
    w.add_vocab_size(V)
    w.add_file_type(gguf.LlamaFileType.MOSTLY_Q4_0 if spec.quant == "q4_0"
                    else gguf.LlamaFileType.ALL_F32 if spec.dtype == "f32"
                    else gguf.LlamaFileType.MOSTLY_F16)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("gpt-2")
    w.add_token_list(tokens)
    w.add_token_types(types)
    w.add_token_merges(merges)
    w.add_bos_token_id(tokens.index("<|endoftext|>"))
    w.add_eos_token_id(tokens.index("<|im_end|>"))
    w.add_pad_token_id(tokens.index("<|endoftext|>"))
    w.add_add_bos_token(False)
    if spec.chat_template is not None:
        w.add_chat_template(spec.chat_template)

    add_weight("token_embd.weight", V, E)
    w.add_tensor("output_norm.weight", ones(E))
    if not spec.tie_embeddings:
        add_weight("output.weight", V, E)
    for i in range(spec.layers):
        p = f"blk.{i}."
        w.add_tensor(p + "attn_norm.weight", ones(E))
        add_weight(p + "attn_q.weight", E, E)
        add_weight(p + "attn_k.weight", e_kv, E)
        add_weight(p + "attn_v.weight", e_kv, E)
        if spec.qkv_bias:  # qwen2 requires them
            w.add_tensor(p + "attn_q.bias", bias(E))
            w.add_tensor(p + "attn_k.bias", bias(e_kv))
            w.add_tensor(p + "attn_v.bias", bias(e_kv))
        add_weight(p + "attn_output.weight", E, E)
        w.add_tensor(p + "ffn_norm.weight", ones(E))
        add_weight(p + "ffn_gate.weight", F, E)
        add_weight(p + "ffn_up.weight", F, E)
        add_weight(p + "ffn_down.weight", E, F)

    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def _quantize(src: Path, dst: Path, quant: str) -> None:
    # llama.cpp's quantiser, through the judge's fence around llama-cpp-python
    from localeval.judge import quantize_q8_0

    if quant != "q8_0":
        raise KeyError(quant)
    quantize_q8_0(src, dst, threads=os.cpu_count() or 1)


def build_tiny_gguf(path: str | os.PathLike[str], spec: TinyModelSpec = TinyModelSpec(),
                    corpus: str | None = None) -> Path:
    """Write a random-weight GGUF to ``path`` and return the path.

    ``corpus`` is the tokenizer training text (default: the tests' corpus).
    Deterministic: the same spec and corpus give the same file.
    """
    path = Path(path)
    make_folder(path.parent)
    corpus = _corpus(corpus)
    if spec.quant in (None, "q4_0"):
        tmp = path.with_name(path.name + ".part")
        _write_f_model(spec, tmp, corpus)  # gguf's writer opens the file itself
        return move_into_place(tmp, path)
    with tempfile.TemporaryDirectory(dir=path.parent) as d:
        src = Path(d) / "f.gguf"
        _write_f_model(replace(spec, quant=None), src, corpus)
        _quantize(src, Path(d) / "q.gguf", spec.quant)
        move_into_place(Path(d) / "q.gguf", path)
    return path


def quote_bias(judge, bias: float = 2.5) -> dict[int, float]:
    """A ``logit_bias`` that makes a random-weight model close JSON strings early.

    Untrained, the model samples nearly uniformly, so every string runs to
    its ``maxLength``; favouring the tokens that start with a double quote
    keeps generations short and tests fast without changing what is tested.
    ``judge`` is a ``LlamaJudge`` (its vocabulary is read).
    """
    return {i: bias for i in range(judge.n_vocab) if judge.model.piece(i).startswith(b'"')}
