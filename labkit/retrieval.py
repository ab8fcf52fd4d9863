"""The retrieval a chunking lab ends its demo with: which chunker finds the answers, by kind of question.

Each chunker cuts every page of the Orbit docs; the chunks are embedded once,
every test question is ranked against them in one matrix product, and a
question scores the share of its answer spans that one of its top k chunks
holds whole (rag8 calls this recall@k and builds it). A chunk holding half an
answer cannot answer, which is where one boundary beats another.
"""

from __future__ import annotations

from typing import Callable

from academy_llm import corpus_pages, corpus_questions, embed, top_k_each

KINDS = ("prose", "identifier", "table", "code", "multi_section")


def gold_spans(question: dict) -> list[tuple]:
    """Every (page, start, end) a question's answer needs: its span, and a multi_section one's extra spans."""
    return [(question["doc_id"], span["start"], span["end"]) for span in [question] + question.get("extra_spans", [])]


def recall_by_kind(chunker: Callable, k: int = 5, split: str = "test") -> dict[str, float]:
    """{kind: mean recall@k, ..., "all": ...} of `chunker(text)` over the corpus's `split` questions."""
    pages = corpus_pages()
    chunks = [(page, chunk) for page, text in pages.items() for chunk in chunker(text)]
    questions = corpus_questions(split)
    ranked = top_k_each(embed([q["question"] for q in questions]), embed([c.embedding_text for _, c in chunks]), k)
    scores: dict[str, list[float]] = {}
    for question, top in zip(questions, ranked):
        spans = gold_spans(question)
        held = sum(any(chunks[row][0] == page and chunks[row][1].start <= start and end <= chunks[row][1].end
                       for row, _ in top) for page, start, end in spans)
        for kind in (question["kind"], "all"):
            scores.setdefault(kind, []).append(held / len(spans))
    return {kind: sum(values) / len(values) for kind, values in scores.items()}


def compare_retrieval(step: int, chunkers: dict, ours: str, k: int = 5) -> dict[str, dict[str, float]]:
    """Print recall@k by kind of question for each of `chunkers` ({name: chunker(text)}), and
    where `ours` (one of them) does better and worse than the others; returns the scores."""
    scores = {name: recall_by_kind(chunker, k) for name, chunker in chunkers.items()}
    kinds = [kind for kind in KINDS if kind in scores[ours]] + ["all"]
    print(f"\n{step}. Retrieval over the corpus: recall@{k} by kind of question (share of the answer held whole)")
    print(f"   {'chunker':<15}" + "".join(f"{kind[:13]:>14}" for kind in kinds))
    for name, score in scores.items():
        print(f"   {name:<15}" + "".join(f"{score[kind]:>14.2f}" for kind in kinds))
    others = [name for name in scores if name != ours]
    shown = {name: {kind: round(score[kind], 2) for kind in kinds} for name, score in scores.items()}  # as printed
    wins = [kind for kind in kinds if all(shown[ours][kind] > shown[other][kind] for other in others)]
    losses = [kind for kind in kinds if any(shown[ours][kind] < shown[other][kind] for other in others)]
    print(f"   {ours} finds more on: {', '.join(wins) or 'no kind'}; less on: {', '.join(losses) or 'no kind'}")
    return scores
