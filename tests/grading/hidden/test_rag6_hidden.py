"""Hidden grading tests for lab rag6 (instructors only): inputs the public tests never show."""

import grading_checks as check
import markdown_oracle as parser
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import markdown_page

pytestmark = pytest.mark.grade("rag6")

# Front matter closed by "...", setext headings, a tilde fence holding backtick
# lines, a pipeless table, a fence in a list item, a table in a quote, and a
# fence never closed.
PAGE = (
    "---\n"
    "title: Hidden page\n"
    "applies_to: 3.x\n"
    "...\n"
    "\n"
    "Intro paragraph before any heading.\n"
    "\n"
    "Getting started\n"
    "===============\n"
    "\n"
    "~~~~ markdown\n"
    "# a hash line in code\n"
    "```\n"
    "not a closing fence for tildes\n"
    "```\n"
    "~~~~\n"
    "\n"
    "Ports\n"
    "-----\n"
    "\n"
    "port | use\n"
    ":--- | ---:\n"
    "7400 | API\n"
    "7401 | satellites\n"
    "\n"
    "## Steps\n"
    "\n"
    "1. Fetch the key:\n"
    "\n"
    "   ```bash\n"
    "   curl -O https://example.com/key\n"
    "   ```\n"
    "\n"
    "2. Check it.\n"
    "\n"
    "> | flag | meaning |\n"
    "> |------|---------|\n"
    "> | -v   | verbose |\n"
    "\n"
    "### Unclosed\n"
    "\n"
    "````text\n"
    "this fence is never closed\n"
    "# and this is code\n"
    "```\n"
)


# Indented code at the top, in an item and in a quote in an item (tabs too), an indented
# line that only continues a paragraph, a lazy line after a fence in an item (no part of it),
# link definitions over a rule (no heading), a fence never closed in a nested item.
CODE_PAGE = (
    "# Console\n"
    "\n"
    "A paragraph line\n"
    "    that goes on, indented.\n"
    "\n"
    "    $ orbit start\n"
    "    started on port 7401\n"
    "\n"
    "[orbit]: https://example.com/orbit\n"
    "---\n"
    "\n"
    "## Items\n"
    "\n"
    "- Run it:\n"
    "\n"
    "      $ orbit run --all\n"
    "\t  $ orbit wait\n"
    "\n"
    "- > Quoted:\n"
    "  >\n"
    "  >     $ orbit logs\n"
    "- ```\n"
    "  a fence in an item\n"
    "  ```\n"
    "not lazy: the fence is closed\n"
    "\n"
    "- a\n"
    "  - ````\n"
    "    never closed\n"
    "\n"
    "\n"
    "After.\n"
)


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


@pytest.mark.grades("fence_opening")
@pytest.mark.parametrize("line, expected", [
    ("~~~~~", ("~", 5)), ("````yaml", ("`", 4)), (" ~~~ a~b", ("~", 3)), ("\t```", None),
    ("  ~~~~~~ x `y`", ("~", 6)), ("````` `", None), ("~~", None), ("   ````", ("`", 4))])
def test_fence_opening_hidden(rag6, line, expected):
    check.expect(rag6.fence_opening(line), expected)


@pytest.mark.grades("closes_fence")
@pytest.mark.parametrize("line, char, length, expected", [
    ("~~~~~", "~", 4, True), ("   ```   ", "`", 3, True), ("    ```", "`", 3, False),
    ("```~", "`", 3, False), ("~~~~", "~", 5, False), ("``````", "`", 3, True),
    ("\t~~~", "~", 3, False)])
def test_closes_fence_hidden(rag6, line, char, length, expected):
    check.expect(bool(rag6.closes_fence(line, char, length)), expected)  # "True if": any falsy no


@pytest.mark.grades("atx_heading")
@pytest.mark.parametrize("line, expected", [
    ("######", (6, "")), ("# Title #####", (1, "Title")), ("#\tTab", (1, "Tab")),
    ("# Title#", (1, "Title#")), ("##", (2, "")), ("#hashtag", None),
    ("### a ### b", (3, "a ### b")),
    ("   ### three spaces", (3, "three spaces")), ("\\# escaped", None)])
def test_atx_heading_hidden(rag6, line, expected):
    check.expect(rag6.atx_heading(line), expected)


@pytest.mark.grades("is_table_start")
@pytest.mark.parametrize("rows, expected", [
    (["a|b", "-|-"], True), (["| a | b | c |", "|---|---|"], False),
    (["a | b", "|:--|--:|"], True), (["a | b", "--- | --- | ---"], False),
    (["| a | b |", "|---|---"], True), (["a", "|---|"], False),
    (["| a \\| b |", "|---|"], True)])
def test_is_table_start_hidden(rag6, rows, expected):
    lines = rag6.split_lines("\r\n".join(rows) + "\r\n")
    check.expect(bool(rag6.is_table_start(lines, 0)), expected)  # "True if": any falsy no


@pytest.mark.grades("enter_section")
@pytest.mark.parametrize("path, level, title, expected", [
    (((1, "A"),), 3, "C", ((1, "A"), (3, "C"))),  # a level skipped
    (((1, "A"), (3, "C")), 2, "B", ((1, "A"), (2, "B"))),  # back up past the skipped level
    ((), 2, "X", ((2, "X"),)),
    (((2, "X"),), 1, "Y", ((1, "Y"),)),
    (((1, "A"), (2, "B")), 2, "B", ((1, "A"), (2, "B"))),  # the same heading again
])
def test_enter_section_hidden(rag6, path, level, title, expected):
    check.expect(rag6.enter_section(path, level, title), expected)


@pytest.mark.grades("enter_section")
@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_sections_of_the_hidden_page(rag6, line_end):
    text = PAGE.replace("\n", line_end)
    chunks = rag6.markdown_chunks(text, 30)
    check.markdown_basics(text, chunks, 30)
    check.expect([c.section for c in chunks], [
        (), (), ("Getting started",), ("Getting started", "Ports"), ("Getting started", "Steps"),
        ("Getting started", "Steps"), ("Getting started", "Steps"),
        ("Getting started", "Steps", "Unclosed")])


@pytest.mark.grades("chunk_section")
def test_packing_the_hidden_page(rag6):
    chunks = rag6.markdown_chunks(PAGE, 30)
    check.markdown_basics(PAGE, chunks, 30)
    check.nothing_protected_cut(PAGE, chunks)
    check.expect(check.spans(chunks), [(0, 44), (44, 81), (81, 195), (195, 261), (261, 343),
                                       (343, 358), (358, 422), (422, 495)])


@pytest.mark.grades("chunk_section")
def test_every_block_over_a_small_budget_stays_whole_hidden(rag6):
    chunks = rag6.markdown_chunks(PAGE, 12)
    check.markdown_basics(PAGE, chunks, 12)
    check.nothing_protected_cut(PAGE, chunks)
    check.expect([c.kind for c in chunks if c.oversize],
                 ["front_matter", "code", "table", "code", "table", "code"])


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("text, max_tokens, expected", [
    ("Steps to run:\n- fetch the key\n- check it twice\n", 10, [(0, 14), (14, 47)]),
    ("---\nid: x\n---\nplain text, no heading", 20, [(0, 14), (14, 36)]),
    ("A note on keys:\n> keep the key\n> offline, always\n", 10, [(0, 16), (16, 49)])],
    ids=["a list under a paragraph", "front matter, then a line", "a quote under a paragraph"])
def test_markdown_chunks_hidden_small_texts(rag6, text, max_tokens, expected):
    """Blocks first: a list or quote that interrupts a paragraph is a block of its own, front matter a
    chunk of its own, though each text would fit in fewer chunks (as rag5's chunker packs it)."""
    chunks = rag6.markdown_chunks(text, max_tokens)
    check.markdown_basics(text, chunks, max_tokens)
    check.blocks_whole(text, chunks, max_tokens)
    check.expect(check.spans(chunks), expected)


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("args, error", [
    (("## b", 7, -2), ValueError), (("# a", 5.0), TypeError), ((None, 9), TypeError)])
def test_markdown_chunks_hidden_errors(rag6, args, error):
    with pytest.raises(error):
        rag6.markdown_chunks(*args)


@pytest.mark.grades("markdown_chunks")
@check.hidden_seed
@given(text=markdown_page, max_tokens=st.integers(4, 40), data=st.data())
def test_markdown_chunks_hidden_property(rag6, text, max_tokens, data):
    """Lossless, in budget, fences and tables whole, and every block that fits whole (rag5's
    chunker, which knows no blocks, cuts them)."""
    overlap = data.draw(st.integers(0, max_tokens // 2))
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
    check.blocks_whole(text, chunks, max_tokens, overlap)


@pytest.mark.grades("chunk_section")
@pytest.mark.parametrize("max_tokens, overlap", [(4, 0), (8, 2), (16, 4), (40, 10)])
def test_indented_code_stays_whole_on_the_hidden_page(rag6, max_tokens, overlap):
    for line_end in ("\n", "\r\n", "\r"):
        text = CODE_PAGE.replace("\n", line_end)
        chunks = rag6.markdown_chunks(text, max_tokens, overlap)
        check.markdown_basics(text, chunks, max_tokens)
        check.nothing_protected_cut(text, chunks)


@pytest.mark.grades("enter_section")
def test_sections_of_the_hidden_code_page(rag6):
    chunks = rag6.markdown_chunks(CODE_PAGE, 40)
    check.markdown_basics(CODE_PAGE, chunks, 40)
    check.expect([c.section for c in chunks], [("Console",), ("Console", "Items"), ("Console", "Items")])


# ---- the four line rules and the heading path, on lines drawn with the grading seed ------------
# One judge: the grader's own reading of a line (tests/markdown_oracle.py: markdown-it-py, CommonMark
# with GitHub tables), never code a lab's worker holds, on lines no reading the lab holds answers
# (datasets/tricky-markdown-readings.jsonl). Each example asks a rule about two lines: one drawn
# from every construct's marks at random, and one built as that rule's lines are.

INDENTS = st.sampled_from(["", " ", "  ", "   ", "    ", "\t"])
any_rule_line = st.builds(
    "".join, st.tuples(
        INDENTS,
        st.sampled_from(["#", "##", "######", "#######", "`", "``", "```", "````", "~~~", "~~~~", "|", "-", "a",
                         "\\#"]),
        st.sampled_from(["", " ", "\t", "  "]),
        st.text(st.sampled_from("ab #`~|-:"), max_size=8),
        st.sampled_from(["", " ", " #", " ##", "  "])))
fence_runs = st.sampled_from("`~").flatmap(lambda char: st.integers(1, 7).map(char.__mul__))
fence_lines = st.builds("{}{}{}".format, INDENTS, fence_runs, st.text(alphabet="a1 `~", max_size=6))
closing_lines = st.builds("{}{}{}".format, INDENTS, fence_runs, st.sampled_from(["", " ", "\t ", " x", "`", "~"]))
open_fences = st.tuples(st.sampled_from("`~"), st.integers(3, 6))
heading_lines = st.builds("{}{}{}{}{}".format, INDENTS, st.integers(0, 8).map("#".__mul__),
                          st.sampled_from(["", " ", "\t", "  "]), st.text(alphabet="ab #", max_size=8),
                          st.sampled_from(["", " ", " ##", "#", "\t#  "]))


@pytest.mark.grades("fence_opening")
@check.hidden_seed
@given(lines=st.tuples(any_rule_line, fence_lines))
def test_fence_opening_hidden_lines(rag6, lines):
    for line in lines:
        check.expect(rag6.fence_opening(line), parser.fence(line))


@pytest.mark.grades("closes_fence")
@check.hidden_seed
@given(lines=st.tuples(any_rule_line, closing_lines), fences=st.tuples(open_fences, open_fences))
def test_closes_fence_hidden_lines(rag6, lines, fences):
    """A line closes the fence above it if the parser ends the fence there, holding nothing."""
    for line, (char, length) in zip(lines, fences):
        check.expect(bool(rag6.closes_fence(line, char, length)), parser.closes(line, char, length))


@pytest.mark.grades("atx_heading")
@check.hidden_seed
@given(lines=st.tuples(any_rule_line, heading_lines))
def test_atx_heading_hidden_lines(rag6, lines):
    for line in lines:
        check.expect(rag6.atx_heading(line), parser.heading(line))


def table_row(cells, ends):
    return ends[0] + "|".join(cells) + ends[1]


header_row = st.builds(
    table_row, st.lists(st.sampled_from(["a", " b ", "", "c d", "`x`", "e\\|f"]), min_size=1, max_size=4),
    st.sampled_from([("", ""), ("|", "|"), ("|", ""), ("", "|"), ("    |", "|"), ("  ", "")]))
delimiter_row = st.builds(
    table_row, st.lists(st.sampled_from(["---", ":--", "--:", ":-:", " - ", "-x-"]), min_size=1, max_size=4),
    st.sampled_from([("|", "|"), ("|", ""), ("", "|")]))
cells = st.lists(st.sampled_from(["a", " b ", "", "c d", "\\|"]), min_size=1, max_size=4)
delimiters = st.lists(st.sampled_from(["---", ":--", "--:", ":-:", " - ", "-x-"]), min_size=1, max_size=4)


@st.composite
def table_rows(draw):
    """A header row and a line under it that may be its delimiter row, pipes outside or not (a row
    of one cell has one: without, '-' under a line is a setext heading's, which the parser prefers;
    markdown-it-py departs from GitHub's tables there)."""
    def row(parts):
        outer = draw(st.sampled_from([("", ""), ("|", "|"), ("|", ""), ("", "|")][len(parts) == 1:]))
        return outer[0] + "|".join(parts) + outer[1]
    return draw(INDENTS.filter(lambda indent: indent != "\t")) + row(draw(cells)), row(draw(delimiters))


@pytest.mark.grades("is_table_start")
@check.hidden_seed
@given(pairs=st.tuples(st.tuples(header_row, delimiter_row), table_rows()))
def test_is_table_start_hidden_lines(rag6, pairs):
    """The first row starts a table if the parser reads the two rows as a table's first two."""
    for rows in pairs:
        lines = rag6.split_lines("\n".join(rows) + "\n")
        check.expect(bool(rag6.is_table_start(lines, 0)), parser.table_start(*rows))


@st.composite
def heading_paths(draw):
    """A heading path as the lab keeps one (levels rising from the outermost in), and a heading."""
    levels = sorted(draw(st.sets(st.integers(1, 6), max_size=5)))
    path = tuple((level, draw(st.sampled_from(["A", "B", "Setup", ""]))) for level in levels)
    return path, draw(st.integers(1, 6)), draw(st.sampled_from(["A", "Install", "Ports"]))


@pytest.mark.grades("enter_section")
@check.hidden_seed
@given(case=heading_paths())
def test_enter_section_hidden_property(rag6, case):
    path, level, title = case
    expected = tuple(pair for pair in path if pair[0] < level) + ((level, title),)
    check.expect(tuple(map(tuple, rag6.enter_section(path, level, title))), expected)


@pytest.mark.grades("chunk_section")
@check.hidden_seed
@given(text=markdown_page, max_tokens=st.integers(6, 50))
def test_chunk_section_hidden_property(rag6, text, max_tokens):
    """Packed without overlap, so that the packing alone is judged: lossless, in budget, fences and
    tables whole."""
    chunks = rag6.markdown_chunks(text, max_tokens)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
