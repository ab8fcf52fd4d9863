"""Indexing and query time: what labs rag10 and rag11 build before their first question, against rag7's
chunks embedded, and what a question then costs them.

rag10 cuts every page into parents and small units and embeds the units
(its `build_index`); rag11 builds rag10's index and BM25 over the same units
(its `build_hybrid`); rag7's recommended chunker (header + table rows) chunks
the same pages and its chunks are embedded. All are timed as speed.py times
the chunkers: CPU seconds, the best of several runs taken in rounds, in one
process. Before each run the caches that would carry work over are emptied:
the retrievers' indexes of the pages, and the embedder's memo of lines
(wordllama sums each distinct line's token vectors once per process). The
target: rag10 in at most twice rag7's time.

Then each retriever's `search` answers every question of the dataset, its
index built beforehand (not counted) and only the embedder's memo of lines
emptied before each run: its time a question, in CPU milliseconds.
"""

from __future__ import annotations

from functools import partial

from academy_llm import embed

from chunkers import RETRIEVERS, ROWS, SMALL_TO_BIG, lesson10, rag10
from speed import race
from tables import table

TARGET = 2.0  # rag10's index, at most this many times rag7's chunking and embedding
BUDGET = rag10.BUDGET_TOKENS  # the budget the retrievers read within, as they are scored
RAG7 = f"{ROWS.name}, chunked and embedded"


def forget_lines():
    """Empty wordllama's memo of lines, so that a run embeds every line anew."""
    from labkit import embedders

    embedders.forget_lines()


def forget_embeddings():
    """Empty rag10's and rag11's indexes and wordllama's memo of lines (race empties the tokenizer's itself)."""
    lesson10.INDEXES.clear()  # rag11 builds on rag10's index, so this empties both
    forget_lines()


def rag7_index(documents, size, embedder):
    """rag7's chunks of every document (header + table rows, no overlap), embedded."""
    texts = [chunk.embedding_text for title, text in documents for chunk in ROWS.run(text, size, 0, title)]
    return embed(texts, embedder)


def indexing_table(datasets, runs, embedder):
    """Print the retrievers' indexing time against rag7's, and their time a question, for each dataset
    [(name, size, [(title, text)], the retrievers' title, [question])].

    Returns {dataset: rag10's indexing time over rag7's}.
    """
    ratios, rows = {}, []
    for name, size, documents, title, questions in datasets:
        pages = {str(number): text for number, (_, text) in enumerate(documents)}
        built = race({RAG7: (partial(rag7_index, documents, size, embedder), forget_embeddings)}
                     | {r.name: (partial(r.index, pages, title, embedder), forget_embeddings) for r in RETRIEVERS},
                     runs)
        asked = race({r.name: (partial(r.search, pages, questions, BUDGET, title=title, embedder=embedder),
                               forget_lines) for r in RETRIEVERS}, runs)  # its first call builds the index
        ratios[name] = built[SMALL_TO_BIG.name] / built[RAG7]
        rows.append([f"{name} ({size}/0 for rag7; {len(questions)} q.)", f"{built[RAG7]:.2f}"] + [
            cell for r in RETRIEVERS
            for cell in (f"{built[r.name]:.2f}", f"{built[r.name] / built[RAG7]:.2f}x",
                         f"{1000 * asked[r.name] / len(questions):.1f}")])
    print(f"\n### Indexing and query time: CPU seconds (a query: milliseconds), best of {runs} runs, {embedder}"
          " embeddings\n")
    headers = [header for r in RETRIEVERS for header in (f"{r.name}, index", f"{r.lab} / rag7", f"{r.lab}, ms a query")]
    print(table(["pages", RAG7] + headers, rows))
    print(f"(a query: a retriever's search for every question of the dataset, within {BUDGET:,} tokens, over their"
          " number)")
    verdict = "met" if all(ratio <= TARGET for ratio in ratios.values()) else "NOT met"
    print(f"\nTarget ({SMALL_TO_BIG.name} indexes the pages in at most {TARGET:g}x the time {ROWS.name} takes to chunk"
          f" and embed them): {verdict}: " + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in ratios.items()))
    return ratios
