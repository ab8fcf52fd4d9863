"""What a chunker's boundaries do to the text, over the whole corpus, counted by code of its own.

Recall says whether the answers are found; it does not say what a reader of
the chunks gets. Two chunkers can find as many answers while one of them cuts
words, code blocks and tables in two. These counts read the pages alone (words
are runs of non-space; code blocks and tables are found by
labkit.markdown.regions_by_kind, which is not the Markdown scanner the labs
chunk with), so a chunker is never judged by its own reading of the text.
"""

from __future__ import annotations

import bisect
import itertools
import re
import statistics
from dataclasses import dataclass
from typing import Callable

from academy_llm import corpus_pages, count_tokens
from labkit.markdown import regions_by_kind
from labkit.retrieval import KINDS, say
from labkit.uncertainty import NOT_SHOWN, paired_difference

WORD = re.compile(r"\S+")


@dataclass(frozen=True)
class Boundaries:
    """One chunker's boundaries over the corpus: how many chunks, how many of them end inside a
    word, how many code blocks and tables no chunk holds whole, of those that fit in
    the budget (a bigger one must be cut, or kept whole past the budget), and the median tokens
    of a chunk."""

    chunks: int
    inside_word: int
    code_split: int
    code: int
    tables_split: int
    tables: int
    median_tokens: float


def ends_inside(text: str, ends: list[int], spans: list[tuple[int, int]]) -> int:
    """How many of `ends` fall strictly inside one of the sorted, disjoint `spans`."""
    starts = [start for start, _ in spans]
    inside = 0
    for end in ends:
        i = bisect.bisect_right(starts, end) - 1
        inside += i >= 0 and spans[i][0] < end < spans[i][1]
    return inside


def regions_split(chunks, regions: list[tuple[int, int]]) -> int:
    """How many of `regions` no chunk holds whole: a reader never sees that block in one piece.
    (A chunk that only starts inside a block, with overlap, leaves it whole in the chunk before.)"""
    ordered = sorted((chunk.start, chunk.end) for chunk in chunks)
    starts = [start for start, _ in ordered]
    furthest = list(itertools.accumulate((end for _, end in ordered), max))  # the furthest end, by start
    split = 0
    for start, end in regions:
        i = bisect.bisect_right(starts, start) - 1
        split += i < 0 or furthest[i] < end
    return split


def fitting(text: str, regions: list[tuple[int, int]], max_tokens: int) -> list[tuple[int, int]]:
    """The regions of `text` that fit in `max_tokens` on their own: a chunker could keep each whole."""
    return [(start, end) for start, end in regions if count_tokens(text[start:end]) <= max_tokens]


def count_boundaries(chunker: Callable, max_tokens: int) -> Boundaries:
    """`chunker(text)`'s Boundaries over every page of the corpus, its blocks judged at `max_tokens`."""
    chunks = inside = code_split = code = tables_split = tables = 0
    sizes = []
    for text in corpus_pages().values():
        made = chunker(text)
        regions = {kind: fitting(text, found, max_tokens) for kind, found in regions_by_kind(text).items()}
        chunks += len(made)
        sizes += [chunk.n_tokens for chunk in made]
        inside += ends_inside(text, [chunk.end for chunk in made], [m.span() for m in WORD.finditer(text)])
        code_split += regions_split(made, regions["code"])
        tables_split += regions_split(made, regions["table"])
        code += len(regions["code"])
        tables += len(regions["table"])
    return Boundaries(chunks, inside, code_split, code, tables_split, tables, statistics.median(sizes))


def compare_boundaries(step: int, chunkers: dict, ours: str, max_tokens: int,
                       recalls: dict | None = None) -> dict[str, Boundaries]:
    """Print what each of `chunkers` ({name: chunker(text)}) does to the corpus's text, and the
    sentence each count supports for `ours` against the others; given `recalls` (compare_retrieval's
    {name: Recall}), then what `ours` gains, in short. Returns {name: Boundaries}."""
    results = {name: count_boundaries(chunker, max_tokens) for name, chunker in chunkers.items()}
    first = next(iter(results.values()))
    print(f"\n{step}. What the boundaries do, over the whole corpus ({len(corpus_pages())} pages), "
          "counted apart from the chunkers;")
    print(f"   split: no chunk holds it whole, of the code blocks and tables a {max_tokens}-token chunk could hold")
    print(f"   {'chunker':<16} {'chunks':>7} {'end inside a word':>18} {f'code split (of {first.code})':>20} "
          f"{f'tables split (of {first.tables})':>22} {'median tokens':>14}")
    for name, r in results.items():
        print(f"   {name:<16} {r.chunks:>7} {r.inside_word:>18} {r.code_split:>20} {r.tables_split:>22} "
              f"{r.median_tokens:>14.0f}")
    for other in (name for name in results if name != ours):
        say(boundary_sentence(results[ours], results[other], ours, other))
        if recalls:
            say(in_short(results[ours], results[other], recalls[ours], recalls[other], ours, other))
    return results


def boundary_sentence(mine: Boundaries, theirs: Boundaries, ours: str, other: str) -> str:
    """What the counts say of `ours` against `other`: fewer, more or as many of each."""
    parts = [f"{compared(mine.inside_word, theirs.inside_word)} chunks that end inside a word",
             f"{compared(mine.code_split, theirs.code_split)} code blocks no chunk holds whole",
             f"{compared(mine.tables_split, theirs.tables_split)} tables no chunk holds whole"]
    return f"{ours} against {other}: " + "; ".join(parts) + "."


COUNTS = (("chunks that end inside a word", "inside_word"), ("code blocks no chunk holds whole", "code_split"),
          ("tables no chunk holds whole", "tables_split"))


def in_short(mine: Boundaries, theirs: Boundaries, my_recall, their_recall, ours: str, other: str) -> str:
    """What `ours` gains over `other`, as this run shows it: recall overall and by kind, where its
    interval says so, and every count where it cuts less, with the reading cost."""
    recall = paired_difference(their_recall.scores, my_recall.scores)
    found = (f"recall overall, {recall.verdict()} ({recall})" if recall.shown
             else f"recall overall, a difference {NOT_SHOWN} ({recall})")
    for kind in KINDS:
        difference = paired_difference(their_recall.of(kind), my_recall.of(kind)) if my_recall.of(kind) else None
        if difference and difference.shown:
            found += f"; on {kind} questions, {difference.verdict()} ({difference})"
    less = [f"{what} ({getattr(mine, field)} against {getattr(theirs, field)})" for what, field in COUNTS
            if getattr(mine, field) < getattr(theirs, field)]
    read = paired_difference(their_recall.read, my_recall.read)
    cost = (f"and {read.verdict('more', 'fewer')} tokens to read in its top {my_recall.k} "
            f"({read.estimate:+.0f} a question)"
            if read.shown else "and reading cost " + NOT_SHOWN)
    gains = f"fewer {', fewer '.join(less)}" if less else "no fewer cut words or split blocks"
    return f"In short, {ours} against {other}: {found}. What it changes is the chunks: {gains}, {cost}."


def compared(mine: int, theirs: int) -> str:
    """'12 against 40, fewer' and the like: two counts of the same corpus, no sampling in them."""
    word = "fewer" if mine < theirs else "more" if mine > theirs else "as many"
    return f"{mine} against {theirs} ({word})"
