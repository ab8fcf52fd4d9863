# %% [markdown]
# # rag4: Chunking with sliding windows
#
# A retriever hands a language model *chunks*, not whole documents: pieces
# small enough to be found by a question and pasted into a prompt. Where you
# cut decides what can be found: an answer cut in two is in no chunk whole.
#
# You write the simplest chunkers, windows that slide over the text, and turn
# their two dials. **Overlap** (what neighbours share): without it, a fact on
# a boundary is cut in two, as the demonstration shows. **Size**: a bigger
# window holds more answers whole and hands the reader more tokens; what recall
# that buys on the course's 516 test questions is what the dial measures.
# Run `python labs/rag4-chunking.py`: it stops at your first TODO; once both
# are written, it ends with its checks and exits non-zero if one fails.

# %%
import re

from academy_llm import check_text_and_window, corpus_pages, count_tokens, make_chunk, token_starts
from labkit import run_lab
from labkit.explorer_widget import show_explorer  # given: the chunk explorer, in a notebook
from labkit.lessons import rag4 as lesson  # given: the page and its fact, the demonstration, the checks
from labkit.lessons.dial import dial_report  # given: recall with its interval for each value of a dial
from labkit.notebook import in_notebook

# Given, one sentence each: check_text_and_window(text, size, overlap) raises the errors every
# chunker gives for bad arguments; token_starts(text) lists where each token begins (cl100k_base,
# offline) and count_tokens(text) counts a text on its own; make_chunk(text, start, end, kind=...)
# is the Chunk text[start:end], with its offsets and its tokens.

# %% [markdown]
# ## 1. Word windows
#
# A word is a run of non-space characters. A window holds `size` words; the
# next starts `size - overlap` words later. A chunk is an **exact slice**, from
# its first word's start to its last word's end: never words joined again (the
# spacing is lost), never found with `str.find` (it finds the first "chunk").


# %%
def word_windows(text, size, overlap=0):
    """Split `text` into windows of `size` words, neighbours sharing `overlap` words.

    Returns a list of Chunk (kind "words"). Whitespace between two windows may
    fall outside every chunk; every word is in at least one chunk.
    """
    check_text_and_window(text, size, overlap)
    spans = []
    for found in re.finditer(r"\S+", text):
        spans.append((found.start(), found.end()))
    windows = []
    if len(spans) == 0:
        return windows
    step = size - overlap
    first = 0
    while True:
        last = first + size - 1
        if last > len(spans) - 1:
            last = len(spans) - 1
        windows.append(make_chunk(text, spans[first][0], spans[last][1], kind="words"))
        if last == len(spans) - 1:
            break
        first = first + step
    return windows


# %% [markdown]
# ## 2. Token windows
#
# Embedders count **tokens**. A window runs from one token start to another;
# its budget holds for it **counted on its own**, as an embedding API counts
# it, where a slice can need a token more than inside the whole text: a window
# over budget gives back a token at a time. Tokenize once: the work is linear.


# %%
def token_windows(text, max_tokens, overlap=0):
    """Split `text` into windows of at most `max_tokens` tokens, sharing `overlap` tokens.

    Windows start and end at token starts, cover every character of the text
    (spaces included) and each counts at most `max_tokens` tokens on its own.
    A window takes as many of the text's tokens as fit (giving back its last
    token while its own count is over), and the next starts `overlap` tokens
    before it ended, one token after its start at least; the last window ends
    at the text's end. Bad arguments raise what check_text_and_window raises; a
    piece between two token starts over the budget alone (a character of four
    tokens; '토큰', 5 tokens, no token start inside) is a ValueError too.
    """
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    windows = []
    if text == "":
        return windows
    starts = token_starts(text)
    total = len(starts)
    ends = []
    for i in range(total):
        if i + 1 < total:
            ends.append(starts[i + 1])
        else:
            ends.append(len(text))
    first = 0
    while True:
        last = first + max_tokens - 1
        if last > total - 1:
            last = total - 1
        piece = text[starts[first]:ends[last]]
        counted = count_tokens(piece)
        while counted > max_tokens:
            if last == first:
                raise ValueError(
                    f"the character {piece!r} at offset {starts[first]} alone counts "
                    f"{counted} tokens, more than max_tokens={max_tokens}; it cannot be cut, "
                    f"so use max_tokens of at least {counted}"
                )
            last = last - 1
            piece = text[starts[first]:ends[last]]
            counted = count_tokens(piece)
        windows.append(make_chunk(text, starts[first], ends[last], counted, kind="tokens"))
        if last == total - 1:
            break
        following = last + 1 - overlap
        if following <= first:
            following = first + 1
        first = following
    return windows


# %% [markdown]
# ## 3. The fact on the seam, and the size dial
#
# Orbit's handbook buries one fact: see where it begins in windows of 128
# tokens, without overlap and with 32. Then **change `SIZES` and run again**:
# each size cuts the 44 pages into windows (overlap an eighth of the size) and
# prints recall@5 with its interval, the tokens read, and what the data shows.

# %%
SIZES = (64, 128, 256, 512)  # the dial: window sizes, in tokens

def main():
    page = lesson.HANDBOOK.read_text(encoding="utf-8")
    print(f"1. The handbook: {len(word_windows(page, 100))} windows of 100 words; its fact: {lesson.FACT[:32]!r}...")
    for overlap in (0, lesson.OVERLAP_TOKENS):
        lesson.show_fact(page, token_windows(page, lesson.CHUNK_TOKENS, overlap), overlap)
    print("\n2. The size dial: token windows over the corpus, their size in tokens")
    pages = corpus_pages()
    dial_report("window size",
                {size: {name: token_windows(text, size, size // 8) for name, text in pages.items()} for size in SIZES})
    return lesson.checks(globals())  # the lab's checks, then its public grading tests


# %%
# In a notebook, an explorer: pick a chunker, move its budget and overlap, watch the chunks.
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(lesson.HANDBOOK.read_text(encoding="utf-8"),
                  {"token windows": token_windows, "word windows": word_windows}, lesson.QUESTION, lesson.FACT)


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
