# %% [markdown]
# # rag9: Semantic chunking: cut where the meaning shifts
#
# Every chunker so far cut at characters: spaces, line breaks, headings. On a
# page with no headings (an operator's essay, a transcript, a long answer in a
# forum) those say nothing about where one topic ends and the next begins. A
# *semantic* chunker asks the embedder instead: it embeds every sentence and
# cuts where the meaning shifts. Chunking guides often end with it; this lab
# builds two and measures whether they pay, on the course's own questions.
#
# 1. **Breakpoints.** Embed each sentence with its neighbours, measure the
#    cosine distance between consecutive windows, and cut where the distance
#    jumps above a percentile of all the page's distances.
# 2. **Global.** Choose all the cuts at once, so that the sentences inside each
#    chunk are as similar to each other as possible, under the token budget, by
#    dynamic programming over sentence positions (in the spirit of Chroma's
#    ClusterSemanticChunker).
#
# Both end as every chunker of the course does: the sentences between two cuts
# are packed into chunks within `max_tokens`, exact slices, in order, nothing lost.
#
# You write `window_texts`, `neighbour_distances`, `breakpoints`, `best_cuts` and
# `semantic_chunks`, which puts them together. The lab first checks each on
# cases worked out by hand, in that order: run as it is, it stops at your first
# TODO, `window_texts`. It ends with a dial, the breakpoint percentile.

# %%
import numpy as np

from academy_llm import check_text_and_window, corpus_pages, embed
from labkit import run_lab
from labkit.lessons import rag9 as lesson  # given: the page, the demonstration, the comparison, the checks
from labkit.semantic import exact_chunks, pair_scores, scores_with_later, sentence_spans
from labkit.token_index import TokenIndex

# Given, one sentence each:
# - TokenIndex(text) tokenizes a text once; index.estimates(spans) counts every (start, end) from that;
# - sentence_spans(text, max_tokens, index) lists spans tiling the text, one a sentence or line, each
#   within max_tokens (a longer one cut at its words);
# - embed(texts, embedder) gives a unit row per text (the course's embedder unless one is named);
# - pair_scores(vectors, max_sentences)[d, i] is how much more alike sentences i and i + d are than
#   nearby pairs on average, and scores_with_later sums them: with_later[d, i] = scores of sentence i
#   with each of the next d;
# - exact_chunks(text, spans, max_tokens, index) makes the Chunks, each counted exactly on its own.

# %% [markdown]
# ## 1. Breakpoints
#
# One sentence is a small sample of meaning; "Run it again." says little. So
# each sentence is embedded together with `window` sentences on each side.
# Consecutive windows share most of their text, so their distance is small,
# except where the text moves on to something else: that is where to cut.


# %%
def window_texts(text, spans, window):
    """For each sentence, the text from `window` sentences before it to `window` after it."""
    last = len(spans) - 1
    return [text[spans[max(i - window, 0)][0] : spans[min(i + window, last)][1]] for i in range(len(spans))]


def neighbour_distances(vectors):
    """Cosine distance (1 - cosine) between each row of unit vectors and the next one."""
    vectors = np.asarray(vectors, dtype=np.float64)
    if len(vectors) < 2:
        return []
    return (1.0 - np.einsum("ij,ij->i", vectors[:-1], vectors[1:])).tolist()


def breakpoints(distances, percentile):
    """Sentence indexes to cut before: where the distance is above the given percentile of all."""
    if len(distances) == 0:
        return []
    threshold = np.percentile(distances, percentile)
    return [i + 1 for i, distance in enumerate(distances) if distance > threshold]


# %% [markdown]
# ## 2. All the cuts at once
#
# Give every pair of nearby sentences a score (`pair_scores`): their cosine
# similarity less the average of nearby pairs, so an unrelated pair scores
# below zero. A chunk is worth the sum of the scores of the pairs inside it. We
# want the cuts that make the total largest, each chunk at most
# `max_sentences` sentences and `max_tokens` tokens. Dynamic programming:
# `best[j]`, the best value of the first `j` sentences, is the best over the
# start `i` of the last chunk of `best[i] + value(i, j)`; only `max_sentences`
# starts are possible, and `value(i, j)` grows from `value(i + 1, j)` by
# `with_later[j - 1 - i, i]`: sentences x max_sentences steps, not sentences squared.


# %%
def best_cuts(with_later, sentence_tokens, max_tokens, max_sentences):
    """Sentence indexes to cut before, maximising the summed pair scores inside chunks."""
    from itertools import accumulate, takewhile

    n = len(sentence_tokens)
    best, came_from = [0.0], [0]

    def options(j):
        """(value of the best split ending with chunk i..j-1, i) for every chunk that may end at j."""
        starts = range(j - 1, max(j - max_sentences, 0) - 1, -1)
        gains = accumulate(float(with_later[j - 1 - i, i]) for i in starts)
        tokens = accumulate(sentence_tokens[i] for i in starts)
        allowed = takewhile(lambda option: option[0] == j - 1 or option[2] <= max_tokens,
                            zip(starts, gains, tokens))
        return ((best[i] + gain, i) for i, gain, _ in allowed)

    for j in range(1, n + 1):
        value, start = max(options(j), key=lambda option: option[0])
        best.append(value)
        came_from.append(start)

    def walk_back(j):
        while j > 0:
            yield j
            j = came_from[j]

    return sorted(int(j) for j in walk_back(n) if j != n)


# %% [markdown]
# ## 3. Put it together
#
# `semantic_chunks` splits the text into sentences, finds the cuts by either
# method, and packs the sentences between two cuts greedily into chunks within
# the budget (never across a cut: a cut is where the meaning shifted).


# %%
def semantic_chunks(text, max_tokens, method="breakpoints", window=1, percentile=90,
                    max_sentences=48, embedder=None):
    """Chunks cut where the meaning shifts ("breakpoints") or by the best split ("global").

    The arguments are checked first, the empty text's too: a text that is not a str or a
    max_tokens that is not an int (True included) is a TypeError, a max_tokens below 1 or
    another method a ValueError; then an empty text gives no chunks. Every chunk is an exact
    slice within max_tokens; no chunk crosses a cut; between two cuts, each chunk takes the
    next sentence while the sum of their estimates stays within max_tokens.
    """
    check_text_and_window(text, max_tokens, 0, "max_tokens", "tokens")
    finders = {
        "breakpoints": lambda spans, tokens: breakpoints(
            neighbour_distances(embed(window_texts(text, spans, window), embedder)), percentile),
        "global": lambda spans, tokens: best_cuts(
            scores_with_later(pair_scores(embed([text[s:e] for s, e in spans], embedder), max_sentences)),
            tokens, max_tokens, max_sentences),
    }
    if method not in finders:
        raise ValueError(f"method must be one of {sorted(finders)}, not {method!r}")
    if not text:
        return []
    index = TokenIndex(text)
    spans = sentence_spans(text, max_tokens, index)
    tokens = list(index.estimates(spans))
    cuts = finders[method](spans, tokens)

    def packed(group):
        """Greedy packing of one group of (span, estimate) between two cuts."""
        chunk, total = None, 0
        for (start, end), size in group:
            if chunk is not None and total + size <= max_tokens:
                chunk, total = (chunk[0], end), total + size
            else:
                if chunk is not None:
                    yield chunk
                chunk, total = (start, end), size
        if chunk is not None:
            yield chunk

    groups = (zip(spans[a:b], tokens[a:b]) for a, b in zip([0, *cuts], [*cuts, len(spans)]))
    return exact_chunks(text, [span for group in groups for span in packed(group)], max_tokens, index)


# %% [markdown]
# ## 4. Look, measure, turn the dial
#
# The page "field notes" is an operator's essay with no headings at all: the
# case where structure cannot help. The lab plots its distances, shows its
# chunks, and then measures both methods over the 44 pages against rag5's
# recursive chunks and rag7's Markdown + header chunks at the same budget (the
# course's own chunks of its pages, given as data, so this lab runs whether or
# not those labs are done): recall within 1,000 tokens read, by kind of
# question, each with its 95% interval, and the difference question by question.
#
# **The dial** is the breakpoint percentile: at 90 a page is cut before the
# sentences whose distance from the one before is among its largest tenth; at
# 50, among its larger half: more, smaller chunks. Change `PERCENTILES` and run
# again: each value gives a row, and the lab says what the intervals show.

# %%
MAX_TOKENS = 256
PERCENTILES = (50, 75, 90, 97)  # the dial: breakpoint percentiles, each between 0 and 100


def main():
    if not lesson.check_pieces(globals()):  # your functions, in the file's order, on cases worked out by hand
        return False
    lesson.check_dial(PERCENTILES)  # a dial that cannot run stops here, before any measuring
    text = lesson.page_text()
    spans = sentence_spans(text, MAX_TOKENS, TokenIndex(text))
    distances = neighbour_distances(embed(window_texts(text, spans, 1)))
    lesson.plot_distances(text, spans, distances, breakpoints(distances, 90), 90)
    chunks = {method: semantic_chunks(text, MAX_TOKENS, method) for method in ("breakpoints", "global")}
    lesson.show_page(text, chunks, MAX_TOKENS)
    pages = corpus_pages()
    semantic = {method: {name: semantic_chunks(page, MAX_TOKENS, method) for name, page in pages.items()}
                for method in ("breakpoints", "global")}
    lesson.compare(semantic, MAX_TOKENS)
    by_percentile = {p: {name: semantic_chunks(page, MAX_TOKENS, percentile=p) for name, page in pages.items()}
                     for p in sorted(set(PERCENTILES))}
    lesson.dial("percentile", by_percentile, MAX_TOKENS, reference=90)
    return lesson.checks(globals(), text, chunks, semantic, MAX_TOKENS)  # the lab's checks, then its public tests


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag9-semantic-chunking.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 window_texts` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "window_texts")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag9")  # labs/hints/rag9.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
