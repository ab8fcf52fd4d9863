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
# parent, drops parents already taken, and hands over parents in rank order
# until a reading budget is spent. A parent too big for what is left is not
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
    corpus_pages, corpus_questions, count_tokens, embed, embedder_name, make_chunk, token_positions,
)
from labkit import Case, Invariants, load_lab, returns, run_lab

rag5 = load_lab("rag5")  # SEAMS, TokenIndex, split_at_seams, pack: sentences, token counts, long units cut
rag6 = load_lab("rag6")  # split_lines, body_start_of, scan_blocks: a page's blocks
rag7 = load_lab("rag7")  # header_chunks: the parents
rag8 = load_lab("rag8")  # the metrics and the harness, for the comparison

TITLE = "Orbit docs"
PARENT_TOKENS = 192  # the parents: rag7's chunks at this budget, without overlap, none longer
UNIT_TOKENS = 48  # the longest unit: a paragraph this short is one unit, a longer one a unit a sentence
READ_TOKENS = PARENT_TOKENS  # the most a reader is handed from one parent
DEPTH = 100  # how many units of the ranking are read, at most, to fill the budget
BUDGET_TOKENS = 1000

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
    parent_starts = []
    for parent_start, _ in parents:
        parent_starts.append(parent_start)
    owners = []
    for unit_start, unit_end in units:
        j = bisect.bisect_right(parent_starts, unit_start) - 1
        if j < 0:
            j = 0
        owner = None
        most = 0
        while j < len(parents) and parents[j][0] < unit_end:
            overlap_start = max(unit_start, parents[j][0])
            overlap_end = min(unit_end, parents[j][1])
            shared = overlap_end - overlap_start
            if shared > most:
                most = shared
                owner = j
            j += 1
        owners.append(owner)
    return owners


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
# passage should find it, not one sentence of it. Its vector is the mean of
# its units' vectors, weighted by their tokens: wordllama embeds a text as
# the mean of its tokens' vectors, so that is nearly the parent's own
# embedding, and the pages are embedded once, as rag7 embeds them, not twice.
# All units of all pages go into one matrix: scoring them for every question
# at once is one matrix product.
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


def build_index(pages, title=TITLE, embedder=None):
    """The Index of `pages` ({doc_id: text}), built once per set of pages, title and embedder."""
    key = (tuple(sorted(pages.items())), title, embedder_name(embedder))
    if key not in INDEXES:
        parents, units, parent_of, sizes = [], [], [], []
        for doc_id, text in pages.items():
            tokens = rag5.TokenIndex(text)  # the page tokenized once, for the units and the parents
            chunks = parents_of(text, title, tokens)
            spans = unit_spans(text, tokens)
            owners = parent_index([(start, end) for start, end, _, _ in spans], [(c.start, c.end) for c in chunks])
            for (start, end, kind, context), owner in zip(spans, owners):
                if owner is not None:
                    embedded = "\n".join(part for part in (chunks[owner].header, context, text[start:end]) if part)
                    units.append(Unit(doc_id, start, end, kind, embedded))
                    parent_of.append(len(parents) + owner)
                    sizes.append(tokens.estimate(start, end))
            parents += [(doc_id, chunk) for chunk in chunks]
        vectors = unit_vectors([unit.embedded for unit in units], parent_of, sizes, parents, embedder)
        first = len(units)  # the parents, matched as wholes, come after the small units
        units += [Unit(doc_id, chunk.start, chunk.end, "parent", chunk.embedding_text) for doc_id, chunk in parents]
        parent_of += range(len(parents))
        parent_unit = first + np.array(parent_of, dtype=np.int64)
        with_parent = np.array([unit.kind in WITH_PARENT for unit in units], dtype=bool)
        INDEXES[key] = Index(dict(pages), parents, units, parent_of, vectors, parent_unit, with_parent)
    return INDEXES[key]


def unit_vectors(texts, parent_of, sizes, parents, embedder):
    """The units' vectors, then a vector per parent: the mean of its units' vectors, weighted by their tokens.

    A mean-pooling embedder such as wordllama embeds a parent as the mean of its tokens' vectors,
    which is nearly this, so the corpus is embedded once, as rag7 embeds it, not twice. A parent
    without units (a page's front matter) is embedded on its own.
    """
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
    seen = set()
    chosen = []
    for unit in ranked_units:
        parent = parent_of[unit]
        if parent is None:
            continue
        if parent in seen:
            continue
        seen.add(parent)
        chosen.append((parent, unit))
    return chosen


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
    handed = []
    remaining = budget_tokens
    for doc_id, parent, unit in candidates:
        if remaining <= 0:
            break
        page = pages[doc_id]
        room = remaining
        if span_tokens < room:
            room = span_tokens
        start, end = parent
        used = count_tokens(page[start:end])
        if used > room:
            window = window_around(page, parent, unit, room)
            if window is None:
                continue  # even the unit does not fit: try the next candidate
            start, end = window
            used = count_tokens(page[start:end])
        handed.append((doc_id, start, end))
        remaining = remaining - used
    return handed


# %% [markdown]
# ## 5. Search
#
# `search(pages, questions, budget_tokens)` puts it together: the index of
# the pages (built once), the questions embedded, all units ranked for all
# questions by one matrix product, then for each question its parents (each
# once) read within the budget. What comes back, for each question, is a
# list of `(doc_id, start, end)` spans, best first.


# %%
def search(pages, questions, budget_tokens=BUDGET_TOKENS, title=TITLE, embedder=None):
    """For each question, the (doc_id, start, end) spans a reader gets, best first, within budget.

    `title` goes into every header, as rag7's; `embedder` is embed()'s model (None: the default).
    """
    index = build_index(pages, title, embedder)
    if not questions:
        return []
    if not index.units:
        return [[] for _ in questions]
    scores = unit_scores(index, embed(list(questions), embedder))
    rankings = np.argsort(-scores, axis=1, kind="stable")[:, :DEPTH]
    results = []
    for ranked in rankings:
        candidates = []
        for parent, unit in best_parents([int(row) for row in ranked], index.parent_of):
            (doc_id, chunk), matched = index.parents[parent], index.units[unit]
            candidates.append((doc_id, (chunk.start, chunk.end), (matched.start, matched.end)))
        results.append(assemble(pages, candidates, budget_tokens))
    return results


# %% [markdown]
# ## 6. Does it pay? At equal reading cost
#
# rag8's harness, its test questions and its headline figure: recall within
# 1,000 retrieved tokens, by kind of question. Beside rag10: rag7's chunks
# with tables whole and with a chunk per table row (the course's recommended
# chunker), and paragraphs with the page's title, a common recipe.

# %%
BASELINES = ("paragraphs + title", "markdown + header", "header + table rows")
NAMES = {"paragraphs + title": "paragraphs + title", "markdown + header": "rag7, tables whole",
         "header + table rows": "rag7, table rows", "rag10": "rag10, small to big"}
# A table question (dev split): its row is matched, its whole table read.
EXAMPLE_QUESTION = "w3-010"


def recall_within(spans, question):
    gold = rag8.gold_spans(question)
    return rag8.recall_at_k(spans, gold, len(spans)) if spans else 0.0


def baseline_hits(strategy, questions):
    """For each question, the hits of a rag8 strategy that fit in the budget, best first."""
    chunks = rag8.chunk_corpus(strategy, rag8.CHUNK_TOKENS)
    return [rag8.within_budget([hit for _, *hit in ranked], [chunks[row][1].n_tokens for row, *_ in ranked],
                               BUDGET_TOKENS)
            for ranked in rag8.rankings(chunks, questions, embedder_name())]


def step_compare(questions, found):
    """Recall within the budget by kind: the three baselines and rag10. Returns every method's hits."""
    hits = {strategy: baseline_hits(strategy, questions) for strategy in BASELINES}
    hits["rag10"] = found
    print(f"2. Recall within {BUDGET_TOKENS:,} retrieved tokens, by kind ({len(questions)} test questions)")
    print(f"   {'method':<21} " + " ".join(f"{kind[:10]:>10}" for kind in rag8.KINDS))
    for method, per_question in hits.items():
        scores = {}
        for question, spans in zip(questions, per_question):
            for kind in (question["kind"], "all"):
                scores.setdefault(kind, []).append(recall_within(spans, question))
        print(f"   {NAMES[method]:<21} " + " ".join(f"{sum(s) / len(s):>10.2f}" for s in
                                                   (scores[kind] for kind in rag8.KINDS)))
    return hits


def tokens_to_answer(spans, question, pages):
    """Tokens read up to and including the first span holding the answer, or None."""
    read = 0
    for span in spans:
        read += count_tokens(pages[span[0]][span[1] : span[2]])
        if any(rag8.holds(span, gold) for gold in rag8.gold_spans(question)):
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


def step_example(question, index, pages):
    """The lab's question: the unit that matched best, and the parent the reader gets for it."""
    (spans,) = search(pages, [question["question"]])
    (scores,) = unit_scores(index, embed([question["question"]]))
    unit = index.units[int(np.argmax(scores))]
    owner = next(chunk for page, chunk in index.parents
                 if page == question["doc_id"] and chunk.start <= question["start"] < chunk.end)
    print(f"\n4. {question['question']!r}")
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


def small_to_big(pages, scores, units, parent_of, parents, budget_tokens, span_tokens=READ_TOKENS, depth=DEPTH):
    """The parents of the depth best-scored units, each once, read by assemble."""
    rows = list(range(len(scores)))
    rows.sort(key=lambda row: -float(scores[row]))
    chosen = []
    for parent, unit in best_parents(rows[:depth], parent_of):
        page, first, last = parents[parent]
        chosen.append((page, (first, last), (units[unit][1], units[unit][2])))
    return assemble(pages, chosen, budget_tokens, span_tokens)


def main():
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
    print(f"\n1. {len(pages)} pages: {len(index.parents)} parents (rag7, {PARENT_TOKENS} tokens, no overlap), "
          f"{len(index.units) - parents} small units, and the parents matched whole too")
    print("   " + ", ".join(f"{count} {plural.get(kind, kind + 's')}"
                           for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])))
    found = search(pages, [q["question"] for q in questions])
    hits = step_compare(questions, found)
    step_show(questions, hits, pages)

    example = next(q for q in corpus_questions() if q["id"] == EXAMPLE_QUESTION)
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
    parent = (example["doc_id"], owner.start, owner.end)
    checks.check("the answer's parent is handed over for the lab's question", parent in example_spans,
                 f"{parent} {'among' if parent in example_spans else 'not among'} {len(example_spans)} spans")
    return checks.verdict()


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag10-small-to-big.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 parent_index` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "parent_index")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag10")  # labs/hints/rag10.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
