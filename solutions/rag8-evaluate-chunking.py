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
import numbers

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
    # BEGIN SOLUTION
    # hint 1: Measure the share of a question's gold spans that one of the first k retrieved chunks
    # hint 1: holds whole, because a chunk holding half an answer cannot answer.
    # hint 2: Look only at the first k hits. For each gold span, ask whether any of them holds it
    # hint 2: (the given holds() checks the page and both ends). Count the spans found and divide
    # hint 2: by the number of gold spans, so that two spans with one found score 0.5.
    # hint 3: For each gold span, is there a hit among hits[:k] that holds() it? Return the number
    # hint 3: of such spans divided by len(gold).
    found = sum(1 for span in gold if any(holds(hit, span) for hit in hits[:k]))
    return found / len(gold)
    # END SOLUTION


def mrr_at_k(hits, gold, k):
    """1 / rank of the first of the first k hits that holds a gold span; 0 if none does."""
    # BEGIN SOLUTION
    # hint 1: Score how high the first useful chunk ranks: 1 if it is the top hit, 1/2 if second,
    # hint 1: and so on, 0 if none of the first k holds an answer, because a reader starts at the
    # hint 1: top.
    # hint 2: Walk the first k hits in rank order, ranks counted from 1. At the first hit that
    # hint 2: holds any gold span, return the reciprocal of its rank; the hits after it do not
    # hint 2: matter. If none does, the score is 0.0.
    # hint 3: Walk hits[:k] with their rank (1 = best); return 1 / rank at the first that holds()
    # hint 3: any gold span.
    for rank, hit in enumerate(hits[:k], 1):
        if any(holds(hit, span) for span in gold):
            return 1 / rank
    return 0.0
    # END SOLUTION


def coverage_at_k(hits, gold, k):
    """The share of the gold characters that the first k hits cover."""
    # BEGIN SOLUTION
    # hint 1: Measure what share of the answer's characters the first k chunks cover, whole or not
    # hint 1: (what Chroma's evaluation calls recall): a chunk holding part of an answer counts for
    # hint 1: that part.
    # hint 2: Count every character once, however many hits cover it: merge the overlapping ranges
    # hint 2: of the first k hits, and of the gold spans, with the given merged(). Then divide the
    # hint 2: characters the two share (shared_characters) by the answer's characters (characters).
    # hint 3: shared_characters(merged(hits[:k]), merged(gold)) / characters(merged(gold)).
    answer = merged(gold)
    return shared_characters(merged(hits[:k]), answer) / characters(answer)
    # END SOLUTION


def precision_and_iou(hits, gold, k):
    """(precision, IoU) of the characters of the first k hits against the gold characters.

    Overlapping hits count their shared characters once.
    """
    # BEGIN SOLUTION
    # hint 1: Measure how much of what was retrieved is answer (precision), and how well retrieved
    # hint 1: and answer characters overlap (intersection over union), because retrieving whole
    # hint 1: pages finds answers but makes a model read a lot of nothing.
    # hint 2: Work in characters, each counted once: merge the first k hits, and the gold spans,
    # hint 2: with merged(). The shared characters over the retrieved ones is the precision; over
    # hint 2: the union (retrieved plus answer, less what they share) it is the IoU. When nothing
    # hint 2: was retrieved, return zeros rather than divide by zero.
    # hint 3: Merge the first k hits and the gold spans with merged(); count with characters() and
    # hint 3: shared_characters(). precision = shared / retrieved; IoU = shared / (retrieved + gold
    # hint 3: - shared). Return (0.0, 0.0) when nothing was retrieved.
    retrieved = merged(hits[:k])
    answer = merged(gold)
    shared = shared_characters(retrieved, answer)
    retrieved_size = characters(retrieved)
    if retrieved_size == 0:
        return 0.0, 0.0
    return shared / retrieved_size, shared / (retrieved_size + characters(answer) - shared)
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Say how sure a difference between two methods is: draw many new samples of the
    # hint 1: questions from these ones, with replacement, and report the mean difference b - a
    # hint 1: with the middle `level` share of the resamples' differences (a percentile interval).
    # hint 1: Resample the two methods together: a question's two scores stay paired.
    # hint 2: Check the arguments first, as the docstring lists them (bool is an int in Python:
    # hint 2: refuse it by name). Take the per-question differences b[i] - a[i]: their mean is the
    # hint 2: estimate, and resampling them is resampling both methods with the same questions.
    # hint 2: Make one random generator from the seed (numpy.random.default_rng(seed), or
    # hint 2: random.Random(seed)); `resamples` times, draw len(a) indices with replacement and take
    # hint 2: the mean of the differences at those indices. low and high are the (1 - level) / 2
    # hint 2: and (1 + level) / 2 quantiles of those means (numpy.quantile).
    # hint 3: differences = ...  # b minus a, question by question, as floats
    # hint 3: rng = ...  # one generator, made from the seed
    # hint 3: means = ...  # `resamples` times: the mean of len(a) differences drawn with replacement
    # hint 3: low, high = ...  # the quantiles of those means that leave (1 - level) / 2 out on each side
    # hint 3: return Interval(..., low, high, level)  # the estimate is the mean of all the differences
    for name, scores in (("a", a), ("b", b)):
        for number, score in enumerate(scores):
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise TypeError(f"scores must be numbers, got {score!r} at {name}[{number}]")
            if not np.isfinite(score):
                raise ValueError(f"scores must be finite numbers, got {score!r} at {name}[{number}]")
    if len(a) != len(b):
        raise ValueError(f"a and b must score the same questions: a has {len(a)} scores, b has {len(b)}")
    if len(a) == 0:
        raise ValueError("a and b are empty: give each method's score on at least one question")
    if isinstance(resamples, bool) or not isinstance(resamples, int):
        raise TypeError(f"resamples must be an int, got {resamples!r}")
    if resamples < 1:
        raise ValueError(f"resamples must be 1 or more, got {resamples}")
    if isinstance(level, bool) or not isinstance(level, numbers.Real) or not 0 < level < 1:
        raise ValueError(f"level must be a number between 0 and 1 (0.95 for a 95% interval), got {level!r}")
    differences = np.array(b, dtype=float) - np.array(a, dtype=float)
    rng = np.random.default_rng(seed)
    picks = rng.integers(0, len(differences), size=(resamples, len(differences)))
    means = differences[picks].mean(axis=1)
    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return Interval(float(differences.mean()), float(low), float(high), level)
    # END SOLUTION


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


# %%
if __name__ == "__main__":
    run_lab(main)
