"""Grading tests for lab rag5: split_at_seams, pack, add_overlap and recursive_chunks."""

import re

import grading_checks as check
import pytest
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


# ---- split_at_seams --------------------------------------------------------


@pytest.mark.grades("split_at_seams")
def test_paragraphs_stay_whole_when_they_fit(rag5):
    chunks = rag5.recursive_chunks(PARAGRAPHS, 20)
    check.lossless(PARAGRAPHS, chunks)
    check.expect([c.text.strip() for c in chunks], PARAGRAPHS.strip().split("\n\n"))


@pytest.mark.grades("split_at_seams")
def test_sentences_are_the_next_seam(rag5):
    text = " ".join(f"Sentence number {i} says one short thing." for i in range(30))
    chunks = rag5.recursive_chunks(text, 25)
    check.chunker_basics(text, chunks, 25)
    for chunk in chunks:
        assert chunk.text.rstrip().endswith("."), f"{check.name(chunk)} ends inside a sentence"


@pytest.mark.grades("split_at_seams")
def test_a_run_without_seams_falls_back_to_token_windows(rag5):
    url = "https://example.org/" + "a1b2c3d4" * 600
    text = f"See {url} for details."
    chunks = rag5.recursive_chunks(text, 50)
    check.chunker_basics(text, chunks, 50)
    least = count_tokens(url) // 50
    assert len(chunks) >= least, f"{len(chunks)} chunks for a URL of {count_tokens(url)} tokens"


@pytest.mark.grades("split_at_seams")
def test_a_word_that_fits_only_without_its_spaces_is_not_cut(rag5):
    # "  aecbbaaaabaaab" is 9 tokens with its two spaces, 7 without: found by the deep profile
    text = ".  aecbbaaaabaaab"
    chunks = rag5.recursive_chunks(text, 8)
    check.lossless(text, chunks)
    check.expect(chunks[-1].text, "aecbbaaaabaaab")


def word_cut_by(text, chunk):
    """The word (a run of non-space characters) that `chunk` ends inside, or None."""
    for word in re.finditer(r"\S+", text):
        if word.start() < chunk.end < word.end():
            return word.group()
    return None


@pytest.mark.grades("split_at_seams")
@given(text=st.one_of(prose, lined_prose), max_tokens=st.integers(8, 60))
def test_property_no_cut_inside_a_word_that_fits(rag5, text, max_tokens):
    for chunk in rag5.recursive_chunks(text, max_tokens):
        word = word_cut_by(text, chunk)
        assert word is None or count_tokens(word) > max_tokens, (
            f"{check.name(chunk)} ends inside {word!r}, a word of {count_tokens(word or '')} "
            f"tokens")


# ---- pack ------------------------------------------------------------------------


@pytest.mark.grades("pack")
def test_neighbouring_paragraphs_are_packed_together(rag5):
    chunks = rag5.recursive_chunks(PARAGRAPHS, 40)
    check.lossless(PARAGRAPHS, chunks)
    second = PARAGRAPHS.index("Certificates")
    check.expect(check.spans(chunks), [(0, second), (second, len(PARAGRAPHS))])


@pytest.mark.grades("pack")
@pytest.mark.parametrize("max_tokens", [10, 12, 14])
def test_packing_fills_a_chunk_while_the_next_sentence_fits(rag5, max_tokens):
    text = " ".join(["Jobs run on satellites."] * 12)  # 12 sentences of 5 tokens
    chunks = rag5.recursive_chunks(text, max_tokens)
    check.lossless(text, chunks)
    check.expect([c.n_tokens for c in chunks], [10] * 6)


@pytest.mark.grades("pack")
@given(text=clean_prose, max_tokens=budgets)
def test_property_neighbours_that_fit_together_are_one_chunk(rag5, text, max_tokens):
    chunks = rag5.recursive_chunks(text, max_tokens)
    check.chunker_basics(text, chunks, max_tokens)
    check.packed_full(text, chunks, max_tokens)


# ---- add_overlap -----------------------------------------------------------------


@pytest.mark.grades("add_overlap")
@pytest.mark.parametrize("text", [" ".join(f"word{i}" for i in range(400)),
                                  "Orbit runs jobs on the server. " * 40],
                         ids=["words", "sentences"])
def test_overlap_reaches_back_to_a_word_start(rag5, text):
    packed = rag5.recursive_chunks(text, 22, 0)
    chunks = rag5.recursive_chunks(text, 30, 8)
    check.chunker_basics(text, chunks, 30)
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
    check.chunker_basics(text, chunks, 12)
    check.overlap_exact(text, chunks, packed, 12, 8)


@pytest.mark.grades("add_overlap")
@given(text=clean_prose, max_tokens=budgets, data=st.data())
def test_property_overlap_is_exact(rag5, text, max_tokens, data):
    overlap = data.draw(st.integers(1, max_tokens - 1))
    packed = rag5.recursive_chunks(text, check.packing_budget(max_tokens, overlap), 0)
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check.chunker_basics(text, chunks, max_tokens)
    check.overlap_exact(text, chunks, packed, max_tokens, overlap)


# ---- recursive_chunks ------------------------------------------------------------


@pytest.mark.grades("recursive_chunks")
def test_repeated_text_gets_exact_offsets(rag5):
    text = "chunk chunk chunk. " * 40
    chunks = rag5.recursive_chunks(text, 12, 3)
    check.chunker_basics(text, chunks, 12)


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
    check.same_again(rag5.recursive_chunks(text, max_tokens, overlap), chunks)
