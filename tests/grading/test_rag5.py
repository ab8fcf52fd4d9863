"""Grading tests for lab rag5: recursive_chunks."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, prose

from academy_llm import Chunk, check_budget, check_lossless, count_tokens

pytestmark = pytest.mark.grade("rag5")


@pytest.fixture(scope="module")
def rag5(open_lab):
    return open_lab("rag5")


PARAGRAPHS = (
    "Orbit runs jobs on satellites. The server decides what runs.\n\n"
    "Satellites dial out on port 7401. They never accept connections.\n\n"
    "Certificates last 90 days. They renew when a third remains.\n"
)


@pytest.mark.grades("split_at_seams")
def test_paragraphs_stay_whole_when_they_fit(rag5):
    chunks = rag5.recursive_chunks(PARAGRAPHS, 20)
    assert all(isinstance(c, Chunk) for c in chunks)
    assert [c.text.strip() for c in chunks] == [p for p in PARAGRAPHS.strip().split("\n\n")]
    check_lossless(PARAGRAPHS, chunks)


@pytest.mark.grades("pack")
def test_neighbouring_paragraphs_are_packed_together(rag5):
    chunks = rag5.recursive_chunks(PARAGRAPHS, 40)
    assert len(chunks) == 2
    assert chunks[0].text.endswith("connections.\n\n")


@pytest.mark.grades("split_at_seams")
def test_sentences_are_the_next_seam(rag5):
    text = " ".join(f"Sentence number {i} says one short thing." for i in range(30))
    chunks = rag5.recursive_chunks(text, 25)
    check_lossless(text, chunks)
    check_budget(chunks, 25)
    assert all(c.text.rstrip().endswith(".") for c in chunks)


@pytest.mark.grades("split_at_seams")
def test_a_run_without_seams_falls_back_to_token_windows(rag5):
    url = "https://example.org/" + "a1b2c3d4" * 600
    text = f"See {url} for details."
    chunks = rag5.recursive_chunks(text, 50)
    check_lossless(text, chunks)
    check_budget(chunks, 50)
    assert len(chunks) >= count_tokens(url) // 50


@pytest.mark.grades("recursive_chunks")
def test_repeated_text_gets_exact_offsets(rag5):
    text = "chunk chunk chunk. " * 40
    chunks = rag5.recursive_chunks(text, 12, 3)
    check_lossless(text, chunks)
    check_budget(chunks, 12)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)


@pytest.mark.grades("add_overlap")
def test_overlap_reaches_back_to_a_word_start(rag5):
    text = " ".join(f"word{i}" for i in range(400))
    chunks = rag5.recursive_chunks(text, 30, 8)
    check_lossless(text, chunks)
    check_budget(chunks, 30)
    for before, after in zip(chunks, chunks[1:]):
        assert after.start < before.end, "neighbours should share text"
        # the overlap begins at a word: at the space before it (where the tokenizer starts " word")
        assert text[after.start] == " " and not text[after.start - 1].isspace()
        assert count_tokens(text[after.start : before.end]) <= 10


@pytest.mark.grades("split_at_seams")
def test_a_word_that_fits_only_without_its_spaces_is_not_cut(rag5):
    # "  aecbbaaaabaaab" is 9 tokens with its two spaces, 7 without: found by the deep profile
    text = ".  aecbbaaaabaaab"
    chunks = rag5.recursive_chunks(text, 8)
    check_lossless(text, chunks)
    assert chunks[-1].text == "aecbbaaaabaaab"


@pytest.mark.grades("recursive_chunks")
def test_empty_text_gives_no_chunks(rag5):
    assert rag5.recursive_chunks("", 10) == []


@pytest.mark.grades("recursive_chunks")
@pytest.mark.parametrize(
    "args, error",
    [(("a b", 0), ValueError), (("a b", 5, 5), ValueError), (("a b", 5, -1), ValueError),
     ((b"a b", 5), TypeError), ((None, 5), TypeError)],
)
def test_bad_parameters_get_clear_errors(rag5, args, error):
    with pytest.raises(error):
        rag5.recursive_chunks(*args)


def ends_inside_a_word(text, chunk):
    return 0 < chunk.end < len(text) and not text[chunk.end - 1].isspace() and not text[chunk.end].isspace()


@pytest.mark.grades("recursive_chunks")
@given(text=st.one_of(any_text, prose), max_tokens=st.integers(4, 60), data=st.data())
def test_property_lossless_in_budget_deterministic(rag5, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 2))
    chunks = rag5.recursive_chunks(text, max_tokens, overlap)
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    assert all(c.n_tokens == count_tokens(c.text) for c in chunks)
    assert rag5.recursive_chunks(text, max_tokens, overlap) == chunks, "not deterministic"


@pytest.mark.grades("split_at_seams")
@given(text=prose, max_tokens=st.integers(8, 60))
def test_property_no_cut_inside_a_word_that_fits(rag5, text, max_tokens):
    chunks = rag5.recursive_chunks(text, max_tokens)
    for chunk in chunks:
        if ends_inside_a_word(text, chunk):
            word = re.compile(r"\S+").search(text, text.rfind(" ", 0, chunk.end) + 1)
            assert count_tokens(word.group()) > max_tokens, f"cut inside {word.group()!r}"
