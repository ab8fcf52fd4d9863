"""labkit/uncertainty.py, the intervals every comparing lab is given: the normal approximation,
checked against scipy's, for the pairing, for the sentences it lets a lab print, and for not being
rag8's answer (the paired percentile bootstrap a student writes)."""

import math

import numpy as np
import pytest
from scipy import stats

from labkit.uncertainty import NOT_SHOWN, Interval, claim, mean_interval, paired_difference


def hits(n, rate, seed):
    """n per-question recalls of 0 or 1, about `rate` of them 1."""
    return (np.random.default_rng(seed).random(n) < rate).astype(float)


@pytest.mark.parametrize("n, rate, level", [(40, 0.5, 0.95), (116, 0.3, 0.9), (500, 0.8, 0.5)])
def test_matches_scipy_normal_interval(n, rate, level):
    """The mean plus or minus z standard errors, as scipy.stats.norm.interval gives it."""
    scores = hits(n, rate, seed=n)
    ours = mean_interval(scores, level=level)
    low, high = stats.norm.interval(level, loc=scores.mean(), scale=stats.sem(scores))
    assert (ours.estimate, ours.level) == (pytest.approx(scores.mean()), level)
    assert (ours.low, ours.high) == (pytest.approx(low), pytest.approx(high))


def test_deterministic_and_one_value_claims_nothing():
    scores = np.random.default_rng(1).random(116)  # shares of an answer held, not only 0 and 1
    assert mean_interval(scores) == mean_interval(list(scores))
    alone = mean_interval([0.5])
    assert (alone.low, alone.high) == (-math.inf, math.inf) and not alone.shown


def test_paired_is_the_interval_of_the_differences():
    a, b = hits(116, 0.4, seed=1), hits(116, 0.5, seed=2)
    assert paired_difference(a, b) == mean_interval(b - a)


def test_is_not_rag8s_paired_bootstrap():
    """b finds one answer a misses, of 20: no paired resample of the questions falls below 0, so
    rag8's percentile interval starts at 0 (its grading tests' one-better case); this formula's does
    not. A rag8 that hands its TODO to this module fails the lab's check and the grader alike."""
    one_better = paired_difference([0.0] * 20, [1.0] + [0.0] * 19)
    assert one_better.low < 0 < one_better.high


def test_pairing_narrows_the_interval():
    """Two methods that agree on most questions: the interval of the per-question differences is
    much narrower than two methods' intervals taken apart would suggest, and shows the small gain."""
    a = hits(200, 0.5, seed=3)
    b = a.copy()
    b[np.flatnonzero(a == 0)[:16]] = 1  # b finds 16 more answers, and every one a finds
    paired = paired_difference(a, b)
    assert paired.estimate == pytest.approx(16 / 200)
    assert paired.shown and paired.low > 0
    apart = mean_interval(b).high - mean_interval(a).low  # a crude unpaired spread
    assert paired.high - paired.low < 0.5 * apart


def test_no_difference_is_not_shown():
    a = hits(116, 0.5, seed=4)
    same = paired_difference(a, a)
    assert (same.estimate, same.low, same.high) == (0, 0, 0) and not same.shown
    assert NOT_SHOWN in claim(same, "ours", "theirs")


def test_claims_follow_the_interval():
    assert claim(Interval(0.05, 0.01, 0.09), "ours", "theirs").startswith("ours finds more than theirs")
    assert claim(Interval(-0.05, -0.09, -0.01), "ours", "theirs").startswith("ours finds less than theirs")
    assert NOT_SHOWN in claim(Interval(0.05, -0.01, 0.09), "ours", "theirs")
    assert Interval(0.05, -0.01, 0.09).verdict() == NOT_SHOWN
    assert str(Interval(0.05, -0.01, 0.09)) == "+0.05 [-0.01, +0.09]"
    assert Interval(0.5, 0.4, 0.6).plain() == "0.50 [0.40, 0.60]"


@pytest.mark.parametrize("bad", [[], [[1.0, 0.0]]])
def test_refuses_what_is_not_a_list_of_scores(bad):
    with pytest.raises(ValueError, match="per-question scores"):
        mean_interval(bad)


def test_refuses_unpaired_scores():
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1, 0, 1], [1, 0])


def test_an_interval_prints_the_digits_its_verdict_needs():
    """An interval that leaves 0 out by a hair is printed with the digits that show it does, and a figure
    near 0 with the digits that show its sign: never "-0.00", a sign with no figure behind it."""
    from labkit.uncertainty import Interval

    assert str(Interval(0.07, 0.04, 0.10)) == "+0.07 [+0.04, +0.10]"
    assert str(Interval(0.02, 0.001, 0.04)) == "+0.020 [+0.001, +0.040]"
    assert str(Interval(-0.02, -0.04, -0.0004)) == "-0.0200 [-0.0400, -0.0004]"
    assert str(Interval(0.01, -0.001, 0.03)) == "+0.010 [-0.001, +0.030]"  # holds 0: not shown
    assert str(Interval(-0.001, -0.03, 0.02)) == "-0.001 [-0.030, +0.020]"
    assert str(Interval(0.0, -0.03, 0.03)) == "+0.00 [-0.03, +0.03]"
    assert "-0.00" not in str(Interval(-1e-9, -1e-9, 1e-9))


def test_a_score_interval_never_prints_below_zero():
    # all misses but one: the normal approximation's low end is below 0, and a score cannot be
    interval = mean_interval([0.0] * 99 + [1.0])
    assert interval.low < 0
    assert interval.plain() == "0.01 [0.00, 0.03]"
