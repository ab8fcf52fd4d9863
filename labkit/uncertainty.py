"""How sure a difference of two scores is: a seeded percentile bootstrap over paired questions.

Two methods scored on the same questions are not two independent samples: a question
that is hard for one is often hard for the other. Resampling the *questions* (the
same resampled questions for both methods) and looking at the mean difference on each
resample keeps that pairing, and gives a narrower, honest interval for "how much better
is A than B". The interval is the middle `confidence` share of the resampled means (the
percentile bootstrap): simple to explain, and close enough for a hundred questions or more.

The generator is seeded, so the same scores give the same interval on every run and
machine, as everything else in the course does.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

RESAMPLES = 2000
SEED = 0
BLOCK = 250  # resamples drawn at a time: a few thousand questions stay within a few MB


class Interval(NamedTuple):
    """A mean difference and the bootstrap interval around it."""

    estimate: float  # mean of first - second over the questions
    low: float
    high: float
    confidence: float  # 0.95: the share of resampled means between low and high

    def holds_zero(self) -> bool:
        """True if the interval does not rule out "no difference"."""
        return self.low <= 0.0 <= self.high


def paired_bootstrap(first, second, resamples: int = RESAMPLES, confidence: float = 0.95,
                     seed: int = SEED) -> Interval:
    """The mean of `first - second` (scores of the same questions, in the same order) and its interval.

    Raises ValueError for scores of different lengths or none at all: the pairing is the point.
    """
    first, second = np.asarray(first, dtype=np.float64), np.asarray(second, dtype=np.float64)
    if first.shape != second.shape or first.ndim != 1 or len(first) == 0:
        raise ValueError(f"paired_bootstrap needs two equal, non-empty lists of scores, got {first.shape} "
                         f"and {second.shape}")
    differences = first - second
    rng = np.random.default_rng(seed)
    means = []
    for done in range(0, resamples, BLOCK):
        rows = rng.integers(0, len(differences), size=(min(BLOCK, resamples - done), len(differences)))
        means.append(differences[rows].mean(axis=1))
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(np.concatenate(means), [tail, 100 - tail])
    return Interval(float(differences.mean()), float(low), float(high), confidence)
