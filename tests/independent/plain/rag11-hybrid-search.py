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
    spans = [(match.start(), match.end()) for match in WORD.finditer(text)]
    terms = []
    i = 0
    while i < len(spans):
        j = i
        while j + 1 < len(spans):
            gap = text[spans[j][1] : spans[j + 1][0]]
            if gap == "" or gap.strip("._-") != "":
                break
            j += 1
        if j > i:
            terms.append(text[spans[i][0] : spans[j][1]].lower())
        for k in range(i, j + 1):
            terms.append(text[spans[k][0] : spans[k][1]].lower())
        i = j + 1
    return terms


def bm25_weight(tf, df, n_documents, length, mean_length, k1=K1, b=B):
    """What one term adds to one document's BM25 score (the formula above): `tf` its count in the document,
    `df` how many of the `n_documents` hold it, `length` the document's terms, `mean_length` the mean (> 0)."""
    inverse = math.log(1.0 + (n_documents - df + 0.5) / (df + 0.5))
    norm = 1.0 - b + b * (length / mean_length)
    saturated = tf / (tf + k1 * norm)
    return inverse * saturated


def bm25_index(documents, k1=K1, b=B):
    """{term: [(row, weight), ...]}: for each term of the corpus, every document holding it, once,
    rows in order, with the term's bm25_weight there.

    `documents` is a list of term lists (a row each). A document's length is its number of terms,
    repeats counted; a term's df is the number of documents holding it. An empty corpus gives {}.
    """
    if len(documents) == 0:
        return {}
    frequencies = []
    df = {}
    total = 0
    for terms in documents:
        tf = {}
        for term in terms:
            if term in tf:
                tf[term] += 1
            else:
                tf[term] = 1
        frequencies.append(tf)
        for term in tf:
            df[term] = df.get(term, 0) + 1
        total += len(terms)
    mean = total / len(documents)
    result = {}
    for row in range(len(documents)):
        for term, count in frequencies[row].items():
            if term not in result:
                result[term] = []
            result[term].append((row, bm25_weight(count, df[term], len(documents), len(documents[row]), mean,
                                                  k1, b)))
    return result


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
    score = {}
    order = []
    for ranking in rankings:
        for place in range(len(ranking)):
            item = ranking[place]
            if item not in score:
                score[item] = Fraction(0)
                order.append(item)
            score[item] = score[item] + Fraction(1, k + place + 1)
    keyed = []
    for number in range(len(order)):
        keyed.append((-score[order[number]], number))
    keyed.sort()
    return [order[number] for _, number in keyed]


def convex_fusion(word_scores, meaning_scores, alpha):
    """alpha * m + (1 - alpha) * w for each candidate: a list, one number per candidate, in order.

    w and m are the two lists min-max normalised, (score - lowest) / (highest - lowest), or 0 for
    all when the lowest is the highest (scores that rank nothing).
    """
    def normalised(values):
        values = [float(value) for value in values]
        if not values:
            return []
        low = min(values)
        high = max(values)
        if high == low:
            return [0.0] * len(values)
        return [(value - low) / (high - low) for value in values]

    words = normalised(word_scores)
    meaning = normalised(meaning_scores)
    result = []
    for number in range(len(words)):
        result.append(alpha * meaning[number] + (1 - alpha) * words[number])
    return result


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
    seen = set()
    handed = []
    remaining = budget_tokens
    for unit in ranked:
        parent = parent_of[unit]
        if parent is None or parent in seen:
            continue
        seen.add(parent)
        if remaining <= 0:
            break
        doc_id, parent_start, parent_end = parents[parent]
        _, unit_start, unit_end = units[unit]
        page = pages[doc_id]
        room = min(remaining, PARENT_TOKENS)
        start, end = parent_start, parent_end
        used = count_tokens(page[start:end])
        if used > room:
            window = window_around(page, (parent_start, parent_end), (unit_start, unit_end), room)
            if window is None:
                continue  # even the unit does not fit what is left: the next parent may
            start, end = window
            used = count_tokens(page[start:end])
        handed.append((doc_id, start, end))
        remaining -= used
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
