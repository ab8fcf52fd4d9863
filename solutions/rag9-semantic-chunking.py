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
    # BEGIN SOLUTION
    # hint 1: Give each sentence the text around it, `window` sentences on each side, because a
    # hint 1: lone sentence such as "Run it again." says too little for its embedding to show the
    # hint 1: topic.
    # hint 2: The sentences are spans in order, so a window is one slice of the text: from the
    # hint 2: start of its first sentence to the end of its last. Clamp both ends to the list, so
    # hint 2: that the first and last sentences get shorter windows instead of an error. One text
    # hint 2: per sentence, in order.
    # hint 3: For sentence i take text[spans[first][0] : spans[last][1]] with first = max(i -
    # hint 3: window, 0) and last = min(i + window, len(spans) - 1).
    last = len(spans) - 1
    return [text[spans[max(i - window, 0)][0] : spans[min(i + window, last)][1]] for i in range(len(spans))]
    # END SOLUTION


def neighbour_distances(vectors):
    """Cosine distance (1 - cosine) between each row of unit vectors and the next one."""
    # BEGIN SOLUTION
    # hint 1: Measure how far apart in meaning each pair of neighbouring windows is (cosine
    # hint 1: distance), because a jump in distance is where the text moves on to something else.
    # hint 2: The embedder's rows have unit length, so the cosine of two rows is their dot product,
    # hint 2: and the distance is one minus it. Compare each row with the next: n rows give n - 1
    # hint 2: distances, in order, as plain floats.
    # hint 3: Rows are unit length, so the cosine is a dot product: for rows i and i + 1 the
    # hint 3: distance is 1 - vectors[i] @ vectors[i + 1]. One value fewer than rows.
    return [1.0 - float(vectors[i] @ vectors[i + 1]) for i in range(len(vectors) - 1)]
    # END SOLUTION


def breakpoints(distances, percentile):
    """Sentence indexes to cut before: where the distance is above the given percentile of all."""
    # BEGIN SOLUTION
    # hint 1: Choose where to cut: before every sentence that lies unusually far in meaning from
    # hint 1: the one before it (further than the given percentile of all the page's distances), so
    # hint 1: that chunks end where the topic shifts.
    # hint 2: Take the threshold over all distances with numpy's percentile. Distance i lies
    # hint 2: between sentences i and i + 1, so a distance above the threshold is a cut before
    # hint 2: sentence i + 1. Return the cuts in order. A page of one sentence has no distances,
    # hint 2: and so no cuts (a percentile of nothing is an error).
    # hint 3: threshold = np.percentile(distances, percentile); distance i lies between sentences i
    # hint 3: and i + 1, so a cut there is at sentence i + 1. No distances, no cuts.
    if not distances:
        return []
    threshold = np.percentile(distances, percentile)
    return [i + 1 for i, distance in enumerate(distances) if distance > threshold]
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Choose all the cuts at once, so that the sentences inside each chunk are, in total,
    # hint 1: as similar to each other as possible, with every chunk within max_sentences sentences
    # hint 1: and max_tokens tokens: each chunk is judged whole, not one boundary at a time.
    # hint 2: Dynamic programming over sentence positions: the best value of the first j sentences
    # hint 2: is the best, over the start i of the last chunk, of the best value of the first i
    # hint 2: sentences plus the value of the chunk i..j-1; remember which i won. For each j, try i
    # hint 2: from j - 1 down, so that the chunk grows by one sentence a step and its value and
    # hint 2: tokens grow with a running sum (with_later holds a sentence's scores with the ones
    # hint 2: after it). Stop when the chunk has too many sentences or tokens, but always allow a
    # hint 2: chunk of one sentence. Last, follow the remembered starts back from the end to
    # hint 2: collect the cuts, in order and without 0.
    # hint 3: n = len(sentence_tokens); best[0] = 0, start[j] = where the last chunk of the best
    # hint 3: split of the first j sentences begins. For each j, walk i down from j - 1 while j - i
    # hint 3: <= max_sentences and the tokens of sentences i..j-1 fit max_tokens (always take i = j
    # hint 3: - 1); the chunk's value grows by with_later[j - 1 - i, i] (sentence i with the ones
    # hint 3: after it). Keep the best. Then follow start[] back from n to list the cuts.
    n = len(sentence_tokens)
    best = [0.0] + [-np.inf] * n
    start = [0] * (n + 1)
    for j in range(1, n + 1):
        value, tokens = 0.0, 0
        for i in range(j - 1, max(j - max_sentences, 0) - 1, -1):
            tokens += sentence_tokens[i]
            if tokens > max_tokens and i < j - 1:
                break
            value += with_later[j - 1 - i, i]
            if best[i] + value > best[j]:
                best[j], start[j] = best[i] + value, i
    cuts = []
    j = n
    while j > 0:
        j = start[j]
        cuts.append(j)
    return sorted(cut for cut in cuts if cut > 0)
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Put the method together: sentences, their embeddings, the cuts where the meaning
    # hint 1: shifts, then the sentences between two cuts packed into as few chunks as the budget
    # hint 1: allows, so that no chunk mixes two topics and none is over max_tokens. Bad arguments
    # hint 1: are refused before any work, as every chunker of the course does.
    # hint 2: Check the arguments as rag5 does (check_text_and_window, no overlap) and refuse any
    # hint 2: method but the two with a ValueError; "" has no chunks. Index the text once, take its
    # hint 2: sentence spans and their estimates. "breakpoints": embed each sentence's window, cut
    # hint 2: where the distances jump. "global": embed each sentence alone, score its pairs, find
    # hint 2: the best cuts. Then walk the groups between cuts; in each, a sentence joins the chunk
    # hint 2: being built while the running total stays within budget, else starts a new one; a
    # hint 2: group always starts a new chunk. Last, exact_chunks makes the Chunks.
    # hint 3: check_text_and_window(text, max_tokens, 0, "max_tokens", "tokens")
    # hint 3: ...  # refuse any method but "breakpoints" and "global" (ValueError)
    # hint 3: if not text:
    # hint 3:     return []
    # hint 3: index = TokenIndex(text)
    # hint 3: spans = ...  # the sentences
    # hint 3: tokens = ...  # their estimated sizes
    # hint 3: if method == "breakpoints":
    # hint 3:     cuts = ...  # embed each sentence's window; cut where the distance to the next jumps
    # hint 3: else:
    # hint 3:     cuts = ...  # embed each sentence; score its pairs; the best cuts within the budget
    # hint 3: packed = []
    # hint 3: for first, last in zip([0, *cuts], [*cuts, len(spans)]):  # one group of sentences
    # hint 3:     ...  # a sentence joins the group's last chunk while it fits, else starts a new one
    # hint 3: return exact_chunks(text, packed, max_tokens, index)
    check_text_and_window(text, max_tokens, 0, "max_tokens", "tokens")
    if method not in ("breakpoints", "global"):
        raise ValueError(f"method must be 'breakpoints' or 'global', got {method!r}")
    if not text:
        return []
    index = TokenIndex(text)
    spans = sentence_spans(text, max_tokens, index)
    tokens = index.estimates(spans)
    if method == "breakpoints":
        vectors = embed(window_texts(text, spans, window), embedder)
        cuts = breakpoints(neighbour_distances(vectors), percentile)
    else:
        vectors = embed([text[start:end] for start, end in spans], embedder)
        with_later = scores_with_later(pair_scores(vectors, max_sentences))
        cuts = best_cuts(with_later, tokens, max_tokens, max_sentences)
    packed = []
    for first, last in zip([0, *cuts], [*cuts, len(spans)]):  # the sentences of one group, between two cuts
        total = None  # the tokens of the group's last chunk; None: the group has none yet
        for (start, end), size in zip(spans[first:last], tokens[first:last]):
            if total is not None and total + size <= max_tokens:
                packed[-1] = (packed[-1][0], end)
                total += size
            else:
                packed.append((start, end))
                total = size
    return exact_chunks(text, packed, max_tokens, index)
    # END SOLUTION


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


# %%
if __name__ == "__main__":
    run_lab(main)
