"""Checks the grading tests share, each failing with one line that says what was wrong.

The gradebook gives a failed test one line: the lab's last call, then the first
line of the assertion's message. A bare `assert all(...)` would say "assert
False"; these checks say what was expected against what came back, and name
the chunk or span at fault:

    grading_checks.lossless(text, chunks)
    -> "recursive_chunks('go https://…', 8, 0): characters [3, 9) 'https:' are in no chunk"
"""

import bisect
import hashlib
import logging
import math
import os
import re
import warnings
from fractions import Fraction
from pathlib import Path
from typing import NamedTuple

from markdown_oracle import (
    FRONT_MATTER, cuts, headings, indented_code_cuts, protected_regions, top_blocks, whole_blocks,
)

from academy_llm import (
    Chunk,
    check_lossless,
    count_tokens,
    is_clean_cut,
    token_positions,
    token_starts,
)

SEED_FILE = Path(__file__).resolve().parents[2] / "tests" / "grading" / "hidden" / "seed.txt"


def short(value, width: int = 60) -> str:
    """repr(value), cut to `width` characters: a message stays one readable line."""
    text = repr(value)
    return text if len(text) <= width else text[: width - 1] + "…"


def name(chunk) -> str:
    """'chunk [12, 40) 'the text…'': a chunk as a reader finds it in the page."""
    return f"chunk [{chunk.start}, {chunk.end}) {short(chunk.text, 30)}"


def spans(chunks) -> list:
    return [(c.start, c.end) for c in chunks]


def expect(got, expected) -> None:
    """The lab's value equals `expected`; a long list is shown where it first differs."""
    if got == expected:
        return
    sequences = isinstance(got, (list, tuple)) and isinstance(expected, (list, tuple))
    if sequences and len(repr(got)) > 100:
        raise AssertionError(f"returned {len(got)} items: {first_difference(got, expected)}")
    raise AssertionError(f"returned {short(got, 100)}, expected {short(expected, 100)}")


def first_difference(got, expected) -> str:
    """Where two sequences first differ, in words."""
    for number, (mine, theirs) in enumerate(zip(got, expected), 1):
        if mine != theirs:
            return f"item {number} is {short(mine)}, expected {short(theirs)}"
    return f"the first {min(len(got), len(expected))} as expected, {len(expected)} expected in all"


def expect_close(got, expected, tolerance: float = 1e-9) -> None:
    """The lab's number (or sequence of numbers) equals `expected` up to rounding."""
    got = got.tolist() if hasattr(got, "tolist") else got  # a numpy array or number
    wanted = expected if isinstance(expected, (tuple, list)) else (expected,)
    values = got if isinstance(got, (tuple, list)) else (got,)
    close = len(values) == len(wanted) and all(
        isinstance(value, (int, float)) and math.isclose(value, want, rel_tol=tolerance,
                                                         abs_tol=tolerance)
        for value, want in zip(values, wanted))
    assert close, f"returned {short(got)}, expected {short(expected)}"


def are_chunks(value) -> list:
    """`value` is a list of Chunk; returned as such for the checks after it."""
    assert isinstance(value, list), f"returned {type(value).__name__} {short(value)}, not a list"
    for number, item in enumerate(value, 1):
        assert isinstance(item, Chunk), f"item {number} is {short(item)}, not a Chunk"
    return value


def lossless(text: str, chunks, whitespace_may_be_lost: bool = False) -> None:
    """Exact slices, in order, nothing lost (academy_llm.check_lossless, as an assertion), each
    with its true n_tokens: a count the lab returns is a claim, as its spans are."""
    are_chunks(chunks)
    try:
        check_lossless(text, chunks, whitespace_may_be_lost)
    except ValueError as error:
        raise AssertionError(str(error)) from None
    true_counts(chunks)


def in_budget(chunks, max_tokens: int) -> None:
    """Every chunk not flagged oversize embeds in max_tokens: its embedding_text, header and all,
    counted here. Whether a flagged one may be over is for the lab's contract to say:
    no_oversize, or whole_and_over_budget."""
    for number, chunk in enumerate(chunks, 1):
        n = count_tokens(chunk.embedding_text)
        assert chunk.oversize or n <= max_tokens, (
            f"chunk {number} [{chunk.start}, {chunk.end}) has {n} tokens{' with its header' if chunk.header else ''}, "
            f"over the budget of {max_tokens}")


def no_oversize(chunks) -> None:
    """A chunker whose contract has no oversize exception (rag4, rag5, rag9) flags no chunk."""
    for chunk in chunks:
        assert not chunk.oversize, (
            f"{name(chunk)} is flagged oversize; these chunks have no oversize exception")


def true_counts(chunks) -> None:
    """Each chunk's n_tokens is what the tokenizer counts for its text alone."""
    for chunk in chunks:
        n = count_tokens(chunk.text)
        assert chunk.n_tokens == n, (
            f"{name(chunk)} says {chunk.n_tokens} tokens, the tokenizer counts {n}")


def at_token_starts(text: str, chunks) -> None:
    """Chunks start and end where a token of the page starts (or at the text's end)."""
    cut_points = set(token_starts(text)) | {len(text)}
    for chunk in chunks:
        for edge in (chunk.start, chunk.end):
            assert edge in cut_points, (
                f"{name(chunk)}: offset {edge} is not where a token of the page starts")


def whole_and_over_budget(text: str, chunks, max_tokens: int) -> None:
    """A chunk flagged oversize is one block kept whole that really is over budget, by the
    grader's own reading (markdown_oracle, markdown-it-py), never by the lab's word.

    The chunk holds exactly one whole fenced or indented code block, table or
    front matter (markdown_oracle.whole_blocks), and its kind names that block
    ("code", "table" or "front_matter"). Before the block it may hold headings
    (a heading is glued to the piece after it, so a section's heading opens the
    chunk of its big table), and around it whitespace (blank lines, line
    breaks); nothing else. And the chunk from its first heading or the block's
    first line on (the blank lines after a block are the block's, as rag6 reads
    blocks), embedded with its header (rag7), counts more than max_tokens: blank
    lines before a block that fits are no reason to flag it.
    """
    blocks = whole_blocks(text)
    for chunk in (chunk for chunk in chunks if chunk.oversize):
        held = [block for block in blocks if chunk.start <= block[1] and block[2] <= chunk.end]
        assert len(held) == 1, (
            f"{name(chunk)} is flagged oversize, yet holds {len(held)} whole code blocks, tables or front "
            f"matter: only one, alone, may be over budget")
        kind, start, end = held[0]
        assert chunk.kind == kind, (
            f"{name(chunk)} is flagged oversize as {chunk.kind!r}, yet the block it holds at [{start}, {end}) "
            f"is {kind}")
        before = [heading[:2] for heading in headings(text) if heading[1] <= start]
        stray = stray_text(text, chunk, [(start, end)] + before)
        assert stray is None, (
            f"{name(chunk)} is flagged oversize, yet holds {short(text[stray:stray + 20], 24)} at {stray}, "
            f"outside the {kind} at [{start}, {end}) and the headings before it")
        first = min([start] + [heading for heading, _ in before if heading >= chunk.start])
        core = text[first : chunk.end]
        n = count_tokens(f"{chunk.header}\n{core}" if chunk.header else core)
        assert n > max_tokens, (
            f"{name(chunk)} is flagged oversize, yet its {kind} at [{start}, {end}) counts {n} tokens"
            f"{' with its header' if chunk.header else ''}, within max_tokens = {max_tokens}")


def stray_text(text: str, chunk, allowed) -> int | None:
    """The first offset of `chunk` that is neither whitespace nor inside an `allowed` (start, end), or None."""
    position = chunk.start
    for start, end in sorted(allowed) + [(chunk.end, chunk.end)]:
        gap = text[position : min(start, chunk.end)]
        if gap.strip():
            return position + len(gap) - len(gap.lstrip())
        position = max(position, end)
        if position >= chunk.end:
            return None
    return None


def true_sections(text: str, chunks) -> None:
    """Each chunk's section is a heading path of the page, as a real Markdown parser reads its
    headings (markdown_oracle.headings), never the lab's word.

    Accepted: the path in effect at the chunk's start or after a heading inside
    it; or, since a section with almost no body folds into its first child, the
    path of a heading after the chunk reached through headings each one deeper
    than the one before (## General, then ### Debian: the chunk of General may
    carry Debian's path).
    """
    marks = headings(text)
    starts = [start for start, _, _ in marks]
    for chunk in chunks:
        first = bisect.bisect_right(starts, chunk.start)  # the headings at or before its start
        inside = bisect.bisect_left(starts, chunk.end)  # ... and those before its end
        paths = [marks[first - 1][2] if first else ()] + [path for _, _, path in marks[first:inside]]
        for _, _, path in marks[inside:]:
            if len(path) <= len(paths[-1]) or path[: len(paths[-1])] != paths[-1]:
                break
            paths.append(path)
        section = tuple(chunk.section) if isinstance(chunk.section, (list, tuple)) else chunk.section
        assert section in paths, (
            f"{name(chunk)} says it is in the section {short(chunk.section)}; the page's headings put it in "
            f"{short(paths[0])}")


def nothing_protected_cut(text: str, chunks) -> None:
    """No chunk starts or ends strictly inside a fence, an indented code block or a table that a real
    Markdown parser finds."""
    blocks = {"fence": "fence", "table_open": "table", "code_block": "indented code block"}
    for kind, start, end, position in cuts(text, chunks) + indented_code_cuts(text, chunks):
        raise AssertionError(f"a chunk edge at {position} cuts the {blocks[kind]} at [{start}, {end}) "
                             f"{short(text[start:end], 40)}")


LISTS = ("bullet_list", "ordered_list")


def blocks_whole(text: str, chunks, max_tokens: int, overlap: int = 0) -> None:
    """Structure first, size second (rag6): chunks end where the page's blocks do.

    The blocks are the grader's own reading (markdown_oracle.top_blocks: a
    paragraph, a heading, a whole list or quote, a fence, a table). A block that
    fits the packing budget (packing_budget) is a piece no chunk cuts: no chunk
    ends inside it. Headings are glued to the block after them, so a heading and
    that block fit together or neither is judged; a piece runs from where the one
    before it ends to the next block's start, blank lines and all. A block over
    budget may be cut at rag5's seams. Front matter is a chunk of its own: a chunk
    ends after it, before the body's first block. Overlap moves starts, never ends.
    """
    budget = packing_budget(text, max_tokens, overlap)
    blocks = top_blocks(text)
    blank = {edge for line in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n|$)", text) if not line.group().strip()
             for edge in line.span()}  # a line of spaces of any kind (NBSP too) is blank to the lab, not to CommonMark
    ends = sorted(chunk.end for chunk in chunks)
    cuts = [end for end in ends if end not in blank]
    bounds = [start for _, start, _ in blocks[1:]] + [len(text)]  # where each block's piece ends
    pieces, glued = [], []  # glued: the headings waiting for the block after them
    for block, bound in zip(blocks, bounds):
        above = pieces[-1][0][-1] if pieces and not glued else None
        if above and above[0] in LISTS and block[0] in LISTS and text[above[2]:block[1]] in ("\n", "\r\n", "\r"):
            pieces[-1] = (pieces[-1][0] + [block], bound)  # a list right under a list: one, as the lab reads them
            continue
        glued.append(block)
        if block[0] != "heading" or bound == len(text):
            pieces.append((glued, bound))
            glued = []
    for (held, bound), begin in zip(pieces, [0] + [bound for _, bound in pieces]):
        if held[0][0] == "front_matter":
            end = held[0][2]
            assert bound == len(text) or any(end <= at <= bound for at in ends), (
                f"no chunk ends after the front matter at [0, {end}): it is a chunk of its own")
        if not surely_fits(text, begin, bound, budget):  # blank lines before the first block are its piece's
            continue
        for kind, start, end in held:
            inside = cuts[bisect.bisect_right(cuts, start):bisect.bisect_left(cuts, end)]
            assert not inside, (
                f"a chunk ends at {inside[0]}, inside the {kind.replace('_', ' ')} at [{start}, {end}) "
                f"{short(text[start:end], 30)}, which fits in {budget} tokens: a block that fits is never cut")


# ---- rag6's reader, packer and verify, judged by a real parser -----------------------------

LINE_END = re.compile(r"\r\n|\r|\n|\Z")
PARSER_KINDS = {"heading": "heading", "paragraph": "paragraph", "fence": "code", "code_block": "code",
                "table": "table", "bullet_list": "list", "ordered_list": "list", "blockquote": "quote"}


def parser_blocks(text: str, start: int = 0) -> list:
    """[(kind, start, end, level, title)] of the top-level blocks of text[start:] as markdown-it-py reads
    them (front matter aside), in rag6's kinds; `end` just after its last line's break (blank lines after it
    left out), as rag6's Block has it; a heading's level
    and title, 0 and "" for any other block."""
    titles = iter([(start_, int(level), title) for start_, level, title in heading_titles(text)])
    found = []
    for kind, block_start, block_end in top_blocks(text):
        if kind == "front_matter" or block_start < start:
            continue
        level, title = 0, ""
        if kind == "heading":
            _, level, title = next(item for item in titles if item[0] == block_start)
        if kind != "fence":  # a fence never closed holds the blank lines to the end; a parser's list holds
            block_end = block_start + len(text[block_start:block_end].rstrip())  # blank lines after it too
        block_end = LINE_END.search(text, block_end).end()  # just after that line's break
        found.append((PARSER_KINDS.get(kind, kind), block_start, block_end, level, title))
    return found


def heading_titles(text: str) -> list:
    """[(start, level, title)] of the page's top-level headings, as markdown-it-py reads them."""
    from markdown_oracle import _parsed

    lines, tokens = _parsed(text)
    return [(lines[opening.map[0]][0], int(opening.tag[1]), inline.content.strip())
            for opening, inline in zip(tokens, tokens[1:])
            if opening.type == "heading_open" and opening.level == 0 and opening.map]


def body_start(text: str) -> int:
    """Where a page's body starts: after its front matter and the blank lines after it; 0 if none."""
    match = FRONT_MATTER.match(text)
    return 0 if not match else re.compile(r"(?:[ \t]*(?:\r\n|\r|\n))*").match(text, match.end()).end()


def block_fields(text: str, start: int = 0) -> list:
    """(kind, start, end, level, title) of the parser's blocks of text[start:], each `end` just after its
    last line's break: the fields of the Blocks pack_blocks is given."""
    return parser_blocks(text, start)


def line_chunks(text: str, cuts) -> list:
    """Chunks of `text` cut at the starts of its lines numbered `cuts` (those past its end left out)."""
    starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    edges = sorted({0, len(text), *(starts[n] for n in cuts if n < len(starts))})
    return [Chunk(text[s:e], s, e, count_tokens(text[s:e])) for s, e in zip(edges, edges[1:])]


class BlockRecord(NamedTuple):
    """A Block as the grader reads one: the fields of the lab's Block."""

    kind: str
    start: int
    end: int
    level: int = 0
    title: str = ""


def blocks_as_parsed(text: str, start: int, blocks) -> None:
    """rag6's read_blocks: the Blocks of text[start:] are the parser's, kind, span (up to the last line
    break), level and title."""
    got = []
    for block in blocks:
        try:
            kind, begin, end = block.kind, int(block.start), int(block.end)
            level, title = int(getattr(block, "level", 0) or 0), str(getattr(block, "title", "") or "")
        except (AttributeError, TypeError, ValueError):
            raise AssertionError(f"read_blocks returned {short(block)}, not a Block(kind, start, end, level, title)")
        got.append((kind, begin, end, level, title))
    expected = parser_blocks(text, start)
    if got != expected:
        raise AssertionError(f"blocks {first_difference(got, expected)} of {short(text[start:], 40)}")


def block_path_at(blocks, position: int) -> tuple:
    """The heading path (titles) in effect at `position`, from the Blocks before it."""
    path = ()
    for block in blocks:
        if block.start > position:
            break
        if block.kind == "heading":
            path = tuple(entry for entry in path if entry[0] < block.level) + ((block.level, block.title),)
    return tuple(title for _, title in path)


def packed_whole(text: str, start: int, blocks, max_tokens: int, chunks) -> None:
    """rag6's pack_blocks on the `blocks` it was given (not read again: a block given as a table is
    one): the chunks tile text[start:] exactly with true counts; every boundary falls between blocks or
    inside a block too big for the budget that is neither code nor table; a heading starts a chunk;
    a chunk is in budget, or one code block or table over it (the heading right above it allowed),
    flagged and of its kind; each chunk's section is its blocks' heading path; and packing is
    greedy: a chunk and the block after it that together fit are one chunk."""
    chunks = are_chunks(chunks)
    at = start
    for chunk in chunks:
        assert chunk.start == at, (f"{name(chunk)} starts at {chunk.start}; the chunks tile the text from {start}, "
                                   f"so one starting at {at} was expected")
        at = chunk.end
    assert at == len(text), f"the chunks end at {at}, the text at {len(text)}: [{at}, {len(text)}) is in no chunk"
    true_counts(chunks)
    if not blocks:
        return
    bounds = [start] + [block.start for block in blocks[1:]] + [len(text)]
    units = list(zip(blocks, bounds, bounds[1:]))
    unit_of = {begin: (block, end) for block, begin, end in units}
    chunk_starts = {chunk.start for chunk in chunks}
    for block, begin, end in units:
        tokens = count_tokens(text[begin:end])
        protected = block.kind in ("code", "table")
        inside = [c.start for c in chunks if begin < c.start < end]
        if inside and (protected or tokens <= max_tokens):
            raise AssertionError(f"a chunk starts at {inside[0]}, inside the {block.kind} at [{begin}, {end}) "
                                 f"{short(text[begin:end], 30)}, which {'is never cut' if protected else 'fits'}")
        if block.kind == "heading" and begin not in chunk_starts:
            raise AssertionError(f"the heading {short(block.title)} at {begin} does not start a chunk")
    for number, chunk in enumerate(chunks):
        held = [(block, begin, end) for block, begin, end in units if chunk.start <= begin < chunk.end]
        if chunk.oversize:
            body = [unit for unit in held if unit[0].kind != "heading"]
            ok = (len(body) == 1 and body[0][0].kind in ("code", "table") and chunk.kind == body[0][0].kind
                  and chunk.end == body[0][2] and len(held) <= 2 and held[0][1] == chunk.start
                  and count_tokens(text[body[0][1]:body[0][2]]) > max_tokens)
            assert ok, (f"{name(chunk)} is flagged oversize: only one code block or table over budget, alone "
                        f"(the heading above it allowed), may be")
        else:
            assert chunk.n_tokens <= max_tokens, f"{name(chunk)} holds {chunk.n_tokens} tokens > {max_tokens}"
        section = tuple(chunk.section) if isinstance(chunk.section, (list, tuple)) else chunk.section
        expected = block_path_at(blocks, max(chunk.start, start))
        assert section == expected, f"{name(chunk)} has the section {short(section)}, not {short(expected)}"
        later = chunks[number + 1] if number + 1 < len(chunks) else None
        if later is None or chunk.oversize or later.oversize or later.start not in unit_of:
            continue
        block, end = unit_of[later.start]
        if block.kind == "heading" or count_tokens(text[later.start:end]) > max_tokens:
            continue
        if count_tokens(text[chunk.start:end]) <= max_tokens:
            raise AssertionError(f"{name(chunk)} and the {block.kind} after it fit together in {max_tokens} "
                                 f"tokens: pack them")


def verify_judged(verify, text: str, chunks) -> None:
    """rag6's verify: it raises ValueError when, and only when, a chunk starts or ends strictly inside a
    fence or table as markdown-it-py reads them (chunks here start and end at line starts). Asked about
    `chunks`, and, so that no constant answer passes, about the text in one chunk and, for each fence or
    table of two lines or more the parser finds, about chunks cut after its first line."""
    line_starts = [0] + [match.end() for match in re.finditer(r"\r\n|\r|\n", text)]
    inside = [next((number for number, at in enumerate(line_starts) if start < at < end), None)
              for _, start, end in protected_regions(text)]
    for asked in (chunks, line_chunks(text, []), *(line_chunks(text, [number]) for number in inside if number)):
        cut = cuts(text, asked)
        try:
            verify(text, asked)
        except ValueError:
            assert cut, f"verify raised ValueError, yet no chunk cuts a fence or table of {short(text, 40)}"
            continue
        assert not cut, (f"verify passed chunks {spans(asked)[:4]}, yet a chunk edge at {cut[0][3]} cuts the "
                         f"{'fence' if cut[0][0] == 'fence' else 'table'} at [{cut[0][1]}, {cut[0][2]})")

# ---- every ending a page may have -----------------------------------------------------

# A page whose last sentence is cut short: each ending below is put after it. A chunker that
# reads its text up to the last full stop, line end or block end loses what follows; one that
# handles a line break or CRLF only in the middle loses the last one.
PROSE_BODY = "Orbit runs jobs on satellites. The server decides what runs where.\n\nSatellites dial out on port 7401"
MARKDOWN_BODY = ("# Orbit\n\nOrbit runs jobs on satellites. The server decides what runs where.\n\n"
                 "## Satellites\n\nSatellites dial out on port 7401")
ENDINGS = (
    ("a final full stop", "."),
    ("no final full stop", ""),
    ("a question mark", "?"),
    ("a trailing space", ". "),
    ("trailing spaces, no full stop", "  \t "),
    ("a trailing newline", ".\n"),
    ("a trailing newline, no full stop", "\n"),
    ("trailing newlines", "\n\n\n"),
    ("a trailing line of spaces", ".\n  \n"),
    ("a lone CR", "\r"),
    ("a closing parenthesis", " (and 7402)"),
    ("a heading", ".\n\n## Next steps"),
    ("a heading and a newline", ".\n\n## Next steps\n"),
    ("a code fence", ":\n\n```sh\norbit run --now\n```"),
    ("an unclosed code fence", ":\n\n```sh\norbit run --now"),
    ("a table", ":\n\n| port | use |\n|---|---|\n| 7401 | jobs |"),
    ("a list", ":\n\n- jobs\n- heartbeats"),
    ("a quote", ".\n\n> Satellites never accept connections"),
    ("an indented line", ":\n\n    orbit run"),
)


def ending_texts() -> list:
    """(what, text): pages that end every way a page can, and the lab's own tricky texts
    (labkit.cases.TRICKY_TEXTS): whatever a lab's check finds there, the grader finds too. Each
    ending comes after a page of prose and after one of Markdown, with LF line ends and, for the
    prose, with CRLF ones too."""
    from labkit.cases import TRICKY_TEXTS

    texts = [(tricky.what, tricky.text) for tricky in TRICKY_TEXTS]
    for what, ending in ENDINGS:
        texts += [(f"prose, {what}", PROSE_BODY + ending),
                  (f"prose with CRLF, {what}", (PROSE_BODY + ending).replace("\r", "").replace("\n", "\r\n")),
                  (f"Markdown, {what}", MARKDOWN_BODY + ending)]
    return texts


ENDING_TEXTS = ending_texts()


def every_ending(judge) -> None:
    """judge(text) on every page of ENDING_TEXTS, in their order, in one test: a chunker is judged on
    them all (a call to its worker each), and the first that fails is named.

    One test a chunker rather than one a page: its verdict is the chunker's, on the whole list, and the
    grader runs one test where it ran seventy. An error the lab raised, rebuilt by the grader with the call
    that raised it (remote.py's `lab_call`), gets the page's name before that call.
    """
    for what, text in ENDING_TEXTS:
        try:
            judge(text)
        except AssertionError as failure:
            raise AssertionError(f"on {what}: {failure}") from None
        except Exception as error:
            if getattr(error, "lab_call", None):
                error.lab_call = f"on {what}: {error.lab_call}"
            raise


def same_again(again, chunks) -> None:
    """A second call with the same arguments returns the same chunks."""
    assert again == chunks, (f"not deterministic: the same call gave {spans(again)[:4]}… "
                             f"after {spans(chunks)[:4]}…")


def chunker_basics(text: str, chunks, max_tokens: int) -> None:
    """What every token-budgeted chunker without Markdown promises (rag4, rag5, rag9): lossless,
    true counts, every chunk in budget, none flagged oversize."""
    lossless(text, chunks)
    no_oversize(chunks)
    in_budget(chunks, max_tokens)


def markdown_basics(text: str, chunks, max_tokens: int, title: str | None = None, metadata=None,
                    header_of=None) -> None:
    """What a Markdown chunker promises (rag6; rag7, with its `title`, `metadata` and `header_of`):
    lossless, true counts, in budget but for one whole block truly over it, true heading paths, and
    in rag7 the headers those paths make (header_of(title, section, metadata): the public tests give
    the lab's own make_header, judged by its own tests; the hidden ones the grader's). Every flag,
    kind, section and header is checked, not believed."""
    lossless(text, chunks)
    in_budget(chunks, max_tokens)
    whole_and_over_budget(text, chunks, max_tokens)
    true_sections(text, chunks)
    if title is not None:
        headers_follow_sections(text, chunks, title, max_tokens, page_fields(text) if metadata is None else metadata,
                                header_of)



def table_lines(text: str, start: int, end: int) -> list:
    """[(start, end)] of each line of text[start:end], its line break included."""
    return [(start + a, start + b) for a, b in
            (m.span() for m in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text[start:end]))]


def table_spans(text: str) -> list:
    """[(start, end)] of the tables a real Markdown parser finds in `text`, `end` before the last line break."""
    return [(start, end) for kind, start, end in whole_blocks(text) if kind == "table"]


def rows_judged(text: str, chunks, result, max_tokens: int) -> None:
    """What rag7's with_table_rows promises of `chunks`, judged without making its chunks: `result`
    is lossless and in order of its starts, and a chunk it made counts max_tokens at most with its
    header. Each chunk of `chunks` that a real Markdown parser reads as holding one table of two rows
    or more, and that fits in max_tokens whole with the table's header row added to its header (so
    that each row surely fits too), is cut after each row but the last, and the chunk of each row
    but the first carries the chunk's header, then the header row, stripped, on the next
    line; each row after the first, the last too, starts a chunk, even where a chunk after it reaches
    back over the table (overlap). Where `chunks` do not overlap, a chunk holding no table is kept as
    it was (with overlap, the rows of a chunk that reaches back over it may take its place)."""
    lossless(text, result)
    for before, after in zip(result, result[1:]):
        assert before.start < after.start, f"{name(after)} does not start after {name(before)}: keep them in order"
    for chunk in result:
        if chunk not in chunks:
            n = count_tokens(chunk.embedding_text)
            assert n <= max_tokens, f"{name(chunk)} counts {n} tokens with its header, over max_tokens = {max_tokens}"
    ends = {chunk.end: chunk for chunk in result}
    tables = table_spans(text)
    apart = all(before.end <= after.start for before, after in zip(chunks, chunks[1:]))
    for chunk in chunks:
        held = [(start, end) for start, end in tables if chunk.start <= start and end <= chunk.end]
        if not held:
            assert not apart or chunk in result, (
                f"the chunk [{chunk.start}, {chunk.end}), holding no table, was not kept as it was")
            continue
        lines = table_lines(text, *held[0])
        wanted = "\n".join(part for part in (chunk.header, text[slice(*lines[0])].strip()) if part)
        if len(held) != 1 or len(lines) < 4 or count_tokens(f"{wanted}\n{chunk.text}") > max_tokens:
            continue
        starts = {chunk.start for chunk in result}
        for number, (start, end) in enumerate(lines[3:], 2):
            assert start in starts, (f"no chunk starts at row {number} of the table at [{held[0][0]}, {held[0][1]}) "
                                     f"(at {start}): each row after the first starts a chunk, the last too")
        for number, (start, end) in enumerate(lines[2:-1], 1):
            assert end in ends, (f"no chunk ends after row {number} of the table at [{held[0][0]}, {held[0][1]}) "
                                 f"(at {end}): a chunk a row")
            if number > 1:
                assert ends[end].start == start and ends[end].header == wanted, (
                    f"{name(ends[end])} should hold row {number} alone, from {start}, with the header {short(wanted)}")

HEADER_FIELDS = ("applies_to",)  # rag7's: the front-matter fields a header carries when the caller gives none


def page_fields(text: str) -> dict:
    """The HEADER_FIELDS of the page's front matter, read as rag7 reads it: `key: value` lines."""
    match = FRONT_MATTER.match(text)
    found = {}
    for line in match.group().splitlines()[1:-1] if match else ():
        key, colon, value = line.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t", "-")):
            found[key.strip()] = value.strip().strip("\"'")
    return {key: found[key] for key in HEADER_FIELDS if key in found}


def shorter_headers(full: str) -> list:
    """The shorter headers rag7 tries, in order, when `full` is over its room (its docstring's rule):
    the first part, "…", then the nearest parts (the fields staying with the last), fewer and fewer;
    then the first and the last part without the fields ("…" between if parts were left out)."""
    parts = full.split(" › ")
    between = ["…"] if len(parts) > 2 else []
    shorter = [" › ".join([parts[0], "…", *parts[-nearest:]]) for nearest in range(len(parts) - 2, 0, -1)]
    return shorter + [" › ".join([*parts[:-1][:1], *between, re.sub(r" \([^()]*\)$", "", parts[-1])])]


def headers_follow_sections(text: str, chunks, title: str, max_tokens: int, metadata: dict, header_of) -> None:
    """Each header is the one the chunk's heading path makes (header_of, its fields from
    `metadata`) where that fits its room (its line break counted); else the first of
    shorter_headers that fits; else a start of the last one ending in '…', or none. The room is
    half of max_tokens, less if the text's widest uncut piece (min_budget) needs more of it."""
    room = min(max_tokens // 2, max_tokens - min(max_tokens, min_budget(text)))
    made = {}  # section -> its full header: asked once a section (the lab's make_header is a call to its worker)
    for chunk in chunks:
        section = tuple(chunk.section)
        full = made[section] = made[section] if section in made else header_of(title, section, metadata)
        candidates = [full, *shorter_headers(full)] if count_tokens(full + "\n") > room else [full]
        fitting = next((header for header in candidates if count_tokens(header + "\n") <= room), None)
        if fitting is not None:
            assert chunk.header == fitting, (
                f"{name(chunk)} in section {chunk.section} has the header {chunk.header!r}, expected {fitting!r}")
            continue
        cut = chunk.header[:-1].rstrip()
        assert not chunk.header or (chunk.header.endswith("…") and candidates[-1].startswith(cut)
                                    and count_tokens(chunk.header + "\n") <= room), (
            f"{name(chunk)} has the header {chunk.header!r}; none fits its room of {room} tokens, so "
            f"{candidates[-1]!r} cut short, ending in '…', or none")


def grading_seed() -> int:
    """The hidden tests' hypothesis seed: $ACADEMY_GRADING_SEED, else hidden/seed.txt.

    Students never see it, so a lab cannot be tuned to the examples it draws;
    an instructor changes it between terms.
    """
    value = os.environ.get("ACADEMY_GRADING_SEED") or SEED_FILE.read_text(encoding="utf-8")
    return int(value.strip())


SUBMISSION: list = []  # the graded submission's key (a digest of its lab files), set by the grader (conftest)


def submission_seed() -> int:
    """The seed a submission's hidden inputs are drawn from: the term's secret seed (grading_seed) and the
    submission's own files, hashed together; $ACADEMY_SUBMISSION_SEED (a report's `submission_seed`) to
    grade again with the inputs a report was graded with.

    Each submission meets inputs of its own: what a lab learns of them (through the page cache, by
    timing, from a classmate's lab, in an earlier submission) says nothing of another's. The report
    records it; the term's seed, from which no student can work it out, stays the instructor's.
    """
    recorded = os.environ.get("ACADEMY_SUBMISSION_SEED", "").strip()
    if recorded:
        return int(recorded)
    if not SUBMISSION:
        return grading_seed()
    digest = hashlib.sha256(f"{grading_seed()}/{SUBMISSION[0]}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


def hidden_seed(test):
    """A hidden property test draws its examples from submission_seed(), not hypothesis's own:
    `@check.hidden_seed` above `@given` fixes the seed and lets it vary between terms and submissions.
    The test is marked `seeded`: every function a student writes needs one (tests/test_memoriser.py)."""
    from hypothesis import seed, settings

    seeded = seed(submission_seed())(settings(derandomize=False)(test))
    seeded.seeded = True
    return seeded


# Letters a fixed hidden example's letters are drawn from, by kind: the example keeps its shape (its
# spaces, line ends, punctuation, digits, the length of each word), its letters are the submission's own.
LETTERS = {"lower": "abcdefghijklmnopqrstuvwxyz", "upper": "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
           "other": "αβγδεζηθλμπστφψωжзиклмнпщяßøåæçñ"}


def varied(text: str, salt: str) -> str:
    """A fixed hidden example with its letters drawn from the submission's seed: every letter replaced by
    one of the same kind (ASCII lower, ASCII upper, any other), everything else kept, so the example
    tests the same thing (where words start and end, which line ends and spaces it holds) and its
    answer, in characters, is the same; its words are the submission's own."""
    import random

    draw = random.Random(f"{submission_seed()}/{salt}")
    kinds = [("lower" if char.islower() else "upper") if char.isascii() else "other" for char in text]
    return "".join(draw.choice(LETTERS[kind]) if char.isalpha() else char for char, kind in zip(text, kinds))


def shuffled(text: str, salt: str) -> str:
    """A fixed hidden example with its words (runs of non-space characters) in an order drawn from the
    submission's seed, the spaces between them where they were: every character the example was chosen
    for (one of several tokens, a token starting inside it) is still there, at a place of the submission's
    own. For examples whose characters matter more than their letters, which varied() would replace."""
    import random

    words = re.findall(r"\S+", text)
    random.Random(f"{submission_seed()}/{salt}").shuffle(words)
    order = iter(words)
    return re.sub(r"\S+", lambda _: next(order), text)


# ---- rag8's paired bootstrap, judged against bands the grader computed -------------
# The exact bootstrap distribution that makes those bands is the grader's (tools/grading/oracles.py):
# enumerated, it is an answer to paired_bootstrap, so no file a student gets holds it.


def interval_fields(result) -> tuple:
    """(estimate, low, high, level) of what paired_bootstrap returned, or one line saying it is no Interval."""
    try:
        return tuple(float(getattr(result, name)) for name in ("estimate", "low", "high", "level"))
    except (AttributeError, TypeError, ValueError):
        raise AssertionError(f"returned {short(result)}, not an Interval(estimate, low, high, level)") from None


class Band(NamedTuple):
    """Where one end of a percentile interval may lie, drawn from so many resamples: the least and
    the most it may be (the exact distribution's quantiles a few Monte Carlo errors either side)."""

    least: float
    most: float


def expect_interval_in(result, a, b, level: float, low: Band, high: Band) -> None:
    """paired_bootstrap's Interval: the estimate is mean(b - a), the level the one asked for, and
    each end inside the band the grader computed for it."""
    estimate, got_low, got_high, got_level = interval_fields(result)
    expected = float(sum(Fraction(y) - Fraction(x) for x, y in zip(a, b)) / len(a))
    assert math.isclose(estimate, expected, abs_tol=1e-9), (
        f"returned estimate {estimate!r}, expected the mean of b - a, {expected!r}")
    assert got_level == level, f"returned level {got_level!r}, expected the level asked for, {level!r}"
    for name, got, band, q in (("low", got_low, low, (1 - level) / 2), ("high", got_high, high, (1 + level) / 2)):
        assert band.least - 1e-9 <= got <= band.most + 1e-9, (
            f"returned {name} {got:.4f}; at level {level:g} the {100 * q:g}% quantile of the paired bootstrap "
            f"distribution lies in [{band.least:.4f}, {band.most:.4f}]")


# ---- rag4's windows, exactly as the lab defines them -------------------------


def edge_calls(text: str) -> list:
    """(args, expected) pairs every chunker(text, max_tokens, overlap=0) must answer, every lab's
    contract (academy_llm.check_text_and_window): an empty text gives no chunks; no budget,
    overlap as big as the budget or negative, bytes (empty too: the check comes first) or no text
    at all are refused."""
    return [(("", 10), []), ((text, 0), ValueError), ((text, 5, 5), ValueError), ((text, 5, -1), ValueError),
            ((text.encode(), 5), TypeError), ((b"", 5), TypeError), ((None, 5), TypeError), ((3, 5), TypeError)]


def answers(chunker, args, expected) -> None:
    """chunker(*args) raises `expected` when it is an exception class, else returns it. Any other
    exception goes up as it is, so the grader still tells a crash or a refused lab from a wrong answer."""
    if isinstance(expected, type) and issubclass(expected, Exception):
        try:
            chunker(*args)
        except expected:
            return
        raise AssertionError(f"called with {args!r}, it raised nothing; expected {expected.__name__}")
    expect(chunker(*args), expected)


def checked_token_windows(rag4, text: str, max_tokens: int, overlap: int):
    """rag4.token_windows(...) checked window by window, or None when it refuses, as documented,
    a character of more tokens than max_tokens."""
    try:
        chunks = rag4.token_windows(text, max_tokens, overlap)
    except ValueError as error:
        character_over_budget(text, max_tokens, error)
        return None
    token_windows_exact(text, chunks, max_tokens, overlap)
    return chunks


def word_windows_exact(text: str, chunks, size: int, overlap: int) -> None:
    """Word windows: each but the last holds `size` words, the next starts `size - overlap` later.

    A word is a run of non-space characters; a window runs from its first
    word's first character to its last word's last one.
    """
    lossless(text, chunks, whitespace_may_be_lost=True)
    no_oversize(chunks)
    words = [(match.start(), match.end()) for match in re.finditer(r"\S+", text)]
    if not words:
        assert chunks == [], f"the text has no words, yet {len(chunks)} chunk(s) came back"
        return
    assert chunks, f"the text has {len(words)} words, yet no chunk came back"
    first_at = {start: number for number, (start, _) in enumerate(words)}
    last_at = {end: number for number, (_, end) in enumerate(words)}
    expected_first = 0
    for number, chunk in enumerate(chunks):
        assert chunk.start in first_at, f"{name(chunk)} does not start where a word starts"
        assert chunk.end in last_at, f"{name(chunk)} does not end where a word ends"
        first, last = first_at[chunk.start], last_at[chunk.end]
        assert first == expected_first, (
            f"{name(chunk)} starts at word {first + 1}, expected word {expected_first + 1}: "
            f"each window starts size - overlap = {size - overlap} words after the one before")
        if number == len(chunks) - 1:
            assert last == len(words) - 1, (
                f"the last chunk {name(chunk)} ends at word {last + 1} of {len(words)}")
        else:
            held = last - first + 1
            assert held == size, f"{name(chunk)} holds {held} words, expected {size}"
            assert last < len(words) - 1, f"{name(chunk)} holds the last word, yet chunks follow"
        expected_first = first + size - overlap


def token_windows_exact(text: str, chunks, max_tokens: int, overlap: int) -> None:
    """Token windows as rag4 defines them, counted on the page's one tokenization.

    A token here is one of token_starts(text) (a character of several tokens
    is one, as it cannot be cut). Each window starts where the one before
    ended less `overlap` tokens, moving forward by one token at least; takes
    up to max_tokens tokens, and gives back its last token while it counts
    over max_tokens on its own. So neighbours share min(overlap, tokens - 1)
    tokens, and a window short of max_tokens tokens that is not the last
    would go over the budget with one more.
    """
    chunker_basics(text, chunks, max_tokens)
    at_token_starts(text, chunks)
    if not chunks:
        assert not text, "the text has tokens, yet no chunk came back"
        return
    starts = token_starts(text)
    ends = starts[1:] + [len(text)]
    number_at = {start: number for number, start in enumerate(starts)}
    expected_first = 0
    for number, chunk in enumerate(chunks):
        first = number_at[chunk.start]
        last = number_at.get(chunk.end, len(starts)) - 1
        tokens = last - first + 1
        assert first == expected_first, (
            f"{name(chunk)} starts at token {first + 1} of the page, expected token "
            f"{expected_first + 1}: neighbours share overlap = {overlap} tokens (or all but one "
            f"of a shorter window's)")
        assert tokens <= max_tokens, (
            f"{name(chunk)} spans {tokens} tokens of the page, over max_tokens = {max_tokens}")
        if number == len(chunks) - 1:
            assert last == len(starts) - 1, (
                f"the last chunk {name(chunk)} stops short of the text's end")
            return
        assert last < len(starts) - 1, f"{name(chunk)} reaches the text's end, yet chunks follow"
        if tokens < max_tokens:
            longer = count_tokens(text[chunk.start : ends[last + 1]])
            assert longer > max_tokens, (
                f"{name(chunk)} holds {tokens} of the page's tokens, yet with the next one "
                f"{short(text[starts[last + 1] : ends[last + 1]], 12)} it counts {longer}, within "
                f"max_tokens = {max_tokens}: give back a token only while over the budget")
        expected_first = max(last + 1 - overlap, first + 1)


def character_over_budget(text: str, max_tokens: int, error: Exception) -> None:
    """A ValueError for a budget is right only if a piece of the text no cut may split needs more tokens."""
    assert min_budget(text) > max_tokens, (
        f"raised ValueError ({short(str(error), 80)}), yet every token of the text fits in "
        f"max_tokens = {max_tokens}")


# ---- rag5's packing and overlap --------------------------------------------------


def min_budget(text: str) -> int:
    """The most tokens a piece of `text` between two neighbouring token starts counts alone."""
    starts = token_starts(text)
    pieces = {text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])}  # each distinct piece once
    return max(map(count_tokens, pieces), default=0)


def packing_budget(text: str, max_tokens: int, overlap: int) -> int:
    """rag5's room for a chunk of `text` before its overlap (given code in the lab, restated here):
    max_tokens - overlap, but never less than the text's widest uncut piece needs (max_tokens at most)."""
    room = max_tokens - overlap
    return room if overlap <= 0 else max(room, min(max_tokens, min_budget(text)))


def packed_full(text: str, chunks, max_tokens: int) -> None:
    """Greedy packing: two neighbours that fit in max_tokens together were packed as one.

    Exact where every cut is a clean cut (is_clean_cut): then a chunk's tokens
    add up from its pieces, and the first piece of the next chunk fits whenever
    the whole next chunk does.
    """
    for before, after in zip(chunks, chunks[1:]):
        together = count_tokens(text[before.start : after.end])
        assert together > max_tokens, (
            f"{name(before)} and the chunk after it count {together} tokens together, within "
            f"max_tokens = {max_tokens}: packing should have merged them")


def overlap_exact(text: str, chunks, packed, max_tokens: int, overlap: int) -> None:
    """Chunks with overlap against the same text packed without it, as rag5 adds overlap.

    `packed` is what the lab gives for packing_budget(text, max_tokens, overlap) and
    no overlap. Each chunk keeps its packed end; after the first, its start
    reaches back `overlap` of the page's tokens, never before the previous
    packed chunk's start, moves forward to the first clean cut, and gives back
    words (clean cut by clean cut) while the chunk is over max_tokens. Both
    chunkings have what every chunker promises (chunker_basics).
    """
    chunker_basics(text, chunks, max_tokens)
    chunker_basics(text, packed, max_tokens)
    assert len(chunks) == len(packed), (
        f"{len(chunks)} chunks with overlap, {len(packed)} without: overlap should only move "
        f"starts back (packing at max_tokens - overlap = {packing_budget(text, max_tokens, overlap)})")
    starts = token_starts(text)
    for number, (chunk, base) in enumerate(zip(chunks, packed)):
        assert chunk.end == base.end, (
            f"{name(chunk)} ends at {chunk.end}; packed without overlap it ends at {base.end}: "
            f"overlap moves a chunk's start back, never its end")
        if number == 0:
            assert chunk.start == base.start, (
                f"the first chunk {name(chunk)} should start at {base.start}")
            continue
        floor = packed[number - 1].start
        reach = max(starts[max(bisect.bisect_left(starts, base.start) - overlap, 0)], floor)
        expected = next_clean_cut(text, reach, base.start)
        while expected < base.start and count_tokens(text[expected : chunk.end]) > max_tokens:
            expected = next_clean_cut(text, expected + 1, base.start)
        assert chunk.start >= floor, (
            f"{name(chunk)} reaches back past {floor}, where the chunk before it starts "
            f"without overlap: overlap reaches into the previous chunk only")
        assert chunk.start == expected, (
            f"{name(chunk)} starts at {chunk.start}, expected {expected}: the first clean cut "
            f"(a word's space, a line's start) from the page's token {overlap} back from "
            f"{base.start}, where it starts without overlap")


# rag5's seams, coarsest first, as the lab gives them (its SEAMS): a cut goes where a match ends.
RAG5_SEAMS = [
    re.compile(r"(?:\r\n|\r|\n)(?:[^\S\r\n]*(?:\r\n|\r|\n))+"),  # blank lines
    re.compile(r"\r\n|\r|\n"),  # line breaks
    re.compile(r"(?<![.!?])[.!?]+[\"')\]]*(?=[^\S\r\n])"),  # sentence ends
    re.compile(r"(?<=\S)(?=[^\S\r\n])"),  # spaces
    re.compile(r"(?<=\s)(?=\S)"),  # word starts
]


def surely_fits(text: str, start: int, end: int, budget: int) -> bool:
    """text[start:end] is within `budget` however a chunker counts it: on its own (count_tokens) and
    by the whole text's tokens that start inside it, plus one for a token straddling its start (rag5's
    TokenIndex estimate, which is never less at a cut that is not clean)."""
    if count_tokens(text[start:end]) > budget:
        return False
    starts, numbers = token_positions(text)
    first, last = int(starts.searchsorted(start)), int(starts.searchsorted(end))
    straddles = first == len(starts) or int(starts[first]) != start
    return int(numbers[last] - numbers[first]) + straddles <= budget


def whole_piece_around(text: str, position: int, budget: int) -> tuple | None:
    """(start, end) of the piece that rag5's split keeps whole at `budget` and that holds `position`
    inside it, found from the lab's prose by walking down one piece a level from the whole text: a
    span within budget is kept as it is; one over it is cut after every match of the coarsest seam
    that occurs in it, and the walk goes on in the piece holding `position`, with the finer seams.
    None where `position` is a cut, or lies in a piece with no seam left (a long URL may be cut
    anywhere). A check of one position, not a chunker: it never looks at the pieces beside it."""
    start, end, level = 0, len(text), 0
    while not surely_fits(text, start, end, budget):
        for level in range(level, len(RAG5_SEAMS)):
            cuts = [m.end() for m in RAG5_SEAMS[level].finditer(text, start, end) if start < m.end() < end]
            if cuts:
                break
        else:
            return None
        if position in cuts:
            return None
        number = bisect.bisect(cuts, position)
        start, end, level = [start, *cuts][number], [*cuts, end][number], level + 1
    return start, end


def coarsest_seams(text: str, chunks, max_tokens: int, overlap: int = 0) -> None:
    """No chunk ends inside a piece that rag5's split keeps whole (whole_piece_around) at the packing
    budget (packing_budget: max_tokens, less the room left for overlap): a chunk ends at a finer
    seam only where the coarser piece around it is over budget. Overlap moves starts, never ends."""
    budget = packing_budget(text, max_tokens, overlap)
    for chunk in chunks:
        piece = whole_piece_around(text, chunk.end, budget) if 0 < chunk.end < len(text) else None
        if piece and piece[0] < chunk.end < piece[1]:
            start, end = piece
            raise AssertionError(
                f"{name(chunk)} ends at {chunk.end}, inside {short(text[start:end], 40)} at [{start}, {end}), "
                f"which fits in {budget} tokens: cut at the coarsest seam that fits (a paragraph before a "
                f"line, a line before a sentence, a sentence before a word)")


def next_clean_cut(text: str, position: int, limit: int) -> int:
    """The first clean cut at or after `position`, or `limit`."""
    while position < limit and not is_clean_cut(text, position):
        position += 1
    return position


# ---- rag9's cuts (where "breakpoints" cuts is the grader's: tools/grading/oracles.py) ---


def packed_between(text: str, chunks, cuts, max_tokens: int) -> None:
    """Between two cuts, the sentences are packed full (in a text whose only periods end sentences):
    a chunk that starts at no cut starts with a sentence that would not fit in the chunk before."""
    for before, after in zip(chunks, chunks[1:]):
        if after.start in cuts:
            continue
        end = text.find(".", after.start) + 1 or len(text)
        tokens = count_tokens(text[before.start:end])
        assert tokens > max_tokens, (
            f"chunk [{before.start}, {before.end}) could take the sentence after it, to {end}, within "
            f"max_tokens = {max_tokens} ({tokens} tokens together), and no cut is between them: pack it")


def cut_at(chunks, positions) -> None:
    """A chunk ends and the next starts at each of `positions`."""
    starts = {chunk.start for chunk in chunks}
    missing = [position for position in positions if position not in starts]
    assert not missing, (f"no chunk starts at {missing} (where the method cuts); "
                         f"they start at {sorted(starts)}")


# ---- rag11's BM25, against bm25s (the terms, weights and fusion the docstrings state are the
# grader's: tools/grading/oracles.py) ----------------------------------------------


def bm25s_weights(corpus, k1, b):
    """{(term, row): weight} from bm25s's Lucene BM25, each term asked alone."""
    with warnings.catch_warnings():
        # bm25s imports tqdm.auto, which in a Jupyter kernel without ipywidgets (a lab's notebook
        # running its public tests) warns that it cannot draw a progress bar; none is drawn here.
        warnings.filterwarnings("ignore", message="IProgress not found", module="tqdm")
        import bm25s  # only here: the labs never need it

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # it sets DEBUG, which wordllama's root handler shows
    retriever = bm25s.BM25(method="lucene", k1=k1, b=b, dtype="float64")
    retriever.index(corpus, show_progress=False)
    weights = {}
    for term in sorted({term for document in corpus for term in document}):
        scores = retriever.get_scores([term])
        weights.update({(term, row): float(scores[row]) for row, document in enumerate(corpus) if term in document})
    return weights


def same_weights(got, expected):
    assert sorted(got) == sorted(expected), f"weighed {sorted(got)[:4]}…, expected {sorted(expected)[:4]}…"
    for key, weight in expected.items():
        assert math.isclose(got[key], weight, rel_tol=1e-9, abs_tol=1e-12), (
            f"the weight of {key[0]!r} in document {key[1]} is {got[key]}, bm25s (method lucene) gives {weight}")


def postings(value):
    """{term: [(row, weight)]}, whatever mapping and sequence types came back."""
    assert isinstance(value, dict), f"returned {type(value).__name__}, not a dict"
    return {term: [tuple(pair) for pair in pairs] for term, pairs in value.items()}


def same_postings(got, expected):
    assert sorted(got) == sorted(expected), f"returned the terms {sorted(got)[:6]}, expected {sorted(expected)[:6]}"
    for term, pairs in expected.items():
        rows = [row for row, _ in got[term]]
        assert rows == [row for row, _ in pairs], f"{term!r} is held by rows {[r for r, _ in pairs]}, returned {rows}"
        for (row, weight), (_, want) in zip(got[term], pairs):
            assert math.isclose(weight, want, rel_tol=1e-9, abs_tol=1e-12), (
                f"{term!r} in row {row} weighs {weight}, expected bm25_weight of its counts: {want}")


