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
    """
    lines = split_lines(text, start)
    count = len(lines)

    def blank(k):
        return not lines[k].text.strip()

    def opens_fence(s):
        found = re.match(r" {0,3}(`{3,}|~{3,})", s)
        return found.group(1) if found else None

    def heading_of(s):
        found = re.match(r" {0,3}(#{1,6})(?:[ \t]+(.*))?$", s)
        if found is None:
            return None
        title = (found.group(2) or "").strip()
        title = re.sub(r"(?:^|[ \t])#+[ \t]*$", "", title).strip()
        return len(found.group(1)), title

    def item(s):
        return re.match(r" {0,3}(?:[-*+]|[0-9]{1,9}[.)])(?:[ \t]|$)", s) is not None

    def quoted(s):
        return re.match(r" {0,3}>", s) is not None

    def new_list(opening, s):
        # an item left of where the opening item's text begins, with another bullet or delimiter
        marker = re.compile(r"( {0,3})([-*+]|[0-9]{1,9}([.)]))(?:[ \t]|$)")
        a, b = marker.match(opening), marker.match(s)
        if b is None or len(b.group(1)) >= a.end():
            return False
        return (a.group(3) or a.group(2)) != (b.group(3) or b.group(2))

    def indented(s):
        return s.startswith("\t") or s.startswith("    ")

    result = []
    k = 0
    while k < count:
        if blank(k):
            k += 1
            continue
        line = lines[k].text
        first = k
        fence = opens_fence(line)
        head = heading_of(line)
        if fence is not None:
            k += 1
            closing = re.compile(" {0,3}" + re.escape(fence[0]) + "{%d,}[ \t]*$" % len(fence))
            while k < count and not closing.match(lines[k].text):
                k += 1
            last = min(k, count - 1)
            result.append(Block("code", lines[first].start, lines[last].end))
            k = last + 1
            continue
        if indented(line):
            last = k
            k += 1
            while k < count and (blank(k) or indented(lines[k].text)):
                if not blank(k):
                    last = k
                k += 1
            result.append(Block("code", lines[first].start, lines[last].end))
            k = last + 1
            continue
        if head is not None:
            result.append(Block("heading", lines[k].start, lines[k].end, head[0], head[1]))
            k += 1
            continue
        if "|" in line and k + 1 < count and is_delimiter_row(lines[k + 1].text):
            kind = "table"
        elif item(line):
            kind = "list"
        elif quoted(line):
            kind = "quote"
        else:
            kind = "paragraph"
        last = k
        k += 1
        while True:
            gap = k
            if kind == "list":
                while k < count and blank(k):
                    k += 1
            if k >= count or blank(k):
                break
            s = lines[k].text
            if kind == "list":
                stops = (re.match(r"[ \t]*(`{3,}|~{3,})", s) is not None or heading_of(s) is not None
                         or quoted(s) or (k > gap and not s.startswith(("  ", "\t")) and not item(s))
                         or new_list(lines[first].text, s))
            else:
                stops = (opens_fence(s) is not None or heading_of(s) is not None
                         or (kind != "quote" and quoted(s)) or (kind != "list" and item(s)))
            if stops:
                break
            last = k
            k += 1
        result.append(Block(kind, lines[first].start, lines[last].end))
        k = last + 1
    return result


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
    if len(blocks) == 0:
        if start < len(text):
            return [make_chunk(text, start, len(text), index.count(start, len(text)))]
        return []
    headings = []  # (level, title) open
    out = []
    lone_heading = False
    for number, block in enumerate(blocks):
        begin = start if number == 0 else block.start
        finish = blocks[number + 1].start if number + 1 < len(blocks) else len(text)
        if block.kind == "heading":
            while headings and headings[-1][0] >= block.level:
                headings.pop()
            headings.append((block.level, block.title))
        section = tuple(title for level, title in headings)
        size = index.count(begin, finish)
        if size > max_tokens and block.kind in ("code", "table"):
            if lone_heading:
                begin = out.pop().start
                size = index.count(begin, finish)
            out.append(make_chunk(text, begin, finish, size, section=section, kind=block.kind, oversize=True))
            lone_heading = False
            continue
        if size <= max_tokens:
            spans = [(begin, finish)]
        else:
            spans = []
            for a, b in rag5.split_at_seams(text, begin, finish, max_tokens, index):
                if index.count(a, b) <= max_tokens:
                    spans.append((a, b))
                else:
                    spans.extend(rag5.mend(text, a, b, max_tokens))
        for a, b in spans:
            can_join = (len(out) > 0 and block.kind != "heading" and not out[-1].oversize
                        and out[-1].section == section)
            if can_join:
                together = index.count(out[-1].start, b)
                if together <= max_tokens:
                    out[-1] = make_chunk(text, out[-1].start, b, together, section=section)
                    lone_heading = False
                    continue
            out.append(make_chunk(text, a, b, index.count(a, b), section=section))
            lone_heading = block.kind == "heading" and len(spans) == 1
    return out


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
    if text == "":
        return []
    index = TokenIndex(text)
    body = body_start_of(text)
    blocks = read_blocks(text, body)
    packed = pack_blocks(text, body, blocks, packing_budget(max_tokens, overlap, index), index)
    overlapped = with_overlap(text, packed, blocks, max_tokens, overlap, index)
    if body == 0:
        return overlapped
    return [front_matter_chunk(text, body, max_tokens, index)] + overlapped


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
    spans = []
    state = None  # None, or ("fence", first line, char, length) or ("table", first line)
    lines = split_lines(text)
    for number, line in enumerate(lines):
        s = line.text
        if state is not None and state[0] == "fence":
            close = re.match(r" {0,3}(`+|~+)[ \t]*$", s)
            if close and close.group(1)[0] == state[2] and len(close.group(1)) >= state[3]:
                spans.append(("fence", lines[state[1]].start, line.start + len(s)))
                state = None
            continue
        if state is not None and state[0] == "table":
            if s.strip():
                continue
            spans.append(("table", lines[state[1]].start, lines[number - 1].start + len(lines[number - 1].text)))
            state = None
        opening = re.match(r" {0,3}(`{3,}|~{3,})", s)
        if opening:
            state = ("fence", number, opening.group(1)[0], len(opening.group(1)))
        elif "|" in s and number + 1 < len(lines) and is_delimiter_row(lines[number + 1].text):
            state = ("table", number)
    if state is not None:
        spans.append((state[0], lines[state[1]].start, lines[-1].start + len(lines[-1].text)))
    edges = sorted({edge for chunk in chunks for edge in (chunk.start, chunk.end)})
    for kind, low, high in spans:
        for edge in edges:
            if low < edge < high:
                raise ValueError(f"chunk edge {edge} falls inside the {kind} [{low}, {high})")
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
