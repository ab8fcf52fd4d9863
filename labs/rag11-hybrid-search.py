# %% [markdown]
# # rag11: Hybrid search, words and meaning together
#
# rag10 matched small units by meaning: an embedding puts "How do I turn a
# dotted config key into an environment variable name?" near "Upper-case the
# key, replace each dot with a double underscore", which shares almost no word
# with it. It does less well with names. A question about `satellite.heartbeat_timeout` or `ORB-4024` wants
# the one row that holds that string, and an embedding of a rare identifier is
# a blur of its pieces. Matching words is the other way round: exact on names,
# blind to a paraphrase. The two fail on different questions, so production
# search runs both and fuses their rankings: **hybrid search**.
#
# This lab builds the word side from its formula, **BM25** (what Lucene,
# Elasticsearch and OpenSearch rank with), fuses it with rag10's ranking by
# meaning in two ways, and hands the reader rag10's parents within the same
# 1,000 tokens. Then it measures, with rag8's harness: words alone, meaning
# alone (rag10's units), and both.
#
# You write `search_terms` (what a word is, for search), `bm25_weight` (the
# formula), `bm25_index` (the corpus's counts), `reciprocal_rank_fusion` and
# `convex_fusion` (two ways to fuse), and `read_parents` (the reader's share).

# %%
import math
import re
from collections import Counter
from dataclasses import dataclass
from fractions import Fraction
from typing import NamedTuple

import numpy as np

from academy_llm import corpus_pages, corpus_questions, count_tokens, describe_embedder, embed, embedder_name
from labkit import Case, Invariants, load_lab, returns, run_lab
from labkit.uncertainty import claim, mean_interval, paired_difference

rag8 = load_lab("rag8")  # the harness: gold spans, recall, the kinds of question
from labkit.lessons import rag8 as harness  # noqa: E402 (rag8's given harness: retrieval, the budget, the tables)
rag10 = load_lab("rag10")  # the units, their parents, the ranking by meaning, best_parents and assemble

TITLE = rag10.TITLE
BUDGET_TOKENS = rag10.BUDGET_TOKENS  # 1,000 tokens a question, as rag8 and rag10 read
DEPTH = rag10.DEPTH  # how many units of each ranking are fused and read, at most
K1, B = 1.2, 0.75  # BM25's term-frequency saturation and length normalisation, Lucene's defaults
RRF_K = 60  # reciprocal-rank fusion's damping constant, as its authors set it
ALPHAS = (0.3, 0.4, 0.5, 0.6, 0.7)  # the weights of meaning the dev split chooses from

# %% [markdown]
# ## 1. Terms: what a word is, for search
#
# BM25 counts terms, so first decide what a term is. Lower-case runs of
# letters and digits ("Jobs" and "jobs" are one term), no stemming ("job" is
# not "jobs") and no stop words (BM25's idf makes "the" weigh next to
# nothing by itself). The Orbit docs are full of identifiers, and they
# decide the interesting choice: `storage.postgres_max_idle_conns` gives
# a term for the whole name and one for each of its parts:
#
#     storage.postgres_max_idle_conns  storage  postgres  max  idle  conns
#
# The whole is what an exact question matches: it is rare, so it weighs a
# lot. The parts let "max idle connections for postgres" match at least
# `postgres`, `max` and `idle`. A compound is words joined by `.`, `_` or
# `-` and nothing else, so `--no-pager` gives `no-pager`, `no`, `pager`,
# `ORB-4024` gives `orb-4024`, `orb`, `4024`, and a version `2.6.1` is one term
# and three parts. Every other character (a space, `/`, `=`, `'`, a backtick)
# ends a term.


# %%
WORD = re.compile(r"[^\W_]+")  # a run of letters and digits (\w without the underscore)
COMPOUND = re.compile(r"[^\W_]+(?:[._-]+[^\W_]+)*")  # words joined by runs of . _ -


def search_terms(text):
    """The terms of `text` for word search, in the order they appear, each lower-cased (str.lower).

    A word is a run of letters and digits. A compound, two or more words joined by runs of
    '.', '_' or '-' and nothing else, gives its whole first, then its words:
    'Set storage.max_conns' -> ['set', 'storage.max_conns', 'storage', 'max', 'conns'].
    """
    # TODO(rag11): Cut a text into the terms word search counts: lower-cased words, and for an
    #   identifier such as storage.max_conns the whole name as well as its parts,
    #   because an exact name is the rarest, surest match there is.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) search_terms(): Cut a text into the terms word search counts: lower-cased "
        "words, and for an identifier such as storage.max_conns the whole name as well as its "
        "parts, because an exact name is the rarest, surest match there is. More help: python "
        "labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 2. BM25, from its formula
#
# A document's BM25 score for a question is a sum over the question's terms
# of what each term adds to it, its **weight** in that document:
#
#     idf    = ln(1 + (N - df + 0.5) / (df + 0.5))
#     weight = idf * tf / (tf + k1 * (1 - b + b * length / mean_length))
#
# N is the number of documents, df how many hold the term, tf how often this
# one does, length its number of terms and mean_length the corpus's mean.
# Three ideas, one factor each:
#
# - **idf**: a rare term tells more than a common one. This is Lucene's
#   form, never negative: a term in every document still adds a little.
#   (The older `ln((N - df + 0.5) / (df + 0.5))` goes below zero for a term in
#   more than half the documents, and a match would then cost a document.)
# - **saturation** (k1 = 1.2): the tenth "postgres" in a unit says less than
#   the first. The tf factor grows with tf but stays below 1, so however
#   often a term occurs it adds less than its idf; k1 says how fast it
#   saturates (k1 = 0: one occurrence is as good as any number).
# - **length normalisation** (b = 0.75): a term once in a short unit says
#   more than once in a long parent. A document longer than the mean is
#   discounted, b saying how much (0: not at all; 1: in full proportion).
#
# Robertson's original formula also multiplies by (k1 + 1); Lucene leaves it
# out, since it scales every score alike and changes no ranking.
#
# The weights depend on the corpus only, not on the question, so they are
# worked out once: `bm25_index` gives, for each term, the documents that hold
# it with its weight in each (an inverted index, "postings"). Scoring a
# question is then adding up its terms' postings (given below).


# %%
def bm25_weight(tf, df, n_documents, length, mean_length, k1=K1, b=B):
    """What one term adds to one document's BM25 score, as Lucene weighs it:

        idf * tf / (tf + k1 * (1 - b + b * length / mean_length)),  idf = ln(1 + (N - df + 0.5) / (df + 0.5))

    `tf`: how often the term occurs in the document; `df`: in how many of the N = `n_documents`
    documents it occurs; `length`: the document's number of terms; `mean_length`: the mean over the
    corpus (more than 0). ln is the natural logarithm.
    """
    # TODO(rag11): Weigh one term in one document, the BM25 way, because a rare term, met often in
    #   a short document, says most about what the document is about.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) bm25_weight(): Weigh one term in one document, the BM25 way, because a rare"
        " term, met often in a short document, says most about what the document is about. More "
        "help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


def bm25_index(documents, k1=K1, b=B):
    """{term: [(row, weight), ...]}: for each term of the corpus, every document holding it, once,
    rows in order, with the term's bm25_weight there.

    `documents` is a list of term lists (a row each, search_terms of each text). A document's
    length is its number of terms, repeats counted; a term's df is the number of documents that
    hold it, however often. An empty corpus gives {}.
    """
    # TODO(rag11): Count what BM25 needs from the corpus (each term's document frequency, each
    #   document's length, the mean length) and work out every term's weight in every
    #   document that holds it, once, so that a question only adds weights up.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) bm25_index(): Count what BM25 needs from the corpus (each term's document "
        "frequency, each document's length, the mean length) and work out every term's weight in"
        " every document that holds it, once, so that a question only adds weights up. More "
        "help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


class Words(NamedTuple):
    """BM25 over a corpus, ready to score questions: the postings of all terms in two flat arrays."""

    terms: dict  # term -> (first, last) of its postings in `rows` and `weights`
    rows: np.ndarray  # the documents holding each term, term after term
    weights: np.ndarray  # the term's weight in each
    n_documents: int


def word_index(texts, k1=K1, b=B):
    """Words of `texts`, a document each: their search_terms, through bm25_index."""
    postings = bm25_index([search_terms(text) for text in texts], k1, b)
    ends = np.cumsum([len(pairs) for pairs in postings.values()], dtype=np.int64)
    terms = {term: (int(end) - len(pairs), int(end)) for (term, pairs), end in zip(postings.items(), ends)}
    rows, weights = zip(*(pair for pairs in postings.values() for pair in pairs)) if postings else ((), ())
    return Words(terms, np.array(rows, dtype=np.int64), np.array(weights, dtype=float), len(texts))


def word_scores(words, question):
    """Every document's BM25 score for `question`: the sum of its terms' weights there.

    Each distinct term of the question counts once (a word said twice is not weighed twice); a
    term no document holds adds nothing.
    """
    scores = np.zeros(words.n_documents)
    for term in dict.fromkeys(search_terms(question)):
        if term in words.terms:
            first, last = words.terms[term]
            scores[words.rows[first:last]] += words.weights[first:last]
    return scores


# %% [markdown]
# ## 3. Two rankings, one: fusion
#
# The two retrievers score on scales that do not meet: a cosine lies in
# [-1, 1], while a BM25 score is any number from 0 up, and a question's best
# BM25 score may be several times another's (step 2 prints where the best
# scores of the dev questions lie). Adding them would let BM25 decide
# alone. Two ways out.
#
# **Reciprocal-rank fusion** (RRF) forgets the scores and keeps the ranks. An
# item's fused score is the sum, over the rankings that hold it, of
# 1 / (k + rank), its rank counted from 1; a ranking that does not hold it
# adds nothing. With k = 60 the first place is worth 1/61 and the tenth
# 1/70: being found by both retrievers beats being first in one. Its one
# setting is k: the smaller it is, the more a top rank counts over a lower one.
# rag10 chose k = 10 for its two rankings on the dev split; this lab keeps 60,
# the value RRF's authors set and the usual default, untuned, and tunes the
# weighted mix below instead. The sums are kept
# exact, as fractions: added as floats, 1/61 + 1/62 + 1/63 can come out a
# hair away from 1/63 + 1/62 + 1/61, and a tie would be decided by rounding.
#
# A **convex combination** keeps the scores, made comparable first: each
# retriever's scores are min-max normalised over the candidates (the best
# becomes 1, the worst 0), then mixed as alpha * meaning + (1 - alpha) *
# words. It uses more of what the retrievers know (by how much the first
# beat the second, not only that it did), but alpha has to be chosen. Here
# the dev split chooses it; the test split only reports. A choice on a few
# hundred questions is itself a measurement: the lab prints each alpha's dev
# recall with its interval, and the best one's paired difference from each
# other alpha. Where dev cannot tell the best from the others, the lab says
# so and keeps, among those it cannot tell apart, the alpha nearest 0.5 (the
# same weight on each side: the choice that assumes nothing).


# %%
def reciprocal_rank_fusion(rankings, k=RRF_K):
    """The items of all `rankings` (each a list, best first, an item at most once) in one list,
    best first, by the sum over the rankings holding an item of 1 / (k + its rank), ranks from 1.

    The sums are exact: each 1 / (k + rank) is a fractions.Fraction (k an int), so two items tie
    exactly when their sums are equal, in whatever order their terms were added (floats would
    round: 1/61 + 1/62 + 1/63 and 1/63 + 1/62 + 1/61 can differ in the last bit). Ties keep the
    order in which the items are first met, reading the whole first ranking, then the second,
    and so on.
    """
    # TODO(rag11): Fuse several rankings into one by their ranks alone, because the retrievers'
    #   scores are on scales that cannot be added.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) reciprocal_rank_fusion(): Fuse several rankings into one by their ranks "
        "alone, because the retrievers' scores are on scales that cannot be added. More help: "
        "python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


def convex_fusion(word_scores, meaning_scores, alpha):
    """alpha * m + (1 - alpha) * w for each candidate: a list, one number per candidate, in order.

    `word_scores` and `meaning_scores` hold one score per candidate, in the same order; w and m
    are them min-max normalised, (score - lowest) / (highest - lowest), so each runs from 0 to 1,
    or 0 for all when the lowest is the highest (scores that rank nothing).
    """
    # TODO(rag11): Mix the two retrievers' scores with weight alpha on meaning, once each is
    #   brought to one scale, from 0 (its worst candidate) to 1 (its best), because raw
    #   BM25 scores would drown the cosines.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) convex_fusion(): Mix the two retrievers' scores with weight alpha on "
        "meaning, once each is brought to one scale, from 0 (its worst candidate) to 1 (its "
        "best), because raw BM25 scores would drown the cosines. More help: python "
        "labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 4. The reader gets parents
#
# Whatever ranked them, the units are rag10's, and so is the reading: each
# unit's parent once, in the order of its best unit (rag10's `best_parents`),
# read within the budget, a window of a parent too big for what is left
# (rag10's `assemble`). `read_parents` puts the two together for one
# ranking. Units and parents are `(doc_id, start, end)` spans of the pages;
# `parent_of[row]` is the row in `parents` of unit `row`'s parent, or None.


# %%
def read_parents(pages, ranked, units, parent_of, parents, budget_tokens=BUDGET_TOKENS):
    """The (doc_id, start, end) spans a reader gets for the `ranked` units (rows of `units`, best first):
    their parents, each once, in the order of its best unit, read within `budget_tokens` by
    rag10's assemble (with its own span_tokens)."""
    # TODO(rag11): Hand the reader the parents of the best units, each once and within the budget,
    #   as rag10 does, whichever retriever ranked the units.
    #   More help: python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag11) read_parents(): Hand the reader the parents of the best units, each once "
        "and within the budget, as rag10 does, whichever retriever ranked the units. More help: "
        "python labs/rag11-hybrid-search.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 5. Search
#
# The index is rag10's (its units, their parents, their vectors) with BM25
# over the same units: each unit's embedded text (its header, its context,
# its text), so both retrievers see the same words. Each question is ranked
# both ways: by meaning as rag10 ranks, its best DEPTH units; by words, its
# best DEPTH units among those sharing a term with it. Then fused, and read.
# `search` fuses by RRF with k = 60 (section 3).


# %%
@dataclass
class Hybrid:
    """The two indexes of one set of pages: rag10's, by meaning, and BM25's over the same units, by words."""

    index: object  # rag10's Index: its units, parents and vectors
    words: Words  # BM25 over the same units' embedded text
    units: list  # (doc_id, start, end) of each unit of the index
    parents: list  # (doc_id, start, end) of each parent


class Ranked(NamedTuple):
    """One question's units, ranked both ways, with the scores that ranked them."""

    words: list  # rows sharing a term with the question, best BM25 first, DEPTH at most
    meaning: list  # rows, best rag10 score first, DEPTH
    word_scores: np.ndarray  # a score per unit
    meaning_scores: np.ndarray


def build_hybrid(pages, title=TITLE, embedder=None):
    """rag10's index of `pages` and BM25 over its units, built once per set of pages, title and embedder."""
    key = (tuple(sorted(pages.items())), title, describe_embedder(embedder))  # openai: its model and server too
    if key not in HYBRIDS:
        index = rag10.build_index(pages, title, embedder)
        units = [(unit.doc_id, unit.start, unit.end) for unit in index.units]
        parents = [(doc_id, chunk.start, chunk.end) for doc_id, chunk in index.parents]
        HYBRIDS[key] = Hybrid(index, word_index([unit.embedded for unit in index.units]), units, parents)
    return HYBRIDS[key]


HYBRIDS = {}


def ranked_units(hybrid, questions, embedder=None):
    """A Ranked per question: rag10's scores for all questions in one matrix product, BM25's per question."""
    meaning = rag10.unit_scores(hybrid.index, embed(list(questions), embedder))
    result = []
    for question, dense in zip(questions, meaning):
        lexical = word_scores(hybrid.words, question)
        by_words = [int(row) for row in np.argsort(-lexical, kind="stable")[:DEPTH] if lexical[row] > 0]
        result.append(Ranked(by_words, np.argsort(-dense, kind="stable")[:DEPTH].tolist(), lexical, dense))
    return result


def by_weight(ranked, alpha):
    """The candidates (both rankings' units) by convex_fusion of their two scores, best first."""
    pool = list(dict.fromkeys(ranked.meaning + ranked.words))
    fused = np.asarray(convex_fusion(ranked.word_scores[pool].tolist(), ranked.meaning_scores[pool].tolist(),
                                     alpha), dtype=float)
    return [pool[place] for place in np.argsort(-fused, kind="stable")[:DEPTH]]


METHODS = {  # each: a question's Ranked and alpha -> its units, best first
    "words": lambda ranked, alpha: ranked.words,
    "meaning": lambda ranked, alpha: ranked.meaning,
    "RRF": lambda ranked, alpha: reciprocal_rank_fusion([ranked.words, ranked.meaning])[:DEPTH],
    "weighted": by_weight,
}


def read(hybrid, ranking, budget_tokens=BUDGET_TOKENS):
    """read_parents of one ranking, on the hybrid's pages, units and parents."""
    return read_parents(hybrid.index.pages, ranking, hybrid.units, hybrid.index.parent_of, hybrid.parents,
                        budget_tokens)


def search(pages, questions, budget_tokens=BUDGET_TOKENS, title=TITLE, embedder=None):
    """For each question, the (doc_id, start, end) spans a reader gets, best first, within budget:
    rag10's parents of the units ranked by words and by meaning, fused by RRF.

    `title` goes into every header, as rag7's; `embedder` is embed()'s model (None: the default).
    """
    hybrid = build_hybrid(pages, title, embedder)
    if not questions:
        return []
    if not hybrid.units:
        return [[] for _ in questions]
    return [read(hybrid, METHODS["RRF"](ranked, None), budget_tokens)
            for ranked in ranked_units(hybrid, questions, embedder)]


# %% [markdown]
# ## 6. Does it pay? At equal reading cost
#
# rag8's harness and rag10's figure: recall within 1,000 retrieved tokens,
# by kind of question, on the test split. Words alone, meaning alone (which
# is rag10's search by its units: the lab checks it hands over the same
# spans), both fused, rag7's chunks with a chunk per table row (the course's
# recommended chunker), and rag10's own search, which fuses its units'
# ranking with rag7's chunks'. Each recall comes with its 95% interval, and
# each method's difference from words alone (the classic baseline: does
# anything beat BM25?) with its paired interval, `~` where it holds 0; the
# sentences under the table are written by the run from those intervals.
#
# Then questions of the test split, chosen by what the rankings found: one
# words find and meaning misses, one the other way round, and one that only
# fusion finds (each where the split has one), with the rank each ranking
# gave the best unit lying on the answer. For the last, that rank says why:
# found by both sides, neither high, its two 1 / (k + rank) add up to more
# than a unit found high by one side alone.
#
# Why do words do so well here? The Orbit questions name identifiers
# (`api.rate_limit_per_minute`, `ORB-4024`, `--no-pager`), and their answers
# hold them: an exact, rare string, the best match BM25 can have. The
# embedder, wordllama by default, is a *static* model: each token has one
# vector whatever its context, and a text's vector is the mean of its
# tokens'. A rare identifier is cut into common pieces, and their mean is
# near every unit that uses them. So the lab splits the questions by
# whether they name an identifier their answer holds, and compares the two
# sides on each. A contextual model (a transformer: `ACADEMY_EMBEDDER=openai`
# with a real model behind it) reads the text as a whole; the lab says what
# a run with one would test, and the same table, printed with it, answers.

# %%
NAMES = {"words": "words (BM25)", "meaning": "meaning (rag10 units)", "RRF": f"both, RRF k={RRF_K}",
         "weighted": "both, weighted", "rag7": "rag7, table rows", "rag10": "rag10, fused"}


def found_all(hybrid, questions, alpha):
    """({method: each question's spans} for the four methods, rag7's chunks with table rows and rag10's
    search; a Ranked per question, the rankings the four methods read)."""
    ranked = ranked_units(hybrid, [q["question"] for q in questions])
    hits = {method: [read(hybrid, rank(one, alpha)) for one in ranked] for method, rank in METHODS.items()}
    hits["rag7"] = rag10.baseline_hits("header + table rows", questions)
    hits["rag10"] = rag10.search(hybrid.index.pages, [q["question"] for q in questions])
    return hits, ranked


def mean_recall(questions, spans, kind="all"):
    """Mean recall within the budget over the questions of `kind` ("all": every one)."""
    scores = [rag10.recall_within(found, q) for q, found in zip(questions, spans) if kind in (q["kind"], "all")]
    return sum(scores) / len(scores) if scores else 0.0


def recalls(questions, spans):
    """Each question's recall within the budget, in order: the scores the intervals resample."""
    return [rag10.recall_within(found, question) for question, found in zip(questions, spans)]


def step_alpha(hybrid, questions):
    """The convex combination's alpha, chosen on the dev split, and how sure the choice is.

    The best dev recall (a tie to the nearer 0.5), if dev shows it better than every other alpha;
    otherwise, among the alphas whose paired difference from the best holds 0, the one nearest 0.5.
    """
    ranked = ranked_units(hybrid, [q["question"] for q in questions])
    print(f"\n2. alpha, the weight of meaning, chosen on the {len(questions)} dev questions")
    best_words = [float(one.word_scores.max()) for one in ranked]
    best_meaning = [float(one.meaning_scores.max()) for one in ranked]
    print("   a question's best unit scores (the middle 90% of them): "
          f"{np.quantile(best_meaning, 0.05):.2f} to {np.quantile(best_meaning, 0.95):.2f} by meaning (a cosine), "
          f"{np.quantile(best_words, 0.05):.1f} to {np.quantile(best_words, 0.95):.1f} by words (BM25)")
    scores = {alpha: recalls(questions, [read(hybrid, by_weight(one, alpha)) for one in ranked]) for alpha in ALPHAS}
    best = max(ALPHAS, key=lambda a: (np.mean(scores[a]), -abs(a - 0.5)))
    behind = {alpha: paired_difference(scores[alpha], scores[best]) for alpha in ALPHAS if alpha != best}
    print(f"   alpha   recall within {BUDGET_TOKENS:,} tokens   the best ({best}) minus it, paired")
    for alpha in ALPHAS:
        versus = "the best on dev" if alpha == best else (
            f"{behind[alpha]}  {'shown' if behind[alpha].shown else 'not shown by this data'}")
        print(f"   {alpha:<7} {mean_interval(scores[alpha]).plain():<26} {versus}")
    tied = [alpha for alpha in ALPHAS if alpha == best or not behind[alpha].shown]
    if len(tied) == 1:
        print(f"   dev shows alpha {best} better than every other alpha: it is kept")
        return best
    alpha = min(tied, key=lambda a: (abs(a - 0.5), a))
    others = ", ".join(str(a) for a in tied if a != best)
    print(f"   dev cannot choose: the best, {best}, is not shown better than {others}.\n"
          f"   Of the alphas it cannot tell apart ({', '.join(map(str, tied))}), the lab keeps the one nearest 0.5 "
          f"(an equal weight on each side), {alpha}: the test split reports it with that caveat")
    return alpha


def step_compare(questions, hits, alpha):
    """The table: recall within the budget by kind, a row per method, each with its interval; each
    method's paired difference from words alone; and the sentences the intervals support."""
    print(f"\n3. Recall within {BUDGET_TOKENS:,} retrieved tokens, by kind ({len(questions)} test questions, "
          f"{describe_embedder()}), each with its 95% interval")
    names = {**NAMES, "weighted": f"{NAMES['weighted']} a={alpha}"}
    scores = {method: recalls(questions, spans) for method, spans in hits.items()}
    comparison = rag10.compare(questions, scores, "words")
    rag10.print_comparison(comparison, names, 22)
    print("   What this data shows:")
    overall = {method: comparison.scores[method]["all"] for method in comparison.scores}
    lines = rag10.kind_claims(comparison.difference["RRF"], names["RRF"], names["words"])
    lines += [claim(paired_difference(overall[other], overall[ours]), names[ours], names[other])
              for ours, other in (("RRF", "meaning"), ("weighted", "RRF"), ("RRF", "rag10"), ("RRF", "rag7"))]
    for line in lines:
        print(f"   - {line}")
    return comparison


class Example(NamedTuple):
    """A question shown, and what the methods made of it."""

    label: str
    question: dict
    tokens: dict  # method -> tokens read up to the answer, or None where it is not all handed over
    shared: list  # (units holding it, term) for each term the question and its answer share, rarest first
    ranks: dict = {}  # method -> the rank (from 1) it gives the answer's unit, None if it does not rank it


class Rule(NamedTuple):
    """Which question to show: one that the methods `finds` all find and `misses` all miss, of kind
    `kind` if one is, with the rarest shared term if `rare`, then where `winner` reads least."""

    label: str
    kind: str | None
    rare: bool
    winner: str
    finds: tuple
    misses: tuple


RULES = (Rule("words find, meaning misses", "identifier", True, "words", ("words",), ("meaning",)),
         Rule("meaning finds, words miss", "prose", False, "meaning", ("meaning",), ("words",)),
         Rule("only fusion finds", None, False, "RRF", ("RRF",), ("words", "meaning")))


def tokens_to_answer(spans, question, pages):
    """Tokens read up to the span that completes the answer (every gold span held whole), or None."""
    missing, read = set(harness.gold_spans(question)), 0
    for doc_id, start, end in spans:
        read += count_tokens(pages[doc_id][start:end])
        missing = {gold for gold in missing if not harness.holds((doc_id, start, end), gold)}
        if not missing:
            return read
    return None


def held(words, term):
    """How many documents of `words` hold `term`."""
    first, last = words.terms[term]
    return last - first


def answer_ranks(rankings, hybrid, question):
    """{method: the rank (from 1) its ranking gives the answer's unit, or None}. `rankings`: {method: unit
    rows, best first}. The answer's unit is the unit sharing a character with a gold span that RRF ranks
    best (or, if RRF ranks none, words, then meaning): one unit, so that its RRF score is the sum of
    1 / (k + rank) over the two ranks printed beside it."""
    gold = harness.gold_spans(question)
    on_answer = {row for row, (doc_id, start, end) in enumerate(hybrid.units)
                 if any(doc_id == page and start < last and first < end for page, first, last in gold)}
    unit = next((row for method in ("RRF", "words", "meaning") for row in rankings[method] if row in on_answer), None)
    return {method: ranking.index(unit) + 1 if unit in ranking else None for method, ranking in rankings.items()}


def examples(questions, hits, hybrid, ranked, alpha):
    """An Example for each of RULES that some question of the split meets, with the ranks each
    method's ranking (`ranked`, a Ranked per question) gave the answer."""
    shown = []
    for number, question in enumerate(questions):
        tokens = {method: tokens_to_answer(hits[method][number], question, hybrid.index.pages) for method in METHODS}
        answer = set(search_terms(question["answer"]))
        shared = sorted((held(hybrid.words, term), term)
                        for term in dict.fromkeys(search_terms(question["question"])) if term in answer)
        shown.append(Example("", question, tokens, shared))
    chosen = []
    for rule in RULES:
        met = [example._replace(label=rule.label) for example in shown
               if all(example.tokens[m] is not None for m in rule.finds)
               and all(example.tokens[m] is None for m in rule.misses)]
        if met:
            example = min(met, key=lambda e: (e.question["kind"] != rule.kind,
                                              e.shared[0][0] if rule.rare and e.shared else 0,
                                              e.tokens[rule.winner]))
            one = ranked[questions.index(example.question)]
            rankings = {method: list(rank(one, alpha)) for method, rank in METHODS.items()}
            chosen.append(example._replace(ranks=answer_ranks(rankings, hybrid, example.question)))
    return chosen


def step_examples(chosen, n_units):
    """Each example: the question, its answer, how much each method read to it, and the terms they share."""
    print("\n4. Test questions one method finds and another misses: tokens read up to the answer "
          "(- where it is not handed over)")
    for example in chosen:
        question = example.question
        print(f"   {example.label}: {question['question']!r} ({question['kind']})")
        print(f"     answer: {rag10.short(question['answer'])}")
        print("     " + ", ".join(f"{method} {example.tokens[method] or '-'}" for method in METHODS))
        asked = len(set(search_terms(question["question"])))
        line = f"     the answer holds {len(example.shared)} of the question's {asked} terms"
        if example.shared:
            line += f"; the rarest, {example.shared[0][1]!r}, is in {example.shared[0][0]:,} of {n_units:,} units"
        print(line)
        print(f"     the rank each gives the answer's unit, of {DEPTH} ranked: "
              + ", ".join(f"{method} {example.ranks[method] or '-'}" for method in METHODS))
        if example.label == "only fusion finds":
            print(f"     {why_fused(example.ranks)}")


def why_fused(ranks):
    """Why RRF reads the answer that neither side alone reads, from the ranks each side gave it."""
    words, meaning = ranks["words"], ranks["meaning"]
    if words is None or meaning is None:
        side, rank = ("words", words) if meaning is None else ("meaning", meaning)
        return (f"only {side} ranks this unit ({rank}): the fused ranking reads its parent within the budget, "
                f"where {side} alone reads other parents first")
    total = Fraction(1, RRF_K + words) + Fraction(1, RRF_K + meaning)
    beaten = math.ceil(1 / total) - RRF_K - 1  # the worst rank whose 1 / (k + rank) alone still beats the sum
    alone = (f"only a unit ranked {beaten} or better by one side alone beats it" if beaten >= 1 else
             f"more than any unit one side alone ranks, even first (1/{RRF_K + 1} = {1 / (RRF_K + 1):.4f})")
    return (f"both sides rank it, neither alone reads the answer in the budget: RRF gives it 1/{RRF_K + words} + "
            f"1/{RRF_K + meaning} = {float(total):.4f}, {alone}")


def has_identifier(text):
    """The identifiers of `text`: its compound terms (words joined by . _ -: a dotted key, a flag, an
    error code, a version), as search_terms gives them."""
    return {term for term in search_terms(text) if not term.isalnum()}


def step_why_words(questions, scores, pages, example):
    """Words against meaning on the questions naming an identifier their answer holds, and on the others;
    what the two gaps say. Returns {group: Interval of meaning minus words}."""
    answers = [" ".join(pages[d][s:e] for d, s, e in harness.gold_spans(question)) for question in questions]
    named = [bool(has_identifier(question["question"]) & has_identifier(answer))
             for question, answer in zip(questions, answers)]
    shared = [len(set(search_terms(question["question"])) & set(search_terms(answer)))
              for question, answer in zip(questions, answers)]
    holding = sum(bool(has_identifier(answer)) for answer in answers)
    print(f"\n5. Words against meaning: {sum(named)} of {len(questions)} test questions name an identifier "
          f"their answer holds\n   (a compound term: a dotted key, a flag, an error code, a version); "
          f"{holding} of the {len(questions)} answers hold one")
    gaps, ahead = {}, {}
    for label, keep in (("naming one", True), ("naming none", False)):
        rows = [number for number, flag in enumerate(named) if flag == keep]
        if not rows:
            print(f"   {label}: no question")
            continue
        words, meaning = ([scores[method][number] for number in rows] for method in ("words", "meaning"))
        gaps[label], ahead[label] = paired_difference(words, meaning), paired_difference(meaning, words)
        print(f"   {label + f' ({len(rows)})':<17} words {mean_interval(words).plain()}, "
              f"meaning {mean_interval(meaning).plain()}; their answers hold a median "
              f"{np.median([shared[number] for number in rows]):g} of their terms")
        print(f"     {claim(ahead[label], 'words', 'meaning')}")
    print(f"   {why_words(ahead)}")
    if embedder_name() in rag10.MEAN_POOLING:
        term = next((t for _, t in example.shared if not t.isalnum()), None) if example else None
        named_term = f" such as {term!r}" if term else ""
        print(f"   {embedder_name()} is a static model: a token's vector is the same in every context, and a text's "
              f"is the mean of its tokens'.\n   An identifier{named_term} is cut into common pieces, and the mean "
              "of their vectors lies near every unit that uses them.")
    return gaps


def why_words(ahead):
    """What the two gaps ({group: Interval of words minus meaning}) say about where words lead."""
    named, other = ahead.get("naming one"), ahead.get("naming none")
    if named is None or other is None:
        return "one group has no question: this split cannot compare them"
    on_named, on_other = (gap.shown and gap.estimate > 0 for gap in (named, other))
    if on_named and on_other:
        return ("words lead on both groups: identifiers are part of it, not all; the other questions "
                "reuse their answers' words too")
    if on_named:
        rest = "meaning leads there" if other.shown else "a difference is not shown by this data"
        return f"so the lead of words is on the questions naming an identifier; on the others {rest}"
    if on_other:
        return ("words lead on the questions naming no identifier; on those naming one, this data does not "
                "show them ahead")
    return "this data shows words ahead on neither group"


def step_stronger(comparison, gaps):
    """What a run with a contextual embedder would test, with this run's figures to compare."""
    figures = [f"meaning minus words, questions {label}: {gap}"
               for label, gap in (("naming an identifier", gaps.get("naming one")),
                                  ("naming none", gaps.get("naming none"))) if gap is not None]
    figures.append(f"RRF minus words, all questions: {comparison.difference['RRF']['all']}")
    rrf = comparison.scores["RRF"]["all"]
    figures.append(f"RRF minus meaning, all questions: {paired_difference(comparison.scores['meaning']['all'], rrf)}")
    if embedder_name() in rag10.MEAN_POOLING:
        print(f"\n6. What a stronger embedder would change: a contextual model (ACADEMY_EMBEDDER=openai, a real "
              f"model behind OPENAI_BASE_URL)\n   prints this same table. It tests whether meaning closes its gap "
              f"to words, and whether fusion still adds to the better side.\n   This run, with {embedder_name()}:")
    else:
        print(f"\n6. This run embeds with {describe_embedder()}: beside the default run (wordllama), it shows what "
              "this embedder changes.\n   With it:")
    for figure in figures:
        print(f"   - {figure}")


# %% [markdown]
# ## 7. Tricky inputs
#
# Before it searches, the lab checks your functions on cases worked out by
# hand. BM25 on a corpus of three documents: "lease lost" (2 terms),
# "satellite lost satellite lease" (4) and "satellite lease port port port
# lease" (6), a mean length of 4, where a term in one document has idf
# ln(1 + 2.5/1.5) = ln(8/3), in two ln(1.6), in all three ln(8/7); RRF on
# two short rankings, and its ties; identifiers, versions and flags.

# %%
TERM_CASES = [
    Case("an empty text", search_terms, ("",), returns([])),
    Case("capitals and a full stop", search_terms, ("Orbit runs JOBS.",), returns(["orbit", "runs", "jobs"])),
    Case("an identifier: the whole, then its parts", search_terms, ("storage.postgres_max_idle_conns",),
         returns(["storage.postgres_max_idle_conns", "storage", "postgres", "max", "idle", "conns"])),
    Case("a flag: the dashes before it join nothing", search_terms, ("--no-pager",),
         returns(["no-pager", "no", "pager"])),
    Case("an error code and a version at a sentence's end", search_terms, ("ORB-4024 in 2.6.1.",),
         returns(["orb-4024", "orb", "4024", "in", "2.6.1", "2", "6", "1"])),
    Case("a run of joiners", search_terms, ("snake__case",), returns(["snake__case", "snake", "case"])),
    Case("a joiner with nothing after it", search_terms, ("a_ b",), returns(["a", "b"])),
    Case("other characters end a term", search_terms, ("x=1 /etc/orbit 'quoted' `tick`",),
         returns(["x", "1", "etc", "orbit", "quoted", "tick"])),
    Case("letters beyond ASCII", search_terms, ("Café ÉTÉ 토큰",), returns(["café", "été", "토큰"])),
]

IDF_1, IDF_2, IDF_3 = math.log(8 / 3), math.log(1.6), math.log(8 / 7)  # df = 1, 2, 3 of N = 3
WEIGHT_CASES = [
    Case("once, in a document of mean length", bm25_weight, (1, 1, 3, 4, 4), returns(IDF_1 / 2.2)),
    Case("twice: more, but not twice as much", bm25_weight, (2, 1, 3, 4, 4), returns(IDF_1 * 2 / 3.2)),
    Case("a thousand times: still less than the idf", bm25_weight, (1000, 1, 3, 4, 4),
         returns(IDF_1 * 1000 / 1001.2)),
    Case("a short document counts more", bm25_weight, (1, 1, 3, 2, 4), returns(IDF_1 / 1.75)),
    Case("a long document counts less", bm25_weight, (1, 1, 3, 6, 4), returns(IDF_1 / 2.65)),
    Case("a term in every document still adds a little", bm25_weight, (1, 3, 3, 4, 4), returns(IDF_3 / 2.2)),
    Case("b = 0: length does not matter", bm25_weight, (1, 1, 3, 2, 4), returns(IDF_1 / 2.2), dict(b=0)),
    Case("k1 = 0: one occurrence is as good as any", bm25_weight, (5, 2, 3, 6, 4), returns(IDF_2), dict(k1=0)),
]

CORPUS = [["lease", "lost"], ["satellite", "lost", "satellite", "lease"],
          ["satellite", "lease", "port", "port", "port", "lease"]]
POSTINGS = {
    "lease": [(0, IDF_3 / 1.75), (1, IDF_3 / 2.2), (2, IDF_3 * 2 / 3.65)],
    "lost": [(0, IDF_2 / 1.75), (1, IDF_2 / 2.2)],
    "satellite": [(1, IDF_2 * 2 / 3.2), (2, IDF_2 / 2.65)],
    "port": [(2, IDF_1 * 3 / 4.65)],
}


def postings(expected):
    """A judge for bm25_index: the same terms, each with the same rows in order, weights up to rounding."""
    def judge(result, *args, **keywords):
        got = {term: [(row, float(weight)) for row, weight in pairs] for term, pairs in dict(result).items()}
        if sorted(got) != sorted(expected):
            raise ValueError(f"returned the terms {sorted(got)}, expected {sorted(expected)}")
        for term, pairs in expected.items():
            if [row for row, _ in got[term]] != [row for row, _ in pairs] or not np.allclose(
                    [w for _, w in got[term]], [w for _, w in pairs], rtol=1e-9, atol=1e-12):
                raise ValueError(f"returned {term!r}: {got[term]}, expected {pairs}")
    return judge


INDEX_CASES = [
    Case("no documents", bm25_index, ([],), returns({})),
    Case("an empty document counts in the mean length", bm25_index, ([[], ["a"]],),
         postings({"a": [(1, math.log(2) / 3.1)]})),
    Case("three documents, worked out by hand", bm25_index, (CORPUS,), postings(POSTINGS)),
    Case("three documents, no length normalisation", bm25_index, (CORPUS,), postings({
        "lease": [(0, IDF_3 / 2.2), (1, IDF_3 / 2.2), (2, IDF_3 * 2 / 3.2)],
        "lost": [(0, IDF_2 / 2.2), (1, IDF_2 / 2.2)],
        "satellite": [(1, IDF_2 * 2 / 3.2), (2, IDF_2 / 2.2)],
        "port": [(2, IDF_1 * 3 / 4.2)]}), dict(b=0)),
]

RRF_CASES = [
    Case("no rankings", reciprocal_rank_fusion, ([],), returns([])),
    Case("two short rankings", reciprocal_rank_fusion, ([["a", "b", "c"], ["c", "a", "d"]],),
         returns(["a", "c", "b", "d"])),
    Case("the same two in reverse: a tie, the first met first", reciprocal_rank_fusion, ([["a", "b"], ["b", "a"]],),
         returns(["a", "b"])),
    Case("a tie between two rankings of one item", reciprocal_rank_fusion, ([["b"], ["a"]],), returns(["b", "a"])),
    Case("disjoint rankings: ties at each rank", reciprocal_rank_fusion, ([["a", "b"], ["c", "d"]],),
         returns(["a", "c", "b", "d"])),
    Case("k = 1: found twice low beats once at the top, ranks counted from 1", reciprocal_rank_fusion,
         ([["a", "c", "b"], ["d", "b"]],), returns(["b", "a", "d", "c"]), dict(k=1)),
    Case("unit rows, one ranking empty", reciprocal_rank_fusion, ([[], [7, 0, 3]],), returns([7, 0, 3])),
]

CONVEX_CASES = [
    Case("no candidates", convex_fusion, ([], [], 0.5), returns([])),
    Case("half and half", convex_fusion, ([0, 5, 10], [0.2, 0.4, 0.3], 0.5), returns([0.0, 0.75, 0.75])),
    Case("alpha 1: meaning alone", convex_fusion, ([0, 5, 10], [0.2, 0.4, 0.3], 1), returns([0.0, 1.0, 0.5])),
    Case("alpha 0: words alone", convex_fusion, ([0, 5, 10], [0.2, 0.4, 0.3], 0), returns([0.0, 0.5, 1.0])),
    Case("no word matches: words add 0", convex_fusion, ([0, 0, 0], [0.1, 0.2, 0.3], 0.5),
         returns([0.0, 0.25, 0.5])),
    Case("negative cosines, BM25 in the tens", convex_fusion, ([30, 10], [-0.5, 0.5], 0.6), returns([0.4, 0.6])),
]

PAGES = {"a": "One two. Three four.", "b": "Five six."}  # "One two. Three four." is 5 tokens, "Five six." 3
UNITS = [("a", 0, 8), ("a", 9, 20), ("b", 0, 9)]
PARENT_SPANS = [("a", 0, 20), ("b", 0, 9)]

READ_CASES = [
    Case("nothing ranked", read_parents, (PAGES, [], UNITS, [0, 0, 1], PARENT_SPANS, 100), returns([])),
    Case("two units of one parent: it is read once", read_parents,
         (PAGES, [1, 0, 2], UNITS, [0, 0, 1], PARENT_SPANS, 100), returns([("a", 0, 20), ("b", 0, 9)])),
    Case("parents in the order of their best unit", read_parents,
         (PAGES, [2, 0], UNITS, [0, 0, 1], PARENT_SPANS, 100), returns([("b", 0, 9), ("a", 0, 20)])),
    Case("a unit without a parent", read_parents, (PAGES, [0, 2], UNITS, [None, 0, 1], PARENT_SPANS, 100),
         returns([("b", 0, 9)])),
    Case("the budget spent after the first parent", read_parents,
         (PAGES, [2, 0], UNITS, [0, 0, 1], PARENT_SPANS, 3), returns([("b", 0, 9)])),
]


def main():
    if embedder_name() != "wordllama":  # not the default: say which, before it is used
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), for meaning and for rag7's chunks\n")
    print("0. Your functions, checked first on cases worked out by hand")
    checks = Invariants("rag11")
    batteries = (("search_terms", TERM_CASES), ("bm25_weight", WEIGHT_CASES), ("bm25_index", INDEX_CASES),
                 ("reciprocal_rank_fusion", RRF_CASES), ("convex_fusion", CONVEX_CASES),
                 ("read_parents", READ_CASES))
    if not all([checks.check_cases(f"tricky inputs: {name} as worked out by hand", cases)
                for name, cases in batteries]):
        print("   The search is built on them: fix them, then search.")
        return checks.verdict()

    pages = corpus_pages()
    hybrid = build_hybrid(pages)
    print(f"\n1. {len(hybrid.units):,} units (rag10's small units and parents), embedded and in BM25: "
          f"{len(hybrid.words.terms):,} terms, {len(hybrid.words.rows):,} postings")
    alpha = step_alpha(hybrid, corpus_questions("dev"))
    questions = corpus_questions("test")
    hits, ranked = found_all(hybrid, questions, alpha)
    comparison = step_compare(questions, hits, alpha)
    chosen = examples(questions, hits, hybrid, ranked, alpha)
    step_examples(chosen, len(hybrid.units))
    words_example = next((example for example in chosen if example.label == RULES[0].label), None)
    scores = {method: comparison.scores[method]["all"] for method in METHODS}  # each question's recall, in order
    gaps = step_why_words(questions, scores, pages, words_example)
    step_stronger(comparison, gaps)

    print("\nInvariants")
    spans = [found for method in METHODS for found in hits[method]]
    bad = next(((d, s, e) for found in spans for d, s, e in found if not (d in pages and 0 <= s < e <= len(pages[d]))),
               None)
    spent = max(sum(count_tokens(pages[d][s:e]) for d, s, e in found) for found in spans)
    checks.check(f"every span an exact slice of its page, each question's within {BUDGET_TOKENS:,} tokens, "
                 "by every method", bad is None and spent <= BUDGET_TOKENS,
                 f"{bad} is no slice" if bad else f"at most {spent} used")
    overlap = rag10.no_overlaps(spans)
    checks.check("no text handed over twice: no two spans of a question overlap", overlap is None,
                 f"{overlap[0]} and {overlap[1]}" if overlap else "")
    same = hits["meaning"] == rag10.search(pages, [q["question"] for q in questions], with_chunks=False)
    checks.check("meaning alone, read by read_parents, is rag10's search by its units: the same spans", same)
    shown = [example.question for example in chosen] or questions[:1]  # the questions step 4 shows, chosen by the run
    fused = [hits["RRF"][questions.index(question)] for question in shown]
    checks.check("search() hands over what RRF found, for the questions shown", search(
        pages, [question["question"] for question in shown]) == fused, f"{len(shown)} questions")
    # Last, the public grading tests (tests/grading/test_rag11.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


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
