# %% [markdown]
# # rag5: Recursive chunking
#
# rag4's windows cut wherever the count runs out: in the middle of a sentence,
# a word, a number. A reader (and an embedder) then gets half a thought.
#
# A recursive splitter cuts where the *text* has seams. It tries the coarsest
# seam first and only goes finer where a piece is still too big:
#
# 1. blank lines (between paragraphs),
# 2. line breaks,
# 3. sentence ends,
# 4. spaces (between words),
# 5. word starts (for a word that fits only without the spaces before it),
# 6. and only for a run with no seam at all (a 5,000-character URL), rag4's
#    token windows.
#
# Then it **packs** neighbouring pieces back together, greedily, up to the
# budget, so chunks are as full as the seams allow.
#
# You write four functions: `split_at_seams` (the recursion), `pack` (the
# greedy packing), `add_overlap`, and `recursive_chunks`, which puts them
# together (and is where the lab first stops, since it calls the others).

# %%
import bisect
import re
import statistics
import time


from academy_llm import (
    DATASETS, check_chunking, check_text_and_window, corpus_pages,
    count_tokens, embed, is_clean_cut, make_chunk, token_positions, token_starts, top_k,
)
from labkit import (
    WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS, Case, Invariants, answer_span, load_lab, plot_chunk_sizes,
    run_lab, show_figure, tricky_cases, view_chunks,
)
from labkit.boundaries import compare_boundaries  # given: words, code and tables cut, counted apart
from labkit.retrieval import compare_retrieval  # given: recall@5 by kind of question over the corpus
from labkit.token_index import LineSeam, TokenIndex  # given: one tokenization, counts of any slice (section 1)
from labkit.explorer_widget import show_explorer  # given: the chunk explorer (last cell but one)
from labkit.notebook import in_notebook

rag4 = load_lab("rag4")  # token_windows, for runs with no seam at all


# The seams, coarsest first; a cut goes where a match ends. Line breaks stay
# with the text before them, spaces go with the word after them: "para.\n\n|Next",
# "end.| Next", "word| next". Those are the places where the tokenizer itself
# separates two pieces (section 1 says why that matters). A sentence end is
# matched only from the first mark of a run: tried from inside a run of a
# million dots, the pattern would retry the rest of the run at every dot,
# which is quadratic.
SEAMS = [
    ("blank line", LineSeam(r"(?:\r\n|\r|\n)(?:[^\S\r\n]*(?:\r\n|\r|\n))+", r"\n(?:[^\S\r\n]*\n)+")),
    ("line break", LineSeam(r"\r\n|\r|\n", r"\n")),
    ("sentence end", re.compile(r"(?<![.!?])[.!?]+[\"')\]]*(?=[^\S\r\n])")),
    ("space", re.compile(r"(?<=\S)(?=[^\S\r\n])")),
    ("word start", re.compile(r"(?<=\s)(?=\S)")),
]

# %% [markdown]
# ## 1. Counting tokens once
#
# The splitter asks "how many tokens is this piece?" thousands of times.
# Calling `count_tokens` on every candidate slice would tokenize a page again
# and again, and packing would grow with the *square* of its length: the
# classic slowness of splitter libraries. So the page is tokenized **once**,
# and a slice is counted by the token starts inside it (the given
# `TokenIndex(text)`, in `labkit/token_index.py`: `index.estimate(start,
# end)`, `index.count(start, end)`). That count is the slice's own when both
# ends fall between two of the tokenizer's pieces, and `is_clean_cut` knows two
# such places: just before a space that follows a word, and just after a line
# break that a word follows. Our seams cut there. Try it: in `"Hello world"`,
# `count_tokens("Hello")` + `count_tokens(" world")` is 2, as in the whole;
# cut after the space instead and `"Hello "` + `"world"` is 3.


# %% [markdown]
# ## 2. Split at the coarsest seam that works
#
# `split_at_seams(text, start, end, ...)` returns a list of `(start, end)` spans
# that tile `text[start:end]` exactly: no gap, no overlap, in order. A span
# within budget is returned as it is. A span over budget is cut after every
# match of the current seam; if the seam does not occur, the next finer seam is
# tried. Pieces still over budget are split again with the finer seams.


# %%
def split_at_seams(text, start, end, max_tokens, index, level=0):
    """Spans tiling text[start:end], each within max_tokens where seams allow."""
    # TODO(rag5): Cut text[start:end] into spans that tile it exactly and each fit in max_tokens,
    #   cutting at the coarsest kind of seam that works (a paragraph break before a line
    #   break, a line break before a sentence end, and so on), so that pieces end where
    #   the text itself breaks.
    #   More help: python labs/rag5-recursive-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag5) split_at_seams(): Cut text[start:end] into spans that tile it exactly and "
        "each fit in max_tokens, cutting at the coarsest kind of seam that works (a paragraph "
        "break before a line break, a line break before a sentence end, and so on), so that "
        "pieces end where the text itself breaks. More help: python labs/rag5-recursive-"
        "chunking.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 3. Pack neighbours up to the budget
#
# Splitting alone leaves many small pieces (a one-line paragraph, a short
# sentence). `pack` merges neighbouring spans greedily: keep adding the next
# span while the chunk stays within `max_tokens`, then start a new chunk.
# Because chunks are made of whole spans, every chunk still starts and ends at
# a seam. Estimates add up (`TokenIndex.estimates` says why), so a running
# total is all the counting packing needs.


# %%
def pack(spans, sizes, max_tokens):
    """Merge neighbouring spans greedily into (start, end) chunks of at most max_tokens.

    `sizes` holds each span's tokens (index.estimates(spans)).
    """
    # TODO(rag5): Merge neighbouring spans into as few chunks as possible, in order, each within
    #   max_tokens, so that chunks are as full as the seams allow instead of one small
    #   piece each.
    #   More help: python labs/rag5-recursive-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag5) pack(): Merge neighbouring spans into as few chunks as possible, in order, "
        "each within max_tokens, so that chunks are as full as the seams allow instead of one "
        "small piece each. More help: python labs/rag5-recursive-chunking.py --hint 2, or "
        "show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 4. Overlap that starts at a word
#
# Overlap is added *after* packing: each chunk but the first reaches back into
# the chunk before it by up to `overlap` tokens. So that the overlap is
# readable, it starts at a word (at the space before it, or at the start of a
# line), never in the middle of one: at a clean cut, so it is counted exactly
# too. To keep every chunk within budget, packing aims at
# `max_tokens - overlap`, leaving room for the overlap.


# %%
def next_clean_cut(text, position, limit):
    """The first clean cut (a word's space, a line's start) from `position` on, but never
    past `limit`: `limit` itself when there is none before it, or `position` is past it."""
    while position < limit and not is_clean_cut(text, position):
        position += 1
    return min(position, limit)


def add_overlap(text, chunks, overlap, index):
    """Move each chunk's start back by up to `overlap` tokens, to a word start.

    The tokens are the text's own (index.starts): back `overlap` of them from
    the chunk's start, then forward to the first clean cut (next_clean_cut),
    so that an overlap never begins inside a word. Never before the previous
    chunk's start as `chunks` gives it (its start before any overlap), so that
    no chunk reaches past its neighbour. The first chunk keeps its start.
    """
    # TODO(rag5): Let each chunk after the first reach back into the one before by up to `overlap`
    #   tokens, so that a fact on a boundary is whole in one of them, and make that
    #   overlap begin at a word, where it reads well and is counted exactly.
    #   More help: python labs/rag5-recursive-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag5) add_overlap(): Let each chunk after the first reach back into the one before"
        " by up to `overlap` tokens, so that a fact on a boundary is whole in one of them, and "
        "make that overlap begin at a word, where it reads well and is counted exactly. More "
        "help: python labs/rag5-recursive-chunking.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 5. Put it together
#
# `recursive_chunks` splits, packs and adds overlap. Then it takes each
# chunk's exact count from the index (`index.counts`, all chunks at once):
# linear in the text, with no second tokenization. In the rare case a chunk with an unclean end is over
# budget by a token, its overlap gives back words until it fits, or `mend`
# re-packs just that stretch word by word with exact counts.


# %%
def recursive_chunks(text, max_tokens, overlap=0):
    """Chunks of at most max_tokens tokens, cut at the coarsest seams, sharing ~overlap tokens."""
    # TODO(rag5): Turn a text into chunks of at most max_tokens tokens that end at the coarsest
    #   seams the budget allows and share about `overlap` tokens, each with its exact
    #   token count: whole thoughts within the embedder's limit, from a text tokenized
    #   only once.
    #   More help: python labs/rag5-recursive-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag5) recursive_chunks(): Turn a text into chunks of at most max_tokens tokens "
        "that end at the coarsest seams the budget allows and share about `overlap` tokens, each"
        " with its exact token count: whole thoughts within the embedder's limit, from a text "
        "tokenized only once. More help: python labs/rag5-recursive-chunking.py --hint 2, or "
        "show_hint(2) in a notebook."
    )


def packing_budget(max_tokens, overlap, index):
    """Tokens a chunk may hold before overlap is added: room is left for the overlap, but
    never less than the text's widest uncut piece needs (index.min_budget, a lone emoji
    say; max_tokens at most), or that piece could not be placed. Read from the text, not
    assumed: '토큰' needs 5 tokens, though no character needs more than 4."""
    room = max_tokens - overlap
    return room if overlap <= 0 else max(room, min(max_tokens, index.min_budget))


def word_spans(text, start, end):
    """Spans tiling text[start:end], each a word with the spaces before it."""
    cuts = [m.end() for m in dict(SEAMS)["space"].finditer(text, start, end) if start < m.end() < end]
    return list(zip([start] + cuts, cuts + [end]))


def mend(text, start, end, max_tokens):
    """Re-pack text[start:end] word by word, counting exactly (slow, so used only when needed)."""
    chunks = []
    for word_start, word_end in word_spans(text, start, end):
        if chunks and count_tokens(text[chunks[-1][0] : word_end]) <= max_tokens:
            chunks[-1] = (chunks[-1][0], word_end)
        elif count_tokens(text[word_start:word_end]) <= max_tokens:
            chunks.append((word_start, word_end))
        else:  # a single word over budget: exact token windows
            windows = rag4.token_windows(text[word_start:word_end], max_tokens)
            chunks += [(word_start + w.start, word_start + w.end) for w in windows]
    return chunks


def fit_over_budget(text, start, packed_start, end, max_tokens, index):
    """Chunks for text[start:end], which counted over max_tokens on its own.

    First the overlap gives back words until the chunk fits. If it is over
    even without overlap (the estimate missed by a token at an unclean end),
    mend() re-packs it word by word with exact counts.
    """
    while start < packed_start:
        start = next_clean_cut(text, start + 1, packed_start)
        n_tokens = index.count(start, end)
        if n_tokens <= max_tokens:
            return [make_chunk(text, start, end, n_tokens, kind="recursive")]
    return [make_chunk(text, s, e, kind="recursive") for s, e in mend(text, packed_start, end, max_tokens)]


# %% [markdown]
# ## 6. Windows against seams, on a real page
#
# The page is "Concepts: Satellites" from the Orbit docs. We chunk it both
# ways at the same budget and count the chunk ends that land in the middle of
# a sentence or of a word: each one is a thought cut in two.
#
# Cutting at seams has a price: a chunk stops at the last seam that fits, so
# it is often shorter than the budget. A plot of the chunk sizes over the
# whole corpus shows how much shorter (a PNG file beside your run, or inline in
# a notebook). Then `view_chunks` shows recursive chunks on the page itself:
# each chunk ends at a seam, and its overlap begins at a word.
#
# Do seams find more answers? One page cannot say. Step 7 asks every test
# question of the corpus, with both chunkers at the same budget, and prints
# each recall with its 95% interval (the mean plus or minus 1.96 standard errors,
# given in `labkit/uncertainty.py`; rag8 builds a better one), then the difference question by question. Where
# that interval holds 0, the lab says the data does not show a difference,
# whichever mean is higher. Step 8 counts what the two do to the text itself,
# with code of its own: chunks that end inside a word, code blocks and tables
# that no chunk holds whole, the tokens of a chunk. Those are what a reader
# (or a model) is handed, whether or not recall moves. The lab's last lines
# say, from this run, which of them recursive chunking changes.

# %%
PAGE = DATASETS / "orbit-docs" / "concepts-satellites.md"
FACT = (
    "Certificates are valid for 90 days and renewed automatically over the stream "
    "when a third of that lifetime remains."
)
QUESTION = "When do worker certificates expire and get renewed?"
MAX_TOKENS = 128
OVERLAP = 16

SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


def cuts_inside(text, chunks, pattern):
    """How many chunk ends fall strictly inside a match of `pattern` (a sentence, a word)."""
    inside = 0
    matches = [m.span() for m in pattern.finditer(text)]
    starts = [start for start, _ in matches]
    for chunk in chunks[:-1]:
        i = bisect.bisect_right(starts, chunk.end) - 1
        if i >= 0 and matches[i][0] < chunk.end < matches[i][1]:
            inside += 1
    return inside


def step_compare(page):
    """Fixed token windows against recursive chunks at the same budget."""
    print(f"\n1. {PAGE.name}: {count_tokens(page)} tokens, chunks of at most {MAX_TOKENS} tokens")
    print(f"   {'chunker':<18} {'chunks':>6} {'ends mid-sentence':>18} {'ends mid-word':>14}")
    results = {}
    recursive = recursive_chunks(page, MAX_TOKENS)
    windows = rag4.token_windows(page, MAX_TOKENS)
    for name, chunks in (("token windows", windows), ("recursive", recursive)):
        mid_sentence = cuts_inside(page, chunks, SENTENCE)
        mid_word = cuts_inside(page, chunks, re.compile(r"\S+"))
        results[name] = (chunks, mid_word)
        print(f"   {name:<18} {len(chunks):>6} {mid_sentence:>18} {mid_word:>14}")
    return results


def step_sizes():
    """Plot how many tokens the chunks hold, windows against seams, over the whole corpus."""
    pages = corpus_pages()
    sizes = {
        "token windows": [c.n_tokens for page in pages.values() for c in rag4.token_windows(page, MAX_TOKENS)],
        "recursive": [c.n_tokens for page in pages.values() for c in recursive_chunks(page, MAX_TOKENS)],
    }
    print(f"\n2. Chunk sizes over the whole corpus ({len(pages)} pages)")
    for name, counts in sizes.items():
        print(f"   {name:<14} {len(counts):>5} chunks, median {statistics.median(counts):.0f} tokens")
    title = f"rag5: chunk sizes on the Orbit docs, budget {MAX_TOKENS} tokens"
    show_figure(plot_chunk_sizes(sizes, MAX_TOKENS, title), "rag5-chunk-sizes.png")


def seam_at(text, position):
    """The name of the coarsest seam that ends at `position`, or 'none'."""
    for name, pattern in SEAMS:
        for match in pattern.finditer(text, max(position - 8, 0), position):
            if match.end() == position:
                return name
    return "none"


def step_seams(page, chunks):
    """Which seams did the recursive splitter cut at?"""
    print("\n3. Where the recursive chunks end")
    counts = {}
    for chunk in chunks[:-1]:
        name = seam_at(page, chunk.end)
        counts[name] = counts.get(name, 0) + 1
    for name, count in counts.items():
        print(f"   after a {name:<12} {count:>3} chunk(s)")


def step_overlap(page):
    """Show recursive chunks with overlap on the page: each reaches back to a word start."""
    print(f"\n4. Recursive chunks with {OVERLAP} tokens of overlap, on the page")
    chunks = recursive_chunks(page, MAX_TOKENS, OVERLAP)
    view_chunks(page, chunks, limit=3)
    return chunks


def step_linear(page):
    """Time the chunker on the page repeated 1, 4 and 16 times, and how the time per MB moves.

    Linear means the time per MB does not grow with the text: a quadratic chunker, one that
    went back over the text for every chunk, would take 16 times as long per MB on 16 copies.
    A linear one may read a little under 1, the fixed cost of a call spread over more text, or
    a little over on a busy machine, where a longer run is interrupted more often: measured on
    2 cores, 0.7 to 0.8 with twice as much work as cores, 1.4 to 2.6 with five times as much.
    Every row is timed alike, best of TIMING_RUNS, each run from a cold start: the course
    keeps the last few tokenizations (academy_llm.token_positions), and the page alone was
    chunked above, so its row would otherwise skip the tokenizing the other rows pay for.
    """
    print(f"\n5. Linear in the text: one tokenization, counts read from it (best of {TIMING_RUNS})")
    per_mb = []
    for copies in (1, 4, 16):
        text = page * copies
        seconds = min(cold_time(text) for _ in range(TIMING_RUNS))
        per_mb.append(seconds / (len(text) / 1e6))
        print(f"   {len(text) / 1000:>6.0f} KB  {seconds * 1000:>6.1f} ms  ({per_mb[-1] * 1000:.0f} ms per MB)")
    print(f"   time per MB on 16 copies: {per_mb[-1] / per_mb[0]:.2f} times that on one "
          f"(linear: about 1; quadratic: about 16)")


TIMING_RUNS = 5


def cold_time(text):
    """Seconds recursive_chunks takes on `text`, its tokenization not kept from an earlier call."""
    token_positions.cache_clear()
    began = time.perf_counter()
    recursive_chunks(text, MAX_TOKENS, OVERLAP)
    return time.perf_counter() - began


# %% [markdown]
# ## 7. Tricky texts
#
# The page is tidy Markdown. The lab ends by calling `recursive_chunks` on the
# course's `TRICKY_TEXTS` (an empty text, lone `\r` line ends, a URL, emoji
# made of several characters, ...) at budgets from 4 tokens up, with and
# without overlap, and on Korean, where two characters with no token start
# between them need 5 tokens (the least budget is read from the text: the
# given packing_budget asks the index), and judging each result from the text alone: the checks
# below never call your code. The first input that goes wrong is shown with
# the call that reproduces it.


# %%
RECURSIVE_SETTINGS = (  # 4 tokens hold any character of TRICKY_TEXTS
    dict(max_tokens=4, overlap=0), dict(max_tokens=8, overlap=0), dict(max_tokens=8, overlap=3),
    dict(max_tokens=64, overlap=0), dict(max_tokens=64, overlap=16),
)


def ends_at_sentence_ends(chunks, text, max_tokens, overlap=0):
    """Raise ValueError unless every chunk but the last ends right after a sentence's end mark."""
    for chunk in chunks[:-1]:
        if not chunk.text.rstrip().endswith((".", "!", "?")):
            raise ValueError(f"chunk [{chunk.start}, {chunk.end}) ends {chunk.text[-12:]!r}, not after a sentence")


# Sentences of 5 tokens under a budget of 12: two a chunk, each cut where a sentence ends (after its mark).
SEAM_CASES = [
    Case("sentences over the budget", recursive_chunks, ("Jobs run on satellites. " * 12, 12),
         ends_at_sentence_ends),
    Case("sentences ending in ! and ?", recursive_chunks, ("Is it up? Yes it is! " * 10, 12),
         ends_at_sentence_ends),
]


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


def main():
    page = PAGE.read_text(encoding="utf-8")
    fact_start, fact_end = answer_span(page, FACT)

    results = step_compare(page)
    recursive, mid_word = results["recursive"]
    step_sizes()
    step_seams(page, recursive)
    overlapped = step_overlap(page)
    step_linear(page)

    print("\n6. Retrieval")
    vectors = embed([chunk.embedding_text for chunk in overlapped])
    row, score = top_k(embed([QUESTION])[0], vectors, 1)[0]
    top = overlapped[row]
    print(f"   {QUESTION!r}\n   top chunk [{top.start}, {top.end}), similarity {score:.3f}")
    # One question proves little: every test question of the corpus, windows against seams, by kind,
    # with intervals; then what the two do to the text, which recall alone does not show.
    chunkers = {"token windows": lambda text: rag4.token_windows(text, MAX_TOKENS, OVERLAP),
                "recursive": lambda text: recursive_chunks(text, MAX_TOKENS, OVERLAP)}
    recalls = compare_retrieval(7, chunkers, "recursive")
    compare_boundaries(8, chunkers, "recursive", MAX_TOKENS, recalls)

    print("\nInvariants")
    checks = Invariants("rag5")
    checks.check_chunks(
        "nothing lost, every chunk an exact slice within budget",
        [(page, recursive), (page, overlapped)],
        MAX_TOKENS,
    )
    checks.check("no chunk ends inside a word", mid_word == 0, f"{mid_word} of {len(recursive)} chunks end in one")
    checks.check(
        "the top result holds the answer",
        top.start <= fact_start and fact_end <= top.end,
        f"answer at [{fact_start}, {fact_end})",
    )
    checks.check_cases("sentences cut where they end", SEAM_CASES)
    checks.check_cases(
        "tricky texts: lossless, in budget, packed full, overlap reaching back as far as it may",
        tricky_cases(recursive_chunks, check_recursive_chunks, RECURSIVE_SETTINGS)
        + tricky_cases(recursive_chunks, check_recursive_chunks, WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS),
    )
    # Last, the public grading tests (tests/grading/test_rag5.py), run on your functions as the
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
# lab's answer for its question. Compare the two at the same budget: where
# their chunks end, and how many blocks each cuts. Until a TODO is done, it
# says which one to finish first. Run as a script, the lab skips it.

# %%
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(PAGE.read_text(encoding="utf-8"),
                  {"recursive": recursive_chunks, "token windows (rag4)": rag4.token_windows}, QUESTION, FACT)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag5-recursive-chunking.py --hint 2` runs the lab and
# shows hint 2 for the TODO where it stops; `--hint 3` shows the next level,
# and `--hint 2 split_at_seams` one function's. In a notebook, run the cells
# above, then `show_hint(2)` or `show_hint(2, "split_at_seams")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag5")  # labs/hints/rag5.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
