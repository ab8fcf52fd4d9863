"""rag6's given ground: the Block record, the overlap, its page and answer, what its demonstration
prints (the student's chunks on the page beside rag5's, then on real files beside the course's
robust reader), and the checks the lab ends with. A curious student may read it; the lab is
learnt without it.

The checks judge the student's functions from the text alone and from blocks written by hand,
never by calling a reference reader: the cuts are found by regions_to_keep_whole
(labkit/markdown.py, a reading of its own), and on real files by markdown-it-py, a real parser
that neither chunker uses.
"""

from __future__ import annotations

import time
from dataclasses import replace
from functools import partial
from typing import NamedTuple

from academy_llm import DATASETS, Chunk, check_chunking, count_tokens
from labkit.cases import WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS, Case, Invariants, answer_span, returns, tricky_cases
from labkit.lessons.dial import say
from labkit.markdown import (
    TRICKY_MARKDOWN, Region, check_markdown_chunks, cut_regions, regions_to_keep_whole, with_every_line_end,
)
from labkit.markdown_chunking import next_cut
from labkit.plots import plot_chunk_sizes, show_figure

PAGE = DATASETS / "orbit-docs" / "storage-backends.md"
ANSWER = "| `storage.postgres_max_idle_conns` | `5` | idle sessions kept open between bursts |"
QUESTION = "What is the default value of storage.postgres_max_idle_conns?"
REAL_FILES = DATASETS / "real-markdown"  # a sample of benchmarks/real-markdown, with its licences
PROTECTED = ("code", "table")


class Block(NamedTuple):
    """A block of a Markdown body: from its first line's start to just after its last line's break."""

    kind: str  # "heading", "code", "table", "list", "quote" or "paragraph"
    start: int
    end: int
    level: int = 0  # a heading's level, 1 to 6
    title: str = ""  # a heading's title


# ---- overlap, kept out of what must stay whole ------------------------------------------


def with_overlap(text, chunks, blocks, max_tokens, overlap, index):
    """The packed `chunks`, each after the first of its section reaching back up to `overlap`
    tokens into the one before, to a word's start, never from inside a code block or table of
    `blocks`; a chunk over `max_tokens` stays as it is, flagged oversize, one within it is not."""
    regions = [Region(block.start, block.end, block.kind) for block in blocks if block.kind in PROTECTED]
    result = []
    for number, chunk in enumerate(chunks):
        oversize = chunk.n_tokens > max_tokens
        before = chunks[number - 1] if number else None
        if (oversize or not overlap or before is None or before.section != chunk.section
                or before.n_tokens > max_tokens):
            result.append(replace(chunk, oversize=oversize))
            continue
        position = int(index.starts.searchsorted(chunk.start))
        reach = next_cut(text, max(int(index.starts[max(position - overlap, 0)]), before.start), chunk.start, regions)
        n_tokens = index.count(reach, chunk.end)
        while n_tokens > max_tokens:  # the overlap gives back words until it fits
            reach = next_cut(text, reach + 1, chunk.start, regions)
            n_tokens = index.count(reach, chunk.end)
        result.append(Chunk(text[reach:chunk.end], reach, chunk.end, n_tokens, chunk.section, chunk.kind))
    return result


# ---- the demonstration ------------------------------------------------------------------


def count_cuts(text, chunks):
    """How many fences and tables (regions_to_keep_whole: its own reading) a chunk starts or ends inside."""
    return len(set(cut_regions(chunks, regions_to_keep_whole(text))))


def verdict_of(verify, text, chunks):
    """What the student's verify says of `chunks`: "passes", or "fails" with its reason's start."""
    try:
        verify(text, chunks)
    except ValueError as error:
        return f"fails ({str(error)[:64]})"
    return "passes"


def on_the_page(page, blocks, chunks, recursive, verify, max_tokens):
    """Print the page's blocks as the student's reader reads them, then the student's chunks beside
    rag5's: chunks, fences and tables cut (counted by labkit's own reading), oversize, and what
    the student's verify says of each."""
    counts = {}
    for block in blocks:
        counts[block.kind] = counts.get(block.kind, 0) + 1
    print(f"1. {PAGE.name}, read by your read_blocks: " + ", ".join(f"{n} {kind}" for kind, n in counts.items()))
    print(f"\n2. Chunks of at most {max_tokens} tokens; cut: fences and tables a chunk starts or ends inside")
    print(f"   {'chunker':<16} {'chunks':>6} {'cut':>4} {'oversize':>9}  your verify")
    for name, found in (("yours", chunks), ("recursive (rag5)", recursive)):
        print(f"   {name:<16} {len(found):>6} {count_cuts(page, found):>4} {sum(c.oversize for c in found):>9}  "
              f"{verdict_of(verify, page, found)}")
    print("\n   Your chunks on the page, each labelled with its heading path:")


def real_files():
    """The sample of real-world Markdown files: (name, text), sorted (the folder's own README aside)."""
    paths = sorted(path for path in REAL_FILES.rglob("*")
                   if path.suffix in (".md", ".mdx") and path.parent != REAL_FILES)
    return [(path.relative_to(REAL_FILES).as_posix(), path.read_bytes().decode("utf-8")) for path in paths]


def parser_regions(text):
    """[(kind, start, end)] of the code blocks (fenced or indented) and tables markdown-it-py finds,
    each from its first line's start to its last line's last non-space (labkit.explorer)."""
    from labkit.explorer import markdown_blocks

    return [(block.kind, block.start, block.end) for block in markdown_blocks(text) if block.kind in PROTECTED]


class Tally(NamedTuple):
    files: int
    chunks: int
    raised: int  # files where the chunker raised
    lost: int  # files with text in no chunk, or a chunk that is not its slice
    over: int  # chunks over budget, not flagged oversize
    cut: int  # code blocks and tables (by markdown-it-py) a chunk starts or ends inside
    broken: int  # files with any of the above
    seconds: float


def tally(chunker, files, max_tokens, overlap):
    """Run `chunker` on every file, judged by a real parser: a Tally and the first cut [(file, text, region)]."""
    chunks_seen = raised = lost = over = cut = broken = 0
    first_cuts = []
    began = time.process_time()
    for name, text in files:
        try:
            chunks = chunker(text, max_tokens, overlap)
        except Exception:  # noqa: BLE001 (a reader may raise on a real page: counted, not fatal)
            raised += 1
            broken += 1
            continue
        chunks_seen += len(chunks)
        try:
            check_chunking(text, chunks, 10**9)
            bad_slices = 0
        except ValueError:
            bad_slices = 1
        lost += bad_slices
        overs = sum(not c.oversize and count_tokens(c.text) > max_tokens for c in chunks)
        over += overs
        edges = sorted({edge for c in chunks for edge in (c.start, c.end)})
        cuts = [region for region in parser_regions(text) if any(region[1] < e < region[2] for e in edges)]
        cut += len(cuts)
        if cuts and len(first_cuts) < 3:
            first_cuts.append((name, text, cuts[0]))
        broken += bool(bad_slices or overs or cuts)
    return Tally(len(files), chunks_seen, raised, lost, over, cut, broken, time.process_time() - began), first_cuts


def line_around(text, position):
    """The line of `text` holding `position`, and the one before it, as one short line."""
    start = max(text.rfind("\n", 0, position), text.rfind("\r", 0, position)) + 1
    before = max(text.rfind("\n", 0, max(start - 1, 0)), text.rfind("\r", 0, max(start - 1, 0))) + 1
    end = min([i for i in (text.find("\n", position), text.find("\r", position)) if i >= 0] or [len(text)])
    return repr(text[before:end][-90:])


def real_files_report(chunkers, max_tokens, overlap):
    """Print, for each of `chunkers` ({name: chunker}), what it does on the real files, judged by
    markdown-it-py, then where the first chunkers' cuts fall. Returns {name: Tally}."""
    files = real_files()
    print(f"\n3. Real files: {len(files)} pages of open-source projects ({REAL_FILES.relative_to(DATASETS.parent)}),"
          f" at {max_tokens} tokens, overlap {overlap}, judged by markdown-it-py")
    print(f"   {'reader':<16} {'files':>5} {'chunks':>6} {'raised':>6} {'lost':>4} {'over':>4} "
          f"{'cut':>4} {'files broken':>12} {'CPU s':>6}")
    tallies, examples = {}, {}
    for name, chunker in chunkers.items():
        tallies[name], examples[name] = tally(chunker, files, max_tokens, overlap)
        t = tallies[name]
        print(f"   {name:<16} {t.files:>5} {t.chunks:>6} {t.raised:>6} {t.lost:>4} {t.over:>4} {t.cut:>4} "
              f"{t.broken:>12} {t.seconds:>6.2f}")
    name = next(iter(chunkers))
    for file, text, (kind, start, end) in examples[name]:
        print(f"   {name} cut the {kind} at [{start}, {end}) of {file}, which opens after {line_around(text, start)}")
    mine, course = tallies[name], tallies[list(chunkers)[-1]]
    if mine.broken:
        say(f"A reader written for the course's pages broke {mine.broken} of these {mine.files} real files "
            f"({mine.cut} code blocks or tables cut); the course's reader, which follows CommonMark (code in "
            f"list items and quotes, setext headings, lazy lines, HTML), broke {course.broken}. Real documents "
            "use more Markdown than any one site's pages: chunk them with a real parser's reading.")
    else:
        say(f"Your reader broke none of these {mine.files} files; the course's broke {course.broken}.")
    return tallies


def plot_sizes(markdown: dict, recursive: dict, max_tokens, overlap):
    """Plot the tokens each chunk holds over the corpus ({page: chunks} of each chunker), saved as
    rag6-chunk-sizes.png beside the run (inline in a notebook)."""
    sizes = {name: [c.n_tokens for chunks in by_page.values() for c in chunks]
             for name, by_page in (("markdown", markdown), ("recursive", recursive))}
    over = sum(size > max_tokens for size in sizes["markdown"])
    print(f"\n5. Chunk sizes over the corpus: {len(sizes['markdown'])} Markdown chunks, {over} over the budget "
          f"(a code block or table alone), beside {len(sizes['recursive'])} of rag5's")
    title = f"rag6: chunk sizes on the Orbit docs, budget {max_tokens} tokens, overlap {overlap}"
    show_figure(plot_chunk_sizes(sizes, max_tokens, title), "rag6-chunk-sizes.png")


# ---- the checks ---------------------------------------------------------------------------
# Written by hand: pages of the Markdown the course's pages use, with the blocks a reader must
# find there, and blocks handed to pack_blocks as they are (a paragraph called a table is kept
# whole: pack_blocks packs the blocks it is given, not what it reads).


def blocks_of(text, *parts):
    """The Blocks of `text`, each given as (kind, its text) or (kind, its text, level, title),
    found in order: so the cases below are written as Markdown, not as offsets."""
    found, at = [], 0
    for kind, part, *heading in parts:
        start = text.index(part, at)
        found.append(Block(kind, start, start + len(part), *heading))
        at = start + len(part)
    return found


def reader_cases(read_blocks):
    """read_blocks on small pages worked out by hand."""
    page = ("# Install ##\n\nOrbit runs jobs.\nOn satellites.\n\n```sh\n# not a heading\n```\n\n"
            "| key | default |\n|---|---|\n| port | 7401 |\n\n- one\n- two\n\n  still two\n\n> a quote\n"
            "> goes on\n\n    indented code\n\n    more\n\nThe end.")
    unclosed = "Intro\n\n```\ncode\n\n# x\n"
    tight = "Text\n## Next\n~~~~\n```\n~~~~\n1. item\n> quote\nAfter"
    return [
        Case("a page of every kind", read_blocks, (page,), returns(blocks_of(
            page, ("heading", "# Install ##\n", 1, "Install"), ("paragraph", "Orbit runs jobs.\nOn satellites.\n"),
            ("code", "```sh\n# not a heading\n```\n"), ("table", "| key | default |\n|---|---|\n| port | 7401 |\n"),
            ("list", "- one\n- two\n\n  still two\n"), ("quote", "> a quote\n> goes on\n"),
            ("code", "    indented code\n\n    more\n"), ("paragraph", "The end.")))),
        Case("blocks with no blank line between them; a fence of tildes holds a backtick one", read_blocks,
             (tight,), returns(blocks_of(tight, ("paragraph", "Text\n"), ("heading", "## Next\n", 2, "Next"),
                                         ("code", "~~~~\n```\n~~~~\n"), ("list", "1. item\n"),
                                         ("quote", "> quote\nAfter")))),
        Case("a fence never closed runs to the end", read_blocks, (unclosed,),
             returns(blocks_of(unclosed, ("paragraph", "Intro\n"), ("code", "```\ncode\n\n# x\n")))),
        Case("the body after `start`, CRLF line ends", read_blocks, ("---\r\nt: x\r\n---\r\n#5 bolts\r\n", 16),
             returns([Block("paragraph", 16, 26)])),
        Case("seven #s are a paragraph, a #tag too", read_blocks, ("####### seven\n#tag\n",),
             returns([Block("paragraph", 0, 19)])),
        Case("a line with a pipe, and no delimiter row under it, is a paragraph", read_blocks,
             ("a | b\nc | d\n\n| x |\n",), returns([Block("paragraph", 0, 12), Block("paragraph", 13, 19)])),
    ]


def pack_cases(pack_blocks, index_of):
    """pack_blocks on blocks given by hand: whole, by section, greedy, the big table alone."""
    text = "# A\n\none two\n\nthree four\n\n## B\n\nfive six\n"
    blocks = blocks_of(text, ("heading", "# A\n", 1, "A"), ("paragraph", "one two\n"), ("paragraph", "three four\n"),
                       ("heading", "## B\n", 2, "B"), ("paragraph", "five six\n"))
    rows = "".join(f"| key.{n} | {n} |\n" for n in range(12))
    table = "Intro words here.\n\n| k | v |\n|---|---|\n" + rows + "\nAfter.\n"
    said = blocks_of(table, ("paragraph", "Intro words here.\n"), ("table", "| k | v |\n|---|---|\n" + rows),
                     ("paragraph", "After.\n"))
    fake = "alpha beta gamma delta epsilon zeta eta theta\n\niota kappa\n"  # a paragraph given as a table
    return [
        Case("two sections, packed greedily within each", pack_blocks, (text, 0, blocks, 50, index_of(text)),
             partial(spans_are, [(0, 26, ("A",)), (26, len(text), ("A", "B"))])),
        Case("a block alone when the next does not fit; a heading glued to its block", pack_blocks,
             (text, 0, blocks, 8, index_of(text)),
             partial(spans_are, [(0, 14, ("A",)), (14, 26, ("A",)), (26, len(text), ("A", "B"))])),
        Case("a table over budget alone, flagged, of kind table", pack_blocks, (table, 0, said, 20, index_of(table)),
             partial(spans_are, [(0, 19, ()), (19, table.index("After."), (), "table"),
                                 (table.index("After."), len(table), ())])),
        Case("a block given as a table is kept whole", pack_blocks,
             (fake, 0, [Block("table", 0, 46), Block("paragraph", 47, len(fake))], 6, index_of(fake)),
             partial(spans_are, [(0, 47, (), "table"), (47, len(fake), ())])),
    ]


def spans_are(expected, chunks, *args):
    """Raise ValueError unless `chunks` are (start, end, section[, kind of an oversize one]) as `expected`."""
    got = [(c.start, c.end, tuple(c.section)) + ((c.kind,) if c.oversize else ()) for c in chunks]
    if got != expected:
        raise ValueError(f"chunks {got}, expected {expected}")


def verify_cases(verify):
    """verify on chunks made by hand: it must fail on a cut fence or table, pass on whole ones."""
    text = "Intro.\n\n```\na\n\nb\n```\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\nEnd.\n"
    fence, table = text.index("```"), text.index("| a")

    def chunks_at(*cuts):
        edges = [0, *cuts, len(text)]
        return [Chunk(text[s:e], s, e, count_tokens(text[s:e])) for s, e in zip(edges, edges[1:])]

    return [
        Case("whole blocks pass", verify, (text, chunks_at(fence, table)), returns(None)),
        Case("no chunks, nothing cut", verify, (text, []), returns(None)),
        Case("a cut between a fence's blank line and its code", verify, (text, chunks_at(text.index("b\n"))),
             returns(None), raises=ValueError),
        Case("a cut after a table's header row", verify, (text, chunks_at(text.index("|---"))),
             returns(None), raises=ValueError),
        Case("a cut inside a fence never closed", verify,
             ("Intro.\n\n```\na\nb\n", [Chunk("Intro.\n\n```\na\n", 0, 14, 5), Chunk("b\n", 14, 16, 1)]),
             returns(None), raises=ValueError),
        Case("a cut inside a tilde fence of four", verify,
             ("~~~~\n```\n~~~~\nx\n", [Chunk("~~~~\n```\n", 0, 9, 4), Chunk("~~~~\nx\n", 9, 16, 4)]),
             returns(None), raises=ValueError),
    ]


MARKDOWN_SETTINGS = (dict(max_tokens=4, overlap=0), dict(max_tokens=16, overlap=4), dict(max_tokens=64, overlap=16))
LAB_MARKDOWN = (  # the tricky documents (labkit/markdown.py) in the Markdown of the course's pages
    "a fence opening a list item, under a heading", "front matter", "a fence never closed",
    "a tilde fence holding a # line", "a backtick fence holding tilde lines",
    "a fence of four backticks holding one of three", "a table without outer pipes", "a fence inside a list item",
    "closing #s, and paths popped by siblings and parents",
    "a shell session indented as code, after a paragraph and a blank line",
    "an indented line right under a paragraph's line continues it: no code",
)


def checks(lab: dict) -> bool:
    """The checks rag6 ends with, on the functions in `lab` (the lab's globals()): PASS or FAIL each,
    then the public grading tests. True when all pass."""
    markdown_chunks, verify, max_tokens, overlap = (lab[name] for name in ("markdown_chunks", "verify", "MAX_TOKENS",
                                                                         "OVERLAP"))
    page = PAGE.read_text(encoding="utf-8")
    answer_start, answer_end = answer_span(page, ANSWER)
    chunks = markdown_chunks(page, max_tokens, overlap)
    print("\nInvariants")
    invariants = Invariants("rag6")
    invariants.check_chunks("nothing lost, every chunk an exact slice within budget", [(page, chunks)], max_tokens)
    oversize = [c for c in chunks if c.oversize]
    invariants.check("only a code block or table alone is oversize", all(c.kind in PROTECTED for c in oversize),
                     f"{len(oversize)} oversize chunk(s)")
    invariants.check("no code block or table is cut (read by labkit's own code)", not count_cuts(page, chunks),
                     f"{count_cuts(page, chunks)} cut")
    holds = any(c.start <= answer_start and answer_end <= c.end for c in chunks)
    invariants.check("one chunk holds the whole answer row", holds, f"answer at [{answer_start}, {answer_end})")
    invariants.check_cases("read_blocks, on pages worked out by hand", reader_cases(lab["read_blocks"]))
    invariants.check_cases("pack_blocks, on blocks given by hand", pack_cases(lab["pack_blocks"], lab["TokenIndex"]))
    invariants.check_cases("verify, on cuts made by hand", verify_cases(verify))
    documents = [document for document in with_every_line_end(TRICKY_MARKDOWN)
                 if document.what.rsplit(" (", 1)[0] in LAB_MARKDOWN]
    invariants.check_cases(
        "tricky Markdown: lossless, in budget, code and tables whole, heading paths right",
        [Case(document.what, markdown_chunks, (document.text,),
              partial(check_markdown_chunks, keep_whole=document.keep_whole, paths=document.paths), dict(setting))
         for document in documents for setting in MARKDOWN_SETTINGS]
        + tricky_cases(markdown_chunks, check_markdown_chunks, MARKDOWN_SETTINGS)
        + tricky_cases(markdown_chunks, check_markdown_chunks, WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS))
    # Last, the public grading tests (tests/grading/test_rag6.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    invariants.check_public_tests(lab)
    return invariants.verdict()
