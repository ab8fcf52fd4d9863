"""Hidden grading tests for lab rag9 (instructors only): inputs the public tests never show."""

import grading_checks as check
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import topic_sentences

pytestmark = pytest.mark.grade("rag9")

TEXT = "A. B. C. D. E."
SPANS = [(0, 3), (3, 6), (6, 9), (9, 12), (12, 14)]
# Three topics of two sentences each, three times over, one sentence a line (CRLF).
TOPICS = [
    "Backups write archives to disk. Archives are compressed backups. " * 3,
    "Satellites report heartbeats to servers. Heartbeats reach servers every second. " * 3,
    "Certificates expire after ninety days. Renewed certificates replace old ones. " * 3,
]
PAGE = "".join(TOPICS).replace(". ", ".\r\n")


@pytest.fixture(scope="module")
def rag9(open_lab):
    return open_lab("rag9")


@pytest.mark.grades("window_texts")
@pytest.mark.parametrize("window, expected", [
    (2, ["A. B. C. ", "A. B. C. D. ", "A. B. C. D. E.", "B. C. D. E.", "C. D. E."]),
    (9, ["A. B. C. D. E."] * 5),  # a window wider than the text
])
def test_window_texts_hidden(rag9, window, expected):
    check.expect(rag9.window_texts(TEXT, SPANS, window), expected)


@pytest.mark.grades("neighbour_distances")
def test_neighbour_distances_hidden(rag9):
    vectors = np.array([[1.0, 0.0, 0.0], [0.6, 0.8, 0.0], [0.0, 1.0, 0.0]])
    check.expect_close(rag9.neighbour_distances(vectors), [0.4, 0.2])


@pytest.mark.grades("breakpoints")
@pytest.mark.parametrize("percentile, expected", [(50, [1, 3]), (0, [1, 3, 4]), (100, [])])
def test_breakpoints_hidden(rag9, percentile, expected):
    # Sorted, the distances are 0.1, 0.3, 0.5, 0.7: the median is 0.4, the 0th 0.1, the 100th 0.7.
    check.expect(rag9.breakpoints([0.5, 0.1, 0.7, 0.3], percentile), expected)


def three_topics():
    """Unit vectors for nine sentences, three on each of three topics."""
    return np.array([[1.0, 0.0, 0.0]] * 3 + [[0.0, 1.0, 0.0]] * 3 + [[0.0, 0.0, 1.0]] * 3)


@pytest.mark.grades("best_cuts")
def test_best_cuts_hidden_three_topics(rag9):
    with_later = rag9.scores_with_later(rag9.pair_scores(three_topics(), 9))
    check.expect(rag9.best_cuts(with_later, [4] * 9, 100, 9), [3, 6])


@pytest.mark.grades("best_cuts")
@pytest.mark.parametrize("max_tokens, max_sentences", [(8, 9), (100, 2)],
                         ids=["tokens", "sentences"])
def test_best_cuts_hidden_two_sentences_at_most(rag9, max_tokens, max_sentences):
    with_later = rag9.scores_with_later(rag9.pair_scores(three_topics(), 9))
    cuts = rag9.best_cuts(with_later, [4] * 9, max_tokens, max_sentences)
    sizes = np.diff([0, *cuts, 9]).tolist()
    assert max(sizes) <= 2 and {3, 6} <= set(cuts), (
        f"returned {cuts}: chunks of {sizes} sentences; expected 2 at most, cuts at 3 and 6")


@pytest.mark.grades("semantic_chunks")
@pytest.mark.parametrize("method", ["breakpoints", "global"])
def test_semantic_chunks_hidden_three_topics(rag9, method):
    chunks = rag9.semantic_chunks(PAGE, 200, method, embedder="hash")
    check.chunker_basics(PAGE, chunks, 200)
    cuts = [0, PAGE.index("Satellites"), PAGE.index("Certificates"), len(PAGE)]
    check.expect(check.spans(chunks), list(zip(cuts, cuts[1:])))


SATELLITES = ("Satellites run jobs on the cluster. Satellites send heartbeats to the cluster. "
              "Satellites report jobs to the cluster.")
BACKUPS = "Backups write archives with a key. Restores read archives with the key. Backups keep archives for a week."


@pytest.mark.grades("semantic_chunks")
@pytest.mark.parametrize("method", ["breakpoints", "global"])
@pytest.mark.parametrize("max_tokens", [50, 80])
def test_semantic_chunks_hidden_cut_where_the_method_says(rag9, method, max_tokens):
    text = f"{SATELLITES} {BACKUPS}"
    chunks = rag9.semantic_chunks(text, max_tokens, method, embedder="hash")
    check.chunker_basics(text, chunks, max_tokens)
    check.cut_at(chunks, check.breakpoint_starts(text) if method == "breakpoints" else [len(SATELLITES)])


@pytest.mark.grades("semantic_chunks")
@check.hidden_seed
@given(topics=st.tuples(topic_sentences(["backups", "archives", "disk", "keys", "restore", "weekly"]),
                        topic_sentences(["certificates", "expire", "renew", "days", "trust", "chains"])),
       max_tokens=st.integers(40, 120), method=st.sampled_from(["breakpoints", "global"]))
def test_semantic_chunks_hidden_property(rag9, topics, max_tokens, method):
    text = " ".join(topics)
    chunks = rag9.semantic_chunks(text, max_tokens, method, embedder="hash")
    check.chunker_basics(text, chunks, max_tokens)
    check.cut_at(chunks, check.breakpoint_starts(text) if method == "breakpoints" else [len(topics[0])])
