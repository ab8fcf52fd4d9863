# %% [markdown]
# # rag8: Which chunking wins? Measure it
#
# Which of the earlier labs' chunkers should a product use? Measure, on 44
# Orbit pages and 516 test questions, each labelled with the character span of
# its answer (a span means the same for every chunking; a chunk id would not).
# You write the ruler: `recall_at_k` (answers held whole by the top k chunks),
# `mrr_at_k`, `coverage_at_k` (answer characters covered), `precision_and_iou`
# (how much of what is read is answer), and `paired_bootstrap`: is a difference
# real, or luck of the questions? Recall@5 flatters big chunks, so the run also
# scores recall **within 1,000 retrieved tokens**: equal reading cost.

# %%
import math
import numbers
import random

import numpy as np
from academy_llm import corpus_questions, embedder_name
from labkit import run_lab
from labkit.lessons import rag8 as lesson  # given: the chunkings, the tables, the embedder dial, the checks
from labkit.lessons.rag8 import characters, holds, merged, shared_characters  # given: ranges, in 1.
from labkit.uncertainty import Interval  # given: (estimate, low, high, level), printed with the digits it needs

# %% [markdown]
# ## 1. The metrics
#
# Hits (retrieved chunks, best first) and gold spans (one or more) are ranges
# `(doc_id, start, end)`. Given: `holds(hit, span)` (same page, span held
# whole), `merged(ranges)` (the same characters, sorted, not overlapping),
# `characters(merged)` and `shared_characters(first, second)`.


# %%
def recall_at_k(hits, gold, k):
    """The share of gold spans held whole by one of the first k hits."""
    if len(gold) == 0:
        return 0.0
    top = hits[:k]
    found = 0
    for span in gold:
        for hit in top:
            if holds(hit, span):
                found += 1
                break
    return found / len(gold)


def mrr_at_k(hits, gold, k):
    """1 / rank of the first of the first k hits that holds a gold span; 0 if none does."""
    top = hits[:k]
    for position in range(len(top)):
        for span in gold:
            if holds(top[position], span):
                return 1.0 / (position + 1)
    return 0.0


def coverage_at_k(hits, gold, k):
    """The share of the gold characters that the first k hits cover."""
    answer = merged(gold)
    answer_size = characters(answer)
    if answer_size == 0:
        return 0.0
    retrieved = merged(hits[:k])
    return shared_characters(retrieved, answer) / answer_size


def precision_and_iou(hits, gold, k):
    """(precision, IoU) of the characters of the first k hits against the gold characters.

    Overlapping hits count their shared characters once.
    """
    retrieved = merged(hits[:k])
    answer = merged(gold)
    retrieved_size = characters(retrieved)
    if retrieved_size == 0:
        return (0.0, 0.0)
    answer_size = characters(answer)
    both = shared_characters(retrieved, answer)
    precision = both / retrieved_size
    union = retrieved_size + answer_size - both
    iou = both / union
    return (precision, iou)


# %% [markdown]
# ## 2. How sure is a difference?
#
# The questions are a sample. The **bootstrap** draws others from it (n
# questions *with replacement*, thousands of times); the middle 95% of their
# scores is the 95% **percentile interval**. Two methods answer the *same*
# questions, which differ more than methods do: each draw takes the same ones
# for both (**paired**). An interval leaving 0 out shows which scores higher.


# %%
RESAMPLES = 2000  # bootstrap draws: enough for two decimals, a fraction of a second


def _is_number(x):
    # bool is an int subclass; numpy's bool_ is not a numbers.Real, so this refuses both.
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_types(name, values):
    try:
        items = list(values)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence of numbers, not {type(values).__name__}: pass a list of scores"
        ) from None
    for i, x in enumerate(items):
        if not _is_number(x):
            raise TypeError(
                f"{name}[{i}] is {type(x).__name__} {x!r}, not a number: give every score as an int or float"
            )
    return items


def _check_finite(name, items):
    for i, x in enumerate(items):
        if not math.isfinite(x):
            raise ValueError(f"{name}[{i}] is {x!r}: every score must be a finite number, not NaN or infinite")


def _quantile(sorted_values, q):
    """Linear interpolation between the closest ranks (numpy.quantile's default)."""
    position = q * (len(sorted_values) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    fraction = position - below
    return sorted_values[below] + fraction * (sorted_values[above] - sorted_values[below])


def paired_bootstrap(a, b, *, resamples=RESAMPLES, level=0.95, seed=0):
    """How much method b scores above method a on the same questions, with its bootstrap interval.

    `a[i]`, `b[i]`: the two methods' scores on question i. Returns Interval(estimate, low, high, level):
    - estimate: the mean of b[i] - a[i], that is mean(b) - mean(a): positive when b scores higher;
    - low, high: draw `resamples` resamples, each len(a) question indices drawn uniformly with
      replacement, the SAME indices for both methods (paired); a resample's difference is the mean
      of b[i] - a[i] over its indices. low and high are the (1 - level) / 2 and (1 + level) / 2
      quantiles of those differences (any usual sample quantile: numpy.quantile's will do);
    - level: the level asked for.
    The draws come from a generator seeded with `seed`: the same call gives the same Interval
    (which generator, and the order of the draws, are yours to choose).

    Bad input is refused in one line: a score that is not a number (a bool or str is not) or
    `resamples` not an int (nor a bool), TypeError; a and b of different lengths or empty, a score
    NaN or infinite, resamples below 1, or level not strictly between 0 and 1, ValueError.
    """
    a = _check_types("a", a)
    b = _check_types("b", b)
    if not isinstance(resamples, numbers.Integral) or isinstance(resamples, bool):
        raise TypeError(f"resamples must be an int, not {type(resamples).__name__} {resamples!r}")
    if not isinstance(level, numbers.Real):  # a bool level is 0 or 1: a ValueError below
        raise TypeError(f"level must be a number strictly between 0 and 1, not {type(level).__name__} {level!r}")
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} scores and b {len(b)}: give both methods' scores on the same questions")
    if not a:
        raise ValueError("a and b are empty: give at least one question's scores")
    _check_finite("a", a)
    _check_finite("b", b)
    if resamples < 1:
        raise ValueError(f"resamples is {resamples}: draw at least 1 resample")
    if not 0 < level < 1:
        raise ValueError(f"level is {level!r}: give a level strictly between 0 and 1, such as 0.95")

    n = len(a)
    differences = [float(y) - float(x) for x, y in zip(a, b)]
    estimate = math.fsum(differences) / n

    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        # n questions drawn uniformly with replacement; each draw keeps its two scores paired,
        # since it picks the question's difference b[i] - a[i].
        drawn = rng.choices(differences, k=n)
        means.append(sum(drawn) / n)
    means.sort()

    low = _quantile(means, (1 - level) / 2)
    high = _quantile(means, (1 + level) / 2)
    return Interval(float(estimate), float(low), float(high), float(level))


# %% [markdown]
# ## 3. The chunkings, and the embedder dial
#
# Given as data: the earlier labs' chunks of every page (256 tokens, overlap an
# eighth; rag4's word windows: 192 words), the recommended (rag7's with a chunk
# per table row) first; whole pages; paragraphs with a title. The dial: the
# same chunks through another **embedder**: `wordllama` averages static word
# vectors, `minilm` reads words in context. Change `EMBEDDERS` and rerun.

# %%
STRATEGIES = list(lesson.STRATEGIES)  # the recommended first: "header + table rows"
EMBEDDER = embedder_name()  # the course's embedder, or $ACADEMY_EMBEDDER
EMBEDDERS = ("wordllama", "minilm")  # the dial: each retrieves the recommended chunks


def main():
    checks = lesson.check_the_ruler(globals())  # a wrong metric would make every number after it wrong
    if checks.failed:
        return checks.verdict()
    questions = corpus_questions("test")
    rows, chunked = lesson.compare_chunkings(globals(), questions, STRATEGIES, EMBEDDER)
    lesson.embedder_dial(globals(), questions, lesson.RECOMMENDED, EMBEDDERS)
    return lesson.checks(globals(), checks, questions, rows, chunked, EMBEDDER)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag8-evaluate-chunking.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 recall_at_k` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "recall_at_k")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag8")  # labs/hints/rag8.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
