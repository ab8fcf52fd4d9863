"""Quality on the course's own dataset: the Orbit docs' test questions, scored by lab rag8.

rag8's `evaluate` is used as it is (same metrics, same retrieval of the top 5
among all chunks of all pages, same 1,000-token budget), so a row here agrees
with the lab's own table for the same chunker, size and embedder.
"""

from __future__ import annotations

from dataclasses import dataclass

from academy_llm import corpus_pages, corpus_questions
from labkit import load_lab

from chunkers import COURSE, PEERS, SOLUTIONS, Scored, chunk_document, taking_part
from tables import print_wrong_starts, signed, table

rag8 = load_lab("rag8", SOLUTIONS)
SIZES = (256, 400)  # rag8 measures at 256; 400 is Chroma's published size
FOCUS = ("table", "code")  # the kinds of question where structure should pay
HEADED = COURSE[2]  # markdown + header: the course's answer to "how should docs be chunked?"
ROWS = COURSE[3]  # the same, with rag7's option of a chunk per table row


@dataclass
class OrbitScore(Scored):
    """rag8's metrics on the Orbit docs."""

    metrics: dict = None  # rag8's {kind of question or "all": {metric: mean}}


def score(contender, size, overlap, embedder):
    """Chunk every page, then let rag8 retrieve and score the test questions."""
    chunks, wrong = [], 0
    for doc_id, text in corpus_pages().items():
        page_chunks, page_wrong = chunk_document(contender, text, size, overlap, rag8.TITLE)
        chunks += [(doc_id, chunk) for chunk in page_chunks]
        wrong += page_wrong
    metrics = rag8.evaluate(chunks, corpus_questions("test"), embedder)
    tokens = sum(chunk.n_tokens for _, chunk in chunks) / len(chunks)
    return OrbitScore(contender, size, overlap, len(chunks), tokens, wrong, metrics)


def percent(value):
    return f"{100 * value:.1f}"


def print_config(results):
    """One table for one size and overlap: a row per chunker."""
    size, overlap = results[0].size, results[0].overlap
    counts = {kind: sum(q["kind"] == kind for q in corpus_questions("test")) for kind in FOCUS}
    print(f"\n#### {size} tokens, overlap {overlap}\n")
    headers = ["chunker", "chunks", "tokens", "R@5", "MRR@5", "IoU", "R@1kt"]
    rows = []
    for r in results:
        m = r.metrics
        rows.append([r.contender.name, r.chunks, f"{r.tokens:.0f}", percent(m["all"]["recall@5"]),
                     percent(m["all"]["MRR@5"]), percent(m["all"]["IoU"]), percent(m["all"]["recall@1k tokens"])]
                    + [percent(m[kind]["recall@5"]) for kind in FOCUS])
    print(table(headers + [f"R@5 {kind} ({counts[kind]} q.)" for kind in FOCUS], rows))
    print_wrong_starts(results)


def compare(results, ours_contender):
    """One of the course's chunkers against each peer at the same size and overlap, in points of recall@5.

    Prints the differences, then how many comparisons meet each part of the
    target: match every peer on all questions, beat each on table questions
    and on code questions.
    """
    print(f"\n#### {ours_contender.name} against each peer: recall@5 difference in points (all / table / code)\n")
    by_key = {(r.contender.name, r.size, r.overlap): r for r in results}
    gaps, budget_gaps, rows = [], [], []  # budget_gaps: recall within 1,000 tokens, table and code
    for size, overlap in sorted({(r.size, r.overlap) for r in results}):
        ours = by_key[ours_contender.name, size, overlap].metrics
        row = [f"{size}/{overlap}"]
        for peer in PEERS:
            theirs = by_key.get((peer.name, size, overlap))
            if theirs is None:
                row.append("n/a")
                continue
            gap = [100 * (ours[kind]["recall@5"] - theirs.metrics[kind]["recall@5"]) for kind in ("all",) + FOCUS]
            gaps.append(gap)
            budget_gaps.append([ours[kind]["recall@1k tokens"] - theirs.metrics[kind]["recall@1k tokens"]
                                for kind in FOCUS])
            row.append(" / ".join(signed(points) for points in gap))
        rows.append(row)
    print(table(["size/overlap"] + [peer.name for peer in PEERS], rows))
    print(f"\nTarget, over {len(gaps)} comparisons at equal size and overlap:")
    checks = [("matches or beats the peer's recall@5", [gap[0] >= 0 for gap in gaps])]
    checks += [(f"beats it on {kind} questions", [gap[n] > 0 for gap in gaps]) for n, kind in enumerate(FOCUS, 1)]
    for part, passed in checks:
        print(f"- {ours_contender.name} {part}: {sum(passed)} of {len(passed)}: {'met' if all(passed) else 'NOT met'}")
    for n, kind in enumerate(FOCUS):  # the same, at the reading cost rag8 compares strategies at
        won = [gap[n] > 0 for gap in budget_gaps]
        print(f"- (not a target) within 1,000 retrieved tokens, it beats it on {kind} questions: "
              f"{sum(won)} of {len(won)}")


def run(embedder, sizes=SIZES):
    """Every chunker at every size, with no overlap and with an eighth; prints the tables."""
    questions = corpus_questions("test")
    print(f"\n### Orbit docs: {len(corpus_pages())} pages, {len(questions)} test questions, "
          f"{embedder} embeddings, top {rag8.K} of all chunks\n")
    print("R@5: recall@5 (an answer counts when one chunk holds its whole span); MRR@5; IoU of the top 5's")
    print(f"characters with the answer's; R@1kt: recall within {rag8.TOKEN_BUDGET:,} retrieved tokens. In percent.")
    results = []
    for size in sizes:
        for overlap in (0, size // 8):
            config = [score(c, size, overlap, embedder) for c in taking_part(overlap)]
            print_config(config)
            results += config
    compare(results, HEADED)
    compare(results, ROWS)  # the option's trade-off: table questions won, code questions lost
    return results
