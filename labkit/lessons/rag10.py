"""rag10's given ground: the small units and their parents (read from datasets/ground for the course's
pages, cut by the earlier labs for any others), their vectors and how a unit is scored, the window a
reader gets of a parent too big, what the demonstration prints (recall at equal reading cost, by
kind, with intervals; the parent-size dial) and the checks the lab ends with. rag11 stands on the
same index. A curious student may read it; the lab is learnt without it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, replace
from typing import NamedTuple

import numpy as np

from academy_llm import (
    DEFAULT_EMBEDDER, corpus_pages, corpus_questions, count_tokens, describe_embedder, embed, embedder_name, make_chunk,
    token_positions, top_k_each,
)
from labkit import ground, load_lab
from labkit.cases import Case, Invariants, returns
from labkit.lessons.dial import say
from labkit.lessons.rag8 import within_budget
from labkit.markdown import body_start_of, split_lines
from labkit.seams import SEAMS
from labkit.token_index import TokenIndex
from labkit.retrieval import Recall, answer_shares
from labkit.uncertainty import NOT_SHOWN, claim, mean_interval, paired_difference, signed

TITLE = "Orbit docs"
PARENT_TOKENS = 192  # the parents: rag7's header chunks at this budget, without overlap, none longer
UNIT_TOKENS = 48  # the longest unit: a paragraph this short is one unit, a longer one a unit a sentence
DEPTH = 100  # how many units of a ranking are read, at most, to fill the budget
BUDGET_TOKENS = 1000  # what a reader reads for one question, as rag8 measures
ROWS = "rag7-rows-256"  # the course's recommended chunks (rag7 header + table rows, 256 tokens)
MEAN_POOLING = ("wordllama",)  # the embedders whose vector of a text is the mean of its tokens' vectors
WITH_PARENT = ("sentence", "paragraph")  # the kinds of unit scored with their parent: they carry no context


# ---- the units and the parents of a set of pages ------------------------------------------------

def is_course(pages, title):
    """True for the course's own pages under its title: their units and parents ship as given ground."""
    return title == TITLE and pages == corpus_pages()


def cut_pages(pages, title=TITLE, parent_tokens=PARENT_TOKENS, folder=None):
    """{doc_id: (parents, units)}, Chunks each: the parents rag7's header chunks of at most
    `parent_tokens`, the units with their kind and, as `header`, their context. The course's pages
    read them from datasets/ground (made by tools/make_ground.py); any other pages are cut here with
    the earlier labs in `folder` (rag5's seams, rag6's blocks, rag7's headers)."""
    if is_course(pages, title):
        shipped = sorted(int(name.rsplit("-", 1)[1]) for name in ground.names() if name.startswith("rag10-parents-"))
        if parent_tokens not in shipped:
            raise SystemExit(f"rag10: parents of {parent_tokens!r} tokens are not shipped for the course's pages: "
                             f"choose PARENT_SIZES among {', '.join(map(str, shipped))}")
        parents, units = ground.chunks(f"rag10-parents-{parent_tokens}"), ground.chunks(f"rag10-units-{UNIT_TOKENS}")
        return {page: (parents[page], units[page]) for page in pages}
    labs = [load_lab(name, folder) for name in ("rag5", "rag6", "rag7")]
    return {page: cut_page(text, title, parent_tokens, *labs) for page, text in pages.items()}


def cut_page(text, title, parent_tokens, rag5, rag6, rag7):
    """(parents, units) of one page, cut by the earlier labs given: rag6's scan_blocks, rag5's
    split_at_seams, pack and recursive_chunks, rag7's header_chunks."""
    index = TokenIndex(text)
    units = [make_chunk(text, start, end, index.count(start, end), kind=kind, header=context)
             for start, end, kind, context in unit_spans(text, index, rag5, rag6)]
    return parents_of(text, title, parent_tokens, index, rag5, rag7), units


LIST_MARKER = re.compile(r"[ \t]*(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")  # where a list item starts


def unit_spans(text, index, rag5, rag6):
    """The small units of a Markdown page, as (start, end, kind, context), in order, whitespace trimmed.

    A table gives a unit per body row ("row"), a list one per item ("item"), a fence or indented
    code one ("code"); a paragraph of UNIT_TOKENS or fewer is one unit ("paragraph"), a longer one a
    unit per sentence ("sentence"). Headings and rules give none. `context` is what a unit needs to
    be understood: a row, its table's column names; an item or code, the paragraph just before it.
    A unit longer than UNIT_TOKENS is cut at rag5's seams.
    """
    sentence_end = dict(SEAMS)["sentence end"]
    lines = split_lines(text, body_start_of(text))
    spans, intro = [], ""
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
            cuts = [m.end() for m in sentence_end.finditer(text, first.start, last.end)]
            ends = [cut for cut in cuts if cut < last.end] + [last.end]
            spans += [(start, end, "sentence", "") for start, end in zip([first.start] + ends, ends)]
        intro = text[first.start : last.end].strip() if block.kind == "paragraph" else ""
    return [(*piece, kind, context) for start, end, kind, context in spans
            for piece in short_pieces(text, start, end, UNIT_TOKENS, index, rag5)]


def short_pieces(text, start, end, max_tokens, index, rag5):
    """text[start:end] as (start, end) pieces of about max_tokens at most, cut and packed at rag5's
    seams, whitespace trimmed."""
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


def parents_of(text, title, parent_tokens, index, rag5, rag7):
    """rag7's header chunks of a page, without overlap; one longer than `parent_tokens` (a table or a
    code block, which rag6 keeps whole) cut at rag5's seams, each piece with the chunk's header."""
    parents = []
    for chunk in rag7.header_chunks(text, title, parent_tokens) if text else []:
        if chunk.n_tokens <= parent_tokens:
            parents.append(chunk)
            continue
        for start, end in short_pieces(text, chunk.start, chunk.end, parent_tokens, index, rag5):
            tokens = index.count(start, end)
            if tokens > parent_tokens:  # an estimate a token short at an unclean cut: cut it again, exactly
                parents += [replace(piece, start=start + piece.start, end=start + piece.end, kind=chunk.kind,
                                    section=chunk.section, header=chunk.header)
                            for piece in rag5.recursive_chunks(text[start:end], parent_tokens)]
            else:
                parents.append(make_chunk(text, start, end, tokens, section=chunk.section, kind=chunk.kind,
                                          header=chunk.header))
    return parents


def middle_owner(units, parents):
    """For each unit, the parent holding its middle character, or None: how rag11 places a unit (nearly
    always the parent rag10's parent_index gives it). Units and parents are a page's chunks (each with
    .start and .end), the parents sorted and apart: the index's own records, not rag10's spans."""
    starts = [parent.start for parent in parents]
    owners = []
    for unit in units:
        middle = (unit.start + unit.end - 1) // 2
        row = bisect.bisect_right(starts, middle) - 1
        owners.append(row if row >= 0 and middle < parents[row].end else None)
    return owners


# ---- the index: units, parents, vectors ------------------------------------------------------------

class Unit(NamedTuple):
    """A small unit, or a parent matched as a whole: where it is, and what the embedder sees of it."""

    doc_id: str
    start: int
    end: int
    kind: str  # row, item, code, paragraph, sentence; "parent" for a parent matched as a whole
    embedded: str  # its parent's header, its context, its text


@dataclass
class Index:
    pages: dict  # doc_id -> text
    parents: list  # [(doc_id, Chunk)]
    units: list  # [Unit]: the small units, then the parents matched whole
    parent_of: list  # for each unit, its parent's row in `parents`
    vectors: np.ndarray  # a unit vector per unit
    parent_unit: np.ndarray  # for each unit, the row in `units` of its parent matched whole
    with_parent: np.ndarray  # for each unit, True if it is scored with its parent (a sentence, a short paragraph)

    spans: list = None  # (doc_id, start, end) of each unit
    parent_spans: list = None  # (doc_id, start, end) of each parent

    def __post_init__(self):
        self.spans = [(unit.doc_id, unit.start, unit.end) for unit in self.units]
        self.parent_spans = [(doc_id, chunk.start, chunk.end) for doc_id, chunk in self.parents]


INDEXES = {}


def build_index(pages, title=TITLE, embedder=None, parent_tokens=PARENT_TOKENS, folder=None, owner=None):
    """The Index of `pages`, each unit placed in its parent by `owner(units, parents)` of (start, end)
    spans (rag10 passes its parent_index; without one, middle_owner), built once per pages, title,
    embedder and parent size.

    A unit is embedded with its parent's header and its context. Each parent is one more unit,
    matched whole: with wordllama its vector is the mean of its units' vectors weighted by their
    tokens (nearly its own embedding, the corpus embedded once); any other embedder embeds it whole.
    """
    cut = cut_pages(pages, title, parent_tokens, folder)
    owners = {page: list(owner([(u.start, u.end) for u in units], [(p.start, p.end) for p in parents])
                         if owner else middle_owner(units, parents))
              for page, (parents, units) in cut.items()}
    key = (tuple(sorted(pages.items())), title, describe_embedder(embedder), parent_tokens,
           tuple((page, tuple(rows)) for page, rows in sorted(owners.items())))
    if key in INDEXES:
        return INDEXES[key]
    parents, units, parent_of, sizes = [], [], [], []
    for page, (page_parents, page_units) in cut.items():
        for unit, row in zip(page_units, owners[page]):
            if row is not None:
                embedded = "\n".join(part for part in (page_parents[row].header, unit.header, unit.text) if part)
                units.append(Unit(page, unit.start, unit.end, unit.kind, embedded))
                parent_of.append(len(parents) + row)
                sizes.append(unit.n_tokens)
        parents += [(page, chunk) for chunk in page_parents]
    vectors = unit_vectors([unit.embedded for unit in units], parent_of, sizes, parents, embedder)
    first = len(units)
    units += [Unit(page, chunk.start, chunk.end, "parent", chunk.embedding_text) for page, chunk in parents]
    parent_of += range(len(parents))
    with_parent = np.array([unit.kind in WITH_PARENT for unit in units], dtype=bool)
    INDEXES[key] = Index(dict(pages), parents, units, parent_of, vectors,
                         first + np.array(parent_of, dtype=np.int64), with_parent)
    return INDEXES[key]


def unit_vectors(texts, parent_of, sizes, parents, embedder):
    """The units' vectors, then a vector per parent (pooled from its units' for MEAN_POOLING)."""
    if embedder_name(embedder) not in MEAN_POOLING or not texts:
        everything = texts + [chunk.embedding_text for _, chunk in parents]
        return embed(everything, embedder) if everything else np.zeros((0, 1))
    vectors = embed(texts, embedder)
    pooled = np.zeros((len(parents), vectors.shape[1]), np.float32)
    np.add.at(pooled, np.array(parent_of, dtype=np.int64), vectors * np.array(sizes, np.float32)[:, None])
    alone = [number for number in range(len(parents)) if not pooled[number].any()]
    if alone:
        pooled[alone] = embed([parents[number][1].embedding_text for number in alone], embedder)
    lengths = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.concatenate([vectors, pooled / np.where(lengths > 0, lengths, 1)])


def unit_scores(index, question_vectors):
    """A row per question, a column per unit: its cosine, or for a sentence or a short paragraph (no
    context of its own) the mean of its cosine and its parent's. One matrix product for all."""
    scores = np.asarray(question_vectors, dtype=np.float32) @ index.vectors.T
    prose = index.with_parent
    scores[:, prose] = (scores[:, prose] + scores[:, index.parent_unit[prose]]) / 2
    return scores


def window_around(text, parent, unit, room):
    """The (start, end) slice of text[parent] around `unit`, of at most `room` tokens, or None.

    It grows from the unit a token at a time on each side in turn, as far as the parent and the
    room allow; it starts and ends where tokens do. None if the unit itself does not fit in `room`.
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
        if offsets[left] < unit[0] - parent[0]:
            left += 1
        elif offsets[right] > unit[1] - parent[0]:
            right -= 1
        else:
            return None
    return parent[0] + int(offsets[left]), parent[0] + int(offsets[right])


# ---- the report: recall at equal reading cost, by kind, with intervals -------------------------

def recommended_hits(questions, embedder=None, budget_tokens=BUDGET_TOKENS):
    """For each question, the course's recommended chunks (ROWS) best first, while they fit in the budget."""
    chunks = [(page, chunk) for page, found in ground.chunks(ROWS).items() for chunk in found]
    ranked = top_k_each(embed([q["question"] for q in questions], embedder),
                        embed([chunk.embedding_text for _, chunk in chunks], embedder), 50)
    return [within_budget([(chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in top],
                          [chunks[row][1].n_tokens for row, _ in top], budget_tokens) for top in ranked]


def by_kind(questions, scores):
    """{kind: its questions' scores} for "all", then each kind the questions have (a Recall's split)."""
    recall = Recall(BUDGET_TOKENS, tuple(question["kind"] for question in questions), tuple(scores), ())
    return {kind: recall.of(kind) for kind in ("all", *(kind for kind in recall.by_kind() if kind != "all"))}


def print_table(questions, scores, baseline):
    """Recall by kind for each method ({name: per-question scores}), mean above its 95% interval, then
    each method minus `baseline`, paired ('~': the interval holds 0)."""
    kinds = list(by_kind(questions, next(iter(scores.values()))))
    width = max(len(name) for name in scores) + 2
    print("   " + " " * width + "".join(kind[:13].center(14) for kind in kinds))
    for name, values in scores.items():
        split = by_kind(questions, values)
        cells = [mean_interval(split[kind]) for kind in kinds]
        print(f"   {name:<{width}}" + "".join(f"{c.estimate:.2f}".center(14) for c in cells))
        print("   " + " " * width + "".join(f"[{c.low:.2f},{c.high:.2f}]".center(14) for c in cells))
    print(f"   minus {baseline}, paired over the same questions (~: the interval holds 0)")
    base = by_kind(questions, scores[baseline])
    for name, values in scores.items():
        if name == baseline:
            continue
        split = by_kind(questions, values)
        cells = [paired_difference(base[kind], split[kind]) for kind in kinds]
        print(f"   {name:<{width}}" + "".join((signed(c.estimate, c.digits()) + ("" if c.shown else "~")).center(14)
                                               for c in cells))
        print("   " + " " * width + "".join(f"[{signed(c.low, c.digits())},{signed(c.high, c.digits())}]".center(14)
                                            for c in cells))


def kind_claims(questions, ours, other, name, other_name):
    """The sentences a paired difference (ours minus other) supports: overall, then by kind."""
    split, base = by_kind(questions, ours), by_kind(questions, other)
    difference = {kind: paired_difference(base[kind], split[kind]) for kind in split}
    lines = [claim(difference.pop("all"), name, other_name)]
    shown = [f"{d.verdict()} on {kind} ({d})" for kind, d in difference.items() if d.shown]
    unshown = [kind for kind, d in difference.items() if not d.shown]
    if shown:
        lines.append(f"by kind, {name} finds " + ", ".join(shown))
    if unshown:
        lines.append(f"by kind, a difference is {NOT_SHOWN} on {', '.join(unshown)}")
    return lines


def compare_methods(questions, found, embedder=None):
    """Step 2: small to big, parents matched whole alone, and the recommended chunks, recall within the
    budget by kind; then what the data shows about small to big."""
    found = dict(found)
    found["rag7 rows"] = recommended_hits(questions, embedder)
    scores = {name: answer_shares(questions, spans) for name, spans in found.items()}
    print(f"\n2. Recall within {BUDGET_TOKENS:,} retrieved tokens, by kind ({len(questions)} test questions, "
          f"{describe_embedder(embedder)}), each with its 95% interval")
    print_table(questions, scores, "small to big")
    print("   What this data shows:")
    for other in ("parents alone", "rag7 rows"):
        for line in kind_claims(questions, scores["small to big"], scores[other], "small to big", other):
            say(f"- {line}")
    ours = scores["small to big"]
    pays = [f"against {other}, {paired_difference(scores[other], ours).verdict('it pays', 'it costs')}"
            for other in ("parents alone", "rag7 rows")]
    say(f"Does matching small and reading big pay, with {describe_embedder(embedder)}? "
        + "; ".join(pays).capitalize() + ".")
    return scores


def parent_dial(questions, found_by_value):
    """The dial: recall within the budget at each parent size ({tokens: each question's spans}), with its
    interval, each step to the next paired, and the sentence the intervals support."""
    scores = {value: answer_shares(questions, found) for value, found in found_by_value.items()}
    print(f"   {'parent tokens':>14} {'recall within ' + format(BUDGET_TOKENS, ',') + ' [95%]':>32} "
          f"{'spans read':>11}")
    for value, values in scores.items():
        spans = sum(len(found) for found in found_by_value[value]) / len(questions)
        print(f"   {value!s:>14} {mean_interval(values).plain():>32} {spans:>11.1f}")
    verdicts = []
    for low, high in zip(scores, list(scores)[1:]):
        difference = paired_difference(scores[low], scores[high])
        verdicts.append(f"{low} -> {high} {difference.verdict()} ({difference})")
        print(f"   {low} -> {high}: {difference}, {difference.verdict()}")
    if verdicts:
        say("On these questions, at the same reading budget, the steps up the parent size find: "
            + "; ".join(verdicts) + f" (\"{NOT_SHOWN}\": the interval holds 0). Bigger parents read fewer, "
            "longer passages; smaller ones more, shorter ones.")
    return scores


# ---- the checks, worked out by hand ----------------------------------------------------------------

PARENTS = [(0, 10), (10, 20), (25, 40)]
ALPHA = " ".join(["alpha"] * 30)  # "alpha" then " alpha" 29 times: 30 tokens
WIDE = "\U00029755" * 10  # 10 characters of 4 tokens each: 40 tokens
PAGES = {"a": ALPHA, "w": WIDE, "b": "Short one."}  # "Short one." is 3 tokens
WHOLE_A, WHOLE_W, WHOLE_B = ("a", (0, len(ALPHA)), (0, 5)), ("w", (0, 10), (4, 5)), ("b", (0, 10), (0, 10))
MIDDLE_A = ("a", (0, len(ALPHA)), (60, 65))  # the 11th "alpha"


def assembled(expected_first=(), windows=()):
    """A judge for assemble and small_to_big: the first spans as `expected_first`, then one window per
    (doc_id, unit, room) of `windows`: a slice holding the unit, of room or room - 1 tokens."""
    def judge(spans, pages, *args, **keywords):
        spans = [tuple(span) for span in spans]
        if len(spans) != len(expected_first) + len(windows) or spans[: len(expected_first)] != list(expected_first):
            raise ValueError(f"returned {spans}, expected {list(expected_first)} then {len(windows)} window(s)")
        for (doc_id, start, end), (page, unit, room) in zip(spans[len(expected_first) :], windows):
            tokens = count_tokens(pages[doc_id][start:end])
            if doc_id != page or not start <= unit[0] < unit[1] <= end or not room - 1 <= tokens <= room:
                raise ValueError(f"returned {spans}: ({doc_id!r}, {start}, {end}) is not the window of "
                                 f"{page!r} around {unit} of {room} tokens (it holds {tokens})")
    return judge


def pairs(expected):
    """A judge: the result, read as a list of tuples, equals `expected`."""
    def judge(result, *args, **keywords):
        got = [tuple(item) for item in result]
        if got != expected:
            raise ValueError(f"returned {got}, expected {expected}")
    return judge


def hand_cases(lab):
    """{function: its cases worked out by hand}, for the four functions of `lab` (its globals())."""
    parent_index, best_parents, assemble, small_to_big = (
        lab[name] for name in ("parent_index", "best_parents", "assemble", "small_to_big"))
    units, parents = [("a", 0, 5), ("a", 60, 65), ("b", 0, 10)], [("a", 0, len(ALPHA)), ("b", 0, 10)]
    return {
        "parent_index": [
            Case("no units", parent_index, ([], PARENTS), returns([])),
            Case("no parents", parent_index, ([(0, 5)], []), returns([None])),
            Case("a unit ending exactly where its parent ends", parent_index, ([(4, 10)], PARENTS), returns([0])),
            Case("a unit across two parents, most of it in the second", parent_index, ([(8, 18)], PARENTS),
                 returns([1])),
            Case("a unit across two parents, a tie", parent_index, ([(5, 15)], PARENTS), returns([0])),
            Case("a unit in a gap between parents", parent_index, ([(21, 24)], PARENTS), returns([None])),
            Case("a unit from a gap into a parent", parent_index, ([(22, 27)], PARENTS), returns([2])),
            Case("a unit across three parents", parent_index, ([(5, 38)], PARENTS), returns([2])),
            Case("several units, in order", parent_index, ([(0, 3), (3, 9), (12, 19), (30, 31)], PARENTS),
                 returns([0, 0, 1, 2])),
        ],
        "best_parents": [
            Case("nothing ranked", best_parents, ([], [0, 1]), pairs([])),
            Case("two units of one parent", best_parents, ([1, 0], [5, 5]), pairs([(5, 1)])),
            Case("a parent comes back after another", best_parents, ([0, 2, 1, 3], [0, 0, 1, 1]),
                 pairs([(0, 0), (1, 2)])),
            Case("a unit without a parent", best_parents, ([2, 0, 1], [3, 4, None]), pairs([(3, 0), (4, 1)])),
            Case("parent 0 is a parent like any other", best_parents, ([1, 0], [0, 0]), pairs([(0, 1)])),
        ],
        "assemble": [
            Case("a budget of 0", assemble, (PAGES, [WHOLE_B], 0), pairs([])),
            Case("no candidates", assemble, (PAGES, [], 100), pairs([])),
            Case("a parent exactly the budget", assemble, (PAGES, [WHOLE_A], 30), pairs([("a", 0, len(ALPHA))])),
            Case("two parents that fit", assemble, (PAGES, [WHOLE_B, WHOLE_A], 100),
                 pairs([("b", 0, 10), ("a", 0, len(ALPHA))])),
            Case("the budget spent: nothing more", assemble, (PAGES, [WHOLE_A, WHOLE_B], 30),
                 pairs([("a", 0, len(ALPHA))])),
            Case("a parent a token over the budget: a window around its unit", assemble,
                 (PAGES, [MIDDLE_A], 29), assembled(windows=[("a", (60, 65), 29)])),
            Case("a parent too big after one that fits: a window of what is left", assemble,
                 (PAGES, [WHOLE_B, MIDDLE_A], 13), assembled([("b", 0, 10)], [("a", (60, 65), 10)])),
            Case("characters of 4 tokens: count tokens, not characters", assemble,
                 (PAGES, [WHOLE_W, WHOLE_B], 20), assembled(windows=[("w", (4, 5), 20)])),
            Case("a unit too big for what is left: skip it, read the next", assemble,
                 (PAGES, [("w", (0, 10), (0, 10)), WHOLE_B], 12), pairs([("b", 0, 10)])),
            Case("a parent within the budget but over span_tokens: its window", assemble,
                 (PAGES, [WHOLE_B, MIDDLE_A], 100), assembled([("b", 0, 10)], [("a", (60, 65), 12)]),
                 dict(span_tokens=12)),
        ],
        "small_to_big": [
            Case("the best unit's parent first", small_to_big,
                 (PAGES, [0.1, 0.2, 0.9], units, [0, 0, 1], parents, 100), pairs([("b", 0, 10), ("a", 0, len(ALPHA))])),
            Case("two units of one parent: read once", small_to_big,
                 (PAGES, [0.9, 0.8, 0.1], units, [0, 0, 1], parents, 100), pairs([("a", 0, len(ALPHA)), ("b", 0, 10)])),
            Case("a tie: the lower row first", small_to_big,
                 (PAGES, [0.5, 0.5, 0.5], units, [0, 0, 1], parents, 100), pairs([("a", 0, len(ALPHA)), ("b", 0, 10)])),
            Case("only the `depth` best units are read", small_to_big,
                 (PAGES, [0.1, 0.2, 0.9], units, [0, 0, 1], parents, 100), pairs([("b", 0, 10)]), dict(depth=1)),
            Case("a parent too big: the window around the best unit", small_to_big,
                 (PAGES, [0.1, 0.9, 0.2], units, [0, 0, 1], parents, 13), assembled(windows=[("a", (60, 65), 13)])),
            Case("no units", small_to_big, (PAGES, [], [], [], parents, 100), pairs([])),
        ],
    }


def no_overlaps(results):
    """The first (doc_id, start, end) pair of one result that overlap, or None."""
    for spans in results:
        ordered = sorted(spans)
        for first, second in zip(ordered, ordered[1:]):
            if first[0] == second[0] and second[1] < first[2]:
                return first, second
    return None


def check_by_hand(lab, name="rag10"):
    """The lab's functions on the cases worked out by hand, first: the search is built on them."""
    if embedder_name() != DEFAULT_EMBEDDER:  # the embedder chosen, named before every step that uses it
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), in every step\n")
    print("0. Your functions, checked first on cases worked out by hand")
    checks = Invariants(name)
    ok = all([checks.check_cases(f"tricky inputs: {function} as worked out by hand", cases)
              for function, cases in hand_cases(lab).items()])
    if not ok:
        print("   The search is built on them: fix them, then search.")
    return checks, ok


def describe(index):
    """Step 1: how many parents and units, by kind."""
    kinds = {}
    for unit in index.units:
        kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
    parents = kinds.pop("parent", 0)
    print(f"\n1. {len(index.pages)} pages: {len(index.parents):,} parents (rag7's header chunks, "
          f"{PARENT_TOKENS} tokens, no overlap), {len(index.units) - parents:,} small units: "
          + ", ".join(f"{count:,} {kind}s" for kind, count in sorted(kinds.items(), key=lambda kv: -kv[1])))


def checks(lab, found, pages, invariants):
    """The checks rag10 ends with, on every question's spans, then the public grading tests."""
    print("\nInvariants")
    bad = next(((d, s, e) for spans in found for d, s, e in spans if not (d in pages and 0 <= s < e <= len(pages[d]))),
               None)
    spent = max((sum(count_tokens(pages[d][s:e]) for d, s, e in spans) for spans in found), default=0)
    invariants.check(f"every span an exact slice of its page, each question's within {BUDGET_TOKENS:,} tokens",
                     bad is None and spent <= BUDGET_TOKENS, f"{bad} is no slice" if bad else f"at most {spent} used")
    overlap = no_overlaps(found)
    invariants.check("no text handed over twice: no two spans of a question overlap", overlap is None,
                     f"{overlap[0]} and {overlap[1]}" if overlap else "")
    invariants.check_public_tests(lab)
    return invariants.verdict()


def test_questions():
    return corpus_questions("test")
