"""The embedders behind academy_llm.embed: wordllama's static vectors and a hashed bag of words."""

from __future__ import annotations

import re
import zlib
from pathlib import Path

import numpy as np

HASH_DIMENSIONS = 1024
_wordllama_model = None


def wordllama_model():
    """The wordllama model, loaded once, from the files inside the installed package."""
    global _wordllama_model
    if _wordllama_model is None:
        import wordllama
        from tokenizers import normalizers

        # WordLlama.load() would look for its tokenizer in a download cache and
        # try the network; pointing it at its own package folder keeps it offline.
        package_folder = Path(wordllama.__file__).parent
        _wordllama_model = wordllama.WordLlama.load(
            cache_dir=package_folder, disable_download=True
        )
        # We tokenize line by line (see wordllama_vectors) and pool each text alone:
        # no "▁" before every line (we add LINE_START to a text's first), no padding.
        _wordllama_model.tokenizer.normalizer = normalizers.Replace(" ", LINE_START)
        _wordllama_model.tokenizer.no_padding()
    return _wordllama_model


def hash_vectors(texts: list[str]) -> np.ndarray:
    """A row per text: its hashed bag of words (see hash_vector)."""
    return np.stack([hash_vector(text) for text in texts]) if texts else np.zeros((0, HASH_DIMENSIONS))


def hash_vector(text: str) -> np.ndarray:
    """Bag of lower-cased words, each hashed with crc32 to a signed slot."""
    codes = np.array([zlib.crc32(word.encode("utf-8")) for word in re.findall(r"\w+", text.lower())], dtype=np.int64)
    signs = np.where(codes & 0x80000000, 1.0, -1.0)
    return np.bincount(codes % HASH_DIMENSIONS, weights=signs, minlength=HASH_DIMENSIONS).astype(np.float32)


def wordllama_vectors(texts: list[str]) -> np.ndarray:
    """The mean of each text's token vectors (wordllama's pooling), summed line by line.

    wordllama's tokenizer never merges a line break with what is around it, so
    a text's tokens are its lines' tokens with a line-break token between them.
    Each distinct line is tokenized, and its token vectors summed, once per
    process: chunkings of one corpus share most of their lines, so embedding
    the second costs little more than a few additions. A text of only spaces has
    no meaning and stays a zero row. Texts go a batch at a time, so that the bound
    on the lines remembered holds within one long call too (an index of 70,000 units).
    """
    if len(texts) > BATCH_TEXTS:
        return np.concatenate([wordllama_vectors(texts[first:first + BATCH_TEXTS])
                               for first in range(0, len(texts), BATCH_TEXTS)])
    weights = wordllama_model().embedding
    lines = [[LINE_START + line if n == 0 else line for n, line in enumerate(text.split("\n"))] for text in texts]
    missing = list(dict.fromkeys(line for text_lines in lines for line in text_lines if line not in _lines.rows))
    if _lines.filled + len(missing) > MAX_LINES:  # a bound on memory for very long runs
        forget_lines()
        missing = list(dict.fromkeys(line for text_lines in lines for line in text_lines))
    encodings = wordllama_model().tokenizer.encode_batch_fast(missing, add_special_tokens=False)
    _lines.remember(missing, [np.add.reduce(weights[encoding.ids], axis=0) for encoding in encodings],
                    [len(encoding.ids) for encoding in encodings])
    line_break = weights[wordllama_model().tokenizer.token_to_id("<0x0A>")]
    vectors = np.zeros((len(texts), weights.shape[1]), dtype=np.float32)
    for row, (text, text_lines) in enumerate(zip(texts, lines)):
        if text.strip():
            found = [_lines.rows[line] for line in text_lines]
            breaks = len(text_lines) - 1
            vectors[row] = ((np.add.reduce(_lines.sums[found], axis=0) + breaks * line_break)
                            / (int(_lines.counts[found].sum()) + breaks))
    for line in missing:  # a long line is seldom met again whole (rag9's windows cut it): its text is not kept
        if len(line) > LONGEST_KEPT:
            del _lines.rows[line]
    return vectors


class LineSums:
    """The lines wordllama has summed: a line -> its row in two arrays, the sum of its token vectors and
    its token count. One float32 row a line (1 KB), not an array object, a tuple and an int each."""

    def __init__(self):
        self.rows: dict[str, int] = {}
        self.filled = 0  # rows of the arrays in use (a long line's row stays, its text goes)
        self.sums = np.zeros((0, 0), dtype=np.float32)
        self.counts = np.zeros(0, dtype=np.int64)

    def remember(self, lines: list[str], sums: list, counts: list) -> None:
        """Keep each line's sum and count (the arrays grow by half again when full)."""
        if not lines:
            return
        first = self.filled
        if first + len(lines) > len(self.counts):
            grown = max(first + len(lines), len(self.counts) * 3 // 2, 1024)
            self.sums = np.resize(self.sums, (grown, len(sums[0]))) if first else np.zeros((grown, len(sums[0])),
                                                                                              np.float32)
            self.counts = np.resize(self.counts, grown)
        self.sums[first:first + len(lines)] = sums
        self.counts[first:first + len(lines)] = counts
        self.rows.update(zip(lines, range(first, first + len(lines))))
        self.filled += len(lines)


def forget_lines() -> None:
    """Let go of the lines remembered (their memory too): when full, or when no more chunks will come."""
    global _lines
    _lines = LineSums()


LINE_START = "\u2581"  # what wordllama's tokenizer puts before a text ("▁")
_lines = LineSums()  # the lines summed so far
BATCH_TEXTS = 4096  # texts embedded at a time
MAX_LINES = 100_000  # lines remembered at most, about 1.1 KB each: 110 MB, the lines of a 5 MB corpus
LONGEST_KEPT = 1_000  # characters of the longest line whose text the memo keeps as a key
