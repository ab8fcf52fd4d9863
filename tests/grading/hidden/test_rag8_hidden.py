"""Hidden grading tests for lab rag8 (instructors only): cases worked out by hand.

GOLD has three spans, two in page "a" and one in "b" (40 characters in all);
HITS overlap one another:

    rank 1  a[0, 35)   holds a[10, 30)
    rank 2  b[5, 20)   covers b[5, 10) only
    rank 3  a[20, 55)  covers a[50, 55) of a[50, 60); merged with rank 1: a[0, 55)
    rank 4  a[45, 70)  holds a[50, 60); merged: a[0, 70)
    rank 5  b[0, 10)   holds b[0, 10); merged: b[0, 20)
"""

import grading_checks as check
import pytest
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
