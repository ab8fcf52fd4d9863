"""rag4's given ground: the handbook and its buried fact, what the demonstration prints, and the
checks the lab ends with. A curious student may read it; the lab is learnt without it.

The checks judge the student's windows from the text alone (words found by a regex of their own,
tokens by the tokenizer's starts), never by calling a reference: on the handbook, on the course's
tricky texts at small and large sizes, and by the lab's public grading tests, run as the grader
runs them.
"""

from __future__ import annotations

import bisect
import re

from academy_llm import DATASETS, check_chunking, check_lossless, count_tokens, embed, token_starts, top_k
from labkit.cases import Invariants, answer_span, tricky_cases
from labkit.view import view_chunks

HANDBOOK = DATASETS / "orbit-operator-handbook.txt"
FACT = (
    "The server gives a silent satellite exactly 30 seconds, measured from its last "
    "heartbeat, before it marks the satellite as lost and requeues its work."
)
QUESTION = "How long can a satellite stay quiet before the server declares it lost?"
CHUNK_TOKENS, OVERLAP_TOKENS = 128, 32  # at 128 tokens without overlap, a window boundary falls inside FACT


def holds(chunk, start: int, end: int) -> bool:
    """True if `chunk` holds the whole span [start, end) of its document."""
    return chunk.start <= start and end <= chunk.end


def show_fact(page: str, windows, overlap: int) -> list:
    """Print how many of `windows` hold the handbook's FACT whole and how many only part of it,
    and show the two windows where it begins. Returns the windows that hold it whole."""
    start, end = answer_span(page, FACT)
    whole = [chunk for chunk in windows if holds(chunk, start, end)]
    part = [chunk for chunk in windows if chunk.start < end and start < chunk.end and not holds(chunk, start, end)]
    print(f"\n   overlap {overlap:>2}: {len(windows)} windows of at most {CHUNK_TOKENS} tokens; "
          f"{len(whole)} hold the fact whole, {len(part)} only part of it")
    first = next(number for number, chunk in enumerate(windows) if chunk.end > start)
    view_chunks(page, windows, first=max(first - (overlap > 0), 0), limit=2)
    return whole


def top_chunk(chunks, question: str = QUESTION):
    """The chunk most similar to `question`, and its similarity."""
    vectors = embed([chunk.embedding_text for chunk in chunks])
    row, score = top_k(embed([question])[0], vectors, 1)[0]
    return chunks[row], score


# --------------------------------------------------------------------------
# Judges: what a word window and a token window must be, read from the text alone
# --------------------------------------------------------------------------

WORD_SETTINGS = (dict(size=1, overlap=0), dict(size=3, overlap=1), dict(size=4, overlap=3))
TOKEN_SETTINGS = (  # 4 tokens hold any character
    dict(max_tokens=4, overlap=0), dict(max_tokens=4, overlap=3),
    dict(max_tokens=9, overlap=2), dict(max_tokens=64, overlap=16),
)


def check_word_windows(chunks, text, size, overlap):
    """Raise ValueError unless `chunks` are word windows of `text`: every word kept, each
    window 1 to `size` words and ending past the one before, neighbours sharing `overlap`."""
    check_lossless(text, chunks, whitespace_may_be_lost=True)
    words = [match.span() for match in re.finditer(r"\S+", text)]
    if words and not chunks:
        raise ValueError(f"{len(words)} words, but no window")
    for number, chunk in enumerate(chunks, 1):
        held = sum(1 for start, end in words if chunk.start <= start and end <= chunk.end)
        if not 1 <= held <= size:
            raise ValueError(f"window {number} holds {held} words, not 1 to {size}")
    for number, (before, after) in enumerate(zip(chunks, chunks[1:]), 2):
        if after.end <= before.end:
            raise ValueError(f"window {number} adds no word to window {number - 1}")
        shared = sum(1 for start, end in words if after.start <= start and end <= before.end)
        if shared != overlap:
            raise ValueError(f"windows {number - 1} and {number} share {shared} words, not {overlap}")


def check_token_windows(chunks, text, max_tokens, overlap):
    """Raise ValueError unless `chunks` are token windows of `text`: nothing lost, within
    budget, cut at token starts, each as full as the budget allows, neighbours sharing
    `overlap` tokens (fewer only when a window holds no more than that)."""
    check_chunking(text, chunks, max_tokens)
    cuts = token_starts(text) + [len(text)]

    def tokens(start, end):
        """Tokens of the whole text from `start` up to `end`."""
        return max(0, bisect.bisect_left(cuts, end) - bisect.bisect_left(cuts, start))

    for number, chunk in enumerate(chunks, 1):
        at = bisect.bisect_left(cuts, chunk.end)
        if chunk.start not in cuts or at == len(cuts) or cuts[at] != chunk.end:
            raise ValueError(f"window {number} [{chunk.start}, {chunk.end}) cuts inside a token")
        held = tokens(chunk.start, chunk.end)
        if number < len(chunks) and held < max_tokens:  # could it take one more token?
            if count_tokens(text[chunk.start : cuts[at + 1]]) <= max_tokens:
                raise ValueError(f"window {number} stops at {held} tokens, but one more fits")
    for number, (before, after) in enumerate(zip(chunks, chunks[1:]), 2):
        shared = tokens(after.start, before.end)
        expected = min(overlap, tokens(before.start, before.end) - 1)
        if shared != expected:
            raise ValueError(f"windows {number - 1} and {number} share {shared} tokens, not {expected}")


def checks(lab: dict) -> bool:
    """The checks rag4 ends with, on the functions in `lab` (the lab's globals()): PASS or FAIL
    each, then the public grading tests. True when all pass."""
    word_windows, token_windows = lab["word_windows"], lab["token_windows"]
    page = HANDBOOK.read_text(encoding="utf-8")
    start, end = answer_span(page, FACT)
    windows = token_windows(page, CHUNK_TOKENS, OVERLAP_TOKENS)
    print("\nInvariants")
    invariants = Invariants("rag4")
    invariants.check_chunks("word windows: every word kept, every chunk an exact slice",
                            [(page, word_windows(page, 50, 10))], whitespace_may_be_lost=True)
    invariants.check_chunks("token windows: nothing lost, every chunk an exact slice within budget",
                            [(page, windows)], CHUNK_TOKENS)
    invariants.check_cases("word windows of tricky texts: every word kept, each a word further, `overlap` shared",
                           tricky_cases(word_windows, check_word_windows, WORD_SETTINGS))
    invariants.check_cases("token windows of tricky texts: lossless, in budget, full, `overlap` tokens shared",
                           tricky_cases(token_windows, check_token_windows, TOKEN_SETTINGS))
    best, score = top_chunk(windows)
    invariants.check("the top result for the question holds the buried fact", holds(best, start, end),
                     f"top chunk [{best.start}, {best.end}) of {len(windows)} token windows, similarity {score:.3f}")
    whole = {overlap: [c for c in token_windows(page, CHUNK_TOKENS, overlap) if holds(c, start, end)]
             for overlap in (0, OVERLAP_TOKENS)}
    invariants.check("overlap keeps a boundary-straddling fact whole", not whole[0] and bool(whole[OVERLAP_TOKENS]),
                     f"whole in {len(whole[0])} chunk(s) without overlap, {len(whole[OVERLAP_TOKENS])} with")
    # Last, the public grading tests (tests/grading/test_rag4.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    invariants.check_public_tests(lab)
    return invariants.verdict()
