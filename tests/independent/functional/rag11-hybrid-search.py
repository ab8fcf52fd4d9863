# %% [markdown]
# # rag11: Hybrid search, words and meaning together
#
# Meaning finds a paraphrase; words find an exact name such as `ORB-4024`.
# Where the two fail on different questions, fusing their rankings finds more
# (**hybrid search**); whether they do depends on the embedder: the lab measures
# it. You write **BM25** (`search_terms`, `bm25_weight`, `bm25_index`), two
# fusions (`reciprocal_rank_fusion`, `convex_fusion`) and the reading
# (`read_parents`) of rag10's units and parents (given ground); then the dial.

# %%
import math
import re
from collections import Counter
from fractions import Fraction

import numpy as np

from academy_llm import corpus_pages, corpus_questions, count_tokens
from labkit import run_lab
from labkit.lessons import rag10 as lesson10  # given: rag10's units, parents and index (given ground)
from labkit.lessons import rag11 as lesson  # given: BM25 packed for scoring, both rankings, the report, the checks
from labkit.lessons.rag10 import BUDGET_TOKENS, DEPTH, PARENT_TOKENS, TITLE, window_around
from labkit.loading import lab_folder

K1, B = 1.2, 0.75  # BM25's term-frequency saturation and length normalisation, Lucene's defaults
RRF_K = 60  # reciprocal-rank fusion's constant, as its authors set it
HERE = lab_folder(globals().get("__file__"))  # the earlier labs, for pages other than the course's

# %% [markdown]
# ## 1. Terms, and BM25 from its formula
#
# A term is a lower-cased run of letters and digits; an identifier
# (`storage.max_conns`, `--no-pager`) gives its rare whole, then its words.
#
#     idf    = ln(1 + (N - df + 0.5) / (df + 0.5))
#     weight = idf * tf / (tf + k1 * (1 - b + b * length / mean_length))
#
# A rare term tells more (idf, never negative), a tenth occurrence less than the
# first (k1), a long document's match less (b). `bm25_index` weighs every term
# in every document holding it, once; a question adds the weights up.


# %%
WORD = re.compile(r"[^\W_]+")  # a run of letters and digits (\w without the underscore)
COMPOUND = re.compile(r"[^\W_]+(?:[._-]+[^\W_]+)*")  # words joined by runs of . _ -


def search_terms(text):
    """The terms of `text` for word search, in the order they appear, each lower-cased (str.lower).

    A word is a run of letters and digits. A compound, two or more words joined by runs of
    '.', '_' or '-' and nothing else, gives its whole first, then its words:
    'Set storage.max_conns' -> ['set', 'storage.max_conns', 'storage', 'max', 'conns'].
    """
    from itertools import chain

    def terms_of(whole):
        parts = WORD.findall(whole)
        return ([whole] if len(parts) > 1 else []) + parts

    return [term.lower() for term in chain.from_iterable(terms_of(m.group()) for m in COMPOUND.finditer(text))]


def bm25_weight(tf, df, n_documents, length, mean_length, k1=K1, b=B):
    """What one term adds to one document's BM25 score (the formula above): `tf` its count in the document,
    `df` how many of the `n_documents` hold it, `length` the document's terms, `mean_length` the mean (> 0)."""
    return float(np.log1p((n_documents - df + 0.5) / (df + 0.5))
                 * tf / (tf + k1 * (1 - b + b * length / mean_length)))


def bm25_index(documents, k1=K1, b=B):
    """{term: [(row, weight), ...]}: for each term of the corpus, every document holding it, once,
    rows in order, with the term's bm25_weight there.

    `documents` is a list of term lists (a row each). A document's length is its number of terms,
    repeats counted; a term's df is the number of documents holding it. An empty corpus gives {}.
    """
    from collections import defaultdict

    if not documents:
        return {}
    counted = [Counter(terms) for terms in documents]
    df = Counter(term for tally in counted for term in tally.keys())
    n, mean = len(documents), sum(map(len, documents)) / len(documents)
    index = defaultdict(list)
    for row, tally in enumerate(counted):
        for term, tf in tally.items():
            index[term].append((row, bm25_weight(tf, df[term], n, sum(tally.values()), mean, k1=k1, b=b)))
    return dict(index)


# %% [markdown]
# ## 2. Two rankings, one
#
# Added raw, BM25 (0 and up) would drown a cosine. **Reciprocal-rank fusion**
# keeps ranks: an item scores the sum over the rankings holding it of 1 / (k +
# rank), ranks from 1, exact as fractions. A **convex combination** min-max
# normalises each side's scores, then mixes alpha * meaning + (1 - alpha) * words.


# %%
def reciprocal_rank_fusion(rankings, k=RRF_K):
    """The items of all `rankings` (lists, best first, an item at most once each), best first by the sum over
    the rankings holding it of Fraction(1, k + its rank), ranks from 1; a tie keeps the order first met."""
    from collections import defaultdict
    from itertools import chain

    fused = defaultdict(Fraction)
    for rank, item in chain.from_iterable(enumerate(ranking, start=1) for ranking in rankings):
        fused[item] += Fraction(1, k + rank)
    return sorted(fused, key=fused.__getitem__, reverse=True)


def convex_fusion(word_scores, meaning_scores, alpha):
    """alpha * m + (1 - alpha) * w for each candidate: a list, one number per candidate, in order.

    w and m are the two lists min-max normalised, (score - lowest) / (highest - lowest), or 0 for
    all when the lowest is the highest (scores that rank nothing).
    """
    def unit_range(scores):
        scores = np.array(scores, dtype=float)
        spread = np.ptp(scores) if scores.size else 0.0
        return (scores - scores.min()) / spread if spread > 0 else np.zeros_like(scores)

    return list(alpha * unit_range(meaning_scores) + (1 - alpha) * unit_range(word_scores))


# %% [markdown]
# ## 3. The reader gets parents
#
# As rag10 reads: each ranked unit's parent once, at its best unit, whole while
# it fits in what is left and in PARENT_TOKENS, else the window around the unit
# (`window_around`); a unit too big gives none, and the walk goes on.


# %%
def read_parents(pages, ranked, units, parent_of, parents, budget_tokens=BUDGET_TOKENS):
    """The (doc_id, start, end) spans a reader gets for the `ranked` units (rows of `units`, best first):
    each one's parent (a row of `parents`, or None) once, in the order of its best unit, whole while it
    fits in what is left and in PARENT_TOKENS, else the window around its unit; at most budget_tokens."""
    def first_units():
        """(parent, unit) for each parent once, at its best unit, in rank order."""
        seen = set()
        for unit in ranked:
            parent = parent_of[unit]
            if parent is not None and parent not in seen:
                seen.add(parent)
                yield parents[parent], tuple(units[unit][1:])

    def reading(parent, unit, room):
        """(span, tokens) of the parent whole if it fits `room`, else of its window around the unit, or None."""
        doc_id, *whole = parent
        text = pages[doc_id]
        span = tuple(whole)
        if count_tokens(text[span[0]:span[1]]) > room:
            span = window_around(text, span, unit, room)
        return None if span is None else ((doc_id, *span), count_tokens(text[span[0]:span[1]]))

    handed, left = [], budget_tokens
    for parent, unit in first_units():
        if left <= 0:
            break
        read = reading(parent, unit, min(left, PARENT_TOKENS))
        if read is not None:
            handed.append(read[0])
            left -= read[1]
    return handed


# %% [markdown]
# ## 4. Search, and the dial
#
# BM25 runs over rag10's units' embedded texts, meaning is rag10's score; each
# question's best DEPTH units both ways are fused and read (`search`: by RRF).
# **Change `WEIGHTS` and run again**: dev chooses a weight, test reports all.


# %%
def build_hybrid(pages, title=TITLE, embedder=None):
    """rag10's index of `pages` (its units, parents, vectors) and BM25 over the units' embedded texts."""
    index = lesson10.build_index(pages, title, embedder, folder=HERE)
    return lesson.Hybrid(index, lesson.pack(bm25_index([search_terms(u.embedded) for u in index.units]),
                                            len(index.units)))


METHODS = {"words": lambda ranked, alpha: ranked.words, "meaning": lambda ranked, alpha: ranked.meaning,
           "RRF": lambda ranked, alpha: reciprocal_rank_fusion([ranked.words, ranked.meaning])[:DEPTH],
           "weighted": lambda ranked, alpha: by_weight(ranked, alpha)}  # a Ranked, a weight -> its units, best first


def by_weight(ranked, alpha):
    """Both rankings' units, by convex_fusion of their two scores, best first."""
    pool = list(dict.fromkeys(ranked.meaning + ranked.words))
    fused = convex_fusion(ranked.word_scores[pool].tolist(), ranked.meaning_scores[pool].tolist(), alpha)
    return [pool[place] for place in np.argsort(-np.asarray(fused, dtype=float), kind="stable")[:DEPTH]]


def found(hybrid, ranked, method, alpha=None, budget_tokens=BUDGET_TOKENS):
    """Each question's spans by one of METHODS, from its Ranked (lesson.rankings)."""
    index = hybrid.index
    return [read_parents(index.pages, METHODS[method](one, alpha), index.spans, index.parent_of,
                         index.parent_spans, budget_tokens) for one in ranked]


def search(pages, questions, budget_tokens=BUDGET_TOKENS, title=TITLE, embedder=None):
    """For each question, the spans a reader gets, best first, within budget: RRF of words and meaning."""
    hybrid = build_hybrid(pages, title, embedder)
    return found(hybrid, lesson.rankings(hybrid, list(questions), search_terms, embedder), "RRF", None, budget_tokens)


WEIGHTS = (0, 0.3, 0.5, 0.7, 0.9, 1)  # the dial: the weight of meaning (0: words alone; 1: meaning alone)


def main():
    checks, ok = lesson.check_by_hand(globals())
    if not ok:
        return checks.verdict()
    pages, dev, test = corpus_pages(), corpus_questions("dev"), corpus_questions("test")
    hybrid = build_hybrid(pages)
    print(f"\n1. {len(hybrid.units):,} units (rag10's small units and parents), embedded and in BM25: "
          f"{len(hybrid.words.terms):,} terms, {len(hybrid.words.rows):,} postings")
    print("\n2. The dial: the weight of meaning in the convex fusion, chosen on dev, reported on test")
    asked = {name: [q["question"] for q in split] for name, split in (("dev", dev), ("test", test))}
    ranked = {name: lesson.rankings(hybrid, questions, search_terms) for name, questions in asked.items()}
    dial = {w: (found(hybrid, ranked["dev"], "weighted", w), found(hybrid, ranked["test"], "weighted", w))
            for w in WEIGHTS}
    chosen = lesson.weight_dial(dev, test, dial, WEIGHTS)
    hits = {name: found(hybrid, ranked["test"], name) for name in ("words", "meaning", "RRF")}
    hits[f"weighted {chosen}"] = dial[chosen][1]
    lesson.compare_methods(test, hits, chosen, pages, search_terms)
    shown = dict(zip(asked["test"][:20], hits["RRF"][:20]))  # search() must hand over what the table read
    return lesson.checks(globals(), hits, pages, checks, search, shown)  # then the public grading tests


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag11-hybrid-search.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 search_terms` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "search_terms")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag11")  # labs/hints/rag11.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
