# %% [markdown]
# # rag10: Retrieve small, read big
#
# rag7 and rag8 left a trade. Small chunks (a chunk per table row) are
# matched well: a question about one row finds that row. Big chunks (a whole
# section, a whole table) are read well: the answer comes with what explains
# it. One chunking cannot be both, and rag8 showed the cost of each: a
# thousand row chunks crowd the top 5; whole tables drown their rows.
#
# So separate the two. **Match** small units: a table row, a sentence, a list
# item, a piece of code, a short paragraph, each embedded with its header and
# what it needs to be understood. **Read** big ones: each unit remembers its
# *parent*, the rag7 chunk it lies in, and the reader gets parents. The
# search ranks the small units with one matrix product, maps each to its
# parent, drops parents already taken, and ranks the parents a second way,
# by rag7's own chunks over them: the two rankings fused, it keeps what
# rag7's chunks find (prose, mostly) besides what the units find (rows and
# code). It hands over parents in that order until a reading budget is
# spent. A parent too big for what is left is not
# dropped: the reader gets the best window of it around the unit that
# matched.
#
# Everything handed over is still an exact slice of a page: `(doc_id, start,
# end)`, so rag8's metrics score it as they score any chunk, at the same
# reading cost.
#
# You write `parent_index` (which parent holds each unit), `best_parents`
# (each parent once, in rank order) and `assemble` (the budgeted reading).

# %%
import bisect
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from academy_llm import (
    corpus_pages, corpus_questions, count_tokens, describe_embedder, embed, embedder_name, make_chunk,
    token_positions,
)
from labkit import Case, Invariants, load_lab, returns, run_lab
from labkit.uncertainty import claim, mean_interval, paired_difference

rag5 = load_lab("rag5")  # SEAMS, TokenIndex, split_at_seams, pack: sentences, token counts, long units cut
rag6 = load_lab("rag6")  # split_lines, body_start_of, scan_blocks: a page's blocks
rag7 = load_lab("rag7")  # header_chunks: the parents
rag8 = load_lab("rag8")  # the metrics and the harness, for the comparison; its recommended chunks, for the search
from labkit.lessons import rag8 as harness  # noqa: E402 (rag8's given harness: retrieval, the budget, the tables)

TITLE = "Orbit docs"
PARENT_TOKENS = 192  # the parents: rag7's chunks at this budget, without overlap, none longer
UNIT_TOKENS = 48  # the longest unit: a paragraph this short is one unit, a longer one a unit a sentence
READ_TOKENS = PARENT_TOKENS  # the most a reader is handed from one parent
DEPTH = 100  # how many units of the ranking are read, at most, to fill the budget
BUDGET_TOKENS = 1000
CHUNK_TOKENS = harness.CHUNK_TOKENS  # rag7's recommended chunks, as rag8 measured them: a second ranking of parents
FUSION_K = 10  # reciprocal-rank fusion's constant for the two rankings, chosen on the dev split (section 5)

# %% [markdown]
# ## 1. Small units and their parents
#
# The parents are rag7's header chunks of a page, without overlap: sorted,
# and no two share a character. rag6 keeps a table or a code block whole,
# however long; a reader asking about one row of a 1,500-token table should
# not be handed all of it, so such a chunk is cut into parents of at most
# PARENT_TOKENS at rag5's seams (given below). The small units are cut from the
# same page independently, by its Markdown blocks (given below): a row of a
# table, an item of a list, a code block, a short paragraph whole, a longer
# one by sentences; a unit still longer than UNIT_TOKENS (a long script, a
# run-on sentence) is cut at rag5's seams too. Independently, because the two
# cuttings need not agree: a long paragraph that rag7 cut between two chunks
# may have a sentence across the cut.
#
# So, for each unit, which parent is its own? The one it shares the most
# characters with (the earlier on a tie), and None if it shares none (a unit
# in front matter that no parent covers, say). Units and parents are
# `(start, end)` spans of one page, both sorted by start. A page has
# thousands of units: look a unit's parent up by bisection, not by trying
# every parent.


# %%
def parent_index(units, parents):
    """For each (start, end) unit, the index of the parent sharing most characters with it, or None.

    `units` and `parents` are (start, end) spans sorted by start, no two parents overlapping;
    ties go to the earlier parent.
    """
    # BEGIN SOLUTION
    # hint 1: Map each small unit to the parent chunk it belongs to (the one it shares the most
    # hint 1: characters with), so that a match on the unit can hand the reader its parent.
    # hint 2: The parents are sorted and disjoint, so a unit can only share characters with the
    # hint 2: last parent starting at or before the unit's start and the parents after it that
    # hint 2: start before the unit ends. Find the first with bisect over the parents' starts, then
    # hint 2: walk forward while parents start before the unit's end, keeping the one sharing the
    # hint 2: most characters (strictly more, so a tie keeps the earlier). No shared character at
    # hint 2: all: None.
    # hint 3: starts = [s for s, _ in parents]; for each (start, end): i = max(bisect_right(starts,
    # hint 3: start) - 1, 0); walk j from i while parents[j][0] < end, shared = min(end,
    # hint 3: parents[j][1]) - max(start, parents[j][0]); keep j if shared > the best so far
    # hint 3: (starting from 0, best None).
    starts = [start for start, _ in parents]
    result = []
    for start, end in units:
        best, most = None, 0
        j = max(bisect.bisect_right(starts, start) - 1, 0)
        while j < len(parents) and parents[j][0] < end:
            shared = min(end, parents[j][1]) - max(start, parents[j][0])
            if shared > most:
                best, most = j, shared
            j += 1
        result.append(best)
    return result
    # END SOLUTION


# Where a list item starts (its marker), and where a sentence ends (rag5's seam).
LIST_MARKER = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")
SENTENCE_END = dict(rag5.SEAMS)["sentence end"]


def unit_spans(text, index=None):
    """The small units of a Markdown page, as (start, end, kind, context), in order, whitespace trimmed.

    A table gives a unit per body row ("row"), a list one per item ("item"),
    a fence or indented code one ("code"); a paragraph (or a quote, or HTML)
    of UNIT_TOKENS tokens or fewer is one unit ("paragraph"), a longer one a
    unit per sentence ("sentence"). Headings and rules give none: the header
    carries the headings. `context` is what a unit needs to be understood:
    a row, its table's column names; an item or a piece of code, the
    paragraph just before its list or block, which usually says what it is
    ("The Compose file below runs a server backed by PostgreSQL:"); else "".
    A unit longer than UNIT_TOKENS is cut at rag5's seams into pieces of at
    most UNIT_TOKENS, each with the unit's kind and context. Tokens are
    read from `index`, rag5's TokenIndex of the page (made here if None).
    """
    index = index or rag5.TokenIndex(text)
    lines = rag6.split_lines(text, rag6.body_start_of(text))
    spans, intro = [], ""  # intro: the paragraph just before, if the block before was one
    for block in rag6.scan_blocks(lines):
        first, last = lines[block.first], lines[block.last - 1]
        if block.kind in ("heading", "rule"):
            intro = ""
            continue
        if block.kind == "table":
            names = lines[block.first].text.strip()
            spans += [(line.start, line.end, "row", names) for line in lines[block.first + 2 : block.last]]
        elif block.kind == "list":
            indent = len(first.text) - len(first.text.lstrip(" \t"))
            starts = [line.start for line in lines[block.first : block.last]
                      if LIST_MARKER.match(line.text) and len(line.text) - len(line.text.lstrip(" \t")) == indent]
            spans += [(start, end, "item", intro) for start, end in zip(starts, starts[1:] + [last.end])]
        elif block.kind in ("code", "indented_code"):
            spans.append((first.start, last.end, "code", intro))
        elif index.estimate(first.start, last.end) <= UNIT_TOKENS:
            spans.append((first.start, last.end, "paragraph", ""))
        else:
            cuts = [m.end() for m in SENTENCE_END.finditer(text, first.start, last.end)]
            ends = [cut for cut in cuts if cut < last.end] + [last.end]
            spans += [(start, end, "sentence", "") for start, end in zip([first.start] + ends, ends)]
        intro = text[first.start : last.end].strip() if block.kind == "paragraph" else ""
    units = []
    for start, end, kind, context in spans:
        for piece in short_pieces(text, start, end, UNIT_TOKENS, index):
            units.append((*piece, kind, context))
    return units


def short_pieces(text, start, end, max_tokens, index):
    """text[start:end] as (start, end) pieces of about max_tokens at most, cut and packed as rag5 cuts and
    packs (its split_at_seams and pack, sized by the page's TokenIndex), whitespace trimmed."""
    start, end = trim(text, start, end)
    if start == end:
        return []
    if index.estimate(start, end) <= max_tokens:
        return [(start, end)]
    spans = rag5.split_at_seams(text, start, end, max_tokens, index)
    pieces = [trim(text, *span) for span in rag5.pack(spans, index.estimates(spans), max_tokens)]
    return [(piece_start, piece_end) for piece_start, piece_end in pieces if piece_start < piece_end]


def trim(text, start, end):
    """(start, end) without the whitespace at either end (start == end if nothing else is left)."""
    piece = text[start:end]
    stripped = piece.lstrip()
    start += len(piece) - len(stripped)
    return start, start + len(stripped.rstrip())


def parents_of(text, title, index):
    """rag7's header chunks of a page, without overlap; one longer than PARENT_TOKENS (a table or
    a code block, which rag6 keeps whole) cut at rag5's seams into parents of at most PARENT_TOKENS,
    each with the chunk's header. `index` is rag5's TokenIndex of the page."""
    parents = []
    for chunk in rag7.header_chunks(text, title, PARENT_TOKENS) if text else []:
        if chunk.n_tokens <= PARENT_TOKENS:
            parents.append(chunk)
            continue
        for start, end in short_pieces(text, chunk.start, chunk.end, PARENT_TOKENS, index):
            tokens = index.count(start, end)
            if tokens > PARENT_TOKENS:  # an estimate a token short at an unclean cut: cut it again, exactly
                parents += [replace(piece, start=start + piece.start, end=start + piece.end, kind=chunk.kind,
                                    section=chunk.section, header=chunk.header)
                            for piece in rag5.recursive_chunks(text[start:end], PARENT_TOKENS)]
            else:
                parents.append(make_chunk(text, start, end, tokens, section=chunk.section, kind=chunk.kind,
                                          header=chunk.header))
    return parents


# %% [markdown]
# ## 2. The index
#
# For each page: its parents, its units, and `parent_index` between them. A
# unit is embedded with its parent's header and its context (a table row with
# its table's column names, a piece of code with the paragraph that
# introduces it), so that a bare row still says what it is about. Each parent
# is one more unit of its own, matched as a whole: a question about a whole
# passage should find it, not one sentence of it. With wordllama, the
# default, its vector is the mean of its units' vectors, weighted by their
# tokens: wordllama embeds a text as the mean of its tokens' vectors, so that
# is nearly the parent's own embedding, and the pages are embedded once, as
# rag7 embeds them, not twice. Any other embedder (a real model behind
# "openai") is no such mean, so it embeds each parent whole, itself. All
# units of all pages go into one matrix: scoring them for every question at
# once is one matrix product.
#
# A sentence, or a short paragraph, has no context of its own: "It expires
# after 24 hours." matches a question about any token, any certificate. So it
# is scored with its passage: its score is the mean of its own cosine and its
# parent's. A row, an item or a piece of code keeps its own score: its
# context is in its embedding already.


# %%
class Unit(NamedTuple):
    """A small unit, or a parent matched as a whole: where it is, and what the embedder sees of it."""

    doc_id: str
    start: int
    end: int
    kind: str  # row, item, code, paragraph, sentence; "parent" for a parent matched as a whole
    embedded: str  # its header, its context, its text


@dataclass
class Index:
    pages: dict  # doc_id -> text
    parents: list  # [(doc_id, Chunk)]: rag7's chunks, without overlap, none over PARENT_TOKENS
    units: list  # [Unit]: the small units, each with its parent's header and its context; then the parents
    parent_of: list  # for each unit, its parent's row in `parents`
    vectors: np.ndarray  # a unit vector per unit (a row each)
    parent_unit: np.ndarray  # for each unit, the row in `units` of its parent matched as a whole
    with_parent: np.ndarray  # for each unit, True if it is scored with its parent (a sentence, a short paragraph)
    chunks: list  # [(doc_id, Chunk)]: rag7's recommended chunks of the pages (a chunk per table row)
    chunk_vectors: np.ndarray  # a unit vector per chunk, of its embedding text (header and text)
    chunk_parents: list  # for each chunk, the rows in `parents` it shares characters with, in page order


def build_index(pages, title=TITLE, embedder=None):
    """The Index of `pages` ({doc_id: text}), built once per set of pages, title and embedder."""
    key = (tuple(sorted(pages.items())), title, describe_embedder(embedder))  # openai: its model and server too
    if key not in INDEXES:
        parents, units, parent_of, sizes, chunks, chunk_parents = [], [], [], [], [], []
        for doc_id, text in pages.items():
            tokens = rag5.TokenIndex(text)  # the page tokenized once, for the units and the parents
            page_parents = parents_of(text, title, tokens)
            spans = unit_spans(text, tokens)
            owners = parent_index([(start, end) for start, end, _, _ in spans],
                                  [(c.start, c.end) for c in page_parents])
            for (start, end, kind, context), owner in zip(spans, owners):
                if owner is not None:
                    embedded = "\n".join(part for part in (page_parents[owner].header, context, text[start:end])
                                         if part)
                    units.append(Unit(doc_id, start, end, kind, embedded))
                    parent_of.append(len(parents) + owner)
                    sizes.append(tokens.estimate(start, end))
            ends = [parent.end for parent in page_parents]
            for chunk in harness.recommended_chunks(rag7, text, CHUNK_TOKENS, title) if text else []:
                chunks.append((doc_id, chunk))
                chunk_parents.append([len(parents) + row for row in rows_under(chunk, page_parents, ends)])
            parents += [(doc_id, chunk) for chunk in page_parents]
        vectors = unit_vectors([unit.embedded for unit in units], parent_of, sizes, parents, embedder)
        first = len(units)  # the parents, matched as wholes, come after the small units
        units += [Unit(doc_id, chunk.start, chunk.end, "parent", chunk.embedding_text) for doc_id, chunk in parents]
        parent_of += range(len(parents))
        parent_unit = first + np.array(parent_of, dtype=np.int64)
        with_parent = np.array([unit.kind in WITH_PARENT for unit in units], dtype=bool)
        chunk_vectors = embed([chunk.embedding_text for _, chunk in chunks], embedder) if chunks else np.zeros((0, 1))
        INDEXES[key] = Index(dict(pages), parents, units, parent_of, vectors, parent_unit, with_parent,
                             chunks, chunk_vectors, chunk_parents)
    return INDEXES[key]


def rows_under(chunk, parents, ends):
    """The rows of `parents` (one page's, sorted, apart; `ends` their ends) that share a character
    with `chunk`, in order: found by bisection, then read while they start before the chunk ends."""
    first = bisect.bisect_right(ends, chunk.start)
    rows = []
    for row in range(first, len(parents)):
        if parents[row].start >= chunk.end:
            break
        rows.append(row)
    return rows


def unit_vectors(texts, parent_of, sizes, parents, embedder):
    """The units' vectors, then a vector per parent.

    A mean-pooling embedder (MEAN_POOLING: wordllama) embeds a parent as the mean of its tokens'
    vectors, so a parent's vector is the mean of its units' vectors, weighted by their tokens:
    nearly its own embedding, and the corpus is embedded once, as rag7 embeds it, not twice. A
    parent without units (a page's front matter) is embedded on its own. Any other embedder
    embeds every parent whole: a mean of a real model's vectors is not what it makes of the parent.
    """
    if embedder_name(embedder) not in MEAN_POOLING:
        everything = texts + [chunk.embedding_text for _, chunk in parents]
        return embed(everything, embedder) if everything else np.zeros((0, 1))
    if not texts:
        return embed([chunk.embedding_text for _, chunk in parents], embedder) if parents else np.zeros((0, 1))
    vectors = embed(texts, embedder)
    pooled = np.zeros((len(parents), vectors.shape[1]), np.float32)
    np.add.at(pooled, np.array(parent_of, dtype=np.int64), vectors * np.array(sizes, np.float32)[:, None])
    alone = [number for number in range(len(parents)) if not pooled[number].any()]
    if alone:
        pooled[alone] = embed([parents[number][1].embedding_text for number in alone], embedder)
    lengths = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.concatenate([vectors, pooled / np.where(lengths > 0, lengths, 1)])


def unit_scores(index, question_vectors):
    """A row per question, a column per unit: its cosine, or for a sentence or a short paragraph the mean
    of its cosine and its parent's. One matrix product for all questions and all units."""
    scores = np.asarray(question_vectors, dtype=np.float32) @ index.vectors.T
    prose = index.with_parent
    scores[:, prose] = (scores[:, prose] + scores[:, index.parent_unit[prose]]) / 2
    return scores


INDEXES = {}
MEAN_POOLING = ("wordllama",)  # the embedders whose vector of a text is the mean of its tokens' vectors
WITH_PARENT = ("sentence", "paragraph")  # the kinds of unit scored with their parent: they carry no context

# %% [markdown]
# ## 3. Each parent once
#
# The ranking is of units, best first. Several units of one parent often
# rank high together (three rows of the same table): the reader needs the
# parent once. `best_parents` walks the ranked units and keeps, for each
# parent, the first (best) unit that maps to it, as a `(parent, unit)` pair,
# in the order the parents first appear. A unit with no parent (None) is
# skipped.


# %%
def best_parents(ranked_units, parent_of):
    """[(parent, unit)]: each parent once, with its best unit, in the order of that unit's rank."""
    # BEGIN SOLUTION
    # hint 1: Turn a ranking of small units into a ranking of parents, each parent once, because
    # hint 1: the reader should not be handed the same text twice.
    # hint 2: Walk the units in rank order and look up each one's parent. The first time a parent
    # hint 2: comes up, keep it with that unit (its best); after that, skip its other units. Skip
    # hint 2: units whose parent is None. Keep a set of the parents taken, so that each look-up is
    # hint 2: quick.
    # hint 3: taken = set(); for unit in ranked_units: parent = parent_of[unit]; if parent is not
    # hint 3: None and parent not in taken: add it, append (parent, unit).
    taken, result = set(), []
    for unit in ranked_units:
        parent = parent_of[unit]
        if parent is not None and parent not in taken:
            taken.add(parent)
            result.append((parent, unit))
    return result
    # END SOLUTION


# %% [markdown]
# ## 4. Reading within a budget
#
# A candidate is `(doc_id, parent, unit)`, the two spans `(start, end)` in
# the page. `assemble` walks the candidates best first and hands over each
# parent whole while it fits in what is left of the budget, counting every
# span's tokens on its own text (`count_tokens`). A parent that does not fit
# is not simply dropped, and the walk does not stop there: the reader gets
# the best window of the parent around its unit, of at most what is left
# (`window_around`, given). A unit too big even for that gives no window;
# the next candidate, perhaps smaller, is tried. Once nothing is left, the
# walk ends.
#
# One more limit: no span holds more than `span_tokens` (by default
# READ_TOKENS, the parents' own budget). Section 1 cut every parent to that,
# but `assemble` takes any candidates: handed a whole 1,500-token table for a
# question about one row, it must not spend the budget on it, and reads the
# window of `span_tokens` around the row instead.


# %%
def window_around(text, parent, unit, room):
    """The (start, end) slice of text[parent] around `unit`, of at most `room` tokens, or None.

    It grows from the unit a token at a time on each side in turn, as far as
    the parent and the room allow; it starts and ends where tokens do. None
    if the unit itself does not fit in `room`.
    """
    if room <= 0 or count_tokens(text[unit[0] : unit[1]]) > room:
        return None
    piece = text[parent[0] : parent[1]]
    starts, numbers = token_positions(piece)
    offsets = np.append(starts, len(piece))  # cut i is at offsets[i]; numbers[i] tokens come before it
    left = int(np.searchsorted(offsets, unit[0] - parent[0], "right")) - 1
    right = int(np.searchsorted(offsets, unit[1] - parent[0], "left"))
    left, right = max(left, 0), min(right, len(offsets) - 1)
    grow_left = True
    while True:  # grow by token arithmetic, then check on the text
        step = (left - 1, right) if grow_left else (left, right + 1)
        if not (0 <= step[0] and step[1] < len(offsets) and numbers[step[1]] - numbers[step[0]] <= room):
            other = (left, right + 1) if grow_left else (left - 1, right)
            if not (0 <= other[0] and other[1] < len(offsets) and numbers[other[1]] - numbers[other[0]] <= room):
                break
            step = other
        left, right = step
        grow_left = not grow_left
    while count_tokens(piece[offsets[left] : offsets[right]]) > room:  # tokens merge at the edges
        unit_left = offsets[left] < unit[0] - parent[0]
        if unit_left:
            left += 1
        elif offsets[right] > unit[1] - parent[0]:
            right -= 1
        else:
            return None
    return parent[0] + int(offsets[left]), parent[0] + int(offsets[right])


def assemble(pages, candidates, budget_tokens, span_tokens=READ_TOKENS):
    """[(doc_id, start, end)]: parents whole while they fit, else a window around their unit.

    No span holds more than `span_tokens`; all together hold at most `budget_tokens`.
    """
    # BEGIN SOLUTION
    # hint 1: Hand the reader the best parents in rank order until the reading budget is spent,
    # hint 1: and when a parent is too big for what is left, a window of it around its matched
    # hint 1: unit rather than nothing.
    # hint 2: Keep what is left of the budget. For each candidate, best first: count the tokens of
    # hint 2: the parent's own text; if they fit in what is left (and in span_tokens), take the
    # hint 2: parent whole. If not, ask window_around (given) for a window of at most that room,
    # hint 2: and take it if there is one, counting its own tokens. Do not stop at a parent that
    # hint 2: does not fit: a later one may. Stop once nothing is left.
    # hint 3: left = budget_tokens; for doc_id, parent, unit: stop if left <= 0; room = min(left,
    # hint 3: span_tokens); tokens = count_tokens(text[start:end]) of the parent; if tokens > room:
    # hint 3: span = window_around(text, parent, unit, room), skip if None, and recount; append
    # hint 3: (doc_id, *span) and take its tokens off left.
    spans, left = [], budget_tokens
    for doc_id, parent, unit in candidates:
        if left <= 0:
            break
        text, room = pages[doc_id], min(left, span_tokens)
        span, tokens = parent, count_tokens(text[parent[0] : parent[1]])
        if tokens > room:
            span = window_around(text, parent, unit, room)
            if span is None:
                continue
            tokens = count_tokens(text[span[0] : span[1]])
        spans.append((doc_id, *span))
        left -= tokens
    return spans
    # END SOLUTION


# %% [markdown]
# ## 5. Search: two rankings of the parents, fused
#
# Matching small units wins tables and code, and loses prose: a question
# about a whole passage is matched best by the passage, and a sentence's
# cosine is no fair rival for it (a small unit's best cosine runs higher, so
# it crowds the passages out). rag7's recommended chunks, ranked as rag8
# ranks them, find that prose. So the search ranks the parents twice: by
# their best units (`best_parents`), and by the best rag7 chunk over each
# (the parents a chunk shares characters with, in the order of the chunk's
# rank). It fuses the two rankings by reciprocal rank: a parent scores
# 1 / (k + rank) in each ranking it is in (rank 1 the best), summed, so a
# parent high in either comes early, and one found by both earlier still.
# Rank, not cosine, because the two kinds of cosine do not compare. Here it
# is given for these two rankings alone, at one k (`fused_parents`); rag11
# has you write it for any rankings and any k. k = FUSION_K is smaller than
# the usual 60, so that the first places of each ranking weigh more; it is
# given, not tuned here (rag11 chooses a fusion's weight on the dev split,
# and prints how sure that choice is).
#
# Then, for each question, the fused parents are read within the budget.
# What comes back is a list of `(doc_id, start, end)` spans, best first.
# `with_chunks=False` reads by the units alone, as section 2 ranked them.


# %%
def parents_by_chunks(index, ranked_chunks):
    """[(parent, span)]: the parents under the ranked rows of index.chunks, each once, in the order of the
    best chunk over it; `span` is the part of that chunk in the parent, the window's centre if it must be cut."""
    taken, result = set(), []
    for row in ranked_chunks:
        chunk = index.chunks[row][1]
        for parent in index.chunk_parents[row]:
            if parent not in taken:
                taken.add(parent)
                start, end = index.parents[parent][1].start, index.parents[parent][1].end
                result.append((parent, (max(start, chunk.start), min(end, chunk.end))))
    return result


def fused_parents(by_units, by_chunks):
    """[(parent, span)]: the parents of the two rankings [(parent, span)], by units and by chunks, best
    first by reciprocal-rank fusion with k = FUSION_K; each keeps its span from the first ranking it is
    in. A tie keeps the first one met, the ranking by units read first."""
    scores, spans = {}, {}
    for ranking in (by_units, by_chunks):
        for rank, (parent, span) in enumerate(ranking, 1):
            scores[parent] = scores.get(parent, 0.0) + 1 / (FUSION_K + rank)
            spans.setdefault(parent, span)
    return sorted(spans.items(), key=lambda item: -scores[item[0]])


def search(pages, questions, budget_tokens=BUDGET_TOKENS, title=TITLE, embedder=None, with_chunks=True):
    """For each question, the (doc_id, start, end) spans a reader gets, best first, within budget.

    `title` goes into every header, as rag7's; `embedder` is embed()'s model (None: the default);
    `with_chunks=False` ranks the parents by their units alone.
    """
    index = build_index(pages, title, embedder)
    if not questions:
        return []
    if not index.units:
        return [[] for _ in questions]
    question_vectors = embed(list(questions), embedder)
    rankings = np.argsort(-unit_scores(index, question_vectors), axis=1, kind="stable")[:, :DEPTH]
    if with_chunks:
        by_chunk = np.argsort(-(question_vectors @ index.chunk_vectors.T), axis=1, kind="stable")[:, :DEPTH]
    results = []
    for number, ranked in enumerate(rankings):
        ranked_parents = [(parent, (index.units[unit].start, index.units[unit].end))
                          for parent, unit in best_parents([int(row) for row in ranked], index.parent_of)]
        if with_chunks:
            ranked_parents = fused_parents(ranked_parents, parents_by_chunks(index, by_chunk[number]))
        candidates = []
        for parent, unit in ranked_parents:
            doc_id, chunk = index.parents[parent]
            candidates.append((doc_id, (chunk.start, chunk.end), unit))
        results.append(assemble(pages, candidates, budget_tokens))
    return results


# %% [markdown]
# ## 6. Does it pay? At equal reading cost
#
# rag8's harness, its test questions and its headline figure: recall within
# 1,000 retrieved tokens, by kind of question. Beside rag10: rag7's chunks
# with tables whole and with a chunk per table row (the course's recommended
# chunker), paragraphs with the page's title (a common recipe), and rag10
# ranking its parents by their units alone: the row to look at for what the
# fusion of section 5 adds, kind by kind.
#
# A mean over a hundred questions moves by a hundredth with each question
# found or lost, so every recall comes with its 95% interval, the mean plus
# or minus 1.96 standard errors (`labkit.uncertainty`, a formula given from
# here on; the bootstrap stays rag8's). Below the recalls, each
# method's difference from the recommended chunker, paired: the interval of
# the per-question differences, so that what both find (or both miss) cancels
# out. A difference whose interval holds 0 is marked `~`:
# this data does not show it, either way. The sentences under the table are
# written by the run from those intervals, and claim no more than they show.

# %%
BASELINES = ("paragraphs + title", "markdown + header", "header + table rows")
BASELINE = "header + table rows"  # the course's recommended chunker: what rag10 must beat
NAMES = {"paragraphs + title": "paragraphs + title", "markdown + header": "rag7, tables whole",
         "header + table rows": "rag7, table rows", "units only": "rag10, units only",
         "rag10": "rag10, small to big"}
COLUMN = 14  # a column of the tables with intervals: "[-0.05,+0.12]" and a space


def recall_within(spans, question):
    gold = harness.gold_spans(question)
    return rag8.recall_at_k(spans, gold, len(spans)) if spans else 0.0


def by_kind(questions, scores):
    """{kind: the scores of the questions of that kind} for each of harness.KINDS ("all": every question)."""
    return {kind: [score for question, score in zip(questions, scores) if kind in (question["kind"], "all")]
            for kind in harness.KINDS}


class Comparison(NamedTuple):
    """Methods' per-question scores, each method's mean by kind with its interval, and its paired
    difference from the baseline by kind (an Interval each; None for a kind without questions)."""

    scores: dict  # method -> {kind: [per-question scores]}
    recall: dict  # method -> {kind: Interval of the mean}
    difference: dict  # method -> {kind: Interval of method minus baseline}, every method but the baseline
    baseline: str


def compare(questions, scores, baseline):
    """The Comparison of `scores` ({method: a score per question, in the order of `questions`}) by kind,
    against `baseline`, one of the methods: intervals, paired over the questions."""
    kinds = {method: by_kind(questions, per_question) for method, per_question in scores.items()}
    recall = {method: {kind: mean_interval(values) if values else None for kind, values in split.items()}
              for method, split in kinds.items()}
    difference = {method: {kind: paired_difference(kinds[baseline][kind], values) if values else None
                           for kind, values in split.items()}
                  for method, split in kinds.items() if method != baseline}
    return Comparison(kinds, recall, difference, baseline)


def cells(interval, signed=False):
    """A table cell on two lines: the mean (a difference signed, and marked ~ where its interval holds
    0), then its interval; blank for a kind without questions."""
    if interval is None:
        return "-".center(COLUMN), "".center(COLUMN)
    if not signed:
        return f"{interval.estimate:.2f}".center(COLUMN), f"[{interval.low:.2f},{interval.high:.2f}]".center(COLUMN)
    mark = "" if interval.shown else "~"
    return (f"{interval.estimate:+.2f}{mark:<1}".center(COLUMN),
            f"[{interval.low:+.2f},{interval.high:+.2f}]".center(COLUMN))


def print_comparison(comparison, names, width):
    """The two tables of a Comparison: each method's recall by kind, then each one's difference from the
    baseline; a row on two lines, the mean above its 95% interval. `names`: each method's label."""
    print((f"   {'method':<{width}}" + "".join(kind.center(COLUMN) for kind in harness.KINDS)).rstrip())
    for method, row in comparison.recall.items():
        for label, line in zip((names[method], ""), zip(*(cells(row[kind]) for kind in harness.KINDS))):
            print(f"   {label:<{width}}" + "".join(line).rstrip())
    print(f"   minus {names[comparison.baseline]}, paired over the same questions "
          "(~: the interval holds 0, a difference not shown by this data)")
    for method, row in comparison.difference.items():
        for label, line in zip((names[method], ""), zip(*(cells(row[kind], True) for kind in harness.KINDS))):
            print(f"   {label:<{width}}" + "".join(line).rstrip())


def kind_claims(difference, ours, other):
    """What `difference` ({kind: Interval of ours minus other}) shows, in sentences: the overall claim,
    then the kinds where this data shows a difference, and those where it does not."""
    lines = [claim(difference["all"], ours, other)]
    kinds = [kind for kind in harness.KINDS if kind != "all" and difference[kind] is not None]
    shown = [f"{'more' if difference[kind].estimate > 0 else 'less'} on {kind} ({difference[kind]})"
             for kind in kinds if difference[kind].shown]
    unshown = [kind for kind in kinds if not difference[kind].shown]
    if shown:
        lines.append(f"by kind, {ours} finds " + ", ".join(shown))
    if unshown:
        lines.append(f"by kind, a difference is not shown by this data on {', '.join(unshown)}")
    return lines


def baseline_hits(strategy, questions):
    """For each question, the hits of a rag8 strategy that fit in the budget, best first."""
    chunks = harness.chunk_corpus(strategy, harness.CHUNK_TOKENS)
    return [harness.within_budget([hit for _, *hit in ranked], [chunks[row][1].n_tokens for row, *_ in ranked],
                               BUDGET_TOKENS)
            for ranked in harness.rankings(chunks, questions, embedder_name())]


def step_compare(questions, found, units_only):
    """Recall within the budget by kind, with intervals: the three baselines, rag10 by its units alone,
    and rag10; then each against the recommended chunker, and what the data shows. Returns every
    method's hits."""
    hits = {strategy: baseline_hits(strategy, questions) for strategy in BASELINES}
    hits["units only"], hits["rag10"] = units_only, found
    scores = {method: [recall_within(spans, question) for question, spans in zip(questions, per_question)]
              for method, per_question in hits.items()}
    print(f"2. Recall within {BUDGET_TOKENS:,} retrieved tokens, by kind ({len(questions)} test questions, "
          f"{describe_embedder()}), each with its 95% interval")
    comparison = compare(questions, scores, BASELINE)
    print_comparison(comparison, NAMES, 21)
    print("   What this data shows:")
    fusion = {kind: paired_difference(comparison.scores["units only"][kind], values) if values else None
              for kind, values in comparison.scores["rag10"].items()}
    for line in (kind_claims(comparison.difference["rag10"], NAMES["rag10"], NAMES[BASELINE])
                 + kind_claims(fusion, "the fusion of section 5", "the units alone")):
        print(f"   - {line}")
    return hits


def tokens_to_answer(spans, question, pages):
    """Tokens read up to and including the first span holding the answer, or None."""
    read = 0
    for span in spans:
        read += count_tokens(pages[span[0]][span[1] : span[2]])
        if any(harness.holds(span, gold) for gold in harness.gold_spans(question)):
            return read
    return None


def step_show(questions, hits, pages):
    """The question where rag10 helps most against the recommended chunker, and where it hurts most."""
    ours, theirs = hits["rag10"], hits["header + table rows"]
    costs = [(tokens_to_answer(a, q, pages), tokens_to_answer(b, q, pages), q)
             for q, a, b in zip(questions, ours, theirs)]
    helps = [(mine, q) for mine, other, q in costs if mine is not None and other is None]
    hurts = [(other, q) for mine, other, q in costs if mine is None and other is not None]
    print(f"\n3. Against rag7 with table rows: rag10 finds {len(helps)} answers it misses, "
          f"misses {len(hurts)} it finds")
    for label, found, method in (("helps most", helps, "rag10"), ("hurts most", hurts, "header + table rows")):
        if not found:
            continue
        tokens, question = min(found, key=lambda pair: pair[0])
        print(f"   {label}: {question['question']!r} ({question['kind']})")
        print(f"     answer: {short(question['answer'])}")
        for name in ("rag10", "header + table rows"):
            spans = hits[name][questions.index(question)]
            first = pages[spans[0][0]][spans[0][1] : spans[0][2]] if spans else ""
            print(f"     {NAMES[name]:<20} first of {len(spans)} spans: {short(first)}")
        print(f"     the answer is found by {NAMES[method]} after {tokens} tokens of reading")


def answer_parent(index, question):
    """The row in index.parents of the parent holding the start of `question`'s answer, or None."""
    return next((row for row, (page, chunk) in enumerate(index.parents)
                 if page == question["doc_id"] and chunk.start <= question["start"] < chunk.end), None)


def example_question(questions, index):
    """The lab's example, chosen by the run: the first table question of `questions` whose best unit is
    a row of its answer's parent (a row matched small, its table read big); None if there is none."""
    tables = [question for question in questions if question["kind"] == "table"]
    if not tables:
        return None
    best = np.argmax(unit_scores(index, embed([question["question"] for question in tables])), axis=1)
    for question, row in zip(tables, best):
        unit = index.units[int(row)]
        if unit.kind == "row" and index.parent_of[int(row)] == answer_parent(index, question):
            return question
    return None


def step_example(question, index, pages):
    """The lab's question: the unit that matched best, and the parent the reader gets for it."""
    (spans,) = search(pages, [question["question"]])
    (scores,) = unit_scores(index, embed([question["question"]]))
    unit = index.units[int(np.argmax(scores))]
    owner = index.parents[answer_parent(index, question)][1]
    print(f"\n4. A table question of the dev split, chosen by the run: its best unit is a row of the "
          f"answer's parent\n   {question['question']!r}")
    print(f"   best unit ({unit.kind} of {unit.doc_id}): {short(pages[unit.doc_id][unit.start : unit.end])}")
    parent = (question["doc_id"], owner.start, owner.end)
    place = f"handed over, {spans.index(parent) + 1} of {len(spans)}" if parent in spans else "not handed over"
    print(f"   the answer's parent, [{owner.start}, {owner.end}) of {question['doc_id']} "
          f"({owner.n_tokens} tokens): {place}")
    return spans, owner


def short(text, width=70):
    """`text` on one line, cut to `width` characters."""
    line = " ".join(text.split())
    return repr(line if len(line) <= width else line[: width - 1] + "…")


# %% [markdown]
# ## 7. Tricky inputs
#
# Before it searches, the lab checks the three functions on cases worked out
# by hand (a wrong one would make every number after it wrong): a unit
# across two parents, one in a gap, one ending exactly where its parent
# ends; a ranking with a parent twice, a unit without a parent; a parent
# that fits exactly, one a token over, a unit too big for what is left, and
# a page whose characters are several tokens each (count tokens, not
# characters or words).

# %%
PARENTS = [(0, 10), (10, 20), (25, 40)]

PARENT_CASES = [
    Case("no units", parent_index, ([], PARENTS), returns([])),
    Case("no parents", parent_index, ([(0, 5)], []), returns([None])),
    Case("a unit ending exactly where its parent ends", parent_index, ([(4, 10)], PARENTS), returns([0])),
    Case("a unit starting exactly where a parent starts", parent_index, ([(10, 14)], PARENTS), returns([1])),
    Case("a unit across two parents, most of it in the second", parent_index, ([(8, 18)], PARENTS),
         returns([1])),
    Case("a unit across two parents, a tie", parent_index, ([(5, 15)], PARENTS), returns([0])),
    Case("a unit in a gap between parents", parent_index, ([(21, 24)], PARENTS), returns([None])),
    Case("a unit from a gap into a parent", parent_index, ([(22, 27)], PARENTS), returns([2])),
    Case("a unit across three parents", parent_index, ([(5, 38)], PARENTS), returns([2])),
    Case("a unit past the last parent", parent_index, ([(40, 45)], PARENTS), returns([None])),
    Case("several units, in order", parent_index, ([(0, 3), (3, 9), (12, 19), (30, 31)], PARENTS),
         returns([0, 0, 1, 2])),
]

BEST_CASES = [
    Case("nothing ranked", best_parents, ([], [0, 1]), returns([])),
    Case("two units of one parent", best_parents, ([1, 0], [5, 5]), returns([(5, 1)])),
    Case("a parent comes back after another", best_parents, ([0, 2, 1, 3], [0, 0, 1, 1]),
         returns([(0, 0), (1, 2)])),
    Case("a unit without a parent", best_parents, ([2, 0, 1], [3, 4, None]), returns([(3, 0), (4, 1)])),
    Case("parent 0 is a parent like any other", best_parents, ([1, 0], [0, 0]), returns([(0, 1)])),
]


def assembled(expected_first=(), windows=()):
    """A judge for assemble: spans lying in their candidates' parents, each candidate once at
    most, best first, within both budgets; the first spans as `expected_first`, then one window
    per (doc_id, unit, room) of `windows`: a slice holding the unit, of room or room - 1 tokens."""
    def judge(spans, pages, candidates, budget_tokens, span_tokens=READ_TOKENS):
        used = sum(count_tokens(pages[d][s:e]) for d, s, e in spans)
        if used > budget_tokens:
            raise ValueError(f"returned {spans}: {used} tokens, over the budget of {budget_tokens}")
        places = []
        for doc_id, start, end in spans:
            place = next((i for i, (d, parent, _) in enumerate(candidates)
                          if d == doc_id and parent[0] <= start < end <= parent[1]), None)
            if place is None:
                raise ValueError(f"returned {spans}: ({doc_id!r}, {start}, {end}) is no slice of a parent")
            if count_tokens(pages[doc_id][start:end]) > span_tokens:
                raise ValueError(f"returned {spans}: ({doc_id!r}, {start}, {end}) holds more than "
                                 f"span_tokens={span_tokens}")
            places.append(place)
        if places != sorted(set(places)):
            raise ValueError(f"returned {spans}: from candidates {places}, not each once at most, best first")
        if len(spans) != len(expected_first) + len(windows) or spans[: len(expected_first)] != list(expected_first):
            raise ValueError(f"returned {spans}, expected {list(expected_first)} then "
                             f"{len(windows)} window(s)")
        for (doc_id, start, end), (page, unit, room) in zip(spans[len(expected_first) :], windows):
            tokens = count_tokens(pages[doc_id][start:end])
            if doc_id != page or not start <= unit[0] < unit[1] <= end or tokens < room - 1:
                raise ValueError(f"returned {spans}: ({doc_id!r}, {start}, {end}) is not the window of "
                                 f"{page!r} around {unit} of {room} tokens (it holds {tokens})")
    return judge


# Each "alpha" is one token; each character of WIDE is 4 (a rare CJK character).
ALPHA = " ".join(["alpha"] * 30)  # "alpha" then " alpha" 29 times: 30 tokens
WIDE = "\U00029755" * 10  # 10 characters, 40 tokens
PAGES = {"a": ALPHA, "w": WIDE, "b": "Short one."}  # "Short one." is 3 tokens
WHOLE_A, WHOLE_W, WHOLE_B = ("a", (0, len(ALPHA)), (0, 5)), ("w", (0, 10), (4, 5)), ("b", (0, 10), (0, 10))
MIDDLE_A = ("a", (0, len(ALPHA)), (60, 65))  # the 11th "alpha"

ASSEMBLE_CASES = [
    Case("a budget of 0", assemble, (PAGES, [WHOLE_B], 0), returns([])),
    Case("no candidates", assemble, (PAGES, [], 100), returns([])),
    Case("a parent exactly the budget", assemble, (PAGES, [WHOLE_A], 30), returns([("a", 0, len(ALPHA))])),
    Case("two parents that fit", assemble, (PAGES, [WHOLE_B, WHOLE_A], 100),
         returns([("b", 0, 10), ("a", 0, len(ALPHA))])),
    Case("the budget spent: nothing more", assemble, (PAGES, [WHOLE_A, WHOLE_B], 30),
         returns([("a", 0, len(ALPHA))])),
    Case("a parent a token over the budget: a window around its unit", assemble,
         (PAGES, [MIDDLE_A], 29), assembled(windows=[("a", (60, 65), 29)])),
    Case("a parent too big after one that fits: a window of what is left", assemble,
         (PAGES, [WHOLE_B, MIDDLE_A], 13), assembled([("b", 0, 10)], [("a", (60, 65), 10)])),
    Case("characters of 4 tokens: count tokens, not characters", assemble,
         (PAGES, [WHOLE_W, WHOLE_B], 20), assembled(windows=[("w", (4, 5), 20)])),
    Case("a unit too big for what is left: skip it, read the next", assemble,
         (PAGES, [("w", (0, 10), (0, 10)), WHOLE_B], 12), returns([("b", 0, 10)])),
    Case("a parent within the budget but over span_tokens: its window", assemble,
         (PAGES, [WHOLE_B, MIDDLE_A], 100), assembled([("b", 0, 10)], [("a", (60, 65), 12)]),
         dict(span_tokens=12)),
]


def no_overlaps(results):
    """The first (doc_id, span, span) of one result that overlap, or None."""
    for spans in results:
        ordered = sorted(spans)
        for first, second in zip(ordered, ordered[1:]):
            if first[0] == second[0] and second[1] < first[2]:
                return first, second
    return None


def main():
    if embedder_name() != "wordllama":  # not the default: say which, before it is used
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), for the units, the parents and the baselines\n")
    print("0. The three functions, checked first on cases worked out by hand")
    checks = Invariants("rag10")
    cases = (("parent_index", PARENT_CASES), ("best_parents", BEST_CASES), ("assemble", ASSEMBLE_CASES))
    if not all([checks.check_cases(f"tricky inputs: {name} as worked out by hand", battery)
                for name, battery in cases]):
        print("   The search is built on them: fix them, then search.")
        return checks.verdict()

    pages = corpus_pages()
    questions = corpus_questions("test")
    index = build_index(pages)
    kinds = {}
    for unit in index.units:
        kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
    parents = kinds.pop("parent", 0)  # the parents are matched as wholes too, after the small units
    plural = {"code": "code blocks"}
    pooled = "their vectors pooled from their units'" if embedder_name() in MEAN_POOLING else "each embedded whole"
    print(f"\n1. {len(pages)} pages: {len(index.parents)} parents (rag7, {PARENT_TOKENS} tokens, no overlap), "
          f"{len(index.units) - parents} small units, and the parents matched whole too ({pooled})")
    print("   " + ", ".join(f"{count} {plural.get(kind, kind + 's')}"
                           for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])))
    found = search(pages, [q["question"] for q in questions])
    hits = step_compare(questions, found, search(pages, [q["question"] for q in questions], with_chunks=False))
    step_show(questions, hits, pages)

    example = example_question(corpus_questions("dev"), index)
    if example is None:
        print("\n4. No table question of the dev split has a row of its answer's parent as its best unit")
        example_spans, owner = [], None
    else:
        example_spans, owner = step_example(example, index, pages)

    print("\nInvariants")
    bad = next(((d, s, e) for spans in found for d, s, e in spans
                if not (d in pages and 0 <= s < e <= len(pages[d]))), None)
    spent = max(sum(count_tokens(pages[d][s:e]) for d, s, e in spans) for spans in found)
    checks.check(f"every span an exact slice of its page, each question's within {BUDGET_TOKENS:,} tokens",
                 bad is None and spent <= BUDGET_TOKENS, f"{bad} is no slice" if bad else f"at most {spent} used")
    overlap = no_overlaps(found + [example_spans])
    checks.check("no text handed over twice: no two spans of a question overlap", overlap is None,
                 f"{overlap[0]} and {overlap[1]}" if overlap else "")
    if owner is not None:  # ranked first by its units, the answer's parent should be read
        parent = (example["doc_id"], owner.start, owner.end)
        checks.check("the answer's parent is handed over for the lab's question", parent in example_spans,
                     f"{parent} {'among' if parent in example_spans else 'not among'} {len(example_spans)} spans")
    # Last, the public grading tests (tests/grading/test_rag10.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


# %%
if __name__ == "__main__":
    run_lab(main)
