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
    # BEGIN SOLUTION
    # hint 1: Cut text[start:end] into spans that tile it exactly and each fit in max_tokens,
    # hint 1: cutting at the coarsest kind of seam that works (a paragraph break before a line
    # hint 1: break, a line break before a sentence end, and so on), so that pieces end where the
    # hint 1: text itself breaks.
    # hint 2: Work recursively, one seam level at a time. A span that fits already is the whole
    # hint 2: answer. Otherwise cut it after every match of the current seam inside it; if the seam
    # hint 2: never occurs there, try the next finer seam on the same span. Of the pieces, keep
    # hint 2: those that fit and send each one that does not to the next finer level. When no seam
    # hint 2: is left, fall back to rag4's token windows, whose offsets are relative to the slice
    # hint 2: they were given. Size spans with the TokenIndex (all the pieces of a cut in one
    # hint 2: call), never with count_tokens: the page must not be tokenized again.
    # hint 3: If index.estimate(start, end) <= max_tokens, the span is fine: return [(start, end)].
    # hint 3: If level == len(SEAMS), no seam is left: cut with rag4.token_windows(text[start:end],
    # hint 3: max_tokens) and shift each window's offsets by start. Else cut where every
    # hint 3: SEAMS[level] match inside [start, end) ends (pattern.finditer(text, start, end)); if
    # hint 3: that gives one piece, try level + 1. Keep each piece that fits
    # hint 3: (index.estimates(pieces) sizes them all at once); split the others at level + 1.
    if index.estimate(start, end) <= max_tokens:
        return [(start, end)]
    if level == len(SEAMS):
        windows = rag4.token_windows(text[start:end], max_tokens)
        return [(start + w.start, start + w.end) for w in windows]
    _, pattern = SEAMS[level]
    cuts = [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]
    if not cuts:
        return split_at_seams(text, start, end, max_tokens, index, level + 1)
    pieces = list(zip([start] + cuts, cuts + [end]))
    spans = []
    for (piece_start, piece_end), tokens in zip(pieces, index.estimates(pieces)):
        if tokens <= max_tokens:
            spans.append((piece_start, piece_end))
        else:
            spans += split_at_seams(text, piece_start, piece_end, max_tokens, index, level + 1)
    return spans
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Merge neighbouring spans into as few chunks as possible, in order, each within
    # hint 1: max_tokens, so that chunks are as full as the seams allow instead of one small piece
    # hint 1: each.
    # hint 2: Greedy, in one pass: keep the chunk being built and its running total of tokens. Each
    # hint 2: next span joins that chunk if the total stays within budget, or else starts a new
    # hint 2: chunk. Adding the given sizes is all the counting there is (estimates add up at clean
    # hint 2: cuts). A span over budget on its own still becomes a chunk of its own; never drop or
    # hint 2: reorder a span.
    # hint 3: Walk the spans with their sizes, keeping the current chunk's (start, end) and its
    # hint 3: running total of tokens. If the total plus the span's size is <= max_tokens, extend
    # hint 3: the chunk to the span's end; otherwise start a new chunk at the span.
    chunks = []
    total = 0
    for (span_start, span_end), tokens in zip(spans, sizes):
        if chunks and total + tokens <= max_tokens:
            chunks[-1] = (chunks[-1][0], span_end)
            total += tokens
        else:
            chunks.append((span_start, span_end))
            total = tokens
    return chunks
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Let each chunk after the first reach back into the one before by up to `overlap`
    # hint 1: tokens, so that a fact on a boundary is whole in one of them, and make that overlap
    # hint 1: begin at a word, where it reads well and is counted exactly.
    # hint 2: With no overlap there is nothing to do. The first chunk stays as it is. For each
    # hint 2: later chunk, find its first token among the index's token starts (a binary search),
    # hint 2: step back `overlap` tokens, but never before the previous chunk's packed start. From there
    # hint 2: move forward to the first clean cut with the given next_clean_cut, which never passes
    # hint 2: the chunk's own start. Only the start moves: the end stays where packing put it.
    # hint 3: For each chunk after the first: find the token start `overlap` tokens before the
    # hint 3: chunk's start (index.starts.searchsorted(start) finds the chunk's first token), not
    # hint 3: before the previous chunk's start. Move forward from there to the first clean cut,
    # hint 3: the space before a word or the start of a line (next_clean_cut(text, reach, chunk's
    # hint 3: start)), and begin the chunk there.
    if overlap == 0:
        return chunks
    result = [chunks[0]]
    for (previous_start, _), (start, end) in zip(chunks, chunks[1:]):
        position = int(index.starts.searchsorted(start))
        reach = max(int(index.starts[max(position - overlap, 0)]), previous_start)
        result.append((next_clean_cut(text, reach, start), end))
    return result
    # END SOLUTION


# %% [markdown]
# ## 4. Put it together
#
# `recursive_chunks` splits, packs and adds overlap, then reads each chunk's
# exact count from the index, all at once: linear in the text.


# %%
def recursive_chunks(text, max_tokens, overlap=0):
    """Chunks of at most max_tokens tokens, cut at the coarsest seams, sharing ~overlap tokens."""
    # BEGIN SOLUTION
    # hint 1: Turn a text into chunks of at most max_tokens tokens that end at the coarsest seams
    # hint 1: the budget allows and share about `overlap` tokens, each with its exact token count:
    # hint 1: whole thoughts within the embedder's limit, from a text tokenized only once.
    # hint 2: Check the arguments as in rag4; an empty text has no chunks. Packing must aim below
    # hint 2: max_tokens to leave room for the overlap: the given packing_budget says how far.
    # hint 2: Build one TokenIndex, split the whole text at its seams within that budget, pack the
    # hint 2: spans (sized by the index), then add the overlap. Last, read each chunk's exact count
    # hint 2: from the index: nearly all fit and become chunks; the rare one over budget goes to
    # hint 2: the given fit_over_budget, which needs where that chunk started before the overlap
    # hint 2: was added.
    # hint 3: check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    # hint 3: if not text:
    # hint 3:     return []
    # hint 3: index = TokenIndex(text)
    # hint 3: budget = ...  # what packing may aim for, leaving room for the overlap
    # hint 3: spans = ...  # the whole text split at its seams within that budget
    # hint 3: packed = ...  # the spans packed, sized by the index
    # hint 3: overlapped = ...  # the packed chunks with their overlap
    # hint 3: chunks = []
    # hint 3: for (start, end), (packed_start, _), n_tokens in ...:  # a chunk, its start before the overlap, its count
    # hint 3:     ...  # in budget: a Chunk of kind "recursive"; over it: fit_over_budget's chunks
    # hint 3: return chunks
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not text:
        return []
    index = TokenIndex(text)
    budget = packing_budget(max_tokens, overlap, index)
    spans = split_at_seams(text, 0, len(text), budget, index)
    packed = pack(spans, index.estimates(spans), budget)
    overlapped = add_overlap(text, packed, overlap, index)
    chunks = []
    for (start, end), (packed_start, _), n_tokens in zip(overlapped, packed, index.counts(overlapped)):
        if n_tokens <= max_tokens:
            chunks.append(make_chunk(text, start, end, n_tokens, kind="recursive"))
        else:
            chunks += fit_over_budget(text, start, packed_start, end, max_tokens, index)
    return chunks
    # END SOLUTION


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
    by_overlap = {overlap: {name: recursive_chunks(text, MAX_TOKENS, overlap) for name, text in pages.items()}
                  for overlap in OVERLAPS}
    dial_report("overlap", by_overlap)
    lesson.what_overlap_repeats(by_overlap, MAX_TOKENS)
    return lesson.checks(globals())  # the lab's checks, then its public grading tests


# %%
# In a notebook, an explorer: pick a chunker, move its budget and overlap, watch the chunks.
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(PAGE.read_text(encoding="utf-8"),
                  {"recursive": recursive_chunks, "token windows (rag4)": rag4.token_windows}, QUESTION, FACT)


# %%
if __name__ == "__main__":
    run_lab(main)
