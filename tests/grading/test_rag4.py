"""Grading tests for lab rag4: word_windows and token_windows."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text

from academy_llm import Chunk, check_budget, check_lossless, count_tokens, token_starts

pytestmark = pytest.mark.grade("rag4")


@pytest.fixture(scope="module")
def rag4(open_lab):
    return open_lab("rag4")


def spans(chunks):
    return [(c.start, c.end) for c in chunks]


# ---- word_windows --------------------------------------------------------


@pytest.mark.grades("word_windows")
def test_word_windows_small_example(rag4):
    text = "one two three four five six seven"
    chunks = rag4.word_windows(text, 3, 1)
    assert [c.text for c in chunks] == ["one two three", "three four five", "five six seven"]
    assert all(isinstance(c, Chunk) and c.text == text[c.start : c.end] for c in chunks)


@pytest.mark.grades("word_windows")
def test_word_windows_repeated_words_get_their_own_offsets(rag4):
    text = "chunk chunk chunk chunk chunk"
    assert spans(rag4.word_windows(text, 2, 0)) == [(0, 11), (12, 23), (24, 29)]


@pytest.mark.grades("word_windows")
def test_word_windows_keep_original_spacing(rag4):
    text = "alpha  beta\r\n\r\ngamma\tdelta "
    chunks = rag4.word_windows(text, 2, 0)
    assert [c.text for c in chunks] == ["alpha  beta", "gamma\tdelta"]
    assert spans(chunks) == [(0, 11), (15, 26)]


@pytest.mark.grades("word_windows")
@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_word_windows_of_no_words_is_empty(rag4, text):
    assert rag4.word_windows(text, 5, 1) == []


@pytest.mark.grades("word_windows")
@pytest.mark.parametrize(
    "args, error",
    [(("a b", 0, 0), ValueError), (("a b", 3, 3), ValueError), (("a b", 3, -1), ValueError),
     ((b"a b", 3, 1), TypeError), ((None, 3, 1), TypeError), (("a b", 2.5, 0), TypeError)],
)
def test_word_windows_reject_bad_parameters(rag4, args, error):
    with pytest.raises(error):
        rag4.word_windows(*args)


@pytest.mark.grades("word_windows")
@given(text=any_text, size=st.integers(1, 12), data=st.data())
def test_word_windows_property_lossless_and_overlapping(rag4, text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    chunks = rag4.word_windows(text, size, overlap)
    check_lossless(text, chunks, whitespace_may_be_lost=True)
    words = [m.span() for m in re.finditer(r"\S+", text)]
    assert len(words) == 0 or chunks, "text with words gave no chunks"
    for before, after in zip(chunks, chunks[1:]):
        shared = [w for w in words if after.start <= w[0] and w[1] <= before.end]
        assert len(shared) == overlap
    assert all(len(re.findall(r"\S+", c.text)) <= size for c in chunks)
    assert rag4.word_windows(text, size, overlap) == chunks, "not deterministic"


# ---- token_windows -------------------------------------------------------


@pytest.mark.grades("token_windows")
def test_token_windows_small_example(rag4):
    text = "hello world " * 20
    chunks = rag4.token_windows(text, 10, 0)
    assert [c.n_tokens for c in chunks] == [10, 10, 10, 10, 1]  # 41 tokens
    assert "".join(c.text for c in chunks) == text


@pytest.mark.grades("token_windows")
def test_token_windows_repeated_words_get_their_own_offsets(rag4):
    text = "chunk chunk chunk chunk chunk chunk"
    chunks = rag4.token_windows(text, 2, 1)
    assert chunks[0].start == 0 and chunks[-1].end == len(text)
    assert [c.start for c in chunks] == sorted({c.start for c in chunks})
    check_lossless(text, chunks)


@pytest.mark.grades("token_windows")
def test_token_windows_of_empty_text_is_empty(rag4):
    assert rag4.token_windows("", 8, 2) == []


@pytest.mark.grades("token_windows")
def test_token_windows_keep_whitespace_only_text(rag4):
    assert spans(rag4.token_windows("  \n\t ", 8, 2)) == [(0, 5)]


@pytest.mark.grades("token_windows")
@pytest.mark.parametrize(
    "args, error",
    [(("a b", 0, 0), ValueError), (("a b", 4, 4), ValueError), (("a b", 4, 9), ValueError),
     ((b"a b", 4, 1), TypeError), ((["a"], 4, 1), TypeError)],
)
def test_token_windows_reject_bad_parameters(rag4, args, error):
    with pytest.raises(error):
        rag4.token_windows(*args)


@pytest.mark.grades("token_windows")
def test_token_windows_overlap_is_shared_text(rag4):
    text = " ".join(f"w{i}" for i in range(300))
    chunks = rag4.token_windows(text, 16, 4)
    for before, after in zip(chunks, chunks[1:]):
        assert after.start < before.end
        assert count_tokens(text[after.start : before.end]) in (3, 4, 5)


@pytest.mark.grades("token_windows")
@given(text=any_text, max_tokens=st.integers(4, 40), data=st.data())
def test_token_windows_property_lossless_in_budget_at_token_starts(rag4, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens - 1))
    chunks = rag4.token_windows(text, max_tokens, overlap)
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    cut_points = set(token_starts(text)) | {len(text)}
    assert all(c.start in cut_points and c.end in cut_points for c in chunks)
    assert all(c.n_tokens == count_tokens(c.text) for c in chunks)
    assert rag4.token_windows(text, max_tokens, overlap) == chunks, "not deterministic"
