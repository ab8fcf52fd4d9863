"""rag8's given ground: the chunkings it compares (the earlier labs' chunks of the course's pages,
shipped as data: labkit/ground.py), the retrieval they are scored on, the tables and sentences a run
prints, the embedder dial (a static and a contextual model on the same chunks), and the checks the
lab ends with. A curious student may read it; the lab is learnt without it.

Every score here is computed by the student's own metrics and every interval by the student's own
paired_bootstrap, taken from the lab's globals(): this module holds no metric and no bootstrap. The
one interval it computes itself, between two groups of *different* questions (where a paired
bootstrap does not apply), is labkit.uncertainty's normal approximation.
"""

from __future__ import annotations

import math
import re
from statistics import NormalDist

from academy_llm import corpus_pages, count_tokens, embed, embed_cost, make_chunk, top_k_each
from labkit import ground
from labkit.cases import Case, Invariants, returns
from labkit.lessons.dial import say
from labkit.markdown import front_matter
from labkit.retrieval import gold_spans
from labkit.seams import SEAMS
from labkit.uncertainty import NOT_SHOWN, Interval, mean_interval

K = 5  # recall@5, MRR@5, ...: the top k chunks
TOKEN_BUDGET = 1000  # recall within 1,000 retrieved tokens: the fair comparison, at equal reading cost
BUDGET = "recall@1k tokens"
CHUNK_TOKENS = 256  # the chunk size of every chunking compared (word windows: 3/4 of it, in words)
TITLE = "Orbit docs"
KINDS = ("prose", "identifier", "table", "code", "multi_section", "all")
# Embedding cost at OpenAI's list price for text-embedding-3-small (USD 0.02 per million tokens).
PRICE_PER_MILLION_TOKENS = 0.02


# --------------------------------------------------------------------------
# Spans: what the metrics stand on
# --------------------------------------------------------------------------

def holds(hit, span):
    """True if the retrieved `hit` (doc_id, start, end) holds the whole gold `span`."""
    return hit[0] == span[0] and hit[1] <= span[1] and span[2] <= hit[2]


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


def within_budget(hits, hit_tokens, budget):
    """The hits, best first, that fit in `budget` tokens together (stopping at the first that does not)."""
    kept, used = [], 0
    for hit, tokens in zip(hits, hit_tokens):
        if used + tokens > budget:
            break
        kept.append(hit)
        used += tokens
    return kept


# --------------------------------------------------------------------------
# Intervals, as the tables print them (labkit.uncertainty.Interval's one rule for digits)
# --------------------------------------------------------------------------

def as_interval(result) -> Interval:
    """What a paired_bootstrap returned (any object with estimate, low, high, level) as labkit's Interval."""
    return Interval(*(float(getattr(result, name)) for name in ("estimate", "low", "high", "level")))


def shows_a_difference(interval) -> bool:
    """Whether this data shows which of two methods scores higher: the interval leaves 0 out."""
    return as_interval(interval).shown


def with_interval(interval) -> str:
    """'0.74 [0.66, 0.82]': a score and its interval."""
    return as_interval(interval).plain()


def difference_text(interval) -> str:
    """'+0.09 [+0.04, +0.14]', or '-0.01 [-0.05, +0.03] not shown by this data' when it holds 0; the
    digits are those the verdict needs (Interval.__str__: '[+0.001, +0.040]' leaves 0 out)."""
    interval = as_interval(interval)
    return str(interval) if interval.shown else f"{interval} {NOT_SHOWN}"


def score_interval(lab, scores) -> Interval:
    """One method's mean with its interval: the lab's paired bootstrap against a method scoring 0."""
    return as_interval(lab["paired_bootstrap"]([0.0] * len(scores), [float(s) for s in scores]))


def difference(lab, a, b) -> Interval:
    """mean(b - a) over the same questions, with the lab's paired bootstrap interval."""
    return as_interval(lab["paired_bootstrap"]([float(s) for s in a], [float(s) for s in b]))


# --------------------------------------------------------------------------
# The chunkings compared: the earlier labs' chunks of the course's pages, shipped (labkit/ground.py)
# --------------------------------------------------------------------------

def paragraphs_with_title(text):
    """One chunk per blank-line paragraph, embedded with the page's title before it (a common recipe)."""
    title = front_matter(text)[0].get("title", "")
    cuts = [m.end() for m in SEAMS[0][1].finditer(text)]
    return [make_chunk(text, start, end, header=title) for start, end in zip([0] + cuts, cuts + [len(text)])
            if start < end]


def chunk_corpus(strategy, size=CHUNK_TOKENS):
    """[(doc_id, Chunk)] of the whole corpus for one of STRATEGIES, cut at `size` tokens (256 only)."""
    if size != CHUNK_TOKENS:
        raise ValueError(f"the course ships its chunkings at {CHUNK_TOKENS} tokens, not {size}")
    return [(page, chunk) for page, chunks in STRATEGIES[strategy]().items() for chunk in chunks]


def recommended_chunks(rag7, text, size, title=TITLE):
    """The course's recommended chunker on any text, by the lab `rag7` given: its chunks with their
    header, a chunk per table row, overlap an eighth (rag10 cuts pages the course does not ship)."""
    return rag7.with_table_rows(text, rag7.header_chunks(text, title, size, size // 8), size)


RECOMMENDED = "header + table rows"
STRATEGIES = {  # name -> {page: chunks}; the earlier labs' at 256 tokens, overlap an eighth
    RECOMMENDED: lambda: ground.chunks("rag7-rows-256"),
    "whole page": lambda: {page: [make_chunk(text, 0, len(text))] for page, text in corpus_pages().items()},
    "paragraphs + title": lambda: {page: paragraphs_with_title(text) for page, text in corpus_pages().items()},
    "word windows": lambda: ground.chunks("rag4-words-256"),
    "token windows": lambda: ground.chunks("rag4-tokens-256"),
    "recursive": lambda: ground.chunks("rag5-256"),
    "markdown": lambda: ground.chunks("rag6-256"),
    "markdown + header": lambda: ground.chunks("rag7-header-256"),
}


# --------------------------------------------------------------------------
# Retrieval and scoring (the scores are the lab's metrics)
# --------------------------------------------------------------------------

EMBEDDED = {}


def embed_once(texts, embedder):
    """embed(), each distinct text once per run: strategies share chunks, and every table ranks the same questions."""
    missing = list(dict.fromkeys(text for text in texts if (embedder, text) not in EMBEDDED))
    if missing:
        EMBEDDED.update(zip(((embedder, text) for text in missing), embed(missing, embedder)))
    return [EMBEDDED[embedder, text] for text in texts]


def rankings(chunks, questions, embedder, depth=50):
    """For each question, its best `depth` chunks as (row, doc_id, start, end), best first."""
    vectors = embed_once([chunk.embedding_text for _, chunk in chunks], embedder)
    question_vectors = embed_once([q["question"] for q in questions], embedder)
    return [[(row, chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in ranked]
            for ranked in top_k_each(question_vectors, vectors, depth)]


def found_hits(chunks, questions, embedder):
    """Each question's (hits best first, those of them within TOKEN_BUDGET)."""
    found = []
    for ranked in rankings(chunks, questions, embedder):
        hits = [hit for _, *hit in ranked]
        found.append((hits, within_budget(hits, [chunks[row][1].n_tokens for row, *_ in ranked], TOKEN_BUDGET)))
    return found


def question_scores(lab, questions, found, k=K):
    """[{metric: score}], a row per question, by the lab's metrics: what the means average and the
    bootstrap resamples."""
    rows = []
    for question, (hits, affordable) in zip(questions, found):
        gold = gold_spans(question)
        precision, iou = lab["precision_and_iou"](hits, gold, k)
        rows.append({"recall@1": lab["recall_at_k"](hits, gold, 1), f"recall@{k}": lab["recall_at_k"](hits, gold, k),
                     f"MRR@{k}": lab["mrr_at_k"](hits, gold, k), f"coverage@{k}": lab["coverage_at_k"](hits, gold, k),
                     "precision": precision, "IoU": iou,
                     BUDGET: lab["recall_at_k"](affordable, gold, len(affordable)) if affordable else 0.0})
    return rows


def mean_scores(questions, rows):
    """{kind: {metric: mean}} (and "all") of the questions' rows of scores."""
    scores = {}
    for question, row in zip(questions, rows):
        for kind in (question["kind"], "all"):
            scores.setdefault(kind, []).append(row)
    return {kind: {name: sum(r[name] for r in rows) / len(rows) for name in rows[0]} for kind, rows in scores.items()}


def score_hits(lab, questions, found, k=K):
    """{kind: {metric: mean}} (and "all") of each question's (hits best first, those within TOKEN_BUDGET)."""
    return mean_scores(questions, question_scores(lab, questions, found, k))


def evaluate(lab, chunks, questions, embedder, k=K):
    """{kind: {metric: mean}} (and "all") for one chunked corpus and one embedder, by the lab's metrics."""
    return score_hits(lab, questions, found_hits(chunks, questions, embedder), k)


def per_question(rows, metric, questions=None, kind="all"):
    """One metric's scores, a question each, of the questions of `kind` (every one for "all")."""
    return [row[metric] for number, row in enumerate(rows) if kind == "all" or questions[number]["kind"] == kind]


def corpus_cost(chunks):
    """(number of chunks, mean tokens embedded per chunk, USD to embed them all)."""
    tokens = [count_tokens(chunk.embedding_text) if chunk.header else chunk.n_tokens for _, chunk in chunks]
    return len(tokens), sum(tokens) / len(tokens), sum(tokens) * PRICE_PER_MILLION_TOKENS / 1e6


# --------------------------------------------------------------------------
# What a run prints: the chunkings compared
# --------------------------------------------------------------------------

def compare_chunkings(lab, questions, strategies, embedder):
    """Steps 2-5: every chunking scored by the lab's metrics, by kind, with intervals, and what the
    numbers say. Returns (rows {strategy: per-question scores}, chunked {strategy: chunks})."""
    unknown = [name for name in strategies if name not in STRATEGIES]
    if unknown or RECOMMENDED not in strategies or len(strategies) < 2:
        raise ValueError(f"STRATEGIES must name {RECOMMENDED!r}, the baseline, and at least one more of: "
                         f"{', '.join(STRATEGIES)}" + (f" (not {', '.join(map(repr, unknown))})" if unknown else ""))
    if embedder == "openai":
        announce_cost(strategies, questions)
    print(f"\n2. {len(questions)} test questions, top {K} of all chunks of all pages, chunks of {CHUNK_TOKENS} "
          f"tokens, embedder {embedder}")
    print(f"   {'strategy':<19} {'R@1':>5} {'R@5':>5} {'cov@5':>5} {'MRR@5':>6} {'R@1kt':>6} "
          f"{'prec':>6} {'IoU':>6} {'chunks':>6} {'tokens':>6} {'cost $':>7}")
    rows, chunked, results = {}, {}, {}
    for strategy in strategies:
        chunks = chunked[strategy] = chunk_corpus(strategy)
        count, mean_tokens, cost = corpus_cost(chunks)
        rows[strategy] = question_scores(lab, questions, found_hits(chunks, questions, embedder))
        results[strategy] = mean_scores(questions, rows[strategy])
        a = results[strategy]["all"]
        print(f"   {strategy:<19} {a['recall@1']:>5.2f} {a['recall@5']:>5.2f} {a['coverage@5']:>5.2f} "
              f"{a['MRR@5']:>6.2f} {a[BUDGET]:>6.2f} {a['precision']:>6.3f} {a['IoU']:>6.3f} {count:>6} "
              f"{mean_tokens:>6.0f} {cost:>7.4f}")
    print(f"   cov@5: share of answer characters in the top {K}; R@1kt: recall within {TOKEN_BUDGET} "
          f"retrieved tokens;\n   prec and IoU over the top {K}; cost at USD {PRICE_PER_MILLION_TOKENS} "
          "per million tokens")
    if "word windows" in chunked:
        say_word_windows(chunked["word windows"])
    for step, metric in ((3, "recall@5"), (4, BUDGET)):
        print(f"\n{step}. {metric} by kind of question ({embedder})")
        print(f"   {'strategy':<19} " + " ".join(f"{kind[:10]:>10}" for kind in KINDS))
        for strategy in strategies:
            print(f"   {strategy:<19} " + " ".join(f"{results[strategy][kind][metric]:>10.2f}" for kind in KINDS))
    intervals(lab, questions, rows, embedder)
    winners(lab, questions, results, rows, embedder)
    return rows, chunked


def say_word_windows(chunks):
    """What word windows hold in tokens, read from their chunks: words do not keep a token budget."""
    tokens = [chunk.n_tokens for _, chunk in chunks]
    over = sum(count > CHUNK_TOKENS for count in tokens)
    words = sum(len(chunk.text.split()) for _, chunk in chunks)
    print(f"   word windows: {CHUNK_TOKENS * 3 // 4} words a window, {sum(tokens) / len(tokens):.0f} tokens a chunk "
          f"on average,\n   {over} of {len(tokens)} chunks over the {CHUNK_TOKENS}-token budget: a word of these "
          f"docs is {sum(tokens) / words:.2f} tokens,\n   so a budget in words is not one in tokens")


def intervals(lab, questions, rows, embedder):
    """Step 5: recall within the budget with its interval, and each strategy's difference from RECOMMENDED."""
    print(f"\n5. {BUDGET} with its 95% interval ({embedder}), and each strategy's difference from {RECOMMENDED}")
    print(f"   {'strategy':<19} {'recall [95%]':<18} difference [95%]: strategy − {RECOMMENDED}")
    baseline = per_question(rows[RECOMMENDED], BUDGET)
    for strategy, scores in rows.items():
        scores = per_question(scores, BUDGET)
        against = "(the baseline)" if strategy == RECOMMENDED else difference_text(difference(lab, baseline, scores))
        print(f"   {strategy:<19} {with_interval(score_interval(lab, scores)):<18} {against}")
    print(f"   {len(questions)} questions: one question found or missed moves recall by {1 / len(questions):.3f}.\n"
          f"   A difference below 0 finds less than {RECOMMENDED}.\n"
          f"   A difference whose interval holds 0 is {NOT_SHOWN}: more questions might show one.")


def winners(lab, questions, results, rows, embedder):
    """Step 6: for each kind, the best strategy, named only where this data shows it ahead of the next."""
    print(f"\n6. What the numbers say ({embedder}): for each kind of question, the best strategy, named only\n"
          f"   where the paired 95% interval of its lead over the next (best − next) leaves 0 out")
    print(f"   {'kind':<14} {'in the top 5':<28} within 1,000 tokens, and the lead it is named by")
    for kind in KINDS:
        cells = []
        for metric in ("recall@5", BUDGET):
            best, second = sorted(rows, key=lambda s: (results[s][kind][metric], results[s][kind]["IoU"]),
                                  reverse=True)[:2]
            lead = difference(lab, *(per_question(rows[s], metric, questions, kind) for s in (second, best)))
            cells.append(f"{best} ({results[best][kind][metric]:.2f})" if lead.shown else "no best shown")
        print(f"   {kind:<14} {cells[0]:<28} {cells[1]}\n"
              f"   {'':<14} {'':<28} {best} − {second}: {difference_text(lead)}")
    recommended, whole = rows[RECOMMENDED], rows.get("markdown + header")
    print(f"   Recommended: {RECOMMENDED}, {with_interval(score_interval(lab, per_question(recommended, BUDGET)))} "
          f"of all answers within {TOKEN_BUDGET:,} tokens.")
    if whole:
        tables = [per_question(r, BUDGET, questions, "table") for r in (whole, recommended)]
        print(f"   On tables {with_interval(score_interval(lab, tables[1]))}, where the same chunks with tables "
              f"whole find {with_interval(score_interval(lab, tables[0]))}:\n"
              f"   {RECOMMENDED} − markdown + header: {difference_text(difference(lab, *tables))}")


def announce_cost(strategies, questions):
    """With real embeddings, the model and what the run will cost, before anything is sent."""
    from labkit.openai_embedder import settings

    texts = [chunk.embedding_text for strategy in strategies for _, chunk in chunk_corpus(strategy)]
    texts = list(dict.fromkeys(texts + [q["question"] for q in questions]))
    cost, limit = embed_cost(texts), settings().max_cost
    print(f"Embedder: openai, {settings().describe()}; {len(texts):,} texts, of which those not cached "
          f"yet cost about USD {cost:.4f}")
    if cost > limit:
        raise SystemExit(f"that is over ACADEMY_MAX_COST=${limit:g}; nothing was sent. To run it, raise the "
                         f"limit (ACADEMY_MAX_COST={2 * cost:.2f}) or use a local server (OPENAI_BASE_URL)")


# --------------------------------------------------------------------------
# The embedder dial: the same chunks and questions, another embedder
# --------------------------------------------------------------------------
# A content word is a run of letters or digits, lowercased, three characters or more, and not a stop
# word; a question's overlap is how many distinct content words it shares with its gold spans (all of
# them, for a multi_section question). tools/questions.py measures the dataset with the same rule.

STOP_WORDS = frozenset(
    """
    about above after again against all also and any are aren because been before being below between both
    but can cannot could did does doing don down during each few for from further had has have having her
    here hers herself him himself his how into its itself just let more most must mustn not now off once
    only other our ours ourselves out over own same shall she should so some such than that the their
    theirs them themselves then there these they this those through too under until upon very was wasn
    were what when where which while who whom why will with won would you your yours yourself yourselves
    get gets got one use used uses using way ways need needs want wants make makes like may might
    """.split()
)
OWN_WORDS = 1  # a question sharing at most this many content words with its answer is in a user's own words


def content_words(text: str) -> set[str]:
    """The distinct content words of `text`: letters or digits, lowercased, 3+ characters, no stop word."""
    return {word for word in re.findall(r"[a-z0-9]+", text.lower()) if len(word) >= 3 and word not in STOP_WORDS}


def word_overlap(question: dict, pages: dict | None = None) -> int:
    """How many content words `question` shares with the text of its gold spans."""
    pages = pages or corpus_pages()
    answer = " ".join(pages[page][start:end] for page, start, end in gold_spans(question))
    return len(content_words(question["question"]) & content_words(answer))


def groups(questions) -> dict[str, list[int]]:
    """{label: question numbers}: each kind, the two groups by word overlap, and all."""
    pages = corpus_pages()
    overlaps = [word_overlap(question, pages) for question in questions]
    found = {kind: [n for n, q in enumerate(questions) if q["kind"] == kind] for kind in KINDS[:-1]}
    found[f"shares ≤ {OWN_WORDS} word"] = [n for n, shared in enumerate(overlaps) if shared <= OWN_WORDS]
    found[f"shares ≥ {OWN_WORDS + 1} words"] = [n for n, shared in enumerate(overlaps) if shared > OWN_WORDS]
    found["all"] = list(range(len(questions)))
    return found


def group_difference(scores, first, second) -> Interval:
    """mean of `scores` over the questions numbered `first` less their mean over `second`: two groups of
    different questions, with the normal approximation's 95% interval (labkit.uncertainty's rule; a
    paired bootstrap needs the same questions)."""
    means = [mean_interval([scores[n] for n in numbers]) for numbers in (first, second)]
    z = NormalDist().inv_cdf(0.975)
    spread = math.hypot(*((m.high - m.estimate) / z for m in means)) * z
    estimate = means[0].estimate - means[1].estimate
    return Interval(estimate, estimate - spread, estimate + spread)


def embedder_dial(lab, questions, strategy, embedders) -> dict[str, list[float]]:
    """Step 7: `strategy`'s chunks retrieved by each embedder; recall within the budget by kind and by
    word overlap, each embedder's difference from the first (paired), and the sentences the intervals
    support. Returns {embedder: per-question recall within the budget}."""
    if not embedders:
        raise ValueError("EMBEDDERS must name at least one embedder: wordllama, minilm, hash or openai")
    chunks = chunk_corpus(strategy)
    scores = {embedder: per_question(question_scores(lab, questions, found_hits(chunks, questions, embedder)), BUDGET)
              for embedder in embedders}
    first, others = embedders[0], embedders[1:]
    grouped = groups(questions)
    print(f"\n7. The embedder dial: recall within {TOKEN_BUDGET:,} tokens of {strategy} chunks, the same "
          "questions;\n   'shares ≤ 1 word': the question shares at most one content word with its answer\n"
          "   (a run of letters or digits, 3+ characters, not a stop word): asked in the user's own words")
    header = f"   {'questions (n)':<22}" + "".join(f"{name:>19}" for name in embedders)
    print(header + "".join(f"{f'{name} − {first}':>26}" for name in others))
    differences = {}
    for label, numbers in grouped.items():
        pick = {name: [scores[name][n] for n in numbers] for name in embedders}
        cells = "".join(f"{with_interval(score_interval(lab, pick[name])):>19}" for name in embedders)
        differences[label] = {name: difference(lab, pick[first], pick[name]) for name in others}
        print(f"   {f'{label} ({len(numbers)})':<22}{cells}"
              + "".join(f"{str(differences[label][name]):>26}" for name in others))
    for name in others:
        say_embedders(first, name, scores, grouped, differences)
    return scores


def say_embedders(first, other, scores, grouped, differences):
    """The sentences the dial's intervals support, and no more."""
    overall = differences["all"][other]
    verdicts = {}
    for kind in KINDS[:-1]:
        verdicts.setdefault(differences[kind][other].verdict(), []).append(kind)
    say(f"Overall, {other} − {first}: {overall}, {overall.verdict()}; by kind: "
        + "; ".join(f"{verdict} on {', '.join(kinds)}" for verdict, kinds in verdicts.items()) + ".")
    low, high = list(grouped)[len(KINDS) - 1:len(KINDS) + 1]
    gaps = {name: group_difference(scores[name], grouped[high], grouped[low]) for name in (first, other)}
    gains = [theirs - ours for ours, theirs in zip(scores[first], scores[other])]  # other − first, a question each
    gain = group_difference(gains, grouped[low], grouped[high])
    say("Questions sharing two or more content words with their answer, against those in the user's own words: "
        + "; ".join(f"{name} {gap}, {gap.verdict()}" for name, gap in gaps.items())
        + f". {other} − {first} on the user's own words, against on shared words: {gain}, "
        + ({True: "a larger gain", False: "a smaller gain"}[gain.low > 0] if gain.shown else NOT_SHOWN)
        + " (two groups of different questions: normal-approximation intervals).")
    if gaps[first].low > 0 and gain.low > 0:
        say(f"So on these questions {first} leans on the words a question shares with its answer more than "
            f"{other} does, and {other} gains most where the question is asked in the user's own words.")


# --------------------------------------------------------------------------
# The checks: the ruler first (hand-worked cases), then the invariants on the real questions
# --------------------------------------------------------------------------

GOLD = [("faq", 100, 120)]
TWO_GOLD = [("faq", 100, 120), ("faq", 300, 340)]  # 20 + 40 characters
HITS = [("faq", 0, 50), ("faq", 90, 130), ("faq", 110, 200)]  # rank 2 holds the answer
OVERLAPPING = [("faq", 90, 130), ("faq", 110, 150)]  # together [90, 150): 60 characters, 20 answer


def metric_cases(lab) -> list[Case]:
    """The metrics on cases worked out by hand: answers cut in two, hits on the wrong page, two gold
    spans, hits that overlap each other, nothing retrieved."""
    recall, mrr, coverage, precision_iou = (lab[name] for name in
                                            ("recall_at_k", "mrr_at_k", "coverage_at_k", "precision_and_iou"))
    return [
        Case("a hit on the answer's second half only", recall, ([("faq", 110, 200)], GOLD, 1), returns(0.0)),
        Case("the right span on another page", recall, ([("install", 100, 120)], GOLD, 1), returns(0.0)),
        Case("the answer at rank 2", recall, (HITS, GOLD, 1), returns(0.0)),
        Case("the answer at rank 2", recall, (HITS, GOLD, 2), returns(1.0)),
        Case("fewer hits than k", recall, (HITS, GOLD, 10), returns(1.0)),
        Case("two gold spans, one found", recall, ([("faq", 0, 130)], TWO_GOLD, 5), returns(0.5)),
        Case("two hits holding the same one of two spans", recall,
             ([("faq", 95, 125), ("faq", 100, 120)], TWO_GOLD, 2), returns(0.5)),
        Case("nothing retrieved", recall, ([], GOLD, 5), returns(0.0)),
        Case("the answer at rank 1", mrr, ([("faq", 100, 120)], GOLD, 1), returns(1.0)),
        Case("the answer at rank 2, past k", mrr, (HITS, GOLD, 1), returns(0.0)),
        Case("the answer at rank 2", mrr, (HITS, GOLD, 3), returns(0.5)),
        Case("a hit on the answer's second half only", mrr, ([("faq", 110, 200)], GOLD, 1), returns(0.0)),
        Case("nothing retrieved", mrr, ([], GOLD, 5), returns(0.0)),
        Case("a hit on the answer's second half only", coverage, ([("faq", 110, 200)], GOLD, 1), returns(0.5)),
        Case("the answer at rank 2", coverage, (HITS, GOLD, 1), returns(0.0)),
        Case("the answer at rank 2", coverage, (HITS, GOLD, 2), returns(1.0)),
        Case("two hits covering the answer together, overlapping", coverage,
             ([("faq", 100, 115), ("faq", 105, 120)], GOLD, 2), returns(1.0)),
        Case("two overlapping hits covering part of the answer: [100, 112) once", coverage,
             ([("faq", 95, 110), ("faq", 105, 112)], GOLD, 2), returns(12 / 20)),
        Case("two gold spans, a quarter of the first covered", coverage, ([("faq", 115, 130)], TWO_GOLD, 1),
             returns(5 / 60)),
        Case("nothing retrieved", coverage, ([], GOLD, 5), returns(0.0)),
        Case("a perfect hit", precision_iou, (GOLD, GOLD, 1), returns((1.0, 1.0))),
        Case("90 characters at ranks 1 and 2, 20 of them the answer", precision_iou, (HITS, GOLD, 2),
             returns((20 / 90, 20 / 90))),
        Case("two hits overlapping each other", precision_iou, (OVERLAPPING, GOLD, 2), returns((20 / 60, 20 / 60))),
        Case("a hit on half the answer and as much beside it: [110, 120) of [100, 130)", precision_iou,
             ([("faq", 110, 130)], GOLD, 1), returns((10 / 20, 10 / 30))),
        Case("nothing retrieved", precision_iou, ([], GOLD, 5), returns((0.0, 0.0))),
    ]


# The bootstrap's cases, with their bootstrap distributions worked out by hand. In ONE_BETTER,
# b finds one question of 20 that a misses: a resample's difference is K / 20, K the times that
# question is drawn (binomial, 20 draws of chance 1/20). K = 0 in 36% of resamples, so the 2.5%
# quantile is 0; K <= 2 in 92.5%, K <= 3 in 98.4%, so the 97.5% quantile is 3 / 20.
# In TWO_BETTER, b finds two questions more than a, of 20 where both find 10: K counts the
# draws of those two (chance 1/10); K <= 0 in 12%, K <= 1 in 39%, <= 3 in 87%, <= 4 in 96%,
# <= 5 in 99%.
ONE_BETTER = ([0.0] * 20, [1.0] + [0.0] * 19)
TWO_BETTER = ([1.0, 0.0] * 10, [1.0] * 4 + [1.0, 0.0] * 8)
SCATTERED = ([0.1, 0.7, 0.3, 0.9, 0.2, 0.4], [0.3, 0.6, 0.8, 0.9, 0.5, 0.1])


def interval_within(estimate, low, high, why, level=0.95):
    """A judge for paired_bootstrap: its estimate and level, and low and high each a value or a
    (least, most) range; `why` says what a wrong end means."""
    def judge(result, *args, **keywords):
        ends = {"estimate": estimate, "low": low, "high": high, "level": level}
        for name, wanted in ends.items():
            least, most = wanted if isinstance(wanted, tuple) else (wanted, wanted)
            got = getattr(result, name, None)
            if not isinstance(got, (int, float)) or not least - 1e-9 <= got <= most + 1e-9:
                wanted_text = f"{least:g}" if least == most else f"between {least:g} and {most:g}"
                raise ValueError(f"returned {name} {got!r}, expected {wanted_text}: {why}")
    return judge


def same_again(paired_bootstrap):
    """A judge: the same call again gives the same interval (the seed fixes the draws)."""
    def judge(result, *args, **keywords):
        again = paired_bootstrap(*args, **keywords)
        if as_interval(again) != as_interval(result):
            raise ValueError(f"returned {result}, then {again} for the same call: seed the generator")
    return judge


def bootstrap_cases(lab) -> list[Case]:
    """The bootstrap on differences whose distribution is worked out by hand: one where resampling the two
    methods apart, or a normal approximation, gives another interval; a level other than 0.95; the same call
    twice; bad input."""
    bootstrap = lab["paired_bootstrap"]
    return [
        Case("two methods alike on every question", bootstrap, ([0.5, 1.0, 0.0], [0.5, 1.0, 0.0]),
             interval_within(0.0, 0.0, 0.0, "no resample differs")),
        Case("b finds every question, a none", bootstrap, ([0.0] * 3, [1.0] * 3),
             interval_within(1.0, 1.0, 1.0, "the difference is b - a, b's gain over a")),
        Case("b finds one question more, of 20", bootstrap, ONE_BETTER,
             interval_within(0.05, 0.0, (0.1, 0.2), "no resample is below 0 and 3 / 20 is the 97.5% "
                             "quantile (a normal approximation, mean - 1.96 sd, gives a low of -0.05)")),
        Case("b finds two more, of 20 that both find 10 of", bootstrap, TWO_BETTER,
             interval_within(0.1, 0.0, (0.2, 0.3), "b is never below a, so no paired resample is below 0 "
                             "(each method resampled on its own gives a low near -0.2)")),
        Case("the same, at level 0.5", bootstrap, TWO_BETTER,
             interval_within(0.1, 0.05, 0.15, "the 25% and 75% quantiles are 1 / 20 and 3 / 20", level=0.5),
             dict(level=0.5)),
        Case("the same call twice", bootstrap, SCATTERED, same_again(bootstrap), dict(seed=7)),
        Case("scores of different lengths", bootstrap, ([1.0, 0.0], [1.0]), None, raises=ValueError),
        Case("no questions", bootstrap, ([], []), None, raises=ValueError),
        Case("a level of 95", bootstrap, SCATTERED, None, dict(level=95), raises=ValueError),
        Case("no resamples", bootstrap, SCATTERED, None, dict(resamples=0), raises=ValueError),
        Case("a score that is a str", bootstrap, ([1.0, "0.5"], [1.0, 0.0]), None, raises=TypeError),
        Case("a score that is a bool", bootstrap, ([1.0, True], [1.0, 0.0]), None, raises=TypeError),
    ]


def check_the_ruler(lab) -> Invariants:
    """Step 1: the metrics, then the bootstrap, on cases worked out by hand. A wrong one makes every
    number after it wrong, so the run stops at the first that fails (the returned Invariants has failed)."""
    print("1. The metrics and the bootstrap, checked on cases worked out by hand")
    checks = Invariants("rag8")
    if not checks.check_cases("the metrics agree with values worked out by hand", metric_cases(lab)):
        print("   A wrong metric makes every number after it wrong: fix it, then measure.")
    elif not checks.check_cases("the bootstrap agrees with intervals worked out by hand", bootstrap_cases(lab)):
        print("   A wrong interval makes every comparison after it wrong: fix it, then measure.")
    return checks


def checks(lab, checks: Invariants, questions, rows, chunked, embedder) -> bool:
    """The invariants on the real questions, then the public grading tests. True when all pass."""
    print("\nInvariants")
    perfect = [gold_spans(q) for q in questions]
    checks.check("a perfect retriever scores 1.0", all(
        lab["recall_at_k"](g, g, K) == lab["mrr_at_k"](g, g, K) == lab["precision_and_iou"](g, g, K)[1] == 1.0
        for g in perfect))
    for name in ("whole page", "markdown + header"):  # the two the checks compare, if STRATEGIES left them out
        if name not in rows:
            chunked[name] = chunk_corpus(name)
            rows[name] = question_scores(lab, questions, found_hits(chunked[name], questions, embedder))
    totals = [0.0, 0.0]
    headed = chunked["markdown + header"]
    for question, ranked in zip(questions, rankings(headed, questions, embedder, len(headed))):
        hits = [hit for _, *hit in ranked]
        totals[0] += lab["mrr_at_k"](hits, gold_spans(question), K) / len(questions)
        totals[1] += lab["mrr_at_k"](hits[::-1], gold_spans(question), K) / len(questions)
    checks.check("a reversed ranking scores lower", totals[1] < totals[0],
                 f"MRR@{K} {totals[0]:.3f} best first, {totals[1]:.3f} reversed")
    whole, header = (sum(per_question(rows[s], "IoU")) / len(questions) for s in ("whole page", "markdown + header"))
    checks.check("whole pages retrieve more text than they answer", whole < header,
                 f"IoU {whole:.3f} for whole pages, {header:.3f} for markdown + header")
    # Last, the public grading tests (tests/grading/test_rag8.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(lab)
    return checks.verdict()
