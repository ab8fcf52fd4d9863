"""rag11's given ground: rag10's units and parents (from given ground, as labkit/lessons/rag10.py reads
them: a student stuck on rag10 still runs rag11), BM25's postings packed for scoring, both rankings of
each question, what the demonstration prints (recall by kind, what fusion buys over meaning alone on
the questions that name an identifier or share words with their answer, the fusion-weight dial chosen
on dev and reported on test) and the checks the lab ends with. A curious student may read it; the lab
is learnt without it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from academy_llm import DEFAULT_EMBEDDER, count_tokens, describe_embedder, embed, embedder_name
from labkit.cases import Case, Invariants, returns
from labkit.lessons import rag10 as lesson10
from labkit.lessons.dial import say
from labkit.retrieval import answer_shares, gold_spans
from labkit.uncertainty import NOT_SHOWN, mean_interval, paired_difference

DEPTH = lesson10.DEPTH  # how many units of each ranking are fused and read, at most
BUDGET_TOKENS = lesson10.BUDGET_TOKENS


# ---- BM25 ready to score, and the two rankings -------------------------------------------------------

class Words(NamedTuple):
    """BM25 over a corpus, ready to score questions: the postings of all terms in two flat arrays."""

    terms: dict  # term -> (first, last) of its postings in `rows` and `weights`
    rows: np.ndarray  # the documents holding each term, term after term
    weights: np.ndarray  # the term's weight in each
    n_documents: int


def pack(postings, n_documents):
    """Words of bm25_index's {term: [(row, weight), ...]}: flat arrays, so a question adds weights in numpy."""
    ends = np.cumsum([len(pairs) for pairs in postings.values()], dtype=np.int64)
    terms = {term: (int(end) - len(pairs), int(end)) for (term, pairs), end in zip(postings.items(), ends)}
    rows, weights = zip(*(pair for pairs in postings.values() for pair in pairs)) if postings else ((), ())
    return Words(terms, np.array(rows, dtype=np.int64), np.array(weights, dtype=float), n_documents)


def word_scores(words, terms):
    """Every document's BM25 score for a question's `terms`: the sum of its distinct terms' weights there."""
    scores = np.zeros(words.n_documents)
    for term in dict.fromkeys(terms):
        if term in words.terms:
            first, last = words.terms[term]
            scores[words.rows[first:last]] += words.weights[first:last]
    return scores


@dataclass
class Hybrid:
    """rag10's index of a set of pages (its units, parents, vectors) and BM25 over the same units."""

    index: object
    words: Words

    @property
    def units(self):
        return self.index.spans


class Ranked(NamedTuple):
    """One question's units, ranked both ways, with the scores that ranked them."""

    words: list  # rows sharing a term with the question, best BM25 first, DEPTH at most
    meaning: list  # rows, best rag10 score first, DEPTH
    word_scores: np.ndarray  # a score per unit
    meaning_scores: np.ndarray


def rankings(hybrid, questions, terms_of, embedder=None):
    """A Ranked per question: meaning as rag10 scores its units (all questions in one matrix product),
    words by BM25 over each question's terms (`terms_of(question)`)."""
    meaning = lesson10.unit_scores(hybrid.index, embed(list(questions), embedder))
    return both_rankings(hybrid.words, questions, terms_of, meaning)


def both_rankings(words, questions, terms_of, meaning):
    """rankings, the units' meaning scores given (a row per question)."""
    result = []
    for question, dense in zip(questions, meaning):
        lexical = word_scores(words, terms_of(question))
        by_words = [int(row) for row in np.argsort(-lexical, kind="stable")[:DEPTH] if lexical[row] > 0]
        result.append(Ranked(by_words, np.argsort(-dense, kind="stable")[:DEPTH].tolist(), lexical, dense))
    return result


# ---- the report -------------------------------------------------------------------------------------

def weight_dial(dev, test, found, weights):
    """The dial: recall within the budget at each weight of meaning, on dev and on test ({weight: (dev
    spans, test spans)}); the weight dev chooses (its best mean), and whether dev shows it better than
    meaning alone (weight 1) and than words alone (0). Returns the chosen weight."""
    dev_scores = {w: answer_shares(dev, found[w][0]) for w in weights}
    test_scores = {w: answer_shares(test, found[w][1]) for w in weights}
    print(f"   {'weight of meaning':>18} {f'dev ({len(dev)}) [95%]':>22} {f'test ({len(test)}) [95%]':>22}")
    for weight in weights:
        print(f"   {weight:>18} {mean_interval(dev_scores[weight]).plain():>22} "
              f"{mean_interval(test_scores[weight]).plain():>22}")
    best = max(weights, key=lambda w: (np.mean(dev_scores[w]), w))  # a tie to more weight on meaning
    lines = [f"Dev chooses weight {best} (its best mean recall)."]
    for other, name in ((1, "meaning alone"), (0, "words alone")):
        if other in dev_scores and other != best:
            dev_gap = paired_difference(dev_scores[other], dev_scores[best])
            test_gap = paired_difference(test_scores[other], test_scores[best])
            lines.append(f"Against {name}, weight {best} is {dev_gap} on dev ({dev_gap.verdict()}) and "
                         f"{test_gap} on test ({test_gap.verdict()}).")
    say(" ".join(lines))
    return best


def identifiers(terms):
    """The compound terms among `terms`: words joined by . _ - (a dotted key, a flag, an error code)."""
    return {term for term in terms if not term.isalnum()}


def groups(questions, pages, terms_of):
    """{group: the rows of the questions in it}: those naming an identifier their answer holds, then of
    the rest, those sharing two terms or more with their answer, and those sharing at most one."""
    named, sharing, apart = [], [], []
    for row, question in enumerate(questions):
        answer = set(terms_of(" ".join(pages[d][s:e] for d, s, e in gold_spans(question))))
        asked = set(terms_of(question["question"]))
        if identifiers(asked) & answer:
            named.append(row)
        elif len(asked & answer) >= 2:
            sharing.append(row)
        else:
            apart.append(row)
    return {"naming an identifier its answer holds": named, "sharing 2+ terms with its answer": sharing,
            "sharing at most 1 term": apart}


def compare_methods(questions, found, chosen, pages, terms_of, embedder=None):
    """Recall within the budget by kind on test, each method against meaning alone; then, by group of
    question, what fusion buys over meaning alone, in the sentences the intervals support."""
    scores = {name: answer_shares(questions, spans) for name, spans in found.items()}
    print(f"\n3. Recall within {BUDGET_TOKENS:,} retrieved tokens, by kind ({len(questions)} test questions, "
          f"{describe_embedder(embedder)}), each with its 95% interval")
    lesson10.print_table(questions, scores, "meaning")
    print("   What this data shows:")
    for name in scores:
        if name != "meaning":
            for line in lesson10.kind_claims(questions, scores[name], scores["meaning"], name, "meaning alone"):
                say(f"- {line}")
    print("\n4. What words add to meaning, by how a question is worded (test split, paired)")
    fused = [name for name in scores if name not in ("words", "meaning")]
    buys, loses = [], []
    for group, rows in groups(questions, pages, terms_of).items():
        if not rows:
            continue
        meaning = [scores["meaning"][row] for row in rows]
        cells = [f"meaning {mean_interval(meaning).plain()}"]
        for name in ["words"] + fused:
            gap = paired_difference(meaning, [scores[name][row] for row in rows])
            cells.append(f"{name} {gap}" + ("" if gap.shown else "~"))
            if name in fused and gap.shown:
                (buys if gap.estimate > 0 else loses).append(f"{name} on questions {group} ({gap})")
        print(f"   {group} ({len(rows)}):\n     " + "; ".join(cells))
    say("~: the interval holds 0. Over meaning alone, "
        + (f"this data shows fusion with words finding more: {'; '.join(buys)}." if buys else
           f"fusion with words finding more is {NOT_SHOWN} on any group.")
        + (f" It shows fusion finding less: {'; '.join(loses)}." if loses else ""))
    return scores


# ---- the checks, worked out by hand -----------------------------------------------------------------

IDF_1, IDF_2, IDF_3 = math.log(8 / 3), math.log(1.6), math.log(8 / 7)  # df = 1, 2, 3 of N = 3
CORPUS = [["lease", "lost"], ["satellite", "lost", "satellite", "lease"],
          ["satellite", "lease", "port", "port", "port", "lease"]]
POSTINGS = {
    "lease": [(0, IDF_3 / 1.75), (1, IDF_3 / 2.2), (2, IDF_3 * 2 / 3.65)],
    "lost": [(0, IDF_2 / 1.75), (1, IDF_2 / 2.2)],
    "satellite": [(1, IDF_2 * 2 / 3.2), (2, IDF_2 / 2.65)],
    "port": [(2, IDF_1 * 3 / 4.65)],
}
PAGES = {"a": "One two. Three four.", "b": "Five six."}  # "One two. Three four." is 5 tokens, "Five six." 3
UNITS = [("a", 0, 8), ("a", 9, 20), ("b", 0, 9)]
PARENT_SPANS = [("a", 0, 20), ("b", 0, 9)]
WIDE = {"w": "\U00029755" * 10 + " tail"}  # 10 characters of 4 tokens each, then 1 more


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


def spans(expected):
    """A judge: the result, read as a list of tuples, equals `expected`."""
    def judge(result, *args, **keywords):
        got = [tuple(item) for item in result]
        if got != expected:
            raise ValueError(f"returned {got}, expected {expected}")
    return judge


def window_of(page, unit, room):
    """A judge: one span of `page` holding `unit`, of room or room - 1 tokens."""
    def judge(result, pages, *args, **keywords):
        got = [tuple(item) for item in result]
        if len(got) != 1 or got[0][0] != page or not got[0][1] <= unit[0] < unit[1] <= got[0][2] or not (
                room - 1 <= count_tokens(pages[page][got[0][1] : got[0][2]]) <= room):
            raise ValueError(f"returned {got}, expected one window of {page!r} around {unit} in {room} tokens")
    return judge


def hand_cases(lab):
    """{function: its cases worked out by hand} for the six functions of `lab` (its globals())."""
    terms, weight, index, rrf, convex, read = (lab[name] for name in (
        "search_terms", "bm25_weight", "bm25_index", "reciprocal_rank_fusion", "convex_fusion", "read_parents"))
    return {
        "search_terms": [
            Case("an empty text", terms, ("",), returns([])),
            Case("capitals and a full stop", terms, ("Orbit runs JOBS.",), returns(["orbit", "runs", "jobs"])),
            Case("an identifier: the whole, then its parts", terms, ("storage.postgres_max_idle_conns",),
                 returns(["storage.postgres_max_idle_conns", "storage", "postgres", "max", "idle", "conns"])),
            Case("a flag: the dashes before it join nothing", terms, ("--no-pager",),
                 returns(["no-pager", "no", "pager"])),
            Case("an error code and a version at a sentence's end", terms, ("ORB-4024 in 2.6.1.",),
                 returns(["orb-4024", "orb", "4024", "in", "2.6.1", "2", "6", "1"])),
            Case("a run of joiners", terms, ("snake__case",), returns(["snake__case", "snake", "case"])),
            Case("a joiner with nothing after it", terms, ("a_ b",), returns(["a", "b"])),
            Case("other characters end a term", terms, ("x=1 /etc/orbit 'quoted' `tick`",),
                 returns(["x", "1", "etc", "orbit", "quoted", "tick"])),
            Case("letters beyond ASCII", terms, ("Café ÉTÉ 토큰",), returns(["café", "été", "토큰"])),
        ],
        "bm25_weight": [
            Case("once, in a document of mean length", weight, (1, 1, 3, 4, 4), returns(IDF_1 / 2.2)),
            Case("twice: more, but not twice as much", weight, (2, 1, 3, 4, 4), returns(IDF_1 * 2 / 3.2)),
            Case("a thousand times: still less than the idf", weight, (1000, 1, 3, 4, 4),
                 returns(IDF_1 * 1000 / 1001.2)),
            Case("a short document counts more", weight, (1, 1, 3, 2, 4), returns(IDF_1 / 1.75)),
            Case("a long document counts less", weight, (1, 1, 3, 6, 4), returns(IDF_1 / 2.65)),
            Case("a term in every document still adds a little", weight, (1, 3, 3, 4, 4), returns(IDF_3 / 2.2)),
            Case("b = 0: length does not matter", weight, (1, 1, 3, 2, 4), returns(IDF_1 / 2.2), dict(b=0)),
            Case("k1 = 0: one occurrence is as good as any", weight, (5, 2, 3, 6, 4), returns(IDF_2), dict(k1=0)),
        ],
        "bm25_index": [
            Case("no documents", index, ([],), returns({})),
            Case("an empty document counts in the mean length", index, ([[], ["a"]],),
                 postings({"a": [(1, math.log(2) / 3.1)]})),
            Case("three documents, worked out by hand", index, (CORPUS,), postings(POSTINGS)),
            Case("three documents, no length normalisation", index, (CORPUS,), postings({
                "lease": [(0, IDF_3 / 2.2), (1, IDF_3 / 2.2), (2, IDF_3 * 2 / 3.2)],
                "lost": [(0, IDF_2 / 2.2), (1, IDF_2 / 2.2)],
                "satellite": [(1, IDF_2 * 2 / 3.2), (2, IDF_2 / 2.2)],
                "port": [(2, IDF_1 * 3 / 4.2)]}), dict(b=0)),
        ],
        "reciprocal_rank_fusion": [
            Case("no rankings", rrf, ([],), returns([])),
            Case("two short rankings", rrf, ([["a", "b", "c"], ["c", "a", "d"]],), returns(["a", "c", "b", "d"])),
            Case("the same two in reverse: a tie, the first met first", rrf, ([["a", "b"], ["b", "a"]],),
                 returns(["a", "b"])),
            Case("a tie between two rankings of one item", rrf, ([["b"], ["a"]],), returns(["b", "a"])),
            Case("disjoint rankings: ties at each rank", rrf, ([["a", "b"], ["c", "d"]],),
                 returns(["a", "c", "b", "d"])),
            Case("k = 1: found twice low beats once at the top, ranks counted from 1", rrf,
                 ([["a", "c", "b"], ["d", "b"]],), returns(["b", "a", "d", "c"]), dict(k=1)),
            Case("unit rows, one ranking empty", rrf, ([[], [7, 0, 3]],), returns([7, 0, 3])),
        ],
        "convex_fusion": [
            Case("no candidates", convex, ([], [], 0.5), returns([])),
            Case("half and half", convex, ([0, 5, 10], [0.2, 0.4, 0.3], 0.5), returns([0.0, 0.75, 0.75])),
            Case("alpha 1: meaning alone", convex, ([0, 5, 10], [0.2, 0.4, 0.3], 1), returns([0.0, 1.0, 0.5])),
            Case("alpha 0: words alone", convex, ([0, 5, 10], [0.2, 0.4, 0.3], 0), returns([0.0, 0.5, 1.0])),
            Case("no word matches: words add 0", convex, ([0, 0, 0], [0.1, 0.2, 0.3], 0.5),
                 returns([0.0, 0.25, 0.5])),
            Case("negative cosines, BM25 in the tens", convex, ([30, 10], [-0.5, 0.5], 0.6), returns([0.4, 0.6])),
        ],
        "read_parents": [
            Case("nothing ranked", read, (PAGES, [], UNITS, [0, 0, 1], PARENT_SPANS, 100), spans([])),
            Case("two units of one parent: it is read once", read,
                 (PAGES, [1, 0, 2], UNITS, [0, 0, 1], PARENT_SPANS, 100), spans([("a", 0, 20), ("b", 0, 9)])),
            Case("parents in the order of their best unit", read,
                 (PAGES, [2, 0], UNITS, [0, 0, 1], PARENT_SPANS, 100), spans([("b", 0, 9), ("a", 0, 20)])),
            Case("a unit without a parent", read, (PAGES, [0, 2], UNITS, [None, 0, 1], PARENT_SPANS, 100),
                 spans([("b", 0, 9)])),
            Case("the budget spent after the first parent", read,
                 (PAGES, [2, 0], UNITS, [0, 0, 1], PARENT_SPANS, 3), spans([("b", 0, 9)])),
            Case("a parent too big for what is left: a window around its unit, tokens counted", read,
                 (WIDE, [0], [("w", 4, 5)], [0], [("w", 0, 15)], 20), window_of("w", (4, 5), 20)),
            Case("a unit too big for what is left: skip it, read the next", read,
                 (dict(WIDE, **PAGES), [0, 1], [("w", 0, 10), ("b", 0, 9)], [0, 1], [("w", 0, 15), ("b", 0, 9)], 12),
                 spans([("b", 0, 9)])),
            Case("a parent's best unit too big for what is left: the parent is not read at a later unit", read,
                 (dict(WIDE, **PAGES), [0, 1, 2], [("w", 0, 2), ("w", 10, 15), ("b", 0, 9)], [0, 0, 1],
                  [("w", 0, 15), ("b", 0, 9)], 6), spans([("b", 0, 9)])),
        ],
    }


def check_by_hand(lab):
    """The lab's functions on the cases worked out by hand, first: the search is built on them."""
    if embedder_name() != DEFAULT_EMBEDDER:  # the embedder chosen, named before every step that uses it
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), in every step\n")
    print("0. Your functions, checked first on cases worked out by hand")
    checks = Invariants("rag11")
    ok = all([checks.check_cases(f"tricky inputs: {function} as worked out by hand", cases)
              for function, cases in hand_cases(lab).items()])
    if not ok:
        print("   The search is built on them: fix them, then search.")
    return checks, ok


def checks(lab, found, pages, invariants, search, shown):
    """The checks rag11 ends with: every method's spans exact and within budget, none handed twice,
    search() as the table's RRF on the questions `shown` ({question: spans}); then the public tests."""
    print("\nInvariants")
    every = [spans for per_method in found.values() for spans in per_method]
    bad = next(((d, s, e) for spans in every for d, s, e in spans if not (d in pages and 0 <= s < e <= len(pages[d]))),
               None)
    spent = max((sum(count_tokens(pages[d][s:e]) for d, s, e in spans) for spans in every), default=0)
    invariants.check(f"every span an exact slice of its page, each question's within {BUDGET_TOKENS:,} tokens, "
                     "by every method", bad is None and spent <= BUDGET_TOKENS,
                     f"{bad} is no slice" if bad else f"at most {spent} used")
    overlap = lesson10.no_overlaps(every)
    invariants.check("no text handed over twice: no two spans of a question overlap", overlap is None,
                     f"{overlap[0]} and {overlap[1]}" if overlap else "")
    invariants.check("search() hands over what RRF found, for the questions checked",
                     search(pages, list(shown)) == list(shown.values()), f"{len(shown)} questions")
    invariants.check_public_tests(lab)
    return invariants.verdict()

