# %% [markdown]
# # rag4: Chunking with sliding windows
#
# A retriever does not hand a language model whole documents. It hands it
# *chunks*: pieces small enough that one of them can be found by a question
# and pasted into a prompt. How you cut decides what can be found.
#
# This lab builds the simplest chunkers, windows that slide over the text, and
# looks at their two dials:
#
# - **size**: how much text a chunk holds. Too big and a single fact is
#   drowned in everything around it; too small and the fact loses the words
#   that say what it is about.
# - **overlap**: how much neighbouring chunks share. Without it, a fact that
#   sits on a boundary is cut in two and no chunk holds it whole.
#
# You write two functions, `word_windows` and `token_windows`. The lab ends
# with its invariants, and exits non-zero if one fails: both kinds of window
# lose nothing and are exact slices, on the handbook and on tricky texts; the
# top result holds a buried fact; overlap keeps a fact on a boundary whole; and
# the lab's public grading tests pass.
#
# Run it with `python labs/rag4-chunking.py`.

# %%
import bisect
import re

from academy_llm import (
    DATASETS, check_chunking, check_lossless, check_text_and_window, count_tokens, embed,
    make_chunk, token_starts, top_k,
)
from labkit import Invariants, answer_span, run_lab, tricky_cases, view_chunks
from labkit.explorer_widget import show_explorer  # given: the chunk explorer (last cell but one)
from labkit.notebook import in_notebook

# %% [markdown]
# ## 1. Word windows
#
# The first chunker counts words. A "word" here is a run of non-space
# characters, so `"v2.6.1,"` is one word. A window holds `size` words; the
# next window starts `size - overlap` words later.
#
# The chunk is an **exact slice** of the document: it runs from the first
# character of its first word to the last character of its last word, and
# `chunk.start`/`chunk.end` say where. We never rebuild the text by joining
# words (that would lose the original spacing and line breaks), and we never
# look a chunk up again with `str.find` (on repeated text such as
# `"chunk chunk chunk"` it returns the wrong place).


# %%
def word_windows(text, size, overlap=0):
    """Split `text` into windows of `size` words, neighbours sharing `overlap` words.

    Returns a list of Chunk (kind "words"). Whitespace between two windows may
    fall outside every chunk; every word is in at least one chunk.
    """
    # TODO(rag4): Cover every word of the text with windows of `size` words, neighbours sharing
    #   `overlap` words, so that a fact on a window's edge still lands whole in another
    #   window. Each window is an exact slice of the text at its true offsets: that is
    #   what a reader is shown and an answer cites.
    #   More help: python labs/rag4-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag4) word_windows(): Cover every word of the text with windows of `size` words, "
        "neighbours sharing `overlap` words, so that a fact on a window's edge still lands whole"
        " in another window. Each window is an exact slice of the text at its true offsets: that"
        " is what a reader is shown and an answer cites. More help: python labs/rag4-chunking.py"
        " --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 2. Token windows
#
# Embedding models and prompts are measured in **tokens**, not words, so a
# budget in tokens is the one that matters. `token_starts(text)` gives the
# character offset where each token begins (from tiktoken's `cl100k_base`,
# loaded offline). A window of `max_tokens` tokens runs from one token start
# to another, so it never cuts a token in half.
#
# One subtlety: the budget must hold for the chunk **counted on its own**
# (that is how an embedding API will count it). Counting a slice on its own
# can give a token or two more than it had inside the whole text, because the
# tokenizer groups characters differently at the new edges. So after choosing
# a window, count it with `count_tokens` and, if it is over, give back one
# token at a time.
#
# Notice that we tokenize the document **once**. Each window is counted once
# more, so the work grows with the length of the text, not with its square.


# %%
def token_windows(text, max_tokens, overlap=0):
    """Split `text` into windows of at most `max_tokens` tokens, sharing `overlap` tokens.

    Windows start and end at token starts, cover every character of the
    text (spaces included) and each counts at most `max_tokens` tokens on its own.
    A window takes as many of the text's tokens as fit (giving back its last
    token while its own count is over), and the next starts `overlap` tokens
    before it ended, one token after its start at least; the last window
    ends at the text's end.
    Bad arguments raise what check_text_and_window raises (TypeError for a budget
    or overlap that is not an int, True included; ValueError for one out of range).
    A piece between two token starts that alone is over the budget (a character
    of four tokens, or '토큰', 5 tokens with no token start inside) cannot be
    cut: that is a ValueError too.
    """
    # TODO(rag4): Cover every character of the text (spaces included) with windows of at most
    #   max_tokens tokens, neighbours sharing `overlap` tokens. The budget must hold for
    #   each window counted on its own, as an embedding API will count it, and no window
    #   may cut a token in half.
    #   More help: python labs/rag4-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag4) token_windows(): Cover every character of the text (spaces included) with "
        "windows of at most max_tokens tokens, neighbours sharing `overlap` tokens. The budget "
        "must hold for each window counted on its own, as an embedding API will count it, and no"
        " window may cut a token in half. More help: python labs/rag4-chunking.py --hint 2, or "
        "show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 3. Try it
#
# The document is an operator's handbook for Orbit, the fictional job
# scheduler this course's datasets describe. Buried in the middle is one fact
# a user will ask about.
#
# Steps 3 and 4 show windows on the handbook's own text with `view_chunks`:
# each window in its own colour, opened by a label with its number, span and
# token count, and the text two windows share marked apart (green in colour,
# in «guillemets» in plain text). Look at where each window begins and ends.

# %%
HANDBOOK = DATASETS / "orbit-operator-handbook.txt"
FACT = (
    "The server gives a silent satellite exactly 30 seconds, measured from its last "
    "heartbeat, before it marks the satellite as lost and requeues its work."
)
QUESTION = "How long can a satellite stay quiet before the server declares it lost?"

# Window sizes used below. At 128 tokens with no overlap, a window boundary
# falls inside FACT (the lab checks it), which is what step 6 needs.
CHUNK_TOKENS = 128
OVERLAP_TOKENS = 32


def holds(chunk, start, end):
    """True if `chunk` holds the whole span [start, end) of its document."""
    return chunk.start <= start and end <= chunk.end


def rank_chunks(question, chunks, k=3):
    """The k chunks most similar to `question`, as (chunk, score), best first."""
    vectors = embed([chunk.embedding_text for chunk in chunks])
    question_vector = embed([question])[0]
    return [(chunks[row], score) for row, score in top_k(question_vector, vectors, k)]


def step_why_chunk(document, fact_start, fact_end):
    """Compare one big chunk (the page) with small ones: which matches the question best?"""
    print("\n1. Why chunk at all?")
    print(f"   The handbook has {len(document.split())} words, {count_tokens(document)} tokens.")
    print(f"   Question: {QUESTION!r}")
    page_score = rank_chunks(QUESTION, [make_chunk(document, 0, len(document))], k=1)[0][1]
    print(f"   Whole page as one chunk: similarity {page_score:.3f}")
    windows = word_windows(document, 80, 20)
    print(f"   {len(windows)} windows of 80 words, the best three:")
    for place, (chunk, score) in enumerate(rank_chunks(QUESTION, windows, k=3), 1):
        mark = "holds the fact" if holds(chunk, fact_start, fact_end) else ""
        print(f"     {place}. [{chunk.start:>5}, {chunk.end:>5})  {score:.3f}  {mark}")
    print("   A small chunk that holds the fact matches better than the page that")
    print("   holds it too: the rest of the page pulls the page's vector elsewhere.")


def step_size_dial(document, fact_start, fact_end):
    """Show how the rank of the fact's chunk changes with window size."""
    print("\n2. The size dial (word windows, overlap 25%)")
    print(f"   {'size':>5} {'chunks':>7} {'rank of the best chunk holding the fact':>40}")
    for size in (20, 40, 80, 160, 320):
        chunks = word_windows(document, size, size // 4)
        ranked = rank_chunks(QUESTION, chunks, k=len(chunks))
        ranks = [r for r, (c, _) in enumerate(ranked, 1) if holds(c, fact_start, fact_end)]
        print(f"   {size:>5} {len(chunks):>7} {ranks[0] if ranks else 'none holds it whole':>40}")


def step_show_windows(document):
    """Show the first token windows on the text, their overlap visible."""
    print(f"\n3. The first token windows of {CHUNK_TOKENS} tokens, overlap {OVERLAP_TOKENS}, on the text")
    view_chunks(document, token_windows(document, CHUNK_TOKENS, OVERLAP_TOKENS), limit=3)


def step_overlap(document, fact_start, fact_end):
    """Does any window hold the fact whole, with and without overlap?"""
    print("\n4. The overlap dial")
    whole = {}
    for overlap in (0, OVERLAP_TOKENS):
        windows = token_windows(document, CHUNK_TOKENS, overlap)
        whole[overlap] = [c for c in windows if holds(c, fact_start, fact_end)]
        cut = [c for c in windows if c.start < fact_start < c.end or c.start < fact_end < c.end]
        print(
            f"   overlap {overlap:>2}: {len(windows)} windows; "
            f"{len(whole[overlap])} hold the fact whole, {len(cut)} hold part of it"
        )
    step_see_the_cut(document, fact_start)
    return whole


def step_see_the_cut(document, fact_start):
    """Show the windows without overlap where the fact begins: where does the next one start?"""
    windows = token_windows(document, CHUNK_TOKENS, 0)
    first = next(number for number, chunk in enumerate(windows) if chunk.end > fact_start)
    print(f"   The fact begins {FACT[:32]!r}... Here are its windows without overlap:")
    view_chunks(document, windows, first=first, limit=2)


# %% [markdown]
# ## 4. Tricky texts
#
# The handbook is tidy English: short words, one kind of line end. Real
# documents hold URLs, emoji, Windows line ends (`\r\n`), empty pages. So the
# lab ends by calling both functions on the course's `TRICKY_TEXTS`, from the
# empty text up, at small and large sizes, with and without overlap. Each
# result is judged from the text alone: the checks below never call your
# code. The first input that goes wrong is shown with the call that
# reproduces it; paste it into a Python prompt and look at what comes back.


# %%
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
            raise ValueError(f"windows {number - 1} and {number} share {shared} words, "
                             f"not {overlap}")


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
            raise ValueError(f"windows {number - 1} and {number} share {shared} tokens, "
                             f"not {expected}")


def main():
    document = HANDBOOK.read_text(encoding="utf-8")
    fact_start, fact_end = answer_span(document, FACT)

    step_why_chunk(document, fact_start, fact_end)
    step_size_dial(document, fact_start, fact_end)
    step_show_windows(document)
    whole = step_overlap(document, fact_start, fact_end)
    windows = token_windows(document, CHUNK_TOKENS, OVERLAP_TOKENS)
    top_chunk, top_score = rank_chunks(QUESTION, windows, k=1)[0]

    print("\nInvariants")
    checks = Invariants("rag4")
    checks.check_chunks(
        "word windows: every word kept, every chunk an exact slice",
        [(document, word_windows(document, 50, 10))],
        whitespace_may_be_lost=True,
    )
    checks.check_chunks(
        "token windows: nothing lost, every chunk an exact slice within budget",
        [(document, windows)],
        CHUNK_TOKENS,
    )
    checks.check_cases(
        "word windows of tricky texts: every word kept, each a word further, `overlap` shared",
        tricky_cases(word_windows, check_word_windows, WORD_SETTINGS),
    )
    checks.check_cases(
        "token windows of tricky texts: lossless, in budget, full, `overlap` tokens shared",
        tricky_cases(token_windows, check_token_windows, TOKEN_SETTINGS),
    )
    checks.check(
        "the top result for the question holds the buried fact",
        holds(top_chunk, fact_start, fact_end),
        f"top chunk [{top_chunk.start}, {top_chunk.end}) of {len(windows)} token windows, "
        f"similarity {top_score:.3f}",
    )
    checks.check(
        "overlap keeps a boundary-straddling fact whole",
        not whole[0] and bool(whole[OVERLAP_TOKENS]),
        f"whole in {len(whole[0])} chunk(s) without overlap, "
        f"{len(whole[OVERLAP_TOKENS])} with",
    )
    # Last, the public grading tests (tests/grading/test_rag4.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


# %% [markdown]
# ## Explore
#
# In a notebook, the cell below draws an explorer: choose a chunker, move
# `max_tokens` and `overlap`, and the page is chunked again and marked at the
# chunks' true offsets (text two chunks share in green). Beside it are the
# counts to watch: how many chunks, the tokens each holds against the budget,
# the code blocks, tables and lists no chunk holds whole (read by a real
# Markdown parser, not by the chunker), and the rank of the chunk holding the
# lab's answer for its question. The page is the handbook; word windows read
# `max_tokens` as a number of words. Until a TODO is done, it says which one
# to finish first. Run as a script, the lab skips it.

# %%
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(HANDBOOK.read_text(encoding="utf-8"),
                  {"token windows": token_windows, "word windows": word_windows}, QUESTION, FACT)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag4-chunking.py --hint 2` runs the lab and shows hint 2
# for the TODO where it stops; `--hint 3` shows the next level, and `--hint 2
# word_windows` one function's. In a notebook, run the cells above, then
# `show_hint(2)` or `show_hint(2, "word_windows")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag4")  # labs/hints/rag4.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
