# %% [markdown]
# # rag9: Semantic chunking: cut where the meaning shifts
#
# Every chunker so far cut at characters: spaces, line breaks, headings. A
# *semantic* chunker asks the embedder where the topic changes and cuts there.
# It is the last step of most chunking courses, usually sold with enthusiasm.
# This lab builds two semantic chunkers and then measures whether they pay.
#
# 1. **Breakpoints.** Split the text into sentences, embed each sentence
#    together with its neighbours, and measure the cosine distance between
#    consecutive windows. Where the distance jumps above a percentile of all
#    distances, the meaning shifted: cut there.
# 2. **Global.** Choose all boundaries at once so that the sentences inside
#    each chunk are as similar to each other as possible, under the token
#    budget, by dynamic programming over sentence positions (in the spirit of
#    Chroma's ClusterSemanticChunker).
#
# Both end the same way as every chunker in this course: exact slices, in
# order, nothing lost, every chunk within `max_tokens`.
#
# You write `window_texts`, `neighbour_distances`, `breakpoints`, `best_cuts` and the
# start of `semantic_chunks`. Run as it is, the lab stops first at
# `semantic_chunks`, the fifth of them: its first check calls it with a method
# it must refuse, before any check calls the other four. A lab stops at the
# first TODO it reaches when run, wherever that is in the file.
#
# The lab ends with a dial: the breakpoint percentile. Change `PERCENTILES`
# and run the lab again to see how recall moves with it.

# %%
import time

import numpy as np

from academy_llm import (
    check_chunking, check_text_and_window, corpus_pages, corpus_questions, describe_embedder, embed,
    embedder_name, make_chunk, top_k,
)
from labkit import (
    Case, Invariants, load_lab, returns, run_lab, show_figure, tricky_cases, view_chunks,
)
from labkit.markdown import front_matter  # given: where a page's front matter ends
from labkit.retrieval import say
from labkit.uncertainty import claim, mean_interval, paired_difference  # given: intervals (rag8 builds a bootstrap)

rag5 = load_lab("rag5")  # TokenIndex, SEAMS, split_at_seams, pack, mend
rag7 = load_lab("rag7")  # header_chunks, to compare with
rag8 = load_lab("rag8")  # the evaluation harness
from labkit.lessons import rag8 as harness  # noqa: E402 (rag8's given harness: retrieval, the budget, the tables)

# %% [markdown]
# ## 1. Sentences with exact offsets
#
# The unit of a semantic chunker is the sentence. rag5's first three seams
# (blank lines, line breaks, sentence ends) cut the text into sentences that
# tile it exactly; a run of spaces alone joins the sentence before it. A
# "sentence" longer than the budget (a long table row, a URL) is split
# further with rag5, so that every sentence fits in a chunk.


# %%
def sentence_spans(text, max_tokens, index):
    """Spans tiling `text`, one per sentence or line, each within max_tokens."""
    cuts = sorted({m.end() for _, seam in rag5.SEAMS[:3] for m in seam.finditer(text) if 0 < m.end() < len(text)})
    spans = []
    for start, end in zip([0] + cuts, cuts + [len(text)]):
        if spans and text[start:end].strip() == "":
            spans[-1] = (spans[-1][0], end)  # only spaces: they join the sentence before
        elif index.estimate(start, end) <= max_tokens:
            spans.append((start, end))
        else:
            spans += rag5.split_at_seams(text, start, end, max_tokens, index, level=3)
    return spans


# %% [markdown]
# ## 2. Method 1: breakpoints
#
# One sentence is a small sample of meaning; "Run it again." says little. So
# each sentence is embedded together with `window` sentences on each side.
# Consecutive windows share most of their text, so their distance is small,
# except where the text moves on to something else.


# %%
def window_texts(text, spans, window):
    """For each sentence, the text from `window` sentences before it to `window` after it."""
    # TODO(rag9): Give each sentence the text around it, `window` sentences on each side, because a
    #   lone sentence such as "Run it again." says too little for its embedding to show
    #   the topic.
    #   More help: python labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag9) window_texts(): Give each sentence the text around it, `window` sentences on"
        " each side, because a lone sentence such as \"Run it again.\" says too little for its "
        "embedding to show the topic. More help: python labs/rag9-semantic-chunking.py --hint 2,"
        " or show_hint(2) in a notebook."
    )


def neighbour_distances(vectors):
    """Cosine distance (1 - cosine) between each row of unit vectors and the next one."""
    # TODO(rag9): Measure how far apart in meaning each pair of neighbouring windows is (cosine
    #   distance), because a jump in distance is where the text moves on to something
    #   else.
    #   More help: python labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag9) neighbour_distances(): Measure how far apart in meaning each pair of "
        "neighbouring windows is (cosine distance), because a jump in distance is where the text"
        " moves on to something else. More help: python labs/rag9-semantic-chunking.py --hint 2,"
        " or show_hint(2) in a notebook."
    )


def breakpoints(distances, percentile):
    """Sentence indexes to cut before: where the distance is above the given percentile of all."""
    # TODO(rag9): Choose where to cut: before every sentence that lies unusually far in meaning
    #   from the one before it (further than the given percentile of all the page's
    #   distances), so that chunks end where the topic shifts.
    #   More help: python labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag9) breakpoints(): Choose where to cut: before every sentence that lies "
        "unusually far in meaning from the one before it (further than the given percentile of "
        "all the page's distances), so that chunks end where the topic shifts. More help: python"
        " labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 3. Method 2: all boundaries at once
#
# Give every pair of sentences a score: their cosine similarity, minus the
# average similarity of nearby pairs (so that an unrelated pair scores below
# zero). The value of a chunk is the sum of the scores of all pairs inside
# it. We want the cuts that make the total value largest, with each chunk at
# most `max_sentences` sentences and `max_tokens` tokens.
#
# Dynamic programming does it: `best[j]` is the best value for the first `j`
# sentences; the last chunk of that best split starts at some `i`, so
# `best[j] = max(best[i] + value(i, j))`. Only `max_sentences` values of `i`
# are possible, and `value(i, j)` grows from `value(i + 1, j)` by the scores
# of sentence `i` with the sentences after it: a running sum. So the work is
# sentences x max_sentences, not sentences squared.


# %%
def pair_scores(vectors, max_sentences):
    """scores[d, i]: similarity of sentences i and i + d (0 < d < max_sentences), less the mean
    similarity of all such nearby pairs; 0 where i + d is past the end."""
    n = len(vectors)
    scores = np.zeros((max_sentences, n))
    for d in range(1, min(max_sentences, n)):
        scores[d, : n - d] = np.einsum("ij,ij->i", vectors[:-d], vectors[d:])
    nearby = np.concatenate([scores[d, : n - d] for d in range(1, min(max_sentences, n))] or [np.zeros(0)])
    if nearby.size:
        for d in range(1, min(max_sentences, n)):
            scores[d, : n - d] -= nearby.mean()
    return scores


def scores_with_later(scores):
    """with_later[d, i]: the scores of sentence i with each of the next d sentences, summed.

    The dynamic programme needs this sum for every i and d; a running total
    along d gives each one in a single look-up.
    """
    return np.cumsum(scores, axis=0)


def best_cuts(with_later, sentence_tokens, max_tokens, max_sentences):
    """Sentence indexes to cut before, maximising the summed pair scores inside chunks."""
    # TODO(rag9): Choose all the cuts at once, so that the sentences inside each chunk are, in
    #   total, as similar to each other as possible, with every chunk within
    #   max_sentences sentences and max_tokens tokens: each chunk is judged whole, not
    #   one boundary at a time.
    #   More help: python labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag9) best_cuts(): Choose all the cuts at once, so that the sentences inside each "
        "chunk are, in total, as similar to each other as possible, with every chunk within "
        "max_sentences sentences and max_tokens tokens: each chunk is judged whole, not one "
        "boundary at a time. More help: python labs/rag9-semantic-chunking.py --hint 2, or "
        "show_hint(2) in a notebook."
    )


# %% [markdown]
# ## 4. From cuts to chunks, within the budget
#
# A semantic segment may still be over the token budget (a long stretch on one
# topic). Each segment's sentences are packed greedily within the budget
# (rag5's `pack`), and each chunk's count is read from rag5's index.


# %%
def semantic_chunks(text, max_tokens, method="breakpoints", window=1, percentile=90,
                    max_sentences=48, embedder=None):
    """Chunks cut where the meaning shifts ("breakpoints") or by the best split ("global").

    The arguments are checked first, the empty text's too: a text that is not a str or a
    max_tokens that is not an int (True included) is a TypeError, a max_tokens below 1 or
    another method a ValueError; then an empty text gives no chunks.
    """
    # TODO(rag9): Refuse bad arguments before any work, as every chunker in the course does (a text
    #   that is not a str, a budget that is not a positive int: TypeError or ValueError),
    #   and with a ValueError for an unknown method, so that a caller's mistake is named
    #   at once; an empty text has no chunks.
    #   More help: python labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag9) semantic_chunks(): Refuse bad arguments before any work, as every chunker in"
        " the course does (a text that is not a str, a budget that is not a positive int: "
        "TypeError or ValueError), and with a ValueError for an unknown method, so that a "
        "caller's mistake is named at once; an empty text has no chunks. More help: python "
        "labs/rag9-semantic-chunking.py --hint 2, or show_hint(2) in a notebook."
    )
    index = rag5.TokenIndex(text)
    spans = sentence_spans(text, max_tokens, index)
    tokens = index.estimates(spans)
    if method == "breakpoints":
        vectors = embed(window_texts(text, spans, window), embedder)
        cuts = breakpoints(neighbour_distances(vectors), percentile)
    else:
        vectors = embed([text[start:end] for start, end in spans], embedder)
        with_later = scores_with_later(pair_scores(vectors, max_sentences))
        cuts = best_cuts(with_later, tokens, max_tokens, max_sentences)
    chunks = []
    for first, last in zip([0] + cuts, cuts + [len(spans)]):
        for start, end in rag5.pack(spans[first:last], tokens[first:last], max_tokens):
            n_tokens = index.count(start, end)
            if n_tokens > max_tokens:
                chunks += [make_chunk(text, s, e, kind="semantic") for s, e in rag5.mend(text, start, end, max_tokens)]
            else:
                chunks.append(make_chunk(text, start, end, n_tokens, kind="semantic"))
    return chunks


# %% [markdown]
# ## 5. Check the pieces before measuring
#
# Each piece is tried first on cases worked out by hand (sentence windows at
# the ends of a text, distances of known vectors, a threshold some distances
# equal, two topics with a limit on sentences or tokens per chunk), and
# `semantic_chunks` on the course's `TRICKY_TEXTS`, judged from the text
# alone. If one goes wrong, the lab stops there, showing the call: what comes
# after would only measure the mistake.

# %%
SENTENCES = "Sun. Rain. Snow. Wind."
SENTENCE_SPANS = [(0, 5), (5, 11), (11, 17), (17, 22)]
TWO_TOPICS = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3)  # 6 sentences, the topic changes at 3


def with_later_of(vectors, max_sentences):
    """The with_later table best_cuts reads, for `vectors` (given code, not yours)."""
    return scores_with_later(pair_scores(vectors, max_sentences))


def check_topic_cuts(cuts, with_later, sentence_tokens, max_tokens, max_sentences):
    """Raise ValueError unless `cuts` cut TWO_TOPICS where its topic changes, into chunks of at
    most max_sentences sentences and max_tokens tokens."""
    bounds = [0, *cuts, len(sentence_tokens)]
    if 3 not in cuts or bounds != sorted(set(bounds)):
        raise ValueError(f"returned {cuts}: expected cuts in order, 3 among them "
                         "(where the topic changes)")
    for first, last in zip(bounds, bounds[1:]):
        tokens = sum(sentence_tokens[first:last])
        if last - first > max_sentences or tokens > max_tokens:
            raise ValueError(f"returned {cuts}: sentences {first} to {last - 1} make a chunk of "
                             f"{last - first} sentences, {tokens} tokens")


def check_semantic_chunks(chunks, text, max_tokens, method):
    """Raise ValueError unless `chunks` are lossless, in budget, truly counted and the same
    on a second call."""
    check_chunking(text, chunks, max_tokens)
    if semantic_chunks(text, max_tokens, method) != chunks:
        raise ValueError("a second call gave other chunks: not deterministic")


PIECE_CASES = [
    Case("an unknown method", semantic_chunks, ("Some text.", 64), returns(None), dict(method="magic"),
         raises=ValueError),
    Case("a budget of no tokens", semantic_chunks, ("Some text.", 0), returns(None), raises=ValueError),
    Case("one sentence", window_texts, ("Hi.", [(0, 3)], 2), returns(["Hi."])),
    Case("no neighbours", window_texts, (SENTENCES, SENTENCE_SPANS, 0),
         returns(["Sun. ", "Rain. ", "Snow. ", "Wind."])),
    Case("a neighbour on each side, cut at the ends", window_texts, (SENTENCES, SENTENCE_SPANS, 1),
         returns(["Sun. Rain. ", "Sun. Rain. Snow. ", "Rain. Snow. Wind.", "Snow. Wind."])),
    Case("one vector", neighbour_distances, (np.array([[1.0, 0.0]]),), returns([])),
    Case("known cosines", neighbour_distances, (np.array([[0.6, 0.8], [1.0, 0.0], [1.0, 0.0]]),),
         returns([0.4, 0.0])),
    Case("no distances", breakpoints, ([], 90), returns([])),
    Case("distances all equal to the threshold", breakpoints, ([0.3, 0.3, 0.3], 50), returns([])),
    Case("two jumps above the 60th percentile", breakpoints, ([0.1, 0.9, 0.2, 0.1, 0.8, 0.1], 60),
         returns([2, 5])),
    Case("one sentence", best_cuts, (with_later_of(TWO_TOPICS[:1], 4), [5], 100, 4), returns([])),
    Case("two topics", best_cuts, (with_later_of(TWO_TOPICS, 6), [5] * 6, 100, 6), returns([3])),
    Case("two topics, 2 sentences a chunk at most", best_cuts,
         (with_later_of(TWO_TOPICS, 2), [1] * 6, 100, 2), check_topic_cuts),
    Case("two topics, 20 tokens a chunk at most", best_cuts,
         (with_later_of(TWO_TOPICS, 6), [10] * 6, 20, 6), check_topic_cuts),
]
SEMANTIC_SETTINGS = (
    dict(max_tokens=8, method="breakpoints"), dict(max_tokens=8, method="global"),
    dict(max_tokens=64, method="breakpoints"), dict(max_tokens=64, method="global"),
)


# %% [markdown]
# ## 6. Look at the distances
#
# The page "field notes" is an operator's essay with no headings at all: the
# case where structure cannot help and meaning is all there is to go by.

# %%
PAGE = "field-notes"
MAX_TOKENS = 256
QUESTION_ID = "w4-037"  # a dev-split question about this page, with its answer's span
CUT_EXAMPLE_ID = "w4-038"  # a question whose answer the breakpoints cut away from its context


def step_distance_plot(text):
    """Plot the breakpoint distances of a page with the threshold and the cuts; save a PNG."""
    from matplotlib.figure import Figure

    index = rag5.TokenIndex(text)
    spans = sentence_spans(text, MAX_TOKENS, index)
    distances = neighbour_distances(embed(window_texts(text, spans, 1)))
    cuts = breakpoints(distances, 90)
    threshold = np.percentile(distances, 90)
    figure = Figure(figsize=(8, 3.2), layout="constrained")
    axes = figure.subplots()
    axes.plot(range(1, len(distances) + 1), distances, color="#4c72b0", linewidth=1)
    axes.axhline(threshold, color="#c44e52", linestyle="--", label="90th percentile")
    axes.scatter(cuts, [distances[c - 1] for c in cuts], color="#c44e52", zorder=3, label="cut")
    axes.set_xlabel("sentence boundary")
    axes.set_ylabel("cosine distance")
    axes.set_title(f"{PAGE}: distance between neighbouring sentence windows")
    axes.legend(loc="upper center")
    print(f"\n2. {PAGE}: {len(spans)} sentences, {len(cuts)} breakpoints above {threshold:.3f}")
    show_figure(figure, "rag9-distances.png")


# %% [markdown]
# ## 7. Does it pay? Measure with rag8's harness
#
# Same questions (test split), same budget as rag8, against rag5's recursive
# chunks and rag7's Markdown + header chunks, all retrieved with the embedder
# that cut the sentences (wordllama, or the one ACADEMY_EMBEDDER names). We
# also time each chunker, embedding included, in sentences per second.
#
# Then, plainly: the semantic global chunker against Markdown + header, kind
# by kind, each recall with its 95% interval and the difference question by
# question. Whether meaning beats structure on these docs, and on which kind,
# is what those intervals say; where one holds 0, the lab says this data does
# not show a difference.

# %%
STRATEGIES = {
    "recursive": lambda text: rag5.recursive_chunks(text, MAX_TOKENS),
    "markdown + header": lambda text: rag7.header_chunks(text, "Orbit docs", MAX_TOKENS),
    "semantic breakpoints": lambda text: semantic_chunks(text, MAX_TOKENS, "breakpoints"),
    "semantic global": lambda text: semantic_chunks(text, MAX_TOKENS, "global"),
}

def step_measure():
    questions = corpus_questions("test")
    pages = corpus_pages()
    sentences = sum(len(sentence_spans(t, MAX_TOKENS, rag5.TokenIndex(t))) for t in pages.values())
    embedder = embedder_name()  # the one every step embeds with: ACADEMY_EMBEDDER, else wordllama
    print(f"\n4. Orbit docs: {len(questions)} test questions, {MAX_TOKENS}-token chunks, {describe_embedder()}")
    print(f"   {'strategy':<21} {'R@5':>5} {'R@1kt':>6} {'IoU':>6} {'prose':>6} {'table':>6} "
          f"{'code':>6} {'chunks':>6} {'sentences/s':>11}")
    results, chunked, per_question = {}, {}, {}
    for name, chunker in STRATEGIES.items():
        began = time.perf_counter()
        chunks = [(doc_id, chunk) for doc_id, text in pages.items() for chunk in chunker(text)]
        seconds = time.perf_counter() - began
        result, per_question[name] = scored(chunks, questions, embedder)
        results[name], chunked[name] = result, chunks
        a = result["all"]
        print(f"   {name:<21} {a['recall@5']:>5.2f} {a['recall@1k tokens']:>6.2f} {a['IoU']:>6.3f} "
              f"{result['prose']['recall@1k tokens']:>6.2f} {result['table']['recall@1k tokens']:>6.2f} "
              f"{result['code']['recall@1k tokens']:>6.2f} {len(chunks):>6} {sentences / seconds:>11.0f}")
    print("   (prose, table, code: recall within 1,000 tokens for that kind of question)")
    return results, chunked, per_question


def scored(chunks, questions, embedder):
    """(rag8's {kind: {metric: mean}}, each question's recall within rag8's token budget): scored as
    rag8.evaluate scores, one question at a time too, so that two strategies can be compared
    question by question."""
    found = []
    for ranked in harness.rankings(chunks, questions, embedder):
        hits = [hit for _, *hit in ranked]
        found.append((hits, harness.within_budget(hits, [chunks[row][1].n_tokens for row, *_ in ranked],
                                                  harness.TOKEN_BUDGET)))
    each = [harness.score_hits(vars(rag8), [question], [hits])["all"][BUDGET]
            for question, hits in zip(questions, found)]
    return harness.score_hits(vars(rag8), questions, found), each


BUDGET = "recall@1k tokens"  # rag8's name for recall within its TOKEN_BUDGET


def step_plainly(questions, per_question, ours="semantic global", other="markdown + header"):
    """Recall within 1,000 tokens by kind, `ours` against `other`, question by question, with intervals."""
    print(f"\n5. Plainly, recall within 1,000 tokens on the Orbit docs, {ours} against {other};")
    print("   [low, high]: a 95% interval, the difference paired over the same questions")
    print(f"   {'kind (questions)':<20} {ours:>18} {other:>18} {'difference':>21}  what it shows")
    for kind in ("prose", "identifier", "table", "code", "multi_section", "all"):
        picked = [n for n, q in enumerate(questions) if kind in (q["kind"], "all")]
        mine, theirs = ([per_question[name][n] for n in picked] for name in (ours, other))
        difference = paired_difference(theirs, mine)
        print(f"   {f'{kind} ({len(picked)})':<20} {mean_interval(mine).plain():>18} "
              f"{mean_interval(theirs).plain():>18} {str(difference):>21}  {difference.verdict()}")
    say(f"Overall, {claim(difference, ours, other, 'recall within 1,000 tokens')}.")


def rank_of_answer(chunks, question):
    """Rank (1 = best) of the first chunk holding the question's whole answer, or None."""
    vectors = embed([c.embedding_text for c in chunks])
    for place, (row, _) in enumerate(top_k(embed([question["question"]])[0], vectors, len(chunks)), 1):
        if chunks[row].start <= question["start"] and question["end"] <= chunks[row].end:
            return place
    return None


def step_show(text, questions):
    """The page's semantic chunks, where each method put the page's front matter, and the rank each
    gives one question's answer (one question: a look, not a comparison)."""
    chunks = {method: semantic_chunks(text, MAX_TOKENS, method) for method in ("breakpoints", "global")}
    print(f"\n3. {PAGE} in {len(chunks['breakpoints'])} chunks by breakpoints ({MAX_TOKENS} tokens at most);"
          " three of them:")
    view_chunks(text, chunks["breakpoints"], first=1, limit=3)
    say_front_matter(text, chunks)
    example = questions[CUT_EXAMPLE_ID]
    print(f"   {example['question']!r}")
    for method, made in chunks.items():
        print(f"     {method:<12} {len(made):>3} chunks, rank of the first chunk holding the whole answer: "
              f"{rank_of_answer(made, example)}")
    print("   One question shows how each method ranks; it does not show which finds more. Step 5 compares\n"
          "   them over every test question, with intervals.")
    return chunks


def say_front_matter(text, chunks):
    """How many chunks of each method share the page's front matter: a semantic chunker reads its
    `key: value` lines as sentences, and may cut between them."""
    end = front_matter(text)[1]
    if not end:
        return
    pieces = {method: sum(c.start < end for c in made) for method, made in chunks.items()}
    print(f"   The front matter, characters [0, {end}), is in "
          + ", ".join(f"{count} chunk{'s' * (count != 1)} by {method}" for method, count in pieces.items()) + ".")
    cut_by = [method for method, count in pieces.items() if count > 1]
    if cut_by:
        print(f"   Cut apart by {' and '.join(cut_by)}: a semantic chunker reads each `key: value` line as a\n"
              "   sentence and may cut between them; rag6, which reads the Markdown, keeps it whole as one block.")


# %% [markdown]
# ## 8. The dial: how often breakpoints cut
#
# One setting decides how much the breakpoint method cuts: the percentile. At
# 90 a page is cut before the sentences whose distance from the one before is
# among its largest tenth; at 50, among its larger half, so more, smaller
# chunks. Change `PERCENTILES` and run the lab again: each value gives a row,
# recall within 1,000 tokens with its 95% interval and its difference from the
# lab's setting (90), paired over the same questions, and the lab says what
# the data shows between the lowest value and the highest.

# %%
PERCENTILES = (50, 75, 90, 97)  # the dial: breakpoint percentiles to measure, each between 0 and 100
SETTING = 90  # semantic_chunks' own percentile, the one the steps above measured


def check_dial(percentiles):
    """Refuse a dial that cannot run, before any measuring: each value a number from 0 to 100."""
    if not percentiles or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 100
                                  for p in percentiles):
        raise SystemExit(f"PERCENTILES must be numbers from 0 to 100, at least one; it is {percentiles!r}")


def step_dial(questions, pages, measured):
    """Recall within 1,000 tokens of breakpoint chunks at each percentile of PERCENTILES, with intervals."""
    print(f"\n6. The dial: breakpoints at percentiles {', '.join(map(str, PERCENTILES))}; recall within 1,000 tokens,\n"
          f"   {len(questions)} test questions, each difference paired over the same questions")
    values = sorted(set(PERCENTILES))
    reference = SETTING if SETTING in values else values[0]
    scores = {SETTING: measured}
    rows = []
    for percentile in values:
        chunks = [(doc_id, chunk) for doc_id, text in pages.items()
                  for chunk in semantic_chunks(text, MAX_TOKENS, "breakpoints", percentile=percentile)]
        if percentile not in scores:
            scores[percentile] = scored(chunks, questions, embedder_name())[1]
        rows.append((percentile, len(chunks), sum(c.n_tokens for _, c in chunks) / len(chunks)))
    print(f"   {'percentile':>10} {'chunks':>6} {'tokens':>6} {'recall [95%]':<18} "
          f"difference from {reference} [95%]: this percentile − {reference}")
    for percentile, count, tokens in rows:
        recall = harness.with_interval(harness.score_interval(vars(rag8), scores[percentile]))
        difference = rag8.paired_bootstrap(scores[reference], scores[percentile])
        print(f"   {percentile:>10} {count:>6} {tokens:>6.0f} {recall:<18} "
              + ("(the reference)" if percentile == reference else moved(difference)))
    if len(values) > 1:
        low, high = values[0], values[-1]
        say(f"From percentile {low} to {high}, recall within 1,000 tokens moves by "
            f"{moved(rag8.paired_bootstrap(scores[low], scores[high]), f'percentile {high}')}.")


def moved(difference, higher="this percentile"):
    """rag8's text of a difference, and, when its interval leaves 0 out, which way it goes."""
    if not harness.shows_a_difference(difference):
        return harness.difference_text(difference)
    return f"{harness.difference_text(difference)}: {higher} finds {'more' if difference.low > 0 else 'less'}"


def main():
    if embedder_name() != "wordllama":  # not the default: say which, before it is used
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), in every step\n")
    print("1. The pieces, checked on cases worked out by hand and on tricky texts")
    checks = Invariants("rag9")
    cases = PIECE_CASES + tricky_cases(semantic_chunks, check_semantic_chunks, SEMANTIC_SETTINGS)
    if not checks.check_cases("window_texts to semantic_chunks agree with the cases", cases):
        print("   A wrong piece makes every number after it wrong: fix it, then measure.")
        return checks.verdict()
    check_dial(PERCENTILES)
    pages = corpus_pages()
    questions = {q["id"]: q for q in corpus_questions()}
    text = pages[PAGE]
    step_distance_plot(text)
    chunks = step_show(text, questions)
    results, chunked, per_question = step_measure()
    step_plainly(corpus_questions("test"), per_question)
    step_dial(corpus_questions("test"), pages, per_question["semantic breakpoints"])

    print("\nInvariants")
    checks.check_chunks(
        "nothing lost, exact slices, every chunk within budget (both methods, all pages)",
        [
            (page, [chunk for page_id, chunk in chunked[name] if page_id == doc_id])
            for name in ("semantic breakpoints", "semantic global")
            for doc_id, page in pages.items()
        ],
        MAX_TOKENS,
    )
    checks.check("deterministic", semantic_chunks(text, MAX_TOKENS, "global") == chunks["global"])
    own = questions[QUESTION_ID]
    ranks = {method: rank_of_answer(made, own) for method, made in chunks.items()}
    checks.check(f"the top chunk for {own['question']!r} holds its answer (both methods)",
                 set(ranks.values()) == {1}, f"ranks {ranks}")
    # Last, the public grading tests (tests/grading/test_rag9.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


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
