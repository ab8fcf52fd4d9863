"""Hidden grading tests for lab rag10 (instructors only): inputs the public tests never show."""

import grading_checks as check
import oracles
import pytest
from hypothesis import given
from hypothesis import strategies as st

from academy_llm import count_tokens, token_starts

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
    """Parents that tile [0, n) with no gap, and units anywhere in it, sorted by start as the lab says; half
    of them across three parents or more, where the parent holding a unit's middle character need not be
    the one sharing most with it."""
    cuts = sorted(set(draw(st.lists(st.integers(1, 299), max_size=30))) | {0, 300})
    parents = list(zip(cuts, cuts[1:]))
    units = []
    for _ in range(draw(st.integers(1, 15))):
        if len(parents) > 2 and draw(st.booleans()):  # across three parents or more, a short one in the middle
            first = draw(st.integers(0, len(parents) - 3))
            last = draw(st.integers(first + 2, len(parents) - 1))
            start = draw(st.integers(*parents[first]).filter(lambda place: place < parents[first][1]))
            units.append((start, draw(st.integers(parents[last][0] + 1, parents[last][1]))))
            continue
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
    ([2, 0, 1], [None, None, None], []),  # no unit has a parent
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


@pytest.mark.grades("best_parents")
@check.hidden_seed
@given(parent_of=st.lists(st.one_of(st.none(), st.integers(0, 9)), max_size=40), data=st.data())
def test_best_parents_hidden_property(rag10, parent_of, data):
    """Some of the units, in any order: each parent once, with the first of its units ranked."""
    ranked = data.draw(st.lists(st.integers(0, max(len(parent_of) - 1, 0)), unique=True, max_size=len(parent_of)))
    first = {}
    for unit in ranked:
        if parent_of[unit] is not None:
            first.setdefault(parent_of[unit], unit)
    check.expect([tuple(pair) for pair in rag10.best_parents(ranked, parent_of)], list(first.items()))


WORDS = ["backups", "run", "at", "night", "and", "keys", "rotate", "yearly.", "Satellites", "report", "in."]


@st.composite
def candidates_on_pages(draw):
    """Pages of plain words, each cut into parents at words, a run of words inside each parent as its
    unit (as rag7's chunks are), in any order."""
    pages, candidates = {}, []
    for number in range(draw(st.integers(1, 3))):
        words = draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=50))
        text = " ".join(words)
        starts = [len(" ".join(words[:i])) + (i > 0) for i in range(len(words))]
        ends = [start + len(word) for start, word in zip(starts, words)]
        pages[f"d{number}"] = text
        cuts = sorted({0, len(words), *draw(st.lists(st.integers(1, len(words)), max_size=2))})
        for first, stop in zip(cuts, cuts[1:]):
            unit_first = draw(st.integers(first, stop - 1))
            unit_last = draw(st.integers(unit_first, stop - 1))
            parent = (starts[first], len(text) if stop == len(words) else starts[stop])
            candidates.append((f"d{number}", parent, (starts[unit_first], ends[unit_last])))
    return pages, draw(st.permutations(candidates))


def check_window(page, parent, unit, span, room):
    """`span` lies in `parent`, holds `unit`, starts and ends where the parent's tokens do, counts at most
    `room` tokens, and grows past `room` by any one more of the parent's tokens, on either side."""
    assert parent[0] <= span[0] <= unit[0] and unit[1] <= span[1] <= parent[1], (
        f"the window {span} of the parent {parent} does not hold its unit {unit}")
    edges = [parent[0] + start for start in token_starts(page[parent[0] : parent[1]])] + [parent[1]]
    assert span[0] in edges and span[1] in edges, f"the window {span} cuts a token of its parent {parent}"
    held = count_tokens(page[span[0] : span[1]])
    assert held <= room, f"the window {span} holds {held} tokens, over the {room} left"
    at, to = edges.index(span[0]), edges.index(span[1])
    wider = ([(edges[at - 1], span[1])] if at else []) + ([(span[0], edges[to + 1])] if to + 1 < len(edges) else [])
    for start, end in wider:
        assert count_tokens(page[start:end]) > room, (
            f"the window {span} holds {held} tokens; {(start, end)} holds {count_tokens(page[start:end])}, "
            f"within the {room} left")
    return held


@pytest.mark.grades("assemble")
@check.hidden_seed
@given(data=candidates_on_pages(), budget=st.integers(0, 150), span_tokens=st.integers(1, 60))
def test_assemble_hidden_property(rag10, data, budget, span_tokens):
    """Best first: a parent whole where it fits in what is left (and span_tokens), else the widest window
    around its unit that does, else nothing for it; the walk ends when the budget is spent."""
    pages, candidates = data
    spans = [tuple(span) for span in rag10.assemble(pages, list(candidates), budget, span_tokens)]
    left, given_out = budget, 0
    for doc_id, parent, unit in candidates:
        room = min(left, span_tokens)
        if left <= 0 or count_tokens(pages[doc_id][unit[0] : unit[1]]) > room:
            continue
        assert given_out < len(spans), f"returned {spans}: nothing for the candidate {(doc_id, parent, unit)}"
        span = spans[given_out]
        assert span[0] == doc_id, f"returned {spans}: span {given_out + 1} is not of {doc_id!r}, the next candidate's"
        if count_tokens(pages[doc_id][parent[0] : parent[1]]) <= room:
            check.expect(span, (doc_id, *parent))
            left -= count_tokens(pages[doc_id][parent[0] : parent[1]])
        else:
            left -= check_window(pages[doc_id], parent, unit, span[1:], room)
        given_out += 1
    check.expect(len(spans), given_out)


@st.composite
def scored_units(draw):
    """A CRLF page of words and wide characters, cut into parents at words, units inside them, scores
    with many ties, a depth and a budget small enough that windows are read."""
    words = draw(st.lists(st.sampled_from(WORDS + ["\U00029755", "x\r\ny"]), min_size=2, max_size=40))
    text = " ".join(words)
    starts = [len(" ".join(words[:i])) + (i > 0) for i in range(len(words))]
    cuts = sorted({0, len(words), *draw(st.lists(st.integers(1, len(words) - 1), max_size=4))})
    parents = [("p", starts[first], len(text) if stop == len(words) else starts[stop] - 1)
               for first, stop in zip(cuts, cuts[1:])]
    units, parent_of = [], []
    for _ in range(draw(st.integers(0, 14))):
        parent = draw(st.integers(0, len(parents) - 1))
        first, stop = cuts[parent], cuts[parent + 1]
        word = draw(st.integers(first, stop - 1))
        units.append(("p", starts[word], starts[word] + len(words[word])))
        parent_of.append(draw(st.one_of(st.none(), st.just(parent))))
    scores = draw(st.lists(st.sampled_from([-0.5, 0.0, 0.3, 0.3, 0.9]), min_size=len(units), max_size=len(units)))
    return {"p": text}, scores, units, parent_of, parents


@pytest.mark.grades("small_to_big")
@check.hidden_seed
@given(data=scored_units(), budget=st.integers(0, 60), span_tokens=st.integers(1, 40), depth=st.integers(1, 15))
def test_small_to_big_hidden_property(rag10, data, budget, span_tokens, depth):
    pages, scores, units, parent_of, parents = data
    expected = oracles.small_to_big_spans(pages, scores, units, parent_of, parents, budget, span_tokens, depth)
    got = rag10.small_to_big(pages, scores, units, parent_of, parents, budget, span_tokens=span_tokens, depth=depth)
    check.expect([tuple(span) for span in got], expected)
