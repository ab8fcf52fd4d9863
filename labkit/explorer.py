"""The chunk explorer's numbers: what one chunker does to one page at one setting.

A notebook of rag4 to rag7 ends with an explorer (labkit/explorer_widget.py draws it,
labkit/explorer.js in the browser): the page, a chunker, `max_tokens` and `overlap`
as controls, the chunks marked on the page, and beside them the counts a student
should watch. This module computes those counts and nothing else, with no widget
in sight, so the tests check them as plain records:

- the chunks, as (start, end, n_tokens) on the page's true offsets;
- how many there are, and a histogram of their tokens against the budget;
- the blocks cut: code, tables and lists that no chunk holds whole, found by
  markdown-it-py (a real CommonMark parser), never by the chunker's own reading;
- the rank of the lab's answer: where the first chunk holding the lab's answer
  span comes when the page's chunks are ranked for the lab's question by the
  course's embedder.

A chunker whose TODO is unfinished gives a record that says so ("finish
TODO(rag5) pack() first") instead of an error, and so does one that raises:
an explorer cell never stops a notebook. A grid of settings, computed ahead,
lets a page exported to HTML keep working controls with no kernel behind it.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Callable, NamedTuple

from academy_llm import embed, top_k

HISTOGRAM_BINS = 8  # bars of the token histogram, each an eighth of the budget
BLOCK_KINDS = ("code", "table", "list")
LINE_END = re.compile(r"\r\n|\r|\n")  # the line ends markdown-it-py reads (it makes them all \n)


class ChunkMark(NamedTuple):
    """One chunk as the explorer draws it: its span on the page and its own token count."""

    start: int
    end: int
    n_tokens: int


class Block(NamedTuple):
    """A block a chunk boundary should not split: its kind ("code", "table", "list") and span."""

    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class Histogram:
    """Chunk sizes in HISTOGRAM_BINS bars: bar i counts chunks of edges[i] < n_tokens <= edges[i + 1]
    (the first bar from 0 itself); `over` counts chunks over the budget (a block kept whole)."""

    edges: tuple[int, ...]
    counts: tuple[int, ...]
    over: int


@dataclass(frozen=True)
class Exploration:
    """What `chunker` made of the page at (max_tokens, overlap), with the counts to watch.

    `message` is empty when the chunker ran; otherwise it says why there are no
    chunks (an unfinished TODO, an error) and every count is empty.
    `answer_rank` is 1 for the best-ranked chunk, None when no chunk holds the
    whole answer; `answer_chunk` is that chunk's index in `chunks`.
    """

    chunker: str
    max_tokens: int
    overlap: int
    chunks: tuple[ChunkMark, ...]
    histogram: Histogram
    blocks: dict[str, int]  # kind -> how many the page holds
    blocks_cut: dict[str, int]  # kind -> how many no chunk holds whole
    answer_rank: int | None
    answer_chunk: int | None
    message: str = ""

    @property
    def count(self) -> int:
        return len(self.chunks)

    def as_json(self) -> dict:
        """The record as plain JSON data, chunks as [start, end, n_tokens] triples."""
        data = asdict(self)
        data["chunks"] = [list(chunk) for chunk in self.chunks]
        data["count"] = self.count
        return data


@dataclass(frozen=True)
class Page:
    """What every setting shares: the page, the lab's question and the span of its answer, and the
    page's blocks (read once)."""

    text: str
    question: str
    answer_start: int
    answer_end: int
    blocks: tuple[Block, ...]


def read_page(text: str, question: str, answer: str) -> Page:
    """The page with its question, its answer found in it (the lab's quote), and its blocks."""
    if not isinstance(text, str):
        raise TypeError(f"the explorer's page must be a str, got {type(text).__name__}")
    start = text.find(answer)
    if not answer or start < 0:
        raise ValueError(f"the explorer's answer {answer[:40]!r} is not in its page; quote the page exactly")
    return Page(text, question, start, start + len(answer), markdown_blocks(text))


def markdown_blocks(text: str) -> tuple[Block, ...]:
    """The page's code blocks (fenced or indented), tables (GitHub's) and top-level lists, as
    markdown-it-py reads them, each from its first line's start to its last line's last non-space.

    markdown-it-py is imported here, when an explorer is drawn, not when a lab is
    loaded: the grader hides it from a lab's worker (it answers rag6's rules).
    """
    from markdown_it import MarkdownIt

    line_starts = [0] + [match.end() for match in LINE_END.finditer(text)]
    kinds = {"fence": "code", "code_block": "code", "table_open": "table",
             "bullet_list_open": "list", "ordered_list_open": "list"}
    blocks = []
    for token in MarkdownIt("commonmark").enable("table").parse(text):
        kind = kinds.get(token.type)
        if kind is None or token.map is None or (kind == "list" and token.level > 0):
            continue
        first, after = token.map
        start = line_starts[first]
        end = line_starts[after] if after < len(line_starts) else len(text)
        blocks.append(Block(kind, start, start + len(text[start:end].rstrip())))
    return tuple(blocks)


def explore(page: Page, name: str, chunker: Callable, max_tokens: int, overlap: int) -> Exploration:
    """The Exploration of `chunker(page.text, max_tokens, overlap)`, or one saying why it has no chunks."""
    try:
        chunks = chunker(page.text, max_tokens, overlap)
    except NotImplementedError as error:
        return _without_chunks(page, name, max_tokens, overlap, unfinished(error, name))
    except Exception as error:  # a student's chunker may fail any way; the cell must go on
        first_line = (str(error).splitlines() or [""])[0][:160]
        return _without_chunks(page, name, max_tokens, overlap,
                               f"{name} raised {type(error).__name__}: {first_line}")
    marks = tuple(ChunkMark(chunk.start, chunk.end, chunk.n_tokens) for chunk in chunks)
    rank, holder = answer_rank(page, chunks)
    return Exploration(name, max_tokens, overlap, marks, histogram(marks, max_tokens),
                       _block_totals(page), blocks_cut(page.blocks, marks), rank, holder)


def unfinished(error: NotImplementedError, name: str) -> str:
    """'finish TODO(rag5) pack() first' for a lab's TODO; another NotImplementedError as an error."""
    said = str(error)
    if said.startswith("TODO("):
        return f"finish {said.split(':')[0]} first"
    return f"{name} raised NotImplementedError: {said[:160]}"


def _without_chunks(page: Page, name: str, max_tokens: int, overlap: int, message: str) -> Exploration:
    return Exploration(name, max_tokens, overlap, (), histogram((), max_tokens), _block_totals(page),
                       dict.fromkeys(BLOCK_KINDS, 0), None, None, message)


def _block_totals(page: Page) -> dict[str, int]:
    return {kind: sum(block.kind == kind for block in page.blocks) for kind in BLOCK_KINDS}


def histogram(chunks, max_tokens: int) -> Histogram:
    """The chunks' token counts in HISTOGRAM_BINS equal bars from 0 to max_tokens, and those over it."""
    edges = tuple(round(max_tokens * i / HISTOGRAM_BINS) for i in range(HISTOGRAM_BINS + 1))
    counts = [0] * HISTOGRAM_BINS
    over = 0
    for chunk in chunks:
        if chunk.n_tokens > max_tokens:
            over += 1
        else:
            bar = next(i for i in range(HISTOGRAM_BINS) if chunk.n_tokens <= edges[i + 1])
            counts[bar] += 1
    return Histogram(edges, tuple(counts), over)


def blocks_cut(blocks, chunks) -> dict[str, int]:
    """{kind: how many of `blocks` no chunk holds whole}: a reader never sees those in one piece."""
    cut = dict.fromkeys(BLOCK_KINDS, 0)
    for block in blocks:
        if not any(chunk.start <= block.start and block.end <= chunk.end for chunk in chunks):
            cut[block.kind] += 1
    return cut


def answer_rank(page: Page, chunks) -> tuple[int | None, int | None]:
    """(rank, index) of the best-ranked chunk holding the whole answer, the page's chunks ranked
    by the course's embedder for the lab's question (each embedded as a lab embeds it: its
    embedding_text, header included); (None, None) when no chunk holds it."""
    if not chunks:
        return None, None
    vectors = embed([chunk.embedding_text for chunk in chunks])
    ranked = top_k(embed([page.question])[0], vectors, len(chunks))
    for rank, (row, _) in enumerate(ranked, 1):
        if chunks[row].start <= page.answer_start and page.answer_end <= chunks[row].end:
            return rank, row
    return None, None


@dataclass(frozen=True)
class Grid:
    """The settings an explorer computes ahead: every chunker at every max_tokens and overlap."""

    chunkers: tuple[str, ...]
    max_tokens: tuple[int, ...]
    overlaps: tuple[int, ...]


def setting_key(name: str, max_tokens: int, overlap: int) -> str:
    """How a setting is looked up in the explorer's JSON (explorer.js builds the same key)."""
    return f"{name}|{max_tokens}|{overlap}"


def explore_grid(page: Page, chunkers: dict[str, Callable], grid: Grid) -> dict[str, Exploration]:
    """{setting_key: Exploration} for every setting of `grid` (an overlap not below max_tokens is left out)."""
    explored = {}
    for name in grid.chunkers:
        for max_tokens in grid.max_tokens:
            for overlap in (value for value in grid.overlaps if value < max_tokens):
                explored[setting_key(name, max_tokens, overlap)] = explore(
                    page, name, chunkers[name], max_tokens, overlap)
    return explored


def page_json(page: Page) -> dict:
    """The page as the front end reads it: its text, question, answer span and blocks."""
    return {"text": page.text, "question": page.question, "answer": [page.answer_start, page.answer_end],
            "blocks": [list(block) for block in page.blocks]}
