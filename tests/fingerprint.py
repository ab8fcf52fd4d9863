"""Print a fingerprint of what the chunkers and the retriever produce, one line per part.

    python tests/fingerprint.py LAB_DIR

Run twice with different PYTHONHASHSEED values, the output must be the same:
a chunker that iterated over a set of strings, or a score that depended on a
dict's order, would show up as a differing line.
"""

import hashlib
import json
import sys
from pathlib import Path

from adversarial_texts import FIXTURES

from academy_llm import (
    corpus_pages,
    corpus_questions,
    embed,
    top_k,
)
from labkit import load_lab

TITLE = "Orbit docs"
BUDGET = 128


def chunkers(lab_dir):
    """name: function(text) -> chunks, for every chunker of the labs in `lab_dir`."""
    rag4, rag5, rag6, rag7 = (load_lab(lab, lab_dir) for lab in ("rag4", "rag5", "rag6", "rag7"))
    return {
        "word_windows": lambda text: rag4.word_windows(text, 60, 15),
        "token_windows": lambda text: rag4.token_windows(text, BUDGET, 16),
        "recursive_chunks": lambda text: rag5.recursive_chunks(text, BUDGET, 16),
        "markdown_chunks": lambda text: rag6.markdown_chunks(text, BUDGET, 16),
        "header_chunks": lambda text: rag7.header_chunks(text, TITLE, BUDGET, 16),
    }


def digest(value) -> str:
    return hashlib.sha256(json.dumps(value, ensure_ascii=True).encode()).hexdigest()[:16]


def described(chunks) -> list:
    """Everything a chunk carries, in a form json can hold."""
    return [(c.start, c.end, c.n_tokens, c.section, c.kind, c.header, c.oversize) for c in chunks]


def retrieval_scores(chunks, questions, model) -> list:
    """For each question, its top 5 chunks as (row, score), scores written out in full."""
    vectors = embed([chunk.embedding_text for chunk in chunks], model)
    question_vectors = embed([question["question"] for question in questions], model)
    return [[(row, repr(score)) for row, score in top_k(vector, vectors, 5)] for vector in question_vectors]


def main(lab_dir: Path) -> None:
    pages = list(corpus_pages().values())
    texts = pages + [fixture.build(fixture.small or fixture.full) for fixture in FIXTURES]
    chunked = {name: [chunker(text) for text in texts] for name, chunker in chunkers(lab_dir).items()}
    for name, chunk_lists in chunked.items():
        print(name, digest([described(chunks) for chunks in chunk_lists]))
    headed = [chunk for chunks in chunked["header_chunks"][: len(pages)] for chunk in chunks]
    questions = corpus_questions("dev")
    for model in ("hash", "wordllama"):
        print(f"scores ({model})", digest(retrieval_scores(headed, questions, model)))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
