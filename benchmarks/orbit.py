"""Quality on the course's own dataset: the Orbit docs' test questions, scored by lab rag8.

rag8's `evaluate` is used as it is (same metrics, same retrieval of the top 5
among all chunks of all pages, same 1,000-token budget), so a row here agrees
with the lab's own table for the same chunker, size and embedder. Labs rag10
and rag11, which hand a reader spans rather than chunks, are scored on their
spans by rag8's `score_hits`, as `evaluate` scores hits: recall within 1,000
tokens over all their spans (their search keeps within the budget itself),
the top-5 figures over their first 5.

Each question's scores are kept too, so that every recall is printed with its
95% interval and every difference between two rows with the paired interval
of the same questions (labkit.uncertainty): a row beats another only where
that interval leaves 0 out.
"""

from __future__ import annotations

from dataclasses import dataclass

from academy_llm import corpus_pages, corpus_questions
from labkit import load_lab

from chunkers import (HEADED, HYBRID, PEERS, RETRIEVERS, ROWS, SMALL_TO_BIG, SOLUTIONS, Scored, chunk_document,
                      taking_part)
from tables import (NOT_SHOWN, bootstrap_mean, in_points, paired_difference, print_wrong_starts, shown_kinds,
                    signed_points, table)

rag8 = load_lab("rag8", SOLUTIONS)
from labkit.lessons import rag8 as harness  # noqa: E402 (rag8's given harness: retrieval, the budget, the tables)
SIZES = (256, 400)  # rag8 measures at 256; 400 is Chroma's published size
KINDS = ("prose", "table", "code", "identifier", "multi_section")  # recall within 1,000 tokens by kind: the headline
FOCUS = ("table", "code")  # recall@5 by kind in every table: where structure should pay (every kind: print_by_kind)
BUDGET = "recall@1k tokens"  # rag8's name for recall within its TOKEN_BUDGET
HYBRID_TARGET = 80.0  # rag11's recall within 1,000 tokens on all questions, at least


@dataclass
class OrbitScore(Scored):
    """rag8's metrics on the Orbit docs."""

    metrics: dict = None  # rag8's {kind of question or "all": {metric: mean}}
    each: dict = None  # {metric: [each test question's score, in the split's order]}, for BUDGET and recall@5

    def of(self, kind, metric=BUDGET):
        """The per-question `metric` of one kind of question (or "all")."""
        return [score for question, score in zip(corpus_questions("test"), self.each[metric])
                if kind in (question["kind"], "all")]

    def interval(self, kind, metric=BUDGET):
        return bootstrap_mean(self.of(kind, metric))


def score(contender, size, overlap, embedder):
    """Chunk every page, then let rag8 retrieve and score the test questions."""
    chunks, wrong = [], 0
    for doc_id, text in corpus_pages().items():
        page_chunks, page_wrong = chunk_document(contender, text, size, overlap, harness.TITLE)
        chunks += [(doc_id, chunk) for chunk in page_chunks]
        wrong += page_wrong
    questions, found = corpus_questions("test"), []
    for ranked in harness.rankings(chunks, questions, embedder):  # as rag8.evaluate retrieves
        hits = [hit for _, *hit in ranked]
        found.append((hits, harness.within_budget(hits, [chunks[row][1].n_tokens for row, *_ in ranked],
                                               harness.TOKEN_BUDGET)))
    tokens = sum(chunk.n_tokens for _, chunk in chunks) / len(chunks)
    return OrbitScore(contender, size, overlap, len(chunks), tokens, wrong,
                      harness.score_hits(vars(rag8), questions, found),
                      per_question(questions, found))


def per_question(questions, found):
    """{metric: [each question's score]} for BUDGET and recall@5, as rag8.score_hits scores them one by one."""
    rows = [harness.score_hits(vars(rag8), [question], [hits])["all"] for question, hits in zip(questions, found)]
    return {metric: [row[metric] for row in rows] for metric in (BUDGET, "recall@5")}


def score_retriever(retriever, embedder):
    """A retriever's spans for the test questions, scored with rag8's metrics: its chunks are what it matches
    (units and parents), its tokens the mean of the parents it reads."""
    pages, questions = corpus_pages(), corpus_questions("test")
    found = retriever.search(pages, [q["question"] for q in questions], harness.TOKEN_BUDGET,
                             title=harness.TITLE, embedder=embedder)
    found = [(spans, spans) for spans in found]  # every span is within the budget
    units, tokens = retriever.sizes(pages, harness.TITLE, embedder)
    return OrbitScore(retriever, 0, 0, units, tokens, 0, harness.score_hits(vars(rag8), questions, found),
                      per_question(questions, found))


def percent(value):
    return f"{100 * value:.1f}"


def question_counts():
    return {kind: sum(q["kind"] == kind for q in corpus_questions("test")) for kind in KINDS}


def print_config(results, retrievers=()):
    """One table for one size and overlap: a row per chunker, then a row per retriever (its own sizes).
    R@5 and R@1kt carry their 95% intervals; the kinds' means are compared, with intervals, below."""
    size, overlap = results[0].size, results[0].overlap
    counts = question_counts()
    print(f"\n#### {size} tokens, overlap {overlap}\n")
    headers = (["chunker", "chunks", "tokens", "R@5 [95% interval]", "MRR@5", "IoU", "R@1kt [95% interval]"]
               + [f"R@1kt {kind} ({counts[kind]} q.)" for kind in KINDS] + [f"R@5 {kind}" for kind in FOCUS])
    rows = []
    for r in results + list(retrievers):
        m = r.metrics
        rows.append([r.contender.name, r.chunks, f"{r.tokens:.0f}", in_points(r.interval("all", "recall@5")),
                     percent(m["all"]["MRR@5"]), percent(m["all"]["IoU"]), in_points(r.interval("all"))]
                    + [percent(m[kind][BUDGET]) for kind in KINDS] + [percent(m[kind]["recall@5"]) for kind in FOCUS])
    print(table(headers, rows))
    for r in retrievers:
        print(r.contender.note(r.chunks, r.tokens, "rows, sentences, items, code, short paragraphs")
              + " its R@5, MRR@5 and IoU are over the first 5 spans it hands over)")
    print_wrong_starts(results)


def differences(mine, theirs, metric=BUDGET):
    """{kind or "all": mine minus theirs, paired over the same questions, with its interval}."""
    return {kind: paired_difference(theirs.of(kind, metric), mine.of(kind, metric)) for kind in ("all",) + KINDS}


def compare(results, ours, fixed=None):
    """One of the course's against each peer at the same size and overlap: recall within 1,000 tokens.

    `ours` is a chunker scored at every size and overlap in `results`, or,
    with `fixed`, a retriever's one score, compared with every peer at each.
    Prints each difference on all questions with its paired interval and the
    kinds on which an interval shows one, then how many comparisons show a
    difference on each kind, and the same by recall@5. Returns the
    differences within 1,000 tokens: [{kind: Interval}].
    """
    print(f"\n#### {ours.name} against each peer: recall within {harness.TOKEN_BUDGET:,} tokens, difference in points"
          " [95% interval, paired over the questions]\n")
    by_key = {(r.contender.name, r.size, r.overlap): r for r in results}
    gaps, top_gaps, rows = [], [], []
    for size, overlap in sorted({(r.size, r.overlap) for r in results}):
        mine = fixed if fixed else by_key[ours.name, size, overlap]
        for peer in PEERS:
            theirs = by_key.get((peer.name, size, overlap))
            if theirs is None:
                continue
            gap, top = differences(mine, theirs), differences(mine, theirs, "recall@5")
            gaps.append(gap)
            top_gaps.append(top)
            rows.append([f"{size}/{overlap}", peer.name, signed_points(gap["all"]),
                         shown_kinds({kind: gap[kind] for kind in KINDS}), signed_points(top["all"])])
    print(table(["size/overlap", "peer", "R@1kt, all", "R@1kt by kind, shown by the interval", "R@5, all"], rows))
    print(f"\nOver {len(gaps)} comparisons at equal size and overlap, {ours.name} (where the interval leaves 0 out;"
          f" {NOT_SHOWN} in the rest):")
    for name, found in ((f"within {harness.TOKEN_BUDGET:,} tokens", gaps), ("by recall@5", top_gaps)):
        counted = [f"{kind} {sum(d[kind].low > 0 for d in found)}/{sum(d[kind].high < 0 for d in found)}"
                   for kind in ("all",) + KINDS]
        print(f"- {name}, finds more / less than the peer on questions of each kind: {', '.join(counted)}"
              f" (of {len(found)})")
    return gaps


def best(results, contenders, kind, metric=BUDGET):
    """The best score of any of `contenders` at any size and overlap on `kind` of question, by `metric`."""
    return max((r for r in results if r.contender in contenders), key=lambda r: r.metrics[kind][metric])


def print_by_kind(results, retrievers):
    """The retrievers by kind of question, within 1,000 tokens and at top 5, beside the best peer and rag7's
    recommended chunker (each the best of any size and overlap, kind by kind), each with its interval."""
    counts = question_counts() | {"all": len(corpus_questions("test"))}
    print(f"\n#### The retrievers by kind of question, beside the best peer and {ROWS.name} on each\n")
    rows = []
    for metric, short in ((BUDGET, "R@1kt"), ("recall@5", "R@5")):
        rows += [[r.contender.name, short] + [in_points(r.interval(kind, metric)) for kind in counts]
                 for r in retrievers]
        for name, contenders in (("best peer", PEERS), (ROWS.name, [ROWS])):
            rows.append([f"{name}, at its best", short]
                        + [in_points(best(results, contenders, kind, metric).interval(kind, metric))
                           for kind in counts])
    print(table(["retriever", "recall"] + [f"{kind} ({n} q.)" for kind, n in counts.items()], rows))
    print("(R@5 over the first 5 spans a retriever hands over; a chunker's best is at any size and overlap, "
          "kind by kind, so its interval is that setting's, picked after the fact; [95% interval])")


def against_target(interval, target):
    """Whether a recall (0 to 1) meets a target in points, by its mean, and where its 95% interval lies."""
    mean, low, high = (100 * x for x in (interval.estimate, interval.low, interval.high))
    if mean >= target:
        return (f"met by the mean: {in_points(interval)}"
                + ("" if low >= target else ", though the interval reaches below it"))
    return (f"NOT met by the mean: {in_points(interval)}"
            + (", though the interval reaches above it" if high >= target else ", the whole interval below it"))


def print_targets(results, retriever, gaps):
    """A retriever's targets within 1,000 tokens, each judged by its interval: beat each peer on every kind, at
    every size and overlap; then rag10's: beat rag7's recommended chunker on all questions; rag11's: at least
    HYBRID_TARGET on all, and no kind below rag7's recommended chunker."""
    print(f"\nTargets of {retriever.contender.name}, within {harness.TOKEN_BUDGET:,} retrieved tokens"
          " (a difference counts where its 95% interval leaves 0 out):")
    shown = {kind: sum(gap[kind].low > 0 for gap in gaps) for kind in KINDS}
    won = all(count == len(gaps) for count in shown.values())
    print(f"- beats each peer on {', '.join(KINDS)} questions, at every size and overlap: "
          f"{'met' if won else 'NOT met'}: shown in " + ", ".join(f"{kind} {n}" for kind, n in shown.items())
          + f" of {len(gaps)} comparisons; at best: " + "; ".join(
              f"{kind} {in_points(retriever.interval(kind))} against {percent(peer.metrics[kind][BUDGET])} "
              f"({peer.contender.name} {peer.size}/{peer.overlap})"
              for kind, peer in ((kind, best(results, PEERS, kind)) for kind in KINDS)))
    if retriever.contender is SMALL_TO_BIG:
        rows = best(results, [ROWS], "all")
        gap = differences(retriever, rows)["all"]
        print(f"- beats {ROWS.name} on all questions, at its best size and overlap: "
              f"{'met' if gap.low > 0 else 'NOT met'}: {signed_points(gap)} points ({rows.size}/{rows.overlap}), "
              + ("shown by the interval" if gap.shown else NOT_SHOWN))
    if retriever.contender is HYBRID:
        mine = retriever.interval("all")
        print(f"- at least {HYBRID_TARGET:.0f} on all questions: {against_target(mine, HYBRID_TARGET)}")
        rows = {kind: best(results, [ROWS], kind) for kind in KINDS}
        gaps_rows = {kind: differences(retriever, r)[kind] for kind, r in rows.items()}
        below = [kind for kind, gap in gaps_rows.items() if gap.high < 0]
        held = "NOT met: " + ", ".join(below) if below else "met"
        print(f"- no kind below {ROWS.name} at its best on that kind: {held}"
              " (below: an interval under 0): " + "; ".join(
                  f"{kind} {signed_points(gap)} ({rows[kind].size}/{rows[kind].overlap})"
                  for kind, gap in gaps_rows.items()))


def run(embedder, sizes=SIZES):
    """Every chunker at every size, with no overlap and with an eighth, and the retrievers; prints the tables."""
    questions = corpus_questions("test")
    print(f"\n### Orbit docs: {len(corpus_pages())} pages, {len(questions)} test questions, "
          f"{embedder} embeddings, top {harness.K} of all chunks\n")
    print("R@5: recall@5 (an answer counts when one chunk holds its whole span); MRR@5; IoU of the top 5's")
    print(f"characters with the answer's; R@1kt: recall within {harness.TOKEN_BUDGET:,} retrieved tokens, the headline,"
          " also by kind of question. In percent.")
    retrievers = [score_retriever(retriever, embedder) for retriever in RETRIEVERS]
    results = []
    for size in sizes:
        for overlap in (0, size // 8):
            config = [score(c, size, overlap, embedder) for c in taking_part(overlap)]
            print_config(config, retrievers)
            results += config
    print_by_kind(results, retrievers)
    compare(results, ROWS)  # the recommended chunker
    compare(results, HEADED)  # the same with tables whole, the comparison that shows why
    for retriever in retrievers:
        print_targets(results, retriever, compare(results, retriever.contender, retriever))
    return results, retrievers
