# %% [markdown]
# # rag6: Markdown-aware chunking
#
# Documentation is not a stream of sentences. It has **structure**: sections
# under headings, code blocks, tables, lists. rag5's splitter sees only seams
# of whitespace, so it will cut a table between two rows or a code block
# between two lines, and a chunk that starts halfway down a table has lost the
# header row that says what its numbers mean.
#
# This lab chunks structure first, size second. You write all of it:
#
# 1. `read_blocks`: read the page's body, line by line, into **blocks**:
#    headings, code (fenced or indented), tables, lists, quotes, paragraphs;
# 2. `pack_blocks`: pack **whole blocks** into chunks, each under its heading
#    path such as `("Install", "On Linux")`: a boundary falls only between
#    blocks, and a code block or table too big for the budget stands alone,
#    flagged `oversize`;
# 3. `markdown_chunks`: the two together, with the front matter (the `---`
#    block of metadata atop a page) as a chunk of its own;
# 4. `verify`: a check that finds the fences and tables again from the text
#    alone, with code of its own, and fails on any chunk that cuts one.
#
# Your reader covers the Markdown of the course's pages. Then the lab runs it
# on real files from open-source projects, beside the course's own reader, and
# counts where a hand-written reader breaks.

# %%
import re
from itertools import pairwise
from typing import NamedTuple

from academy_llm import check_text_and_window, corpus_pages, make_chunk
from labkit import load_lab, run_lab, view_chunks
from labkit.explorer_widget import show_explorer  # given: the chunk explorer, in a notebook
from labkit.lessons import rag6 as lesson  # given: the page, the real files, the checks
from labkit.lessons.dial import dial_report  # given: recall with its interval for each value of a dial
from labkit.lessons.rag6 import PAGE, QUESTION, ANSWER, Block, with_overlap
from labkit.markdown import body_start_of, is_delimiter_row, split_lines
from labkit.markdown import (  # noqa: F401 (unused here: rag7, rag8 and rag10 take them from rag6)
    TRICKY_MARKDOWN, TrickyMarkdown, check_markdown_chunks, front_matter, with_every_line_end,
)
from labkit.markdown_chunking import RobustMarkdown, front_matter_chunk, scan_blocks  # noqa: F401 (rag7, rag10)
from labkit.notebook import in_notebook
from labkit.seams import packing_budget
from labkit.token_index import TokenIndex

rag5 = load_lab("rag5")  # your split_at_seams, for a paragraph or list too big for the budget
robust = RobustMarkdown(rag5)  # given: the course's chunker for real documents (labkit/markdown_chunking.py)
robust_markdown_chunks = robust.markdown_chunks
read_document, section_chunks = robust.read_document, robust.section_chunks  # rag7 builds on them

# Given, one sentence each:
# - split_lines(text, start) gives the lines of text[start:], each a Line(start, end, text): `end` is after
#   its line break, `text` without it;
# - body_start_of(text) is where the body starts: 0, or just after the front matter and its blank lines;
# - is_delimiter_row(line) is True for a table's delimiter row such as `|---|:--:|` or `--- | ---`;
# - Block(kind, start, end, level=0, title="") is a block: `end` is after its last line's break;
# - TokenIndex(text) counts any slice of a text tokenized once: index.count(start, end);
# - rag5.split_at_seams(text, start, end, max_tokens, index) cuts a span at its coarsest seams (yours), and
#   rag5.mend(text, start, end, max_tokens) packs a span word by word, counting exactly;
# - front_matter_chunk(text, body_start, max_tokens, index) is the front matter as one chunk; packing_budget
#   (max_tokens, overlap, index) what packing may fill, leaving room for the overlap;
# - with_overlap(text, chunks, blocks, max_tokens, overlap, index) lets each chunk reach back into the one
#   before, within its section, never into a code block or table of `blocks` (rag5's overlap, kept out of
#   what must stay whole), and flags oversize every chunk over max_tokens.

# %% [markdown]
# ## 1. Read the body into blocks
#
# Markdown is read line by line. A blank line ends most blocks. Which block
# a line starts is told by its first characters:
#
# - `#` to `######` then a space: a **heading** (`## Install ##`: level 2, title
#   `Install`; closing `#`s are not part of the title);
# - three or more backticks or tildes: a **fence**, code up to a line of the
#   same character at least as long (or to the end of the page); a `#` line
#   inside is code, not a heading. A line indented four spaces or a tab, after
#   a blank line, is **indented code**, up to the next line that is not;
# - a row holding `|` followed by a delimiter row (`|---|---|`): a **table**;
# - `-`, `*`, `+` or `1.` then a space: a **list**, which runs on over blank
#   lines while its lines are indented; `>`: a **quote**;
# - anything else: a **paragraph**, up to a blank line or a line that starts
#   another block.

# %%
FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")  # group: the fence
HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+|$)")
LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
QUOTE = re.compile(r" {0,3}>")
NESTED_FENCE = re.compile(r"[ \t]*(?:`{3,}|~{3,})")


# The reader is a push machine: each line is offered to the block still open, which takes it or
# refuses it (then the block ends at its last line, and the line starts a block of its own). A
# table is found late, as CommonMark finds it: a delimiter row turns the row above it into a header.
class Open(NamedTuple):
    """A block being read: its kind, its first and last line numbers, and what it needs to go on."""

    kind: str  # "code" (a fence), "indented", "list", "quote", "table" or "paragraph"
    first: int
    last: int
    how: object = None  # a fence: the pattern closing it; a list: (content column, marker)


def _blank(line):
    return not line.text.strip()


def _indent(text):
    """Columns of leading white space, a tab reaching the next multiple of 4."""
    return len(text[:len(text) - len(text.lstrip(" \t"))].expandtabs(4))


def _marker(text):
    """The kind of a list item's marker: its bullet, or "ordered" for 1. and 1)."""
    first = text.lstrip()[0]
    return first if first in "-+*" else "ordered"


def _starts_own_block(text):
    """A heading, a fence or a quote starts a block even right under a paragraph, list or table."""
    return any(pattern.match(text) for pattern in (HEADING, FENCE, QUOTE))


def _heading_title(rest):
    """The title after the #s: a closing run of #s (the whole rest, or after a space) is dropped."""
    rest = rest.strip(" \t")
    bare = rest.rstrip("#")
    return (bare if not bare or bare[-1] in " \t" else rest).strip(" \t")


def _closing(fence, indent):
    """The pattern of the line closing a fence `fence` opened `indent` columns in: the same character,
    at least as many, nothing after them but spaces."""
    return re.compile(rf"[ \t]{{0,{indent + 3}}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")


def _fence(text, fence):
    """The pattern of the line closing the fence that `fence` (a FENCE or NESTED_FENCE match of `text`) opens."""
    return _closing(fence.group().lstrip(" \t"), _indent(text))


def _opened(lines, i):
    """The Open block that the (non-blank, non-heading) line i starts."""
    text = lines[i].text
    fence = FENCE.match(text)
    if fence:
        return Open("code", i, i, _fence(text, fence))
    if _indent(text) >= 4:
        return Open("indented", i, i)
    item = LIST_ITEM.match(text)
    if item:
        return Open("list", i, i, (len(text[:item.end()].expandtabs(4)), _marker(text)))
    return Open("quote" if QUOTE.match(text) else "paragraph", i, i)


def _takes(block, lines, i):
    """Whether the open `block` (not a fence) takes the non-blank line i."""
    text = lines[i].text
    after_blank = block.last < i - 1
    if block.kind == "indented":
        return _indent(text) >= 4
    if block.kind == "list":
        if _indent(text) >= block.how[0]:
            return True  # inside the item
        if LIST_ITEM.match(text):
            return _marker(text) == block.how[1]
        return not after_blank and not _starts_own_block(text)  # a lazy line goes on with its item
    if block.kind == "quote" and QUOTE.match(text):
        return not after_blank
    return not (after_blank or _starts_own_block(text) or LIST_ITEM.match(text))


def _ended(block, lines):
    kind = "code" if block.kind == "indented" else block.kind
    return Block(kind, lines[block.first].start, lines[block.last].end)


def _step(block, lines, i):
    """Offer line i to the open `block`: (the Blocks it ends, the block open after it)."""
    line = lines[i]
    if block is not None and block.kind == "code":
        if block.how.match(line.text):
            return [_ended(block._replace(last=i), lines)], None
        return [], block._replace(last=i)
    if _blank(line):  # a blank line ends a paragraph, quote or table; code and lists wait to see
        ends = block is not None and block.kind in ("paragraph", "quote", "table")
        return ([_ended(block, lines)], None) if ends else ([], block)
    if (block is not None and block.kind == "paragraph" and "|" in lines[block.last].text
            and is_delimiter_row(line.text)):  # the paragraph's last row was a table's header
        header = Open("table", block.last, i)
        ended = [_ended(block._replace(last=block.last - 1), lines)] if block.first < block.last else []
        return ended, header
    nested = NESTED_FENCE.match(line.text) if block is not None and block.kind == "list" else None
    if nested:  # a fence in a list item ends the list: a block of its own, which packing never cuts
        return [_ended(block, lines)], Open("code", i, i, _fence(line.text, nested))
    if block is not None and _takes(block, lines, i):
        return [], block._replace(last=i)
    ended = [_ended(block, lines)] if block is not None else []
    heading = HEADING.match(line.text)
    if heading:
        title = _heading_title(line.text[heading.end():])
        return ended + [Block("heading", line.start, line.end, len(heading.group(1)), title)], None
    return ended, _opened(lines, i)


def _read(lines):
    """Yield the Blocks of `lines` in order, a line at a time."""
    block = None
    for i in range(len(lines)):
        ended, block = _step(block, lines, i)
        yield from ended
    if block is not None:
        yield _ended(block._replace(last=len(lines) - 1) if block.kind == "code" else block, lines)


def read_blocks(text, start=0):
    """The Blocks of text[start:], in order; blank lines between blocks belong to none.

    kind is "heading" (with its level and title), "code", "table", "list",
    "quote" or "paragraph"; a block's `end` is just after its last line's break.
    A fence inside a list item (NESTED_FENCE) ends the list there and is a code
    block of its own, so that packing, which may cut a long list, never cuts it.
    """
    return list(_read(split_lines(text, start)))


# %% [markdown]
# ## 2. Pack whole blocks under their heading path
#
# Each block is a unit: it runs to the next block's start, the blank lines
# after it with it, so the chunks tile the body. Packing is rag5's greedy
# packing, with three rules of its own: a chunk holds blocks of **one section**
# (a heading starts a new chunk, and the chunk's `section` is its heading
# path, the titles of `# Install` then `## On Linux`); a boundary falls only
# **between blocks**, so a paragraph or list too big for the budget is the one
# block cut, at rag5's seams; and a **code block or table** too big stays
# whole, a chunk of its own flagged `oversize` (cut between rows, every chunk
# after the first would lose the header row that names its columns).


# %%
# Packing folds the pieces of each block into the chunks so far: a piece is a span with what packing
# must know of it (its section, whether it is a heading, whether it stands alone over budget).
class Piece(NamedTuple):
    start: int
    end: int
    section: tuple
    heading: bool = False
    alone: str = ""  # "code" or "table" for a protected block over budget, kept whole and flagged


def _paths(blocks):
    """Yield the heading path (level, title) pairs in effect at each block, the block's own heading included."""
    path = ()
    for block in blocks:
        if block.kind == "heading":
            path = tuple(entry for entry in path if entry[0] < block.level) + ((block.level, block.title),)
        yield tuple(title for _, title in path)


def _pieces(text, blocks, bounds, max_tokens, index):
    """Yield the Pieces of the blocks: a block whole, or cut at rag5's seams when too big and not protected."""
    for block, section, (begin, end) in zip(blocks, _paths(blocks), pairwise(bounds)):
        if index.count(begin, end) <= max_tokens:
            yield Piece(begin, end, section, block.kind == "heading")
        elif block.kind in ("code", "table"):
            yield Piece(begin, end, section, alone=block.kind)
        else:
            seams = rag5.split_at_seams(text, begin, end, max_tokens, index)
            spans = [span for s, e in seams
                     for span in ([(s, e)] if index.count(s, e) <= max_tokens else rag5.mend(text, s, e, max_tokens))]
            # a heading too long for the budget still starts its chunk: its first piece is the heading's
            yield from (Piece(a, b, section, block.kind == "heading" and a == begin) for a, b in spans)


def _fold(text, chunks, piece, max_tokens, index):
    """The chunks, each (Chunk, whether it is a heading alone), after `piece`: joined to the last chunk
    when both allow it, else a chunk of its own."""
    def chunk(begin, count=None, **fields):
        count = index.count(begin, piece.end) if count is None else count
        return make_chunk(text, begin, piece.end, count, section=piece.section, **fields)

    last, lone_heading = chunks[-1] if chunks else (None, False)
    if piece.alone:  # the heading right above, alone in its chunk, stays with the block it names
        begin = last.start if lone_heading and last.section == piece.section else piece.start
        kept = chunks[:-1] if begin != piece.start else chunks
        return kept + [(chunk(begin, kind=piece.alone, oversize=True), False)]
    if last is not None and not last.oversize and not piece.heading and last.section == piece.section:
        count = index.count(last.start, piece.end)
        if count <= max_tokens:
            return chunks[:-1] + [(chunk(last.start, count, kind="text"), False)]
    return chunks + [(chunk(piece.start, kind="text"), piece.heading)]


def pack_blocks(text, start, blocks, max_tokens, index):
    """Chunks tiling text[start:], whole blocks packed greedily within max_tokens.

    Block k runs to block k + 1's start (the first from `start`, the last to
    the end). A chunk's `section` is the tuple of titles of the headings it sits
    under; a heading starts a new chunk. A paragraph, list or quote over budget
    is cut at rag5's seams (rag5.split_at_seams); a code block or table over
    budget is a chunk of its own (with the heading just above it, if that heading
    is alone in its chunk), of its kind ("code" or "table"), oversize=True.
    Other chunks are of kind "text". `index` is the text's TokenIndex.
    """
    if not blocks:  # blank lines only, or nothing
        return [make_chunk(text, start, len(text), kind="text")] if start < len(text) else []
    bounds = [start, *(block.start for block in blocks[1:]), len(text)]
    chunks = []
    for piece in _pieces(text, blocks, bounds, max_tokens, index):
        chunks = _fold(text, chunks, piece, max_tokens, index)
    return [chunk for chunk, _ in chunks]


# %% [markdown]
# ## 3. The whole page
#
# `markdown_chunks` checks its arguments as every chunker of the course does,
# tokenizes the page once, keeps the front matter as a chunk of its own, reads
# the body's blocks and packs them. Packing aims at `packing_budget`, below
# `max_tokens`, to leave room for the overlap the given `with_overlap` adds.


# %%
def markdown_chunks(text, max_tokens, overlap=0):
    """Chunks of a Markdown page: front matter apart, then whole blocks by section; every chunk
    an exact slice within max_tokens, but for a code block or table (or front matter) alone."""
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not text:
        return []
    index = TokenIndex(text)
    body = body_start_of(text)
    blocks = read_blocks(text, body)
    packed = pack_blocks(text, body, blocks, packing_budget(max_tokens, overlap, index), index)
    front = [front_matter_chunk(text, body, max_tokens, index)] if body else []
    return front + with_overlap(text, packed, blocks, max_tokens, overlap, index)


# %% [markdown]
# ## 4. Check that no chunk cuts a fence or a table
#
# A check that asks `read_blocks` where the fences are would share its
# mistakes. `verify` finds them again from the text alone, with code of its
# own: each fence from its opening line to the line that closes it (or the
# end), each table from its header row to the line before a blank one. A chunk
# that starts or ends strictly inside one of them cuts it.


# %%
# verify reads the page again with a scanner of its own: each fence is found by searching on for the
# line that closes it, each table by the blank line that ends it.
OPENING = re.compile(r" {0,3}(?P<run>`{3,}|~{3,})")


def _regions(lines):
    """Yield ("fence" or "table", start, end) for each fenced code block and table, in order."""
    i = 0
    while i < len(lines):
        text, opening = lines[i].text, OPENING.match(lines[i].text)
        if opening:
            run = opening["run"]
            shut = re.compile(" {0,3}" + re.escape(run[0]) + "{" + str(len(run)) + r",}\s*$")
            j = next((k for k in range(i + 1, len(lines)) if shut.match(lines[k].text)), None)
            if j is None:  # never closed: it holds the page to its last line that is not blank
                j = max((k for k in range(i, len(lines)) if lines[k].text.strip()), default=i)
            yield "fence", lines[i].start, lines[j].end
        elif "|" in text and not text.startswith(("    ", "\t")) and i + 1 < len(lines) \
                and is_delimiter_row(lines[i + 1].text):
            j = next((k - 1 for k in range(i + 2, len(lines)) if not lines[k].text.strip()), len(lines) - 1)
            yield "table", lines[i].start, lines[j].end
        else:
            j = i
        i = j + 1


def verify(text, chunks):
    """Raise ValueError naming the first fence or table of `text` that a chunk starts or ends
    strictly inside (a region runs from its first line's start to the end of its last line's
    text, its line break left out); return None if no chunk cuts one."""
    edges = sorted({position for chunk in chunks for position in (chunk.start, chunk.end)})
    for kind, start, end in _regions(split_lines(text)):
        cut = next((edge for edge in edges if start < edge < end), None)
        if cut is not None:
            raise ValueError(f"a chunk boundary at {cut} cuts the {kind} at [{start}, {end}) "
                             f"{text[start:start + 30]!r}: keep it whole")
    return None


# %% [markdown]
# ## 5. On a page, on real files, and the budget dial
#
# First your chunks on a page of the Orbit docs, beside rag5's, with `verify`
# and a real parser counting what each cuts. Then **real files**: a dozen
# pages from open-source projects (`datasets/real-markdown/`), chunked by your
# reader and by the course's robust one (labkit's scanner, which follows
# CommonMark: setext headings, fences in list items and quotes, lazy lines,
# HTML). Each is judged by a real parser, markdown-it-py, that neither chunker
# shares; read where yours breaks, and why. Last, **change `BUDGETS` and run
# again**: each budget cuts the 44 pages with your chunker and prints recall@5
# with its interval and what the data shows.

# %%
MAX_TOKENS, OVERLAP = 256, 32  # the budget and overlap on the page and the real files
BUDGETS = (128, 256, 512)  # the dial: max_tokens, with an overlap of an eighth


def main():
    page = PAGE.read_text(encoding="utf-8")
    blocks = read_blocks(page, body_start_of(page))  # your functions first: the lab stops at your first TODO
    chunks = markdown_chunks(page, MAX_TOKENS, OVERLAP)
    lesson.on_the_page(page, blocks, chunks, rag5.recursive_chunks(page, MAX_TOKENS), verify, MAX_TOKENS)
    view_chunks(page, chunks, first=1, limit=3)
    lesson.real_files_report({"yours": markdown_chunks, "robust (course)": robust_markdown_chunks}, MAX_TOKENS, OVERLAP)
    pages = corpus_pages()
    by_budget = {budget: {name: markdown_chunks(text, budget, budget // 8) for name, text in pages.items()}
                 for budget in BUDGETS}
    print("\n4. The budget dial: your Markdown chunks over the corpus, overlap an eighth of the budget")
    dial_report("max_tokens", by_budget)
    lesson.plot_sizes(by_budget.get(MAX_TOKENS) or {name: markdown_chunks(text, MAX_TOKENS, OVERLAP)
                                                    for name, text in pages.items()},
                      {name: rag5.recursive_chunks(text, MAX_TOKENS, OVERLAP) for name, text in pages.items()},
                      MAX_TOKENS, OVERLAP)
    return lesson.checks(globals())  # the lab's checks, then its public grading tests


# %%
# In a notebook, an explorer: pick a chunker, move its budget and overlap, watch the chunks.
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(PAGE.read_text(encoding="utf-8"),
                  {"markdown": markdown_chunks, "recursive (rag5)": rag5.recursive_chunks}, QUESTION, ANSWER)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag6-markdown-chunking.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 read_blocks` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "read_blocks")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag6")  # labs/hints/rag6.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
