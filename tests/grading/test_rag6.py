"""Grading tests for lab rag6: recognising Markdown and markdown_chunks."""

from pathlib import Path

import grading_checks as check
import pytest
from hypothesis import example, given
from hypothesis import strategies as st
from text_strategies import any_text, lined_text, markdown_page, markdown_text

pytestmark = pytest.mark.grade("rag6")

FIXTURES = sorted((Path(__file__).parent.parent / "fixtures" / "markdown").glob("*.md"))


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


# Budgets from the smallest up: small ones make every block boundary count.
budgets = st.one_of(st.integers(4, 12), st.integers(4, 80))


def fixture_text(path, line_end):
    return path.read_text(encoding="utf-8").replace("\n", line_end)


# ---- recognising Markdown -----------------------------------------------


@pytest.mark.grades("fence_opening")
@pytest.mark.parametrize(
    "line, expected",
    [("```js", ("`", 3)), ("~~~~ toml", ("~", 4)), ("   ```python", ("`", 3)), ("    ```", None),
     ("``", None), ("``` a`b", None), ("~~~ a`b", ("~", 3)), ("text ```", None)],
)
def test_fence_opening(rag6, line, expected):
    check.expect(rag6.fence_opening(line), expected)


@pytest.mark.grades("closes_fence")
@pytest.mark.parametrize(
    "line, char, length, expected",
    [(" ```", "`", 3, True), ("`````  ", "`", 3, True), ("``", "`", 3, False),
     ("~~~~~", "`", 3, False), ("``` python", "`", 3, False), ("``` ", "`", 4, False),
     ("   ~~~~", "~", 4, True)],
)
def test_closes_fence(rag6, line, char, length, expected):
    check.expect(bool(rag6.closes_fence(line, char, length)), expected)  # "True if": any falsy no


@pytest.mark.grades("atx_heading")
@pytest.mark.parametrize(
    "line, expected",
    [("# Installing", (1, "Installing")), ("### On Linux ###", (3, "On Linux")), ("#", (1, "")),
     ("####### seven", None), ("#5 bolts", None), ("  ## Indented", (2, "Indented")),
     ("## C# notes", (2, "C# notes")), ("    # code", None)],
)
def test_atx_heading(rag6, line, expected):
    check.expect(rag6.atx_heading(line), expected)


@pytest.mark.grades("is_table_start")
@pytest.mark.parametrize(
    "rows, expected",
    [(["| a | b |", "|---|:-:|"], True), (["a | b", "---|---"], True), (["a | b", "----"], False),
     (["| a |", "|---|"], True), (["a b", "------"], False), (["| a | b |"], False),
     (["| a | b |", "| - x |"], False), (["    | a |", "|---|"], False)],
)
def test_is_table_start(rag6, rows, expected):
    lines = rag6.split_lines("\n".join(rows) + "\n")
    check.expect(bool(rag6.is_table_start(lines, 0)), expected)  # "True if": any falsy no


@pytest.mark.grades("enter_section")
def test_enter_section_keeps_the_path_above(rag6):
    check.expect(rag6.enter_section((), 1, "Install"), ((1, "Install"),))
    path = ((1, "Install"), (2, "On Linux"))
    check.expect(rag6.enter_section(((1, "Install"),), 2, "On Linux"), path)
    check.expect(rag6.enter_section(path, 2, "On macOS"), ((1, "Install"), (2, "On macOS")))
    check.expect(rag6.enter_section(path, 3, "Debian"), path + ((3, "Debian"),))
    check.expect(rag6.enter_section(path, 1, "Upgrade"), ((1, "Upgrade"),))


# ---- markdown_chunks ----------------------------------------------------


def has_sections(chunks, paths):
    """Some chunk has each heading path of `paths`."""
    sections = {chunk.section for chunk in chunks}
    for path in paths:
        assert path in sections, f"no chunk has the section {path}; they have {sorted(sections)}"


@pytest.mark.grades("markdown_chunks")
def test_front_matter_is_one_chunk_and_sections_carry_paths(rag6):
    text = (FIXTURES[0].parent / "front-matter.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 200)
    check.markdown_basics(text, chunks, 200)
    check.blocks_whole(text, chunks, 200)
    body = text.index("# Install on Linux")
    check.expect((chunks[0].kind, chunks[0].start, chunks[0].end, chunks[0].text.rstrip()[-3:]),
                 ("front_matter", 0, body, "---"))
    has_sections(chunks, [("Install on Linux", "General", "Debian and Ubuntu"),
                          ("Install on Linux", "General", "Fedora")])


@pytest.mark.grades("chunk_section")
def test_a_tiny_parent_section_folds_into_its_first_child(rag6):
    text = (FIXTURES[0].parent / "front-matter.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 40)
    check.markdown_basics(text, chunks, 40)
    general = [c for c in chunks if "## General" in c.text]
    assert len(general) == 1, f"{len(general)} chunks hold '## General', expected 1"
    assert "### Debian and Ubuntu" in general[0].text, (
        f"{check.name(general[0])} holds '## General', not the '### Debian and Ubuntu' under it")
    check.expect(general[0].section, ("Install on Linux", "General", "Debian and Ubuntu"))


@pytest.mark.grades("markdown_chunks")
def test_a_hash_line_inside_a_fence_is_not_a_heading(rag6):
    text = (FIXTURES[0].parent / "headings-in-code.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 20)
    check.markdown_basics(text, chunks, 20)
    check.blocks_whole(text, chunks, 20)
    check.expect(sorted({c.section for c in chunks}),
                 [("Real heading",), ("Real heading", "Real subheading")])


@pytest.mark.grades("markdown_chunks")
def test_setext_headings_make_sections(rag6):
    text = (FIXTURES[0].parent / "setext.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 30)
    check.markdown_basics(text, chunks, 30)
    check.blocks_whole(text, chunks, 30)
    has_sections(chunks, [("Install Orbit", "On Linux"), ("Install Orbit", "On macOS")])


@pytest.mark.grades("chunk_section")
def test_an_oversize_table_stays_whole_and_is_flagged(rag6):
    text = (FIXTURES[0].parent / "forty-row-table.md").read_text(encoding="utf-8")
    chunks = rag6.markdown_chunks(text, 100)
    check.markdown_basics(text, chunks, 100)
    check.nothing_protected_cut(text, chunks)
    table = (text.index("| key | default |"), text.index("\n", text.index("key.number_39")))
    oversize = [(c.kind, c.start, c.end) for c in chunks if c.oversize]
    check.expect([(kind, start <= table[0] and table[1] <= end) for kind, start, end in oversize],
                 [("table", True)])


@pytest.mark.grades("chunk_section")
def test_an_oversize_fence_in_a_list_after_a_heading_is_flagged_as_code(rag6):
    text = "# Title\r\n- ```\r\n- item"  # found by the deep profile
    chunks = rag6.markdown_chunks(text, 4)
    check.markdown_basics(text, chunks, 4)
    check.expect([c.kind for c in chunks if c.oversize], ["code"])


@pytest.mark.grades("chunk_section")
def test_an_oversize_indented_code_block_stays_whole_and_is_flagged_as_code(rag6):
    # Indented code is code, kept whole as a fence is: the given scanner makes it a "code" block.
    code = "".join(f"    $ orbit job run --name job-{number}\n" for number in range(20))
    text = "# Steps\n\nRun these:\n\n" + code + "\nAfter the steps. " + "More words here. " * 20
    chunks = rag6.markdown_chunks(text, 40, 10)
    check.markdown_basics(text, chunks, 40)
    check.nothing_protected_cut(text, chunks)
    block = (text.index(code), text.index(code) + len(code))
    oversize = [(c.kind, c.start <= block[0] and block[1] <= c.end) for c in chunks if c.oversize]
    check.expect(oversize, [("code", True)])


@pytest.mark.grades("markdown_chunks")
def test_overlap_never_starts_inside_a_table_or_fence(rag6):
    text = (FIXTURES[0].parent / "forty-row-table.md").read_text(encoding="utf-8")
    text = text.replace("After the table.", "After the table. " + "More words here. " * 40)
    chunks = rag6.markdown_chunks(text, 60, 20)
    check.markdown_basics(text, chunks, 60)
    check.nothing_protected_cut(text, chunks)
    check.blocks_whole(text, chunks, 60, 20)


@pytest.mark.grades("chunk_section")
@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_fixtures_against_a_real_markdown_parser(rag6, path, line_end):
    text = fixture_text(path, line_end)
    for max_tokens, overlap in ((8, 0), (16, 4), (64, 16), (400, 0)):
        chunks = rag6.markdown_chunks(text, max_tokens, overlap)
        check.markdown_basics(text, chunks, max_tokens)
        check.nothing_protected_cut(text, chunks)


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
        # So does one in a nested item.
        ("- a\n  - ```\n    x\n\n\n\nafter\n", 4),
        # Indented code in an item, after a blank line: 4 columns past the item's content.
        ("- Install:\n\n      $ apt install orbit\n      $ orbit init\n\n- Done.\n", 4),
        # A lazy line after a fence in an item is no part of the item: the fence is closed above it.
        ("- a\n  ```\n  x y z\n  ```\nnot lazy\n\n    code at the top\n    more\n", 4),
    ],
    ids=["fence in a list under a heading", "form feed line", "form feed item",
         "unclosed fence in a list", "unclosed fence in a nested list", "indented code in an item",
         "no lazy line after a fence"],
)
def test_cases_found_by_the_deep_profile_and_fuzzing(rag6, text, max_tokens):
    chunks = rag6.markdown_chunks(text, max_tokens)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("args, expected", check.edge_calls("# a"))
def test_empty_text_and_bad_parameters(rag6, args, expected):
    check.answers(rag6.markdown_chunks, args, expected)


# (max_tokens, overlap): overlap up to half the budget
windows = budgets.flatmap(lambda max_tokens: st.tuples(st.just(max_tokens), st.integers(0, max_tokens // 2)))


@pytest.mark.grades("markdown_chunks")
@given(text=st.one_of(markdown_text, any_text, lined_text), window=windows)
@example(text="Before you start:\n1. back up\n2. stop it\n\nThen upgrade.\n", window=(10, 0))  # a list, whole
def test_property_lossless_in_budget_nothing_protected_cut(rag6, text, window):
    max_tokens, overlap = window
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
    check.blocks_whole(text, chunks, max_tokens, overlap)
    check.same_again(rag6.markdown_chunks(text, max_tokens, overlap), chunks)


@pytest.mark.grades("chunk_section")
@given(text=markdown_page, max_tokens=budgets, data=st.data())
def test_property_pages_keep_fences_and_tables_whole(rag6, text, max_tokens, data):
    # Tilde and long fences, some never closed; tables with and without outer
    # pipes; indented code; all of these in lists and quotes, lazy lines after
    # them; setext headings; link definitions; front matter.
    overlap = data.draw(st.integers(0, max_tokens // 2))
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)


@pytest.mark.grades("markdown_chunks")
def test_markdown_chunks_keep_every_ending(rag6):
    check.every_ending(lambda text: check.markdown_basics(text, rag6.markdown_chunks(text, 16), 16))
