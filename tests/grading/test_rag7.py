"""Grading tests for lab rag7: make_header and header_chunks."""

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_oracle import cuts
from text_strategies import any_text, markdown_text

from academy_llm import check_budget, check_lossless, count_tokens

pytestmark = pytest.mark.grade("rag7")

PAGE = """---
id: install-linux
title: Install on Linux
applies_to: "2.x"
---

# Install on Linux

## On Debian and Ubuntu

Add the repository key, then install the package with apt.

## On Fedora

Use dnf. The service starts on boot.
"""


@pytest.fixture(scope="module")
def rag7(open_lab):
    return open_lab("rag7")


@pytest.mark.grades("make_header")
@pytest.mark.parametrize(
    "section, metadata, expected",
    [
        (("Install", "On Linux"), {"applies_to": "2.x"}, "Orbit docs › Install › On Linux (applies to 2.x)"),
        (("Install",), {}, "Orbit docs › Install"),
        ((), {"applies_to": "2.4+", "edition": "enterprise"}, "Orbit docs (applies to 2.4+; edition enterprise)"),
    ],
)
def test_make_header(rag7, section, metadata, expected):
    assert rag7.make_header("Orbit docs", section, metadata) == expected


@pytest.mark.grades("header_chunks")
def test_headers_come_from_title_headings_and_front_matter(rag7):
    chunks = rag7.header_chunks(PAGE, "Orbit docs", 64)
    debian = next(c for c in chunks if "apt" in c.text)
    assert debian.header == "Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)"
    body = [line for line in debian.text.splitlines() if not line.startswith("#")]
    assert not any("Ubuntu" in line for line in body)  # only the heading says Ubuntu
    assert debian.embedding_text == debian.header + "\n" + debian.text


@pytest.mark.grades("header_chunks")
def test_the_header_is_never_part_of_the_text(rag7):
    chunks = rag7.header_chunks(PAGE, "Orbit docs", 40)
    check_lossless(PAGE, chunks)
    assert all(c.header and c.header not in c.text for c in chunks)


@pytest.mark.grades("header_chunks")
def test_explicit_metadata_replaces_the_front_matter_fields(rag7):
    chunks = rag7.header_chunks(PAGE, "Docs", 64, metadata={"edition": "community"})
    assert all(c.header.endswith("(edition community)") for c in chunks)


@pytest.mark.grades("header_chunks")
def test_the_header_counts_against_the_budget(rag7):
    text = "# A heading that is rather long for a heading\n\n" + "Words of the body follow here. " * 60
    for max_tokens in (30, 50, 80):
        chunks = rag7.header_chunks(text, "Orbit documentation portal", max_tokens)
        check_lossless(text, chunks)
        assert all(count_tokens(c.header + "\n" + c.text) <= max_tokens for c in chunks)


@pytest.mark.grades("header_chunks")
def test_a_header_longer_than_the_budget_is_a_clear_error(rag7):
    with pytest.raises(ValueError, match="header"):
        rag7.header_chunks("# Title\n\nText.", "A very long title " * 10, 20)


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize(
    "args, error",
    [(("# a", "T", 0), ValueError), (("# a", "T", 5, 5), ValueError), ((b"# a", "T", 50), TypeError),
     (("# a", None, 50), TypeError)],
)
def test_bad_parameters_get_clear_errors(rag7, args, error):
    with pytest.raises(error):
        rag7.header_chunks(*args)


@pytest.mark.grades("header_chunks")
def test_empty_text_gives_no_chunks(rag7):
    assert rag7.header_chunks("", "T", 50) == []


@pytest.mark.grades("header_chunks")
@given(text=st.one_of(markdown_text, any_text), max_tokens=st.integers(40, 120), data=st.data())
def test_property_lossless_header_and_text_in_budget(rag7, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 4))
    try:
        chunks = rag7.header_chunks(text, "Orbit", max_tokens, overlap)
    except ValueError as error:  # documented: a heading too long to leave room for text
        assert str(error).startswith("the header ") and "raise max_tokens" in str(error)
        return
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    assert all(c.kind in ("code", "table", "front_matter") for c in chunks if c.oversize)
    assert not cuts(text, chunks)
    assert all(c.header.startswith("Orbit") for c in chunks)
    assert rag7.header_chunks(text, "Orbit", max_tokens, overlap) == chunks, "not deterministic"
