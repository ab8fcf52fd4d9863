"""Grading tests for lab rag4: word_windows and token_windows."""

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, lined_text

pytestmark = pytest.mark.grade("rag4")

# Budgets from the smallest up: small ones make every window boundary count.
budgets = st.one_of(st.integers(4, 8), st.integers(4, 40))


@pytest.fixture(scope="module")
def rag4(open_lab):
    return open_lab("rag4")


# ---- word_windows --------------------------------------------------------


@pytest.mark.grades("word_windows")
def test_word_windows_small_example(rag4):
    text = "one two three four five six seven"
    chunks = rag4.word_windows(text, 3, 1)
    check.word_windows_exact(text, chunks, 3, 1)
    check.expect([c.text for c in chunks], ["one two three", "three four five", "five six seven"])


@pytest.mark.grades("word_windows")
def test_word_windows_repeated_words_get_their_own_offsets(rag4):
    text = "chunk chunk chunk chunk chunk"
    chunks = rag4.word_windows(text, 2, 0)
    check.word_windows_exact(text, chunks, 2, 0)
    check.expect(check.spans(chunks), [(0, 11), (12, 23), (24, 29)])


@pytest.mark.grades("word_windows")
def test_word_windows_keep_original_spacing(rag4):
    text = "alpha  beta\r\n\r\ngamma\tdelta "
    chunks = rag4.word_windows(text, 2, 0)
    check.word_windows_exact(text, chunks, 2, 0)
    check.expect(check.spans(chunks), [(0, 11), (15, 26)])


@pytest.mark.grades("word_windows")
@pytest.mark.parametrize("text", ["", "   \n\t  "])
def test_word_windows_of_no_words_is_empty(rag4, text):
    check.expect(rag4.word_windows(text, 5, 1), [])


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
@pytest.mark.parametrize("words, size, overlap", [(8, 3, 1), (10, 4, 0), (5, 4, 2), (2, 5, 1), (7, 7, 3)])
def test_word_windows_the_last_window_holds_the_words_left(rag4, words, size, overlap):
    """The windows cover every word: the last one holds what is left, however few."""
    text = " ".join(f"w{i}" for i in range(words))
    check.word_windows_exact(text, rag4.word_windows(text, size, overlap), size, overlap)


@pytest.mark.grades("word_windows")
@given(text=st.one_of(any_text, lined_text), size=st.integers(1, 12), data=st.data())
def test_word_windows_property_exact_windows(rag4, text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    chunks = rag4.word_windows(text, size, overlap)
    check.word_windows_exact(text, chunks, size, overlap)
    check.same_again(rag4.word_windows(text, size, overlap), chunks)


# ---- token_windows -------------------------------------------------------


@pytest.mark.grades("token_windows")
def test_token_windows_small_example(rag4):
    text = "hello world " * 20  # 41 tokens
    chunks = rag4.token_windows(text, 10, 0)
    check.token_windows_exact(text, chunks, 10, 0)
    check.expect([c.n_tokens for c in chunks], [10, 10, 10, 10, 1])


@pytest.mark.grades("token_windows")
def test_token_windows_repeated_words_get_their_own_offsets(rag4):
    text = "chunk chunk chunk chunk chunk chunk"
    chunks = rag4.token_windows(text, 2, 1)
    check.token_windows_exact(text, chunks, 2, 1)


@pytest.mark.grades("token_windows")
def test_token_windows_of_empty_text_is_empty(rag4):
    check.expect(rag4.token_windows("", 8, 2), [])


@pytest.mark.grades("token_windows")
def test_token_windows_keep_whitespace_only_text(rag4):
    chunks = rag4.token_windows("  \n\t ", 8, 2)
    check.token_windows_exact("  \n\t ", chunks, 8, 2)
    check.expect(check.spans(chunks), [(0, 5)])


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
def test_token_windows_a_character_over_the_budget_is_a_clear_error(rag4):
    # "𩝕" is 4 tokens and cannot be cut: no window of 3 tokens can hold it. The docstring asks
    # for a ValueError; its words are the student's.
    with pytest.raises(ValueError):
        rag4.token_windows("a 𩝕 b", 3, 0)


@pytest.mark.grades("token_windows")
def test_token_windows_overlap_is_exactly_overlap_tokens(rag4):
    text = " ".join(f"w{i}" for i in range(300))
    chunks = rag4.token_windows(text, 16, 4)
    check.token_windows_exact(text, chunks, 16, 4)


@pytest.mark.grades("token_windows")
@pytest.mark.parametrize("text",
                         ["𩝕" * 9, "👩\u200d👩\u200d👧 " * 6, "漢字😀" * 8 + " e\u0301" * 5],
                         ids=["4-token characters", "family emoji", "CJK, emoji, accents"])
def test_token_windows_give_back_tokens_until_the_window_fits(rag4, text):
    # Characters of 2 to 4 tokens: 5 of the page's tokens count up to 20 on their own.
    chunks = rag4.token_windows(text, 5, 1)
    check.token_windows_exact(text, chunks, 5, 1)


@pytest.mark.grades("token_windows")
@given(text=st.one_of(any_text, lined_text), max_tokens=st.one_of(st.integers(1, 3), budgets),
       data=st.data())
def test_token_windows_property_exact_windows(rag4, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens - 1))
    chunks = check.checked_token_windows(rag4, text, max_tokens, overlap)
    if chunks is not None:
        check.same_again(rag4.token_windows(text, max_tokens, overlap), chunks)


@pytest.mark.grades("word_windows")
def test_word_windows_keep_every_ending(rag4):
    check.every_ending(lambda text: check.word_windows_exact(text, rag4.word_windows(text, 6, 2), 6, 2))


@pytest.mark.grades("token_windows")
def test_token_windows_keep_every_ending(rag4):
    check.every_ending(lambda text: check.checked_token_windows(rag4, text, 8, 2))
