"""Hidden grading tests for lab rag6 (instructors only): inputs the public tests never show.

Fixed pages keep their shape with letters drawn from the submission's seed (check.varied); the
properties draw their pages from it (check.hidden_seed). Each is judged by the grader's own reading
(markdown-it-py), never by the lab's word.
"""

import grading_checks as check
import pytest
import wire
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import lab_markdown, lab_words

pytestmark = pytest.mark.grade("rag6")


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


# Front matter closed by "...", tilde fences holding backtick lines and # lines, a fence of five
# backticks holding one of three, a table without outer pipes, an ordered list whose items run on over
# blank lines, a quote with a lazy line, indented code after a paragraph, headings with closing #s
# and a heading popped by its parent.
PAGE = (
    "---\ntitle: Hidden page\napplies_to: 3.x\n...\n\n"
    "Intro paragraph before any heading.\n\n"
    "# Getting started #\n\n"
    "~~~~ markdown\n# a hash line in code\n```\nnot a closing fence for tildes\n```\n~~~~\n\n"
    "## Ports ##\n\n"
    "port | use\n:--- | ---:\n7400 | API\n7401 | satellites\n\n"
    "1. Fetch the key.\n2. Check it.\n\n   The check takes a minute.\n\n"
    "> Keys rotate yearly.\nLazy line of the quote.\n\n"
    "Run these:\n\n    orbit key fetch\n    orbit key check\n\n"
    "### Deeper\nText right under it.\n"
    "# Upgrade\n\n"
    "`````\n```\nthree inside five\n```\n`````\n"
)
VERIFY_CUTS = ([], [11], [13], [14], [18], [20], [33], [44], [12, 30], [37, 45])


@pytest.mark.grades("read_blocks")
@pytest.mark.parametrize("line_end", ["\n", "\r\n", "\r"], ids=["LF", "CRLF", "CR"])
def test_read_blocks_on_the_hidden_page(rag6, line_end):
    text = check.varied(PAGE, "rag6 read_blocks").replace("\n", line_end)
    start = check.body_start(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


@pytest.mark.grades("read_blocks")
@check.hidden_seed
@given(text=lab_markdown())
def test_read_blocks_hidden_property(rag6, text):
    start = check.body_start(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


def packed(rag6, text, start, max_tokens):
    """pack_blocks on the parser's blocks of text[start:], made in the worker as the lab's Blocks."""
    blocks = [wire.New("Block", fields) for fields in check.block_fields(text, start)]
    return rag6.pack_blocks(text, start, blocks, max_tokens, wire.New("TokenIndex", (text,)))


@pytest.mark.grades("pack_blocks")
@pytest.mark.parametrize("max_tokens", [4, 9, 25, 70, 1000])
def test_pack_blocks_on_the_hidden_page(rag6, max_tokens):
    text = check.varied(PAGE, "rag6 pack_blocks")
    start = check.body_start(text)
    check.packed_whole(text, start, [check.BlockRecord(*fields) for fields in check.block_fields(text, start)],
                       max_tokens, packed(rag6, text, start, max_tokens))


@pytest.mark.grades("pack_blocks")
@check.hidden_seed
@given(text=lab_markdown(), max_tokens=st.one_of(st.integers(4, 12), st.integers(4, 150)))
def test_pack_blocks_hidden_property(rag6, text, max_tokens):
    start = check.body_start(text)
    check.packed_whole(text, start, [check.BlockRecord(*fields) for fields in check.block_fields(text, start)],
                       max_tokens, packed(rag6, text, start, max_tokens))


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("max_tokens, overlap", [(4, 0), (10, 3), (32, 8), (90, 40), (600, 64)])
def test_markdown_chunks_on_the_hidden_page(rag6, max_tokens, overlap):
    text = check.varied(PAGE, "rag6 markdown_chunks")
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
    check.blocks_whole(text, chunks, max_tokens, overlap)
    check.expect((chunks[0].kind, chunks[0].start, chunks[0].end), ("front_matter", 0, check.body_start(text)))


@pytest.mark.grades("markdown_chunks")
@check.hidden_seed
@given(text=lab_markdown(), window=st.integers(4, 80).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m // 2))))
def test_markdown_chunks_hidden_property(rag6, text, window):
    max_tokens, overlap = window
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
    check.blocks_whole(text, chunks, max_tokens, overlap)
    check.same_again(rag6.markdown_chunks(text, max_tokens, overlap), chunks)


@pytest.mark.grades("verify")
@pytest.mark.parametrize("cuts", VERIFY_CUTS)
def test_verify_on_the_hidden_page(rag6, cuts):
    text = check.varied(PAGE, "rag6 verify")
    check.verify_judged(rag6.verify, text, check.line_chunks(text, cuts))


@pytest.mark.grades("verify")
@check.hidden_seed
@given(text=lab_markdown(), cuts=st.lists(st.integers(0, 30), max_size=4))
def test_verify_hidden_property(rag6, text, cuts):
    check.verify_judged(rag6.verify, text, check.line_chunks(text, cuts))


# A fence inside a list item, as the course's pages write their steps. The lab reads it as a block of its own
# ("A fence inside a list item ... ends the list there"), so that packing, which may cut a long list, never cuts
# it; CommonMark keeps it in the list, so a reader of CommonMark's blocks (the grader's parser, or the given
# scanner) and a reader that forgets the rule agree, and only the chunks they make, cut small, tell them apart.
NESTED = [  # (page, its blocks as rag6's read_blocks reads them, worked out by hand)
    ("- item one\n  ```\n  code\n  ```\n- item two\n\nAfter.\n",
     [("list", 0, 11), ("code", 11, 30), ("list", 30, 41), ("paragraph", 42, 49)]),
    ("1. one\n\n   ```\n   x\n   ```\n2. two\n", [("list", 0, 7), ("code", 8, 27), ("list", 27, 34)]),
]


@pytest.mark.grades("read_blocks")
@pytest.mark.parametrize("number", range(len(NESTED)))
def test_read_blocks_hidden_fence_in_a_list_item(rag6, number):
    page, expected = NESTED[number]
    text = check.varied(page, f"rag6 nested fence {number}")
    check.expect([(block.kind, block.start, block.end) for block in rag6.read_blocks(text, 0)], expected)


@st.composite
def steps(draw):
    """A list of steps, some holding a fence (indented to the item's text): a page's how-to."""
    marker = draw(st.sampled_from(["- ", "* ", "1. "]))
    pad = " " * len(marker)
    items = []
    for _ in range(draw(st.integers(1, 4))):
        item = marker + draw(lab_words)
        if draw(st.booleans()):
            fence = draw(st.sampled_from(["```", "~~~", "````"])) + draw(st.sampled_from(["", "sh"]))
            body = draw(st.lists(lab_words, min_size=1, max_size=4))
            item += draw(st.sampled_from(["\n", "\n\n"])) + "\n".join(
                pad + line for line in [fence, *body, fence.rstrip("sh")])
        items.append(item)
    return "\n".join(items)


@st.composite
def pages_with_steps(draw):
    """A page of the lab's Markdown, then a paragraph and a list of steps; its line ends the page's."""
    page = draw(lab_markdown()).rstrip("\r\n")
    crlf = "\r\n" in page
    text = page + "\n\nSteps:\n\n" + draw(steps()) + draw(st.sampled_from(["", "\n"]))
    return text.replace("\r\n", "\n").replace("\n", "\r\n") if crlf else text


@pytest.mark.grades("markdown_chunks")
@check.hidden_seed
@given(text=pages_with_steps(),
       window=st.integers(4, 40).flatmap(lambda m: st.tuples(st.just(m), st.integers(0, m // 2))))
def test_markdown_chunks_hidden_fences_in_steps(rag6, text, window):
    max_tokens, overlap = window
    chunks = rag6.markdown_chunks(text, max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens)
    check.nothing_protected_cut(text, chunks)
