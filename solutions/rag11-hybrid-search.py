# %% [markdown]
# # rag11: Hybrid search, words and meaning together
#
# Meaning finds a paraphrase; words find an exact name such as `ORB-4024`.
# Where the two fail on different questions, fusing their rankings finds more
# (**hybrid search**); whether they do depends on the embedder: the lab measures
# it with the course's default, and `ACADEMY_EMBEDDER=wordllama python
# labs/rag11-hybrid-search.py` measures the same with a static model. You
# write **BM25** (`search_terms`, `bm25_weight`, `bm25_index`), two fusions
# (`reciprocal_rank_fusion`, `convex_fusion`) and the reading (`read_parents`)
# of rag10's units and parents (given ground); then the dial.

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
    # BEGIN SOLUTION
    # hint 1: Cut a text into the terms word search counts: lower-cased words, and for an
    # hint 1: identifier such as storage.max_conns the whole name as well as its parts, because an
    # hint 1: exact name is the rarest, surest match there is.
    # hint 2: Find the compounds first with COMPOUND (given above). For each match in order, split
    # hint 2: it into its words with WORD; if it has more than one, the whole match is a term too,
    # hint 2: before its words. Lower-case each term.
    # hint 3: terms = []
    # hint 3: for match in COMPOUND.finditer(text):
    # hint 3:     ...  # the whole match lower-cased; then, if WORD finds more than one word in it, each word
    # hint 3: return terms
    terms = []
    for match in COMPOUND.finditer(text):
        whole = match.group()
        terms.append(whole.lower())
        if not whole.isalnum():  # a compound: its words after it
            terms += [part.lower() for part in WORD.findall(whole)]
    return terms
    # END SOLUTION


def bm25_weight(tf, df, n_documents, length, mean_length, k1=K1, b=B):
    """What one term adds to one document's BM25 score (the formula above): `tf` its count in the document,
    `df` how many of the `n_documents` hold it, `length` the document's terms, `mean_length` the mean (> 0)."""
    # BEGIN SOLUTION
    # hint 1: Weigh one term in one document, the BM25 way, because a rare term, met often in a
    # hint 1: short document, says most about what the document is about.
    # hint 2: Two factors: the idf, with the 1 + inside the logarithm (math.log), and tf over tf
    # hint 2: plus k1 times the length norm 1 - b + b * length / mean_length. Multiply the two.
    # hint 3: idf = ...  # larger the rarer the term (df small against n_documents), never below 0
    # hint 3: saturation = ...  # grows with tf but levels off (k1); a document longer than the mean weighs less (b)
    # hint 3: return idf * saturation
    idf = math.log(1 + (n_documents - df + 0.5) / (df + 0.5))
    return idf * tf / (tf + k1 * (1 - b + b * length / mean_length))
    # END SOLUTION


def bm25_index(documents, k1=K1, b=B):
    """{term: [(row, weight), ...]}: for each term of the corpus, every document holding it, once,
    rows in order, with the term's bm25_weight there.

    `documents` is a list of term lists (a row each). A document's length is its number of terms,
    repeats counted; a term's df is the number of documents holding it. An empty corpus gives {}.
    """
    # BEGIN SOLUTION
    # hint 1: Count what BM25 needs from the corpus (each term's document frequency, each
    # hint 1: document's length, the mean length) and work out every term's weight in every
    # hint 1: document that holds it, once, so that a question only adds weights up.
    # hint 2: First pass: count each document's terms (collections.Counter); a term's df goes up
    # hint 2: by one per document holding it. The mean length is over all documents, empty ones
    # hint 2: too. Second pass, in row order: for each term and its count tf, append (row,
    # hint 2: bm25_weight(tf, df, N, length, mean, k1, b)) to the term's list.
    # hint 3: if not documents:
    # hint 3:     return {}
    # hint 3: counts = ...  # each document's terms, counted
    # hint 3: df = ...  # for each term, how many documents hold it
    # hint 3: mean = ...  # the mean document length, empty documents included
    # hint 3: postings = {}
    # hint 3: for row, (terms, tally) in enumerate(zip(documents, counts)):
    # hint 3:     for term, tf in tally.items():
    # hint 3:         ...  # the term's list gets (row, its BM25 weight in this document)
    # hint 3: return postings
    if not documents:
        return {}
    counts = [Counter(terms) for terms in documents]
    df = Counter(term for tally in counts for term in tally)
    mean = sum(len(terms) for terms in documents) / len(documents)
    postings = {}
    for row, (terms, tally) in enumerate(zip(documents, counts)):
        for term, tf in tally.items():
            weight = bm25_weight(tf, df[term], len(documents), len(terms), mean, k1, b)
            postings.setdefault(term, []).append((row, weight))
    return postings
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Fuse several rankings into one by their ranks alone, because the retrievers'
    # hint 1: scores are on scales that cannot be added.
    # hint 2: Keep a score per item in a dict (it keeps the order items are first met). Walk each
    # hint 2: ranking with ranks from 1, adding Fraction(1, k + rank). Sort the items by score,
    # hint 2: highest first, with a stable sort, so that ties keep that order.
    # hint 3: scores = {}  # a dict keeps the order in which the items are first met
    # hint 3: for ranking in rankings:
    # hint 3:     for rank, item in ...:  # ranks counted from 1
    # hint 3:         scores[item] = ...  # what the item had, plus its share at this rank (exact: Fraction)
    # hint 3: return ...  # the items, highest score first; ties keep the order they were met in
    scores = {}
    for ranking in rankings:
        for rank, item in enumerate(ranking, 1):
            scores[item] = scores.get(item, 0) + Fraction(1, k + rank)
    return sorted(scores, key=lambda item: -scores[item])
    # END SOLUTION


def convex_fusion(word_scores, meaning_scores, alpha):
    """alpha * m + (1 - alpha) * w for each candidate: a list, one number per candidate, in order.

    w and m are the two lists min-max normalised, (score - lowest) / (highest - lowest), or 0 for
    all when the lowest is the highest (scores that rank nothing).
    """
    # BEGIN SOLUTION
    # hint 1: Mix the two retrievers' scores with weight alpha on meaning, once each is brought
    # hint 1: to one scale, from 0 (its worst candidate) to 1 (its best), because raw BM25 scores
    # hint 1: would drown the cosines.
    # hint 2: Normalise each list on its own (subtract the lowest, divide by the range; no range:
    # hint 2: all zeros), then alpha times meaning plus (1 - alpha) times words, candidate by
    # hint 2: candidate. No candidates: an empty list.
    # hint 3: def scaled(scores):
    # hint 3:     ...  # 0 for the lowest score, 1 for the highest, the rest between; no range: all 0
    # hint 3: return ...  # candidate by candidate, alpha of the scaled meaning and the rest of the scaled words
    def scaled(scores):
        scores = np.asarray(scores, dtype=float)
        if scores.size == 0 or scores.max() == scores.min():
            return np.zeros(scores.size)
        return (scores - scores.min()) / (scores.max() - scores.min())

    return (alpha * scaled(meaning_scores) + (1 - alpha) * scaled(word_scores)).tolist()
    # END SOLUTION


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
    fits in what is left and in PARENT_TOKENS, else the window around that best unit; at most
    budget_tokens. A parent is read at its best unit or not at all: no window there, and it is skipped."""
    # BEGIN SOLUTION
    # hint 1: Hand the reader the parents of the best units, each once and within the budget,
    # hint 1: whichever retriever ranked the units.
    # hint 2: Keep the parents taken and what is left. For each ranked row: skip it if its parent
    # hint 2: is None or taken; stop once nothing is left. Count the parent's tokens on its own
    # hint 2: text; if over min(left, PARENT_TOKENS), ask window_around for the window around the
    # hint 2: unit, skip the parent if there is none (it stays taken), else count the window's tokens.
    # hint 3: taken, spans, left = set(), [], budget_tokens
    # hint 3: for row in ranked:
    # hint 3:     parent = parent_of[row]
    # hint 3:     if ...:  # no parent, or one already handed over
    # hint 3:         continue
    # hint 3:     ...  # remember it; stop once nothing is left of the budget
    # hint 3:     doc_id, start, end = parents[parent]
    # hint 3:     span, tokens = ...  # the parent's span, and its tokens counted on its page
    # hint 3:     if ...:  # more than the reader may still read, or than a parent may hold
    # hint 3:         ...  # the window around the unit instead (window_around); none: skip this parent
    # hint 3:     spans.append((doc_id, *span))
    # hint 3:     left -= tokens
    # hint 3: return spans
    taken, spans, left = set(), [], budget_tokens
    for row in ranked:
        parent = parent_of[row]
        if parent is None or parent in taken:
            continue
        taken.add(parent)
        if left <= 0:
            break
        doc_id, start, end = parents[parent]
        text, room = pages[doc_id], min(left, PARENT_TOKENS)
        span, tokens = (start, end), count_tokens(text[start:end])
        if tokens > room:
            span = window_around(text, (start, end), tuple(units[row][1:]), room)
            if span is None:
                continue
            tokens = count_tokens(text[span[0] : span[1]])
        spans.append((doc_id, *span))
        left -= tokens
    return spans
    # END SOLUTION


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


# %%
if __name__ == "__main__":
    run_lab(main)
