"""Grading tests for lab rag9: semantic chunking."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import prose

from academy_llm import check_budget, check_lossless

pytestmark = pytest.mark.grade("rag9")


@pytest.fixture(scope="module")
def rag9(open_lab):
    return open_lab("rag9")


TEXT = "One. Two. Three. Four."
SPANS = [(0, 5), (5, 10), (10, 17), (17, 22)]


@pytest.mark.grades("window_texts")
def test_window_texts_take_neighbours_on_both_sides(rag9):
    assert rag9.window_texts(TEXT, SPANS, 1) == ["One. Two. ", "One. Two. Three. ", "Two. Three. Four.", "Three. Four."]
    assert rag9.window_texts(TEXT, SPANS, 0) == ["One. ", "Two. ", "Three. ", "Four."]


@pytest.mark.grades("neighbour_distances")
def test_neighbour_distances_are_one_minus_cosine(rag9):
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.0, 1.0]])
    assert rag9.neighbour_distances(vectors) == pytest.approx([1.0, 0.0])
    assert rag9.neighbour_distances(vectors[:1]) == []


@pytest.mark.grades("breakpoints")
def test_breakpoints_cut_above_the_percentile(rag9):
    distances = [0.1, 0.9, 0.2, 0.1, 0.8, 0.1]
    assert rag9.breakpoints(distances, 60) == [2, 5]
    assert rag9.breakpoints([], 90) == []


def two_topics(n=6):
    """Unit vectors for n sentences: the first half on one topic, the second on another."""
    first, second = np.array([1.0, 0.0]), np.array([0.0, 1.0])
    return np.array([first] * (n // 2) + [second] * (n - n // 2))


@pytest.mark.grades("best_cuts")
def test_best_cuts_split_two_topics_at_their_border(rag9):
    vectors = two_topics(6)
    with_later = rag9.scores_with_later(rag9.pair_scores(vectors, 6))
    assert rag9.best_cuts(with_later, [5] * 6, 100, 6) == [3]


@pytest.mark.grades("best_cuts")
def test_best_cuts_respect_the_token_budget_and_sentence_limit(rag9):
    vectors = np.array([[1.0, 0.0]] * 6)
    with_later = rag9.scores_with_later(rag9.pair_scores(vectors, 6))
    cuts = rag9.best_cuts(with_later, [10] * 6, 20, 6)
    sizes = np.diff([0] + cuts + [6])
    assert all(size <= 2 for size in sizes)
    cuts = rag9.best_cuts(with_later, [1] * 6, 100, 3)
    assert all(size <= 3 for size in np.diff([0] + cuts + [6]))


@pytest.mark.grades("semantic_chunks")
@pytest.mark.parametrize("method", ["breakpoints", "global"])
def test_semantic_chunks_are_lossless_and_in_budget(rag9, method):
    text = ("Satellites run jobs. They report heartbeats every ten seconds. " * 8
            + "\n\nBackups are archives. Restores need the key. " * 8)
    chunks = rag9.semantic_chunks(text, 40, method)
    check_lossless(text, chunks)
    check_budget(chunks, 40)


@pytest.mark.grades("semantic_chunks")
@pytest.mark.parametrize(
    "args, kwargs, error",
    [(("text", 0), {}, ValueError), ((b"text", 10), {}, TypeError), (("text", 10), {"method": "magic"}, ValueError)],
)
def test_bad_parameters_get_clear_errors(rag9, args, kwargs, error):
    with pytest.raises(error):
        rag9.semantic_chunks(*args, **kwargs)


@pytest.mark.grades("semantic_chunks")
def test_empty_text_gives_no_chunks(rag9):
    assert rag9.semantic_chunks("", 10) == []


@pytest.mark.grades("semantic_chunks")
@given(text=prose, max_tokens=st.integers(8, 80), method=st.sampled_from(["breakpoints", "global"]))
def test_property_lossless_in_budget_deterministic(rag9, text, max_tokens, method):
    chunks = rag9.semantic_chunks(text, max_tokens, method, embedder="hash")
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    assert rag9.semantic_chunks(text, max_tokens, method, embedder="hash") == chunks
