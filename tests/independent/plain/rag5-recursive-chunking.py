# %% [markdown]
# # rag5: Recursive chunking
#
# rag4's windows cut wherever the count runs out: in the middle of a sentence,
# a word, a number. A reader (and an embedder) then gets half a thought.
#
# A recursive splitter cuts where the *text* has seams, the coarsest first,
# and goes finer only where a piece is still too big: blank lines (between
# paragraphs), line breaks, sentence ends, spaces, word starts, and, only for
# a run with no seam at all (a 5,000-character URL), rag4's token windows.
# Then it **packs** neighbouring pieces back together, greedily, up to the
# budget, and lets each chunk reach back into the one before: **overlap**.
#
# You write all of it: `split_at_seams` (the recursion), `pack`, `add_overlap`
# and `recursive_chunks`, which puts them together (and is where the lab first
# stops, since it calls the others). Then you turn the overlap dial.

# %%
from academy_llm import check_text_and_window, corpus_pages, make_chunk
from labkit import load_lab, run_lab, view_chunks
from labkit.explorer_widget import show_explorer  # given: the chunk explorer, in a notebook
from labkit.lessons import rag5 as lesson  # given: the page, the demonstration, the checks
from labkit.lessons.dial import dial_report  # given: recall with its interval for each value of a dial
from labkit.lessons.rag5 import FACT, PAGE, QUESTION
from labkit.notebook import in_notebook
from labkit.seams import SEAMS, exact_fitting, next_clean_cut, packing_budget
from labkit.token_index import TokenIndex

rag4 = load_lab("rag4")  # your token windows, for runs with no seam at all
mend, fit_over_budget = exact_fitting(rag4.token_windows)

# Given, one sentence each:
# - TokenIndex(text) tokenizes a text once and counts any slice from that: index.estimate(start, end)
#   (exact at clean cuts, else at most a token over), index.estimates(spans) all at once, index.count
#   and index.counts exactly, index.starts where each token starts (a numpy array);
# - SEAMS lists (name, pattern) from the coarsest seam to the finest; a cut goes where a match ends;
# - next_clean_cut(text, position, limit) is the first place from `position` where a word or line starts;
# - packing_budget(max_tokens, overlap, index) is what packing may fill, leaving room for the overlap;
# - fit_over_budget(text, start, packed_start, end, max_tokens, index) mends the rare chunk whose own
#   count is over budget (an estimate a token short at an unclean end).

# %% [markdown]
# ## 1. Split at the coarsest seam that works
#
# `split_at_seams(text, start, end, ...)` returns `(start, end)` spans that
# tile `text[start:end]` exactly. A span within budget is returned as it is;
# one over budget is cut after every match of the current seam, or, where that
# seam does not occur, of the next finer one; pieces still over are split
# again, finer. Counts come from the index: the page is tokenized once.


# %%
def split_at_seams(text, start, end, max_tokens, index, level=0):
    """Spans tiling text[start:end], each within max_tokens where seams allow."""
    if index.estimate(start, end) <= max_tokens:
        return [(start, end)]
    if level >= len(SEAMS):
        # no seam left: rag4's token windows, shifted back to the page's offsets
        windows = rag4.token_windows(text[start:end], max_tokens)
        result = []
        for window in windows:
            result.append((start + window.start, start + window.end))
        return result
    pattern = SEAMS[level][1]
    cut_points = []
    for found in pattern.finditer(text, start, end):
        position = found.end()
        if position <= start or position >= end:
            continue
        if len(cut_points) > 0 and cut_points[-1] >= position:
            continue
        cut_points.append(position)
    if len(cut_points) == 0:
        return split_at_seams(text, start, end, max_tokens, index, level + 1)
    pieces = []
    previous = start
    for position in cut_points:
        pieces.append((previous, position))
        previous = position
    pieces.append((previous, end))
    sizes = index.estimates(pieces)
    result = []
    for i in range(len(pieces)):
        if sizes[i] <= max_tokens:
            result.append(pieces[i])
        else:
            piece_start, piece_end = pieces[i]
            finer = split_at_seams(text, piece_start, piece_end, max_tokens, index, level + 1)
            for span in finer:
                result.append(span)
    return result


# %% [markdown]
# ## 2. Pack neighbours up to the budget
#
# Splitting leaves many small pieces. `pack` merges neighbouring spans
# greedily: add the next span while the chunk stays within `max_tokens`, else
# start a new chunk. Chunks of whole spans start and end at seams, and
# estimates add up at seams, so a running total is all the counting it needs.


# %%
def pack(spans, sizes, max_tokens):
    """Merge neighbouring spans greedily into (start, end) chunks of at most max_tokens.

    `sizes` holds each span's tokens (index.estimates(spans)).
    """
    chunks = []
    current_start = None
    current_end = None
    running = 0
    for i in range(len(spans)):
        span_start, span_end = spans[i]
        size = sizes[i]
        if current_start is not None and running + size <= max_tokens:
            current_end = span_end
            running = running + size
        else:
            if current_start is not None:
                chunks.append((current_start, current_end))
            current_start = span_start
            current_end = span_end
            running = size
    if current_start is not None:
        chunks.append((current_start, current_end))
    return chunks


# %% [markdown]
# ## 3. Overlap that starts at a word
#
# After packing, each chunk but the first reaches back into the one before by
# up to `overlap` tokens, to a word's start (a clean cut, so it reads well and
# is counted exactly). Packing aimed at `packing_budget`, leaving room for it.


# %%
def add_overlap(text, chunks, overlap, index):
    """Move each chunk's start back by up to `overlap` tokens, to a word start.

    The tokens are the text's own (index.starts): back `overlap` of them from
    the chunk's start, then forward to the first clean cut (next_clean_cut),
    so that an overlap never begins inside a word. Never before the previous
    chunk's start as `chunks` gives it (its start before any overlap), so that
    no chunk reaches past its neighbour. The first chunk keeps its start.
    """
    if overlap == 0 or len(chunks) == 0:
        return list(chunks)
    token_offsets = index.starts
    moved = [chunks[0]]
    for i in range(1, len(chunks)):
        chunk_start, chunk_end = chunks[i]
        floor = chunks[i - 1][0]
        first_token = int(token_offsets.searchsorted(chunk_start))
        back = first_token - overlap
        if back < 0:
            back = 0
        if back < len(token_offsets):
            reach = int(token_offsets[back])
        else:
            reach = chunk_start
        if reach < floor:
            reach = floor
        new_start = next_clean_cut(text, reach, chunk_start)
        moved.append((new_start, chunk_end))
    return moved


# %% [markdown]
# ## 4. Put it together
#
# `recursive_chunks` splits, packs and adds overlap, then reads each chunk's
# exact count from the index, all at once: linear in the text.


# %%
def recursive_chunks(text, max_tokens, overlap=0):
    """Chunks of at most max_tokens tokens, cut at the coarsest seams, sharing ~overlap tokens."""
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if text == "":
        return []
    index = TokenIndex(text)
    budget = packing_budget(max_tokens, overlap, index)
    spans = split_at_seams(text, 0, len(text), budget, index)
    packed = pack(spans, index.estimates(spans), budget)
    overlapped = add_overlap(text, packed, overlap, index)
    exact_counts = index.counts(overlapped)
    chunks = []
    for i in range(len(overlapped)):
        start, end = overlapped[i]
        if exact_counts[i] <= max_tokens:
            chunks.append(make_chunk(text, start, end, exact_counts[i], kind="recursive"))
        else:
            packed_start = packed[i][0]
            for chunk in fit_over_budget(text, start, packed_start, end, max_tokens, index):
                chunks.append(chunk)
    return chunks


# %% [markdown]
# ## 5. Seams against windows, and the overlap dial
#
# On a page of the Orbit docs, count the chunk ends that fall mid-sentence or
# mid-word, both ways at the same budget, and look at recursive chunks with
# overlap. Over the corpus, compare chunk sizes and recall with rag4's windows.
# Then **change `OVERLAPS` and run again**: each value cuts the 44 pages with
# your chunker and prints recall@5 with its interval and what the data shows.

# %%
MAX_TOKENS, OVERLAP = 128, 16  # the budget, and the overlap shown on the page
OVERLAPS = (0, 16, 32, 64)  # the dial: overlap in tokens, at MAX_TOKENS


def main():
    page = PAGE.read_text(encoding="utf-8")
    recursive = recursive_chunks(page, MAX_TOKENS)  # yours first: the lab stops at your TODO, not rag4's
    lesson.compare_on_page(page, {"token windows": rag4.token_windows(page, MAX_TOKENS), "recursive": recursive},
                           MAX_TOKENS)
    print(f"\n2. Recursive chunks with {OVERLAP} tokens of overlap, on the page")
    view_chunks(page, recursive_chunks(page, MAX_TOKENS, OVERLAP), limit=3)
    pages = corpus_pages()
    lesson.sizes_and_recall({name: rag4.token_windows(text, MAX_TOKENS, OVERLAP) for name, text in pages.items()},
                            {name: recursive_chunks(text, MAX_TOKENS, OVERLAP) for name, text in pages.items()},
                            MAX_TOKENS, OVERLAP)
    print(f"\n4. The overlap dial: recursive chunks of at most {MAX_TOKENS} tokens over the corpus")
    dial_report("overlap", {overlap: {name: recursive_chunks(text, MAX_TOKENS, overlap) for name, text in pages.items()}
                            for overlap in OVERLAPS})
    return lesson.checks(globals())  # the lab's checks, then its public grading tests


# %%
# In a notebook, an explorer: pick a chunker, move its budget and overlap, watch the chunks.
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
