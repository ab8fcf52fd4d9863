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


def read_blocks(text, start=0):
    """The Blocks of text[start:], in order; blank lines between blocks belong to none.

    kind is "heading" (with its level and title), "code", "table", "list",
    "quote" or "paragraph"; a block's `end` is just after its last line's break.
    A fence inside a list item (NESTED_FENCE) ends the list there and is a code
    block of its own, so that packing, which may cut a long list, never cuts it.
    An item with another marker (- * + or . )) at the list's own level starts a
    new list.
    """
    # BEGIN SOLUTION
    # hint 1: Read the lines of text[start:] into blocks, in order, each the lines from where it
    # hint 1: starts to where it ends, with its kind: what a chunker must know to keep a code block
    # hint 1: or table whole and to give each chunk its heading path.
    # hint 2: Walk the lines (split_lines) with an index i. Skip a blank line. Otherwise the line
    # hint 2: starts a block: find its last line j by the kind, append Block(kind, lines[i].start,
    # hint 2: lines[j].end, ...) and go on from j + 1. A fence runs to the line closing it (same
    # hint 2: character, at least as long, nothing after it but spaces) or to the end; indented code
    # hint 2: while lines are blank or indented, then back to its last indented line; a table, list,
    # hint 2: quote or paragraph to the line before a blank one; a list also over blank lines before
    # hint 2: an indented line; a paragraph stops early at a line that starts a heading, fence, list
    # hint 2: or quote. A heading is one line: its level is the number of #s, its title the rest
    # hint 2: without closing #s, stripped.
    # hint 3: fence = FENCE.match(line); if fence: close = re.compile(r" {0,3}" + re.escape(fence[1][0])
    # hint 3: + "{" + str(len(fence[1])) + r",}[ \t]*$"), then j = the first later line close.match()es (or the
    # hint 3: last line). Heading: HEADING.match(line): level = len(match[1]), title =
    # hint 3: re.sub(r"(^|[ \t]+)#+[ \t]*$", "", line[match.end():]).strip(). Table: "|" in line and
    # hint 3: is_delimiter_row(next line). Indented code: line.startswith(("    ", "\t")).
    def ends_block(kind, following, after_blank, first):
        """True if the line `following` does not continue a block of `kind` that began with line `first`."""
        if kind == "list":  # a fence in an item is read as a block of its own, so that none cuts it
            return bool(NESTED_FENCE.match(following) or HEADING.match(following) or QUOTE.match(following)
                        or another_list(first, following)) or (
                after_blank and not following.startswith(("  ", "\t")) and not LIST_ITEM.match(following))
        return bool(FENCE.match(following) or HEADING.match(following) or (kind != "quote" and QUOTE.match(following))
                    or (kind != "list" and LIST_ITEM.match(following)))

    def another_list(first, following):
        """True if `following` is an item of the list's own level (left of its first item's text) with
        another marker (- * + or . )): it starts a new list."""
        head, item = LIST_ITEM.match(first), LIST_ITEM.match(following)
        return bool(item) and len(following) - len(following.lstrip()) < head.end() and (
            item.group().strip()[-1] != head.group().strip()[-1])

    lines = split_lines(text, start)
    blank = [not line.text.strip() for line in lines]
    blocks = []
    i = 0
    while i < len(lines):
        line, j = lines[i].text, i
        if blank[i]:
            i += 1
            continue
        fence, heading = FENCE.match(line), HEADING.match(line)
        if fence:
            close = re.compile(r" {0,3}" + re.escape(fence[1][0]) + "{" + str(len(fence[1])) + r",}[ \t]*$")
            j = next((k for k in range(i + 1, len(lines)) if close.match(lines[k].text)), len(lines) - 1)
            kind = "code"
        elif line.startswith(("    ", "\t")):
            while j + 1 < len(lines) and (blank[j + 1] or lines[j + 1].text.startswith(("    ", "\t"))):
                j += 1
            while blank[j]:
                j -= 1
            kind = "code"
        elif heading:
            title = re.sub(r"(^|[ \t]+)#+[ \t]*$", "", line[heading.end():]).strip()
            blocks.append(Block("heading", lines[i].start, lines[i].end, len(heading[1]), title))
            i += 1
            continue
        else:
            if "|" in line and i + 1 < len(lines) and is_delimiter_row(lines[i + 1].text):
                kind = "table"
            else:
                kind = "list" if LIST_ITEM.match(line) else "quote" if QUOTE.match(line) else "paragraph"
            while True:  # the block's next line: j + 1, or for a list the first one after blank lines
                k = j + 1
                while kind == "list" and k < len(lines) and blank[k]:
                    k += 1
                if k == len(lines) or blank[k] or ends_block(kind, lines[k].text, k > j + 1, line):
                    break
                j = k
        blocks.append(Block(kind, lines[i].start, lines[j].end))
        i = j + 1
    return blocks
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Pack the blocks, in order, into as few chunks as the budget allows, never putting a
    # hint 1: boundary inside a block but one too big to fit, never putting two sections in one chunk,
    # hint 1: and never cutting a code block or table, even one over budget: that one stands alone.
    # hint 2: Walk the blocks with the spans they run over (start, the next block's start, ..., the end),
    # hint 2: keeping the heading path: at a heading, keep the entries of a smaller level and add (level,
    # hint 2: title). Count each span with the index. A code block or table over budget becomes its own
    # hint 2: chunk, flagged. Any other block over budget becomes rag5's seam pieces; else it is one
    # hint 2: piece. Each piece joins the last chunk if that chunk is not oversize, has the same section,
    # hint 2: the piece is not a heading, and the two together count within budget; else it starts a chunk.
    # hint 3: bounds = [start] + [b.start for b in blocks[1:]] + [len(text)]; for block, s, e in
    # hint 3: zip(blocks, bounds, bounds[1:]): ... section = tuple(title for _, title in path);
    # hint 3: make_chunk(text, s, e, index.count(s, e), section=section, kind=..., oversize=...).
    # hint 3: Joining: chunks[-1] = make_chunk(text, last.start, piece_end, count, section=section).
    # hint 3: A seam piece whose index.count is over budget goes to rag5.mend(text, s, e, max_tokens).
    # hint 3: No blocks but text after `start` (blank lines): one chunk of it.
    if not blocks and start < len(text):  # a body of blank lines alone: cut as a paragraph is
        blocks = [Block("paragraph", start, len(text))]
    bounds = [start] + [block.start for block in blocks[1:]] + [len(text)]
    path, chunks, alone_heading = (), [], False  # alone_heading: the last chunk is a heading alone
    for block, block_start, block_end in zip(blocks, bounds, bounds[1:]):
        if block.kind == "heading":
            path = tuple(entry for entry in path if entry[0] < block.level) + ((block.level, block.title),)
        section = tuple(title for _, title in path)
        tokens = index.count(block_start, block_end)
        if block.kind in ("code", "table") and tokens > max_tokens:  # alone, but for the heading over it
            first = chunks.pop().start if chunks and alone_heading else block_start
            chunks.append(make_chunk(text, first, block_end, index.count(first, block_end), section=section,
                                     kind=block.kind, oversize=True))
            alone_heading = False
            continue
        pieces = ([(block_start, block_end)] if tokens <= max_tokens
                  else rag5.split_at_seams(text, block_start, block_end, max_tokens, index))
        pieces = [span for s, e in pieces  # a seam piece a token over (an estimate at an unclean cut): mended
                  for span in ([(s, e)] if index.count(s, e) <= max_tokens else rag5.mend(text, s, e, max_tokens))]
        for piece_start, piece_end in pieces:
            last = chunks[-1] if chunks else None
            if last and not last.oversize and last.section == section and block.kind != "heading":
                joined = index.count(last.start, piece_end)
                if joined <= max_tokens:
                    chunks[-1] = make_chunk(text, last.start, piece_end, joined, section=section)
                    alone_heading = False
                    continue
            chunks.append(make_chunk(text, piece_start, piece_end, index.count(piece_start, piece_end),
                                     section=section))
            alone_heading = block.kind == "heading" and len(pieces) == 1
    return chunks
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Chunk a whole page: refuse bad arguments first, keep the front matter whole and apart,
    # hint 1: then read the body into blocks and pack them, leaving room for the overlap.
    # hint 2: check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens") refuses bad
    # hint 2: arguments; an empty text has no chunks. Then one TokenIndex; the body starts at
    # hint 2: body_start_of(text), and anything before it is the front matter (front_matter_chunk). Read
    # hint 2: the body's blocks, pack them within packing_budget(max_tokens, overlap, index), then
    # hint 2: with_overlap.
    # hint 3: check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    # hint 3: if not text:
    # hint 3:     return []
    # hint 3: index = TokenIndex(text)
    # hint 3: body = ...  # where the body starts: 0 if the page has no front matter
    # hint 3: chunks = ...  # the front matter's own chunk, if there is front matter
    # hint 3: blocks = ...  # the body's blocks
    # hint 3: packed = ...  # the blocks packed, leaving room for the overlap
    # hint 3: return ...  # the front matter's chunk, then the packed chunks with their overlap
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not text:
        return []
    index = TokenIndex(text)
    body = body_start_of(text)
    chunks = [front_matter_chunk(text, body, max_tokens, index)] if body else []
    blocks = read_blocks(text, body)
    packed = pack_blocks(text, body, blocks, packing_budget(max_tokens, overlap, index), index)
    return chunks + with_overlap(text, packed, blocks, max_tokens, overlap, index)
    # END SOLUTION


# %% [markdown]
# ## 4. Check that no chunk cuts a fence or a table
#
# A check that asks `read_blocks` where the fences are would share its
# mistakes. `verify` finds them again from the text alone, with code of its
# own: each fence from its opening line to the line that closes it (or the
# end), each table from its header row to the line before a blank one. A chunk
# that starts or ends strictly inside one of them cuts it.


# %%
def verify(text, chunks):
    """Raise ValueError naming the first fence or table of `text` that a chunk starts or ends
    strictly inside (a region runs from its first line's start to the end of its last line's
    text, its line break left out); return None if no chunk cuts one."""
    # BEGIN SOLUTION
    # hint 1: Find, without read_blocks, every fenced code block and table of the text, and fail
    # hint 1: with a message naming the first one a chunk boundary falls strictly inside.
    # hint 2: Walk the lines (split_lines). A line opening a fence (three or more backticks or tildes)
    # hint 2: starts a region that runs to the line closing it (same character, at least as long) or
    # hint 2: to the end; a line holding | whose next line is a delimiter row starts a table, up to
    # hint 2: the line before a blank one. Then test both ends of every chunk against every region:
    # hint 2: start < position < end is a cut.
    # hint 3: regions = []; i = 0; while i < len(lines): opening = re.match(r" {0,3}(`{3,}|~{3,})",
    # hint 3: line) ... regions.append((kind, lines[i].start, where lines[j].text ends)); i = j + 1.
    # hint 3: for kind, start, end in regions: for chunk in chunks: for position in (chunk.start,
    # hint 3: chunk.end): if start < position < end: raise ValueError(f"... {kind} at [{start}, {end})").
    lines = split_lines(text)
    regions, i = [], 0
    while i < len(lines):
        line, j = lines[i].text, i
        opening = re.match(r" {0,3}(`{3,}|~{3,})", line)
        if opening:
            char, length = opening[1][0], len(opening[1])
            j += 1
            while j < len(lines) and not re.fullmatch(r" {0,3}" + re.escape(char) * length + r"+[ \t]*", lines[j].text):
                j += 1
            last = lines[min(j, len(lines) - 1)]
            regions.append(("fence", lines[i].start, last.start + len(last.text)))
        elif "|" in line and i + 1 < len(lines) and is_delimiter_row(lines[i + 1].text):
            while j + 1 < len(lines) and lines[j + 1].text.strip():
                j += 1
            regions.append(("table", lines[i].start, lines[j].start + len(lines[j].text)))
        i = j + 1
    for kind, start, end in regions:
        for chunk in chunks:
            for position in (chunk.start, chunk.end):
                if start < position < end:
                    raise ValueError(f"a chunk boundary at {position} cuts the {kind} at [{start}, {end})")
    # END SOLUTION


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


# %%
if __name__ == "__main__":
    run_lab(main)
