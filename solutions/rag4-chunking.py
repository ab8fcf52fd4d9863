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
    # BEGIN SOLUTION
    # hint 1: Cover every word of the text with windows of `size` words, neighbours sharing
    # hint 1: `overlap` words, so that a fact on a window's edge still lands whole in another
    # hint 1: window. Each window is an exact slice of the text at its true offsets: that is what a
    # hint 1: reader is shown and an answer cites.
    # hint 2: Check the arguments first with the course's shared check, which raises the errors
    # hint 2: every chunker gives. Find each word's start and end offset once (a word is a run of
    # hint 2: non-space characters), then walk that list in steps of size - overlap words. A window
    # hint 2: runs from its first word's start to its last word's end, so the text between words
    # hint 2: stays as it was; the last window may hold fewer words. Stop after the window that
    # hint 2: reaches the last word, or the windows after it would only repeat it. A text with no
    # hint 2: words has no windows.
    # hint 3: Start with check_text_and_window(text, size, overlap) for the errors. Find word spans
    # hint 3: with re.finditer(r"\S+", text): match.start(), match.end(). Window k covers
    # hint 3: words[first : first + size], first = k * (size - overlap); stop after the window that
    # hint 3: holds the last word. Build each with make_chunk.
    check_text_and_window(text, size, overlap)
    words = [(match.start(), match.end()) for match in re.finditer(r"\S+", text)]
    chunks = []
    for first in range(0, len(words), size - overlap):
        last = min(first + size, len(words)) - 1
        chunks.append(make_chunk(text, words[first][0], words[last][1], kind="words"))
        if last == len(words) - 1:
            break
    return chunks
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Cover every character of the text (spaces included) with windows of at most
    # hint 1: max_tokens tokens, neighbours sharing `overlap` tokens. The budget must hold for each
    # hint 1: window counted on its own, as an embedding API will count it, and no window may cut a
    # hint 1: token in half.
    # hint 2: Check the arguments as in word_windows, passing the names that make the messages
    # hint 2: speak of max_tokens and tokens. Tokenize the text once to learn where each token
    # hint 2: starts; a window runs from one token's start to the start of the token after its last
    # hint 2: (or to the end of the text). Take as many tokens as the budget allows, then count the
    # hint 2: window's own text: on its own a slice can need a token more than it had inside the
    # hint 2: whole, so give back one token at a time until it fits. Start the next window
    # hint 2: `overlap` tokens before this one ended, but always after this one's start, so the
    # hint 2: loop ends. One token that alone is over budget (a character of four tokens) cannot be
    # hint 2: cut: raise a ValueError that says which character and what max_tokens would hold it.
    # hint 3: Start with check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens").
    # hint 3: starts = token_starts(text); token i spans starts[i] to starts[i + 1] (or len(text)).
    # hint 3: A window takes tokens first..last (at most max_tokens of them); while
    # hint 3: count_tokens(window text) > max_tokens, drop its last token; if only one token is
    # hint 3: left and it is still over, raise ValueError. The next window starts `overlap` tokens
    # hint 3: before this one ended, and always moves forward.
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    starts = token_starts(text)
    ends = starts[1:] + [len(text)]
    chunks = []
    first = 0
    while first < len(starts):
        last = min(first + max_tokens, len(starts)) - 1
        while count_tokens(text[starts[first] : ends[last]]) > max_tokens:
            if last == first:
                piece = text[starts[first] : ends[first]]
                raise ValueError(
                    f"{piece!r} at offset {starts[first]} needs {count_tokens(piece)} tokens "
                    f"and cannot be cut: no token starts inside it; use max_tokens >= {count_tokens(piece)}"
                )
            last -= 1
        chunks.append(make_chunk(text, starts[first], ends[last], kind="tokens"))
        if last == len(starts) - 1:
            break
        first = max(last + 1 - overlap, first + 1)
    return chunks
    # END SOLUTION


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


# %%
if __name__ == "__main__":
    run_lab(main)
