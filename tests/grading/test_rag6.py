"""Grading tests for lab rag6: recognising Markdown and markdown_chunks."""

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_oracle import cuts
from text_strategies import any_text, markdown_text

from academy_llm import check_budget, check_lossless, count_tokens

pytestmark = pytest.mark.grade("rag6")

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "markdown").glob("*.md"))


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


def fixture_text(path, line_end):
    return path.read_text(encoding="utf-8").replace("\n", line_end)


# ---- recognising Markdown -----------------------------------------------


@pytest.mark.grades("fence_opening")
@pytest.mark.parametrize(
    "line, expected",
    [("```", ("`", 3)), ("~~~~ toml", ("~", 4)), ("   ```python", ("`", 3)), ("    ```", None),
     ("``", None), ("``` a`b", None), ("~~~ a`b", ("~", 3)), ("text ```", None)],
)
def test_fence_opening(rag6, line, expected):
    assert rag6.fence_opening(line) == expected


@pytest.mark.grades("closes_fence")
@pytest.mark.parametrize(
    "line, char, length, expected",
    [("```", "`", 3, True), ("`````  ", "`", 3, True), ("``", "`", 3, False), ("~~~", "`", 3, False),
     ("``` python", "`", 3, False), ("```", "`", 4, False), ("   ~~~~", "~", 4, True)],
)
def test_closes_fence(rag6, line, char, length, expected):
    assert rag6.closes_fence(line, char, length) is expected


@pytest.mark.grades("atx_heading")
@pytest.mark.parametrize(
    "line, expected",
    [("# Install", (1, "Install")), ("### On Linux ###", (3, "On Linux")), ("#", (1, "")),
     ("####### seven", None), ("#5 bolts", None), ("  ## Indented", (2, "Indented")),
     ("## C# notes", (2, "C# notes")), ("    # code", None)],
)
def test_atx_heading(rag6, line, expected):
    assert rag6.atx_heading(line) == expected


@pytest.mark.grades("is_table_start")
@pytest.mark.parametrize(
    "rows, expected",
    [(["| a | b |", "|---|:-:|"], True), (["a | b", "--- | ---"], True), (["a | b", "---"], False),
     (["| a |", "|---|"], True), (["a b", "---"], False), (["| a | b |"], False),
     (["| a | b |", "| - x |"], False), (["    | a |", "|---|"], False)],
)
def test_is_table_start(rag6, rows, expected):
    lines = rag6.split_lines("\n".join(rows) + "\n")
    assert rag6.is_table_start(lines, 0) is expected


@pytest.mark.grades("enter_section")
def test_enter_section_keeps_the_path_above(rag6):
    path = rag6.enter_section((), 1, "Install")
    path = rag6.enter_section(path, 2, "On Linux")
    assert path == ((1, "Install"), (2, "On Linux"))
    assert rag6.enter_section(path, 2, "On macOS") == ((1, "Install"), (2, "On macOS"))
    assert rag6.enter_section(path, 3, "Debian") == ((1, "Install"), (2, "On Linux"), (3, "Debian"))
    assert rag6.enter_section(path, 1, "Upgrade") == ((1, "Upgrade"),)


# ---- markdown_chunks ----------------------------------------------------


@pytest.mark.grades("markdown_chunks")
def test_front_matter_is_one_chunk_and_sections_carry_paths(rag6):
    text = (FIXTURES[0].parent / "front-matter.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 200)
    assert chunks[0].kind == "front_matter" and chunks[0].text.startswith("---\nid: install-linux")
    assert chunks[0].text.rstrip().endswith("---")
    sections = [c.section for c in chunks[1:]]
    assert ("Install on Linux", "General", "Debian and Ubuntu") in sections
    assert ("Install on Linux", "General", "Fedora") in sections


@pytest.mark.grades("chunk_section")
def test_a_tiny_parent_section_folds_into_its_first_child(rag6):
    text = (FIXTURES[0].parent / "front-matter.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 40)
    general = [c for c in chunks if "## General" in c.text]
    assert len(general) == 1 and "### Debian and Ubuntu" in general[0].text
    assert general[0].section[-1] == "Debian and Ubuntu"


@pytest.mark.grades("markdown_chunks")
def test_a_hash_line_inside_a_fence_is_not_a_heading(rag6):
    text = (FIXTURES[0].parent / "headings-in-code.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 20)
    assert {c.section for c in chunks} == {("Real heading",), ("Real heading", "Real subheading")}


@pytest.mark.grades("markdown_chunks")
def test_setext_headings_make_sections(rag6):
    text = (FIXTURES[0].parent / "setext.md").read_text(encoding="utf-8")
    sections = {c.section for c in rag6.markdown_chunks(text, 30)}
    assert ("Install Orbit", "On Linux") in sections and ("Install Orbit", "On macOS") in sections


@pytest.mark.grades("chunk_section")
def test_an_oversize_table_stays_whole_and_is_flagged(rag6):
    text = (FIXTURES[0].parent / "forty-row-table.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 100)
    check_lossless(text, chunks)
    oversize = [c for c in chunks if c.oversize]
    assert len(oversize) == 1 and oversize[0].kind == "table"
    assert "| key | default |" in oversize[0].text and "key.number_39" in oversize[0].text
    assert all(count_tokens(c.text) <= 100 for c in chunks if not c.oversize)


@pytest.mark.grades("chunk_section")
def test_an_oversize_fence_in_a_list_after_a_heading_is_flagged_as_code(rag6):
    text = "# Title\r\n- ```\r\n- item"  # found by the deep profile
    oversize = [c for c in rag6.markdown_chunks(text, 4) if c.oversize]
    assert oversize and all(c.kind == "code" for c in oversize)


@pytest.mark.grades("markdown_chunks")
def test_overlap_never_starts_inside_a_table_or_fence(rag6):
    text = (FIXTURES[0].parent / "forty-row-table.md").read_text(encoding="utf-8")
    text = text.replace("After the table.", "After the table. " + "More words here. " * 40)
    chunks = rag6.markdown_chunks(text, 60, 20)
    check_lossless(text, chunks)
    assert not cuts(text, chunks)


@pytest.mark.grades("chunk_section")
@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixtures_against_a_real_markdown_parser(rag6, path, line_end):
    text = fixture_text(path, line_end)
    for max_tokens, overlap in ((8, 0), (16, 4), (64, 16), (400, 0)):
        chunks = rag6.markdown_chunks(text, max_tokens, overlap)
        check_lossless(text, chunks)
        check_budget(chunks, max_tokens)
        assert all(c.kind in ("code", "table", "front_matter") for c in chunks if c.oversize)
        assert not cuts(text, chunks), f"a fence or table is cut at max_tokens={max_tokens}"


@pytest.mark.grades("chunk_section")
@pytest.mark.parametrize(
    "text, max_tokens",
    [
        # Heading and list came out over budget together, and mending them word
        # by word cut between the list marker and the fence.
        ("# Title\r\n- ```\r\n# Title", 5),
        # A form feed is text, not blank: the first line is a paragraph, so the
        # HTML tag under it does not start a block, and the fence after it does.
        ("\x0c\n</script>\n```\x0c\n# Title\n# Title", 4),
        # The same in a list item: its form feed is a paragraph the tag continues.
        ("- \x0c\n</script>\n~~~~ toml\n# Title", 4),
        # An unclosed fence in the last list item runs over the blank lines after it.
        ("\n- ```\n \n ", 4),
    ],
    ids=["fence in a list under a heading", "form feed line", "form feed item", "unclosed fence in a list"],
)
def test_cases_found_by_the_deep_profile_and_fuzzing(rag6, text, max_tokens):
    chunks = rag6.markdown_chunks(text, max_tokens)
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    assert not cuts(text, chunks)


@pytest.mark.grades("markdown_chunks")
def test_empty_text_gives_no_chunks(rag6):
    assert rag6.markdown_chunks("", 10) == []


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize(
    "args, error",
    [(("# a", 0), ValueError), (("# a", 5, 5), ValueError), ((b"# a", 5), TypeError), ((3, 5), TypeError)],
)
def test_bad_parameters_get_clear_errors(rag6, args, error):
    with pytest.raises(error):
        rag6.markdown_chunks(*args)


@pytest.mark.grades("markdown_chunks")
@given(text=st.one_of(markdown_text, any_text), max_tokens=st.integers(4, 80), data=st.data())
def test_property_lossless_in_budget_nothing_protected_cut(rag6, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 2))
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check_lossless(text, chunks)
    check_budget(chunks, max_tokens)
    assert all(c.kind in ("code", "table", "front_matter") for c in chunks if c.oversize)
    assert not cuts(text, chunks)
    assert rag6.markdown_chunks(text, max_tokens, overlap) == chunks, "not deterministic"
