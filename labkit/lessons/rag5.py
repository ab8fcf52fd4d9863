"""rag5's given ground: its page and answer, what its demonstration prints (windows against seams on
the page, where the seams fell, chunk sizes over the corpus, recall beside rag4's windows), and the
checks the lab ends with. A curious student may read it; the lab is learnt without it.

The checks judge the student's chunks from the text alone (the tokenizer's starts, clean cuts,
sentence marks), never by calling a reference: on the page, on the course's tricky texts at budgets
from 4 tokens up, with and without overlap, and by the lab's public grading tests.
"""

from __future__ import annotations

import bisect
import re
import statistics

from academy_llm import DATASETS, check_chunking, count_tokens, embed, is_clean_cut, token_starts, top_k
from labkit.cases import WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS, Case, Invariants, answer_span, tricky_cases
from labkit.lessons.dial import say
from labkit.plots import plot_chunk_sizes, show_figure
from labkit.retrieval import recall_of_chunks
from labkit.seams import SEAMS
from labkit.uncertainty import paired_difference

PAGE = DATASETS / "orbit-docs" / "concepts-satellites.md"
FACT = (
    "Certificates are valid for 90 days and renewed automatically over the stream "
    "when a third of that lifetime remains."
)
QUESTION = "When do worker certificates expire and get renewed?"

SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")
WORD = re.compile(r"\S+")


def cuts_inside(text, chunks, pattern):
    """How many chunk ends fall strictly inside a match of `pattern` (a sentence, a word)."""
    matches = [m.span() for m in pattern.finditer(text)]
    starts = [start for start, _ in matches]
    inside = 0
    for chunk in chunks[:-1]:
        i = bisect.bisect_right(starts, chunk.end) - 1
        inside += i >= 0 and matches[i][0] < chunk.end < matches[i][1]
    return inside


def seam_at(text, position):
    """The name of the coarsest seam that ends at `position`, or 'none'."""
    for name, pattern in SEAMS:
        for match in pattern.finditer(text, max(position - 8, 0), position):
            if match.end() == position:
                return name
    return "none"


def compare_on_page(page, chunkings: dict, max_tokens: int) -> None:
    """Print, for each {name: chunks} of the page, how many chunks end mid-sentence and mid-word,
    then after which seam the last one's chunks end."""
    print(f"1. {PAGE.name}: {count_tokens(page)} tokens, chunks of at most {max_tokens} tokens, no overlap")
    print(f"   {'chunker':<18} {'chunks':>6} {'ends mid-sentence':>18} {'ends mid-word':>14}")
    for name, chunks in chunkings.items():
        print(f"   {name:<18} {len(chunks):>6} {cuts_inside(page, chunks, SENTENCE):>18} "
              f"{cuts_inside(page, chunks, WORD):>14}")
    name, chunks = list(chunkings.items())[-1]
    counts = {}
    for chunk in chunks[:-1]:
        counts[seam_at(page, chunk.end)] = counts.get(seam_at(page, chunk.end), 0) + 1
    print(f"   {name} chunks end after a " + ", ".join(f"{seam} ({count})" for seam, count in counts.items()))


def sizes_and_recall(windows: dict, recursive: dict, max_tokens: int, overlap: int) -> None:
    """Chunk sizes over the corpus ({page: chunks} of each, cut at the same budget and overlap),
    plotted; then recall@5 of each with its interval, and recursive minus windows, paired."""
    print(f"\n3. Over the corpus ({len(windows)} pages), both at {max_tokens} tokens, overlap {overlap}")
    sizes = {name: [c.n_tokens for chunks in by_page.values() for c in chunks]
             for name, by_page in (("token windows", windows), ("recursive", recursive))}
    recalls = {"token windows": recall_of_chunks(windows), "recursive": recall_of_chunks(recursive)}
    for name, counts in sizes.items():
        print(f"   {name:<14} {len(counts):>5} chunks, median {statistics.median(counts):.0f} tokens, "
              f"recall@5 {recalls[name].interval().plain()}")
    difference = paired_difference(recalls["token windows"].scores, recalls["recursive"].scores)
    say(f"Recursive minus token windows, question by question: {difference} recall@5, "
        f"{difference.verdict()}.")
    title = f"rag5: chunk sizes on the Orbit docs, budget {max_tokens} tokens, overlap {overlap}"
    show_figure(plot_chunk_sizes(sizes, max_tokens, title), "rag5-chunk-sizes.png")


def what_overlap_repeats(chunks_by_overlap: dict, max_tokens: int) -> None:
    """For each overlap ({overlap: {page: chunks}}), a chunk's median size, the new tokens it brings on
    average (those after the previous chunk's end) and the share of the chunks' text that repeats a
    neighbour's. The budget holds the repeat, so the dial moves two things at once."""
    print(f"   {'overlap':>22} {'median tokens':>14} {'new tokens, mean':>17} {'text repeated':>14}")
    new_by_overlap = {}
    for overlap, by_page in chunks_by_overlap.items():
        chunks = [chunk for page in by_page.values() for chunk in page]
        new = sum(page[0].n_tokens for page in by_page.values() if page) + sum(
            count_tokens(chunk.text[max(0, previous.end - chunk.start):])
            for page in by_page.values() for previous, chunk in zip(page, page[1:]))
        new_by_overlap[overlap] = new / len(chunks)
        repeated = 1 - sum(_covered(page) for page in by_page.values()) / sum(len(c.text) for c in chunks)
        print(f"   {overlap!s:>22} {statistics.median(c.n_tokens for c in chunks):>14.0f} "
              f"{new_by_overlap[overlap]:>17.0f} {repeated:>14.0%}")
    (first, few), (last, many) = list(new_by_overlap.items())[0], list(new_by_overlap.items())[-1]
    say(f"A chunk brings {few:.0f} new tokens on average at an overlap of {first} and {many:.0f} at {last}: "
        f"the overlap is held inside the budget of {max_tokens} tokens, so this dial changes both what "
        "a chunk repeats and how much new text it holds.")


def _covered(chunks) -> int:
    """Characters of the page some chunk holds (the union of their spans)."""
    total, reach = 0, 0
    for chunk in sorted(chunks, key=lambda c: c.start):
        total += max(0, chunk.end - max(reach, chunk.start))
        reach = max(reach, chunk.end)
    return total


def top_chunk(chunks, question: str = QUESTION):
    """The chunk most similar to `question`, and its similarity."""
    row, score = top_k(embed([question])[0], embed([chunk.embedding_text for chunk in chunks]), 1)[0]
    return chunks[row], score


# --------------------------------------------------------------------------
# Judges: what a recursive chunker must give, read from the text alone
# --------------------------------------------------------------------------

RECURSIVE_SETTINGS = (  # 4 tokens hold any character of TRICKY_TEXTS
    dict(max_tokens=4, overlap=0), dict(max_tokens=8, overlap=0), dict(max_tokens=8, overlap=3),
    dict(max_tokens=64, overlap=0), dict(max_tokens=64, overlap=16),
)


def ends_at_sentence_ends(chunks, text, max_tokens, overlap=0):
    """Raise ValueError unless every chunk but the last ends right after a sentence's end mark."""
    for chunk in chunks[:-1]:
        if not chunk.text.rstrip().endswith((".", "!", "?")):
            raise ValueError(f"chunk [{chunk.start}, {chunk.end}) ends {chunk.text[-12:]!r}, not after a sentence")


def seam_cases(recursive_chunks):
    """Sentences of 5 tokens under a budget of 12: two a chunk, each cut where a sentence ends."""
    return [Case("sentences over the budget", recursive_chunks, ("Jobs run on satellites. " * 12, 12),
                 ends_at_sentence_ends),
            Case("sentences ending in ! and ?", recursive_chunks, ("Is it up? Yes it is! " * 10, 12),
                 ends_at_sentence_ends)]


def previous_clean_cut(text, position, floor):
    """The last clean cut before `position` and not before `floor`, or None."""
    return next((cut for cut in range(position - 1, floor - 1, -1) if is_clean_cut(text, cut)), None)


def check_recursive_chunks(chunks, text, max_tokens, overlap):
    """Raise ValueError unless `chunks` are recursive chunks of `text` as promised: lossless,
    in budget, counted truly; without overlap, packed full; with it, each chunk reaching back
    to the earliest word start that shares at most `overlap` tokens (and keeps the budget).
    Packed full is judged where two chunks start and end at clean cuts, so counts add up."""
    check_chunking(text, chunks, max_tokens)
    cuts = token_starts(text)

    def tokens(start, end):
        """Tokens of the whole text from `start` up to `end`."""
        return max(0, bisect.bisect_left(cuts, end) - bisect.bisect_left(cuts, start))

    own_starts = [0] + [chunk.end for chunk in chunks[:-1]]  # where each chunk's new text begins
    for number in range(1, len(chunks)):
        before, after, own = chunks[number - 1], chunks[number], own_starts[number]
        pair = f"chunks {number} and {number + 1}"
        clean = all(is_clean_cut(text, cut) for cut in (before.start, before.end, after.end))
        if overlap == 0 and clean and count_tokens(text[before.start : after.end]) <= max_tokens:
            raise ValueError(f"{pair} would fit together in {max_tokens} tokens: pack them")
        shared = tokens(after.start, own)
        if shared > overlap:
            raise ValueError(f"{pair} share {shared} tokens, over the overlap of {overlap}")
        if after.start < own and not is_clean_cut(text, after.start):
            raise ValueError(f"chunk {number + 1}'s overlap starts inside a word ({after.start})")
        earlier = previous_clean_cut(text, after.start, own_starts[number - 1])
        if (earlier is not None and tokens(earlier, own) <= overlap
                and count_tokens(text[earlier : after.end]) <= max_tokens):
            raise ValueError(f"chunk {number + 1}'s overlap could reach back to a word start at "
                             f"{earlier} and share {tokens(earlier, own)} tokens")


def checks(lab: dict) -> bool:
    """The checks rag5 ends with, on the functions in `lab` (the lab's globals()): PASS or FAIL
    each, then the public grading tests. True when all pass."""
    recursive_chunks, max_tokens, overlap = lab["recursive_chunks"], lab["MAX_TOKENS"], lab["OVERLAP"]
    page = PAGE.read_text(encoding="utf-8")
    fact_start, fact_end = answer_span(page, FACT)
    recursive, overlapped = recursive_chunks(page, max_tokens), recursive_chunks(page, max_tokens, overlap)
    print("\nInvariants")
    invariants = Invariants("rag5")
    invariants.check_chunks("nothing lost, every chunk an exact slice within budget",
                            [(page, recursive), (page, overlapped)], max_tokens)
    mid_word = cuts_inside(page, recursive, WORD)
    invariants.check("no chunk ends inside a word", mid_word == 0, f"{mid_word} of {len(recursive)} chunks end in one")
    top, score = top_chunk(overlapped)
    invariants.check("the top result holds the answer", top.start <= fact_start and fact_end <= top.end,
                     f"answer at [{fact_start}, {fact_end}), top chunk [{top.start}, {top.end}), {score:.3f}")
    invariants.check_cases("sentences cut where they end", seam_cases(recursive_chunks))
    invariants.check_cases(
        "tricky texts: lossless, in budget, packed full, overlap reaching back as far as it may",
        tricky_cases(recursive_chunks, check_recursive_chunks, RECURSIVE_SETTINGS)
        + tricky_cases(recursive_chunks, check_recursive_chunks, WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS))
    # Last, the public grading tests (tests/grading/test_rag5.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    invariants.check_public_tests(lab)
    return invariants.verdict()
