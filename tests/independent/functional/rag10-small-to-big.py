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
    from itertools import takewhile

    starts = [start for start, _ in parents]

    def owner(unit):
        start, end = unit
        first = max(bisect.bisect_right(starts, start) - 1, 0)
        near = takewhile(lambda j: parents[j][0] < end, range(first, len(parents)))
        shares = ((min(end, parents[j][1]) - max(start, parents[j][0]), j) for j in near)
        most, best = max(shares, key=lambda share: (share[0], -share[1]), default=(0, None))
        return best if most > 0 else None

    return [owner(unit) for unit in units]


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
    taken = set()

    def first_time(parent):
        fresh = parent is not None and parent not in taken
        taken.add(parent)
        return fresh

    return [(parent_of[unit], unit) for unit in ranked_units if first_time(parent_of[unit])]


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
    def spans():
        left = budget_tokens
        for doc_id, parent, unit in candidates:
            if left <= 0:
                return
            text, room = pages[doc_id], min(left, span_tokens)
            span = tuple(parent)
            held = count_tokens(text[span[0] : span[1]])
            if held > room:
                window = window_around(text, tuple(parent), tuple(unit), room)
                if window is None:
                    continue
                span = tuple(window)
                held = count_tokens(text[span[0] : span[1]])
            left -= held
            yield (doc_id, *span)

    return list(spans())


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
    top = sorted(range(len(scores)), key=lambda row: (-scores[row], row))[:depth]
    return assemble(pages, [(parents[p][0], tuple(parents[p][1:]), tuple(units[u][1:]))
                            for p, u in best_parents(top, parent_of)], budget_tokens, span_tokens)


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


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag10-small-to-big.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 parent_index` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "parent_index")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag10")  # labs/hints/rag10.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
