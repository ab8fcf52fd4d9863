"""rag5's given speed machinery: one tokenization of a text, then token counts of any slice.

A recursive splitter asks "how many tokens is this piece?" thousands of
times. Calling count_tokens on every candidate slice would tokenize a page
again and again, and packing (which grows a chunk piece by piece, recounting
it each time) would take time proportional to the square of its length.
TokenIndex tokenizes the text once and counts a slice by the token starts
inside it: two binary searches, exact where both ends are clean cuts
(academy_llm.is_clean_cut), and exact elsewhere too by encoding only the few
characters beyond the nearest clean cuts. LineSeam finds a seam of line
breaks faster where the text has no carriage return.

rag5 imports TokenIndex (rag5.TokenIndex is what rag6, rag9 and rag10 use) and
names it in one sentence; labkit/seams.py builds rag5's seams with LineSeam. Why
counts read from one tokenization add up: in "Hello world", count_tokens("Hello")
+ count_tokens(" world") is 2, as in the whole, since the cut falls where the
tokenizer itself separates two pieces (a clean cut); cut after the space instead
and "Hello " + "world" is 3.
"""

import functools
import itertools
import re
import sys

import numpy as np

from academy_llm import count_tokens, is_clean_cut, token_positions


class LineSeam:
    """A seam of line breaks: a compiled pattern, found faster in text that has no "\r".

    Python's re finds a pattern that starts with one fixed character by a
    quick scan, but one that may start with "\r" or "\n" by a check of every
    character, about five times slower: on a page, that scan was half the
    splitter's own time. Most text has no "\r", and there a twin pattern that
    knows only "\n" matches exactly the same places. Call it as a pattern:
    seam.finditer(text, start, end).
    """

    def __init__(self, pattern, without_cr):
        self.full, self.without_cr = re.compile(pattern), re.compile(without_cr)

    def finditer(self, string, pos=0, endpos=sys.maxsize):
        """full.finditer(string, pos, endpos), by the twin where string[pos:endpos] has no "\r"."""
        has_cr = string.find("\r", max(pos, 0), endpos) >= 0
        return (self.full if has_cr else self.without_cr).finditer(string, pos, endpos)

    def __getattr__(self, name):  # search, findall, pattern, ...: the full pattern's own
        return getattr(self.full, name)

    def __repr__(self):
        return f"LineSeam({self.full.pattern!r})"


class TokenIndex:
    """Token counts of any slice of one text, from a single tokenization."""

    def __init__(self, text):
        self.text = text
        self.starts, self.numbers = token_positions(text)

    @functools.cached_property
    def min_budget(self):
        """The least max_tokens that can hold this text: the most tokens that a piece between
        two neighbouring token starts (a piece no chunk may cut) counts on its own.

        Not a constant: one character needs at most 4 tokens, but a token may
        straddle two characters, so no cut falls between them ('토큰' is 5
        tokens, with no token start inside). Found once, from the one
        tokenization: only the pieces of two tokens or more are encoded again.
        """
        starts, numbers = self.starts, self.numbers
        if numbers[-1] == len(starts):  # every token starts a character: every piece is one token
            return min(len(starts), 1)
        # tokens of each piece, as the whole text has them (int32: half the memory np.diff would take)
        inside = np.subtract(numbers[1:], numbers[:-1], dtype=np.int32)
        wide = np.flatnonzero(inside > 1)
        ends = starts.take(wide + 1, mode="clip")  # each wide piece runs to the next start...
        ends[wide + 1 == len(starts)] = len(self.text)  # ...or to the text's end
        text = self.text
        pieces = {text[start:end] for start, end in zip(starts[wide].tolist(), ends.tolist())}
        alone = [count_tokens(piece) for piece in pieces]  # each piece once: a page repeats them
        return max([int(inside.max(initial=0)), *alone])

    def estimate(self, start, end):
        """Tokens of the whole text that start in [start, end), plus one if a token straddles `start`.

        Exact when both ends are clean cuts. Elsewhere it can be a token off:
        cut after a space, a slice begins with "Next" where the whole text had
        " Next" one character earlier; that token is the "plus one".
        """
        if end <= start:
            return 0
        first = self.starts.searchsorted(start)
        last = self.starts.searchsorted(end)
        straddles = first == len(self.starts) or self.starts[first] != start
        return int(self.numbers[last] - self.numbers[first]) + int(straddles)

    def estimates(self, spans):
        """estimate() of every (start, end) in `spans`, with one numpy call for all instead of one per span.

        Estimates add up: for a span cut in two at a clean cut, the two
        estimates sum to the whole span's; at any other cut the sum can only
        be a token higher, which errs on the safe side of a budget.
        """
        if not spans or len(self.starts) == 0:
            return [0] * len(spans)
        # start, end, start, end, ... in one flat array: np.array(spans) would first inspect every pair, slowly.
        bounds = np.fromiter(itertools.chain.from_iterable(spans), np.int64, 2 * len(spans))
        positions = self.starts.searchsorted(bounds)
        tokens_before = self.numbers[positions]  # tokens that start before each bound
        starts, ends = bounds[0::2], bounds[1::2]
        straddles = positions[0::2] == self.starts.searchsorted(starts, "right")  # no token starts at `start`
        return ((tokens_before[1::2] - tokens_before[0::2] + straddles) * (ends > starts)).tolist()

    def count(self, start, end):
        """count_tokens(text[start:end]), exactly: from the index between clean cuts, encoding only the rest.

        A clean cut inside a slice splits it into two that tokenize as they did
        inside it. So a slice with an unclean end (an indented line's start,
        say) is read from the index between the clean cuts nearest its ends,
        and only the few characters beyond them are encoded on their own.
        """
        text = self.text
        if is_clean_cut(text, start) and is_clean_cut(text, end):
            return self.estimate(start, end)
        if end - start <= 4 * NEAR:  # a short slice is encoded as quickly as searched
            return count_tokens(text[start:end])
        first = first_clean_cut(text, range(start, min(start + NEAR, end) + 1))
        last = first_clean_cut(text, range(end, max(end - NEAR, start) - 1, -1))
        if first is None or last is None:  # none near an end (a URL cut in windows): encode it all
            return count_tokens(text[start:end])
        return count_tokens(text[start:first]) + self.estimate(first, last) + count_tokens(text[last:end])

    def counts(self, spans):
        """count() of every (start, end) in `spans`, with one estimates() call for all the clean ones."""
        text = self.text
        return [tokens if is_clean_cut(text, start) and is_clean_cut(text, end) else self.count(start, end)
                for (start, end), tokens in zip(spans, self.estimates(spans))]


NEAR = 64  # how far TokenIndex.count looks for a clean cut near an unclean end, in characters


def first_clean_cut(text, positions):
    """The first of `positions` that is a clean cut, or None."""
    return next((position for position in positions if is_clean_cut(text, position)), None)
