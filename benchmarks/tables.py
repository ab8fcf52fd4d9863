"""Printing results: Markdown tables (readable in a terminal, pasted into the README as they are) and notes.

Every recall is a mean over questions, so it is printed with its 95% interval
(a percentile bootstrap over the questions), and every difference with the
paired interval of the same questions: a difference is claimed only where that
interval leaves 0 out. The bootstrap is here, not in labkit: it is rag8's answer,
and labkit ships to students (labkit.uncertainty gives them a formula instead).
"""

import numpy as np

from labkit.uncertainty import NOT_SHOWN, Interval  # noqa: F401 (for the tables)

RESAMPLES = 2000


def bootstrap_mean(values, *, resamples: int = RESAMPLES, level: float = 0.95, seed: int = 0) -> Interval:
    """The mean of `values` with its percentile bootstrap interval: `resamples` draws of len(values)
    indices with replacement, from numpy's generator seeded with `seed` (same input, same interval)."""
    scores = np.asarray(values, dtype=float)
    if scores.ndim != 1 or len(scores) == 0:
        raise ValueError("bootstrap_mean needs a non-empty list of per-question scores")
    draws = np.random.default_rng(seed).integers(0, len(scores), size=(resamples, len(scores)))
    low, high = np.quantile(scores[draws].mean(axis=1), [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(scores.mean()), float(low), float(high), level)


def paired_difference(a, b, **options) -> Interval:
    """The mean of b - a over questions, with its paired bootstrap interval (the same questions drawn for both)."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same questions: {len(a)} scores against {len(b)}")
    return bootstrap_mean(b - a, **options)


def table(headers, rows):
    """A Markdown table with every column padded to its widest cell; numbers right-aligned."""
    cells = [[str(cell) for cell in row] for row in [headers] + rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(looks_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]

    def line(row):
        padded = [cell.rjust(w) if right else cell.ljust(w) for cell, w, right in zip(row, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if right else "-" * (w + 2) for w, right in zip(widths, numeric)) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def looks_numeric(cell):
    """True for cells such as 74.5, +3.2, 0.81x or 'n/a' (a number that could not be had)."""
    stripped = cell.rstrip("x%").lstrip("+-")
    return cell == "n/a" or stripped.replace(".", "", 1).isdigit()


def signed(points):
    """A difference in points, with its sign: +3.4, -1.0, +0.0."""
    return f"{points:+.1f}"


def in_points(interval: Interval) -> str:
    """A recall (0 to 1) with its interval, in percent: '73.7 [65.5, 81.0]'."""
    return f"{100 * interval.estimate:.1f} [{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def signed_points(interval: Interval) -> str:
    """A difference (0 to 1) with its interval, in points: '+8.7 [+2.1, +15.3]'."""
    return f"{100 * interval.estimate:+.1f} [{100 * interval.low:+.1f}, {100 * interval.high:+.1f}]"


def shown_kinds(differences: dict) -> str:
    """Which kinds a set of differences ({kind: Interval}) shows, and which way: 'more: table, code; less: prose'."""
    more = [kind for kind, d in differences.items() if d.shown and d.low > 0]
    less = [kind for kind, d in differences.items() if d.shown and d.high < 0]
    parts = ([f"more: {', '.join(more)}"] if more else []) + ([f"less: {', '.join(less)}"] if less else [])
    return "; ".join(parts) or "none shown"


def print_wrong_starts(results):
    """Say which libraries reported chunk offsets that were wrong (their chunks were found again)."""
    for r in results:
        if r.wrong_starts:
            print(f"({r.contender.name}: {r.wrong_starts} of its {r.chunks} reported start offsets were wrong;"
                  " its chunks were found again in the text, in order)")
