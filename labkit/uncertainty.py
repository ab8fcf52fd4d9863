"""How sure a comparison is: a mean's interval by the normal approximation, and the sentence a
result may claim.

Given to every lab that compares methods. It is a formula, not rag8's bootstrap: rag8 asks the
student to build the paired percentile bootstrap, so nothing given here may compute it (a lab
delegating rag8's TODO to this module gets an interval rag8's check refuses). With the hundreds of
questions the labs ask, the two agree within a point or so; with few questions, or a difference
that is 0 for most of them, the bootstrap (rag8's) is the one to trust.
Two methods answered the same questions, so their per-question scores are paired: a
question one method finds is often one the other finds too. Taking the interval of the
per-question *differences* keeps that pairing, and it is then much narrower than two
separate intervals would suggest.

    diff = paired_difference(windows, recursive)   # per-question recall of each, same order
    print(diff)                                     # +0.03 [-0.01, +0.06]
    print(claim(diff, "recursive", "token windows"))
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

LEVEL = 0.95
NOT_SHOWN = "not shown by this data"  # what a difference whose interval holds 0 may claim


@dataclass(frozen=True)
class Interval:
    """A mean over questions with its interval.

    estimate: the observed mean (of one method's scores, or of a paired difference), as rag8 names it;
    low, high: the interval's ends (mean_interval: the mean less and plus its margin);
    level: the interval's confidence level, 0.95 by default.
    """

    estimate: float
    low: float
    high: float
    level: float = LEVEL

    @property
    def shown(self) -> bool:
        """True when the interval leaves 0 out: this data shows a difference, and its sign."""
        return self.low > 0 or self.high < 0

    def __str__(self) -> str:
        """'+0.07 [+0.04, +0.10]', with the digits its verdict needs: more than 2 decimals only while a
        figure that is not 0 would print as 0 ('+0.020 [+0.001, +0.040]', '+0.030 [-0.004, +0.070]'), so
        every sign printed is the figure's own."""
        d = self.digits()
        return f"{signed(self.estimate, d)} [{signed(self.low, d)}, {signed(self.high, d)}]"

    def digits(self) -> int:
        """Decimals that show the sign of every figure: 2, or more (up to 6) while the estimate or an
        end that is not 0 would round to 0."""
        places = 2
        figures = [abs(value) for value in (self.estimate, self.low, self.high) if value != 0]
        while places < 6 and any(round(value, places) == 0 for value in figures):
            places += 1
        return places

    def plain(self) -> str:
        """The interval of a score (no sign): "0.88 [0.85, 0.91]". A score is never below 0, so an end the
        normal approximation puts below it prints as 0: all misses give "0.00 [0.00, 0.01]", not "-0.00"."""
        return f"{self.estimate:.2f} [{max(self.low, 0.0):.2f}, {self.high:.2f}]"

    def verdict(self, more: str = "more", less: str = "less") -> str:
        """What a difference's interval shows, in a word: `more`, `less`, or that it shows nothing."""
        if not self.shown:
            return NOT_SHOWN
        return more if self.low > 0 else less


def signed(value: float, places: int = 2) -> str:
    """`value` with its sign and `places` decimals; one that still rounds to 0 prints as +0.00, never
    -0.00, a sign with no figure behind it."""
    text = f"{value:+.{places}f}"
    return "+" + text[1:] if text.startswith("-") and float(text) == 0 else text


def mean_interval(values, *, level: float = LEVEL) -> Interval:
    """The mean of `values` with its normal-approximation interval: the mean plus or minus z standard
    errors, z the (1 + level) / 2 quantile of the standard normal, the standard error the sample
    standard deviation over the square root of len(values). One value shows no spread: its interval
    is unbounded, so it claims nothing."""
    scores = np.asarray(values, dtype=float)
    if scores.ndim != 1 or len(scores) == 0:
        raise ValueError("mean_interval needs a non-empty list of per-question scores")
    if not 0 < level < 1:
        raise ValueError(f"level must be between 0 and 1, not {level}")
    mean = float(scores.mean())
    if len(scores) == 1:
        return Interval(mean, -math.inf, math.inf, level)
    margin = NormalDist().inv_cdf((1 + level) / 2) * float(scores.std(ddof=1)) / math.sqrt(len(scores))
    return Interval(mean, mean - margin, mean + margin, level)


def paired_difference(a, b, *, level: float = LEVEL) -> Interval:
    """The mean of b - a over questions, with the interval of those per-question differences (the
    same questions for both): how much better method b does than method a, and how sure that is."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same questions: {len(a)} scores against {len(b)}")
    return mean_interval(b - a, level=level)


def claim(difference: Interval, ours: str, other: str, what: str = "recall") -> str:
    """The sentence `difference` (ours minus other) supports, and no more. The direction is read
    from the interval, not the mean: a difference is shown only when the whole interval has one sign."""
    if not difference.shown:
        return (f"{ours} against {other}: {difference} {what}, an interval that holds 0: "
                f"a difference is {NOT_SHOWN}")
    return (f"{ours} finds {difference.verdict()} than {other}: {difference} {what}, "
            f"an interval that leaves 0 out")
