"""The grader's own answers: what the hidden tests compare a lab against, computed from the lab's
definitions. Each one would answer a TODO if a student called or copied it (rag8's exact bootstrap,
rag7's header, rag9's breakpoints, rag11's terms, weights, index and fusions), so this file never leaves the grader:
tools/grading/make_handout.py refuses a handout that holds it, no public grading test imports it, and
no worker reads it. The public tests judge the same functions by values written out by hand, or by
bands this file computed once (tests/grading/test_rag8.py says how to make them again).
"""

import bisect
import math
import re
from collections import Counter, defaultdict
from fractions import Fraction
from typing import NamedTuple

import numpy as np
from grading_checks import interval_fields, short, table_lines, table_spans

from academy_llm import count_tokens, embed, make_chunk

# ---- rag8's paired bootstrap, judged by the bootstrap distribution itself -----------

# An endpoint drawn from `resamples` resamples sits at a quantile of the true bootstrap
# distribution that strays from the one asked for by about sqrt(q (1 - q) / resamples): a
# band of BAND_ERRORS such errors each side passes every correct implementation, whatever its
# generator, seed or quantile rule, but for once in millions of calls.
BAND_ERRORS = 5


class Distribution(NamedTuple):
    """A distribution of resample means: its values, sorted, and P(mean <= value) for each."""

    values: list
    cumulative: list


def exact_bootstrap(differences) -> Distribution:
    """The exact bootstrap distribution of the mean of `differences`: every resample of n draws
    with replacement from the n of them, counted by how many of the n ** n index sequences give
    it (the multinomial count of each distinct value), in exact fractions. Small n only: it
    enumerates the counts of the distinct values."""
    n = len(differences)
    tally = Counter(Fraction(value) for value in differences)
    values, weights = list(tally), list(tally.values())
    ways = defaultdict(int)  # a mean -> the index sequences giving it

    def spread(j: int, left: int, total: Fraction, count: int) -> None:
        if j == len(values) - 1:  # the last value takes the draws left
            ways[(total + left * values[j]) / n] += count * weights[j] ** left
            return
        for drawn in range(left + 1):
            spread(j + 1, left - drawn, total + drawn * values[j],
                   count * math.comb(left, drawn) * weights[j] ** drawn)

    spread(0, n, Fraction(0), 1)
    means, running, cumulative = sorted(ways), 0, []
    for mean in means:
        running += ways[mean]
        cumulative.append(Fraction(running, n ** n))
    return Distribution(means, cumulative)


def sampled_distribution(means) -> Distribution:
    """The distribution of a reference's own resample means (scipy's), each of equal weight."""
    values = sorted(float(mean) for mean in means)
    return Distribution(values, [(number + 1) / len(values) for number in range(len(values))])


def quantile(distribution: Distribution, p) -> float:
    """The least value whose cumulative probability reaches p (the first value for p <= 0)."""
    position = bisect.bisect_left(distribution.cumulative, p) if p > 0 else 0
    return distribution.values[min(position, len(distribution.values) - 1)]


def quantile_band(distribution: Distribution, q: float, resamples: int, reference_resamples: int = 0) -> tuple:
    """(least, most) a percentile endpoint drawn from `resamples` resamples may be: the
    distribution's quantiles BAND_ERRORS Monte Carlo errors either side of q (the reference's
    own error added when it is sampled too), and two ranks more for the rules of sample quantiles."""
    variance = q * (1 - q) * (1 / resamples + (1 / reference_resamples if reference_resamples else 0))
    spread = BAND_ERRORS * math.sqrt(variance) + 2 / resamples
    return float(quantile(distribution, q - spread)), float(quantile(distribution, q + spread))


def expect_bootstrap(result, a, b, level: float, resamples: int, distribution=None,
                     reference_resamples: int = 0) -> None:
    """paired_bootstrap(a, b, resamples=resamples, level=level)'s Interval, judged as its docstring
    says: the estimate is mean(b - a); low and high lie at the (1 - level) / 2 and (1 + level) / 2
    quantiles of the paired bootstrap distribution of that mean (exact, unless `distribution` is
    a reference's own sample of `reference_resamples`), within quantile_band."""
    estimate, low, high, got_level = interval_fields(result)
    differences = [Fraction(y) - Fraction(x) for x, y in zip(a, b)]
    expected = float(sum(differences) / len(differences))
    assert math.isclose(estimate, expected, abs_tol=1e-9), (
        f"returned estimate {estimate!r}, expected the mean of b - a, {expected!r}")
    assert got_level == level, f"returned level {got_level!r}, expected the level asked for, {level!r}"
    distribution = distribution or exact_bootstrap(differences)
    for name, got, q in (("low", low, (1 - level) / 2), ("high", high, (1 + level) / 2)):
        least, most = quantile_band(distribution, q, resamples, reference_resamples)
        assert least - 1e-9 <= got <= most + 1e-9, (
            f"returned {name} {got:.4f}; at level {level:g} the {100 * q:g}% quantile of the paired bootstrap "
            f"distribution, with {resamples} resamples, lies in [{least:.4f}, {most:.4f}]")


def bands(a, b, level: float, resamples: int) -> tuple:
    """(low, high): the grading_checks.Band each end of paired_bootstrap(a, b) may lie in, from the
    exact distribution: what a public test holds as data, so it needs no oracle."""
    from grading_checks import Band

    distribution = exact_bootstrap([Fraction(y) - Fraction(x) for x, y in zip(a, b)])
    return tuple(Band(*quantile_band(distribution, q, resamples)) for q in ((1 - level) / 2, (1 + level) / 2))


# ---- rag7's header ---------------------------------------------------------------


def full_header(title: str, section, metadata: dict) -> str:
    """rag7's header as its docstring states it: title › headings (key value; ...), empty parts left out."""
    path = " › ".join(part for part in (title, *section) if part)
    fields = "; ".join(f"{key.replace('_', ' ')} {value}" for key, value in metadata.items() if value)
    return f"{path} ({fields})" if fields else path



# ---- rag7's chunk per table row -------------------------------------------------------


def table_rows(text: str, chunks, max_tokens: int) -> list:
    """What rag7's with_table_rows gives for `chunks` that do not overlap, the tables read by a real
    Markdown parser: a chunk holding one table of two rows or more becomes a chunk per row, the
    first from the chunk's start, the last to its end, each row but the first headed by the chunk's
    header and the table's header row, stripped; unless one of them is then over max_tokens. Any
    other chunk stays as it is."""
    tables, result = table_spans(text), []
    for chunk in chunks:
        held = [span for span in tables if chunk.start <= span[0] and span[1] <= chunk.end]
        lines = table_lines(text, *held[0]) if len(held) == 1 else []
        if len(lines) < 4:
            result.append(chunk)
            continue
        row_header = "\n".join(part for part in (chunk.header, text[slice(*lines[0])].strip()) if part)
        bounds = [chunk.start, *(end for _, end in lines[2:-1]), chunk.end]
        pieces = [make_chunk(text, start, end, section=chunk.section, header=row_header if number else chunk.header)
                  for number, (start, end) in enumerate(zip(bounds, bounds[1:]))]
        fits = all(count_tokens(piece.embedding_text) <= max_tokens for piece in pieces)
        result += pieces if fits else [chunk]
    return result

# ---- rag9's cuts, computed here from the method's definition ---------------------


def sentence_spans_of(text: str) -> list:
    """The sentences of a text whose only periods end them: each up to its period, the space
    after it starting the next, as rag9 splits them."""
    ends = [match.end() for match in re.finditer(r"\.", text)][:-1]
    return list(zip([0, *ends], [*ends, len(text)]))


def breakpoint_starts(text: str, window: int = 1, percentile: float = 90, sure: bool = True) -> list:
    """Where rag9's "breakpoints" method cuts `text` (sentence_spans_of), with the hash embedder:
    each sentence embedded with `window` neighbours a side, cut before a sentence whose distance
    (1 - cosine) from the one before is above the `percentile` of all. A distance within rounding of
    the percentile (equal distances, summed in another order) may fall either side in correct code,
    so it is no cut the grader asks for (sure) and one it allows (sure=False: every cut correct
    code may make). "Within rounding" is 1e-5: the hash embedder's vectors are float32, and a cosine
    summed in float64 differs from one summed in float32 by some 1e-7."""
    spans = sentence_spans_of(text)
    last = len(spans) - 1
    windows = [text[spans[max(i - window, 0)][0]:spans[min(i + window, last)][1]] for i in range(len(spans))]
    vectors = embed(windows, "hash")
    distances = [1.0 - float(vectors[i] @ vectors[i + 1]) for i in range(last)]
    threshold = np.percentile(distances, percentile)
    margin = 1e-5 if sure else -1e-5
    return [spans[i + 1][0] for i, distance in enumerate(distances) if distance > threshold + margin]


# ---- rag11's terms, BM25 and fusion, as the lab's docstrings state them -----------


def lucene(tf, df, n, length, mean, k1=1.2, b=0.75):
    """Lucene's BM25 weight, as the lab's docstring states it."""
    return math.log(1 + (n - df + 0.5) / (df + 0.5)) * tf / (tf + k1 * (1 - b + b * length / mean))


def terms_by_scanning(text):
    """search_terms as its docstring says it, one character at a time."""
    terms, i = [], 0
    while i < len(text):
        if not text[i].isalnum():
            i += 1
            continue
        parts, start, end = [], i, i
        while True:
            stop = end
            while stop < len(text) and text[stop].isalnum():
                stop += 1
            parts.append(text[end:stop])
            joiners = stop
            while joiners < len(text) and text[joiners] in "._-":
                joiners += 1
            if joiners == stop or joiners == len(text) or not text[joiners].isalnum():
                end = stop
                break
            end = joiners
        if len(parts) > 1:
            terms.append(text[start:end].lower())
        terms += [part.lower() for part in parts]
        i = end
    return terms


def lab_weights(rag11, corpus, k1, b):
    """{(term, row): the lab's bm25_weight}, with the counts made here."""
    df = Counter(term for document in corpus for term in set(document))
    mean = sum(map(len, corpus)) / len(corpus)
    return {(term, row): rag11.bm25_weight(tf, df[term], len(corpus), len(document), mean, k1, b)
            for row, document in enumerate(corpus) for term, tf in Counter(document).items()}


def expected_postings(rag11, corpus, k1=1.2, b=0.75):
    """The index as the docstring says, each weight the lab's own bm25_weight of the counts made here."""
    df = Counter(term for document in corpus for term in set(document))
    mean = sum(map(len, corpus)) / len(corpus) if corpus else 0
    result = {}
    for row, document in enumerate(corpus):
        for term, tf in Counter(document).items():
            weight = rag11.bm25_weight(tf, df[term], len(corpus), len(document), mean, k1, b)
            result.setdefault(term, []).append((row, weight))
    return result


def fused_scores(rankings, k):
    """{item: its RRF score}, exact (fractions), in the order the items are first met."""
    scores = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0) + Fraction(1, k + rank)
    return scores


def check_fused(fused, rankings, k):
    """Each item once, scores never rising, exact ties in the order first met: the sums compared
    exactly, as the lab's docstring says, so no tie is left to rounding."""
    scores = fused_scores(rankings, k)
    assert sorted(map(repr, fused)) == sorted(map(repr, scores)), (
        f"returned {short(fused)}, not each item of the rankings once")
    met = {item: number for number, item in enumerate(scores)}
    for before, after in zip(fused, fused[1:]):
        assert scores[before] >= scores[after], (
            f"{before!r} ({float(scores[before]):.6f}) comes before {after!r} ({float(scores[after]):.6f})")
        if scores[before] == scores[after]:
            assert met[before] < met[after], f"{before!r} and {after!r} tie; {after!r} was met first"


def scaled(scores):
    low, high = min(scores), max(scores)
    return [(score - low) / (high - low) if high > low else 0.0 for score in scores]


# ---- rag10's small to big and rag11's reading, as their docstrings state them ---------


def read_within(pages, pairs, budget_tokens, span_tokens):
    """[(doc_id, start, end)]: for each ((doc_id, start, end) parent, (start, end) unit), best first, the
    parent whole while it fits in what is left and in span_tokens, else the course's window around its
    unit (None: nothing for it); the walk ends once nothing is left."""
    from academy_llm import count_tokens
    from labkit.lessons.rag10 import window_around

    spans, left = [], budget_tokens
    for (doc_id, start, end), unit in pairs:
        if left <= 0:
            break
        room, text = min(left, span_tokens), pages[doc_id]
        span, held = (start, end), count_tokens(text[start:end])
        if held > room:
            span = window_around(text, (start, end), tuple(unit), room)
            if span is None:
                continue
            held = count_tokens(text[span[0] : span[1]])
        spans.append((doc_id, *span))
        left -= held
    return spans


def first_of_each_parent(rows, parent_of, units, parents):
    """[(parent span, unit span)]: each parent once, at its first row in `rows`, rows without a parent skipped."""
    seen, pairs = set(), []
    for row in rows:
        parent = parent_of[row]
        if parent is not None and parent not in seen:
            seen.add(parent)
            pairs.append((tuple(parents[parent]), tuple(units[row][1:])))
    return pairs


def small_to_big_spans(pages, scores, units, parent_of, parents, budget_tokens, span_tokens, depth):
    """The spans small_to_big must hand over: the `depth` best-scored units (a tie to the lower row), each
    parent once at its best unit, read best first within the budget."""
    order = sorted(range(len(scores)), key=lambda row: (-float(scores[row]), row))[:depth]
    return read_within(pages, first_of_each_parent(order, parent_of, units, parents), budget_tokens, span_tokens)


def read_parents_spans(pages, ranked, units, parent_of, parents, budget_tokens, span_tokens=192):
    """The spans rag11's read_parents must hand over for `ranked` units (span_tokens: PARENT_TOKENS)."""
    return read_within(pages, first_of_each_parent(ranked, parent_of, units, parents), budget_tokens, span_tokens)
