"""Hidden grading tests for lab rag10 (instructors only): inputs the public tests never show."""

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st

from academy_llm import count_tokens

pytestmark = pytest.mark.grade("rag10")

# A page with CRLF line ends and characters of several tokens.
PAGE = "| a | 1 |\r\n| b | 2 |\r\n\r\n\U00029755\U00029755 wide text here.\r\nLast line."


@pytest.fixture(scope="module")
def rag10(open_lab):
    return open_lab("rag10")


def shared(unit, parent):
    return min(unit[1], parent[1]) - max(unit[0], parent[0])


@pytest.mark.grades("parent_index")
@pytest.mark.parametrize("units, parents, expected", [
    ([(5, 15)], [(0, 10), (10, 20)], [0]),  # 5 and 5: the earlier
    ([(3, 4)], [(3, 4)], [0]),  # the unit is the parent
    ([(0, 2), (98, 99)], [(10, 20)], [None, None]),  # before the first, after the last
    ([(12, 13), (0, 50)], [(0, 5), (10, 40), (45, 46)], [1, 1]),  # units in any order
    ([(7, 9)], [(0, 7), (9, 12)], [None]),  # between two parents that touch neither
])
def test_parent_index_hidden(rag10, units, parents, expected):
    check.expect(list(rag10.parent_index(units, parents)), expected)


@st.composite
def touching_parents_and_units(draw):
    """Parents that tile [0, n) with no gap, and units anywhere in it, sorted by start as the lab says."""
    cuts = sorted(set(draw(st.lists(st.integers(1, 299), max_size=30))) | {0, 300})
    parents = list(zip(cuts, cuts[1:]))
    units = []
    for _ in range(draw(st.integers(1, 15))):
        start = draw(st.integers(0, 299))
        units.append((start, draw(st.integers(start + 1, 300))))
    return sorted(units), parents


@pytest.mark.grades("parent_index")
@check.hidden_seed
@given(data=touching_parents_and_units())
def test_parent_index_hidden_property(rag10, data):
    units, parents = data
    expected = []
    for unit in units:
        overlaps = [shared(unit, parent) for parent in parents]
        expected.append(overlaps.index(max(overlaps)))
    check.expect(list(rag10.parent_index(units, parents)), expected)


@pytest.mark.grades("best_parents")
@pytest.mark.parametrize("ranked, parent_of, expected", [
    ([0, 1, 2], [None, None, None], []),
    ([4, 3, 2, 1, 0], [9, 8, 9, 8, 7], [(7, 4), (8, 3), (9, 2)]),
    ([1, 0], [5, 5], [(5, 1)]),  # a parent's best unit is the first ranked, not the first numbered
])
def test_best_parents_hidden(rag10, ranked, parent_of, expected):
    check.expect([tuple(pair) for pair in rag10.best_parents(ranked, parent_of)], expected)


@pytest.mark.grades("assemble")
def test_assemble_counts_crlf_and_wide_characters_as_the_tokenizer_does(rag10):
    pages = {"t": PAGE}
    rows_end = PAGE.index("\r\n\r\n") + 2
    candidates = [("t", (0, rows_end), (0, 9)), ("t", (rows_end + 2, len(PAGE)), (rows_end + 2, rows_end + 4))]
    budget = count_tokens(PAGE[:rows_end]) + 12  # the two wide characters take 8 of the 12 left
    spans = [tuple(span) for span in rag10.assemble(pages, candidates, budget, 1000)]
    assert spans and spans[0] == ("t", 0, rows_end), f"returned {spans}, expected the rows whole first"
    used = sum(count_tokens(PAGE[start:end]) for _, start, end in spans)
    assert used <= budget, f"returned {spans}: {used} tokens, over the budget of {budget}"
    assert len(spans) == 2, f"returned {spans}, expected the rows, then a window of the wide line"
    for _, start, end in spans[1:]:
        assert rows_end + 2 <= start < end <= len(PAGE), f"returned {spans}: a span outside its parent"
        assert PAGE[start:end].startswith("\U00029755"), f"returned {spans}: the window drops its unit"
