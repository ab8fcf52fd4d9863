"""rag10's and rag11's search for compare's corpora: the reference labs' own functions over an index
kept small.

The lesson's `build_index` cuts every page at once and keeps, for every unit, its Chunk, its embedded
text and its vector in memory: about 140 bytes a character of Markdown, 4 GB for a 30 MB corpus. Here
a page is cut, embedded and counted into BM25 one at a time. A unit keeps its place (page, start, end),
its parent and whether it is scored with it, in arrays (some 30 bytes a unit); its vector goes to a file
(compare's Vectors), read a block at a time when questions are scored; the parents' embedded texts wait
in a file for BM25, which counts the units first. The rows are the lesson's (the units page by page,
then the parents matched whole, page by page), so the scores, their ties and the spans read are the
same as the lab's `search` gives (tests/test_compare.py holds them equal).
"""

from __future__ import annotations

import functools
import pickle
import tempfile
from array import array
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np

from academy_llm import embed, embedder_name
from labkit import load_lab
from labkit.lessons import rag10 as lesson10, rag11 as lesson11
from labkit.reference.bm25 import packed_bm25


class Places(Sequence):
    """Row i's (doc_id, start, end), from arrays: the lesson's `index.spans` and `index.parent_spans`."""

    def __init__(self, names: list, docs: array, starts: array, ends: array):
        self.names, self.docs, self.starts, self.ends = names, docs, starts, ends

    def __len__(self) -> int:
        return len(self.docs)

    def __getitem__(self, row):
        return self.names[self.docs[row]], self.starts[row], self.ends[row]


class CompactIndex:
    """What rag10's `small_to_big` and rag11's `read_parents` read of the lesson's Index (`pages`, `spans`,
    `parent_of`, `parent_spans`), and `scores`, the lesson's `unit_scores`, read from disk."""

    def __init__(self, pages: Mapping, spans: Places, parent_of: array, parent_spans: Places,
                 with_parent: np.ndarray, small: int, unit_vectors, parent_vectors):
        self.pages, self.spans, self.parent_of, self.parent_spans = pages, spans, parent_of, parent_spans
        self.with_parent, self.unit_vectors, self.parent_vectors = with_parent, unit_vectors, parent_vectors
        self.units = spans  # rag11's Hybrid counts its units here
        self.small = small  # the rows before the parents matched whole (with_parent has one per small unit)

    def scores(self, question_vectors) -> np.ndarray:
        """lesson10.unit_scores: a row per question, a column per unit (the parents after the small
        units), a sentence's or a short paragraph's the mean of its cosine and its parent's."""
        questions = np.asarray(question_vectors, dtype=np.float32)
        scores = np.empty((len(questions), len(self.spans)), dtype=np.float32)
        for offset, vectors in ((0, self.unit_vectors), (self.small, self.parent_vectors)):
            for first, block in vectors.blocks():
                scores[:, offset + first:offset + first + len(block)] = questions @ block.T
        prose = np.flatnonzero(self.with_parent)  # small units all
        parents = self.small + np.frombuffer(self.parent_of, dtype=np.int64)[prose]
        scores[:, prose] = (scores[:, prose] + scores[:, parents]) / 2
        return scores

    def close(self) -> None:
        self.unit_vectors.close()
        self.parent_vectors.close()


def build(pages: Mapping, title: str, embedder, parent_tokens: int, folder: Path, owner, vectors_in: Path | None,
          terms_of=None, weight=None, k1=None, b=None, only=None):
    """(CompactIndex, Words or None) of `pages`: lesson10.build_index's units, parents and vectors, cut
    with the labs in `folder`, each unit placed by `owner(units, parents)` (None: the lesson's
    middle_owner); with `terms_of`, also rag11's BM25 over the units' embedded texts, as packed_bm25
    (its postings of the terms in `only`, if given)."""
    from labkit.compare import Vectors

    labs = [load_lab(name, folder) for name in ("rag5", "rag6", "rag7")]
    vectors_in = vectors_in or Path(tempfile.gettempdir())
    names, rows = list(pages), _Rows()
    unit_vectors, parent_vectors = Vectors(vectors_in), Vectors(vectors_in)
    with tempfile.TemporaryFile(dir=vectors_in, prefix="compare-parents-") as waiting:
        def unit_texts():  # page by page: its units' vectors and parents written, its units' texts given
            for number, (page, text) in enumerate(pages.items()):
                embedded = _add_page(number, text, title, embedder, parent_tokens, labs, owner, rows,
                                     unit_vectors, parent_vectors, waiting)
                yield from embedded
            waiting.seek(0)
            for _ in range(len(rows.parent_docs)):
                yield pickle.load(waiting)

        if terms_of is None:
            for _ in unit_texts():
                pass
            words = None
        else:
            words = packed_bm25(unit_texts(), terms_of, weight, k1, b, only)
    small = len(rows.docs)
    rows.docs.extend(rows.parent_docs)  # each parent is one more unit, matched whole
    rows.starts.extend(rows.parent_starts)
    rows.ends.extend(rows.parent_ends)
    rows.parent_of.extend(range(len(rows.parent_docs)))
    index = CompactIndex(pages, Places(names, rows.docs, rows.starts, rows.ends), rows.parent_of,
                         Places(names, rows.parent_docs, rows.parent_starts, rows.parent_ends),
                         np.frombuffer(rows.with_parent, dtype=np.bool_), small, unit_vectors, parent_vectors)
    return index, words


class _Rows:
    """The units' and parents' arrays as pages are added: the small units' first, the parents' after."""

    def __init__(self):
        self.docs, self.starts, self.ends, self.parent_of = array("i"), array("q"), array("q"), array("q")
        self.with_parent = bytearray()
        self.parent_docs, self.parent_starts, self.parent_ends = array("i"), array("q"), array("q")


def _add_page(number, text, title, embedder, parent_tokens, labs, owner, rows, unit_vectors, parent_vectors,
              waiting) -> list:
    """Cut page `number`, add its units and parents to `rows` and their vectors to the files (the parents'
    embedded texts to `waiting`, for BM25 after every unit); the units' embedded texts."""
    parents, units = lesson10.cut_page(text, title, parent_tokens, *labs)
    owners = (owner([(u.start, u.end) for u in units], [(p.start, p.end) for p in parents]) if owner
              else lesson10.middle_owner(units, parents))
    first_parent = len(rows.parent_docs)
    embedded, parent_of, sizes = [], [], []
    for unit, row in zip(units, owners):
        if row is None:
            continue
        embedded.append("\n".join(part for part in (parents[row].header, unit.header, unit.text) if part))
        rows.docs.append(number)
        rows.starts.append(unit.start)
        rows.ends.append(unit.end)
        rows.parent_of.append(first_parent + row)
        rows.with_parent.append(unit.kind in lesson10.WITH_PARENT)
        parent_of.append(row)
        sizes.append(unit.n_tokens)
    vectors = _page_vectors(embedded, parent_of, sizes, parents, embedder)
    _release_embedder(embedder)
    unit_vectors.append(vectors[:len(embedded)])
    parent_vectors.append(vectors[len(embedded):])
    for chunk in parents:
        rows.parent_docs.append(number)
        rows.parent_starts.append(chunk.start)
        rows.parent_ends.append(chunk.end)
        pickle.dump(chunk.embedding_text, waiting)
    return embedded


def _page_vectors(embedded, parent_of, sizes, parents, embedder) -> np.ndarray:
    """lesson10.unit_vectors for one page's units and parents: the rows the whole corpus's call gives them.
    A page with no unit under a pooling embedder: each parent embedded whole, then scaled as the lesson
    scales a pooled parent that had no unit."""
    if embedded or embedder_name(embedder) not in lesson10.MEAN_POOLING or not parents:
        return lesson10.unit_vectors(embedded, parent_of, sizes, [(None, chunk) for chunk in parents], embedder)
    whole = embed([chunk.embedding_text for chunk in parents], embedder)
    lengths = np.linalg.norm(whole, axis=1, keepdims=True)
    return whole / np.where(lengths > 0, lengths, 1)


def _release_embedder(embedder) -> None:
    """Let go of the texts minilm keeps in the process with their vectors: the index keeps its own on disk."""
    if embedder_name(embedder) == "minilm":
        from labkit import minilm

        minilm.forget()


QUESTION_BLOCK = 16  # questions scored at a time: a float32 score per unit each


def small_to_big_search(module, title: str, embedder, vectors_in: Path):
    """The reference rag10's `search` (its `small_to_big` over its `parent_index`'s placing), on a
    CompactIndex built once for the pages: (search, units, release) for compare's Method."""
    kept = {}
    release = functools.partial(_let_go, kept)

    def index_of(pages):
        if kept.get("pages") is not pages:
            release()
            index, _ = build(pages, title, embedder, module.PARENT_TOKENS, module.HERE, module.parent_index,
                             vectors_in)
            kept.update(pages=pages, index=index)
        return kept["index"]

    def search(pages, questions, budget):
        index, found = index_of(pages), []
        for scores in _blocks_of_scores(index, list(questions), embedder):
            found += [module.small_to_big(pages, row, index.spans, index.parent_of, index.parent_spans, budget,
                                          module.PARENT_TOKENS) for row in scores]
        return found

    return search, lambda pages: len(index_of(pages).spans), release


def hybrid_search(module, title: str, embedder, vectors_in: Path):
    """The reference rag11's `search` (RRF of BM25 over the units' embedded texts and rag10's meaning,
    read by its `found`), on a CompactIndex and BM25 built once for the pages and the questions (BM25's
    postings of the questions' terms only: packed_bm25's `only`): (search, units, release)."""
    kept = {}
    release = functools.partial(_let_go, kept)

    def hybrid_of(pages, questions=()):
        asked = frozenset(term for question in questions for term in module.search_terms(question))
        if kept.get("pages") is not pages or not asked <= kept["asked"]:
            release()
            index, words = build(pages, title, embedder, lesson10.PARENT_TOKENS, module.HERE, None, vectors_in,
                                 module.search_terms, module.bm25_weight, module.K1, module.B, asked)
            kept.update(pages=pages, asked=asked, index=index, hybrid=lesson11.Hybrid(index, words))
        return kept["hybrid"]

    def search(pages, questions, budget):
        questions = list(questions)
        hybrid, found, first = hybrid_of(pages, questions), [], 0
        for meaning in _blocks_of_scores(hybrid.index, questions, embedder):
            for row in range(len(meaning)):  # a question at a time: its Ranked holds a score per unit twice
                ranked = lesson11.both_rankings(hybrid.words, [questions[first + row]], module.search_terms,
                                                meaning[row:row + 1])
                found += module.found(hybrid, ranked, "RRF", None, budget)
            first += len(meaning)
        return found

    return search, lambda pages: len(hybrid_of(pages).units), release


def _let_go(kept: dict) -> None:
    """Close the index `kept` holds (its vectors' files go with it) and forget what it kept."""
    if "index" in kept:
        kept["index"].close()
    kept.clear()


def _blocks_of_scores(index: CompactIndex, questions: list, embedder):
    """The units' scores (lesson10.unit_scores) of QUESTION_BLOCK questions at a time."""
    vectors = embed(questions, embedder) if questions else []
    _release_embedder(embedder)
    for first in range(0, len(questions), QUESTION_BLOCK):
        yield index.scores(vectors[first:first + QUESTION_BLOCK])
