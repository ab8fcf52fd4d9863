"""The course's chunker for real Markdown: given code, which rag6 runs beside the student's own.

rag6's student writes a Markdown chunker for the Markdown of the course's pages. Real documents
hold much more, so the chunker the course recommends for them (rag6's robust_markdown_chunks, which
`compare` and the benchmarks use) is RobustMarkdown: the scanner of labkit/markdown.py with
CommonMark's rules (COMMONMARK), and what lies between, in the order a document goes through it:

- read_document: the text tokenized and scanned once, its blocks grouped into
  Sections (sections_of, with path_after), a section with almost no body
  folded into its child (fold_tiny_parents);
- pieces_of: the Pieces a section packs into, a big paragraph or list cut at
  rag5's seams around what it nests, each heading glued to what follows it;
  repack_exactly for the rare chunk that counted over budget;
- section_chunks: one section's packed spans made Chunks: overlap that reaches
  back to a word but never into a fence or table (reach_back), the kind of
  each chunk, and oversize ones flagged;
- the report of a page (show_structure, compare_on_page, plot_sizes, rank_of_answer).

rag5's functions (split_at_seams, pack, mend) are handed in: RobustMarkdown(rag5) stands on the
lab the student wrote before.

Speed: a page is tokenized once (rag5's TokenIndex), and every count after
that comes from it. Chunks start and end where blocks do, so a BoundaryIndex
reads the token at each block boundary once, for all of them, and a count
between two boundaries is two dictionary lookups. The work per block is a
handful of Python operations, done in C where a map or a zip can do it.
"""

from __future__ import annotations

import bisect
import itertools
import operator
import re
import statistics
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from academy_llm import (
    Chunk, check_text_and_window, corpus_pages, count_tokens, embed, is_clean_cut, make_chunk, top_k,
)
from labkit.markdown import (
    PROTECTED, Recognisers, Scanner, body_start_of, cut_regions, front_matter, indent_of, inside, is_delimiter_row,
    line_view, protected_regions, regions_within, split_lines, table_cells,
)
from labkit.seams import packing_budget
from labkit.token_index import TokenIndex
from labkit.plots import plot_chunk_sizes, show_figure


class Piece(NamedTuple):
    """A span of a section: one of its blocks, which runs to the next block's start, blank lines
    and all; or one of the pieces chunk_section packs: a block, a part of a big one, a heading
    glued to the piece after it."""

    start: int
    end: int
    whole: bool  # a fence or table: never cut, even over budget
    tokens: int  # the index's estimate
    kind: str = "text"  # the kind of block it is (heading, code, table, paragraph...) or is cut from


@dataclass
class Section:
    path: tuple  # ((level, title), ...) from the outermost heading in
    start: int  # offset of its first character (its heading, if it has one)
    end: int  # offset after its last character
    blocks: list  # its blocks as Pieces, in order, tiling [start, end)


@dataclass
class Document:
    """A Markdown text read once: where its body starts, its sections and protected regions."""

    index: object  # rag5.TokenIndex of the whole text
    body_start: int  # 0, or the offset after the front matter and the blank lines after it
    sections: list  # its Sections, in order
    regions: list  # sorted, disjoint Regions of fences and tables, nested ones too


# ---- the document, read once ---------------------------------------------------------


def read_document(text, budget, index, scan_blocks: Callable, enter_section: Callable):
    """`text` read once, with its TokenIndex `index`: blocks found by `scan_blocks(lines)`,
    sections by `enter_section`, tiny parents folded against `budget`."""
    body_start = body_start_of(text)
    lines = line_view(text, body_start)  # the lines, their Lines made only if asked for
    blocks = scan_blocks(lines)
    bounds = [body_start, *map(lines.offsets.__getitem__, map(FIRST, blocks[1:])), len(text)]
    regions = protected_regions(lines, blocks)
    del lines  # the lines' texts take about the text's size again: freed before the sections are made
    index = BoundaryIndex(index, bounds)
    if blocks:
        sections = fold_tiny_parents(sections_of(blocks, bounds, index.sizes, enter_section), budget // 8)
    elif body_start < len(text):  # nothing but blank lines after any front matter
        sections = [Section((), body_start, len(text), [Piece(body_start, len(text), False, index.sizes[0], "blank")])]
    else:
        sections = []
    return Document(index, body_start, sections, regions)


def sections_of(blocks, bounds, sizes, enter_section):
    """Group the blocks into Sections, a new one at each heading, its path from enter_section.

    Block k spans [bounds[k], bounds[k + 1]): to the next block's start, blank
    lines and all; it holds sizes[k] tokens.
    """
    kinds = list(map(KIND, blocks))
    wholes = map(PROTECTED_KINDS.__contains__, kinds)
    spans = list(map(tuple.__new__, itertools.repeat(Piece), zip(bounds, bounds[1:], wholes, sizes, kinds)))
    headings = list(itertools.compress(itertools.count(), map("heading".__eq__, kinds)))
    firsts = ([] if headings[:1] == [0] else [0]) + headings + [len(blocks)]  # where each section starts
    sections = []
    path = ()
    for first, last in zip(firsts, firsts[1:]):
        if blocks[first].kind == "heading":
            path = enter_section(path, blocks[first].level, blocks[first].title)
        sections.append(Section(path, bounds[first], bounds[last], spans[first:last]))
    return sections


class BoundaryIndex:
    """A rag5 TokenIndex that reads the counts between block boundaries from a table.

    Chunks start and end where blocks do, nearly all, and each is counted:
    a table of the token at each boundary, made with one numpy call, saves two
    binary searches a count. It answers as the index does (rag5's estimate and
    count); anything else is the index's own.
    """

    def __init__(self, index, bounds):
        self.index = index
        self.text = index.text
        positions = [0] + bounds  # 0 too: where the front matter starts
        array = np.array(positions)
        first = index.starts.searchsorted(array)
        numbers = index.numbers[first]  # the token that starts at or after each position
        straddles = first == index.starts.searchsorted(array, "right")  # no token starts there
        self.table = dict(zip(positions, zip(numbers.tolist(), straddles.tolist())))
        # sizes[k]: estimate(bounds[k], bounds[k + 1]), the tokens of the block between them
        self.sizes = ((numbers[2:] - numbers[1:-1] + straddles[1:-1]) * (array[2:] > array[1:-1])).tolist()

    def __getattr__(self, name):  # text, starts, numbers, estimates: the index's own
        return getattr(self.index, name)

    def estimate(self, start, end):
        at_start, at_end = self.table.get(start), self.table.get(end)
        if at_start is None or at_end is None or end <= start:
            return self.index.estimate(start, end)
        return at_end[0] - at_start[0] + at_start[1]

    def count(self, start, end):
        at_start, at_end = self.table.get(start), self.table.get(end)
        if at_start is None or at_end is None or end <= start or not (
                is_clean_cut(self.text, start) and is_clean_cut(self.text, end)):
            return self.index.count(start, end)
        return at_end[0] - at_start[0] + at_start[1]  # the estimate, exact between clean cuts


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
            and len(section.path) > len(previous.path)
            and section.path[: len(previous.path)] == previous.path
            and sum(block.tokens for block in previous.blocks if block.kind != "heading") < tiny_tokens
        ):
            folded[-1] = Section(section.path, previous.start, section.end, previous.blocks + section.blocks)
        else:
            folded.append(section)
    return folded


def front_matter_chunk(text, body_start, max_tokens, index=None):
    """The front matter as one chunk, never cut (flagged oversize if it is over budget);
    counted by `index`, the text's TokenIndex, if there is one."""
    n_tokens = index.count(0, body_start) if index is not None else count_tokens(text[:body_start])
    return make_chunk(text, 0, body_start, n_tokens, kind="front_matter", oversize=n_tokens > max_tokens)


# ---- the pieces chunk_section packs ---------------------------------------------------


def pieces_of(text, section, budget, index, regions, split_at_seams: Callable):
    """The Pieces tiling a section: its blocks, each within `budget` or a fence or table, or a big
    one cut at seams (rag5's `split_at_seams`) around the fences and tables nested in it; each
    heading glued to the piece after it."""
    pieces = blocks = section.blocks
    if max(map(TOKENS, blocks)) > budget and any(block.tokens > budget and not block.whole for block in blocks):
        pieces = []
        for block in section.blocks:
            if block.whole or block.tokens <= budget:
                pieces.append(block)
                continue
            cursor = block.start
            for region in regions_within(regions, block.start, block.end):
                pieces += seam_pieces(text, cursor, region.start, budget, index, split_at_seams, block.kind)
                pieces.append(Piece(region.start, region.end, True, index.estimate(region.start, region.end),
                                    region.kind))
                cursor = region.end
            pieces += seam_pieces(text, cursor, block.end, budget, index, split_at_seams, block.kind)
    kinds = list(map(KIND, blocks))
    if "heading" not in kinds:
        return list(pieces)
    if kinds.count("heading") == 1 and kinds[0] == "heading" and pieces[0] is blocks[0] and len(pieces) > 1:
        heading, after = pieces[0], pieces[1]  # the usual: the section's heading, glued to what follows
        glued = tuple.__new__(Piece, (heading.start, after.end, after.whole, heading.tokens + after.tokens, after.kind))
        return [glued] + pieces[2:]
    return glue_headings(pieces, [(block.start, block.end) for block in blocks if block.kind == "heading"])


def seam_pieces(text, start, end, budget, index, split_at_seams, kind):
    """Pieces that may be cut, tiling text[start:end] of a block of `kind`: rag5's seams, one
    estimate call for all."""
    if start >= end:
        return []
    spans = split_at_seams(text, start, end, budget, index)
    return [Piece(s, e, False, tokens, kind) for (s, e), tokens in zip(spans, index.estimates(spans))]


def glue_headings(pieces, headings):
    """The pieces with each heading, a (start, end) of `headings`, joined to the piece after
    it; a heading that is the last piece stays alone."""
    headings = set(headings)
    glued = []
    waiting = None  # a heading (or headings) waiting for the piece after it
    for number, piece in enumerate(pieces):
        is_heading = (piece.start, piece.end) in headings
        if waiting is not None:
            piece = Piece(waiting.start, piece.end, piece.whole, waiting.tokens + piece.tokens, piece.kind)
            waiting = None
        if is_heading and number + 1 < len(pieces):
            waiting = piece
        else:
            glued.append(piece)
    return glued


def repack_exactly(text, pieces, max_tokens, index, regions, mend: Callable):
    """(start, end, tokens) chunks of pieces that packed on estimates came out over budget.

    Greedy again, counting every step exactly. A single piece still over
    budget stays whole if it must not be cut, and is otherwise mended word by
    word with rag5's `mend`, each fence or table nested in it kept as one span:
    a list that holds a fence, glued to the heading above it, can come out a
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
            spans += mend(text, start, region.start, max_tokens) if start < region.start else []
            spans.append((region.start, region.end))
            start = region.end
        spans += mend(text, start, end, max_tokens) if start < end else []
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


# ---- a section's chunks ---------------------------------------------------------------


def section_chunks(text, section, packed, max_tokens, overlap, index, regions):
    """The Chunks of one section from its `packed` (start, end, tokens): overlapped within the
    section, each with its heading path and kind, the oversize ones flagged."""
    titles = tuple(map(TITLE, section.path))
    block_starts = None  # where the section's blocks start, for kind_of: made if a chunk needs them
    chunks = []
    for number, (start, end, n_tokens) in enumerate(packed):
        if start <= section.start and section.end <= end:  # the whole section, as most chunks are
            kind = kind_of_blocks(section.blocks)
        else:
            block_starts = block_starts or [block.start for block in section.blocks]
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
        reach, end = int(reach), int(end)
        chunks.append(Chunk(text[reach:end], reach, end, int(n_tokens), titles, kind))  # make_chunk, inline
    return chunks


def kind_of(section, block_starts, start, end):
    """"code" or "table" if the blocks in [start, end), headings aside, are all of that kind; else "text".

    `block_starts` lists where the section's blocks start: two binary searches
    find the blocks, so a section of a thousand blocks is not read per chunk.
    """
    first = max(bisect.bisect_right(block_starts, start) - 1, 0)  # the block holding `start`
    last = bisect.bisect_left(block_starts, end)  # after the last block starting before `end`
    return kind_of_blocks(section.blocks[first:last])


def kind_of_blocks(blocks):
    """"code" or "table" if `blocks`, headings aside, are all of that kind; else "text"."""
    kinds = set(map(KIND, blocks))
    kinds.discard("heading")
    return kinds.pop() if len(kinds) == 1 and kinds <= PROTECTED_KINDS else "text"


PROTECTED_KINDS = set(PROTECTED)
KIND = operator.attrgetter("kind")
FIRST = operator.attrgetter("first")  # of a Block: its first line
TOKENS = operator.attrgetter("tokens")
TITLE = operator.itemgetter(1)  # of a (level, title) in a heading path


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


# ---- the report rag6 prints on a real page ---------------------------------------------


def show_structure(page, scan_blocks):
    """Print what `page` holds: its front matter, read as metadata, and its blocks by kind."""
    metadata, end = front_matter(page)
    print(f"\n1. Front matter: {end} characters, read as metadata: {metadata}")
    counts = {}
    for block in scan_blocks(split_lines(page, body_start_of(page))):
        counts[block.kind] = counts.get(block.kind, 0) + 1
    print("2. Blocks: " + ", ".join(f"{count} {kind}" for kind, count in counts.items()))


def compare_on_page(name, page, regions, chunkers, max_tokens, overlap):
    """Print how each of `chunkers` ({name: chunker}) chunks `page`: its chunks, how many of the
    `regions` (fences and tables) they cut, how many are oversize. Returns {name: chunks}."""
    print(f"\n3. {name}, chunks of at most {max_tokens} tokens; {len(regions)} fenced blocks and tables")
    print(f"   {'chunker':<12} {'chunks':>6} {'blocks cut':>11} {'oversize':>9}")
    results = {}
    for chunker_name, chunker in chunkers.items():
        chunks = results[chunker_name] = chunker(page, max_tokens, overlap)
        cut = len(set(cut_regions(chunks, regions)))
        print(f"   {chunker_name:<12} {len(chunks):>6} {cut:>11} {sum(c.oversize for c in chunks):>9}")
    return results


def plot_sizes(chunkers, max_tokens, overlap, filename):
    """Print and plot how many tokens the chunks of each of `chunkers` hold over the whole corpus."""
    pages = corpus_pages()
    sizes = {name: [c.n_tokens for page in pages.values() for c in chunker(page, max_tokens, overlap)]
             for name, chunker in chunkers.items()}
    print(f"\n4. Chunk sizes over the whole corpus ({len(pages)} pages)")
    for name, counts in sizes.items():
        oversize = sum(count > max_tokens for count in counts)
        print(f"   {name:<10} {len(counts):>4} chunks, median {statistics.median(counts):.0f} tokens, "
              f"{oversize} over the budget")
    title = f"rag6: chunk sizes on the Orbit docs, budget {max_tokens} tokens"
    show_figure(plot_chunk_sizes(sizes, max_tokens, title), filename)


def rank_of_answer(chunks, question, answer_start, answer_end):
    """Rank (1 = best) for `question` of the first chunk holding the whole answer, or 'none holds it'."""
    vectors = embed([chunk.embedding_text for chunk in chunks])
    ranked = top_k(embed([question])[0], vectors, len(chunks))
    for place, (row, _) in enumerate(ranked, 1):
        if chunks[row].start <= answer_start and answer_end <= chunks[row].end:
            return place
    return "none holds it"


# ---- the course's chunker for real documents --------------------------------------------
# rag6's student writes a Markdown chunker of their own, for the Markdown of the course's
# pages. Real documents hold much more (setext headings, fences in list items, lazy lines,
# HTML blocks...), so the chunker the course recommends for them (`compare`, the benchmarks)
# is this one: the scanner of labkit/markdown.py with CommonMark's rules, and the packing above.

ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$")  # groups: the #s, the rest of the line
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")
FENCE_OPENING = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # groups: the fence, the rest of the line
FENCE_CLOSING = re.compile(r"^ {0,3}(`+|~+)[ \t]*$")  # group: the fence


def commonmark_heading(text):
    """(level, title) if `text` is an ATX heading such as '## Install ##', else None."""
    match = ATX_HEADING.match(text)
    return (len(match.group(1)), CLOSING_HASHES.sub("", match.group(2)).strip()) if match else None


def commonmark_fence(text):
    """(char, length) if `text` opens a fenced code block (a backtick fence's info string holds
    no backtick), else None."""
    match = FENCE_OPENING.match(text)
    if not match or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.group(1)[0], len(match.group(1))


def commonmark_closes(text, char, length):
    """True if `text` closes a fence opened with `length` times `char`."""
    match = FENCE_CLOSING.match(text)
    return bool(match) and match.group(1)[0] == char and len(match.group(1)) >= length


def gfm_table_start(lines, i):
    """True if lines[i] is a GitHub table's header row, lines[i + 1] its delimiter row."""
    if i + 1 >= len(lines) or "|" not in lines[i].text or indent_of(lines[i].text) >= 4:
        return False
    delimiter = lines[i + 1].text
    return is_delimiter_row(delimiter) and len(table_cells(lines[i].text)) == len(table_cells(delimiter))


COMMONMARK = Recognisers(commonmark_fence, commonmark_closes, commonmark_heading, gfm_table_start)


def scan_blocks(lines):
    """The blocks of `lines`, in order, as the scanner reads them with CommonMark's rules."""
    return Scanner(COMMONMARK).scan(lines)


def path_after(path, level, title):
    """The heading path ((level, title), ...) after a heading of `level` titled `title`."""
    return tuple(entry for entry in path if entry[0] < level) + ((level, title),)


class RobustMarkdown:
    """The course's Markdown chunker for real documents, standing on rag5's seams (`rag5`, a
    loaded lab: its split_at_seams and pack); `markdown_chunks(text, max_tokens, overlap)`."""

    def __init__(self, rag5):
        self.rag5 = rag5

    def read_document(self, text, max_tokens, overlap):
        """`text` tokenized and scanned once, its sections made."""
        index = TokenIndex(text)
        return read_document(text, packing_budget(max_tokens, overlap, index), index, scan_blocks, path_after)

    def chunk_section(self, text, section, max_tokens, index, regions):
        """(start, end, tokens) chunks of one section: its pieces packed greedily, counted exactly."""
        pieces = pieces_of(text, section, max_tokens, index, regions, self.rag5.split_at_seams)
        packed = self.rag5.pack([(piece.start, piece.end) for piece in pieces], [piece.tokens for piece in pieces],
                                max_tokens)
        chunks = []
        for start, end in packed:
            n_tokens = index.count(start, end)
            if n_tokens <= max_tokens:
                chunks.append((start, end, n_tokens))
            else:
                inner = [piece for piece in pieces if start <= piece.start and piece.end <= end]
                chunks += repack_exactly(text, inner, max_tokens, index, regions, self.rag5.mend)
        return chunks

    def section_chunks(self, text, section, max_tokens, overlap, index, regions):
        """The Chunks of one section: packed, then overlapped."""
        packed = self.chunk_section(text, section, packing_budget(max_tokens, overlap, index), index, regions)
        return section_chunks(text, section, packed, max_tokens, overlap, index, regions)

    def markdown_chunks(self, text, max_tokens, overlap=0):
        """Chunks of a Markdown document: sections first, then size; fences and tables never cut."""
        check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
        if not text:
            return []
        document = self.read_document(text, max_tokens, overlap)
        chunks = ([front_matter_chunk(text, document.body_start, max_tokens, document.index)]
                  if document.body_start else [])
        for section in document.sections:
            chunks += self.section_chunks(text, section, max_tokens, overlap, document.index, document.regions)
        return chunks
