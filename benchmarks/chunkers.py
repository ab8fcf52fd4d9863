"""The chunkers under test: the course's three and four peers, behind one interface; and labs rag10 and rag11.

A `Contender` calls its library as a user would (`run`): that call is what
the speed tables time. `located` turns its output into the course's `Chunk`s,
each checked to be the exact slice of the source it claims: those are what
the quality tables score.

Every peer counts tokens with the course's offline cl100k_base
(`academy_llm.tokenizer()`), so budgets mean the same for all and nothing is
downloaded: the peers' own shortcuts (`from_tiktoken_encoder`, a tokenizer
name, a recipe from a hub) would fetch files at run time.

Labs rag10 and rag11 are no chunkers: they match small units (rag10 by
meaning, rag11 by words and by meaning) and hand a reader spans of their
parents within a token budget. Each takes part as a `Retriever`, scored on
the spans its `search` returns, with the same metrics.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from academy_llm import make_chunk, tokenizer
from labkit import load_lab
from labkit.lessons import rag10 as lesson10  # rag10's given index: its units' size, its memo of indexes

SOLUTIONS = Path(__file__).resolve().parent.parent / "solutions"
rag5 = load_lab("rag5", SOLUTIONS)
rag6 = load_lab("rag6", SOLUTIONS)
rag7 = load_lab("rag7", SOLUTIONS)
rag10 = load_lab("rag10", SOLUTIONS)
rag11 = load_lab("rag11", SOLUTIONS)  # loads the same rag10, so both share rag10's INDEXES
NON_SPACE = re.compile(r"\S|\Z")  # the next non-space character, or the end


@dataclass(frozen=True)
class Contender:
    """One chunker as the benchmark runs it (for speed) and scores it (for quality)."""

    name: str
    course: bool  # one of the course's own chunkers; else a peer
    run: Callable  # run(text, size, overlap, title) -> the library's own output
    located: Callable  # located(text, output) -> [Chunk], each an exact slice
    has_overlap: bool = True  # False: the library has no overlap of its own
    forget: Callable = lambda: None  # empties the library's memo caches: each timed run starts cold
    claimed_starts: Callable | None = None  # the start offsets the library itself reports, to check
    pure_python: bool = True  # False: the library does its work in compiled code


@dataclass
class Scored:
    """One chunker at one size and overlap, as a benchmark scored it; each benchmark adds its metrics."""

    contender: Contender
    size: int
    overlap: int
    chunks: int
    tokens: float  # mean tokens in a chunk's text
    wrong_starts: int  # chunk starts the library reported wrongly


def exact_slices(text, pieces, offsets):
    """Chunks at the offsets a library reports, after checking each is the slice it claims."""
    chunks = []
    for piece, (start, end) in zip(pieces, offsets):
        if text[start:end] != piece:
            raise ValueError(f"a chunk claims [{start}, {end}) but the source differs there")
        chunks.append(make_chunk(text, start, end))
    return chunks


def found_in_order(text, pieces):
    """Chunks for pieces of text whose offsets must be found.

    A piece starts after the previous piece's start (overlap reaches back, but
    never that far) and no later than the first non-space character after the
    previous piece's end (a splitter drops at most the whitespace between two
    chunks). Within that window the last place holding the piece is taken: a
    short piece such as "." can also occur earlier, inside the previous chunk.
    """
    chunks, earliest, latest = [], 0, NON_SPACE.search(text).start()
    for piece in pieces:
        found = text.rfind(piece, earliest, latest + len(piece))
        if found < 0:
            raise ValueError(f"chunk {len(chunks) + 1} is not in the source between {earliest} and {latest}")
        chunks.append(make_chunk(text, found, found + len(piece)))
        earliest, latest = found + 1, NON_SPACE.search(text, found + len(piece)).start()
    return chunks


def chunk_document(contender, text, size, overlap, title):
    """(chunks, how many start offsets the library reported wrongly) for one document."""
    output = contender.run(text, size, overlap, title)
    chunks = contender.located(text, output)
    wrong = 0
    if contender.claimed_starts is not None:
        wrong = sum(claimed != chunk.start for claimed, chunk in zip(contender.claimed_starts(output), chunks))
    return chunks, wrong


# --------------------------------------------------------------------------
# The course's chunkers (labs rag5, rag6, rag7), as the solutions define them
# --------------------------------------------------------------------------


def as_is(text, chunks):
    """The course's chunkers already return located Chunks."""
    return chunks


RECURSIVE = Contender("recursive (rag5)", True, lambda t, s, o, title: rag5.recursive_chunks(t, s, o), as_is)
MARKDOWN = Contender("markdown (rag6)", True, lambda t, s, o, title: rag6.robust_markdown_chunks(t, s, o), as_is)
HEADED = Contender("markdown + header (rag7)", True, lambda t, s, o, title: rag7.header_chunks(t, title, s, o), as_is)
ROWS = Contender("header + table rows (rag7)", True,  # the course's recommended chunker
                 lambda t, s, o, title: rag7.with_table_rows(t, rag7.header_chunks(t, title, s, o), s), as_is)
COURSE = [ROWS, HEADED, RECURSIVE, MARKDOWN]  # the recommended chunker first, tables whole beside it


@dataclass(frozen=True)
class Retriever:
    """A retriever of the course's that hands a reader spans, not chunks (labs rag10, rag11), scored on those spans."""

    name: str  # ends with its lab: "(rag10)"
    search: Callable  # search(pages, questions, budget_tokens, title=..., embedder=...) -> [[(doc_id, start, end)]]
    index: Callable  # index(pages, title, embedder): what search builds once per set of pages
    ranks: str = "by meaning"  # how it ranks rag10's units, for the notes under the tables
    small_to_big: Callable = lambda index: index  # rag10's Index within what `index` builds
    course: bool = True

    @property
    def lab(self):
        """The lab it comes from, for short headers: "rag10"."""
        return self.name[self.name.rindex("(") + 1:-1]

    def sizes(self, pages, title, embedder):
        """(units matched, mean tokens of the parents read) in the index that search builds for `pages`."""
        index = self.small_to_big(self.index(pages, title, embedder))
        return len(index.units), sum(chunk.n_tokens for _, chunk in index.parents) / max(len(index.parents), 1)

    def note(self, units, tokens, kinds_of_unit):
        """The start of the note under a table: its own sizes, the same at every size and overlap."""
        return (f"({self.name}: the same at every size and overlap, its own: {units} units ranked {self.ranks}"
                f" ({kinds_of_unit} of up to {lesson10.UNIT_TOKENS} tokens, and the parents), parents of up to"
                f" {rag10.PARENT_TOKENS} tokens read, {tokens:.0f} on average;")


SMALL_TO_BIG = Retriever("small to big (rag10)", rag10.search, rag10.build_index)
HYBRID = Retriever("hybrid search (rag11)", rag11.search, rag11.build_hybrid,
                   ranks="by words (BM25) and by meaning, fused by reciprocal rank",
                   small_to_big=lambda hybrid: hybrid.index)
RETRIEVERS = [SMALL_TO_BIG, HYBRID]

# --------------------------------------------------------------------------
# LangChain: RecursiveCharacterTextSplitter, counting tiktoken tokens
# --------------------------------------------------------------------------


def langchain_length(text):
    """Tokens counted as `from_tiktoken_encoder` counts them, with the course's offline encoding.

    `from_tiktoken_encoder` itself calls tiktoken.get_encoding, which downloads.
    """
    return len(tokenizer().encode(text, allowed_special=set(), disallowed_special="all"))


@functools.cache
def langchain_splitter(markdown, size, overlap):
    """LangChain's recursive splitter with its default separators, or its Markdown ones."""
    from langchain_text_splitters import Language, RecursiveCharacterTextSplitter

    options = dict(chunk_size=size, chunk_overlap=overlap, length_function=langchain_length, add_start_index=True)
    if markdown:
        return RecursiveCharacterTextSplitter.from_language(Language.MARKDOWN, **options)
    return RecursiveCharacterTextSplitter(**options)


def langchain(name, markdown):
    """A LangChain contender. Its `start_index` searches from a character offset computed
    with the overlap in tokens, so it can be wrong with overlap: chunks are found again
    in order, and the wrong reported starts are counted."""
    return Contender(
        name, False,
        run=lambda t, s, o, title: langchain_splitter(markdown, s, o).create_documents([t]),
        located=lambda t, docs: found_in_order(t, [doc.page_content for doc in docs]),
        claimed_starts=lambda docs: [doc.metadata["start_index"] for doc in docs],
    )


# --------------------------------------------------------------------------
# semchunk: given the tiktoken Encoding itself, as its documentation suggests
# --------------------------------------------------------------------------

_semchunkers = {}


def semchunker(size):
    """semchunk's chunker for `size` tokens, made once: making it scans the whole vocabulary."""
    if size not in _semchunkers:
        import semchunk

        _semchunkers[size] = semchunk.chunkerify(tokenizer(), size)
    return _semchunkers[size]


def semchunk_forget():
    """Empty semchunk's memo of token counts, which would otherwise carry over between runs."""
    for chunker in _semchunkers.values():
        chunker.token_counter.cache_clear()


SEMCHUNK = Contender(
    "semchunk", False,
    run=lambda t, s, o, title: semchunker(s)(t, offsets=True, overlap=o or None),
    located=lambda t, output: exact_slices(t, *output),
    forget=semchunk_forget,
)

# --------------------------------------------------------------------------
# chonkie: RecursiveChunker with its built-in rules (Rust core for splitting and merging)
# --------------------------------------------------------------------------


@functools.cache
def chonkie_chunker(size):
    """chonkie's RecursiveChunker with the rules built into its code.

    RecursiveChunker.from_recipe (e.g. its Markdown recipe) fetches rules from
    a hub at run time, so it is not used.
    """
    from chonkie import RecursiveChunker

    return RecursiveChunker(tokenizer=tokenizer(), chunk_size=size)


def chonkie_forget():
    """Empty chonkie's memo of token counts (one cache shared by all its recursive chunkers)."""
    from chonkie import RecursiveChunker

    RecursiveChunker._estimate_token_count.cache_clear()


CHONKIE = Contender(
    "chonkie recursive", False,
    run=lambda t, s, o, title: chonkie_chunker(s).chunk(t),
    located=lambda t, output: exact_slices(t, [c.text for c in output], [(c.start_index, c.end_index) for c in output]),
    has_overlap=False,
    forget=chonkie_forget,
    pure_python=False,
)

PEERS = [langchain("LangChain recursive", False), langchain("LangChain markdown", True), SEMCHUNK, CHONKIE]
CONTENDERS = COURSE + PEERS


def taking_part(overlap):
    """The contenders that can run with `overlap` tokens of overlap."""
    return [c for c in CONTENDERS if overlap == 0 or c.has_overlap]
