"""Hidden grading tests for lab rag9 (instructors only): inputs the public tests never show."""

import itertools

import grading_checks as check
import oracles
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import topic_sentences

from academy_llm import count_tokens

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
    (2, [(0, 9), (0, 12), (0, 14), (3, 14), (6, 14)]),
    (9, [(0, 14)] * 5),  # a window wider than the text
])
def test_window_texts_hidden(rag9, window, expected):
    text = check.varied(TEXT, f"window_texts/{window}")  # its shape kept, its letters the submission's own
    check.expect(rag9.window_texts(text, SPANS, window), [text[start:end] for start, end in expected])


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
    check.cut_at(chunks, oracles.breakpoint_starts(text) if method == "breakpoints" else [len(SATELLITES)])


@pytest.mark.grades("semantic_chunks")
@pytest.mark.parametrize("room", [0, 12, 40])
def test_semantic_chunks_hidden_pack_between_breakpoints(rag9, room):
    """Sentences of the submission's own letters: a chunk starts at each breakpoint the grader finds,
    and between two of them the sentences are packed as full as the budget allows (every sentence
    fits, with `room` tokens to spare)."""
    text = check.varied(f"{SATELLITES} {BACKUPS} {SATELLITES}", f"semantic_chunks/{room}")
    max_tokens = max(count_tokens(text[start:end]) for start, end in oracles.sentence_spans_of(text)) + room
    chunks = rag9.semantic_chunks(text, max_tokens, embedder="hash")
    check.chunker_basics(text, chunks, max_tokens)
    check.cut_at(chunks, oracles.breakpoint_starts(text))
    check.packed_between(text, chunks, oracles.breakpoint_starts(text, sure=False), max_tokens)


@pytest.mark.grades("semantic_chunks")
@check.hidden_seed
@given(topics=st.tuples(topic_sentences(["backups", "archives", "disk", "keys", "restore", "weekly"]),
                        topic_sentences(["certificates", "expire", "renew", "days", "trust", "chains"])),
       max_tokens=st.integers(40, 120), method=st.sampled_from(["breakpoints", "global"]))
def test_semantic_chunks_hidden_property(rag9, topics, max_tokens, method):
    """Cut where the breakpoints are, as the grader finds them. The best split of drawn sentences need
    not be the border of their topics (two sentences of one topic may share fewer words than it takes),
    so "global" is judged on its basics here, and on texts whose best split is known elsewhere."""
    text = " ".join(topics)
    chunks = rag9.semantic_chunks(text, max_tokens, method, embedder="hash")
    check.chunker_basics(text, chunks, max_tokens)
    if method == "breakpoints":
        check.cut_at(chunks, oracles.breakpoint_starts(text))
        check.packed_between(text, chunks, oracles.breakpoint_starts(text, sure=False), max_tokens)


@pytest.mark.grades("semantic_chunks")
@check.hidden_seed
@given(topics=st.tuples(topic_sentences(["backups", "archives", "disk", "keys", "restore", "weekly"]),
                        topic_sentences(["certificates", "expire", "renew", "days", "trust", "chains"])),
       ending=st.sampled_from([ending for _, ending in check.ENDINGS]), crlf=st.booleans(),
       max_tokens=st.integers(12, 80), method=st.sampled_from(["breakpoints", "global"]))
def test_semantic_chunks_hidden_every_ending(rag9, topics, ending, crlf, max_tokens, method):
    """Drawn sentences, the last one's full stop replaced by an ending of any kind: every character
    is in a chunk, the last ones too."""
    text = " ".join(topics).removesuffix(".") + ending
    text = text.replace("\n", "\r\n") if crlf else text
    check.chunker_basics(text, rag9.semantic_chunks(text, max_tokens, method, embedder="hash"), max_tokens)


@st.composite
def sentences(draw):
    """A text cut into sentence spans that tile it, and a window."""
    words = draw(st.lists(st.sampled_from(["Jobs run. ", "Keys rotate! ", "Why? ", "ok\r\n", "Satellites "]),
                          min_size=1, max_size=12))
    ends = list(itertools.accumulate(map(len, words)))
    return "".join(words), list(zip([0, *ends], ends)), draw(st.integers(0, 4))


@pytest.mark.grades("window_texts")
@check.hidden_seed
@given(case=sentences())
def test_window_texts_hidden_property(rag9, case):
    text, spans, window = case
    expected = [text[spans[max(i - window, 0)][0] : spans[min(i + window, len(spans) - 1)][1]]
                for i in range(len(spans))]
    check.expect(list(rag9.window_texts(text, spans, window)), expected)


def unit_rows(draw, rows):
    """`rows` unit vectors of 3 dimensions, as an embedder gives them."""
    coordinates = st.integers(-4, 4)
    vectors = [draw(st.tuples(coordinates, coordinates, coordinates).filter(any)) for _ in range(rows)]
    return np.array(vectors, dtype=float) / np.linalg.norm(vectors, axis=1, keepdims=True)


@pytest.mark.grades("neighbour_distances")
@check.hidden_seed
@given(data=st.data(), rows=st.integers(1, 8))
def test_neighbour_distances_hidden_property(rag9, data, rows):
    vectors = unit_rows(data.draw, rows)
    expected = [1 - sum(a * b for a, b in zip(first, second)) for first, second in zip(vectors, vectors[1:])]
    check.expect_close(list(rag9.neighbour_distances(vectors)), expected)


def percentile(values, p):
    """The p-th percentile by linear interpolation between the sorted values (numpy's default)."""
    ordered = sorted(values)
    place = (len(ordered) - 1) * p / 100
    low = int(place)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (place - low)


@pytest.mark.grades("breakpoints")
@check.hidden_seed
@given(distances=st.lists(st.integers(0, 20).map(lambda n: n / 10), max_size=12),
       p=st.sampled_from([0, 10, 25, 50, 75, 90, 95, 100]))
def test_breakpoints_hidden_property(rag9, distances, p):
    expected = [i + 1 for i, d in enumerate(distances) if d > percentile(distances, p)] if distances else []
    check.expect(list(rag9.breakpoints(distances, p)), expected)


def segmentations(n, allowed):
    """Every way to cut range(n) into chunks (start, end) that `allowed` accepts, as lists of cuts."""
    for cuts in itertools.product([False, True], repeat=max(n - 1, 0)):
        bounds = [0, *[i + 1 for i, cut in enumerate(cuts) if cut], n]
        if all(allowed(start, end) for start, end in zip(bounds, bounds[1:])):
            yield bounds[1:-1]


def inside_score(scores, start, end):
    """The summed pair scores of a chunk: scores[d, i] for i and i + d both in [start, end)."""
    return sum(scores[d, i] for i in range(start, end) for d in range(1, end - i) if d < len(scores))


@pytest.mark.grades("best_cuts")
@check.hidden_seed
@given(data=st.data(), n=st.integers(1, 8), max_sentences=st.integers(1, 5), max_tokens=st.integers(1, 12))
def test_best_cuts_hidden_property(rag9, data, n, max_sentences, max_tokens):
    """Cuts that keep every chunk within both limits (a sentence alone may be over the tokens), with
    the best total found by trying every way to cut."""
    scores = np.zeros((max_sentences, n))
    for d in range(1, min(max_sentences, n)):
        scores[d, : n - d] = data.draw(st.lists(st.integers(-5, 5), min_size=n - d, max_size=n - d))
    tokens = data.draw(st.lists(st.integers(1, 6), min_size=n, max_size=n))

    def allowed(start, end):
        return end - start <= max_sentences and (end - start == 1 or sum(tokens[start:end]) <= max_tokens)

    def total(cuts):
        bounds = [0, *cuts, n]
        return sum(inside_score(scores, a, b) for a, b in zip(bounds, bounds[1:]))

    cuts = [int(cut) for cut in rag9.best_cuts(np.cumsum(scores, axis=0), tokens, max_tokens, max_sentences)]
    assert cuts == sorted(set(cuts)) and all(0 < cut < n for cut in cuts), f"returned {cuts}: not cuts in (0, {n})"
    bounds = [0, *cuts, n]
    assert all(allowed(a, b) for a, b in zip(bounds, bounds[1:])), (
        f"returned {cuts}: a chunk over max_sentences = {max_sentences} or max_tokens = {max_tokens}")
    best = max(map(total, segmentations(n, allowed)))
    assert total(cuts) == pytest.approx(best), f"returned {cuts}, scoring {total(cuts)}; the best scores {best}"
