"""labkit/uncertainty.py, the bootstrap the labs after rag8 are given: checked against scipy's own
percentile bootstrap, for determinism, for the pairing, and for the sentences it lets a lab print."""

import numpy as np
import pytest
from scipy import stats

from labkit.uncertainty import NOT_SHOWN, Interval, bootstrap_mean, claim, paired_difference


def hits(n, rate, seed):
    """n per-question recalls of 0 or 1, about `rate` of them 1."""
    return (np.random.default_rng(seed).random(n) < rate).astype(float)


@pytest.mark.parametrize("n, rate", [(40, 0.5), (116, 0.3), (500, 0.8)])
def test_matches_scipy_percentile_bootstrap(n, rate):
    """The same interval as scipy.stats.bootstrap's percentile method, within resampling noise."""
    scores = hits(n, rate, seed=n)
    ours = bootstrap_mean(scores, resamples=4000)
    theirs = stats.bootstrap((scores,), np.mean, n_resamples=4000, method="percentile",
                             confidence_level=0.95, random_state=np.random.default_rng(7)).confidence_interval
    assert ours.estimate == pytest.approx(scores.mean())
    width = theirs.high - theirs.low
    assert ours.low == pytest.approx(theirs.low, abs=0.1 * width)
    assert ours.high == pytest.approx(theirs.high, abs=0.1 * width)


def test_deterministic_and_seeded():
    scores = np.random.default_rng(1).random(116)  # shares of an answer held, not only 0 and 1
    assert bootstrap_mean(scores) == bootstrap_mean(list(scores))
    assert bootstrap_mean(scores, seed=1) != bootstrap_mean(scores, seed=2)


def test_paired_is_the_bootstrap_of_the_differences():
    a, b = hits(116, 0.4, seed=1), hits(116, 0.5, seed=2)
    assert paired_difference(a, b) == bootstrap_mean(b - a)


def test_pairing_narrows_the_interval():
    """Two methods that agree on most questions: resampling questions (the same draw for both) gives
    a much narrower interval than two methods drawn apart would, and shows the small gain."""
    a = hits(200, 0.5, seed=3)
    b = a.copy()
    b[np.flatnonzero(a == 0)[:16]] = 1  # b finds 16 more answers, and every one a finds
    paired = paired_difference(a, b)
    assert paired.estimate == pytest.approx(16 / 200)
    assert paired.shown and paired.low > 0
    apart = bootstrap_mean(b, seed=1).high - bootstrap_mean(a, seed=2).low  # a crude unpaired spread
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
        bootstrap_mean(bad)


def test_refuses_unpaired_scores():
    with pytest.raises(ValueError, match="same questions"):
        paired_difference([1, 0, 1], [1, 0])


def test_fast_enough_for_a_lab():
    """2,000 resamples of 600 questions, a dozen times (a lab's tables), well under a second."""
    import time

    scores = hits(600, 0.5, seed=5)
    began = time.process_time()
    for _ in range(12):
        bootstrap_mean(scores)
    assert time.process_time() - began < 3.0  # CPU time, so a loaded machine does not fail it


def test_a_dial_prints_the_digits_its_verdict_needs():
    """An interval that leaves 0 out by a hair is printed with the digits that show it does."""
    from labkit.lessons.dial import difference_text
    from labkit.uncertainty import Interval

    assert difference_text(Interval(0.07, 0.04, 0.10)) == "+0.07 [+0.04, +0.10]"
    assert difference_text(Interval(0.02, 0.001, 0.04)) == "+0.020 [+0.001, +0.040]"
    assert difference_text(Interval(-0.02, -0.04, -0.0004)) == "-0.0200 [-0.0400, -0.0004]"
    assert difference_text(Interval(0.01, -0.001, 0.03)) == "+0.01 [-0.00, +0.03]"  # holds 0: not shown
