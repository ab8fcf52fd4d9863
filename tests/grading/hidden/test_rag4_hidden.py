"""Hidden grading tests for lab rag4 (instructors only): inputs the public tests never show."""

import grading_checks as check
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import clean_prose, lined_prose, lined_text

pytestmark = pytest.mark.grade("rag4")


@pytest.fixture(scope="module")
def rag4(open_lab):
    return open_lab("rag4")


@pytest.mark.grades("word_windows")
@pytest.mark.parametrize("text, size, overlap, expected", [
    ("α β\r\nγ\u00a0δ\tε  ζ", 4, 2, [(0, 8), (5, 13)]),  # CRLF, no-break space, tab
    ("a\rb\r\nc", 1, 0, [(0, 1), (2, 3), (5, 6)]),  # lone CR
    ("  lead and trail  ", 10, 3, [(2, 16)]),  # fewer words than a window
    ("x " * 7, 3, 2, [(0, 5), (2, 7), (4, 9), (6, 11), (8, 13)]),  # one word forward each time
], ids=["CRLF and no-break space", "CR between letters", "short text", "overlap of size - 1"])
def test_word_windows_hidden_examples(rag4, text, size, overlap, expected):
    text = check.varied(text, "word_windows")  # its shape kept, its letters the submission's own
    chunks = rag4.word_windows(text, size, overlap)
    check.word_windows_exact(text, chunks, size, overlap)
    check.expect(check.spans(chunks), expected)


@pytest.mark.grades("word_windows")
@check.hidden_seed
@given(text=st.one_of(lined_text, lined_prose), size=st.integers(1, 6), data=st.data())
def test_word_windows_hidden_property(rag4, text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    check.word_windows_exact(text, rag4.word_windows(text, size, overlap), size, overlap)


@pytest.mark.grades("token_windows")
def test_token_windows_hidden_crlf_sentences(rag4):
    # Its letters the submission's own: token_windows_exact decides each window, whatever the words.
    text = check.varied("The quick brown fox jumps over the lazy dog.\r\n" * 3, "token_windows")
    chunks = rag4.token_windows(text, 7, 3)
    assert len(chunks) > 1, f"{len(chunks)} chunk(s) of a text of {len(check.token_starts(text))} tokens"
    check.token_windows_exact(text, chunks, 7, 3)


@pytest.mark.grades("token_windows")
@pytest.mark.parametrize("max_tokens, overlap", [(3, 1), (4, 3), (6, 0)])
def test_token_windows_hidden_multi_token_characters(rag4, max_tokens, overlap):
    text = check.shuffled("Ünïcödé 😀😀 текст 漢字漢字 👍🏽🇫🇷", "token_windows")  # characters of several tokens
    chunks = rag4.token_windows(text, max_tokens, overlap)
    check.token_windows_exact(text, chunks, max_tokens, overlap)


# The docstring's argument clauses, a test each, so that each weighs a test's share of the points
# (a case of a test weighs that share over its cases): a budget or overlap that is no int, a bool
# (an int to isinstance: the docstring names it, as it is the slip to expect), and values out of range.
@pytest.mark.grades("token_windows")
@pytest.mark.parametrize("args", [("a b", 4, 1.0), ("a b", "4", 0)], ids=["float overlap", "str budget"])
def test_token_windows_hidden_refuse_what_is_no_int(rag4, args):
    with pytest.raises(TypeError):
        rag4.token_windows(*args)


@pytest.mark.grades("token_windows")
@pytest.mark.parametrize("args", [("a b", True, 0), ("a b", 4, False)], ids=["bool budget", "bool overlap"])
def test_token_windows_hidden_refuse_a_bool(rag4, args):
    with pytest.raises(TypeError):
        rag4.token_windows(*args)


@pytest.mark.grades("token_windows")
@pytest.mark.parametrize("args", [("a b", -3, 0), ("𪛖", 2, 0)], ids=["negative budget", "4-token character"])
def test_token_windows_hidden_errors(rag4, args):
    with pytest.raises(ValueError):
        rag4.token_windows(*args)


@pytest.mark.grades("token_windows")
@check.hidden_seed
@given(text=st.one_of(lined_text, clean_prose), max_tokens=st.integers(1, 16), data=st.data())
def test_token_windows_hidden_property(rag4, text, max_tokens, data):
    check.checked_token_windows(rag4, text, max_tokens, data.draw(st.integers(0, max_tokens - 1)))
