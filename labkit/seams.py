"""rag5's given ground: the seams a recursive splitter cuts at, the room packing leaves for overlap,
clean cuts, and the exact mending of the rare chunk whose own count is over budget.

The lab names each in one sentence; the student writes the recursion, the packing and the overlap
on top of them. Later labs reach these through rag5 (rag5.SEAMS, rag5.mend, rag5.packing_budget).
"""

import re

from academy_llm import count_tokens, is_clean_cut, make_chunk
from labkit.token_index import LineSeam

# The seams, coarsest first; a cut goes where a match ends. Line breaks stay with the text
# before them, spaces go with the word after them: "para.\n\n|Next", "end.| Next", "word| next".
# Those are the places where the tokenizer itself separates two pieces, so counts read from
# the page's one tokenization add up there (labkit/token_index.py). A sentence end is matched
# only from the first mark of a run: tried from inside a run of a million dots, the pattern
# would retry the rest of the run at every dot, which is quadratic. The line seams are
# LineSeams: the same patterns, found faster in text without "\r".
SEAMS = [
    ("blank line", LineSeam(r"(?:\r\n|\r|\n)(?:[^\S\r\n]*(?:\r\n|\r|\n))+", r"\n(?:[^\S\r\n]*\n)+")),
    ("line break", LineSeam(r"\r\n|\r|\n", r"\n")),
    ("sentence end", re.compile(r"(?<![.!?])[.!?]+[\"')\]]*(?=[^\S\r\n])")),
    ("space", re.compile(r"(?<=\S)(?=[^\S\r\n])")),
    ("word start", re.compile(r"(?<=\s)(?=\S)")),
]


def packing_budget(max_tokens, overlap, index):
    """Tokens a chunk may hold before overlap is added: room is left for the overlap, but
    never less than the text's widest uncut piece needs (index.min_budget, a lone emoji
    say; max_tokens at most), or that piece could not be placed. Read from the text, not
    assumed: '토큰' needs 5 tokens, though no character needs more than 4."""
    room = max_tokens - overlap
    return room if overlap <= 0 else max(room, min(max_tokens, index.min_budget))


def next_clean_cut(text, position, limit):
    """The first clean cut (a word's space, a line's start) from `position` on, but never
    past `limit`: `limit` itself when there is none before it, or `position` is past it."""
    while position < limit and not is_clean_cut(text, position):
        position += 1
    return min(position, limit)


def word_spans(text, start, end):
    """Spans tiling text[start:end], each a word with the spaces before it."""
    cuts = [m.end() for m in dict(SEAMS)["space"].finditer(text, start, end) if start < m.end() < end]
    return list(zip([start] + cuts, cuts + [end]))


def exact_fitting(token_windows):
    """(mend, fit_over_budget) for a chunker whose last resort is `token_windows` (rag4's):

    mend(text, start, end, max_tokens) re-packs text[start:end] word by word, counting exactly
    (slow, so used only when needed), a word alone over budget cut by token_windows;
    fit_over_budget(text, start, packed_start, end, max_tokens, index) gives the chunks for
    text[start:end], which counted over max_tokens on its own: first its overlap gives back
    words until it fits; if it is over even without overlap (an estimate a token short at an
    unclean end), mend re-packs it.
    """

    def mend(text, start, end, max_tokens):
        """Re-pack text[start:end] word by word, counting exactly (slow, so used only when needed)."""
        chunks = []
        for word_start, word_end in word_spans(text, start, end):
            if chunks and count_tokens(text[chunks[-1][0] : word_end]) <= max_tokens:
                chunks[-1] = (chunks[-1][0], word_end)
            elif count_tokens(text[word_start:word_end]) <= max_tokens:
                chunks.append((word_start, word_end))
            else:  # a single word over budget: exact token windows
                windows = token_windows(text[word_start:word_end], max_tokens)
                chunks += [(word_start + w.start, word_start + w.end) for w in windows]
        return chunks

    def fit_over_budget(text, start, packed_start, end, max_tokens, index):
        """Chunks for text[start:end], which counted over max_tokens on its own: its overlap gives
        back words until it fits, or, over even without overlap, mend() re-packs it."""
        while start < packed_start:
            start = next_clean_cut(text, start + 1, packed_start)
            n_tokens = index.count(start, end)
            if n_tokens <= max_tokens:
                return [make_chunk(text, start, end, n_tokens, kind="recursive")]
        return [make_chunk(text, s, e, kind="recursive") for s, e in mend(text, packed_start, end, max_tokens)]

    return mend, fit_over_budget
