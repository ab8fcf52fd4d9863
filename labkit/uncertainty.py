"""How sure a comparison is: a seeded bootstrap over questions, and the sentence a result may claim.

Given to the labs around rag8, where students write the paired bootstrap themselves: the
resampling itself is in labkit/bootstrap.py, which no grading worker reads.
Two methods answered the same questions, so their per-question scores are paired: a
question one method finds is often one the other finds too. Resampling the *questions*
(the same draw for both methods) keeps that pairing, and the interval of the mean
difference is then much narrower than two separate intervals would suggest.

    diff = paired_difference(windows, recursive)   # per-question recall of each, same order
    print(diff)                                     # +0.03 [-0.01, +0.06]
    print(claim(diff, "recursive", "token windows"))
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RESAMPLES = 2000
LEVEL = 0.95
NOT_SHOWN = "not shown by this data"  # what a difference whose interval holds 0 may claim


@dataclass(frozen=True)
class Interval:
    """A mean over questions with its percentile bootstrap interval.

    estimate: the observed mean (of one method's scores, or of a paired difference), as rag8 names it;
    low, high: the (1 - level) / 2 and (1 + level) / 2 quantiles of the resampled means;
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
        return f"{self.estimate:+.2f} [{self.low:+.2f}, {self.high:+.2f}]"

    def plain(self) -> str:
        """The interval of a score (no sign): "0.88 [0.85, 0.91]"."""
        return f"{self.estimate:.2f} [{self.low:.2f}, {self.high:.2f}]"

    def verdict(self, more: str = "more", less: str = "less") -> str:
        """What a difference's interval shows, in a word: `more`, `less`, or that it shows nothing."""
        if not self.shown:
            return NOT_SHOWN
        return more if self.low > 0 else less


def bootstrap_mean(values, *, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> Interval:
    """The mean of `values` with its percentile bootstrap interval: `resamples` draws of len(values)
    indices with replacement, from numpy's generator seeded with `seed` (same input, same interval)."""
    scores = np.asarray(values, dtype=float)
    if scores.ndim != 1 or len(scores) == 0:
        raise ValueError("bootstrap_mean needs a non-empty list of per-question scores")
    if not 0 < level < 1 or resamples < 1:
        raise ValueError(f"level must be between 0 and 1 and resamples at least 1, not {level} and {resamples}")
    from labkit.bootstrap import percentile_interval  # here, not above: no grading worker reads it

    low, high = percentile_interval(scores, resamples, level, seed)
    return Interval(float(scores.mean()), low, high, level)


def paired_difference(a, b, *, resamples: int = RESAMPLES, level: float = LEVEL, seed: int = 0) -> Interval:
    """The mean of b - a over questions, with its paired bootstrap interval (the same questions
    drawn for both): how much better method b does than method a, and how sure that is."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same questions: {len(a)} scores against {len(b)}")
    return bootstrap_mean(b - a, resamples=resamples, level=level, seed=seed)


def claim(difference: Interval, ours: str, other: str, what: str = "recall") -> str:
    """The sentence `difference` (ours minus other) supports, and no more. The direction is read
    from the interval, not the mean: a difference is shown only when the whole interval has one sign."""
    if not difference.shown:
        return (f"{ours} against {other}: {difference} {what}, an interval that holds 0: "
                f"a difference is {NOT_SHOWN}")
    return (f"{ours} finds {difference.verdict()} than {other}: {difference} {what}, "
            f"an interval that leaves 0 out")
