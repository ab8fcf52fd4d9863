"""Beyond the ceiling: what a retriever reads within 1,000 tokens, and in what order.

With minilm, rag11's answers are mostly among the top few thousand tokens, in the
wrong order for a reader of 1,000. This measures arrangements of what is read
over the same index (rag10's units and parents, rag11's BM25 over the units,
their vectors already cached), each chosen on the dev split and reported on
test, with 95% bootstrap intervals, paired over the same questions for every
difference (benchmarks/tables.py):

- parents read (rag11's `read_parents`) after RRF, meaning alone or the weighted mix;
- units read: the ranked units themselves, best first, each once, merged with a
  unit read before where they touch, until the budget is spent;
- value per token: each unit's chance of holding the answer is a softmax of its
  score (a temperature chosen on dev); a parent holds its units' chances and its
  own; the reader takes, again and again, the unit or parent that adds the most
  chance per token still unread.

Then the issue's targets, in one run: the arrangement dev chooses on Orbit test,
on the test questions sharing at most one content word with their answer, and
on Chroma's benchmark at 1,000 tokens (its data outside the repository).

    python benchmarks/ceiling.py [--no-chroma] [--chroma-data DIR]
"""

from __future__ import annotations

import argparse
import heapq
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))

from academy_llm import corpus_pages, corpus_questions, count_tokens, embed  # noqa: E402
from labkit import load_lab  # noqa: E402
from labkit.lessons import rag10 as lesson10  # noqa: E402
from labkit.lessons import rag11 as lesson11  # noqa: E402
from questions import PARAPHRASE, overlap  # noqa: E402

import chroma  # noqa: E402
from chunkers import RECURSIVE, ROWS, SOLUTIONS  # noqa: E402
from tables import bootstrap_mean, paired_difference, table  # noqa: E402

rag11 = load_lab("rag11", SOLUTIONS)
EMBEDDER = "minilm"
BUDGET = lesson10.BUDGET_TOKENS
DEPTH = lesson10.DEPTH
WEIGHTS = (0.6, 0.7, 0.8, 0.9, 1.0)  # the weight of meaning in rag11's convex fusion
WORD_SHARES = (0.0, 0.05, 0.1, 0.15)  # value per token: BM25 (over its best) added to the cosine, at this weight
TEMPERATURES = (0.01, 0.02, 0.03, 0.05)  # value per token: the softmax's temperature
POOL = 150  # value per token: the best units whose chances are counted
CHROMA_CHUNKERS = [(RECURSIVE, 200, 0), (ROWS, 200, 0)]  # the course's best on Chroma with wordllama, and the
# recommended one, at Chroma's smaller size (benchmarks/run.py sweeps every chunker, size and overlap)
TARGETS = {"Orbit test": 0.80, f"shares <= {PARAPHRASE} word": 0.75, "Chroma": 82.7}


class Retrieval:
    """rag11's hybrid index of a set of pages and, for its questions, every score an arrangement reads."""

    def __init__(self, pages, questions, title):
        self.hybrid = rag11.build_hybrid(pages, title, EMBEDDER)
        index = self.hybrid.index
        self.index, self.pages = index, index.pages
        self.ranked = lesson11.rankings(self.hybrid, questions, rag11.search_terms, EMBEDDER)
        self.cosines = embed(list(questions), EMBEDDER) @ index.vectors.T  # each unit's own cosine
        self.small = np.array([unit.kind != "parent" for unit in index.units])
        self.tokens = np.array([count_tokens(self.pages[d][s:e]) for d, s, e in index.spans])
        self.members = {}
        for row in np.flatnonzero(self.small):
            self.members.setdefault(index.parent_unit[row], []).append(int(row))

    def weighted(self, alpha):
        """Each question's units by rag11's convex fusion at weight `alpha` of meaning, best first."""
        return [rag11.by_weight(one, alpha) for one in self.ranked]

    def parents(self, rankings):
        index = self.index
        return [rag11.read_parents(self.pages, ranked, index.spans, index.parent_of, index.parent_spans, BUDGET)
                for ranked in rankings]

    def units(self, rankings):
        return [read_spans(self.pages, [self.index.spans[row] for row in ranked if self.small[row]], BUDGET)
                for ranked in rankings]

    def by_value(self, share, temperature):
        return [read_spans(self.pages, [self.index.spans[row] for row in
                                        by_value(self, cosines + share * one.word_scores / max(one.word_scores.max(),
                                                                                               1e-9), temperature)],
                           BUDGET) for cosines, one in zip(self.cosines, self.ranked)]


def read_spans(pages, candidates, budget):
    """The (doc_id, start, end) spans read: each candidate, best first, while it fits in what is left (one
    that does not is skipped, the next may fit); one that overlaps or touches a span read (nothing but
    whitespace between) is merged into it and costs only the tokens it adds."""
    spans, left = [], budget
    for doc_id, start, end in candidates:
        if left <= 0:
            break
        text = pages[doc_id]
        near = next((k for k, (d, s, e) in enumerate(spans) if d == doc_id and start <= e and s <= end
                     or d == doc_id and not text[min(end, e):max(start, s)].strip()), None)
        if near is None:
            tokens = count_tokens(text[start:end])
            if tokens <= left:
                spans.append((doc_id, start, end))
                left -= tokens
            continue
        _, s, e = spans[near]
        merged = (min(start, s), max(end, e))
        added = count_tokens(text[merged[0]:merged[1]]) - count_tokens(text[s:e])
        if merged != (s, e) and added <= left:
            spans[near] = (doc_id, *merged)
            left -= added
    return spans


def by_value(retrieval, scores, temperature):
    """Rows of units and parents in the order a reader takes them for the most chance of the answer per
    token: a unit's chance a softmax of its score over the POOL best; a parent holds its units' and its own."""
    index, pool = retrieval.index, np.argsort(-scores, kind="stable")[:POOL]
    weights = np.exp((scores[pool] - scores[pool[0]]) / temperature)
    chance = dict(zip(pool.tolist(), (weights / weights.sum()).tolist()))
    taken = set()

    def value(row):
        held = [row] + (retrieval.members.get(row, []) if not retrieval.small[row] else [])
        fresh = [r for r in held if r not in taken]
        cost = retrieval.tokens[row] - sum(retrieval.tokens[r] for r in held if r in taken and r != row)
        return sum(chance.get(r, 0.0) for r in fresh), max(int(cost), 1)

    candidates = set(pool.tolist()) | {int(index.parent_unit[row]) for row in pool}
    heap = [(-value(row)[0] / value(row)[1], row) for row in candidates]
    heapq.heapify(heap)
    order, left = [], BUDGET
    while heap and left > 0:
        _, row = heapq.heappop(heap)
        if row in taken or (retrieval.small[row] and index.parent_unit[row] in taken):
            continue
        gain, cost = value(row)
        if heap and gain / cost < -heap[0][0]:  # its value fell since it was queued: queue it again
            heapq.heappush(heap, (-gain / cost, row))
            continue
        if gain > 0 and cost <= left:
            taken.update([row] + retrieval.members.get(row, []))
            order.append(row)
            left -= cost
    return order


def arrangements(retrieval, weight, units_weight, share, temperature):
    """{name: each question's spans}: every arrangement at the given settings."""
    return {"rag11 RRF, parents read (the lab's search)":
            retrieval.parents([rag11.reciprocal_rank_fusion([one.words, one.meaning])[:DEPTH]
                               for one in retrieval.ranked]),
            "meaning alone, parents read": retrieval.parents([one.meaning for one in retrieval.ranked]),
            f"weighted {weight}, parents read": retrieval.parents(retrieval.weighted(weight)),
            f"weighted {units_weight}, units read": retrieval.units(retrieval.weighted(units_weight)),
            f"value per token, cosine + {share} BM25, T {temperature}": retrieval.by_value(share, temperature)}


def orbit_recall(questions, found):
    return [lesson10.recall_within(spans, question) for question, spans in zip(questions, found)]


def choose_on_dev(dev, questions):
    """The settings of each family with the best mean recall on the dev `questions` (a tie to the earlier)."""
    def best(grid, run):
        return max(grid, key=lambda setting: np.mean(orbit_recall(questions, run(setting))))
    return (best(rag11.WEIGHTS, lambda w: dev.parents(dev.weighted(w))),
            best(WEIGHTS, lambda w: dev.units(dev.weighted(w))),
            *best([(s, t) for s in WORD_SHARES for t in TEMPERATURES], lambda st: dev.by_value(*st)))


def interval(values, scale=1.0):
    found = bootstrap_mean([scale * value for value in values])
    return f"{found.estimate:.3f} [{found.low:.2f}, {found.high:.2f}]" if scale == 1 else \
        f"{found.estimate:.1f} [{found.low:.1f}, {found.high:.1f}]"


def differences(values, baseline, scale=1.0):
    gap = paired_difference([scale * v for v in baseline], [scale * v for v in values])
    digits = 3 if scale == 1 else 1
    return f"{gap.estimate:+.{digits}f} [{gap.low:+.{digits}f}, {gap.high:+.{digits}f}]"


def orbit(settings_dev):
    pages, split = corpus_pages(), {name: corpus_questions(name) for name in ("dev", "test")}
    scores = {}
    for name, questions in split.items():
        retrieval = Retrieval(pages, [q["question"] for q in questions], lesson10.TITLE)
        for method, found in arrangements(retrieval, *settings_dev).items():
            scores.setdefault(method, {})[name] = orbit_recall(questions, found)
    chosen = max(scores, key=lambda method: np.mean(scores[method]["dev"]))
    few = [overlap(q) <= PARAPHRASE for q in split["test"]]
    base = scores["meaning alone, parents read"]["test"]
    print(f"\nOrbit docs: recall within {BUDGET:,} tokens (minilm), dev {len(split['dev'])} and test "
          f"{len(split['test'])} questions, 95% bootstrap intervals\n")
    print(table(["arrangement", "dev", "test", "test − meaning alone, paired", f"test, shares ≤ {PARAPHRASE} word"],
                [[method, interval(s["dev"]), interval(s["test"]), differences(s["test"], base),
                  interval([v for v, f in zip(s["test"], few) if f])] for method, s in scores.items()]))
    test = scores[chosen]["test"]
    print(f"\nDev chooses: {chosen} (its best mean on dev).")
    target = TARGETS["Orbit test"]
    print(f"- Orbit test at least {target}: {'met' if np.mean(test) >= target else 'NOT met'} by the mean: "
          f"{interval(test)}")
    low = [v for v, f in zip(test, few) if f]
    print(f"- the {len(low)} test questions sharing at most {PARAPHRASE} content word with their answer, at least "
          f"{TARGETS[f'shares <= {PARAPHRASE} word']}: "
          f"{'met' if np.mean(low) >= TARGETS[f'shares <= {PARAPHRASE} word'] else 'NOT met'} by the mean: "
          f"{interval(low)}")
    return chosen


def on_chroma(folder, settings_dev, chosen):
    corpora, questions = chroma.load(folder)
    retrieval = Retrieval(corpora, [q["question"] for q in questions], chroma.NO_TITLE)
    found = arrangements(retrieval, *settings_dev)
    each = {method: [chroma.chroma_scores(spans, q["corpus_id"], q["references"])[0] for spans, q in
                     zip(spans_each, questions)] for method, spans_each in found.items()}
    chunkers = [(f"{contender.name} {size}/{overlap_tokens}",
                 chroma.score(contender, size, overlap_tokens, EMBEDDER, corpora, questions).each_budget)
                for contender, size, overlap_tokens in CHROMA_CHUNKERS]
    best_name, best = max(chunkers, key=lambda pair: np.mean(pair[1]))
    print(f"\nChroma's benchmark ({len(questions)} questions, minilm): recall within {BUDGET:,} tokens in percent, "
          f"95% bootstrap intervals; differences paired against the better of the course's chunkers here, "
          f"{best_name}\n")
    alone = each["meaning alone, parents read"]
    rows = [[name, interval(values, 100), "(the best chunker)" if name == best_name else differences(values, best, 100),
             differences(values, alone, 100)] for name, values in chunkers + list(each.items())]
    print(table(["chunker or arrangement", "recall within 1,000 tokens", "minus the best chunker",
                 "minus meaning alone"], rows))
    target = TARGETS["Chroma"]
    for name, values in ((best_name, best), (chosen, each[chosen])):
        print(f"- {name} at least {target}: {'met' if 100 * np.mean(values) >= target else 'NOT met'} by the mean: "
              f"{interval(values, 100)}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--no-chroma", action="store_true", help="skip Chroma's benchmark")
    parser.add_argument("--chroma-data", type=Path, default=chroma.DEFAULT_FOLDER)
    args = parser.parse_args()
    dev_questions = corpus_questions("dev")
    dev = Retrieval(corpus_pages(), [q["question"] for q in dev_questions], lesson10.TITLE)
    settings = choose_on_dev(dev, dev_questions)
    print(f"Chosen on dev: rag11's weight {settings[0]} (parents read), {settings[1]} (units read); value per "
          f"token: BM25 at {settings[2]}, temperature {settings[3]}")
    chosen = orbit(settings)
    if not args.no_chroma and (args.chroma_data / "questions_df.csv").is_file():
        on_chroma(args.chroma_data, settings, chosen)


if __name__ == "__main__":
    main()
