"""Hidden grading tests for lab rag11 (instructors only): inputs the public tests never show."""

import math

import grading_checks as check
import oracles
import pytest
from hypothesis import given
from hypothesis import strategies as st

from academy_llm import count_tokens

pytestmark = pytest.mark.grade("rag11")

# The public tests' pages, units and parents ("Orbit runs jobs. Satellites dial out." is a's one parent).
PAGES = {"a": "Orbit runs jobs. Satellites dial out.", "b": "Tokens expire.", "c": "One line here."}
UNITS = [("a", 0, 16), ("a", 17, 37), ("b", 0, 14), ("c", 0, 14), ("c", 0, 3)]
PARENTS = [("a", 0, 37), ("b", 0, 14), ("c", 0, 14)]


def handed(value):
    """The spans read_parents returned, as tuples, whatever sequence types came back."""
    return [tuple(span) for span in value]


@pytest.fixture(scope="module")
def rag11(open_lab):
    return open_lab("rag11")


@pytest.mark.grades("search_terms")
@pytest.mark.parametrize(
    "text, expected",
    [
        ("one\r\ntwo\rthree\tfour", ["one", "two", "three", "four"]),
        ("1.2.3", ["1.2.3", "1", "2", "3"]),
        ("A.B.c_D-e", ["a.b.c_d-e", "a", "b", "c", "d", "e"]),
        ("__init__", ["init"]),  # joiners at both ends join nothing
        ("x.-", ["x"]),
        ("ÄÖÜ-Straße", ["äöü-straße", "äöü", "straße"]),
        ("\U0001F680 launch \U0001F680", ["launch"]),
        ("key=value;other:thing", ["key", "value", "other", "thing"]),
        ("3.14159", ["3.14159", "3", "14159"]),
        ("a - b", ["a", "b"]),  # a dash between spaces joins nothing
    ],
)
def test_search_terms_hidden(rag11, text, expected):
    check.expect(list(rag11.search_terms(text)), expected)


@pytest.mark.grades("search_terms")
@check.hidden_seed
@given(text=st.text(alphabet="ab9Zé_.-- \t/\r\n`'", max_size=60))
def test_search_terms_hidden_property(rag11, text):
    check.expect(list(rag11.search_terms(text)), oracles.terms_by_scanning(text))


@pytest.mark.grades("bm25_weight")
@pytest.mark.parametrize(
    "args, expected",
    [
        ((1, 5, 10, 10, 10), math.log(1 + 5.5 / 5.5) / 2.2),  # df half of N: idf ln 2
        ((1, 10, 10, 3, 6), math.log(1 + 0.5 / 10.5) / (1 + 1.2 * (0.25 + 0.375))),
        ((4, 2, 100, 40, 20), math.log(1 + 98.5 / 2.5) * 4 / (4 + 1.2 * (0.25 + 1.5))),
    ],
)
def test_bm25_weight_hidden(rag11, args, expected):
    check.expect_close(rag11.bm25_weight(*args), expected)


@pytest.mark.grades("bm25_weight")
@check.hidden_seed
@given(corpus=st.lists(st.lists(st.sampled_from(["a", "b", "c", "d"]), min_size=1, max_size=9), min_size=1,
                       max_size=5), k1=st.sampled_from([0.6, 1.2, 2.5]), b=st.sampled_from([0.0, 0.5, 0.75, 1.0]))
def test_bm25_weight_hidden_against_bm25s(rag11, corpus, k1, b):
    check.same_weights(oracles.lab_weights(rag11, corpus, k1, b), check.bm25s_weights(corpus, k1, b))


@pytest.mark.grades("bm25_weight")
@check.hidden_seed
@given(tf=st.integers(1, 20), df=st.integers(1, 9), length=st.integers(20, 60), mean=st.floats(5, 50))
def test_bm25_weight_hidden_property(rag11, tf, df, length, mean):
    check.expect_close(rag11.bm25_weight(tf, df, 9, length, mean), oracles.lucene(tf, df, 9, length, mean),
                       tolerance=1e-9)


@pytest.mark.grades("bm25_index")
@pytest.mark.parametrize(
    "corpus",
    [
        [["only"]],  # one document: idf ln(4/3)
        [["a", "a", "b"], ["b"], [], ["c", "a"]],
        [["same"], ["same"], ["same"]],  # a term in every document
        [["x"] * 30, ["x", "y"]],
    ],
)
def test_bm25_index_hidden(rag11, corpus):
    check.same_postings(check.postings(rag11.bm25_index(corpus)), oracles.expected_postings(rag11, corpus))


@pytest.mark.grades("bm25_index")
def test_bm25_index_document_frequency_counts_documents(rag11):
    got = check.postings(rag11.bm25_index([["x", "x", "x", "x"], ["y"], ["y"]]))
    check.expect([row for row, _ in got["x"]], [0])
    want = rag11.bm25_weight(4, 1, 3, 4, 2)  # df 1, although x occurs 4 times
    assert math.isclose(got["x"][0][1], want, rel_tol=1e-9), f"'x' weighs {got['x'][0][1]}, expected {want}"


@pytest.mark.grades("bm25_index")
@check.hidden_seed
@given(corpus=st.lists(st.lists(st.sampled_from(["p", "q", "r", "s-t", "u.v"]), max_size=6), min_size=1,
                       max_size=7))
def test_bm25_index_hidden_property(rag11, corpus):
    check.same_postings(check.postings(rag11.bm25_index(corpus)), oracles.expected_postings(rag11, corpus))


# One test for the whole table, as the public one (rag10's given fusion gets some cases right).
BY_HAND = [
    ([["a"], ["a"], ["a"]], {}, ["a"]),
    ([["a", "b"], ["b", "c"], ["c", "a"]], {}, ["a", "b", "c"]),  # a three-way tie: the order first met
    ([[5, 4, 3], [3, 4, 5]], {"k": 2}, [5, 3, 4]),  # 5 and 3 tie at 1/3 + 1/5; 4 has 1/2
    ([["q"], ["p", "q"]], {"k": 0}, ["q", "p"]),  # q: 1 + 1/2
    ([[0, 1, 2, 3]], {"k": 100}, [0, 1, 2, 3]),
]


@pytest.mark.grades("reciprocal_rank_fusion")
def test_reciprocal_rank_fusion_hidden(rag11):
    for rankings, keywords, expected in BY_HAND:
        check.expect(list(rag11.reciprocal_rank_fusion(rankings, **keywords)), expected)


@pytest.mark.grades("reciprocal_rank_fusion")
@check.hidden_seed
@given(rankings=st.lists(st.lists(st.sampled_from("abcdefghij"), unique=True, max_size=10), max_size=5))
def test_reciprocal_rank_fusion_hidden_property(rag11, rankings):
    oracles.check_fused(list(rag11.reciprocal_rank_fusion(rankings)), rankings, 60)


@pytest.mark.grades("convex_fusion")
@pytest.mark.parametrize(
    "words, meaning, alpha, expected",
    [
        ([3, 3, 3], [0.5, 0.5, 0.5], 0.5, [0.0, 0.0, 0.0]),  # neither ranks anything
        ([0, 100], [0.7, 0.2], 0.9, [0.9, 0.1]),
        ([1e6, 0, 5e5], [0, 0, 0], 0.2, [0.8, 0.0, 0.4]),
    ],
)
def test_convex_fusion_hidden(rag11, words, meaning, alpha, expected):
    check.expect_close(list(rag11.convex_fusion(words, meaning, alpha)), expected)


@pytest.mark.grades("convex_fusion")
@check.hidden_seed
@given(pairs=st.lists(st.tuples(st.integers(0, 30), st.floats(-1, 1)), min_size=1, max_size=20),
       alpha=st.sampled_from([0.0, 0.3, 0.5, 1.0]))
def test_convex_fusion_hidden_property(rag11, pairs, alpha):
    words, meaning = [w for w, _ in pairs], [m for _, m in pairs]
    expected = [alpha * m + (1 - alpha) * w for w, m in zip(oracles.scaled(words), oracles.scaled(meaning))]
    check.expect_close(list(rag11.convex_fusion(words, meaning, alpha)), expected)


@pytest.mark.grades("read_parents")
@pytest.mark.parametrize(
    "ranked, parent_of, expected",
    [
        ([4, 3, 2, 1, 0], [0, 0, 1, 2, 2], [("c", 0, 14), ("b", 0, 14), ("a", 0, 37)]),
        ([0, 1, 2, 3, 4], [None, None, None, None, None], []),
        ([3], [0, 0, 1, 2, 2], [("c", 0, 14)]),
    ],
)
def test_read_parents_hidden(rag11, ranked, parent_of, expected):
    check.expect(handed(rag11.read_parents(PAGES, ranked, UNITS, parent_of, PARENTS, 1000)), expected)



LINES = ["Backups run at night.", "Keys rotate yearly.", "Satellites dial out.", "Ports: 7400, 7401."]


@st.composite
def units_and_parents(draw):
    """Pages of lines, each line a parent; units are lines or parts of them, some with no parent."""
    pages, parents, units, parent_of = {}, [], [], []
    for number in range(draw(st.integers(1, 3))):
        lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=3))
        pages[f"p{number}"] = "\n".join(lines)
        start = 0
        for line in lines:
            parents.append((f"p{number}", start, start + len(line)))
            for _ in range(draw(st.integers(1, 2))):
                cut = draw(st.integers(1, len(line)))
                units.append((f"p{number}", start, start + cut))
                parent_of.append(draw(st.sampled_from([len(parents) - 1, len(parents) - 1, None])))
            start += len(line) + 1
    return pages, units, parent_of, parents


@pytest.mark.grades("read_parents")
@check.hidden_seed
@given(case=units_and_parents(), data=st.data())
def test_read_parents_hidden_property(rag11, case, data):
    """Each parent once, in the order of its best unit, whole, as many as a budget of exactly theirs holds."""
    pages, units, parent_of, parents = case
    ranked = data.draw(st.lists(st.integers(0, len(units) - 1), unique=True, max_size=len(units)))
    order = list(dict.fromkeys(parent_of[unit] for unit in ranked if parent_of[unit] is not None))
    taken = data.draw(st.integers(0, len(order)))
    budget = sum(count_tokens(pages[doc_id][start:end]) for doc_id, start, end in (parents[p] for p in order[:taken]))
    got = handed(rag11.read_parents(pages, ranked, units, parent_of, parents, budget))
    check.expect(got, [parents[p] for p in order[:taken]])


@st.composite
def ranked_on_a_page(draw):
    """A page of words and wide characters (often: a unit of them is over a small budget), cut into parents
    at words, a unit a word, any ranking."""
    words = draw(st.lists(st.sampled_from(LINES + ["\U00029755\U00029755"] * 4 + ["x\r\ny"]), min_size=2, max_size=30))
    text = " ".join(words)
    starts = [len(" ".join(words[:i])) + (i > 0) for i in range(len(words))]
    cuts = sorted({0, len(words), *draw(st.lists(st.integers(1, len(words) - 1), max_size=4))})
    parents = [("p", starts[first], len(text) if stop == len(words) else starts[stop] - 1)
               for first, stop in zip(cuts, cuts[1:])]
    units, parent_of = [], []
    for number, (first, stop) in enumerate(zip(cuts, cuts[1:])):
        for word in range(first, stop):
            units.append(("p", starts[word], starts[word] + len(words[word])))
            parent_of.append(draw(st.one_of(st.none(), st.just(number))))
    ranked = draw(st.permutations(range(len(units))))
    return {"p": text}, list(ranked)[: draw(st.integers(0, len(units)))], units, parent_of, parents


@pytest.mark.grades("read_parents")
@check.hidden_seed
@given(data=ranked_on_a_page(), budget=st.one_of(st.integers(0, 12), st.integers(0, 120)))
def test_read_parents_hidden_property_windows(rag11, data, budget):
    """Small budgets too: a parent whose best unit (two wide characters, 8 tokens) does not fit gives
    nothing, and is not read again at a later, smaller unit of its own."""
    pages, ranked, units, parent_of, parents = data
    expected = oracles.read_parents_spans(pages, ranked, units, parent_of, parents, budget)
    check.expect(handed(rag11.read_parents(pages, ranked, units, parent_of, parents, budget)), expected)


@pytest.mark.grades("read_parents")
@check.hidden_seed
@given(data=ranked_on_a_page(), budget=st.integers(1, 7))
def test_read_parents_hidden_property_best_unit_too_big(rag11, data, budget):
    """The best unit ranked is over the budget: its parent gives nothing, and is not read again at a later
    unit of its own that would fit; the walk goes on with the other parents."""
    pages, ranked, units, parent_of, parents = data
    held = [row for row in ranked if count_tokens(pages["p"][units[row][1] : units[row][2]]) > budget]
    ranked = held[:1] + [row for row in ranked if row not in held[:1]]
    expected = oracles.read_parents_spans(pages, ranked, units, parent_of, parents, budget)
    check.expect(handed(rag11.read_parents(pages, ranked, units, parent_of, parents, budget)), expected)

@pytest.mark.grades("read_parents")
@pytest.mark.parametrize("budget", [5, 7])
def test_read_parents_hidden_reads_a_parent_at_its_best_unit_only(rag11, budget):
    """The parent's best unit, two characters of 4 tokens, is over what is left: nothing for that parent,
    though its second unit, a word, would fit. Each parent is read once, at its best unit; the next is read."""
    pages = {"w": "\U00029755" * 10 + " tail", "b": "Tokens expire."}
    got = handed(rag11.read_parents(pages, [0, 1, 2], [("w", 0, 2), ("w", 10, 15), ("b", 0, 14)], [0, 0, 1],
                                    [("w", 0, 15), ("b", 0, 14)], budget))
    check.expect(got, [("b", 0, 14)])
