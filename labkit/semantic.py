"""rag9's given ground: a text's sentences with exact offsets, the pair scores the global split reads,
and chunks with their exact counts.

The lab names each in one sentence; the student writes the semantic chunker on top of them (the
windows, the distances, the breakpoints, the best split, the packing). None of these cuts a text by
meaning, packs sentences or slides a window: they are the ground every chunker of the course stands
on (where sentences end, how many tokens a slice holds).
"""

from __future__ import annotations

import numpy as np

from academy_llm import count_tokens, make_chunk
from labkit.seams import SEAMS

SENTENCE_SEAMS = [pattern for _, pattern in SEAMS[:3]]  # blank lines, line breaks, sentence ends
WORD_START = dict(SEAMS)["space"]  # spaces go with the word after them: "word| next"


def sentence_spans(text, max_tokens, index):
    """Spans tiling `text`, one per sentence or line, each within max_tokens by the index's estimate.

    A cut goes where a blank line, a line break or a sentence end ends (rag5's three coarsest seams),
    places where counts add up; a run of spaces alone joins the sentence before it. A "sentence"
    over the budget (a long table row, a URL) is cut at its word starts, and a word still over it at
    its token starts, so that every sentence fits in a chunk.
    """
    cuts = sorted({match.end() for seam in SENTENCE_SEAMS for match in seam.finditer(text)
                   if 0 < match.end() < len(text)})
    spans = []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        if spans and not text[start:end].strip():
            spans[-1] = (spans[-1][0], end)
        elif index.estimate(start, end) <= max_tokens:
            spans.append((start, end))
        else:
            spans += smaller_pieces(text, start, end, max_tokens, index)
    return spans


def smaller_pieces(text, start, end, max_tokens, index):
    """text[start:end] cut at every word start, a word over max_tokens at every token start; a piece
    between two token starts that is over max_tokens alone is a ValueError naming the least budget."""
    cuts = [match.end() for match in WORD_START.finditer(text, start, end) if start < match.end() < end]
    pieces = []
    for word_start, word_end in zip([start, *cuts], [*cuts, end]):
        if index.estimate(word_start, word_end) <= max_tokens:
            pieces.append((word_start, word_end))
            continue
        inside = index.starts[index.starts.searchsorted(word_start + 1):index.starts.searchsorted(word_end)].tolist()
        for piece_start, piece_end in zip([word_start, *inside], [*inside, word_end]):
            if max_tokens and index.estimate(piece_start, piece_end) > max_tokens:
                raise too_small(text, piece_start, piece_end)
            pieces.append((piece_start, piece_end))
    return pieces


def too_small(text, start, end):
    """The error for a piece no cut may split that is over the budget on its own."""
    need = count_tokens(text[start:end])
    return ValueError(f"{text[start:end]!r} at offset {start} needs {need} tokens and cannot be cut: "
                      f"no token starts inside it; use max_tokens >= {need}")


def pair_scores(vectors, max_sentences):
    """scores[d, i]: the cosine similarity of sentences i and i + d (0 < d < max_sentences), less the
    mean similarity of all such nearby pairs, so that an unrelated pair scores below 0; 0 where
    i + d is past the end. Rows have unit length, so a cosine is a dot product."""
    n = len(vectors)
    scores = np.zeros((max_sentences, n))
    for d in range(1, min(max_sentences, n)):
        scores[d, : n - d] = np.einsum("ij,ij->i", vectors[:-d], vectors[d:])
    nearby = [scores[d, : n - d] for d in range(1, min(max_sentences, n))]
    if nearby:
        mean = np.concatenate(nearby).mean()
        for d in range(1, min(max_sentences, n)):
            scores[d, : n - d] -= mean
    return scores


def scores_with_later(scores):
    """with_later[d, i]: the scores of sentence i with each of the next d sentences, summed.

    The global split needs this sum for every i and d; a running total along d gives each one in a
    single look-up.
    """
    return np.cumsum(scores, axis=0)


def exact_chunks(text, spans, max_tokens, index, kind="semantic"):
    """A Chunk for each (start, end) of `spans`, with its exact count on its own.

    Each span must be within max_tokens by the index's estimate (a ValueError says which is not:
    packing went over the budget). Packed by estimates, a span can still count a token more on its
    own than inside the page, where an end falls inside a word (a long URL cut at its tokens); that
    rare span is packed again piece by piece, counting exactly. A piece that alone is over
    max_tokens (a character of four tokens at a budget of 3) is a ValueError naming the least
    budget that holds it.
    """
    chunks = []
    for (start, end), n_tokens in zip(spans, index.counts(spans)):
        if n_tokens <= max_tokens:
            chunks.append(make_chunk(text, start, end, n_tokens, kind=kind))
        elif index.estimate(start, end) > max_tokens:
            raise ValueError(f"the span [{start}, {end}) holds {index.estimate(start, end)} tokens by the index's "
                             f"estimate, over max_tokens = {max_tokens}: pack within the budget")
        else:
            chunks += [make_chunk(text, s, e, kind=kind) for s, e in refitted(text, start, end, max_tokens, index)]
    return chunks


def refitted(text, start, end, max_tokens, index):
    """text[start:end] as (start, end) spans of at most max_tokens counted exactly: its words (a word
    over the budget, its tokens), joined while the count allows (slow, so used only where an
    estimate fell short)."""
    spans = []
    pieces = smaller_pieces(text, start, end, max_tokens, index)
    while pieces:
        piece_start, piece_end = pieces.pop(0)
        if spans and count_tokens(text[spans[-1][0]:piece_end]) <= max_tokens:
            spans[-1] = (spans[-1][0], piece_end)
        elif count_tokens(text[piece_start:piece_end]) <= max_tokens:
            spans.append((piece_start, piece_end))
        elif len(tokens := smaller_pieces(text, piece_start, piece_end, 0, index)) > 1:
            pieces[:0] = tokens  # a word over the budget on its own: its tokens, one by one
        else:
            raise too_small(text, piece_start, piece_end)
    return spans
