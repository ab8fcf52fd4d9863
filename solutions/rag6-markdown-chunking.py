# %% [markdown]
# # rag6: Markdown-aware chunking
#
# Documentation is not a stream of sentences. It has **structure**: sections
# under headings, code blocks, tables, lists. rag5's splitter sees only seams
# of whitespace, so it will happily cut a table between two rows or a code
# block between two lines, and a chunk that starts halfway down a table has
# lost the header row that says what its numbers mean.
#
# This lab chunks structure first, size second:
#
# 1. find the **blocks**: headings, fenced code, tables, lists, quotes, HTML,
#    paragraphs;
# 2. group blocks into **sections**, each with its heading path, such as
#    `("Install", "On Linux")`;
# 3. pack each section's blocks up to the budget with rag5's machinery, never
#    cutting inside a fenced block or a table. One that alone is over budget
#    becomes its own chunk, flagged `oversize`;
# 4. keep the **front matter** (the `---` block of metadata at the top of many
#    documentation pages) as a chunk of its own.
#
# You write the rules that recognise Markdown (`fence_opening`,
# `closes_fence`, `atx_heading`, `is_table_start`), the heading path
# (`enter_section`), the packing of a section (`chunk_section`) and the entry
# point (`markdown_chunks`). The rest of CommonMark's block rules (lists,
# quotes, HTML, setext headings) is given in `labkit/markdown.py`, a scanner
# that reads Markdown with your four rules.

# %%
import bisect
import re
import statistics
from dataclasses import dataclass, replace
from typing import NamedTuple

from academy_llm import DATASETS, check_text_and_window, corpus_pages, embed, is_clean_cut, make_chunk, top_k
from labkit import Invariants, load_lab, plot_chunk_sizes, run_lab, show_figure, view_chunks
from labkit.markdown import (  # given: reading Markdown (see its docstring)
    PROTECTED, Recognisers, Scanner, body_start_of, cut_regions, front_matter, indent_of, inside,
    is_delimiter_row, markdown_cases, protected_regions, regions_to_keep_whole, regions_within,
    split_lines, table_cells,
)
from labkit.markdown import (  # noqa: F401 (unused here: rag7 and the tests take them from rag6)
    TRICKY_MARKDOWN, TrickyMarkdown, check_markdown_chunks, iter_lines, with_every_line_end,
)

rag5 = load_lab("rag5")  # TokenIndex, split_at_seams, pack, mend

# %% [markdown]
# ## 1. Recognising Markdown
#
# Markdown is defined line by line; `split_lines` gives each line with its
# offsets in the text (`line.start`, `line.end`) and its `text`. CommonMark's
# rules, in the small:
#
# - A **fence** opens with 3 or more backticks or tildes (up to 3 spaces of
#   indent). It closes at a line of the *same* character, at least as long,
#   with nothing after it but spaces. So a ```` block can hold ``` lines,
#   and a `#` line inside a fence is code, not a heading. A fence that is
#   never closed runs to the end of the document.
# - An **ATX heading** is 1-6 `#` then a space (or nothing): `## Install`.
#   Optional closing `#`s are not part of the title.
# - A **table** (GitHub's flavour) is a header row with a `|`, followed by a
#   delimiter row such as `|---|:--:|` or `--- | ---`, with as many cells.
#   Leading and trailing pipes are optional.


# %%
FENCE_OPENING = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # groups: the fence, the rest of the line
FENCE_CLOSING = re.compile(r"^ {0,3}(`+|~+)[ \t]*$")  # group: the fence
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$")  # groups: the #s, the rest of the line
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


def fence_opening(text):
    """(char, length) if `text` opens a fenced code block, else None."""
    # BEGIN SOLUTION
    # hint 1: Tell whether a line opens a fenced code block, and with which character and how long
    # hint 1: a fence: that decides which line closes the block, and everything up to it is code
    # hint 1: that no chunk may cut and no heading rule may read.
    # hint 2: Use the given FENCE_OPENING pattern: three or more backticks or tildes after at most
    # hint 2: three spaces, then the rest of the line (the info string, such as a language name).
    # hint 2: One CommonMark rule to watch: after a backtick fence, the info string may not hold a
    # hint 2: backtick (that line is inline code, not a fence); tildes have no such rule. Anything
    # hint 2: else opens nothing: return None.
    # hint 3: Match FENCE_OPENING. A backtick fence may not have a backtick in the rest of the line
    # hint 3: (its "info string"). Return (fence[0], len(fence)).
    match = FENCE_OPENING.match(text)
    if not match:
        return None
    fence, info = match.groups()
    if fence[0] == "`" and "`" in info:
        return None
    return fence[0], len(fence)
    # END SOLUTION


def closes_fence(text, char, length):
    """True if `text` closes a fence opened with `length` times `char`."""
    # BEGIN SOLUTION
    # hint 1: Tell whether a line closes the fenced block opened with `length` times `char`, so
    # hint 1: that the block ends where CommonMark says and a shorter or different fence inside it
    # hint 1: stays code.
    # hint 2: Use the given FENCE_CLOSING pattern: a fence with nothing after it but spaces. It
    # hint 2: closes the block only if it is made of the same character as the opening fence and is
    # hint 2: at least as long; a longer one closes too. Any other line leaves the block open.
    # hint 3: Match FENCE_CLOSING: its fence must be the same char, at least `length` long.
    match = FENCE_CLOSING.match(text)
    return bool(match) and match.group(1)[0] == char and len(match.group(1)) >= length
    # END SOLUTION


def atx_heading(text):
    """(level, title) if `text` is an ATX heading such as '## Install ##', else None."""
    # BEGIN SOLUTION
    # hint 1: Recognise a `#` heading and give its level and title: headings open the sections, and
    # hint 1: their titles become each chunk's heading path.
    # hint 2: Use the given ATX_HEADING pattern: one to six #s, then a space or the end of the line
    # hint 2: (#tag is not a heading). The level is the number of #s. A heading may end with a
    # hint 2: closing run of #s that is not part of its title: remove it with the given
    # hint 2: CLOSING_HASHES (it needs a space before it, or to be all the title has), then strip
    # hint 2: the spaces around the title.
    # hint 3: Match ATX_HEADING; the level is the number of #s. Drop a closing run of #s
    # hint 3: (CLOSING_HASHES: it needs a space before it, or to be all there is), then strip.
    match = ATX_HEADING.match(text)
    if not match:
        return None
    title = CLOSING_HASHES.sub("", match.group(2)).strip()
    return len(match.group(1)), title
    # END SOLUTION


def is_table_start(lines, i):
    """True if lines[i] is a table's header row (lines[i + 1] being its delimiter row)."""
    # BEGIN SOLUTION
    # hint 1: Tell whether line i starts a GitHub table, so that the chunker keeps the table whole
    # hint 1: with its header row, which names the columns every row's values depend on.
    # hint 2: A table is a header row followed by a delimiter row. Check, cheapest first: there is
    # hint 2: a next line; line i holds a pipe and is not indented four columns or more (that would
    # hint 2: be indented code); the next line is a delimiter row (the given is_delimiter_row); and
    # hint 2: both rows have as many cells, counted with the given table_cells, which ignores outer
    # hint 2: pipes.
    # hint 3: Needs a next line; lines[i].text must contain "|" and not be indented 4 or more;
    # hint 3: lines[i + 1].text must pass is_delimiter_row; and the header must have as many
    # hint 3: table_cells as the delimiter row has.
    if i + 1 >= len(lines) or "|" not in lines[i].text or indent_of(lines[i].text) >= 4:
        return False
    delimiter = lines[i + 1].text
    if not is_delimiter_row(delimiter):
        return False
    return len(table_cells(lines[i].text)) == len(table_cells(delimiter))
    # END SOLUTION


def scan_blocks(lines):
    """The blocks of `lines`, in order, read by the given scanner with the four rules above.

    The rules are looked up at each call, so a rule redefined in a notebook is the one used.
    """
    return Scanner(Recognisers(fence_opening, closes_fence, atx_heading, is_table_start)).scan(lines)


# %% [markdown]
# ## 2. Sections and heading paths
#
# Each heading opens a section. Its **heading path** is the chain of headings
# above it: under `# Install`, `## On Linux` has the path
# `("Install", "On Linux")`; a later `## On macOS` replaces `On Linux`, and a
# later `# Upgrade` starts afresh. The path says what a chunk is *about*,
# even when its text never says it (rag7 puts it to work).


# %%
def enter_section(path, level, title):
    """The heading path after a heading of `level` (1-6) titled `title`.

    `path` holds (level, title) pairs from the outermost heading in.
    """
    # BEGIN SOLUTION
    # hint 1: Give the heading path after a new heading, so that every chunk knows which chain of
    # hint 1: headings it sits under, even when its own text never names them.
    # hint 2: A heading closes every open heading of its own level or deeper and stays under the
    # hint 2: ones above it: a new level-2 heading replaces the previous one and anything under it,
    # hint 2: and stays under the current level-1 heading. So keep, in order, the entries of the
    # hint 2: path whose level is smaller than the new one's, and add the new heading at the end.
    # hint 2: Return a tuple: paths are compared and stored in chunks, so they must not change.
    # hint 3: Keep the entries of `path` whose level is smaller than `level`, then append (level,
    # hint 3: title). Return a tuple.
    return tuple(entry for entry in path if entry[0] < level) + ((level, title),)
    # END SOLUTION


class BlockSpan(NamedTuple):
    """A block as its section holds it: it runs to the next block's start, blank lines and all."""

    kind: str  # the Block's kind: heading, code, table, paragraph...
    start: int
    end: int
    tokens: int  # the index's estimate (exact: blocks start and end at line starts)


@dataclass
class Section:
    path: tuple  # ((level, title), ...) from the outermost heading in
    start: int  # offset of its first character (its heading, if it has one)
    end: int  # offset after its last character
    blocks: list  # its BlockSpans, in order, tiling [start, end)


def sections_of(text, body_start, lines, blocks, index):
    """Group the blocks into Sections, a new one at each heading."""
    starts = [body_start] + [lines[block.first].start for block in blocks[1:]]
    ends = starts[1:] + [len(text)]
    sizes = index.estimates(list(zip(starts, ends)))  # every block's tokens, in one call
    sections = []
    path = ()
    for block, start, end, tokens in zip(blocks, starts, ends, sizes):
        if block.kind == "heading" or not sections:
            if block.kind == "heading":
                path = enter_section(path, block.level, block.title)
            sections.append(Section(path, start, end, []))
        sections[-1].blocks.append(BlockSpan(block.kind, start, end, tokens))
        sections[-1].end = end
    return sections


def fold_tiny_parents(sections, tiny_tokens):
    """Merge a section with almost no body into the next one when that one is its child.

    "## General" with one line above "### Linux" would otherwise be a chunk of
    its own, too small to be worth retrieving; folded, its words go with its child.
    """
    folded = []
    for section in sections:
        previous = folded[-1] if folded else None
        if (
            previous is not None
            and sum(block.tokens for block in previous.blocks if block.kind != "heading") < tiny_tokens
            and section.path[: len(previous.path)] == previous.path
            and len(section.path) > len(previous.path)
        ):
            folded[-1] = Section(section.path, previous.start, section.end, previous.blocks + section.blocks)
        else:
            folded.append(section)
    return folded


# %% [markdown]
# ## 3. Packing a section without cutting what must stay whole
#
# Within a section, each block is a piece if it fits the budget. A paragraph,
# list or quote that is too big is split at rag5's seams, but never at a seam
# inside a fence or table nested in it. A fenced block or table that is too
# big stays whole: it becomes its own chunk, flagged `oversize`. (Cutting a
# table between rows would keep the budget, but every chunk after the first
# would lose the header row that names its columns. rag7 shows how to cut a
# table into rows that keep them, and measures what that wins and costs.)
#
# A heading never ends a chunk: it is glued to the piece after it. Then the
# pieces are packed greedily, as in rag5, and each chunk's count read from the index.


# %%
def chunk_section(text, section, max_tokens, index, regions):
    """(start, end, tokens) chunks of one section, within max_tokens unless one whole piece."""
    # BEGIN SOLUTION
    # hint 1: Pack one section into chunks within max_tokens, each with its exact token count,
    # hint 1: without ever cutting a fenced block or a table: one that alone is over budget stays a
    # hint 1: chunk of its own (the caller flags it oversize).
    # hint 2: The given pieces_of does the cutting: it splits big paragraphs at rag5's seams around
    # hint 2: any nested fence or table and glues each heading to what follows. Pack its pieces
    # hint 2: with rag5's pack, sized by their own token counts, then count each packed chunk
    # hint 2: exactly with the index. Nearly all fit. The pieces of a chunk that does not go to
    # hint 2: the given repack_exactly, which packs them again counting exactly, never cutting
    # hint 2: what must stay whole. Return (start, end, tokens) for each chunk.
    # hint 3: pieces = pieces_of(...); pack [(p.start, p.end) for p in pieces] with rag5.pack,
    # hint 3: sized by [p.tokens for p in pieces]; count each packed (start, end) with
    # hint 3: index.count. Within budget: keep (start, end, count); else add
    # hint 3: repack_exactly(text, the pieces inside [start, end), max_tokens, index, regions).
    pieces = pieces_of(text, section, max_tokens, index, regions)
    packed = rag5.pack([(piece.start, piece.end) for piece in pieces], [piece.tokens for piece in pieces], max_tokens)
    chunks = []
    for start, end in packed:
        n_tokens = index.count(start, end)
        if n_tokens <= max_tokens:
            chunks.append((start, end, n_tokens))
        else:
            inner = [piece for piece in pieces if start <= piece.start and piece.end <= end]
            chunks += repack_exactly(text, inner, max_tokens, index, regions)
    return chunks
    # END SOLUTION


class Piece(NamedTuple):
    """A span of a section that chunk_section packs."""

    start: int
    end: int
    whole: bool  # a fence or table: never cut, even over budget
    tokens: int  # the index's estimate


def pieces_of(text, section, budget, index, regions):
    """The Pieces tiling a section: each block within `budget`, or a big one cut at seams
    around the fences and tables nested in it; each heading glued to the piece after it."""
    pieces = []
    for block in section.blocks:
        if block.kind in PROTECTED or block.tokens <= budget:
            pieces.append(Piece(block.start, block.end, block.kind in PROTECTED, block.tokens))
            continue
        cursor = block.start
        for region in regions_within(regions, block.start, block.end):
            pieces += seam_pieces(text, cursor, region.start, budget, index)
            pieces.append(Piece(region.start, region.end, True, index.estimate(region.start, region.end)))
            cursor = region.end
        pieces += seam_pieces(text, cursor, block.end, budget, index)
    headings = {(block.start, block.end) for block in section.blocks if block.kind == "heading"}
    return glue_headings(pieces, headings)


def seam_pieces(text, start, end, budget, index):
    """Pieces that may be cut, tiling text[start:end]: rag5's seams, one estimate call for all."""
    if start >= end:
        return []
    spans = rag5.split_at_seams(text, start, end, budget, index)
    return [Piece(s, e, False, tokens) for (s, e), tokens in zip(spans, index.estimates(spans))]


def glue_headings(pieces, headings):
    """The pieces with each heading, a (start, end) of `headings`, joined to the piece after
    it; a heading that is the last piece stays alone."""
    glued = []
    waiting = None  # a heading (or headings) waiting for the piece after it
    for number, piece in enumerate(pieces):
        is_heading = (piece.start, piece.end) in headings
        if waiting is not None:
            piece = piece._replace(start=waiting.start, tokens=waiting.tokens + piece.tokens)
            waiting = None
        if is_heading and number + 1 < len(pieces):
            waiting = piece
        else:
            glued.append(piece)
    return glued


def repack_exactly(text, pieces, max_tokens, index, regions):
    """(start, end, tokens) chunks of pieces that packed on estimates came out over budget.

    Greedy again, counting every step exactly. A single piece still over
    budget stays whole if it must not be cut, and is otherwise mended word by
    word with rag5.mend, each fence or table nested in it kept as one span: a
    list that holds a fence, glued to the heading above it, can come out a
    token or two over budget, and mending must not cut the fence.
    """
    chunks = []
    for start, end in pack_exactly([(piece.start, piece.end) for piece in pieces], max_tokens, index):
        n_tokens = index.count(start, end)
        if n_tokens <= max_tokens or any(piece.whole and piece.start == start for piece in pieces):
            chunks.append((start, end, n_tokens))
            continue
        spans = []
        for region in regions_within(regions, start, end):
            spans += rag5.mend(text, start, region.start, max_tokens) if start < region.start else []
            spans.append((region.start, region.end))
            start = region.end
        spans += rag5.mend(text, start, end, max_tokens) if start < end else []
        chunks += [(s, e, index.count(s, e)) for s, e in pack_exactly(spans, max_tokens, index)]
    return chunks


def pack_exactly(spans, max_tokens, index):
    """Greedy packing with an exact count at every step (only to mend a rare miss)."""
    chunks = []
    for start, end in spans:
        if chunks and index.count(chunks[-1][0], end) <= max_tokens:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
    return chunks


# %% [markdown]
# ## 4. The whole document
#
# `markdown_chunks` reads the document once (tokens, blocks, sections, the
# regions of fences and tables), keeps any front matter as a chunk of its own,
# then chunks section after section. As in rag5, overlap reaches back into the
# previous chunk of the same section by up to `overlap` tokens and starts at a
# word. If that point falls inside a fence or table, it moves forward to the
# block's end: overlap may repeat a whole table but never half of one. An
# oversize chunk gets none.


# %%
def markdown_chunks(text, max_tokens, overlap=0):
    """Chunks of a Markdown document: sections first, then size; fences and tables never cut."""
    # BEGIN SOLUTION
    # hint 1: Refuse bad arguments before any work, with the same errors as every chunker in the
    # hint 1: course, so that a caller's mistake is named at once and alike everywhere; an empty
    # hint 1: text has no chunks.
    # hint 2: The course's shared check of the text and the window does the refusing (pass the
    # hint 2: names that make its messages speak of max_tokens and tokens); then an empty text
    # hint 2: returns an empty list. Reading the document, its sections and their chunks is given
    # hint 2: after this part.
    # hint 3: Reject bad parameters with check_text_and_window(text, max_tokens, overlap,
    # hint 3: "max_tokens", "tokens"); an empty text has no chunks. The rest is given below.
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not text:
        return []
    # END SOLUTION
    document = read_document(text, rag5.packing_budget(max_tokens, overlap))
    chunks = [front_matter_chunk(text, document.body_start, max_tokens)] if document.body_start else []
    for section in document.sections:
        chunks += section_chunks(text, section, max_tokens, overlap, document.index, document.regions)
    return chunks


@dataclass
class Document:
    """A Markdown text read once: where its body starts, its sections and protected regions."""

    index: object  # rag5.TokenIndex of the whole text
    body_start: int  # 0, or the offset after the front matter and the blank lines after it
    sections: list  # its Sections, in order
    regions: list  # sorted, disjoint Regions of fences and tables, nested ones too


def read_document(text, budget):
    """Tokenize and scan `text` once; fold tiny parents against `budget`."""
    index = rag5.TokenIndex(text)
    body_start = body_start_of(text)
    lines = split_lines(text, body_start)
    blocks = scan_blocks(lines)
    if blocks:
        sections = fold_tiny_parents(sections_of(text, body_start, lines, blocks, index), budget // 8)
    elif body_start < len(text):  # nothing but blank lines after any front matter
        blank = BlockSpan("blank", body_start, len(text), index.estimate(body_start, len(text)))
        sections = [Section((), body_start, len(text), [blank])]
    else:
        sections = []
    return Document(index, body_start, sections, protected_regions(lines, blocks))


def front_matter_chunk(text, body_start, max_tokens):
    """The front matter as one chunk, never cut (flagged oversize if it is over budget)."""
    chunk = make_chunk(text, 0, body_start, kind="front_matter")
    return replace(chunk, oversize=chunk.n_tokens > max_tokens)


def section_chunks(text, section, max_tokens, overlap, index, regions):
    """The Chunks of one section: packed, overlapped within the section, oversize flagged."""
    titles = tuple(title for _, title in section.path)
    packed = chunk_section(text, section, rag5.packing_budget(max_tokens, overlap), index, regions)
    block_starts = [block.start for block in section.blocks]
    chunks = []
    for number, (start, end, n_tokens) in enumerate(packed):
        kind = kind_of(section, block_starts, start, end)
        if n_tokens > max_tokens:  # one whole fence or table, perhaps with its heading glued before it
            held = regions_within(regions, start, end)
            kind = held[0].kind if held else kind
            chunks.append(make_chunk(text, start, end, n_tokens, section=titles, kind=kind, oversize=True))
            continue
        reach = reach_back(text, start, packed[number - 1][0], overlap, index, regions) if overlap and number else start
        n_tokens = index.count(reach, end) if reach < start else n_tokens
        while n_tokens > max_tokens:  # the overlap gives back words until it fits
            reach = next_cut(text, reach + 1, start, regions)
            n_tokens = index.count(reach, end)
        chunks.append(make_chunk(text, reach, end, n_tokens, section=titles, kind=kind))
    return chunks


def kind_of(section, block_starts, start, end):
    """"code" or "table" if the blocks in [start, end), headings aside, are all of that kind; else "text".

    `block_starts` lists where the section's blocks start: two binary searches
    find the blocks, so a section of a thousand blocks is not read per chunk.
    """
    first = max(bisect.bisect_right(block_starts, start) - 1, 0)  # the block holding `start`
    last = bisect.bisect_left(block_starts, end)  # after the last block starting before `end`
    kinds = {block.kind for block in section.blocks[first:last]} - {"heading"}
    return kinds.pop() if len(kinds) == 1 and kinds <= set(PROTECTED) else "text"


def reach_back(text, start, floor, overlap, index, regions):
    """Where a chunk starting at `start` begins once it reaches back `overlap` tokens."""
    position = int(index.starts.searchsorted(start))
    reach = max(int(index.starts[max(position - overlap, 0)]), floor)
    return next_cut(text, reach, start, regions)


def next_cut(text, position, limit, regions):
    """The first clean cut (a word's space, a line's start) at or after `position`,
    up to `limit`, outside every protected region."""
    while position < limit:
        region = inside(position, regions)
        if region:
            position = region.end
            continue
        if is_clean_cut(text, position):
            return position
        position += 1
    return limit


# %% [markdown]
# ## 5. Try it on a real page
#
# Structure first changes the sizes of chunks: a short section makes a short
# chunk, and a table or code block too big for the budget stays whole, past
# it. A plot of the chunk sizes over the whole corpus shows both (a PNG file
# beside your run, or inline in a notebook). Then `view_chunks` shows chunks
# on the page itself, each labelled with its heading path: look at the table
# kept whole and flagged oversize.

# %%
PAGE = DATASETS / "orbit-docs" / "storage-backends.md"
ANSWER = "| `storage.postgres_max_idle_conns` | `5` | idle sessions kept open between bursts |"
QUESTION = "What is the default value of storage.postgres_max_idle_conns?"
MAX_TOKENS = 256
OVERLAP = 32


def step_structure(page):
    """What the page holds: its front matter, read as metadata, and its blocks."""
    metadata, end = front_matter(page)
    print(f"\n1. Front matter: {end} characters, read as metadata: {metadata}")
    counts = {}
    for block in scan_blocks(split_lines(page, body_start_of(page))):
        counts[block.kind] = counts.get(block.kind, 0) + 1
    print("2. Blocks: " + ", ".join(f"{count} {kind}" for kind, count in counts.items()))


def step_compare(page, regions):
    """rag5 against rag6 at the same budget: protected blocks cut, sections mixed."""
    print(f"\n3. {PAGE.name}, chunks of at most {MAX_TOKENS} tokens; "
          f"{len(regions)} fenced blocks and tables")
    print(f"   {'chunker':<12} {'chunks':>6} {'blocks cut':>11} {'oversize':>9}")
    results = {}
    for name, chunks in (
        ("markdown", markdown_chunks(page, MAX_TOKENS, OVERLAP)),
        ("recursive", rag5.recursive_chunks(page, MAX_TOKENS, OVERLAP)),
    ):
        cut = len(set(cut_regions(chunks, regions)))
        oversize = sum(c.oversize for c in chunks)
        print(f"   {name:<12} {len(chunks):>6} {cut:>11} {oversize:>9}")
        results[name] = chunks
    return results["markdown"]


def step_sizes():
    """Plot how many tokens the chunks hold, markdown against recursive, over the whole corpus."""
    pages = corpus_pages()
    sizes = {
        "markdown": [c.n_tokens for page in pages.values() for c in markdown_chunks(page, MAX_TOKENS, OVERLAP)],
        "recursive": [c.n_tokens for page in pages.values() for c in rag5.recursive_chunks(page, MAX_TOKENS, OVERLAP)],
    }
    print(f"\n4. Chunk sizes over the whole corpus ({len(pages)} pages)")
    for name, counts in sizes.items():
        oversize = sum(count > MAX_TOKENS for count in counts)
        print(f"   {name:<10} {len(counts):>4} chunks, median {statistics.median(counts):.0f} tokens, "
              f"{oversize} over the budget")
    title = f"rag6: chunk sizes on the Orbit docs, budget {MAX_TOKENS} tokens"
    show_figure(plot_chunk_sizes(sizes, MAX_TOKENS, title), "rag6-chunk-sizes.png")


def step_sections(page, chunks):
    """Show the first chunks after the front matter on the page, with their heading paths."""
    print("\n5. Markdown chunks on the page, each labelled with its heading path:")
    view_chunks(page, chunks, first=1, limit=3)


def rank_of_answer(chunks, answer_start, answer_end):
    """Rank (1 = best) of the first chunk holding the whole answer, or 'none holds it'."""
    vectors = embed([chunk.embedding_text for chunk in chunks])
    ranked = top_k(embed([QUESTION])[0], vectors, len(chunks))
    for place, (row, _) in enumerate(ranked, 1):
        if chunks[row].start <= answer_start and answer_end <= chunks[row].end:
            return place
    return "none holds it"


# %% [markdown]
# ## 6. Tricky Markdown
#
# The page above uses a few of Markdown's forms. The lab ends by chunking
# small documents that use the others (`TRICKY_MARKDOWN` in
# `labkit/markdown.py`): tilde fences and fences of four backticks, fences and
# tables inside lists and quotes, tables without outer pipes, setext headings,
# front matter, a fence never closed. Each is tried with `\n`, `\r\n` and lone
# `\r` line ends, at budgets from 4 tokens up, with and without overlap,
# together with the course's `TRICKY_TEXTS`. Each document names, by hand, the
# blocks that must stay whole and the heading path some of its lines must
# carry: the checks never ask your code. The first input that goes wrong is
# shown with the call that reproduces it.


# %%
def main():
    page = PAGE.read_text(encoding="utf-8")
    answer_start = page.index(ANSWER)  # the lab's own label, not a chunk offset
    answer_end = answer_start + len(ANSWER)
    regions = regions_to_keep_whole(page)

    step_structure(page)
    chunks = step_compare(page, regions)
    step_sizes()
    step_sections(page, chunks)

    print(f"\n6. Retrieval: {QUESTION!r}")
    for name, chunker in (("markdown", markdown_chunks), ("recursive", rag5.recursive_chunks)):
        ranked = rank_of_answer(chunker(page, MAX_TOKENS, OVERLAP), answer_start, answer_end)
        print(f"   {name:<10} rank of the first chunk holding the whole answer: {ranked}")
    vectors = embed([chunk.embedding_text for chunk in chunks])
    top = chunks[top_k(embed([QUESTION])[0], vectors, 1)[0][0]]

    print("\nInvariants")
    checks = Invariants("rag6")
    checks.check_chunks(  # the budget check skips the chunks flagged oversize
        "nothing lost, every chunk an exact slice within budget", [(page, chunks)], MAX_TOKENS
    )
    oversize = [c for c in chunks if c.oversize]
    checks.check(
        "only a fenced block or table alone is oversize",
        all(c.kind in PROTECTED for c in oversize),
        f"{len(oversize)} oversize chunk(s)",
    )
    cut = cut_regions(chunks, regions)
    checks.check("no fenced block or table is cut (checked by separate code)", not cut, f"{len(cut)} cut")
    checks.check(
        "the top result holds the answer",
        top.start <= answer_start and answer_end <= top.end,
        f"answer at [{answer_start}, {answer_end})",
    )
    checks.check_cases(
        "tricky Markdown: lossless, in budget, fences and tables whole, heading paths right",
        markdown_cases(markdown_chunks),
    )
    return checks.verdict()


# %%
if __name__ == "__main__":
    run_lab(main)
