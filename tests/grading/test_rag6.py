"""Grading tests for lab rag6: read_blocks, pack_blocks, markdown_chunks and verify.

The reader is judged on the Markdown of the course's pages (ATX headings, fences of backticks or
tildes, indented code, tables, lists, quotes, paragraphs, front matter), by what a real parser
(markdown-it-py) reads there; the packer on blocks given to it; verify against the parser's fences
and tables.
"""

import grading_checks as check
import pytest
import wire
from academy_llm import count_tokens
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import lab_markdown

pytestmark = pytest.mark.grade("rag6")


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


# ---- read_blocks ----------------------------------------------------------------------------

PAGE = ("# Install ##\n\nOrbit runs jobs.\nOn satellites.\n\n~~~~sh\n# not a heading\n`````\n~~~~\n\n"
        "port | use\n--- | ---\n7401 | satellites\n\n1. one\n2. two\n\n   still two\n\n> a quote\n"
        "> goes on\n\n    indented code\n\n    more\n\n## Next\nText under it.\n### Deeper ###\n")


@pytest.mark.grades("read_blocks")
@pytest.mark.parametrize("line_end", ["\n", "\r\n"], ids=["LF", "CRLF"])
def test_read_blocks_on_a_page_of_every_kind(rag6, line_end):
    text = PAGE.replace("\n", line_end)
    check.blocks_as_parsed(text, 0, rag6.read_blocks(text, 0))


@pytest.mark.grades("read_blocks")
@pytest.mark.parametrize("text", [
    "---\ntitle: x\n---\n\n#5 bolts and ####### seven\n",
    "Text\n## Next\n```\ncode\n```\n- item\n> quote\nlazy\n",
    "````\n```\nstill code\n````\nafter\n",
    "Intro\n\n```js\nnever closed\n\n# x\n",
    "a | b\n--- | ---\n\n    code\nText\n    lazy, not code\n",
], ids=["front matter and no headings", "no blank lines", "a longer fence holds a shorter one",
        "a fence never closed", "a table, code, a lazy line"])
def test_read_blocks_by_hand(rag6, text):
    start = check.body_start(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


@pytest.mark.grades("read_blocks")
def test_read_blocks_reads_a_fence_in_a_list_item_as_a_block_of_its_own(rag6):
    """The lab's own rule (read_blocks' docstring), not CommonMark's: a fence inside a list item ends the
    list there and is a code block of its own, so that packing never cuts it; worked out by hand."""
    text = "Steps:\n\n- get the key\n  ```sh\n  curl key\n  ```\n- install it\n\nDone.\n"
    check.expect([(block.kind, block.start, block.end) for block in rag6.read_blocks(text, 0)],
                 [("paragraph", 0, 7), ("list", 8, 22), ("code", 22, 47), ("list", 47, 60), ("paragraph", 61, 67)])


@pytest.mark.grades("read_blocks")
@given(text=lab_markdown())
def test_read_blocks_property(rag6, text):
    start = check.body_start(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


# ---- pack_blocks ------------------------------------------------------------------------------
# Given blocks the grader reads itself (markdown-it-py), or blocks no reader would find: pack_blocks
# packs the blocks it is given.

def given_blocks(text, start=0):
    """The parser's blocks of text[start:], made in the lab's worker as its own Blocks."""
    return [wire.New("Block", fields) for fields in check.block_fields(text, start)]


def local_blocks(text, start=0):
    """The same blocks, as records the grader's judge reads."""
    return [check.BlockRecord(*fields) for fields in check.block_fields(text, start)]


def pack(rag6, text, start, max_tokens, blocks=None):
    blocks = given_blocks(text, start) if blocks is None else blocks
    chunks = rag6.pack_blocks(text, start, blocks, max_tokens, wire.New("TokenIndex", (text,)))
    return chunks


@pytest.mark.grades("pack_blocks")
@pytest.mark.parametrize("max_tokens", [6, 20, 60, 400])
def test_pack_blocks_on_the_page(rag6, max_tokens):
    chunks = pack(rag6, PAGE, 0, max_tokens)
    check.packed_whole(PAGE, 0, local_blocks(PAGE), max_tokens, chunks)


@pytest.mark.grades("pack_blocks")
def test_a_big_table_stands_alone_with_its_heading(rag6):
    rows = "".join(f"| key.{n} | {n} |\n" for n in range(30))
    text = "# Keys\n\nThe keys:\n\n## All\n\n| key | value |\n|---|---|\n" + rows + "\nAfter the table.\n"
    chunks = pack(rag6, text, 0, 40)
    check.packed_whole(text, 0, local_blocks(text), 40, chunks)
    check.expect([(c.kind, c.section) for c in chunks if c.oversize], [("table", ("Keys", "All"))])


@pytest.mark.grades("pack_blocks")
def test_pack_blocks_packs_the_blocks_it_is_given(rag6):
    text = "alpha beta gamma delta epsilon zeta eta theta\n\niota kappa\n\nlambda mu\n"
    blocks = [wire.New("Block", ("code", 0, 46, 0, "")), wire.New("Block", ("paragraph", 47, 58, 0, "")),
              wire.New("Block", ("heading", 59, len(text), 1, "lambda mu"))]
    chunks = pack(rag6, text, 0, 6, blocks)
    check.expect([(c.start, c.end, c.kind, c.oversize, tuple(c.section)) for c in chunks],
                 [(0, 47, "code", True, ()), (47, 59, "text", False, ()),
                  (59, len(text), "text", False, ("lambda mu",))])


@pytest.mark.grades("pack_blocks")
def test_a_paragraph_over_budget_is_cut_at_seams_and_nothing_else(rag6):
    text = "# Notes\n\n" + " ".join(f"Sentence {n} says a thing." for n in range(20)) + "\n\n```\ncode\n```\n"
    chunks = pack(rag6, text, 0, 16)
    check.packed_whole(text, 0, local_blocks(text), 16, chunks)


@pytest.mark.grades("pack_blocks")
@given(text=lab_markdown(), max_tokens=st.one_of(st.integers(4, 12), st.integers(4, 120)))
def test_pack_blocks_property(rag6, text, max_tokens):
    start = check.body_start(text)
    check.packed_whole(text, start, local_blocks(text, start), max_tokens, pack(rag6, text, start, max_tokens))


# ---- markdown_chunks ----------------------------------------------------------------------------

@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("args, expected", check.edge_calls("# a"))
def test_empty_text_and_bad_parameters(rag6, args, expected):
    check.answers(rag6.markdown_chunks, args, expected)


@pytest.mark.grades("markdown_chunks")
def test_front_matter_and_its_blank_lines_are_a_chunk_of_their_own(rag6):
    text = "---\ntitle: Orbit\n---\n\n# Install\n\nRun it.\n"
    chunks = rag6.markdown_chunks(text, 50)
    check.markdown_basics(text, chunks, 50)
    check.expect([(c.kind, c.start, c.end, tuple(c.section)) for c in chunks],
                 [("front_matter", 0, 22, ()), ("text", 22, len(text), ("Install",))])


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("max_tokens, overlap", [(4, 0), (12, 4), (40, 10), (300, 30)])
def test_markdown_chunks_on_the_page(rag6, max_tokens, overlap):
    chunks = rag6.markdown_chunks(PAGE, max_tokens, overlap)
    check.markdown_basics(PAGE, chunks, max_tokens)
    check.nothing_protected_cut(PAGE, chunks)
    check.blocks_whole(PAGE, chunks, max_tokens, overlap)


@pytest.mark.grades("markdown_chunks")
def test_markdown_chunks_keep_every_ending(rag6):
    check.every_ending(lambda text: check.markdown_basics(text, rag6.markdown_chunks(text, 16), 16))


# ---- verify -------------------------------------------------------------------------------------

@pytest.mark.grades("verify")
@pytest.mark.parametrize("cuts", [[], [3], [4], [6]])
def test_verify_on_a_fence_never_closed(rag6, cuts):
    text = "Intro.\n\n~~~\ncode\n\n| a |\n|---|\n"
    check.verify_judged(rag6.verify, text, check.line_chunks(text, cuts))


@pytest.mark.grades("verify")
@pytest.mark.parametrize("cuts", [[], [5], [7], [8], [10], [12], [13], [17], [26], [2, 9], [6, 11], [14, 22]])
def test_verify_on_the_page(rag6, cuts):
    check.verify_judged(rag6.verify, PAGE, check.line_chunks(PAGE, cuts))



NOTES = "# Notes\n\n" + "\n\n".join(" ".join(f"word{n}{k}" for k in range(12)) + "." for n in range(8)) + "\n"


@pytest.mark.grades("markdown_chunks")
@pytest.mark.parametrize("overlap", [0, 6])
def test_markdown_chunks_overlap_reaches_back_within_a_section(rag6, overlap):
    """Each chunk of a section after its first reaches back into the one before, by 1 to `overlap`
    tokens; with no overlap, chunks only meet."""
    chunks = rag6.markdown_chunks(NOTES, 40, overlap)
    check.markdown_basics(NOTES, chunks, 40)
    pairs = [(before, after) for before, after in zip(chunks, chunks[1:]) if before.section == after.section]
    shared = [count_tokens(NOTES[after.start:before.end]) if after.start < before.end else 0
              for before, after in pairs]
    check.expect(len(pairs) >= 2, True)
    check.expect([0 < tokens <= overlap for tokens in shared] if overlap else shared,
                 [True] * len(pairs) if overlap else [0] * len(pairs))
