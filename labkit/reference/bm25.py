"""rag11's BM25 index built a unit at a time, for compare's corpora.

The lesson's `bm25_index` takes every unit's term list at once and returns a (row, weight) tuple
per posting, which `lesson.pack` then packs into arrays: on 5 M characters of Markdown (72,000
units, 1.9 M postings) that moment holds some 460 MB, the peak of a whole compare run. Here
each unit's terms are counted as it comes and only their ids and counts are kept, in int32
arrays; the weights come once every count is in, from the lab's own `bm25_weight`, with the
same df, length and mean as `bm25_index` gives it: the same `lesson.Words`, array for array,
some 40 MB at that moment (tests/test_compare.py holds the two equal).
"""

from __future__ import annotations

from array import array
from collections import Counter

import numpy as np

from labkit.lessons.rag11 import Words


def packed_bm25(texts, terms_of, weight, k1: float, b: float, only=None) -> Words:
    """The Words that `lesson.pack(bm25_index([terms_of(t) for t in texts]), len(texts))` gives, with
    `weight` the lab's bm25_weight(tf, df, n_documents, length, mean_length, k1, b).

    Term ids are given in the order the terms are first met, unit by unit, which is the order of
    bm25_index's dict; a term's postings are its units in row order, as there.

    `only`: the terms to keep postings for (a set), every unit's length still counted in full. The
    questions a run asks score the same on it, since a question's score sums its own terms' weights: a
    big corpus's postings (11 M for 26 M characters) are then the few its questions name."""
    ids, term_of, counts, starts, lengths = {}, array("i"), array("i"), array("q", [0]), array("q")
    for text in texts:
        terms = terms_of(text)
        for term, tf in Counter(terms).items():
            if only is None or term in only:
                term_of.append(ids.setdefault(term, len(ids)))
                counts.append(tf)
        starts.append(len(term_of))
        lengths.append(len(terms))
    if not lengths:
        return Words({}, np.array([], dtype=np.int64), np.array([], dtype=float), 0)
    n_documents, term_ids = len(lengths), np.frombuffer(term_of, dtype=np.int32)
    df = np.bincount(term_ids, minlength=len(ids)).tolist()
    mean = sum(lengths) / n_documents  # int / int, as bm25_index divides
    weights, rows = array("d"), np.repeat(np.arange(n_documents, dtype=np.int64), np.diff(starts))
    for row in range(n_documents):
        length = lengths[row]
        for place in range(starts[row], starts[row + 1]):
            weights.append(weight(counts[place], df[term_of[place]], n_documents, length, mean, k1, b))
    order = np.argsort(term_ids, kind="stable")  # term by term, each term's rows in order
    ends = np.cumsum(df, dtype=np.int64).tolist()
    terms = {term: (end - df[number], end) for (term, number), end in zip(ids.items(), ends)}
    return Words(terms, rows[order], np.frombuffer(weights, dtype=float)[order], n_documents)
