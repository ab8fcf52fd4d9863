"""The resampling behind labkit.uncertainty's intervals, in a file of its own.

It is the answer to rag8's paired_bootstrap, which the student writes, so no
grading worker may read it: tools/grading/remote.py leaves it out of what a
worker reads, in every layer, and labkit.uncertainty imports it only when an
interval is asked for (a lab's demo, never its graded functions).
"""

import numpy as np


def percentile_interval(scores: np.ndarray, resamples: int, level: float, seed: int) -> tuple[float, float]:
    """The (1 - level) / 2 and (1 + level) / 2 quantiles of the means of `resamples` resamples of
    `scores`, each len(scores) indices drawn with replacement by numpy's generator seeded with `seed`."""
    draws = np.random.default_rng(seed).integers(0, len(scores), size=(resamples, len(scores)))
    low, high = np.quantile(scores[draws].mean(axis=1), [(1 - level) / 2, (1 + level) / 2])
    return float(low), float(high)
