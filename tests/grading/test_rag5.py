"""Grading tests for lab rag5: split_at_seams, pack, add_overlap and recursive_chunks."""

import re

import grading_checks as check
import pytest
import wire
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, clean_prose, lined_prose, lined_text, prose

from academy_llm import count_tokens

pytestmark = pytest.mark.grade("rag5")

# Budgets from the smallest up: small ones make every seam count.
budgets = st.one_of(st.integers(4, 10), st.integers(4, 60))


@pytest.fixture(scope="module")
def rag5(open_lab):
    return open_lab("rag5")


PARAGRAPHS = (
    "Orbit runs jobs on satellites. The server decides what runs.\n\n"
    "Satellites dial out on port 7401. They never accept connections.\n\n"
    "Certificates last 90 days. They renew when a third remains.\n"
)


# ---- split_at_seams ----------------------------------------------------------
# Called directly, with the lab's own TokenIndex of the text (made in its worker), so that
# these points follow split_at_seams alone: a bug in pack or add_overlap costs nothing here.


def split(rag5, text, max_tokens):
    """split_at_seams over the whole text, its spans checked to tile it exactly, in order."""
    spans = [tuple(span) for span in rag5.split_at_seams(text, 0, len(text), max_tokens,
                                                           wire.New("TokenIndex", (text,)))]
    at = 0
    for start, end in spans:
        assert start == at and end >= start, (
            f"the spans {spans[:6]}… do not tile the text: ({start}, {end}) where one from {at} was expected")
        at = end
    assert at == len(text), f"the spans end at {at}, the text at {len(text)}"
    return spans


@pytest.mark.grades("split_at_seams")
def test_paragraphs_stay_whole_when_they_fit(rag5):
    spans = split(rag5, PARAGRAPHS, 20)
    check.expect([PARAGRAPHS[start:end].strip() for start, end in spans], PARAGRAPHS.strip().split("\n\n"))


@pytest.mark.grades("split_at_seams")
def test_sentences_are_the_next_seam(rag5):
    text = " ".join(f"Sentence number {i} says one short thing." for i in range(30))
    for start, end in split(rag5, text, 25):
        assert text[start:end].rstrip().endswith("."), f"the span {text[start:end]!r} ends inside a sentence"
        assert count_tokens(text[start:end]) <= 25, f"the span {text[start:end]!r} is over 25 tokens"


@pytest.mark.grades("split_at_seams")
def test_a_run_without_seams_falls_back_to_token_windows(rag5):
    url = "https://example.org/" + "a1b2c3d4" * 600
    text = f"See {url} for details."
    spans = split(rag5, text, 50)
    over = [(start, end) for start, end in spans if count_tokens(text[start:end]) > 50]
    assert not over, f"{len(over)} spans over 50 tokens, the first {over[0]}"
    least = count_tokens(url) // 50
    assert len(spans) >= least, f"{len(spans)} spans for a URL of {count_tokens(url)} tokens"


@pytest.mark.grades("split_at_seams")
def test_a_word_that_fits_only_without_its_spaces_is_not_cut(rag5):
    # "  aecbbaaaabaaab" is 9 tokens with its two spaces, 7 without: found by the deep profile
    text = ".  aecbbaaaabaaab"
    start, end = split(rag5, text, 8)[-1]
    check.expect(text[start:end], "aecbbaaaabaaab")


def word_cut_by(text, end):
    """The word (a run of non-space characters) that a span ending at `end` ends inside, or None."""
    for word in re.finditer(r"\S+", text):
        if word.start() < end < word.end():
            return word.group()
    return None


@pytest.mark.grades("split_at_seams")
@given(text=st.one_of(prose, lined_prose), max_tokens=st.integers(8, 60))
def test_property_no_cut_inside_a_word_that_fits(rag5, text, max_tokens):
    for start, end in split(rag5, text, max_tokens):
        word = word_cut_by(text, end)
        assert word is None or count_tokens(word) > max_tokens, (
            f"the span ({start}, {end}) ends inside {word!r}, a word of {count_tokens(word or '')} tokens")


# ---- pack ------------------------------------------------------------------------
# Called directly on spans and sizes: these points follow pack alone.


def greedy(sizes, max_tokens):
    """The chunks greedy packing makes, as (first span, last span) numbers: by hand, for the checks."""
    groups, total = [], 0
    for number, size in enumerate(sizes):
        if groups and total + size <= max_tokens:
            groups[-1][1], total = number, total + size
        else:
            groups.append([number, number])
            total = size
    return groups


@pytest.mark.grades("pack")
def test_neighbouring_paragraphs_are_packed_together(rag5):
    second, third = PARAGRAPHS.index("Satellites"), PARAGRAPHS.index("Certificates")
    spans = [(0, second), (second, third), (third, len(PARAGRAPHS))]
    sizes = [count_tokens(PARAGRAPHS[start:end]) for start, end in spans]
    packed = [tuple(chunk) for chunk in rag5.pack(spans, sizes, 40)]
    check.expect(packed, [(0, third), (third, len(PARAGRAPHS))])


@pytest.mark.grades("pack")
@pytest.mark.parametrize("max_tokens", [10, 12, 14])
def test_packing_fills_a_chunk_while_the_next_sentence_fits(rag5, max_tokens):
    spans = [(24 * i, 24 * (i + 1)) for i in range(12)]  # 12 sentences of 5 tokens
    packed = [tuple(chunk) for chunk in rag5.pack(spans, [5] * 12, max_tokens)]
    check.expect(packed, [(48 * i, 48 * (i + 1)) for i in range(6)])


@pytest.mark.grades("pack")
@given(sizes=st.lists(st.integers(1, 30), max_size=40), max_tokens=st.integers(1, 60))
def test_property_neighbours_that_fit_together_are_one_chunk(rag5, sizes, max_tokens):
    spans = [(10 * i, 10 * (i + 1)) for i in range(len(sizes))]
    packed = [tuple(chunk) for chunk in rag5.pack(spans, sizes, max_tokens)]
    expected = [(spans[first][0], spans[last][1]) for first, last in greedy(sizes, max_tokens)]
    check.expect(packed, expected)


# ---- add_overlap -----------------------------------------------------------------


@pytest.mark.grades("add_overlap")
@pytest.mark.parametrize("text", [" ".join(f"word{i}" for i in range(400)),
                                  "Orbit runs jobs on the server. " * 40],
                         ids=["words", "sentences"])
def test_overlap_reaches_back_to_a_word_start(rag5, text):
    packed = rag5.recursive_chunks(text, 22, 0)
    chunks = rag5.recursive_chunks(text, 30, 8)
    check.overlap_exact(text, chunks, packed, 30, 8)


RUNS = ["go https://example.com/" + "x" * 60, "a " + "😀" * 30 + " b"]  # token windows cut inside


@pytest.mark.grades("add_overlap")
@pytest.mark.parametrize("text", RUNS, ids=["URL", "emoji"])
def test_no_overlap_loses_nothing_and_shares_nothing(rag5, text):
    chunks = rag5.recursive_chunks(text, 8, 0)
    check.chunker_basics(text, chunks, 8)
    for before, after in zip(chunks, chunks[1:]):
        assert after.start == before.end, (
            f"{check.name(after)} starts at {after.start}, the chunk before it ends at "
            f"{before.end}: without overlap, neighbours meet")


@pytest.mark.grades("add_overlap")
@pytest.mark.parametrize("text", RUNS, ids=["URL", "emoji"])
def test_overlap_into_a_run_without_word_starts_loses_nothing(rag5, text):
    # No clean cut between the reach and the chunk's start: the chunk keeps its start.
    chunks = rag5.recursive_chunks(text, 8, 2)
    check.chunker_basics(text, chunks, 8)


@pytest.mark.grades("add_overlap")
def test_overlap_never_reaches_past_the_chunk_before(rag5):
    # Packed at 4 tokens a chunk, each chunk reaches back 8: the chunk before is all it may take.
    text = "Orbit runs jobs. " * 20
    packed = rag5.recursive_chunks(text, 4, 0)
    chunks = rag5.recursive_chunks(text, 12, 8)
    check.overlap_exact(text, chunks, packed, 12, 8)


@pytest.mark.grades("add_overlap")
@given(text=clean_prose, max_tokens=budgets, data=st.data())
def test_property_overlap_is_exact(rag5, text, max_tokens, data):
    overlap = data.draw(st.integers(1, max_tokens - 1))
    packed = rag5.recursive_chunks(text, check.packing_budget(text, max_tokens, overlap), 0)
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check.overlap_exact(text, chunks, packed, max_tokens, overlap)


# ---- recursive_chunks ------------------------------------------------------------


@pytest.mark.grades("recursive_chunks")
def test_repeated_text_gets_exact_offsets(rag5):
    text = "chunk chunk chunk. " * 40
    chunks = rag5.recursive_chunks(text, 14, 3)
    check.chunker_basics(text, chunks, 14)
    check.coarsest_seams(text, chunks, 14, 3)


@pytest.mark.grades("recursive_chunks")
@pytest.mark.parametrize("args, expected", check.edge_calls("a b"))
def test_empty_text_and_bad_parameters(rag5, args, expected):
    check.answers(rag5.recursive_chunks, args, expected)


@pytest.mark.grades("recursive_chunks")
@given(text=st.one_of(any_text, prose, lined_text, lined_prose), max_tokens=budgets,
       data=st.data())
def test_property_lossless_in_budget_deterministic(rag5, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 2))
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check.chunker_basics(text, chunks, max_tokens)
    check.coarsest_seams(text, chunks, max_tokens, overlap)
    check.same_again(rag5.recursive_chunks(text, max_tokens, overlap), chunks)


@pytest.mark.grades("recursive_chunks")
@pytest.mark.parametrize("text", ["토큰 " + "Orbit runs jobs. " * 10, "Orbit runs jobs.\n\n토큰 토큰\n\n" * 5],
                         ids=["sentences", "paragraphs"])
def test_the_least_budget_is_read_from_the_text(rag5, text):
    """'토큰' is 5 tokens with no token start inside: at 20 tokens and an overlap of 16, packing
    must aim at 5 (the given packing_budget, from the index), not at the 4 a character needs;
    and at 5, the sentences and paragraphs that fit stay whole."""
    chunks = rag5.recursive_chunks(text, 20, 16)
    check.chunker_basics(text, chunks, 20)
    check.coarsest_seams(text, chunks, 20, 16)


@pytest.mark.grades("recursive_chunks")
def test_recursive_chunks_keep_every_ending(rag5):
    def judge(text):
        chunks = rag5.recursive_chunks(text, 12, 3)
        check.chunker_basics(text, chunks, 12)
        check.coarsest_seams(text, chunks, 12, 3)

    check.every_ending(judge)
