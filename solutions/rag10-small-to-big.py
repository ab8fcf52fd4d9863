# %% [markdown]
# # rag10: Retrieve small, read big
#
# rag7 and rag8 left a trade: small chunks (a table row) are matched well, big
# ones (a section) read well, the answer with what explains it. So separate
# the two. **Match** small units (a row, a sentence, an item, a piece of code,
# each embedded with its header and context); **read** big ones: each unit's
# *parent*, the rag7 chunk it lies in, best first, each once, until a budget of
# tokens is spent, or the window of a parent too big around the unit matched.
# What is handed over is exact slices, `(doc_id, start, end)`, as rag8 scores.
#
# You write all of it: `parent_index` (which parent holds each unit),
# `best_parents` (each parent once, in rank order), `assemble` (the budgeted
# reading) and `small_to_big` (rank the units, lift them to parents, read).

# %%
import bisect

import numpy as np

from academy_llm import corpus_pages, count_tokens, embed
from labkit import run_lab
from labkit.lessons import rag10 as lesson  # given: the units and parents, the index, the report, the checks
from labkit.lessons.rag10 import BUDGET_TOKENS, DEPTH, PARENT_TOKENS, TITLE, unit_scores, window_around
from labkit.loading import lab_folder

# Given: lesson.build_index reads the units and parents from given ground (rag7's header chunks as
# parents; rag6's blocks, rag5's sentences as units) and embeds them; unit_scores(index, vectors): a cosine a
# unit (a sentence's averaged with its parent's); window_around(text, parent, unit, room): a parent's slice.
HERE = lab_folder(globals().get("__file__"))  # the earlier labs, for pages other than the course's

# %% [markdown]
# ## 1. Each unit's parent
#
# Units and parents are cut independently: a sentence may lie across two
# parents. Its parent is the one it shares most characters with (the earlier
# on a tie), None if none (front matter). Both are `(start, end)` spans of a
# page, sorted, the parents apart. Find each by bisection, not by trying all.


# %%
def parent_index(units, parents):
    """For each (start, end) unit, the index of the parent sharing most characters with it, or None.

    `units` and `parents` are (start, end) spans sorted by start, no two parents overlapping;
    ties go to the earlier parent.
    """
    # BEGIN SOLUTION
    # hint 1: Map each small unit to the parent chunk it belongs to (the one it shares the most
    # hint 1: characters with), so that a match on the unit can hand the reader its parent.
    # hint 2: The parents are sorted and disjoint, so a unit can only share characters with the
    # hint 2: last parent starting at or before the unit's start and the parents after it that
    # hint 2: start before the unit ends. Find the first with bisect over the parents' starts, then
    # hint 2: walk forward while parents start before the unit's end, keeping the one sharing the
    # hint 2: most characters (strictly more, so a tie keeps the earlier). No shared character at
    # hint 2: all: None.
    # hint 3: starts = [start for start, _ in parents]
    # hint 3: result = []
    # hint 3: for start, end in units:
    # hint 3:     best, most = None, 0
    # hint 3:     j = ...  # the last parent starting at or before the unit's start (bisect), or the first
    # hint 3:     while ...:  # parents that start before the unit ends
    # hint 3:         ...  # the characters it shares with the unit; strictly more than the best so far: it is the best
    # hint 3:         j += 1
    # hint 3:     result.append(best)
    # hint 3: return result
    starts = [start for start, _ in parents]
    result = []
    for start, end in units:
        best, most = None, 0
        j = max(bisect.bisect_right(starts, start) - 1, 0)
        while j < len(parents) and parents[j][0] < end:
            shared = min(end, parents[j][1]) - max(start, parents[j][0])
            if shared > most:
                best, most = j, shared
            j += 1
        result.append(best)
    return result
    # END SOLUTION


def build_index(pages, title=TITLE, embedder=None, parent_tokens=PARENT_TOKENS):
    """The units and parents of `pages` ({doc_id: text}), each unit placed by your parent_index, embedded."""
    return lesson.build_index(pages, title, embedder, parent_tokens, HERE, owner=parent_index)


# %% [markdown]
# ## 2. Each parent once
#
# Several units of one parent often rank high together (three rows of one
# table): the reader needs the parent once. Keep, for each parent, its first
# (best) unit, as a `(parent, unit)` pair, in rank order; skip a None parent.


# %%
def best_parents(ranked_units, parent_of):
    """[(parent, unit)]: each parent once, with its best unit, in the order of that unit's rank."""
    # BEGIN SOLUTION
    # hint 1: Turn a ranking of small units into a ranking of parents, each parent once, because
    # hint 1: the reader should not be handed the same text twice.
    # hint 2: Walk the units in rank order and look up each one's parent. The first time a parent
    # hint 2: comes up, keep it with that unit (its best); after that, skip its other units. Skip
    # hint 2: units whose parent is None. Keep a set of the parents taken, so that each look-up is
    # hint 2: quick.
    # hint 3: taken, result = set(), []
    # hint 3: for unit in ranked_units:
    # hint 3:     ...  # its parent, the first time that parent comes up (None never)
    # hint 3: return result
    taken, result = set(), []
    for unit in ranked_units:
        parent = parent_of[unit]
        if parent is not None and parent not in taken:
            taken.add(parent)
            result.append((parent, unit))
    return result
    # END SOLUTION


# %% [markdown]
# ## 3. Reading within a budget
#
# A candidate is `(doc_id, parent, unit)`, two `(start, end)` spans. Walk them
# best first; hand over a parent whole while it fits in what is left (tokens
# counted on each span's own text), else the window around its unit of what
# is left (`window_around`), and go on: a unit too big gives none, the next may
# fit. No span holds more than `span_tokens`: a 1,500-token table is windowed.


# %%
def assemble(pages, candidates, budget_tokens, span_tokens=PARENT_TOKENS):
    """[(doc_id, start, end)]: parents whole while they fit, else a window around their unit.

    No span holds more than `span_tokens`; all together hold at most `budget_tokens`.
    """
    # BEGIN SOLUTION
    # hint 1: Hand the reader the best parents in rank order until the reading budget is spent,
    # hint 1: and when a parent is too big for what is left, a window of it around its matched
    # hint 1: unit rather than nothing.
    # hint 2: Keep what is left of the budget. For each candidate, best first: count the tokens of
    # hint 2: the parent's own text; if they fit in what is left (and in span_tokens), take the
    # hint 2: parent whole. If not, ask window_around (given) for a window of at most that room,
    # hint 2: and take it if there is one, counting its own tokens. Do not stop at a parent that
    # hint 2: does not fit: a later one may. Stop once nothing is left.
    # hint 3: spans, left = [], budget_tokens
    # hint 3: for doc_id, parent, unit in candidates:
    # hint 3:     ...  # stop once nothing is left
    # hint 3:     span, tokens = ...  # the parent whole, and its tokens
    # hint 3:     if ...:  # over what is left, or over span_tokens
    # hint 3:         ...  # the window around the unit instead, its own tokens; no window: go on to the next
    # hint 3:     spans.append((doc_id, *span))
    # hint 3:     left -= tokens
    # hint 3: return spans
    spans, left = [], budget_tokens
    for doc_id, parent, unit in candidates:
        if left <= 0:
            break
        text, room = pages[doc_id], min(left, span_tokens)
        span, tokens = parent, count_tokens(text[parent[0] : parent[1]])
        if tokens > room:
            span = window_around(text, parent, unit, room)
            if span is None:
                continue
            tokens = count_tokens(text[span[0] : span[1]])
        spans.append((doc_id, *span))
        left -= tokens
    return spans
    # END SOLUTION


# %% [markdown]
# ## 4. Small to big
#
# For one question: rank the units by score, best first (a tie to the lower
# row), keep `depth`, lift them to parents, read. Units and parents are
# `(doc_id, start, end)`; the index adds each parent as a unit, matched whole.


# %%
def small_to_big(pages, scores, units, parent_of, parents, budget_tokens, span_tokens=PARENT_TOKENS, depth=DEPTH):
    """The (doc_id, start, end) spans a reader gets: the parents of the `depth` best-scored units (a
    score per unit; a tie to the lower row), each once, in the order of its best unit, read by assemble."""
    # BEGIN SOLUTION
    # hint 1: Put the lab together for one question: match small (rank the units by score), read
    # hint 1: big (their parents, each once, within the budget).
    # hint 2: Rank the rows by score, highest first, with a stable sort so that a tie keeps the
    # hint 2: lower row first, and keep the first `depth`. best_parents gives (parent, unit) pairs;
    # hint 2: make each a candidate (doc_id, (parent start, end), (unit start, end)) for assemble.
    # hint 3: ranked = ...  # the rows of the `depth` highest scores, best first; a tie keeps the lower row first
    # hint 3: candidates = []
    # hint 3: for parent, unit in ...:  # best_parents of those rows (as ints)
    # hint 3:     doc_id, start, end = parents[parent]
    # hint 3:     candidates.append(...)  # (doc_id, the parent's (start, end), the unit's (start, end))
    # hint 3: return ...  # assemble them within the budget
    ranked = np.argsort(-np.asarray(scores, dtype=float), kind="stable")[:depth]
    candidates = []
    for parent, unit in best_parents([int(row) for row in ranked], parent_of):
        doc_id, start, end = parents[parent]
        candidates.append((doc_id, (start, end), tuple(units[unit][1:])))
    return assemble(pages, candidates, budget_tokens, span_tokens)
    # END SOLUTION


def search(pages, questions, budget_tokens=BUDGET_TOKENS, title=TITLE, embedder=None, parent_tokens=PARENT_TOKENS,
           alone=False):
    """For each question, the spans small_to_big hands over; `alone`: the parents matched whole, no small units."""
    index = build_index(pages, title, embedder, parent_tokens)
    if not questions:
        return []
    scores = unit_scores(index, embed(list(questions), embedder))
    if alone:
        scores[:, [unit.kind != "parent" for unit in index.units]] = -np.inf
    return [small_to_big(pages, row, index.spans, index.parent_of, index.parent_spans, budget_tokens, parent_tokens)
            for row in scores]


# %% [markdown]
# ## 5. Does it still pay? And the dial
#
# Recall within 1,000 tokens by kind, with 95% intervals, against the parents
# matched whole and rag7's rows (the recommended chunker); the sentences are
# the run's. Then **change `PARENT_SIZES` and run again**.

# %%
PARENT_SIZES = (96, 192, 384)  # the dial: the parents' budget in tokens (each ships as given ground)


def main():
    checks, ok = lesson.check_by_hand(globals())
    if not ok:
        return checks.verdict()
    pages, questions = corpus_pages(), lesson.test_questions()
    lesson.describe(build_index(pages))
    asked = [question["question"] for question in questions]
    found = search(pages, asked)
    lesson.compare_methods(questions, {"small to big": found, "parents alone": search(pages, asked, alone=True)})
    print("\n3. The parent-size dial: small to big with parents of at most this many tokens")
    lesson.parent_dial(questions, {size: search(pages, asked, parent_tokens=size) for size in PARENT_SIZES})
    return lesson.checks(globals(), found, pages, checks)  # the lab's checks, then its public grading tests


# %%
if __name__ == "__main__":
    run_lab(main)
