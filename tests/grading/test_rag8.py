"""Grading tests for lab rag8: the retrieval metrics and the paired bootstrap."""

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.grade("rag8")

GOLD = [("faq", 100, 120)]
HITS = [("faq", 0, 50), ("install", 100, 120), ("faq", 90, 130), ("faq", 110, 200)]


@pytest.fixture(scope="module")
def rag8(open_lab):
    return open_lab("rag8")


@pytest.mark.grades("recall_at_k")
@pytest.mark.parametrize("k, expected", [(1, 0.0), (2, 0.0), (3, 1.0), (4, 1.0)])
def test_recall_needs_the_whole_span_in_the_right_document(rag8, k, expected):
    check.expect_close(rag8.recall_at_k(HITS, GOLD, k), expected)


@pytest.mark.grades("recall_at_k")
def test_recall_does_not_count_a_hit_holding_part_of_the_span(rag8):
    check.expect_close(rag8.recall_at_k([("faq", 110, 300), ("faq", 0, 115)], GOLD, 2), 0.0)


@pytest.mark.grades("recall_at_k")
def test_recall_counts_each_gold_span(rag8):
    gold = [("faq", 0, 5), ("faq", 50, 60), ("faq", 70, 80)]
    check.expect_close(rag8.recall_at_k([("faq", 0, 10), ("faq", 45, 65)], gold, 5), 2 / 3)


@pytest.mark.grades("recall_at_k")
def test_recall_counts_answers_held_not_hits_that_hold_one(rag8):
    gold = [("faq", 0, 5), ("faq", 50, 60)]
    hits = [("faq", 0, 10), ("faq", 0, 8)]  # two hits, both holding the first answer only
    check.expect_close(rag8.recall_at_k(hits, gold, 2), 1 / 2)


@pytest.mark.grades("mrr_at_k")
@pytest.mark.parametrize("k, expected", [(1, 0.0), (2, 0.0), (3, 1 / 3), (10, 1 / 3)])
def test_mrr_is_one_over_the_first_useful_rank(rag8, k, expected):
    check.expect_close(rag8.mrr_at_k(HITS, GOLD, k), expected)


@pytest.mark.grades("coverage_at_k")
@pytest.mark.parametrize("k, expected", [(1, 0.0), (3, 1.0)])
def test_coverage_counts_answer_characters_whole_or_not(rag8, k, expected):
    check.expect_close(rag8.coverage_at_k(HITS, GOLD, k), expected)
    check.expect_close(rag8.coverage_at_k([("faq", 110, 300)], GOLD, 1), 0.5)


@pytest.mark.grades("precision_and_iou")
def test_precision_and_iou_by_hand(rag8):
    # Top 3: [0,50) and [90,130) of faq (90 characters), [100,120) of install (20, other page).
    # Shared with the answer [100,120) of faq: 20. Retrieved 110 in all.
    check.expect_close(rag8.precision_and_iou(HITS, GOLD, 3), (20 / 110, 20 / (110 + 20 - 20)))


@pytest.mark.grades("coverage_at_k")
def test_overlapping_hits_cover_their_shared_characters_once(rag8):
    # [95, 110) and [105, 112) cover [100, 112) of the answer [100, 120): 12 of 20 characters.
    check.expect_close(rag8.coverage_at_k([("faq", 95, 110), ("faq", 105, 112)], GOLD, 2), 12 / 20)


@pytest.mark.grades("precision_and_iou")
def test_iou_divides_by_the_union(rag8):
    # [110, 130) against [100, 120): 10 shared, 20 retrieved, 30 in the union.
    check.expect_close(rag8.precision_and_iou([("faq", 110, 130)], GOLD, 1), (10 / 20, 10 / 30))


@pytest.mark.grades("precision_and_iou")
def test_overlapping_hits_count_their_characters_once(rag8):
    hits = [("faq", 100, 150), ("faq", 100, 150)]
    check.expect_close(rag8.precision_and_iou(hits, GOLD, 2), (20 / 50, 20 / 50))


METRICS = ("recall_at_k", "mrr_at_k", "coverage_at_k", "precision_and_iou")
# A test that checks every metric checks each in a case of its own, charged to that metric.
each_metric = pytest.mark.parametrize("metric", [pytest.param(m, marks=pytest.mark.grades(m)) for m in METRICS])


@each_metric
def test_nothing_retrieved_scores_zero(rag8, metric):
    expected = (0.0, 0.0) if metric == "precision_and_iou" else 0.0
    check.expect_close(getattr(rag8, metric)([], GOLD, 5), expected)


spans = st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 200), st.integers(1, 60)).map(
    lambda t: (t[0], t[1], t[1] + t[2])
)


def between_0_and_1(metric, value):
    assert isinstance(value, (int, float)) and 0.0 <= value <= 1.0 + 1e-12, (
        f"{metric} returned {value!r}, outside [0, 1]")


@each_metric
@given(gold=st.lists(spans, min_size=1, max_size=3, unique=True), hits=st.lists(spans, max_size=8),
       k=st.integers(1, 8))
def test_property_metrics_are_bounded_and_perfect_is_one(rag8, metric, gold, hits, k):
    value = getattr(rag8, metric)(hits, gold, k)
    for number in (value if metric == "precision_and_iou" else (value,)):
        between_0_and_1(metric, number)
    if metric != "precision_and_iou":  # the gold spans themselves, retrieved, score 1
        check.expect_close(getattr(rag8, metric)(gold, gold, 1 if metric == "mrr_at_k" else len(gold)), 1.0)
    if metric == "recall_at_k":
        more = rag8.recall_at_k(hits, gold, k + 1)
        assert value <= more, f"recall@{k} is {value}, more than recall@{k + 1}, {more}"


# ---- paired_bootstrap: judged by the exact bootstrap distribution, through bands the grader computed
# from it (tools/grading/oracles.bands; tests/test_oracles.py checks these are its values). The
# distribution itself is the grader's: enumerated, it would answer paired_bootstrap.

# Eight questions, every difference b - a distinct: a bootstrap distribution of fine steps, where
# each quantile is its own.
SCATTERED = ([0.1, 0.7, 0.3, 0.9, 0.2, 0.4, 0.6, 0.0], [0.3, 0.6, 0.8, 0.9, 0.5, 0.1, 1.0, 0.25])
# b finds one question a misses, of 20: the distribution leans right (no resample below 0), so a
# formula's symmetric interval (the mean plus or minus its standard errors) falls below 0 here.
ONE_BETTER = ([0.0] * 20, [1.0] + [0.0] * 19)
# b finds three more than a, of 24 where both find 12: b is never below a, so no paired resample
# is; a and b resampled each on its own would put a quarter of the resamples below 0.
THREE_BETTER = ([1.0, 0.0] * 12, [1.0] * 6 + [1.0, 0.0] * 9)
PRECISE = 20_000  # resamples where a quantile must be told from its neighbours
Band = check.Band

# (scores, level, resamples, the band of low, the band of high)
BOOTSTRAP_CASES = {
    "scattered-95": (SCATTERED, 0.95, PRECISE, Band(-3 / 80, -1 / 80), Band(51 / 160, 53 / 160)),
    "scattered-80": (SCATTERED, 0.8, PRECISE, Band(1 / 32, 7 / 160), Band(21 / 80, 11 / 40)),
    "scattered-50": (SCATTERED, 0.5, PRECISE, Band(3 / 32, 1 / 10), Band(17 / 80, 9 / 40)),
    "one-better": (ONE_BETTER, 0.95, 4000, Band(0, 0), Band(3 / 20, 1 / 5)),
    "three-better-95": (THREE_BETTER, 0.95, 4000, Band(0, 0), Band(1 / 4, 7 / 24)),
    "three-better-90": (THREE_BETTER, 0.9, 4000, Band(0, 1 / 24), Band(1 / 4, 1 / 4)),
}


@pytest.mark.grades("paired_bootstrap")
def test_bootstrap_estimate_is_the_mean_of_b_minus_a(rag8):
    estimate, _, _, level = check.interval_fields(rag8.paired_bootstrap([0.0, 1.0, 0.5, 1.0], [1.0, 1.0, 0.0, 1.0]))
    check.expect_close((estimate, level), (0.125, 0.95))


@pytest.mark.grades("paired_bootstrap")
@pytest.mark.parametrize("case", list(BOOTSTRAP_CASES))
def test_bootstrap_interval_is_the_paired_percentile_interval(rag8, case):
    (a, b), level, resamples, low, high = BOOTSTRAP_CASES[case]
    result = rag8.paired_bootstrap(a, b, resamples=resamples, level=level, seed=3)
    check.expect_interval_in(result, a, b, level, low, high)


@pytest.mark.grades("paired_bootstrap")
def test_bootstrap_is_the_same_for_the_same_seed(rag8):
    first = check.interval_fields(rag8.paired_bootstrap(*SCATTERED, seed=11))
    again = check.interval_fields(rag8.paired_bootstrap(*SCATTERED, seed=11))
    assert first == again, f"returned {first}, then {again} for the same call: draw from a generator seeded with seed"


@pytest.mark.grades("paired_bootstrap")
@pytest.mark.parametrize("a, b, options, error", [
    ([1.0, 0.0], [1.0], {}, ValueError),
    ([], [], {}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"level": 1.0}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"level": 95}, ValueError),
    ([1.0, 0.0], [1.0, 0.5], {"resamples": 0}, ValueError),
    ([1.0, "0"], [1.0, 0.5], {}, TypeError),
    ([1.0, 0.0], [True, 0.5], {}, TypeError),
    ([1.0, 0.0], [1.0, None], {}, TypeError),
    ([1.0, 0.0], [1.0, 0.5], {"resamples": True}, TypeError),
], ids=["lengths", "empty", "level-1", "level-95", "no-resamples", "str", "bool", "none", "bool-resamples"])
def test_bootstrap_refuses_bad_input(rag8, a, b, options, error):
    with pytest.raises(error):
        rag8.paired_bootstrap(a, b, **options)
