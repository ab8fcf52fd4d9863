"""Hidden grading tests for lab rag8 (instructors only): cases worked out by hand, and
paired_bootstrap against the exact bootstrap distribution and against scipy.stats.bootstrap.

GOLD has three spans, two in page "a" and one in "b" (40 characters in all);
HITS overlap one another:

    rank 1  a[0, 35)   holds a[10, 30)
    rank 2  b[5, 20)   covers b[5, 10) only
    rank 3  a[20, 55)  covers a[50, 55) of a[50, 60); merged with rank 1: a[0, 55)
    rank 4  a[45, 70)  holds a[50, 60); merged: a[0, 70)
    rank 5  b[0, 10)   holds b[0, 10); merged: b[0, 20)
"""

import grading_checks as check
import oracles
import numpy as np
import pytest
import scipy.stats
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.grade("rag8")

GOLD = [("a", 10, 30), ("a", 50, 60), ("b", 0, 10)]
HITS = [("a", 0, 35), ("b", 5, 20), ("a", 20, 55), ("a", 45, 70), ("b", 0, 10)]


@pytest.fixture(scope="module")
def rag8(open_lab):
    return open_lab("rag8")


@pytest.mark.grades("recall_at_k")
@pytest.mark.parametrize("k, expected", [(1, 1 / 3), (3, 1 / 3), (4, 2 / 3), (5, 1.0), (9, 1.0)])
def test_recall_hidden(rag8, k, expected):
    check.expect_close(rag8.recall_at_k(HITS, GOLD, k), expected)


@pytest.mark.grades("recall_at_k")
def test_recall_hidden_overlapping_gold(rag8):
    # [0, 12) holds [0, 10) but not [5, 15): each gold span counts on its own.
    check.expect_close(rag8.recall_at_k([("a", 0, 12)], [("a", 0, 10), ("a", 5, 15)], 1), 0.5)


@pytest.mark.grades("mrr_at_k")
@pytest.mark.parametrize("hits, k, expected", [
    (HITS, 1, 1.0),
    ([("b", 5, 20), ("a", 20, 55), ("a", 0, 35)], 2, 0.0),  # rank 3 is the first to hold one
    ([("b", 5, 20), ("a", 20, 55), ("a", 0, 35)], 3, 1 / 3),
    ([("b", 0, 9), ("a", 45, 70)], 5, 0.5),
])
def test_mrr_hidden(rag8, hits, k, expected):
    check.expect_close(rag8.mrr_at_k(hits, GOLD, k), expected)


@pytest.mark.grades("coverage_at_k")
@pytest.mark.parametrize("k, expected", [(1, 20 / 40), (2, 25 / 40), (3, 30 / 40), (4, 35 / 40),
                                         (5, 1.0)])
def test_coverage_hidden(rag8, k, expected):
    check.expect_close(rag8.coverage_at_k(HITS, GOLD, k), expected)


@pytest.mark.grades("coverage_at_k")
def test_coverage_hidden_overlapping_gold(rag8):
    # The gold characters are [0, 15) once, though two spans cover [5, 10).
    gold = [("a", 0, 10), ("a", 5, 15)]
    check.expect_close(rag8.coverage_at_k([("a", 0, 12)], gold, 1), 12 / 15)


@pytest.mark.grades("precision_and_iou")
@pytest.mark.parametrize("k, expected", [
    (2, (25 / 50, 25 / (50 + 40 - 25))),  # a[0,35) and b[5,20): 50 retrieved, 25 of them answer
    (3, (30 / 70, 30 / (70 + 40 - 30))),  # a[0,55) and b[5,20)
    (5, (40 / 90, 40 / 90)),  # a[0,70) and b[0,20) hold all of the answer
])
def test_precision_and_iou_hidden(rag8, k, expected):
    check.expect_close(rag8.precision_and_iou(HITS, GOLD, k), expected)


@pytest.mark.grades("precision_and_iou")
def test_precision_and_iou_hidden_other_page(rag8):
    # The right offsets in the wrong page share nothing with the answer.
    check.expect_close(rag8.precision_and_iou([("c", 10, 30)], GOLD, 1), (0.0, 0.0))


def characters(spans):
    """Every (page, offset) the spans cover: the metrics counted one character at a time."""
    return {(page, offset) for page, start, end in spans for offset in range(start, end)}


def holds(hit, span):
    return hit[0] == span[0] and hit[1] <= span[1] and span[2] <= hit[2]


def by_counting(hits, gold, k):
    """(recall, MRR, coverage, precision, IoU) at k, computed the slow, obvious way."""
    top = hits[:k]
    recall = sum(any(holds(hit, span) for hit in top) for span in gold) / len(gold)
    ranks = [rank for rank, hit in enumerate(top, 1) if any(holds(hit, span) for span in gold)]
    answer, retrieved = characters(gold), characters(top)
    shared = len(answer & retrieved)
    precision = shared / len(retrieved) if retrieved else 0.0
    iou = shared / len(answer | retrieved) if retrieved else 0.0
    return recall, 1 / ranks[0] if ranks else 0.0, shared / len(answer), precision, iou


spans = st.tuples(st.sampled_from(["a", "b", "c"]), st.integers(0, 120), st.integers(1, 40)).map(
    lambda t: (t[0], t[1], t[1] + t[2]))


METRICS = ("recall_at_k", "mrr_at_k", "coverage_at_k", "precision_and_iou")


@pytest.mark.parametrize("metric", [pytest.param(m, marks=pytest.mark.grades(m)) for m in METRICS])
@check.hidden_seed
@given(gold=st.lists(spans, min_size=1, max_size=4, unique=True), hits=st.lists(spans, max_size=8),
       k=st.integers(1, 9))
def test_metrics_hidden_property(rag8, metric, gold, hits, k):
    """Each metric against counting by hand, charged to that metric."""
    recall, mrr, coverage, precision, iou = by_counting(hits, gold, k)
    expected = {"recall_at_k": recall, "mrr_at_k": mrr, "coverage_at_k": coverage,
                "precision_and_iou": (precision, iou)}[metric]
    check.expect_close(getattr(rag8, metric)(hits, gold, k), expected)


# ---- paired_bootstrap ---------------------------------------------------------------

# Fixed hidden cases: one question (every resample is that question), a difference of thirds and
# halves at level 0.9, a tuple of ints, 40 recall-like questions at level 0.99.
ONE_QUESTION = ([0.25], [1.0])
THIRDS = ([0, 1 / 3, 2 / 3, 1, 0.5, 0.5, 1, 0, 1 / 3], [1 / 3, 1 / 3, 1, 0.5, 0.5, 1, 1, 0.5, 0])
INTS = ((1, 0, 0, 1, 1, 0, 1), (1, 1, 0, 1, 0, 1, 1))
FORTY = ([1.0, 0.0, 0.5, 1.0, 0.0] * 8, [1.0, 0.5, 0.5, 1.0, 1.0] * 4 + [0.0, 0.0, 1.0, 1.0, 0.5] * 4)


@pytest.mark.grades("paired_bootstrap")
@pytest.mark.parametrize("scores, level, resamples", [
    (ONE_QUESTION, 0.95, 500),
    (THIRDS, 0.9, 20_000),
    (INTS, 0.95, 5000),
    (FORTY, 0.99, 20_000),
])
def test_bootstrap_hidden(rag8, scores, level, resamples):
    a, b = scores
    result = rag8.paired_bootstrap(a, b, resamples=resamples, level=level, seed=2024)
    oracles.expect_bootstrap(result, a, b, level, resamples)


@pytest.mark.grades("paired_bootstrap")
@pytest.mark.parametrize("a, b, options, error", [
    ([1.0, float("nan")], [1.0, 0.5], {}, ValueError),
    ([1.0, 0.0], [float("inf"), 0.5], {}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"level": 0}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"level": -0.5}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"resamples": -3}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"resamples": 100.0}, TypeError),
    ([1.0, 0.0, 1.0], [1.0, 0.5], {}, ValueError),
    ([[1.0], 0.0], [1.0, 0.5], {}, TypeError),
])
def test_bootstrap_refuses_bad_input_hidden(rag8, a, b, options, error):
    with pytest.raises(error):
        rag8.paired_bootstrap(a, b, **options)


# Drawn cases: scores of the kinds recall takes (0, a half, 1; a third for three gold spans).
SCORES = st.sampled_from([0.0, 1 / 3, 0.5, 1.0])
LEVELS = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])


@pytest.mark.grades("paired_bootstrap")
@check.hidden_seed
@given(pairs=st.lists(st.tuples(SCORES, SCORES), min_size=1, max_size=8), level=LEVELS,
       resamples=st.sampled_from([1000, 4000]), seed=st.integers(0, 2**32 - 1))
def test_bootstrap_hidden_exact_property(rag8, pairs, level, resamples, seed):
    """Few questions: the endpoints against the exact bootstrap distribution, and the same again."""
    a, b = [x for x, _ in pairs], [y for _, y in pairs]
    result = rag8.paired_bootstrap(a, b, resamples=resamples, level=level, seed=seed)
    oracles.expect_bootstrap(result, a, b, level, resamples)
    again = rag8.paired_bootstrap(a, b, resamples=resamples, level=level, seed=seed)
    assert check.interval_fields(again) == check.interval_fields(result), (
        f"returned {result}, then {again} for the same call: draw from a generator seeded with seed")


REFERENCE_RESAMPLES = 5_000  # its own Monte Carlo error widens the band by 10% (1/1000 + 1/5000 against 1/1000)


def scipy_distribution(a, b, level, seed):
    """scipy.stats.bootstrap's own paired percentile bootstrap of mean(b - a): its resample means."""
    result = scipy.stats.bootstrap((np.array(a), np.array(b)), lambda x, y, axis: np.mean(y - x, axis=axis),
                                   paired=True, vectorized=True, method="percentile", confidence_level=level,
                                   n_resamples=REFERENCE_RESAMPLES, rng=np.random.default_rng(seed))
    return oracles.sampled_distribution(result.bootstrap_distribution)


@st.composite
def two_methods(draw):
    """Many questions, where two methods agree on most: each question's score for a, and b's the
    same or another."""
    a = draw(st.lists(SCORES, min_size=30, max_size=80))
    changed = draw(st.lists(st.tuples(st.integers(0, len(a) - 1), SCORES), max_size=len(a) // 2))
    b = list(a)
    for question, score in changed:
        b[question] = score
    return a, b


@pytest.mark.grades("paired_bootstrap")
@check.hidden_seed
@given(scores=two_methods(), level=LEVELS, seed=st.integers(0, 2**32 - 1))
def test_bootstrap_hidden_against_scipy(rag8, scores, level, seed):
    """Many questions: the endpoints against scipy's paired percentile bootstrap."""
    a, b = scores
    resamples = 1000
    result = rag8.paired_bootstrap(a, b, resamples=resamples, level=level, seed=seed)
    oracles.expect_bootstrap(result, a, b, level, resamples, scipy_distribution(a, b, level, seed),
                           REFERENCE_RESAMPLES)
