"""Grading tests for lab rag10: parent_index, best_parents, assemble and small_to_big."""

import bisect

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st

from academy_llm import count_tokens, token_starts

pytestmark = pytest.mark.grade("rag10")

PARENTS = [(0, 10), (10, 20), (25, 40)]

# Each " alpha" is one token; each character of WIDE is 4 tokens.
ALPHA = " ".join(["alpha"] * 30)
WIDE = "\U00029755" * 10
PAGES = {"a": ALPHA, "w": WIDE, "b": "Short one.", "c": "Another short page here."}
WHOLE_A, WHOLE_B, WHOLE_C = ("a", (0, len(ALPHA)), (60, 65)), ("b", (0, 10), (0, 10)), ("c", (0, 24), (0, 7))


@pytest.fixture(scope="module")
def rag10(open_lab):
    return open_lab("rag10")


def pairs(value):
    """A list of pairs, whatever sequence type came back."""
    return [tuple(item) for item in value]


# ---- parent_index ---------------------------------------------------------------------


@pytest.mark.grades("parent_index")
@pytest.mark.parametrize(
    "units, expected",
    [
        ([(0, 10)], [0]),
        ([(10, 11)], [1]),
        ([(9, 19)], [1]),  # 1 character in parent 0, 9 in parent 1
        ([(6, 14)], [0]),  # a tie: the earlier
        ([(20, 25)], [None]),  # in the gap
        ([(19, 30)], [2]),  # 1 in parent 1, 5 in parent 2
        ([(0, 40)], [2]),  # across all three: 15 in the last
        ([(2, 3), (45, 50)], [0, None]),  # units come sorted by start, as the lab says
    ],
)
def test_parent_index_by_hand(rag10, units, expected):
    check.expect(list(rag10.parent_index(units, PARENTS)), expected)


@pytest.mark.grades("parent_index")
def test_parent_index_without_parents_or_units(rag10):
    check.expect(list(rag10.parent_index([(0, 3)], [])), [None])
    check.expect(list(rag10.parent_index([], PARENTS)), [])


def brute_parent(unit, parents):
    best, most = None, 0
    for number, (start, end) in enumerate(parents):
        shared = min(unit[1], end) - max(unit[0], start)
        if shared > most:
            best, most = number, shared
    return best


@st.composite
def units_and_parents(draw):
    cuts = sorted(set(draw(st.lists(st.integers(0, 200), min_size=0, max_size=24))))
    parents = [(a, b) for a, b in zip(cuts, cuts[1:]) if draw(st.booleans()) or b - a > 30]
    units = []
    for _ in range(draw(st.integers(0, 12))):
        start = draw(st.integers(0, 210))
        units.append((start, start + draw(st.integers(1, 60))))
    return sorted(units), parents


@pytest.mark.grades("parent_index")
@given(data=units_and_parents())
def test_property_parent_index_is_the_parent_sharing_most(rag10, data):
    units, parents = data
    check.expect(list(rag10.parent_index(units, parents)), [brute_parent(unit, parents) for unit in units])


# ---- best_parents ---------------------------------------------------------------------


@pytest.mark.grades("best_parents")
@pytest.mark.parametrize(
    "ranked, parent_of, expected",
    [
        ([], [0, 1], []),
        ([2, 0, 1], [7, 7, 7], [(7, 2)]),
        ([3, 0, 1, 2], [0, 1, 0, 1], [(1, 3), (0, 0)]),
        ([1, 0, 2], [None, 0, 0], [(0, 1)]),
        ([0, 1], [0, 0], [(0, 0)]),  # parent 0 counts
    ],
)
def test_best_parents_by_hand(rag10, ranked, parent_of, expected):
    check.expect(pairs(rag10.best_parents(ranked, parent_of)), expected)


@pytest.mark.grades("best_parents")
@given(parent_of=st.lists(st.one_of(st.none(), st.integers(0, 5)), min_size=0, max_size=30), data=st.data())
def test_property_best_parents_each_parent_once_at_its_best_unit(rag10, parent_of, data):
    ranked = data.draw(st.permutations(range(len(parent_of))))
    expected, taken = [], set()
    for unit in ranked:
        if parent_of[unit] is not None and parent_of[unit] not in taken:
            taken.add(parent_of[unit])
            expected.append((parent_of[unit], unit))
    check.expect(pairs(rag10.best_parents(list(ranked), parent_of)), expected)


# ---- assemble -------------------------------------------------------------------------


def tokens(doc_id, start, end):
    return count_tokens(PAGES[doc_id][start:end])


@pytest.mark.grades("assemble")
@pytest.mark.parametrize(
    "candidates, budget, expected",
    [
        ([WHOLE_B], 0, []),
        ([], 50, []),
        ([WHOLE_A], 30, [("a", 0, len(ALPHA))]),  # exactly the budget
        ([WHOLE_B, WHOLE_C], 100, [("b", 0, 10), ("c", 0, 24)]),
        ([WHOLE_A, WHOLE_B], 30, [("a", 0, len(ALPHA))]),  # nothing left after it
        ([("w", (0, 10), (0, 10)), WHOLE_B], 12, [("b", 0, 10)]),  # the unit alone is 40 tokens
    ],
)
def test_assemble_whole_parents_by_hand(rag10, candidates, budget, expected):
    check.expect(pairs(rag10.assemble(PAGES, candidates, budget)), expected)


def check_window(span, doc_id, unit, room):
    assert span[0] == doc_id and span[1] <= unit[0] and unit[1] <= span[2], (
        f"returned {span}, not a span of {doc_id!r} holding the unit {unit}")
    held = tokens(*span)
    assert room - 1 <= held <= room, f"returned {span} of {held} tokens: the window had room for {room}"


@pytest.mark.grades("assemble")
def test_a_parent_too_big_gives_a_window_around_its_unit(rag10):
    spans = pairs(rag10.assemble(PAGES, [WHOLE_B, WHOLE_A, WHOLE_C], 20))
    assert len(spans) == 2 and spans[0] == ("b", 0, 10), f"returned {spans}, expected b whole, then a window of a"
    check_window(spans[1], "a", WHOLE_A[2], 17)


@pytest.mark.grades("assemble")
def test_tokens_are_counted_not_characters(rag10):
    spans = pairs(rag10.assemble(PAGES, [("w", (0, 10), (4, 5)), WHOLE_B], 20))
    assert len(spans) == 1, f"returned {spans}, expected one window of w filling the budget"
    check_window(spans[0], "w", (4, 5), 20)


@pytest.mark.grades("assemble")
def test_no_span_holds_more_than_span_tokens(rag10):
    spans = pairs(rag10.assemble(PAGES, [WHOLE_A, WHOLE_B], 100, 12))
    assert len(spans) == 2 and spans[1] == ("b", 0, 10), f"returned {spans}, expected a window of a, then b"
    check_window(spans[0], "a", WHOLE_A[2], 12)


WORDS = ["orbit", "runs", "jobs", "on", "satellites", "quickly", "and", "\U00029755", "well."]


@st.composite
def pages_and_candidates(draw):
    pages, candidates = {}, []
    for number in range(draw(st.integers(1, 4))):
        doc_id = f"p{number}"
        text = " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=60)))
        pages[doc_id] = text
        cuts = sorted({0, len(text), *draw(st.lists(st.integers(1, max(len(text) - 1, 1)), max_size=3))})
        for start, end in zip(cuts, cuts[1:]):
            if start < end:
                unit_start = draw(st.integers(start, end - 1))
                unit_end = draw(st.integers(unit_start + 1, min(end, unit_start + 12)))
                candidates.append((doc_id, (start, end), (unit_start, unit_end)))
    return pages, draw(st.permutations(candidates))


def judged_window(text, parent, unit, room, span):
    """window_around's answer, checked before the property relies on it: the function is given, but it is
    the lab's code, so its answer is a claim. A window is a slice of the parent holding the unit, within
    room; None only when the unit, widened to the page's token starts around it, is over room."""
    if span is None:
        starts = [parent[0] + start for start in token_starts(text[parent[0] : parent[1]])] + [parent[1]]
        cover = (starts[max(bisect.bisect_right(starts, unit[0]) - 1, 0)], starts[bisect.bisect_left(starts, unit[1])])
        held = count_tokens(text[cover[0] : cover[1]])
        assert held > room, (
            f"window_around(…, {parent}, {unit}, {room}) gave None, yet {cover} holds the unit in {held} tokens")
        return None
    span = tuple(span)
    held = count_tokens(text[span[0] : span[1]])
    assert parent[0] <= span[0] <= unit[0] and unit[1] <= span[1] <= parent[1] and held <= room, (
        f"window_around(…, {parent}, {unit}, {room}) gave {span} of {held} tokens: not a slice of the parent "
        f"holding the unit within the room")
    return span


@pytest.mark.grades("assemble")
@given(data=pages_and_candidates(), budget=st.integers(0, 120), span_tokens=st.integers(1, 80))
def test_property_assemble_as_the_lab_says(rag10, data, budget, span_tokens):
    pages, candidates = data
    expected, left = [], budget
    for doc_id, parent, unit in candidates:  # the lab's own rule, with its given window_around
        if left <= 0:
            break
        room = min(left, span_tokens)
        span, held = parent, count_tokens(pages[doc_id][parent[0] : parent[1]])
        if held > room:
            span = rag10.window_around(pages[doc_id], parent, unit, room)
            span = judged_window(pages[doc_id], parent, unit, room, span)
            if span is None:
                continue
            held = count_tokens(pages[doc_id][span[0] : span[1]])
        expected.append((doc_id, *span))
        left -= held
    check.expect(pairs(rag10.assemble(pages, list(candidates), budget, span_tokens)), expected)


# ---- small_to_big ---------------------------------------------------------------------

# Four units on three pages: a's two (its 1st and 11th "alpha"), b's and c's; their parents the pages whole.
UNITS = [("a", 0, 5), ("b", 0, 5), ("a", 60, 65), ("c", 0, 7)]
PARENT_OF = [0, 1, 0, 2]
PARENT_SPANS = [("a", 0, len(ALPHA)), ("b", 0, 10), ("c", 0, 24)]
A, B, C = PARENT_SPANS


@pytest.mark.grades("small_to_big")
@pytest.mark.parametrize(
    "scores, parent_of, budget, keywords, expected",
    [
        ([0.1, 0.5, 0.9, 0.3], PARENT_OF, 100, {}, [A, B, C]),  # a's 11th alpha first: a, then b, then c
        ([0.1, 0.9, 0.2, 0.8], PARENT_OF, 100, {}, [B, C, A]),
        ([0.5, 0.5, 0.5, 0.5], PARENT_OF, 100, {}, [A, B, C]),  # a tie: the lower row first
        ([-0.5, -0.1, -0.9, -0.2], PARENT_OF, 100, {}, [B, C, A]),  # negative scores rank as any others
        ([0.1, 0.9, 0.2, 0.8], PARENT_OF, 100, {"depth": 2}, [B, C]),  # only the depth best units
        ([0.1, 0.9, 0.2, 0.8], PARENT_OF, 100, {"depth": 1}, [B]),
        ([0.9, 0.1, 0.2, 0.3], [None, 1, 0, 2], 100, {}, [C, A, B]),  # the best unit has no parent
        ([0.1, 0.9, 0.2, 0.8], PARENT_OF, 0, {}, []),
        ([0.1, 0.9, 0.2, 0.8], PARENT_OF, 8, {}, [B, C]),  # b 3 tokens, c 5: a does not fit, nor its unit
    ],
)
def test_small_to_big_by_hand(rag10, scores, parent_of, budget, keywords, expected):
    check.expect(pairs(rag10.small_to_big(PAGES, scores, UNITS, parent_of, PARENT_SPANS, budget, **keywords)),
                 expected)


@pytest.mark.grades("small_to_big")
def test_small_to_big_takes_a_numpy_row_and_reads_a_window_of_a_parent_too_big(rag10):
    import numpy as np

    spans = pairs(rag10.small_to_big(PAGES, np.array([0.1, 0.2, 0.9, 0.3], dtype=np.float32), UNITS, PARENT_OF,
                                     PARENT_SPANS, 100, span_tokens=12))
    assert len(spans) == 3 and spans[1:] == [C, B], f"returned {spans}, expected a window of a, then c and b"
    check_window(spans[0], "a", (60, 65), 12)  # around the 11th alpha, the best unit, not the 1st


@pytest.mark.grades("small_to_big")
@given(data=st.data(), n_units=st.integers(0, 12), n_parents=st.integers(1, 4), depth=st.integers(1, 12))
def test_property_small_to_big_reads_each_parent_once_in_the_order_of_its_best_unit(rag10, data, n_units,
                                                                                    n_parents, depth):
    pages = {"a": ALPHA}
    cuts = [len(ALPHA) * number // n_parents for number in range(n_parents + 1)]
    parents = [("a", start, end) for start, end in zip(cuts, cuts[1:])]
    units = [("a", start, start + 1) for start in range(n_units)]
    parent_of = data.draw(st.lists(st.one_of(st.none(), st.integers(0, n_parents - 1)), min_size=n_units,
                                   max_size=n_units))
    scores = data.draw(st.lists(st.sampled_from([0.0, 0.25, 0.5, 1.0]), min_size=n_units, max_size=n_units))
    order = sorted(range(n_units), key=lambda row: -scores[row])[:depth]  # stable: a tie keeps the lower row
    expected = list(dict.fromkeys(parents[parent_of[row]] for row in order if parent_of[row] is not None))
    check.expect(pairs(rag10.small_to_big(pages, scores, units, parent_of, parents, 1000, depth=depth)), expected)
