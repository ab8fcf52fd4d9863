"""The retrieval a chunking lab ends its demo with: which chunker finds the answers, by kind of question,
and how sure that is.

Each chunker cuts every page of the Orbit docs; the chunks are embedded once,
every test question is ranked against them in one matrix product, and a
question scores the share of its answer spans that one of its top k chunks
holds whole (rag8 calls this recall@k and builds it). A chunk holding half an
answer cannot answer, which is where one boundary beats another.

A mean over a hundred questions moves by a hundredth for each question, so
every recall is printed with its 95% interval (the normal approximation over the
questions, labkit.uncertainty), and every difference with the paired interval of the
same questions: where that interval holds 0, the lab says the data does not
show a difference, whatever the means say.
"""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Callable, NamedTuple

import numpy as np

from academy_llm import corpus_pages, corpus_questions, embed, top_k_each
from labkit.uncertainty import NOT_SHOWN, Interval, claim, mean_interval, paired_difference

KINDS = ("prose", "identifier", "table", "code", "multi_section")


def gold_spans(question: dict) -> list[tuple]:
    """Every (page, start, end) a question's answer needs: its span, and a multi_section one's extra spans."""
    return [(question["doc_id"], span["start"], span["end"]) for span in [question] + question.get("extra_spans", [])]


@dataclass(frozen=True)
class Recall:
    """One chunker's recall@k on each question, kept per question so that two chunkers can be
    compared question by question (paired), not only by their means.

    kinds: each question's kind, in the split's order; scores: its recall@k (the share of its
    answer spans held whole by one of the top k); read: the tokens of its top k chunks, what a
    reader of those chunks reads.
    """

    k: int
    kinds: tuple[str, ...]
    scores: tuple[float, ...]
    read: tuple[int, ...]

    def of(self, kind: str = "all", values: str = "scores") -> list:
        """The per-question `values` ("scores" or "read") of one kind of question, or of "all"."""
        return [value for own, value in zip(self.kinds, getattr(self, values)) if kind in (own, "all")]

    def mean(self, kind: str = "all") -> float:
        scores = self.of(kind)
        return sum(scores) / len(scores)

    def interval(self, kind: str = "all") -> Interval:
        """The mean recall of `kind` with its 95% interval over those questions."""
        return mean_interval(self.of(kind))

    def by_kind(self) -> dict[str, float]:
        """{kind: mean recall@k, ..., "all": ...}, the kinds this split has."""
        return {kind: self.mean(kind) for kind in KINDS + ("all",) if self.of(kind)}


def recall_by_kind(chunker: Callable, k: int = 5, split: str = "test") -> Recall:
    """`chunker(text)`'s recall@k on each of the corpus's `split` questions (a Recall: per-question scores)."""
    return recall_of_chunks({page: chunker(text) for page, text in corpus_pages().items()}, k, split)


def recall_of_chunks(chunks_by_page: dict, k: int = 5, split: str = "test") -> Recall:
    """The recall@k of chunks already cut ({doc_id: chunks of that page of the corpus}) on each of
    the corpus's `split` questions (a Recall: per-question scores)."""
    chunks = [(page, chunk) for page, page_chunks in chunks_by_page.items() for chunk in page_chunks]
    questions = corpus_questions(split)
    ranked = top_k_each(embed([q["question"] for q in questions]), embed([c.embedding_text for _, c in chunks]), k)
    found = [[(chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in top] for top in ranked]
    read = [sum(chunks[row][1].n_tokens for row, _ in top) for top in ranked]
    return Recall(k, tuple(q["kind"] for q in questions), tuple(answer_shares(questions, found)), tuple(read))


def answer_shares(questions: list[dict], found: list[list[tuple]]) -> list[float]:
    """For each of the corpus's questions, the share of its answer spans (gold_spans) that one of the
    spans it reads, found[i] = [(doc_id, start, end), ...], holds whole: every lab's recall, whatever
    a question reads (its top k, or what fits in a budget). One table for the whole split: a row per
    answer span, a column per span read, yes where both are the same question's and the same page's
    and the read span holds both ends; a question's share is its rows with a yes over its rows."""
    gold = columns([(number, *span) for number, question in enumerate(questions) for span in gold_spans(question)])
    read = columns([(number, *span) for number, spans in enumerate(found) for span in spans])
    table = ((gold.owner[:, None] == read.owner) & (gold.page[:, None] == read.page)
             & (read.start <= gold.start[:, None]) & (gold.end[:, None] <= read.end))
    held = np.bincount(gold.owner, weights=table.any(axis=1), minlength=len(questions))
    return (held / np.bincount(gold.owner, minlength=len(questions))).tolist()


class Spans(NamedTuple):
    """Spans of several questions as columns: whose (the question's number), page, start, end."""

    owner: np.ndarray
    page: np.ndarray
    start: np.ndarray
    end: np.ndarray


def columns(rows: list[tuple]) -> Spans:
    """(owner, page, start, end) rows as Spans, none at all included."""
    table = np.array(rows, dtype=object).reshape(-1, 4)
    return Spans(table[:, 0].astype(np.int64), table[:, 1].astype(str), table[:, 2].astype(np.int64),
                 table[:, 3].astype(np.int64))


def compare_retrieval(step: int, chunkers: dict, ours: str, k: int = 5) -> dict[str, Recall]:
    """Print recall@k by kind of question for each of `chunkers` ({name: chunker(text)}), with
    intervals; then `ours` (one of them) minus each other, question by question, with paired
    intervals, and the sentences those intervals support. Returns {name: Recall}."""
    results = {name: recall_by_kind(chunker, k) for name, chunker in chunkers.items()}
    others = [name for name in results if name != ours]
    kinds = list(results[ours].by_kind())
    labels = {kind: f"{kind} ({len(results[ours].of(kind))})" for kind in kinds}
    width = max(map(len, labels.values())) + 2
    print(f"\n{step}. Retrieval over the corpus: recall@{k} by kind of question (share of the answer held whole)")
    print(f"   {len(results[ours].scores)} test questions; [low, high]: a 95% interval over the questions, "
          "the mean plus or minus 1.96 standard errors")
    columns = [max(20, len(name) + 2) for name in results]
    print(f"   {'kind (questions)':<{width}}" + "".join(f"{name:>{w}}" for name, w in zip(results, columns)))
    for kind in kinds:
        print(f"   {labels[kind]:<{width}}"
              + "".join(f"{r.interval(kind).plain():>{w}}" for r, w in zip(results.values(), columns)))
    for other in others:
        differences = {kind: paired_difference(results[other].of(kind), results[ours].of(kind)) for kind in kinds}
        print(f"\n   {ours} minus {other}, question by question (paired: the interval of the differences)")
        print(f"   {'kind (questions)':<{width}}{'difference':>22}  what it shows")
        for kind in kinds:
            print(f"   {labels[kind]:<{width}}{str(differences[kind]):>22}  {differences[kind].verdict()}")
        print_claims(results, differences, ours, other, kinds)
    return results


def say(sentence: str):
    """Print a generated sentence, wrapped under the table it reads."""
    print(textwrap.fill(sentence, width=100, initial_indent="   ", subsequent_indent="   "))


def print_claims(results: dict[str, Recall], differences: dict[str, Interval], ours: str, other: str, kinds: list):
    """The sentences the intervals support: overall, by kind, and what reading the top k costs."""
    say(f"Overall, {claim(differences['all'], ours, other, 'recall')}.")
    shown = [f"{differences[kind].verdict()} on {kind} questions" for kind in kinds[:-1] if differences[kind].shown]
    say(f"By kind, it finds {', '.join(shown)}; on the other kinds a difference is {NOT_SHOWN}." if shown
        else f"By kind, a difference is {NOT_SHOWN} on any kind.")
    read = paired_difference(results[other].of(values="read"), results[ours].of(values="read"))
    mine, theirs = (sum(results[name].read) / len(results[name].read) for name in (ours, other))
    say(f"Reading cost: its top {results[ours].k} chunks hold {mine:.0f} tokens a question against {theirs:.0f}, "
        f"a difference of {read.estimate:+.0f} [{read.low:+.0f}, {read.high:+.0f}]: "
        + (f"{read.verdict('more', 'fewer')} tokens to read" if read.shown else NOT_SHOWN) + ".")
