"""Every chunker on every adversarial text: a correct result or a clear error, never a lost character.

The texts are made in adversarial_texts.py. The default run uses each at a
size that keeps the suite quick; the big ones at full size (a 5 MB line, a
million dots, 10,000 nested list items, a 10,000-row table) are marked slow:

    pytest -m slow
"""

import functools
import re

import grading_checks as check
import pytest
from adversarial_texts import FIXTURES
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, markdown_text
from markdown_oracle import cuts, indented_code_cuts

from labkit import markdown
from academy_llm import (
    check_budget,
    check_lossless,
    count_tokens,
    token_starts,
)
from labkit import load_lab

TITLE = "Orbit docs"


def call_word_windows(lab, text, budget):
    return lab.word_windows(text, budget, budget // 4)


def call_token_windows(lab, text, budget):
    return lab.token_windows(text, budget, budget // 4)


def call_recursive_chunks(lab, text, budget):
    return lab.recursive_chunks(text, budget, budget // 4)


def call_markdown_chunks(lab, text, budget):
    return lab.markdown_chunks(text, budget, budget // 4)


def call_header_chunks(lab, text, budget):
    return lab.header_chunks(text, TITLE, budget, budget // 4)


def call_table_rows(lab, text, budget):
    return lab.with_table_rows(text, lab.header_chunks(text, TITLE, budget, budget // 4), budget)


# chunker: (its lab, how to call it, the budgets to try). A budget of 3 is
# below what some characters need; for header_chunks, 6 leaves 3 tokens for
# text once the header "Orbit docs" and its line break have taken theirs.
CHUNKERS = {
    "word_windows": ("rag4", call_word_windows, (3, 64)),
    "token_windows": ("rag4", call_token_windows, (3, 64)),
    "recursive_chunks": ("rag5", call_recursive_chunks, (3, 64)),
    "markdown_chunks": ("rag6", call_markdown_chunks, (3, 64)),
    "header_chunks": ("rag7", call_header_chunks, (6, 80)),
    "table_rows": ("rag7", call_table_rows, (6, 80)),
}

# The errors a chunker may give instead of chunks, each saying what to change.
PIECE_TOO_BIG = re.compile(r"needs (\d+) tokens and cannot be cut: no token starts inside it; use max_tokens >= \1$")

SLOW = [pytest.mark.slow, pytest.mark.timeout(300)]  # a full-size text takes up to a minute


def cases():
    """(chunker, fixture, size) for every pair; a full size is marked slow where there is a small one."""
    for fixture in FIXTURES:
        if fixture.small is None:
            sizes = [(fixture.full, "", [])]
        else:
            sizes = [(fixture.small, " (small)", []), (fixture.full, "", SLOW)]
        for size, note, marks in sizes:
            for chunker in CHUNKERS:
                yield pytest.param(chunker, fixture, size, id=f"{chunker}-{fixture.name}{note}", marks=marks)


@functools.lru_cache(maxsize=2)
def text_of(fixture, size):
    """The fixture's text, built once for the five chunkers that take it in turn."""
    return fixture.build(size)


@pytest.fixture(scope="module")
def labs(lab_dir):
    return {lab: load_lab(lab, lab_dir) for lab in ("rag4", "rag5", "rag6", "rag7")}


@pytest.mark.parametrize("chunker, fixture, size", list(cases()))
def test_chunker_handles_adversarial_text(labs, chunker, fixture, size):
    lab, call, budgets = CHUNKERS[chunker]
    text = text_of(fixture, size)
    for budget in budgets:
        try:
            chunks = call(labs[lab], text, budget)
        except ValueError as error:
            assert_clear_error(text, budget, str(error))
            continue
        assert_correct(chunker, text, chunks, budget)


def assert_clear_error(text, budget, message):
    """Only the documented error is allowed, on one line, and only where the text explains it:
    a piece between two token starts that alone counts more than the budget."""
    assert "\n" not in message, message
    assert PIECE_TOO_BIG.search(message), message
    assert budget < check.min_budget(text), f"{message}, yet every piece of the text fits in {budget} tokens"


def assert_correct(chunker, text, chunks, budget):
    """Exact slices in order, nothing lost, within budget, cut only where a cut is allowed."""
    if chunker == "word_windows":
        check_lossless(text, chunks, whitespace_may_be_lost=True)
        assert all(len(chunk.text.split()) <= budget for chunk in chunks)
        return
    check_lossless(text, chunks)
    check_budget(chunks, budget)
    assert all(chunk.n_tokens == count_tokens(chunk.text) for chunk in chunks)
    assert all(chunk.kind in ("code", "table", "front_matter") for chunk in chunks if chunk.oversize)
    if chunker == "token_windows":  # a token may end inside a character; a chunk never does
        cut_points = set(token_starts(text)) | {len(text)}
        assert all(chunk.start in cut_points and chunk.end in cut_points for chunk in chunks)
    if chunker in ("markdown_chunks", "header_chunks"):
        assert not cuts(text, chunks), "a fence or table is cut"
        assert not indented_code_cuts(text, chunks), "an indented code block is cut"
    if chunker == "table_rows":  # tables are cut between rows, by design; fences never
        assert all(kind == "table_open" for kind, *_ in cuts(text, chunks)), "a fence is cut"


@given(text=st.one_of(markdown_text, any_text))
def test_fast_line_split_agrees_with_the_line_pattern(text):
    # the course's Markdown reader splits lines with str.splitlines, which also splits at \f, \x85, U+2028, ...
    assert markdown.split_lines(text) == list(markdown.iter_lines(text))
