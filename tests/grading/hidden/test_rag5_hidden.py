"""Hidden grading tests for lab rag5 (instructors only): inputs the public tests never show."""

import random
import re

import grading_checks as check
import pytest
import wire
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import clean_prose, lined_prose, lined_text, prose

from academy_llm import count_tokens

pytestmark = pytest.mark.grade("rag5")

PARAGRAPHS = ("Backups run nightly at two.\r\nThey keep seven copies.\r\n\r\n"
              "Restores need the key; keep it offline.\r\n\r\n"
              "Rotate the key once a year.\r\n")


@pytest.fixture(scope="module")
def rag5(open_lab):
    return open_lab("rag5")


def as_pairs(value):
    """The lab's spans as (start, end) tuples, whether it returned tuples or lists."""
    if isinstance(value, list) and all(isinstance(item, (list, tuple)) for item in value):
        return [tuple(item) for item in value]
    return value


def paragraphs_packed(text: str, max_tokens: int) -> list:
    """The spans of `text`'s CRLF paragraphs, neighbours merged while their tokens fit in `max_tokens`
    (each paragraph fits alone, and a CRLF blank line ends a token, so the counts add up)."""
    starts = [0] + [match.end() for match in re.finditer("\r\n\r\n", text)]
    packed = []
    for start, end in zip(starts, starts[1:] + [len(text)]):
        if packed and count_tokens(text[packed[-1][0]:end]) <= max_tokens:
            packed[-1] = (packed[-1][0], end)
        else:
            packed.append((start, end))
    return packed


@pytest.mark.grades("split_at_seams")
@pytest.mark.parametrize("budget", ["the widest paragraph", "the first, or the last two", "the whole text"])
def test_crlf_paragraphs_hidden(rag5, budget):
    # Three CRLF paragraphs, their letters the submission's own, at budgets their token counts set:
    # each chunk starts at a paragraph.
    text = check.varied(PARAGRAPHS, "split_at_seams")
    first, second, third = (count_tokens(paragraph) for paragraph in re.split("(?<=\r\n\r\n)", text))
    max_tokens = {"the widest paragraph": max(first, second, third),
                  "the first, or the last two": max(first, second + third),
                  "the whole text": count_tokens(text) + 5}[budget]
    chunks = rag5.recursive_chunks(text, max_tokens)
    check.chunker_basics(text, chunks, max_tokens)
    check.expect(check.spans(chunks), paragraphs_packed(text, max_tokens))


@pytest.mark.grades("pack")
@pytest.mark.parametrize("spans, sizes, max_tokens, expected", [
    ([(0, 4), (4, 9), (9, 12), (12, 20)], [2, 3, 1, 4], 5, [(0, 9), (9, 20)]),  # fills to 5
    ([(0, 5), (5, 6), (6, 7)], [7, 1, 1], 5, [(0, 5), (5, 7)]),  # one span over budget alone
    ([], [], 5, []),
], ids=["exactly full", "a span over budget", "nothing"])
def test_pack_hidden(rag5, spans, sizes, max_tokens, expected):
    # Moved along the text and its sizes scaled, by the submission's seed: the same packing, other numbers.
    draw = random.Random(f"{check.submission_seed()}/pack")
    shift, scale = draw.randrange(1, 1000), draw.randrange(1, 10)
    spans, expected = ([(start + shift, end + shift) for start, end in pairs] for pairs in (spans, expected))
    got = rag5.pack(spans, [size * scale for size in sizes], max_tokens * scale)
    check.expect(as_pairs(got), expected)


@pytest.mark.grades("pack")
@check.hidden_seed
@given(text=clean_prose, max_tokens=st.integers(4, 24))
def test_pack_hidden_property(rag5, text, max_tokens):
    chunks = rag5.recursive_chunks(text, max_tokens)
    check.chunker_basics(text, chunks, max_tokens)
    check.packed_full(text, chunks, max_tokens)


@pytest.mark.grades("add_overlap")
@pytest.mark.parametrize("line_end", ["\n", "\r", "\r\n"], ids=["LF", "CR", "CRLF"])
def test_overlap_hidden_line_ends(rag5, line_end):
    text = "\n".join(f"Job {i} runs on satellite {i % 7} now." for i in range(30))
    text = check.varied(text, "add_overlap").replace("\n", line_end)  # its letters the submission's own
    packed = rag5.recursive_chunks(text, 14, 0)
    chunks = rag5.recursive_chunks(text, 20, 6)
    check.overlap_exact(text, chunks, packed, 20, 6)


@pytest.mark.grades("add_overlap")
@check.hidden_seed
@given(text=clean_prose, max_tokens=st.integers(4, 30), data=st.data())
def test_overlap_hidden_property(rag5, text, max_tokens, data):
    overlap = data.draw(st.integers(1, max_tokens - 1))
    packed = rag5.recursive_chunks(text, check.packing_budget(text, max_tokens, overlap), 0)
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check.overlap_exact(text, chunks, packed, max_tokens, overlap)


@pytest.mark.grades("recursive_chunks")
@check.hidden_seed
@given(text=st.one_of(lined_text, prose, lined_prose), max_tokens=st.integers(4, 24), data=st.data())
def test_recursive_chunks_hidden_property(rag5, text, max_tokens, data):
    """Lossless, in budget, and cut at the coarsest seams that fit (rag4's windows are none of the last)."""
    overlap = data.draw(st.integers(0, max_tokens - 1))
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check.chunker_basics(text, chunks, max_tokens)
    check.coarsest_seams(text, chunks, max_tokens, overlap)


@pytest.mark.grades("recursive_chunks")
@pytest.mark.parametrize("args, error", [
    (("a b", 5, 9), ValueError), (("a b", "5"), TypeError), (("a b", 5, None), TypeError)])
def test_recursive_chunks_hidden_errors(rag5, args, error):
    with pytest.raises(error):
        rag5.recursive_chunks(*args)


def word_cut_by(text, offset):
    """The word `offset` falls strictly inside, or None."""
    return next((word.group() for word in re.finditer(r"\S+", text) if word.start() < offset < word.end()), None)


@pytest.mark.grades("split_at_seams")
@check.hidden_seed
@given(text=st.one_of(prose, lined_prose), max_tokens=st.integers(6, 50))
def test_split_at_seams_hidden_property(rag5, text, max_tokens):
    """Spans tile the text; a text that fits is one span; no cut falls inside a word that fits."""
    spans = [tuple(span) for span in rag5.split_at_seams(text, 0, len(text), max_tokens,
                                                           wire.New("TokenIndex", (text,)))]
    ends = [0] + [end for _, end in spans]
    check.expect([start for start, _ in spans], ends[:-1])
    check.expect(ends[-1], len(text))
    if count_tokens(text) <= max_tokens:
        check.expect(spans, [(0, len(text))] if text else spans)
    for _, end in spans:
        word = word_cut_by(text, end)
        assert word is None or count_tokens(word) > max_tokens, (
            f"a span ends at {end}, inside {word!r}, a word of {count_tokens(word)} tokens")
