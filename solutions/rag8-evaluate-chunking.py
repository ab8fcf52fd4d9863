# %% [markdown]
# # rag8: Which chunking wins? Measure it
#
# Four labs built four chunkers. Which one should a product use? Opinions are
# cheap; this lab measures, on the course's dataset: 44 pages of Orbit
# documentation and 721 questions, each labelled with the **character span**
# of its answer.
#
# Labels are spans, not chunk ids, on purpose. "Chunk 12 answers question 3"
# only means something for the chunking that made chunk 12; a span
# `[start, end)` in the page means the same thing for every chunking, which is
# what lets us compare them fairly.
#
# You write the metrics:
#
# - `recall_at_k`: the share of gold spans that one of the first k retrieved
#   chunks holds whole (a chunk holding half an answer cannot answer);
# - `coverage_at_k`: the share of the answer's *characters* the first k chunks
#   cover, whole or not (Chroma's evaluation calls this recall);
# - `mrr_at_k`: 1 / rank of the first chunk holding a gold span;
# - `precision_and_iou`: of the characters retrieved, how many are answer
#   (precision), and the overlap of retrieved and answer characters over their
#   union (IoU), as in Chroma's chunking evaluation. A strategy that retrieves
#   whole pages finds the answer often, but makes a model read a lot of
#   nothing: these two numbers show it.
#
# Recall@5 alone flatters big chunks: five whole pages are a tenth of this
# corpus. So we also measure recall **within a fixed budget of retrieved
# tokens** (1,000: what a prompt might spare for context), taking hits in rank
# order while they fit. That is the fair comparison between chunk sizes.
#
# And one more function, for the question every table of scores raises: is a
# difference real, or luck of the questions? `paired_bootstrap` gives a
# difference between two methods with its 95% interval, and the tables print
# every score and every difference with one. A difference whose interval holds
# 0 is one this data does not show.

# %%
import math
import numbers
import time
from typing import NamedTuple

import numpy as np
from academy_llm import (corpus_pages, corpus_questions, count_tokens, embed, embed_cost, embedder_name, make_chunk,
                         top_k_each)
from labkit import Case, Invariants, load_lab, returns, run_lab, show_figure
from labkit.retrieval import gold_spans  # given: every span a question's answer needs
from labkit.uncertainty import NOT_SHOWN  # given: what a difference whose interval holds 0 may claim

rag4 = load_lab("rag4")
rag5 = load_lab("rag5")
rag6 = load_lab("rag6")
rag7 = load_lab("rag7")

# %% [markdown]
# ## 1. The metrics
#
# A retrieved chunk is a `Hit`: `(doc_id, start, end)`. A question's gold
# answer is one or more distinct spans `(doc_id, start, end)` (a
# "multi_section" question needs two places of its page). Results are lists
# of hits, best first.


# %%
def holds(hit, span):
    """True if the retrieved `hit` holds the whole gold `span`."""
    return hit[0] == span[0] and hit[1] <= span[1] and span[2] <= hit[2]


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


def within_budget(hits, hit_tokens, budget):
    """The hits, best first, that fit in `budget` tokens together (stopping at the first that does not)."""
    kept, used = [], 0
    for hit, tokens in zip(hits, hit_tokens):
        if used + tokens > budget:
            break
        kept.append(hit)
        used += tokens
    return kept


def merged(ranges):
    """Sorted, disjoint (doc_id, start, end) ranges covering the same characters."""
    result = []
    for doc_id, start, end in sorted(ranges):
        if result and result[-1][0] == doc_id and start <= result[-1][2]:
            result[-1] = (doc_id, result[-1][1], max(result[-1][2], end))
        else:
            result.append((doc_id, start, end))
    return result


def characters(ranges):
    """How many characters the (merged) ranges cover."""
    return sum(end - start for _, start, end in ranges)


def shared_characters(first, second):
    """Characters covered by both lists of merged ranges."""
    shared = 0
    for doc_id, start, end in first:
        for other_doc, other_start, other_end in second:
            if doc_id == other_doc:
                shared += max(0, min(end, other_end) - max(start, other_start))
    return shared


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
# The test split is a sample of the questions users ask. With n questions, one
# question found or missed moves recall by 1/n (the tables below print n), so
# two chunkers a question or two apart may well swap places on another sample
# of the same kinds of question. A score needs its interval: the range that
# other samples of as many questions would plausibly have given.
#
# The **bootstrap** makes those other samples from the one we have: draw n
# questions from the test split *with replacement* (some come twice, some not
# at all), score the draw, and do it again, thousands of times. The middle 95%
# of the drawn scores, from their 2.5% quantile to their 97.5%, is the 95%
# **percentile interval**.
#
# Two chunkers answer the *same* questions, and questions differ far more than
# chunkers do: a hard question is missed by both. So the bootstrap of a
# difference is **paired**: each draw takes the same questions for both
# methods and averages their per-question differences. Drawing each method's
# questions on its own adds the questions' spread twice, and makes the
# interval of a difference several times wider than it is.
#
# Reading one: an interval that leaves 0 out says this data shows which method
# scores higher, and by about how much. One that holds 0 says this data does
# *not show* a difference, which is not the same as showing there is none: more
# questions might. The tables mark those "not shown by this data".


# %%
RESAMPLES = 2000  # bootstrap draws: enough for two decimals, a fraction of a second


class Interval(NamedTuple):
    """A mean with its percentile bootstrap interval (paired_bootstrap)."""

    estimate: float  # the mean measured on the questions as they are
    low: float  # the interval's lower end
    high: float  # its upper end
    level: float  # its confidence level: 0.95 for a 95% interval


def paired_bootstrap(a, b, *, resamples=RESAMPLES, level=0.95, seed=0):
    """How much method b scores above method a on the same questions, with its bootstrap interval.

    `a[i]` and `b[i]` are the two methods' scores on question i (each question's
    recall, say). Returns Interval(estimate, low, high, level):

    - estimate: the mean of the differences b[i] - a[i] over all the questions,
      that is mean(b) - mean(a): positive when b scores higher.
    - low, high: the percentile interval. Draw `resamples` resamples; each is
      len(a) question indices drawn uniformly at random with replacement, and
      the SAME indices pick both methods' scores (paired: a question's two
      scores stay together). The mean of b[i] - a[i] over a resample's indices
      is that resample's difference. `low` is the (1 - level) / 2 quantile of
      the resamples' differences and `high` their (1 + level) / 2 quantile: the
      2.5% and 97.5% quantiles for level 0.95. Any usual definition of a sample
      quantile will do (numpy.quantile's, or the value at that rank of the
      sorted differences).
    - level: the level asked for.

    The draws come from a random generator seeded with `seed`, so the same a, b,
    resamples, level and seed give the same Interval every time; which
    generator, and the order of the draws, are yours to choose.

    Bad input is refused in one line: a score that is not a number (a bool or
    a str is not) or `resamples` that is not an int (nor a bool), TypeError; a
    and b of different lengths or empty, a score that is NaN or infinite,
    resamples below 1, or a level not strictly between 0 and 1, ValueError.
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
    # hint 3: After the checks: differences = np.array(b, dtype=float) - np.array(a, dtype=float);
    # hint 3: rng = np.random.default_rng(seed); picks = rng.integers(0, len(differences),
    # hint 3: size=(resamples, len(differences))); means = differences[picks].mean(axis=1);
    # hint 3: low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2]); return
    # hint 3: Interval(float(differences.mean()), float(low), float(high), level).
    for name, scores in (("a", a), ("b", b)):
        for number, score in enumerate(scores):
            if isinstance(score, bool) or not isinstance(score, numbers.Real):
                raise TypeError(f"scores must be numbers, got {score!r} at {name}[{number}]")
            if not math.isfinite(score):
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


def mean_interval(scores, **options):
    """One method's mean score with its interval: the same bootstrap, as the method's difference
    from one that scores 0 on every question (options as for paired_bootstrap)."""
    return paired_bootstrap([0.0] * len(scores), scores, **options)


def shows_a_difference(interval):
    """Whether this data shows which of two methods scores higher: the interval leaves 0 out."""
    return not interval.low <= 0 <= interval.high


def with_interval(interval):
    """'0.74 [0.66, 0.82]': a score and its interval, as the tables print them."""
    return f"{interval.estimate:.2f} [{interval.low:.2f}, {interval.high:.2f}]"


def signed(value):
    """'+0.09', with more digits where two would print a value that is not 0 as 0 ('+0.001')."""
    digits = 2
    while digits < 6 and value != 0 and round(value, digits) == 0:
        digits += 1
    return f"{value:+.{digits}f}"


def difference_text(interval):
    """'+0.09 [+0.04, +0.14]', or '-0.01 [-0.05, +0.03] not shown by this data' when it holds 0.

    The verdict is read from the unrounded ends, and an end near 0 is printed with the digits
    that show its sign: '[+0.001, +0.04]' leaves 0 out, where '[+0.00, +0.04]' would seem not to.
    """
    text = f"{signed(interval.estimate)} [{signed(interval.low)}, {signed(interval.high)}]"
    return text if shows_a_difference(interval) else f"{text} {NOT_SHOWN}"


# %% [markdown]
# ## 3. Check the ruler before measuring
#
# A metric with a bug makes every comparison after it wrong, so we test the
# metrics first, on cases whose answers we worked out by hand: answers cut
# in two, hits on the wrong page, two gold spans, hits that overlap each
# other, nothing retrieved. The bootstrap too, on differences whose
# bootstrap distribution can be worked out by hand: one where resampling the
# two methods apart, or a normal approximation, gives another interval; a
# level other than 0.95; the same call twice. If one disagrees, the lab stops
# there: the measurements would only measure the bug. At the end, two more
# checks on the real questions: a perfect retriever must score 1.0, and the
# same results in reverse order must score lower.

# %%
GOLD = [("faq", 100, 120)]
TWO_GOLD = [("faq", 100, 120), ("faq", 300, 340)]  # 20 + 40 characters
HITS = [("faq", 0, 50), ("faq", 90, 130), ("faq", 110, 200)]  # rank 2 holds the answer
OVERLAPPING = [("faq", 90, 130), ("faq", 110, 150)]  # together [90, 150): 60 characters, 20 answer

METRIC_CASES = [
    Case("a hit on the answer's second half only", recall_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.0)),
    Case("the right span on another page", recall_at_k, ([("install", 100, 120)], GOLD, 1),
         returns(0.0)),
    Case("the answer at rank 2", recall_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", recall_at_k, (HITS, GOLD, 2), returns(1.0)),
    Case("fewer hits than k", recall_at_k, (HITS, GOLD, 10), returns(1.0)),
    Case("two gold spans, one found", recall_at_k, ([("faq", 0, 130)], TWO_GOLD, 5), returns(0.5)),
    Case("two hits holding the same one of two spans", recall_at_k,
         ([("faq", 95, 125), ("faq", 100, 120)], TWO_GOLD, 2), returns(0.5)),
    Case("nothing retrieved", recall_at_k, ([], GOLD, 5), returns(0.0)),
    Case("the answer at rank 1", mrr_at_k, ([("faq", 100, 120)], GOLD, 1), returns(1.0)),
    Case("the answer at rank 2, past k", mrr_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", mrr_at_k, (HITS, GOLD, 3), returns(0.5)),
    Case("a hit on the answer's second half only", mrr_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.0)),
    Case("nothing retrieved", mrr_at_k, ([], GOLD, 5), returns(0.0)),
    Case("a hit on the answer's second half only", coverage_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.5)),
    Case("the answer at rank 2", coverage_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", coverage_at_k, (HITS, GOLD, 2), returns(1.0)),
    Case("two hits covering the answer together, overlapping", coverage_at_k,
         ([("faq", 100, 115), ("faq", 105, 120)], GOLD, 2), returns(1.0)),
    Case("two overlapping hits covering part of the answer: [100, 112) once", coverage_at_k,
         ([("faq", 95, 110), ("faq", 105, 112)], GOLD, 2), returns(12 / 20)),
    Case("two gold spans, a quarter of the first covered", coverage_at_k,
         ([("faq", 115, 130)], TWO_GOLD, 1), returns(5 / 60)),
    Case("nothing retrieved", coverage_at_k, ([], GOLD, 5), returns(0.0)),
    Case("a perfect hit", precision_and_iou, (GOLD, GOLD, 1), returns((1.0, 1.0))),
    Case("90 characters at ranks 1 and 2, 20 of them the answer", precision_and_iou,
         (HITS, GOLD, 2), returns((20 / 90, 20 / 90))),
    Case("two hits overlapping each other", precision_and_iou, (OVERLAPPING, GOLD, 2),
         returns((20 / 60, 20 / 60))),
    Case("a hit on half the answer and as much beside it: [110, 120) of [100, 130)", precision_and_iou,
         ([("faq", 110, 130)], GOLD, 1), returns((10 / 20, 10 / 30))),
    Case("nothing retrieved", precision_and_iou, ([], GOLD, 5), returns((0.0, 0.0))),
]


# The bootstrap's cases, with their bootstrap distributions worked out by hand. In ONE_BETTER,
# b finds one question of 20 that a misses: a resample's difference is K / 20, K the times that
# question is drawn (binomial, 20 draws of chance 1/20). K = 0 in 36% of resamples, so the 2.5%
# quantile is 0; K <= 2 in 92.5%, K <= 3 in 98.4%, so the 97.5% quantile is 3 / 20.
# In TWO_BETTER, b finds two questions more than a, of 20 where both find 10: K counts the
# draws of those two (chance 1/10); K <= 0 in 12%, K <= 1 in 39%, <= 3 in 87%, <= 4 in 96%,
# <= 5 in 99%.
ONE_BETTER = ([0.0] * 20, [1.0] + [0.0] * 19)
TWO_BETTER = ([1.0, 0.0] * 10, [1.0] * 4 + [1.0, 0.0] * 8)
SCATTERED = ([0.1, 0.7, 0.3, 0.9, 0.2, 0.4], [0.3, 0.6, 0.8, 0.9, 0.5, 0.1])


def interval_within(estimate, low, high, why):
    """A judge for paired_bootstrap: its estimate, and low and high each a value or a
    (least, most) range; `why` says what a wrong end means."""
    def judge(result, *args, **keywords):
        ends = {"estimate": estimate, "low": low, "high": high}
        for name, wanted in ends.items():
            least, most = wanted if isinstance(wanted, tuple) else (wanted, wanted)
            got = getattr(result, name)
            if not least - 1e-9 <= got <= most + 1e-9:
                wanted_text = f"{least:g}" if least == most else f"between {least:g} and {most:g}"
                raise ValueError(f"returned {name} {got!r}, expected {wanted_text}: {why}")
    return judge


def same_again(result, *args, **keywords):
    """A judge: the same call again gives the same Interval (the seed fixes the draws)."""
    again = paired_bootstrap(*args, **keywords)
    if again != result:
        raise ValueError(f"returned {result}, then {again} for the same call: seed the generator")


BOOTSTRAP_CASES = [
    Case("two methods alike on every question", paired_bootstrap, ([0.5, 1.0, 0.0], [0.5, 1.0, 0.0]),
         returns((0.0, 0.0, 0.0, 0.95))),
    Case("b finds every question, a none", paired_bootstrap, ([0.0] * 3, [1.0] * 3),
         interval_within(1.0, 1.0, 1.0, "the difference is b - a, b's gain over a")),
    Case("b finds one question more, of 20", paired_bootstrap, ONE_BETTER,
         interval_within(0.05, 0.0, (0.1, 0.2), "no resample is below 0 and 3 / 20 is the 97.5% "
                         "quantile (a normal approximation, mean - 1.96 sd, gives a low of -0.05)")),
    Case("b finds two more, of 20 that both find 10 of", paired_bootstrap, TWO_BETTER,
         interval_within(0.1, 0.0, (0.2, 0.3), "b is never below a, so no paired resample is below 0 "
                         "(each method resampled on its own gives a low near -0.2)")),
    Case("the same, at level 0.5", paired_bootstrap, TWO_BETTER,
         interval_within(0.1, 0.05, 0.15, "the 25% and 75% quantiles are 1 / 20 and 3 / 20"),
         dict(level=0.5)),
    Case("the same call twice", paired_bootstrap, SCATTERED, same_again, dict(seed=7)),
    Case("scores of different lengths", paired_bootstrap, ([1.0, 0.0], [1.0]), None, raises=ValueError),
    Case("no questions", paired_bootstrap, ([], []), None, raises=ValueError),
    Case("a level of 95", paired_bootstrap, SCATTERED, None, dict(level=95), raises=ValueError),
    Case("no resamples", paired_bootstrap, SCATTERED, None, dict(resamples=0), raises=ValueError),
    Case("a score that is a str", paired_bootstrap, ([1.0, "0.5"], [1.0, 0.0]), None, raises=TypeError),
    Case("a score that is a bool", paired_bootstrap, ([1.0, True], [1.0, 0.0]), None, raises=TypeError),
]


# %% [markdown]
# ## 4. The strategies
#
# Eight ways to chunk, all at the same token budget where they have one:
# the whole page; paragraphs with the page title prepended (a common recipe);
# rag4's word and token windows; rag5's recursive splitter; rag6's
# Markdown-aware chunker; rag7's Markdown chunks with headers, and the same
# with rag7's option of a chunk per table row. Overlap is an eighth of the
# budget. Word windows are sized in words, not tokens, so no token budget
# holds them: they get 3/4 of the budget in words, which would be the budget
# if a word were 1.33 tokens, as in plain English. Docs with code,
# identifiers and tables have more tokens a word; the table's `tokens` column,
# and the line under it, say how many their chunks hold.
#
# Each strategy is scored twice: with the course's semantic embedder, and
# with `hash`, a hashed bag of words. `hash` is a lexical baseline: it
# matches the words a question shares with a chunk, not their meanings, so
# the gap between its rows and the semantic ones is what meaning adds.
#
# The last one, **header + table rows**, is the course's recommended chunker,
# so the tables of scores list it first: judged at equal reading cost (within
# 1,000 retrieved tokens) it finds the most. (The plot of chunk sizes, which
# costs a run per size, draws three of the simpler ones.) "markdown + header", the same chunks with
# each table kept whole, stays in as the comparison that shows why.

# %%
TITLE = "Orbit docs"
CHUNK_TOKENS = 256
PLOT_SIZES = (128, 256, 512)
K = 5
TOKEN_BUDGET = 1000
# Embedding cost at OpenAI's list price for text-embedding-3-small (USD 0.02 per
# million tokens), the price a reader would pay to index with a hosted model.
PRICE_PER_MILLION_TOKENS = 0.02
# The semantic embedder beside "hash": the course's choice (wordllama, offline, unless
# ACADEMY_EMBEDDER names another: minilm, or openai for a real model behind the OpenAI
# embeddings API; academy_llm.py's "Embeddings" part lists them); ACADEMY_EMBEDDER=hash
# keeps wordllama.
SEMANTIC = "wordllama" if embedder_name() == "hash" else embedder_name()
EMBEDDERS = (SEMANTIC, "hash")


def paragraphs_with_title(text, size):
    """One chunk per blank-line paragraph, embedded with the page's title before it."""
    title = rag6.front_matter(text)[0].get("title", "")
    cuts = [m.end() for m in rag5.SEAMS[0][1].finditer(text)]
    spans = zip([0] + cuts, cuts + [len(text)])
    return [make_chunk(text, start, end, header=title) for start, end in spans if start < end]


def recommended_chunks(text, size, title=TITLE):
    """The course's recommended chunker: rag7's chunks with their header, a chunk per table row, overlap an eighth."""
    return rag7.with_table_rows(text, rag7.header_chunks(text, title, size, size // 8), size)


RECOMMENDED = "header + table rows"
STRATEGIES = {
    RECOMMENDED: recommended_chunks,
    "whole page": lambda text, size: [make_chunk(text, 0, len(text))],
    "paragraphs + title": paragraphs_with_title,
    "word windows": lambda text, size: rag4.word_windows(text, size * 3 // 4, size * 3 // 32),
    "token windows": lambda text, size: rag4.token_windows(text, size, size // 8),
    "recursive": lambda text, size: rag5.recursive_chunks(text, size, size // 8),
    "markdown": lambda text, size: rag6.markdown_chunks(text, size, size // 8),
    "markdown + header": lambda text, size: rag7.header_chunks(text, TITLE, size, size // 8),
}
PLOTTED = ("token windows", "recursive", "markdown + header")  # the plot's sizes cost a run each


# %% [markdown]
# ## 5. Evaluate
#
# Every page is chunked; all chunks of all pages go into one index (as in a
# real product: the retriever does not know which page to look in). Each
# question of the test split retrieves its top k chunks; the metrics are
# averaged per kind of question.

# %%
def chunk_corpus(strategy, size):
    """[(doc_id, Chunk)] for the whole corpus."""
    return [(doc_id, chunk) for doc_id, text in corpus_pages().items() for chunk in STRATEGIES[strategy](text, size)]


def embed_once(texts, embedder):
    """embed(), each distinct text once per run: strategies share chunks, and every table ranks the same questions."""
    missing = list(dict.fromkeys(text for text in texts if (embedder, text) not in EMBEDDED))
    EMBEDDED.update(zip(((embedder, text) for text in missing), embed(missing, embedder)))
    return [EMBEDDED[embedder, text] for text in texts]


EMBEDDED = {}


def rankings(chunks, questions, embedder, depth=50):
    """For each question, its best `depth` chunks as (doc_id, start, end) hits, best first."""
    vectors = embed_once([chunk.embedding_text for _, chunk in chunks], embedder)
    question_vectors = embed_once([q["question"] for q in questions], embedder)
    return [[(row, chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in ranked]
            for ranked in top_k_each(question_vectors, vectors, depth)]


def evaluate(chunks, questions, embedder, k=K):
    """{kind: {metric: mean}} (and "all") for one chunked corpus and one embedder."""
    return score_hits(questions, found_hits(chunks, questions, embedder), k)


def found_hits(chunks, questions, embedder):
    """Each question's (hits best first, those of them within TOKEN_BUDGET)."""
    found = []
    for ranked in rankings(chunks, questions, embedder):
        hits = [hit for _, *hit in ranked]
        found.append((hits, within_budget(hits, [chunks[row][1].n_tokens for row, *_ in ranked], TOKEN_BUDGET)))
    return found


def score_hits(questions, found, k=K):
    """{kind: {metric: mean}} (and "all") of each question's (hits best first, those within TOKEN_BUDGET)."""
    return mean_scores(questions, question_scores(questions, found, k))


def question_scores(questions, found, k=K):
    """[{metric: score}], a row per question: what the means average, and what the bootstrap resamples."""
    rows = []
    for question, (hits, affordable) in zip(questions, found):
        gold = gold_spans(question)
        precision, iou = precision_and_iou(hits, gold, k)
        rows.append({"recall@1": recall_at_k(hits, gold, 1), f"recall@{k}": recall_at_k(hits, gold, k),
                     f"MRR@{k}": mrr_at_k(hits, gold, k), f"coverage@{k}": coverage_at_k(hits, gold, k),
                     "precision": precision, "IoU": iou,
                     "recall@1k tokens": recall_at_k(affordable, gold, len(affordable)) if affordable else 0.0})
    return rows


def mean_scores(questions, rows):
    """{kind: {metric: mean}} (and "all") of the questions' rows of scores."""
    scores = {}
    for question, row in zip(questions, rows):
        for kind in (question["kind"], "all"):
            scores.setdefault(kind, []).append(row)
    return {kind: {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]} for kind, rows in scores.items()}


def per_question(rows, metric, questions=None, kind="all"):
    """One metric's scores, a question each, of the questions of `kind` (every one for "all")."""
    return [row[metric] for number, row in enumerate(rows)
            if kind == "all" or questions[number]["kind"] == kind]


def corpus_cost(chunks):
    """(number of chunks, mean tokens embedded per chunk, USD to embed them all)."""
    tokens = [count_tokens(chunk.embedding_text) if chunk.header else chunk.n_tokens for _, chunk in chunks]
    return len(tokens), sum(tokens) / len(tokens), sum(tokens) * PRICE_PER_MILLION_TOKENS / 1e6


def step_overall(questions):
    """The main table: every strategy with both embedders, over all test questions."""
    print(f"\n2. {len(questions)} test questions, top {K} of all chunks of all pages, "
          f"chunks of {CHUNK_TOKENS} tokens")
    print(f"   {'strategy':<19} {'embedder':<9} {'R@1':>5} {'R@5':>5} {'cov@5':>5} {'MRR@5':>6} {'R@1kt':>6} "
          f"{'prec':>6} {'IoU':>6} {'chunks':>6} {'tokens':>6} {'cost $':>7}")
    results, chunked, rows = {}, {}, {}
    for strategy in STRATEGIES:
        chunks = chunked[strategy] = chunk_corpus(strategy, CHUNK_TOKENS)
        count, mean_tokens, cost = corpus_cost(chunks)
        for embedder in EMBEDDERS:
            rows[strategy, embedder] = question_scores(questions, found_hits(chunks, questions, embedder))
            result = results[strategy, embedder] = mean_scores(questions, rows[strategy, embedder])
            a = result["all"]
            print(f"   {strategy:<19} {embedder:<9} {a['recall@1']:>5.2f} {a['recall@5']:>5.2f} "
                  f"{a['coverage@5']:>5.2f} {a['MRR@5']:>6.2f} {a['recall@1k tokens']:>6.2f} {a['precision']:>6.3f} "
                  f"{a['IoU']:>6.3f} {count:>6} {mean_tokens:>6.0f} {cost:>7.4f}")
    print(f"   cov@5: share of answer characters in the top {K}; R@1kt: recall within {TOKEN_BUDGET} "
          f"retrieved tokens;\n   prec and IoU over the top {K};"
          f" cost at USD {PRICE_PER_MILLION_TOKENS} per million tokens")
    print("   hash: a hashed bag of words, the lexical baseline: it matches the words a question shares\n"
          f"   with a chunk, not their meanings; the gap to {SEMANTIC}'s rows is what meaning adds")
    say_word_windows(chunked["word windows"])
    return results, chunked, rows


def say_word_windows(chunks):
    """What word windows hold in tokens, read from their chunks: words do not keep a token budget."""
    tokens = [chunk.n_tokens for _, chunk in chunks]
    over = sum(count > CHUNK_TOKENS for count in tokens)
    words = sum(len(chunk.text.split()) for _, chunk in chunks)
    print(f"   word windows: {CHUNK_TOKENS * 3 // 4} words a window, {sum(tokens) / len(tokens):.0f} tokens a chunk "
          f"on average,\n   {over} of {len(tokens)} chunks over the {CHUNK_TOKENS}-token budget: a word of these "
          f"docs is {sum(tokens) / words:.2f} tokens,\n   so a budget in words is not one in tokens")


KINDS = ("prose", "identifier", "table", "code", "multi_section", "all")


def step_by_kind(step, results, metric, embedder=SEMANTIC):
    """Step `step`: one metric per kind of question, a row per strategy."""
    print(f"\n{step}. {metric} by kind of question ({embedder})")
    print(f"   {'strategy':<19} " + " ".join(f"{kind[:10]:>10}" for kind in KINDS))
    for strategy in STRATEGIES:
        row = results[strategy, embedder]
        print(f"   {strategy:<19} " + " ".join(f"{row[kind][metric]:>10.2f}" for kind in KINDS))


def leaders(results, metric, kind, embedder=SEMANTIC):
    """The two strategies that score highest on `metric` for `kind`, best first; ties go to the
    higher IoU (less text to read)."""
    ranked = sorted(STRATEGIES, key=lambda s: (results[s, embedder][kind][metric], results[s, embedder][kind]["IoU"]),
                    reverse=True)
    return ranked[0], ranked[1]


BUDGET = "recall@1k tokens"  # the fair comparison: recall at equal reading cost


def step_intervals(step, questions, rows, metric=BUDGET, embedder=SEMANTIC):
    """Step `step`: each strategy's score with its interval, and its difference from the recommended one."""
    print(f"\n{step}. {metric} with its 95% interval ({embedder}), and each strategy's difference from "
          f"{RECOMMENDED}")
    print(f"   {'strategy':<19} {'recall [95%]':<18} difference [95%]: strategy − {RECOMMENDED}")
    baseline = per_question(rows[RECOMMENDED, embedder], metric)
    for strategy in STRATEGIES:
        scores = per_question(rows[strategy, embedder], metric)
        against = ("(the baseline)" if strategy == RECOMMENDED
                   else difference_text(paired_bootstrap(baseline, scores)))
        print(f"   {strategy:<19} {with_interval(mean_interval(scores)):<18} {against}")
    print(f"   {len(questions)} questions: one question found or missed moves recall by {1 / len(questions):.3f}.\n"
          f"   A difference below 0 finds less than {RECOMMENDED}.\n"
          f"   A difference whose interval holds 0 is {NOT_SHOWN}: more questions might show one.")


def step_winners(step, questions, results, rows, embedder=SEMANTIC):
    """Step `step`: for each kind, the best strategy, named only where this data shows it ahead of the next."""
    print(f"\n{step}. What the numbers say ({embedder}): for each kind of question, the best strategy, named only\n"
          f"   where the paired 95% interval of its lead over the next (best − next) leaves 0 out")
    print(f"   {'kind':<14} {'in the top 5':<28} within 1,000 tokens, and the lead it is named by")
    for kind in KINDS:
        cells = []
        for metric in ("recall@5", BUDGET):
            best, second = leaders(results, metric, kind, embedder)
            lead = paired_bootstrap(*(per_question(rows[s, embedder], metric, questions, kind) for s in (second, best)))
            cells.append(f"{best} ({results[best, embedder][kind][metric]:.2f})" if shows_a_difference(lead)
                         else "no best shown")
        print(f"   {kind:<14} {cells[0]:<28} {cells[1]}\n"
              f"   {'':<14} {'':<28} {best} − {second}: {difference_text(lead)}")


def step_plot(questions, results):
    """Recall against chunk size, two ways, for three sized strategies (SEMANTIC): inline or a PNG."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4), layout="constrained")
    by_rank, by_budget = figure.subplots(1, 2, sharey=True)
    for strategy in PLOTTED:
        scores = [results[strategy, SEMANTIC]["all"] if size == CHUNK_TOKENS
                  else evaluate(chunk_corpus(strategy, size), questions, SEMANTIC)["all"] for size in PLOT_SIZES]
        by_rank.plot(PLOT_SIZES, [score[f"recall@{K}"] for score in scores], marker="o", label=strategy)
        by_budget.plot(PLOT_SIZES, [score["recall@1k tokens"] for score in scores], marker="o", label=strategy)
    for axes, title in ((by_rank, f"recall@{K}: flatters big chunks"),
                        (by_budget, f"recall within {TOKEN_BUDGET:,} tokens: equal reading")):
        axes.set_xscale("log", base=2)
        axes.set_xticks(PLOT_SIZES, [str(size) for size in PLOT_SIZES])
        axes.set_xlabel("chunk size (tokens)")
        axes.set_title(title)
        axes.grid(alpha=0.3)
    by_rank.set_ylabel(f"recall (test questions, {SEMANTIC})")
    by_rank.legend()
    print(f"\n5. Recall against chunk size: in the top {K}, and within {TOKEN_BUDGET:,} tokens")
    show_figure(figure, "rag8-recall-vs-chunk-size.png")


def announce_embedder(questions):
    """With real embeddings, the model and what the run will cost, before anything is sent."""
    from labkit.openai_embedder import settings

    sized = [(strategy, CHUNK_TOKENS) for strategy in STRATEGIES]
    sized += [(strategy, size) for strategy in PLOTTED for size in PLOT_SIZES if size != CHUNK_TOKENS]
    texts = [chunk.embedding_text for strategy, size in sized for _, chunk in chunk_corpus(strategy, size)]
    texts = list(dict.fromkeys(texts + [q["question"] for q in questions]))
    cost, limit = embed_cost(texts), settings().max_cost
    print(f"Embedder: openai, {settings().describe()}; {len(texts):,} texts, of which those not cached "
          f"yet cost about USD {cost:.4f}\n")
    if cost > limit:
        raise SystemExit(f"that is over ACADEMY_MAX_COST=${limit:g}; nothing was sent. To run it, raise the "
                         f"limit (ACADEMY_MAX_COST={2 * cost:.2f}) or use a local server (OPENAI_BASE_URL)")


def main():
    if SEMANTIC == "openai":
        announce_embedder(corpus_questions("test"))
    print("1. The metrics and the bootstrap, checked on cases worked out by hand")
    checks = Invariants("rag8")
    if not checks.check_cases("the metrics agree with values worked out by hand", METRIC_CASES):
        print("   A wrong metric makes every number after it wrong: fix it, then measure.")
        return checks.verdict()
    if not checks.check_cases("the bootstrap agrees with intervals worked out by hand", BOOTSTRAP_CASES):
        print("   A wrong interval makes every comparison after it wrong: fix it, then measure.")
        return checks.verdict()

    questions = corpus_questions("test")
    started = time.perf_counter()
    results, chunked, rows = step_overall(questions)
    step_by_kind(3, results, "recall@5")
    step_by_kind(4, results, "recall@1k tokens")
    step_plot(questions, results)

    step_intervals(6, questions, rows)
    step_winners(7, questions, results, rows)
    print(f"   (evaluation took {time.perf_counter() - started:.1f} s)")
    recommended, whole = rows[RECOMMENDED, SEMANTIC], rows["markdown + header", SEMANTIC]
    tables = [per_question(r, BUDGET, questions, "table") for r in (whole, recommended)]
    print(f"   Recommended: {RECOMMENDED}, {with_interval(mean_interval(per_question(recommended, BUDGET)))} of "
          f"all answers within {TOKEN_BUDGET:,} tokens;\n   on tables {with_interval(mean_interval(tables[1]))}, "
          f"where the same chunks with tables whole find {with_interval(mean_interval(tables[0]))}:\n"
          f"   {RECOMMENDED} − markdown + header: {difference_text(paired_bootstrap(*tables))}")

    print("\nInvariants")
    perfect = [gold_spans(q) for q in questions]
    checks.check(
        "a perfect retriever scores 1.0",
        all(recall_at_k(g, g, K) == mrr_at_k(g, g, K) == precision_and_iou(g, g, K)[1] == 1.0 for g in perfect),
    )
    reversed_mrr = reversed_ranking_mrr(questions, chunked["markdown + header"])
    checks.check("a reversed ranking scores lower", reversed_mrr[1] < reversed_mrr[0],
                 f"MRR@{K} {reversed_mrr[0]:.3f} best first, {reversed_mrr[1]:.3f} reversed")
    whole, headed = results["whole page", SEMANTIC]["all"], results["markdown + header", SEMANTIC]["all"]
    checks.check(
        "whole pages retrieve more text than they answer",
        whole["IoU"] < headed["IoU"],
        f"IoU {whole['IoU']:.3f} for whole pages, {headed['IoU']:.3f} for markdown + header",
    )
    # Last, the public grading tests (tests/grading/test_rag8.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


def reversed_ranking_mrr(questions, chunks):
    """MRR@K of markdown + header chunks, ranked best first and then in reverse order."""
    totals = [0.0, 0.0]
    for question, ranked in zip(questions, rankings(chunks, questions, SEMANTIC, len(chunks))):
        hits = [hit for _, *hit in ranked]
        totals[0] += mrr_at_k(hits, gold_spans(question), K)
        totals[1] += mrr_at_k(hits[::-1], gold_spans(question), K)
    return totals[0] / len(questions), totals[1] / len(questions)


# %%
if __name__ == "__main__":
    run_lab(main)
