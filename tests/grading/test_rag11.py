"""Grading tests for lab rag11: search_terms, bm25_weight, bm25_index, reciprocal_rank_fusion, convex_fusion
and read_parents, by values written out by hand. The hidden tests check BM25 against bm25s (its method
"lucene": the same idf and the same tf factor) and every function against its docstring on drawn inputs."""

import math

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st

from academy_llm import count_tokens

pytestmark = pytest.mark.grade("rag11")

IDF = {df: math.log(1 + (3 - df + 0.5) / (df + 0.5)) for df in (1, 2, 3)}  # N = 3: ln(8/3), ln(1.6), ln(8/7)


@pytest.fixture(scope="module")
def rag11(open_lab):
    return open_lab("rag11")


# ---- search_terms ---------------------------------------------------------------------


@pytest.mark.grades("search_terms")
@pytest.mark.parametrize(
    "text, expected",
    [
        ("", []),
        ("  \n\t ", []),
        ("Satellites DIAL out.", ["satellites", "dial", "out"]),
        ("Set storage.max_conns", ["set", "storage.max_conns", "storage", "max", "conns"]),
        ("`satellite.heartbeat_timeout`", ["satellite.heartbeat_timeout", "satellite", "heartbeat", "timeout"]),
        ("ORB-2040 IDEMPOTENCY_CONFLICT", ["orb-2040", "orb", "2040", "idempotency_conflict", "idempotency",
                                           "conflict"]),
        ("--keep-config", ["keep-config", "keep", "config"]),
        ("v2.6.1.", ["v2.6.1", "v2", "6", "1"]),
        ("a.-_b", ["a.-_b", "a", "b"]),
        ("end_ .start", ["end", "start"]),
        ("ORBIT_PAGER=off", ["orbit_pager", "orbit", "pager", "off"]),
        ("/etc/orbit/orbit.toml", ["etc", "orbit", "orbit.toml", "orbit", "toml"]),
        ("Orbit's jobs", ["orbit", "s", "jobs"]),
        ("Grüße, 東京", ["grüße", "東京"]),
    ],
)
def test_search_terms_by_hand(rag11, text, expected):
    check.expect(list(rag11.search_terms(text)), expected)


# ---- bm25_weight -----------------------------------------------------------------------


@pytest.mark.grades("bm25_weight")
@pytest.mark.parametrize(
    "args, keywords, expected",
    [
        ((1, 1, 3, 4, 4), {}, IDF[1] / 2.2),  # once, in a document of mean length
        ((3, 1, 3, 6, 4), {}, IDF[1] * 3 / 4.65),  # three times, in a document half as long again
        ((1, 2, 3, 2, 4), {}, IDF[2] / 1.75),  # a short document
        ((2, 3, 3, 4, 4), {}, IDF[3] * 2 / 3.2),  # a term in every document: still above 0
        ((1, 1, 3, 8, 4), {"b": 0}, IDF[1] / 2.2),  # no length normalisation
        ((1, 1, 3, 8, 4), {"b": 1}, IDF[1] / 3.4),  # full length normalisation
        ((7, 1, 3, 4, 4), {"k1": 0}, IDF[1]),  # no saturation needed: tf does not count
        ((2, 1, 3, 4, 4), {"k1": 2}, IDF[1] * 2 / 4),
        ((1, 1, 1, 5, 5), {}, math.log(4 / 3) / 2.2),  # a corpus of one document
    ],
)
def test_bm25_weight_by_hand(rag11, args, keywords, expected):
    check.expect_close(rag11.bm25_weight(*args, **keywords), expected)


CORPORA = [
    [["lease", "lost"], ["satellite", "lost", "satellite", "lease"], ["satellite", "lease", "port", "port", "port",
                                                                      "lease"]],
    [["orbit", "server"], ["orbit", "satellite", "satellite"], ["orbit"], ["token", "ttl", "token", "token", "ttl"]],
    [["a"] * 9, ["a", "b"], ["c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m", "n"]],
]


# ---- bm25_index ------------------------------------------------------------------------


@pytest.mark.grades("bm25_index")
def test_bm25_index_counts_three_documents_by_hand(rag11):
    corpus = CORPORA[0]  # lengths 2, 4 and 6: a mean of 4
    weight = rag11.bm25_weight
    expected = {
        "lease": [(0, weight(1, 3, 3, 2, 4)), (1, weight(1, 3, 3, 4, 4)), (2, weight(2, 3, 3, 6, 4))],
        "lost": [(0, weight(1, 2, 3, 2, 4)), (1, weight(1, 2, 3, 4, 4))],
        "satellite": [(1, weight(2, 2, 3, 4, 4)), (2, weight(1, 2, 3, 6, 4))],
        "port": [(2, weight(3, 1, 3, 6, 4))],
    }
    check.same_postings(check.postings(rag11.bm25_index(corpus)), expected)


@pytest.mark.grades("bm25_index")
@pytest.mark.parametrize(
    "corpus, keywords, expected",
    [
        ([], {}, {}),  # nothing to index
        ([[]], {}, {}),  # one empty document
        ([[], ["a"]], {}, {"a": [(1, (1, 1, 2, 1, 0.5))]}),  # the empty one counts in the mean length
        ([["x", "x", "x"], ["x"]], {}, {"x": [(0, (3, 2, 2, 3, 2)), (1, (1, 2, 2, 1, 2))]}),  # df counts documents
        ([["a", "b"], ["b", "c", "c", "c"]], {"k1": 2.0, "b": 0.3},  # the settings reach the weights
         {"a": [(0, (1, 1, 2, 2, 3))], "b": [(0, (1, 2, 2, 2, 3)), (1, (1, 2, 2, 4, 3))], "c": [(1, (3, 1, 2, 4, 3))]}),
    ],
)
def test_bm25_index_small_corpora(rag11, corpus, keywords, expected):
    # Each weight: bm25_weight(tf, df, n, length, mean) of the counts written out here, with the settings.
    got = check.postings(rag11.bm25_index(corpus, **keywords))
    check.same_postings(got, {term: [(row, rag11.bm25_weight(*counts, **keywords)) for row, counts in pairs]
                              for term, pairs in expected.items()})


# ---- reciprocal_rank_fusion -------------------------------------------------------------


# One test for the whole table, each case a call: rag10's given fusion, for two rankings at its
# own k, gets some cases right, and a function earns this test only by getting them all.
BY_HAND = [
    ([], {}, []),
    ([[], []], {}, []),
    ([["a", "b", "c"]], {}, ["a", "b", "c"]),  # one ranking: as it is
    ([["a", "b", "c"], ["c", "a", "d"]], {}, ["a", "c", "b", "d"]),
    ([["b", "a"], ["a", "b"]], {}, ["b", "a"]),  # a tie: the first met first
    ([["x"], ["y"], ["z", "x"]], {}, ["x", "y", "z"]),  # x in two rankings; y and z tie
    ([[3, 1], [2, 3]], {"k": 0}, [3, 2, 1]),  # 3: 1 + 1/2, 2: 1, 1: 1/2
    ([["a", "c", "b"], ["d", "b"]], {"k": 1}, ["b", "a", "d", "c"]),  # b: 1/4 + 1/3 beats 1/2
]


@pytest.mark.grades("reciprocal_rank_fusion")
def test_reciprocal_rank_fusion_by_hand(rag11):
    for rankings, keywords, expected in BY_HAND:
        check.expect(list(rag11.reciprocal_rank_fusion(rankings, **keywords)), expected)


@pytest.mark.grades("reciprocal_rank_fusion")
def test_reciprocal_rank_fusion_counts_ranks_from_1_with_k_60(rag11):
    # "top" is first in one ranking: 1/61. "deep" is 61st and 62nd: 1/121 + 1/122, a little more.
    # Counted from 0, "top" would have 1/60 and "deep" 1/120 + 1/121, a little less.
    filler = [f"f{number}" for number in range(59)]
    first, second = ["top", *filler, "deep"], [*(f"g{number}" for number in range(61)), "deep"]
    fused = list(rag11.reciprocal_rank_fusion([first, second]))
    assert fused.index("deep") < fused.index("top"), (
        "'deep' (ranks 61 and 62) comes after 'top' (rank 1 alone), yet 1/121 + 1/122 > 1/61: ranks count from 1")


# ---- convex_fusion ----------------------------------------------------------------------


@pytest.mark.grades("convex_fusion")
@pytest.mark.parametrize(
    "words, meaning, alpha, expected",
    [
        ([], [], 0.5, []),
        ([4.0], [0.3], 0.5, [0.0]),  # one candidate: each list has no range
        ([0, 5, 10], [0.2, 0.4, 0.3], 0.5, [0.0, 0.75, 0.75]),
        ([2, 4, 6], [0.9, 0.1, 0.5], 0.25, [0.25, 0.375, 0.875]),
        ([12.5, 0.0], [0.1, 0.1], 0.7, [0.3, 0.0]),  # meaning ranks nothing: 0 for all
        ([1, 3], [-1.0, 1.0], 1, [0.0, 1.0]),
        ([1, 3], [-1.0, 1.0], 0, [0.0, 1.0]),
    ],
)
def test_convex_fusion_by_hand(rag11, words, meaning, alpha, expected):
    check.expect_close(list(rag11.convex_fusion(words, meaning, alpha)), expected)


# ---- read_parents -----------------------------------------------------------------------

PAGES = {"a": "Orbit runs jobs. Satellites dial out.", "b": "Tokens expire.", "c": "One line here."}
UNITS = [("a", 0, 16), ("a", 17, 37), ("b", 0, 14), ("c", 0, 14), ("c", 0, 3)]
PARENTS = [("a", 0, 37), ("b", 0, 14), ("c", 0, 14)]


def handed(value):
    """The spans read_parents returned, as tuples, whatever sequence types came back."""
    return [tuple(span) for span in value]
PARENT_OF = [0, 0, 1, 2, 2]


@pytest.mark.grades("read_parents")
@pytest.mark.parametrize(
    "ranked, parent_of, budget, expected",
    [
        ([], PARENT_OF, 100, []),
        ([1, 0], PARENT_OF, 100, [("a", 0, 37)]),  # two units of one parent: read once
        ([2, 1, 4, 0, 3], PARENT_OF, 100, [("b", 0, 14), ("a", 0, 37), ("c", 0, 14)]),
        ([0, 2], [None, 0, 1, 2, 2], 100, [("b", 0, 14)]),  # a unit without a parent
        ([3, 2, 0], PARENT_OF, 0, []),  # no budget
    ],
)
def test_read_parents_by_hand(rag11, ranked, parent_of, budget, expected):
    check.expect(handed(rag11.read_parents(PAGES, ranked, UNITS, parent_of, PARENTS, budget)), expected)


@pytest.mark.grades("read_parents")
def test_read_parents_stops_when_the_budget_is_spent(rag11):
    budget = count_tokens(PAGES["b"]) + count_tokens(PAGES["c"])  # exactly the first two parents
    got = handed(rag11.read_parents(PAGES, [2, 3, 0], UNITS, PARENT_OF, PARENTS, budget))
    check.expect(got, [("b", 0, 14), ("c", 0, 14)])


@pytest.mark.grades("read_parents")
@given(parent_of=st.lists(st.one_of(st.none(), st.sampled_from([0, 1, 2])), min_size=5, max_size=5),
       data=st.data())
def test_property_read_parents_each_parent_once_best_first(rag11, parent_of, data):
    ranked = data.draw(st.lists(st.integers(0, 4), unique=True, max_size=5))
    order = list(dict.fromkeys(parent_of[unit] for unit in ranked if parent_of[unit] is not None))
    taken = data.draw(st.integers(0, len(order)))  # a budget of exactly the first `taken` parents
    budget = sum(count_tokens(PAGES[PARENTS[p][0]][PARENTS[p][1]:PARENTS[p][2]]) for p in order[:taken])
    got = handed(rag11.read_parents(PAGES, ranked, UNITS, parent_of, PARENTS, budget))
    check.expect(got, [PARENTS[p] for p in order[:taken]])


LONG = {"l": " ".join(["alpha"] * 300)}  # 300 tokens: one parent over PARENT_TOKENS (192)
WIDE = {"w": "\U00029755" * 10 + " tail", **PAGES}  # 10 characters of 4 tokens each, then " tail"


def check_window(span, doc_id, unit, room, pages):
    assert span[0] == doc_id and span[1] <= unit[0] and unit[1] <= span[2], (
        f"returned {span}, not a span of {doc_id!r} holding the unit {unit}")
    held = count_tokens(pages[doc_id][span[1] : span[2]])
    assert room - 1 <= held <= room, f"returned {span} of {held} tokens: the window had room for {room}"


@pytest.mark.grades("read_parents")
def test_read_parents_reads_a_window_of_a_parent_too_big_for_what_is_left(rag11):
    got = handed(rag11.read_parents(WIDE, [0, 1], [("b", 0, 14), ("w", 4, 5)], [0, 1],
                                    [("b", 0, 14), ("w", 0, 15)], count_tokens(PAGES["b"]) + 20))
    assert len(got) == 2 and got[0] == ("b", 0, 14), f"returned {got}, expected b whole, then a window of w"
    check_window(got[1], "w", (4, 5), 20, WIDE)  # tokens counted, not characters


@pytest.mark.grades("read_parents")
def test_read_parents_skips_a_unit_too_big_for_what_is_left_and_reads_on(rag11):
    got = handed(rag11.read_parents(WIDE, [0, 1], [("w", 0, 10), ("b", 0, 14)], [0, 1],
                                    [("w", 0, 15), ("b", 0, 14)], 12))
    check.expect(got, [("b", 0, 14)])


@pytest.mark.grades("read_parents")
def test_read_parents_reads_no_span_over_parent_tokens(rag11):
    unit = (600, 605)  # the 101st alpha
    got = handed(rag11.read_parents(LONG, [0], [("l", *unit)], [0], [("l", 0, len(LONG["l"]))], 1000))
    assert len(got) == 1, f"returned {got}, expected one window of the long parent"
    check_window(got[0], "l", unit, 192, LONG)


@pytest.mark.grades("read_parents")
def test_read_parents_reads_a_parent_at_its_best_unit_only(rag11):
    """w's best unit, two characters of 4 tokens, is over the 6 tokens left: w gives nothing, and is not
    read at its later unit " tail", which would fit; b is read next."""
    got = handed(rag11.read_parents(WIDE, [0, 1, 2], [("w", 0, 2), ("w", 10, 15), ("b", 0, 14)], [0, 0, 1],
                                    [("w", 0, 15), ("b", 0, 14)], 6))
    check.expect(got, [("b", 0, 14)])
