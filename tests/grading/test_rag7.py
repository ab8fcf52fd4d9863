"""Grading tests for lab rag7: make_header, header_chunks and with_table_rows."""

import re

import grading_checks as check
import pytest
from academy_llm import make_chunk
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, lined_text, markdown_page, markdown_text, table_page

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
        (("Install", "On Linux"), {"applies_to": "2.x"},
         "Orbit docs › Install › On Linux (applies to 2.x)"),
        (("Install",), {}, "Orbit docs › Install"),
        ((), {"applies_to": "2.4+", "edition": "enterprise"},
         "Orbit docs (applies to 2.4+; edition enterprise)"),
    ],
)
def test_make_header(rag7, section, metadata, expected):
    check.expect(rag7.make_header("Orbit docs", section, metadata), expected)


@pytest.mark.grades("make_header")
def test_make_header_leaves_empty_parts_out(rag7):
    """An empty title or heading is left out of the path, as the lab says, separators and all."""
    check.expect(rag7.make_header("", ("Install",), {}), "Install")
    check.expect(rag7.make_header("Docs", ("", "Usage"), {}), "Docs › Usage")


@pytest.mark.grades("header_chunks")
def test_headers_come_from_title_headings_and_front_matter(rag7):
    chunks = rag7.header_chunks(PAGE, "Orbit docs", 64)
    check.markdown_basics(PAGE, chunks, 64, "Orbit docs", header_of=rag7.make_header)
    debian = [c for c in chunks if "apt" in c.text]
    assert debian, "no chunk holds the Debian section's text"
    check.expect(debian[0].header,
                 "Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)")
    body = [line for line in debian[0].text.splitlines() if not line.startswith("#")]
    said = [line for line in body if "Ubuntu" in line]  # only the heading says Ubuntu
    assert not said, f"{check.name(debian[0])} says Ubuntu outside its heading: {said[0]!r}"


@pytest.mark.grades("header_chunks")
def test_the_header_is_never_part_of_the_text(rag7):
    chunks = rag7.header_chunks(PAGE, "Orbit docs", 40)
    check.markdown_basics(PAGE, chunks, 40, "Orbit docs", header_of=rag7.make_header)
    for chunk in chunks:
        assert chunk.header, f"{check.name(chunk)} has no header"
        assert chunk.header not in chunk.text, f"{check.name(chunk)} holds its header in its text"


@pytest.mark.grades("header_chunks")
def test_explicit_metadata_replaces_the_front_matter_fields(rag7):
    chunks = rag7.header_chunks(PAGE, "Docs", 64, metadata={"edition": "community"})
    check.markdown_basics(PAGE, chunks, 64, "Docs", {"edition": "community"}, header_of=rag7.make_header)
    for chunk in chunks:
        assert chunk.header.endswith("(edition community)"), (
            f"{check.name(chunk)} has the header {chunk.header!r}, not ending "
            f"'(edition community)'")


@pytest.mark.grades("header_chunks")
def test_the_header_counts_against_the_budget(rag7):
    text = ("# A heading that is rather long for a heading\n\n"
            + "Words of the body follow here. " * 60)
    for max_tokens in (30, 50, 80):
        chunks = rag7.header_chunks(text, "Orbit documentation portal", max_tokens)
        check.markdown_basics(text, chunks, max_tokens, "Orbit documentation portal", header_of=rag7.make_header)


DEEP_PAGE = ("# Installing the server\n\n## On Linux machines\n\n### On Debian and Ubuntu releases\n\n"
             "Add the repository key, then install the package with apt.\n")


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize("max_tokens, header", [
    (64, "Orbit documentation › Installing the server › On Linux machines › On Debian and Ubuntu releases"),
    (32, "Orbit documentation › … › On Linux machines › On Debian and Ubuntu releases"),
    (24, "Orbit documentation › … › On Debian and Ubuntu releases"),
])
def test_a_long_header_keeps_the_title_and_the_nearest_headings(rag7, max_tokens, header):
    """Each section goes through the given section_with_header, which shortens a header of more
    than half of max_tokens: the page is chunked, never refused for its headings."""
    chunks = rag7.header_chunks(DEEP_PAGE, "Orbit documentation", max_tokens)
    check.markdown_basics(DEEP_PAGE, chunks, max_tokens, "Orbit documentation", header_of=rag7.make_header)
    check.expect(chunks[-1].header, header)


@pytest.mark.grades("header_chunks")
def test_a_header_leaves_the_text_its_least_budget(rag7):
    """'토큰' needs 5 tokens with no cut inside, so of 8 the header may take 3: the title cut short."""
    text = "토큰 " * 10
    chunks = rag7.header_chunks(text, "Orbit docs", 8)
    check.markdown_basics(text, chunks, 8, "Orbit docs", header_of=rag7.make_header)
    check.expect({c.header for c in chunks}, {"Orbit…"})


@pytest.mark.grades("header_chunks")
def test_a_title_longer_than_the_budget_is_cut_short(rag7):
    chunks = rag7.header_chunks("# Title\n\nText.", "A very long title " * 10, 20)
    check.markdown_basics("# Title\n\nText.", chunks, 20, "A very long title " * 10, header_of=rag7.make_header)


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize(
    "args, error",
    [(("# a", "T", 0), ValueError), (("# a", "T", 5, 5), ValueError),
     ((b"# a", "T", 50), TypeError),
     (("# a", None, 50), TypeError)],
)
def test_bad_parameters_get_clear_errors(rag7, args, error):
    with pytest.raises(error):
        rag7.header_chunks(*args)


@pytest.mark.grades("header_chunks")
def test_overlap_reaches_back_on_plain_prose(rag7):
    """header_chunks(..., overlap): each chunk after the first shares text with the one before."""
    text = "# Satellites\n\n" + "Each satellite dials out to the server and runs its jobs. " * 12
    chunks = rag7.header_chunks(text, "Orbit", 48, 8)
    check.markdown_basics(text, chunks, 48, "Orbit", header_of=rag7.make_header)
    for before, after in zip(chunks, chunks[1:]):
        assert after.start < before.end, f"{check.name(after)} shares nothing with the chunk before, with overlap 8"


@pytest.mark.grades("header_chunks")
def test_empty_text_gives_no_chunks(rag7):
    check.expect(rag7.header_chunks("", "T", 50), [])


@pytest.mark.grades("header_chunks")
@given(text=st.one_of(markdown_page, markdown_text, any_text, lined_text),
       max_tokens=st.one_of(st.integers(24, 40), st.integers(24, 120)), data=st.data())
def test_property_lossless_header_and_text_in_budget(rag7, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 4))
    chunks = rag7.header_chunks(text, "Orbit", max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens, "Orbit", header_of=rag7.make_header)
    check.nothing_protected_cut(text, chunks)
    check.same_again(rag7.header_chunks(text, "Orbit", max_tokens, overlap), chunks)


@pytest.mark.grades("header_chunks")
def test_header_chunks_keep_every_ending(rag7):
    check.every_ending(lambda text: check.markdown_basics(text, rag7.header_chunks(text, "Orbit docs", 32), 32,
                                                          "Orbit docs", header_of=rag7.make_header))


# ---- with_table_rows: a chunk per table row ----------------------------------------

LIMITS = ("# Limits\n\nEach queue has its limits, read when the server starts.\n\n| limit | value |\n|---|---|\n"
          "| jobs | 40 |\n| retries | 3 |\n| timeout | 60 s |\n\nChange them in orbit.toml.\n")
ROW_HEADER = "Ops › Limits\n| limit | value |"


def given_chunks(text, spans, header="Ops › Limits"):
    """Chunks of `text` at `spans`, made here, so that with_table_rows is judged on its own."""
    return [make_chunk(text, start, end, section=("Limits",), header=header) for start, end in spans]


@pytest.mark.grades("with_table_rows")
def test_a_table_becomes_a_chunk_per_row_with_its_column_names(rag7):
    chunks = given_chunks(LIMITS, [(0, len(LIMITS))])
    rows = rag7.with_table_rows(LIMITS, chunks, 200)
    check.rows_judged(LIMITS, chunks, rows, 200)
    check.expect(check.spans(rows), [(0, 109), (109, 125), (125, 172)])
    check.expect([c.header for c in rows], ["Ops › Limits", ROW_HEADER, ROW_HEADER])


@pytest.mark.grades("with_table_rows")
def test_a_table_an_overlap_repeats_is_cut_into_rows_once(rag7):
    """The second chunk reaches back to the first's start and holds the table: its rows replace it."""
    chunks = given_chunks(LIMITS, [(0, 67), (0, 145), (145, 172)])
    rows = rag7.with_table_rows(LIMITS, chunks, 56)
    check.rows_judged(LIMITS, chunks, rows, 56)
    check.expect(check.spans(rows), [(0, 109), (109, 125), (125, 145), (145, 172)])
    check.expect([c.header for c in rows], ["Ops › Limits", ROW_HEADER, ROW_HEADER, "Ops › Limits"])


@pytest.mark.grades("with_table_rows")
def test_a_chunk_reaching_back_into_the_rows_leaves_each_row_its_chunk(rag7):
    """The second chunk starts inside the table's second row, which the first chunk cut into rows (an
    overlap, as header_chunks makes): each row after the first still starts a chunk, the last too."""
    chunks = given_chunks(LIMITS, [(0, 145), (115, 172)])
    check.rows_judged(LIMITS, chunks, rag7.with_table_rows(LIMITS, chunks, 200), 200)


@pytest.mark.grades("with_table_rows")
@pytest.mark.parametrize("text, max_tokens", [
    ("# Example\n\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n```\n", 200),  # a table shown in code
    ("# Two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n| c |\n|---|\n| 5 |\n| 6 |\n", 200),  # two tables
    ("# One\n\n| a | b |\n|---|---|\n| 1 | 2 |\n", 200),  # a table of one row
    ("# Prose\n\nJust words, and a | pipe.\n", 200),  # no table
    (LIMITS, 28),  # the first row's chunk, with the page before it, is over budget
], ids=["in a code block", "two tables", "one row", "no table", "a row over budget"])
def test_a_chunk_without_one_table_to_cut_stays_whole(rag7, text, max_tokens):
    chunks = given_chunks(text, [(0, len(text))])
    check.expect(check.spans(rag7.with_table_rows(text, chunks, max_tokens)), [(0, len(text))])


@pytest.mark.grades("with_table_rows")
def test_rows_keep_crlf_line_ends(rag7):
    text = LIMITS.replace("\n", "\r\n")
    chunks = given_chunks(text, [(0, 20), (20, len(text))])
    rows = rag7.with_table_rows(text, chunks, 200)
    check.rows_judged(text, chunks, rows, 200)
    check.expect(check.spans(rows), [(0, 20), (20, 116), (116, 133), (133, 183)])


def line_starts_outside_tables(text):
    """Where a line starts, not inside a table: where the chunks given to with_table_rows may meet."""
    tables = check.table_spans(text)
    starts = [m.end() for m in re.finditer(r"\r\n|\r|\n", text) if m.end() < len(text)]
    return [s for s in starts if not any(start < s <= end for start, end in tables)]


@pytest.mark.grades("with_table_rows")
@given(text=table_page, data=st.data())
def test_property_every_row_its_chunk(rag7, text, data):
    """Chunks meeting at line starts outside the table, any header, any budget: every row its chunk."""
    places = line_starts_outside_tables(text)
    cuts = sorted(data.draw(st.sets(st.sampled_from(places), max_size=3))) if places else []
    spans = [(start, end) for start, end in zip([0, *cuts], [*cuts, len(text)])]
    chunks = given_chunks(text, spans, header=data.draw(st.sampled_from(["", "Ops", "Ops › Limits (applies to 2.x)"])))
    max_tokens = data.draw(st.integers(24, 240))
    check.rows_judged(text, chunks, rag7.with_table_rows(text, chunks, max_tokens), max_tokens)
