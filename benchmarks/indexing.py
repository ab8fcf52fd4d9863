"""Indexing time: what lab rag10 builds before its first question, against rag7's chunks embedded.

rag10 cuts every page into parents and small units and embeds the units
(its `build_index`); rag7's recommended chunker (header + table rows) chunks
the same pages and its chunks are embedded. Both are timed as speed.py times
the chunkers: CPU seconds, the best of several runs taken in rounds, in one
process. Before each run the caches that would carry work over are emptied:
rag10's index of the pages, and the embedder's memo of lines (wordllama sums
each distinct line's token vectors once per process). The target: rag10 in
at most twice rag7's time.
"""

from __future__ import annotations

from academy_llm import embed

from chunkers import ROWS, SMALL_TO_BIG, rag10
from speed import race
from tables import table

TARGET = 2.0  # rag10's index, at most this many times rag7's chunking and embedding
RAG7 = f"{ROWS.name}, chunked and embedded"
RAG10 = f"{SMALL_TO_BIG.name}, units and parents embedded"


def forget_embeddings():
    """Empty rag10's indexes and wordllama's memo of lines, so that a run embeds every line anew."""
    from labkit import embedders

    rag10.INDEXES.clear()
    embedders._line_sums.clear()


def rag7_index(documents, size, embedder):
    """rag7's chunks of every document (header + table rows, no overlap), embedded."""
    texts = [chunk.embedding_text for title, text in documents for chunk in ROWS.run(text, size, 0, title)]
    return embed(texts, embedder)


def indexing_table(datasets, runs, embedder):
    """Print rag10's indexing time against rag7's for each dataset [(name, size, [(title, text)], rag10's title)].

    Returns {dataset: rag10's time over rag7's}.
    """
    ratios, rows = {}, []
    for name, size, documents, title in datasets:
        pages = {str(number): text for number, (_, text) in enumerate(documents)}
        best = race({RAG7: (lambda: rag7_index(documents, size, embedder), forget_embeddings),
                     RAG10: (lambda: SMALL_TO_BIG.index(pages, title, embedder), forget_embeddings)}, runs)
        ratios[name] = best[RAG10] / best[RAG7]
        rows.append([f"{name} ({size}/0 for rag7)", f"{best[RAG7]:.2f}", f"{best[RAG10]:.2f}", f"{ratios[name]:.2f}x"])
    print(f"\n### Indexing time: CPU seconds, best of {runs} runs, {embedder} embeddings\n")
    print(table(["pages", RAG7, RAG10, "rag10 / rag7"], rows))
    verdict = "met" if all(ratio <= TARGET for ratio in ratios.values()) else "NOT met"
    print(f"\nTarget ({SMALL_TO_BIG.name} indexes the pages in at most {TARGET:g}x the time {ROWS.name} takes to chunk"
          f" and embed them): {verdict}: " + ", ".join(f"{name} {ratio:.2f}x" for name, ratio in ratios.items()))
    return ratios
