"""labkit/markdown.py's scanner, read with the reference rules: what it finds where CommonMark is subtle.

The grading tests judge a student's rules and chunker; the scanner is given, so
its own reading is tested here: link reference definitions (no paragraph, so no
setext heading over nothing else), indented code (kept whole as fences are, at
the top and in lists and quotes), lazy lines after what a container holds,
`- - -` under a list item, an unclosed fence in a nested list. Then the regions
it keeps whole against markdown-it-py's, on generated pages and (heavy) on the
corpus of real files, and the lab's own finder of what must stay whole.
"""

import pytest
from hypothesis import given
from markdown_oracle import cuts, indented_code_cuts, indented_code_regions
from markdown_oracle import protected_regions as oracle_regions
from real_markdown import CORPUS, corpus_files, read_text
from text_strategies import markdown_page, markdown_text

from academy_llm import make_chunk
from labkit import load_lab
from labkit import markdown
from labkit.markdown import Region, definition_lines, line_view, protected_regions, regions_to_keep_whole
from labkit.markdown_chunking import COMMONMARK


@pytest.fixture(scope="module")
def rag6(lab_dir):
    return load_lab("rag6", lab_dir)


def blocks_of(rag6, text):
    """[(kind, first line, last line, title)] of the scanner's blocks of `text`."""
    return [(block.kind, block.first, block.last, block.title) for block in rag6.scan_blocks(line_view(text))]


def regions_of(rag6, text):
    """The regions the scanner keeps whole, as the texts they span."""
    lines = line_view(text, markdown.body_start_of(text))
    return [(region.kind, text[region.start:region.end])
            for region in protected_regions(lines, rag6.scan_blocks(lines))]


def uncovered(rag6, text):
    """The oracle's regions (fences, tables, indented code) that no region of the scanner holds."""
    lines = line_view(text, markdown.body_start_of(text))
    ours = protected_regions(lines, rag6.scan_blocks(lines))
    theirs = oracle_regions(text) + indented_code_regions(text)
    return [(kind, start, end) for kind, start, end in theirs
            if not any(region.start <= start and end <= region.end for region in ours)]


def overcovered(rag6, text):
    """The scanner's regions that hold none of the oracle's."""
    lines = line_view(text, markdown.body_start_of(text))
    theirs = oracle_regions(text) + indented_code_regions(text)
    return [region for region in protected_regions(lines, rag6.scan_blocks(lines))
            if not any(region.start <= start and end <= region.end for _, start, end in theirs)]


# ---- link reference definitions ---------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    (["[a]: /url"], 1),
    (["   [foo]: ", "      /url  ", "           'the title'  "], 3),  # label, destination, title: 3 lines
    (["[foo]: /url", "\"title\" ok"], 1),  # the title has more after it: the definition has none
    (["[foo]: /url \"title\" ok"], 0),  # on its own line, that is no definition at all
    (["[foo]:"], 0),  # no destination
    (["[foo]: <bar>(baz)"], 0),
    (["[foo]: <>"], 1),  # an empty destination in <>
    (["[Foo*bar\\]]:my_(url) 'title (with parens)'"], 1),
    (["[", "foo", "]: /url", "bar"], 3),
    (["[foo]: /url 'title", "with more'", "[bar]: /b", "text"], 3),
    (["[ ]: /url"], 0),  # a label of spaces only
    (["Foo", "[bar]: /baz"], 0),  # a definition cannot interrupt a paragraph
    (["[a]: /u", "[b]: /v (t)", "Title"], 2),
])
def test_definition_lines(text, expected):
    assert definition_lines(text) == expected


def test_a_definition_then_a_thematic_break_is_no_heading(rag6):
    assert blocks_of(rag6, "[a]: /url\n---\n\nText\n") == [
        ("paragraph", 0, 1, ""), ("rule", 1, 2, ""), ("paragraph", 3, 4, "")]


def test_a_definition_then_equals_signs_is_text(rag6):
    assert blocks_of(rag6, "[a]: /url\n===\n\nText\n") == [("paragraph", 0, 2, ""), ("paragraph", 3, 4, "")]


def test_the_heading_under_definitions_is_titled_by_the_text_after_them(rag6):
    assert blocks_of(rag6, "[a]: /url\n[b]: /v \"t\"\nFoo\nbar\n---\n") == [
        ("paragraph", 0, 2, ""), ("heading", 2, 5, "Foo bar")]
    assert blocks_of(rag6, "[a]: /url\n===\n---\n") == [("paragraph", 0, 1, ""), ("heading", 1, 3, "===")]


def test_forty_definitions_over_a_rule_make_no_header(rag6):
    text = "".join(f"[link{n}]: https://example.com/{n}\n" for n in range(40)) + "---\n\nText.\n"
    assert {chunk.section for chunk in rag6.robust_markdown_chunks(text, 512, 64)} == {()}


def test_definitions_in_a_quote_over_a_dash_line(rag6):
    # Inside a container the scanner reads the same way (a lazy line cannot be an underline).
    assert blocks_of(rag6, "> [a]: /url\n> ---\n")[0][0] == "quote"


# ---- indented code ------------------------------------------------------------------------


@pytest.mark.parametrize("text, code", [
    ("Run:\n\n    $ orbit start\n    started\n\n    $ orbit stop\n\nAfter.\n",
     "    $ orbit start\n    started\n\n    $ orbit stop\n"),  # blank lines inside it, not after it
    ("# Title\n    code right under a heading\n", "    code right under a heading\n"),
    ("Tabs:\n\n\tcode after a tab\n  \t two spaces, a tab\n\nAfter.\n", "\tcode after a tab\n  \t two spaces, a tab\n"),
    ("- Install it:\n\n      $ apt install orbit\n\n- Done.\n", "      $ apt install orbit\n"),
    ("1.     code opening an item\n", "1.     code opening an item\n"),
    ("-\t\tcode after a marker and two tabs\n", "-\t\tcode after a marker and two tabs\n"),
    ("> Quoted:\n>\n>     quoted code\n", ">     quoted code\n"),
    (">\t\tcode after a tab in a quote\n", ">\t\tcode after a tab in a quote\n"),
    ("- a\n  - b\n\n        nested code\n", "        nested code\n"),
    ("- > a\n  >\n  >     code in a quote in an item\n", "  >     code in a quote in an item\n"),
])
def test_indented_code_is_kept_whole(rag6, text, code):
    assert ("code", code) in regions_of(rag6, text)
    assert not uncovered(rag6, text) and not overcovered(rag6, text)


@pytest.mark.parametrize("text", [
    "A paragraph's line\n    continued, not code\n",  # a lazy continuation: no code
    "- item\n\n    a second paragraph of the item\n",  # 4 spaces are 2 past the item's content
    "1.  item\n\n    its second paragraph\n",
    "- a\n  - b\n\n      more of b\n",
    "> quoted text\n    a lazy line, indented\n",
    "-\tfoo\n\n      six spaces: 2 past the tab's column 4\n",
])
def test_an_indented_line_that_is_not_code(rag6, text):
    assert regions_of(rag6, text) == []
    assert not uncovered(rag6, text)


def test_an_oversize_indented_code_block_is_one_chunk_flagged_as_code(rag6):
    code = "".join(f"    step {n}: orbit job run --name job-{n}\n" for n in range(30))
    text = "# Steps\n\nRun these:\n\n" + code + "\nAfter the steps.\n"
    chunks = rag6.robust_markdown_chunks(text, 32, 8)
    start = text.index(code)
    oversize = [(chunk.kind, chunk.start <= start and start + len(code) <= chunk.end) for chunk in chunks
                if chunk.oversize]
    assert oversize == [("code", True)]
    assert not indented_code_cuts(text, chunks)


# ---- containers: lazy lines, rules, unclosed fences ------------------------------------


FENCE = "`" * 3


@pytest.mark.parametrize("text, kinds", [
    (f"- a\n  {FENCE}\n  x\n  {FENCE}\nnot lazy after a fence\n", ["list", "paragraph"]),
    ("> # heading\nnot lazy after a heading\n", ["quote", "paragraph"]),
    ("> ***\nnot lazy after a rule\n", ["quote", "paragraph"]),
    ("> <div>\nnot lazy after HTML\n", ["quote", "paragraph"]),
    ("- a\n\n      code\nnot lazy after code\n", ["list", "paragraph"]),
    ("> | a |\n> |---|\nnot lazy after a table\n", ["quote", "paragraph"]),
    ("- Foo\n  ---\nnot lazy after a setext heading\n", ["list", "paragraph"]),
    ("- > a\nlazy: the quote's paragraph goes on\n", ["list"]),
    ("> - a\nlazy: the item's paragraph goes on\n", ["quote"]),
    ("> a\n2. an ordered item ends the quote\n", ["quote", "list"]),
    ("- a\n- - -\n", ["list", "rule"]),  # a thematic break, not an item
    ("- a\n\n* * *\n", ["list", "rule"]),
])
def test_what_ends_a_container(rag6, text, kinds):
    assert [kind for kind, *_ in blocks_of(rag6, text)] == kinds


def test_a_rule_after_a_list_item_lets_a_setext_heading_follow(rag6):
    assert blocks_of(rag6, "- one\n- - -\nTitle\n-----\n") == [
        ("list", 0, 1, ""), ("rule", 1, 2, ""), ("heading", 2, 4, "Title")]


def test_an_unclosed_fence_in_a_nested_list_runs_over_the_blank_lines_after_it(rag6):
    text = f"- a\n  - {FENCE}\n    x\n\n\n\nafter\n"
    assert blocks_of(rag6, text) == [("list", 0, 6, ""), ("paragraph", 6, 7, "")]
    assert regions_of(rag6, text) == [("code", f"  - {FENCE}\n    x\n\n\n\n")]
    assert not uncovered(rag6, text)


def test_a_simple_list_is_read_without_reading_each_item(rag6):
    # The fast path: items and lines indented under them, even nested deep, with no code.
    scanner = markdown.Scanner(COMMONMARK)
    text = "".join("  " * (n % 6) + f"- item {n}\n" for n in range(30))
    lines = line_view(text)
    scanner.texts = lines.texts
    assert scanner.simple_list_end(lines, 0) == 30
    text = "- a\n\n      code\n"
    lines = line_view(text)
    scanner.texts = lines.texts
    assert scanner.simple_list_end(lines, 0) is None  # code may be there: read item by item


# ---- against a real parser ---------------------------------------------------------------


@given(text=markdown_page)
def test_pages_keep_whole_what_a_real_parser_finds_and_no_more(rag6, text):
    assert not uncovered(rag6, text)
    assert not overcovered(rag6, text)


@given(text=markdown_text)
def test_random_lines_keep_whole_what_a_real_parser_finds(rag6, text):
    assert not uncovered(rag6, text)


@pytest.mark.heavy
@pytest.mark.timeout(600)  # 13 s on two idle cores; a loaded CI machine takes several times that
def test_the_corpus_keeps_whole_what_a_real_parser_finds_and_no_more(rag6):
    wrong = [f"{path.relative_to(CORPUS)}: missed {uncovered(rag6, text)[:2]}, more {overcovered(rag6, text)[:2]}"
             for path in corpus_files() for text in [read_text(path)]
             if uncovered(rag6, text) or overcovered(rag6, text)]
    assert not wrong, "\n".join(wrong[:10])


def test_the_tricky_documents_name_or_find_what_a_real_parser_keeps_whole():
    for document in markdown.TRICKY_MARKDOWN:
        text = document.text
        kept = regions_to_keep_whole(text) + [(text.index(piece), text.index(piece) + len(piece))
                                              for piece in document.keep_whole]
        for kind, start, end in oracle_regions(text) + indented_code_regions(text):
            assert any(s <= start and end <= e for s, e in kept), (document.what, kind, text[start:end])


# ---- the lab's own finder of what must stay whole ----------------------------------------


@pytest.mark.parametrize("text, found", [
    ("Intro.\n\n    code\n    more\n\nAfter.\n", ["    code\n    more\n"]),
    ("# Title\n    code under a heading\n", ["    code under a heading\n"]),
    ("\tcode after a tab\r\n\r\ntext\r\n", ["\tcode after a tab\r\n"]),
    ("A line\n    continued, not code\n", []),
    ("- item\n\n    its second paragraph\n", []),  # in a list: left to the tricky documents to name
    ("<!--\n\n    in a comment\n\n-->\n", []),
    ("---\ntitle: x\n---\n\n    code after front matter\n", ["    code after front matter\n"]),
    (f"{FENCE}\n\n    in a fence\n{FENCE}\n", [f"{FENCE}\n\n    in a fence\n{FENCE}\n"]),
])
def test_regions_to_keep_whole_finds_top_level_indented_code(text, found):
    assert [text[start:end] for start, end in regions_to_keep_whole(text)] == found


def test_regions_to_keep_whole_does_not_ask_the_scanner(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the check must not grade the scanner with the scanner")

    monkeypatch.setattr(markdown, "Scanner", refuse)
    monkeypatch.setattr(markdown, "ContainerText", refuse)
    assert regions_to_keep_whole("Intro.\n\n    code\n\n| a |\n|---|\n") == [(8, 17), (18, 30)]


def test_check_markdown_chunks_fails_a_chunking_that_cuts_indented_code(rag6):
    text = "Intro.\n\n    $ orbit start\n    started\n"
    markdown.check_markdown_chunks(rag6.robust_markdown_chunks(text, 400), text, 400, 0)
    split = text.index("    started")
    cut = [make_chunk(text, 0, split), make_chunk(text, split, len(text))]
    with pytest.raises(ValueError, match="must stay whole"):
        markdown.check_markdown_chunks(cut, text, 400, 0)
    assert cuts(text, cut) == [] and indented_code_cuts(text, cut)


def test_a_region_is_code_or_table():
    assert Region._fields == ("start", "end", "kind") and markdown.PROTECTED == ("code", "table")
