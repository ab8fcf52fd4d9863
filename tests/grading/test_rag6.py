"""Grading tests for lab rag6: read_blocks, pack_blocks, markdown_chunks and verify.

The reader is judged on the Markdown of the course's pages (ATX headings, fences of backticks or
tildes, indented code, tables, lists, quotes, paragraphs, front matter), by what a real parser
(markdown-it-py) reads there; the packer on blocks given to it; verify against the parser's fences
and tables.
"""

import grading_checks as check
import pytest
import wire
from hypothesis import given
from hypothesis import strategies as st

pytestmark = pytest.mark.grade("rag6")


@pytest.fixture(scope="module")
def rag6(open_lab):
    return open_lab("rag6")


# ---- the Markdown of the course's pages, drawn ------------------------------------------------

words = st.lists(st.sampled_from(["orbit", "runs", "jobs", "on", "satellites", "port", "7401", "the", "server",
                                  "`key`", "**bold**", "x"]), min_size=1, max_size=6).map(" ".join)
heading = st.builds(lambda level, title, closing: "#" * level + " " + title + (" " + "#" * closing if closing else ""),
                    st.integers(1, 6), words, st.integers(0, 2))
paragraph = st.lists(words, min_size=1, max_size=3).map("\n".join)


@st.composite
def fence(draw):
    char, length = draw(st.sampled_from("`~")), draw(st.integers(3, 5))
    body = draw(st.lists(st.one_of(words, heading, st.just(char * (length - 1)), st.just("| a | b |")), max_size=4))
    closed = draw(st.booleans())
    return "\n".join([char * length + draw(st.sampled_from(["", "sh", " yaml"])),
                      *body, *([char * (length + draw(st.integers(0, 1)))] if closed else [])])


@st.composite
def table(draw):
    cells = draw(st.integers(1, 3))
    pipes = draw(st.booleans())

    def row(items):
        inner = " | ".join(items)
        return f"| {inner} |" if pipes or cells == 1 else inner

    rows = draw(st.lists(st.lists(words, min_size=cells, max_size=cells), max_size=4))
    return "\n".join([row([f"h{n}" for n in range(cells)]), row(["---"] * cells), *map(row, rows)])


listing = st.tuples(st.sampled_from(["- ", "* ", "1. "]), st.lists(st.tuples(words, st.one_of(st.just(""), words)),
                                                                   min_size=1, max_size=3)).map(
    lambda list_: "\n".join(list_[0] + first + (f"\n{' ' * len(list_[0])}{more}" if more else "")
                            for first, more in list_[1]))  # one marker a list: another starts a new list
quote = st.lists(words, min_size=1, max_size=3).map(lambda lines: "\n".join("> " + line for line in lines))
indented = st.lists(words, min_size=1, max_size=3).map(lambda lines: "\n".join("    " + line for line in lines))
front = st.just("---\ntitle: Orbit\napplies_to: 2.x\n---\n\n")
blocks = st.one_of(heading, paragraph, fence(), table(), listing, quote, indented)


@st.composite
def lab_markdown(draw):
    """A page of the Markdown the course's pages use: blocks between blank lines, a fence last if unclosed."""
    parts = draw(st.lists(blocks, min_size=1, max_size=7))
    kept = []
    for part in parts:
        if kept and all(item.startswith(("- ", "* ", "1. ")) for item in (kept[-1], part)):
            continue  # two lists in a row: with other markers, CommonMark makes two of them
        kept.append(part)
        if part.lstrip(" ").startswith(("```", "~~~")) and not part.rstrip().endswith(("```", "~~~")):
            break  # a fence never closed runs to the end
        if part.lstrip(" ").startswith(("```", "~~~")) and len(part.splitlines()) == 1:
            break
    page = draw(st.one_of(st.just(""), front)) + "\n\n".join(kept) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return page.replace("\n", draw(st.sampled_from(["\n", "\r\n"])))


def body_of(text):
    match = check.FRONT_MATTER.match(text)
    return 0 if not match else len(text) - len(text[match.end():].lstrip("\r\n"))


# ---- read_blocks ----------------------------------------------------------------------------

PAGE = ("# Install ##\n\nOrbit runs jobs.\nOn satellites.\n\n~~~~sh\n# not a heading\n```\n~~~~\n\n"
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
    start = body_of(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


@pytest.mark.grades("read_blocks")
@given(text=lab_markdown())
def test_read_blocks_property(rag6, text):
    start = body_of(text)
    check.blocks_as_parsed(text, start, rag6.read_blocks(text, start))


# ---- pack_blocks ------------------------------------------------------------------------------
# Given blocks the grader reads itself (markdown-it-py), or blocks no reader would find: pack_blocks
# packs the blocks it is given.

def given_blocks(text, start=0):
    """The parser's blocks of text[start:], as the lab's Block records, each to its last line break."""
    found = []
    for kind, begin, end, level, title in check.parser_blocks(text, start):
        after = text[end:end + 2]
        end += 2 if after == "\r\n" else 1 if after[:1] in ("\n", "\r") else 0
        found.append(wire.New("Block", (kind, begin, end, level, title)))
    return found


def local_blocks(text, start=0):
    """The same blocks, as plain records the grader's judge reads."""
    from collections import namedtuple

    Block = namedtuple("Block", "kind start end level title")
    return [Block(*item.args) for item in given_blocks(text, start)]


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
    start = body_of(text)
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
@pytest.mark.parametrize("text", [text for _, text in check.ENDING_TEXTS], ids=check.ENDING_IDS)
def test_markdown_chunks_keep_every_ending(rag6, text):
    check.markdown_basics(text, rag6.markdown_chunks(text, 16), 16)


# ---- verify -------------------------------------------------------------------------------------

def line_chunks(text, cuts):
    """Chunks of `text` cut at the starts of the lines numbered `cuts`."""
    starts = [0] + [m.end() for m in __import__("re").finditer(r"\r\n|\r|\n", text)]
    edges = sorted({0, len(text), *(starts[n] for n in cuts if n < len(starts))})
    return [check.Chunk(text[s:e], s, e, check.count_tokens(text[s:e])) for s, e in zip(edges, edges[1:])]


@pytest.mark.grades("verify")
@pytest.mark.parametrize("cuts", [[], [5], [7], [8], [10], [12], [13], [17], [26]])
def test_verify_on_the_page(rag6, cuts):
    check.verify_judged(rag6.verify, PAGE, line_chunks(PAGE, cuts))


@pytest.mark.grades("verify")
@given(text=lab_markdown(), cuts=st.lists(st.integers(0, 30), max_size=4))
def test_verify_property(rag6, text, cuts):
    check.verify_judged(rag6.verify, text, line_chunks(text, cuts))
