# %% [markdown]
# # rag8: Which chunking wins? Measure it
#
# Four labs built four chunkers. Which one should a product use? Opinions are
# cheap; this lab measures, on the course's dataset: 44 pages of Orbit
# documentation and 176 questions, each labelled with the **character span**
# of its answer.
#
# Labels are spans, not chunk ids, on purpose. "Chunk 12 answers question 3"
# only means something for the chunking that made chunk 12; a span
# `[start, end)` in the page means the same thing for every chunking, which is
# what lets us compare them fairly.
#
# You write the metrics:
#
# - `recall_at_k`: the share of gold spans that one of the first k retrieved
#   chunks holds whole (a chunk holding half an answer cannot answer);
# - `coverage_at_k`: the share of the answer's *characters* the first k chunks
#   cover, whole or not (Chroma's evaluation calls this recall);
# - `mrr_at_k`: 1 / rank of the first chunk holding a gold span;
# - `precision_and_iou`: of the characters retrieved, how many are answer
#   (precision), and the overlap of retrieved and answer characters over their
#   union (IoU), as in Chroma's chunking evaluation. A strategy that retrieves
#   whole pages finds the answer often, but makes a model read a lot of
#   nothing: these two numbers show it.
#
# Recall@5 alone flatters big chunks: five whole pages are a tenth of this
# corpus. So we also measure recall **within a fixed budget of retrieved
# tokens** (1,000: what a prompt might spare for context), taking hits in rank
# order while they fit. That is the fair comparison between chunk sizes.

# %%
import time

from academy_llm import (corpus_pages, corpus_questions, count_tokens, embed, embed_cost, embedder_name, make_chunk,
                         top_k_each)
from labkit import Case, Invariants, load_lab, returns, run_lab, show_figure

rag4 = load_lab("rag4")
rag5 = load_lab("rag5")
rag6 = load_lab("rag6")
rag7 = load_lab("rag7")

# %% [markdown]
# ## 1. The metrics
#
# A retrieved chunk is a `Hit`: `(doc_id, start, end)`. A question's gold
# answer is one or more distinct spans `(doc_id, start, end)` (a
# "multi_section" question needs two places of its page). Results are lists
# of hits, best first.


# %%
def holds(hit, span):
    """True if the retrieved `hit` holds the whole gold `span`."""
    return hit[0] == span[0] and hit[1] <= span[1] and span[2] <= hit[2]


def recall_at_k(hits, gold, k):
    """The share of gold spans held whole by one of the first k hits."""
    if len(gold) == 0:
        return 0.0
    top = hits[:k]
    found = 0
    for span in gold:
        for hit in top:
            if holds(hit, span):
                found += 1
                break
    return found / len(gold)


def mrr_at_k(hits, gold, k):
    """1 / rank of the first of the first k hits that holds a gold span; 0 if none does."""
    top = hits[:k]
    for position in range(len(top)):
        for span in gold:
            if holds(top[position], span):
                return 1.0 / (position + 1)
    return 0.0


def within_budget(hits, hit_tokens, budget):
    """The hits, best first, that fit in `budget` tokens together (stopping at the first that does not)."""
    kept, used = [], 0
    for hit, tokens in zip(hits, hit_tokens):
        if used + tokens > budget:
            break
        kept.append(hit)
        used += tokens
    return kept


def merged(ranges):
    """Sorted, disjoint (doc_id, start, end) ranges covering the same characters."""
    result = []
    for doc_id, start, end in sorted(ranges):
        if result and result[-1][0] == doc_id and start <= result[-1][2]:
            result[-1] = (doc_id, result[-1][1], max(result[-1][2], end))
        else:
            result.append((doc_id, start, end))
    return result


def characters(ranges):
    """How many characters the (merged) ranges cover."""
    return sum(end - start for _, start, end in ranges)


def shared_characters(first, second):
    """Characters covered by both lists of merged ranges."""
    shared = 0
    for doc_id, start, end in first:
        for other_doc, other_start, other_end in second:
            if doc_id == other_doc:
                shared += max(0, min(end, other_end) - max(start, other_start))
    return shared


def coverage_at_k(hits, gold, k):
    """The share of the gold characters that the first k hits cover."""
    answer = merged(gold)
    answer_size = characters(answer)
    if answer_size == 0:
        return 0.0
    retrieved = merged(hits[:k])
    return shared_characters(retrieved, answer) / answer_size


def precision_and_iou(hits, gold, k):
    """(precision, IoU) of the characters of the first k hits against the gold characters.

    Overlapping hits count their shared characters once.
    """
    retrieved = merged(hits[:k])
    answer = merged(gold)
    retrieved_size = characters(retrieved)
    if retrieved_size == 0:
        return (0.0, 0.0)
    answer_size = characters(answer)
    both = shared_characters(retrieved, answer)
    precision = both / retrieved_size
    union = retrieved_size + answer_size - both
    iou = both / union
    return (precision, iou)


# %% [markdown]
# ## 2. Check the ruler before measuring
#
# A metric with a bug makes every comparison after it wrong, so we test the
# metrics first, on cases whose answers we worked out by hand: answers cut
# in two, hits on the wrong page, two gold spans, hits that overlap each
# other, nothing retrieved. If one disagrees, the lab stops there: the
# measurements would only measure the bug. At the end, two more checks on
# the real questions: a perfect retriever must score 1.0, and the same
# results in reverse order must score lower.

# %%
GOLD = [("faq", 100, 120)]
TWO_GOLD = [("faq", 100, 120), ("faq", 300, 340)]  # 20 + 40 characters
HITS = [("faq", 0, 50), ("faq", 90, 130), ("faq", 110, 200)]  # rank 2 holds the answer
OVERLAPPING = [("faq", 90, 130), ("faq", 110, 150)]  # together [90, 150): 60 characters, 20 answer

METRIC_CASES = [
    Case("a hit on the answer's second half only", recall_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.0)),
    Case("the right span on another page", recall_at_k, ([("install", 100, 120)], GOLD, 1),
         returns(0.0)),
    Case("the answer at rank 2", recall_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", recall_at_k, (HITS, GOLD, 2), returns(1.0)),
    Case("fewer hits than k", recall_at_k, (HITS, GOLD, 10), returns(1.0)),
    Case("two gold spans, one found", recall_at_k, ([("faq", 0, 130)], TWO_GOLD, 5), returns(0.5)),
    Case("two hits holding the same one of two spans", recall_at_k,
         ([("faq", 95, 125), ("faq", 100, 120)], TWO_GOLD, 2), returns(0.5)),
    Case("nothing retrieved", recall_at_k, ([], GOLD, 5), returns(0.0)),
    Case("the answer at rank 1", mrr_at_k, ([("faq", 100, 120)], GOLD, 1), returns(1.0)),
    Case("the answer at rank 2, past k", mrr_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", mrr_at_k, (HITS, GOLD, 3), returns(0.5)),
    Case("a hit on the answer's second half only", mrr_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.0)),
    Case("nothing retrieved", mrr_at_k, ([], GOLD, 5), returns(0.0)),
    Case("a hit on the answer's second half only", coverage_at_k, ([("faq", 110, 200)], GOLD, 1),
         returns(0.5)),
    Case("the answer at rank 2", coverage_at_k, (HITS, GOLD, 1), returns(0.0)),
    Case("the answer at rank 2", coverage_at_k, (HITS, GOLD, 2), returns(1.0)),
    Case("two hits covering the answer together, overlapping", coverage_at_k,
         ([("faq", 100, 115), ("faq", 105, 120)], GOLD, 2), returns(1.0)),
    Case("two overlapping hits covering part of the answer: [100, 112) once", coverage_at_k,
         ([("faq", 95, 110), ("faq", 105, 112)], GOLD, 2), returns(12 / 20)),
    Case("two gold spans, a quarter of the first covered", coverage_at_k,
         ([("faq", 115, 130)], TWO_GOLD, 1), returns(5 / 60)),
    Case("nothing retrieved", coverage_at_k, ([], GOLD, 5), returns(0.0)),
    Case("a perfect hit", precision_and_iou, (GOLD, GOLD, 1), returns((1.0, 1.0))),
    Case("90 characters at ranks 1 and 2, 20 of them the answer", precision_and_iou,
         (HITS, GOLD, 2), returns((20 / 90, 20 / 90))),
    Case("two hits overlapping each other", precision_and_iou, (OVERLAPPING, GOLD, 2),
         returns((20 / 60, 20 / 60))),
    Case("nothing retrieved", precision_and_iou, ([], GOLD, 5), returns((0.0, 0.0))),
]


# %% [markdown]
# ## 3. The strategies
#
# Eight ways to chunk, all at the same token budget where they have one:
# the whole page; paragraphs with the page title prepended (a common recipe);
# rag4's word and token windows; rag5's recursive splitter; rag6's
# Markdown-aware chunker; rag7's Markdown chunks with headers, and the same
# with rag7's option of a chunk per table row. Overlap is an eighth of the
# budget. Word windows get 3/4 of the budget in words (a word is about 1.3
# tokens in English).
#
# The last one, **header + table rows**, is the course's recommended chunker,
# so the tables of scores list it first: judged at equal reading cost (within
# 1,000 retrieved tokens) it finds the most. (The plot of chunk sizes, which
# costs a run per size, draws three of the simpler ones.) "markdown + header", the same chunks with
# each table kept whole, stays in as the comparison that shows why.

# %%
TITLE = "Orbit docs"
CHUNK_TOKENS = 256
PLOT_SIZES = (128, 256, 512)
K = 5
TOKEN_BUDGET = 1000
# Embedding cost at OpenAI's list price for text-embedding-3-small (USD 0.02 per
# million tokens), the price a reader would pay to index with a hosted model.
PRICE_PER_MILLION_TOKENS = 0.02
# The semantic embedder beside "hash": the course's choice; ACADEMY_EMBEDDER=hash keeps wordllama.
SEMANTIC = "wordllama" if embedder_name() == "hash" else embedder_name()
EMBEDDERS = (SEMANTIC, "hash")


def paragraphs_with_title(text, size):
    """One chunk per blank-line paragraph, embedded with the page's title before it."""
    title = rag6.front_matter(text)[0].get("title", "")
    cuts = [m.end() for m in rag5.SEAMS[0][1].finditer(text)]
    spans = zip([0] + cuts, cuts + [len(text)])
    return [make_chunk(text, start, end, header=title) for start, end in spans if start < end]


RECOMMENDED = "header + table rows"
STRATEGIES = {
    RECOMMENDED: lambda text, size: rag7.with_table_rows(text, rag7.header_chunks(text, TITLE, size, size // 8), size),
    "whole page": lambda text, size: [make_chunk(text, 0, len(text))],
    "paragraphs + title": paragraphs_with_title,
    "word windows": lambda text, size: rag4.word_windows(text, size * 3 // 4, size * 3 // 32),
    "token windows": lambda text, size: rag4.token_windows(text, size, size // 8),
    "recursive": lambda text, size: rag5.recursive_chunks(text, size, size // 8),
    "markdown": lambda text, size: rag6.markdown_chunks(text, size, size // 8),
    "markdown + header": lambda text, size: rag7.header_chunks(text, TITLE, size, size // 8),
}
PLOTTED = ("token windows", "recursive", "markdown + header")  # the plot's sizes cost a run each


# %% [markdown]
# ## 4. Evaluate
#
# Every page is chunked; all chunks of all pages go into one index (as in a
# real product: the retriever does not know which page to look in). Each
# question of the test split retrieves its top k chunks; the metrics are
# averaged per kind of question.

# %%
def chunk_corpus(strategy, size):
    """[(doc_id, Chunk)] for the whole corpus."""
    return [(doc_id, chunk) for doc_id, text in corpus_pages().items() for chunk in STRATEGIES[strategy](text, size)]


def gold_spans(question):
    return [(question["doc_id"], span["start"], span["end"]) for span in [question] + question.get("extra_spans", [])]


def embed_once(texts, embedder):
    """embed(), each distinct text once per run: strategies share chunks, and every table ranks the same questions."""
    missing = list(dict.fromkeys(text for text in texts if (embedder, text) not in EMBEDDED))
    EMBEDDED.update(zip(((embedder, text) for text in missing), embed(missing, embedder)))
    return [EMBEDDED[embedder, text] for text in texts]


EMBEDDED = {}


def rankings(chunks, questions, embedder, depth=50):
    """For each question, its best `depth` chunks as (doc_id, start, end) hits, best first."""
    vectors = embed_once([chunk.embedding_text for _, chunk in chunks], embedder)
    question_vectors = embed_once([q["question"] for q in questions], embedder)
    return [[(row, chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in ranked]
            for ranked in top_k_each(question_vectors, vectors, depth)]


def evaluate(chunks, questions, embedder, k=K):
    """{kind: {metric: mean}} (and "all") for one chunked corpus and one embedder."""
    found = []
    for ranked in rankings(chunks, questions, embedder):
        hits = [hit for _, *hit in ranked]
        found.append((hits, within_budget(hits, [chunks[row][1].n_tokens for row, *_ in ranked], TOKEN_BUDGET)))
    return score_hits(questions, found, k)


def score_hits(questions, found, k=K):
    """{kind: {metric: mean}} (and "all") of each question's (hits best first, those within TOKEN_BUDGET)."""
    scores = {}
    for question, (hits, affordable) in zip(questions, found):
        gold = gold_spans(question)
        precision, iou = precision_and_iou(hits, gold, k)
        row = {"recall@1": recall_at_k(hits, gold, 1), f"recall@{k}": recall_at_k(hits, gold, k),
               f"MRR@{k}": mrr_at_k(hits, gold, k), f"coverage@{k}": coverage_at_k(hits, gold, k),
               "precision": precision, "IoU": iou,
               "recall@1k tokens": recall_at_k(affordable, gold, len(affordable)) if affordable else 0.0}
        for kind in (question["kind"], "all"):
            scores.setdefault(kind, []).append(row)
    return {kind: {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]} for kind, rows in scores.items()}


def corpus_cost(chunks):
    """(number of chunks, mean tokens embedded per chunk, USD to embed them all)."""
    tokens = [count_tokens(chunk.embedding_text) if chunk.header else chunk.n_tokens for _, chunk in chunks]
    return len(tokens), sum(tokens) / len(tokens), sum(tokens) * PRICE_PER_MILLION_TOKENS / 1e6


def step_overall(questions):
    """The main table: every strategy with both embedders, over all test questions."""
    print(f"\n2. {len(questions)} test questions, top {K} of all chunks of all pages, "
          f"chunks of {CHUNK_TOKENS} tokens")
    print(f"   {'strategy':<19} {'embedder':<9} {'R@1':>5} {'R@5':>5} {'cov@5':>5} {'MRR@5':>6} {'R@1kt':>6} "
          f"{'prec':>6} {'IoU':>6} {'chunks':>6} {'tokens':>6} {'cost $':>7}")
    results, chunked = {}, {}
    for strategy in STRATEGIES:
        chunks = chunked[strategy] = chunk_corpus(strategy, CHUNK_TOKENS)
        count, mean_tokens, cost = corpus_cost(chunks)
        for embedder in EMBEDDERS:
            result = evaluate(chunks, questions, embedder)
            results[strategy, embedder] = result
            a = result["all"]
            print(f"   {strategy:<19} {embedder:<9} {a['recall@1']:>5.2f} {a['recall@5']:>5.2f} "
                  f"{a['coverage@5']:>5.2f} {a['MRR@5']:>6.2f} {a['recall@1k tokens']:>6.2f} {a['precision']:>6.3f} "
                  f"{a['IoU']:>6.3f} {count:>6} {mean_tokens:>6.0f} {cost:>7.4f}")
    print(f"   cov@5: share of answer characters in the top {K}; R@1kt: recall within {TOKEN_BUDGET} "
          f"retrieved tokens;\n   prec and IoU over the top {K};"
          f" cost at USD {PRICE_PER_MILLION_TOKENS} per million tokens")
    return results, chunked


KINDS = ("prose", "identifier", "table", "code", "multi_section", "all")


def step_by_kind(step, results, metric, embedder=SEMANTIC):
    """Step `step`: one metric per kind of question, a row per strategy."""
    print(f"\n{step}. {metric} by kind of question ({embedder})")
    print(f"   {'strategy':<19} " + " ".join(f"{kind[:10]:>10}" for kind in KINDS))
    for strategy in STRATEGIES:
        row = results[strategy, embedder]
        print(f"   {strategy:<19} " + " ".join(f"{row[kind][metric]:>10.2f}" for kind in KINDS))


def winners(results, metric, embedder=SEMANTIC):
    """{kind: best strategy} by `metric`; ties go to the higher IoU (less text to read)."""
    return {
        kind: max(STRATEGIES, key=lambda s: (results[s, embedder][kind][metric], results[s, embedder][kind]["IoU"]))
        for kind in KINDS
    }


def step_plot(questions, results):
    """Recall against chunk size, two ways, for three sized strategies (SEMANTIC): inline or a PNG."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 4), layout="constrained")
    by_rank, by_budget = figure.subplots(1, 2, sharey=True)
    for strategy in PLOTTED:
        scores = [results[strategy, SEMANTIC]["all"] if size == CHUNK_TOKENS
                  else evaluate(chunk_corpus(strategy, size), questions, SEMANTIC)["all"] for size in PLOT_SIZES]
        by_rank.plot(PLOT_SIZES, [score[f"recall@{K}"] for score in scores], marker="o", label=strategy)
        by_budget.plot(PLOT_SIZES, [score["recall@1k tokens"] for score in scores], marker="o", label=strategy)
    for axes, title in ((by_rank, f"recall@{K}: flatters big chunks"),
                        (by_budget, f"recall within {TOKEN_BUDGET:,} tokens: equal reading")):
        axes.set_xscale("log", base=2)
        axes.set_xticks(PLOT_SIZES, [str(size) for size in PLOT_SIZES])
        axes.set_xlabel("chunk size (tokens)")
        axes.set_title(title)
        axes.grid(alpha=0.3)
    by_rank.set_ylabel(f"recall (test questions, {SEMANTIC})")
    by_rank.legend()
    print(f"\n5. Recall against chunk size: in the top {K}, and within {TOKEN_BUDGET:,} tokens")
    show_figure(figure, "rag8-recall-vs-chunk-size.png")


def announce_embedder(questions):
    """With real embeddings, the model and what the run will cost, before anything is sent."""
    from labkit.openai_embedder import settings

    sized = [(strategy, CHUNK_TOKENS) for strategy in STRATEGIES]
    sized += [(strategy, size) for strategy in PLOTTED for size in PLOT_SIZES if size != CHUNK_TOKENS]
    texts = [chunk.embedding_text for strategy, size in sized for _, chunk in chunk_corpus(strategy, size)]
    texts = list(dict.fromkeys(texts + [q["question"] for q in questions]))
    cost, limit = embed_cost(texts), settings().max_cost
    print(f"Embedder: openai, {settings().describe()}; {len(texts):,} texts, of which those not cached "
          f"yet cost about USD {cost:.4f}\n")
    if cost > limit:
        raise SystemExit(f"that is over ACADEMY_MAX_COST=${limit:g}; nothing was sent. To run it, raise the "
                         f"limit (ACADEMY_MAX_COST={2 * cost:.2f}) or use a local server (OPENAI_BASE_URL)")


def main():
    if SEMANTIC == "openai":
        announce_embedder(corpus_questions("test"))
    print("1. The metrics, checked on cases worked out by hand")
    checks = Invariants("rag8")
    if not checks.check_cases("the metrics agree with values worked out by hand", METRIC_CASES):
        print("   A wrong metric makes every number after it wrong: fix it, then measure.")
        return checks.verdict()

    questions = corpus_questions("test")
    started = time.perf_counter()
    results, chunked = step_overall(questions)
    step_by_kind(3, results, "recall@5")
    step_by_kind(4, results, "recall@1k tokens")
    step_plot(questions, results)

    print(f"\n6. What the numbers say ({SEMANTIC}): the best strategy for each kind of question")
    print(f"   {'kind':<14} {'within 1,000 tokens':<32} {'in the top 5':<32}")
    fair, top5 = winners(results, "recall@1k tokens"), winners(results, "recall@5")
    for kind in KINDS:
        by_budget = f"{fair[kind]} ({results[fair[kind], SEMANTIC][kind]['recall@1k tokens']:.2f})"
        by_rank = f"{top5[kind]} ({results[top5[kind], SEMANTIC][kind]['recall@5']:.2f})"
        print(f"   {kind:<14} {by_budget:<32} {by_rank:<32}")
    print(f"   (evaluation took {time.perf_counter() - started:.1f} s)")
    rows, whole = results[RECOMMENDED, SEMANTIC], results["markdown + header", SEMANTIC]
    budget = "recall@1k tokens"
    print(f"   Recommended: {RECOMMENDED}, {rows['all'][budget]:.2f} of all answers within {TOKEN_BUDGET:,} tokens;\n"
          f"   on tables {rows['table'][budget]:.2f}, where the same chunks with tables whole find "
          f"{whole['table'][budget]:.2f}")

    print("\nInvariants")
    perfect = [gold_spans(q) for q in questions]
    checks.check(
        "a perfect retriever scores 1.0",
        all(recall_at_k(g, g, K) == mrr_at_k(g, g, K) == precision_and_iou(g, g, K)[1] == 1.0 for g in perfect),
    )
    reversed_mrr = reversed_ranking_mrr(questions, chunked["markdown + header"])
    checks.check("a reversed ranking scores lower", reversed_mrr[1] < reversed_mrr[0],
                 f"MRR@{K} {reversed_mrr[0]:.3f} best first, {reversed_mrr[1]:.3f} reversed")
    whole, headed = results["whole page", SEMANTIC]["all"], results["markdown + header", SEMANTIC]["all"]
    checks.check(
        "whole pages retrieve more text than they answer",
        whole["IoU"] < headed["IoU"],
        f"IoU {whole['IoU']:.3f} for whole pages, {headed['IoU']:.3f} for markdown + header",
    )
    return checks.verdict()


def reversed_ranking_mrr(questions, chunks):
    """MRR@K of markdown + header chunks, ranked best first and then in reverse order."""
    totals = [0.0, 0.0]
    for question, ranked in zip(questions, rankings(chunks, questions, SEMANTIC, len(chunks))):
        hits = [hit for _, *hit in ranked]
        totals[0] += mrr_at_k(hits, gold_spans(question), K)
        totals[1] += mrr_at_k(hits[::-1], gold_spans(question), K)
    return totals[0] / len(questions), totals[1] / len(questions)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag8-evaluate-chunking.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 recall_at_k` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "recall_at_k")`.

# %%
# paired_bootstrap, written apart from the reference from the handout's docstring alone.
import math
import numbers
import random
from typing import NamedTuple

RESAMPLES = 2000  # bootstrap draws: enough for two decimals, a fraction of a second


class Interval(NamedTuple):
    """A mean with its percentile bootstrap interval (paired_bootstrap)."""

    estimate: float  # the mean measured on the questions as they are
    low: float  # the interval's lower end
    high: float  # its upper end
    level: float  # its confidence level: 0.95 for a 95% interval


def _is_number(x):
    # bool is an int subclass; numpy's bool_ is not a numbers.Real, so this refuses both.
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


def _check_types(name, values):
    try:
        items = list(values)
    except TypeError:
        raise TypeError(
            f"{name} must be a sequence of numbers, not {type(values).__name__}: pass a list of scores"
        ) from None
    for i, x in enumerate(items):
        if not _is_number(x):
            raise TypeError(
                f"{name}[{i}] is {type(x).__name__} {x!r}, not a number: give every score as an int or float"
            )
    return items


def _check_finite(name, items):
    for i, x in enumerate(items):
        if not math.isfinite(x):
            raise ValueError(f"{name}[{i}] is {x!r}: every score must be a finite number, not NaN or infinite")


def _quantile(sorted_values, q):
    """Linear interpolation between the closest ranks (numpy.quantile's default)."""
    position = q * (len(sorted_values) - 1)
    below = math.floor(position)
    above = min(below + 1, len(sorted_values) - 1)
    fraction = position - below
    return sorted_values[below] + fraction * (sorted_values[above] - sorted_values[below])


def paired_bootstrap(a, b, *, resamples=RESAMPLES, level=0.95, seed=0):
    """How much method b scores above method a on the same questions, with its bootstrap interval.

    `a[i]` and `b[i]` are the two methods' scores on question i (each question's
    recall, say). Returns Interval(estimate, low, high, level):

    - estimate: the mean of the differences b[i] - a[i] over all the questions,
      that is mean(b) - mean(a): positive when b scores higher.
    - low, high: the percentile interval. Draw `resamples` resamples; each is
      len(a) question indices drawn uniformly at random with replacement, and
      the SAME indices pick both methods' scores (paired: a question's two
      scores stay together). The mean of b[i] - a[i] over a resample's indices
      is that resample's difference. `low` is the (1 - level) / 2 quantile of
      the resamples' differences and `high` their (1 + level) / 2 quantile: the
      2.5% and 97.5% quantiles for level 0.95. Any usual definition of a sample
      quantile will do (numpy.quantile's, or the value at that rank of the
      sorted differences).
    - level: the level asked for.

    The draws come from a random generator seeded with `seed`, so the same a, b,
    resamples, level and seed give the same Interval every time; which
    generator, and the order of the draws, are yours to choose.

    Bad input is refused in one line: a score that is not a number (a bool or
    a str is not) or `resamples` that is not an int (nor a bool), TypeError; a
    and b of different lengths or empty, a score that is NaN or infinite,
    resamples below 1, or a level not strictly between 0 and 1, ValueError.
    """
    a = _check_types("a", a)
    b = _check_types("b", b)
    if not isinstance(resamples, numbers.Integral) or isinstance(resamples, bool):
        raise TypeError(f"resamples must be an int, not {type(resamples).__name__} {resamples!r}")
    if not isinstance(level, numbers.Real):  # a bool level is 0 or 1: a ValueError below
        raise TypeError(f"level must be a number strictly between 0 and 1, not {type(level).__name__} {level!r}")
    if len(a) != len(b):
        raise ValueError(f"a has {len(a)} scores and b {len(b)}: give both methods' scores on the same questions")
    if not a:
        raise ValueError("a and b are empty: give at least one question's scores")
    _check_finite("a", a)
    _check_finite("b", b)
    if resamples < 1:
        raise ValueError(f"resamples is {resamples}: draw at least 1 resample")
    if not 0 < level < 1:
        raise ValueError(f"level is {level!r}: give a level strictly between 0 and 1, such as 0.95")

    n = len(a)
    differences = [float(y) - float(x) for x, y in zip(a, b)]
    estimate = math.fsum(differences) / n

    rng = random.Random(seed)
    means = []
    for _ in range(resamples):
        # n questions drawn uniformly with replacement; each draw keeps its two scores paired,
        # since it picks the question's difference b[i] - a[i].
        drawn = rng.choices(differences, k=n)
        means.append(sum(drawn) / n)
    means.sort()

    low = _quantile(means, (1 - level) / 2)
    high = _quantile(means, (1 + level) / 2)
    return Interval(float(estimate), float(low), float(high), float(level))


# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag8")  # labs/hints/rag8.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
