"""rag7's given ground: how a header too long for its room is shortened, where a text's tables are,
what the demonstration prints (a page's headed chunks, recall bare against headed, a question the
header moves, chosen from the data) and the checks the lab ends with. A curious student may read it;
the lab is learnt without it.

The checks judge the student's chunks from the text alone (exact slices, the budget counted on what
is embedded, each header's place in what is embedded, each table row's column names), never by
calling a reference: on the course's pages, on tricky texts and documents at budgets from 16 tokens
up, on headers and rows worked out by hand, and by the lab's public grading tests.
"""

from __future__ import annotations

import re
from functools import lru_cache, partial

from academy_llm import check_lossless, corpus_pages, corpus_questions, count_tokens, embed, make_chunk, top_k_each
from labkit.cases import TRICKY_TEXTS, WIDE_PIECE_TEXTS, Case, Invariants, error_line, returns
from labkit.lessons.dial import say
from labkit.markdown import (
    TRICKY_MARKDOWN, TrickyMarkdown, check_markdown_chunks, front_matter, regions_by_kind, with_every_line_end,
)
from labkit.token_index import TokenIndex
from labkit.uncertainty import claim, mean_interval, paired_difference
from labkit.view import view_chunks

QUESTION = "What is the default value of storage.postgres_max_idle_conns?"  # the explorer's, on storage-backends
ANSWER = "| `storage.postgres_max_idle_conns` | `5` | idle sessions kept open between bursts |"


# --------------------------------------------------------------------------
# Given to the student: what the header and the rows stand on
# --------------------------------------------------------------------------


def front_matter_fields(text: str) -> dict:
    """The page's front matter as {key: value} (`key: value` lines), {} if it has none."""
    return front_matter(text)[0]


@lru_cache(maxsize=64)
def least_budget(text: str) -> int:
    """The fewest tokens a chunk of `text` needs: the most tokens a piece no cut may split counts
    (TokenIndex.min_budget; 4 for most texts, 5 for '토큰'); 1 for an empty text."""
    return TokenIndex(text).min_budget if text else 1


def tables_in(text: str) -> list[tuple[int, int]]:
    """(start, end) of each table of `text`, its last line break included; a table shown in a fenced
    code block is left out. Read line by line with patterns (labkit.markdown.regions_by_kind)."""
    return regions_by_kind(text)["table"]


def fit_header(header: str, limit: int) -> str:
    """`header` if it counts `limit` tokens at most with its line break, else the first shorter one
    that does: the title, "…", then the nearest headings (the metadata staying with the last), fewer
    and fewer; then the title and the last heading without the metadata; if not even that fits, it
    cut short, ending in "…" ("" if nothing fits).

    fit_header("Docs › Guide › Install › On Debian", 8) gives "Docs › … › On Debian".
    """
    if count_tokens(header + "\n") <= limit:
        return header
    parts = header.split(" › ")
    between = ["…"] if len(parts) > 2 else []
    shorter = [" › ".join([parts[0], "…", *parts[-nearest:]]) for nearest in range(len(parts) - 2, 0, -1)]
    shorter.append(" › ".join([*parts[:-1][:1], *between, re.sub(r" \([^()]*\)$", "", parts[-1])]))
    for candidate in shorter:
        if count_tokens(candidate + "\n") <= limit:
            return candidate
    return cut_to_tokens(shorter[-1], limit)


def cut_to_tokens(text: str, limit: int) -> str:
    """The longest start of `text` that, with "…" and a line break, counts `limit` tokens at most,
    with the "…"; "" if no start of it does."""
    low, high = 0, len(text)  # characters kept; a binary search, counting a few short texts
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle] + "…\n") <= limit:
            low = middle
        else:
            high = middle - 1
    kept = text[:low].rstrip()
    return f"{kept}…" if kept and count_tokens(f"{kept}…\n") <= limit else ""


# --------------------------------------------------------------------------
# The demonstration
# --------------------------------------------------------------------------


def pages() -> dict[str, str]:
    """The course's pages, {doc_id: text}."""
    return corpus_pages()


def show_headers(page: str, chunks) -> None:
    """Show a page's first chunks on its text, each labelled with the header embedded with it."""
    print("1. Chunks of install-linux on the page; each label shows the chunk's header, which")
    print("   is embedded with the chunk but is not in its text:")
    view_chunks(page, chunks, first=1, limit=3)


def answer_ranks(chunks_by_page: dict, questions: list, depth: int = 20) -> dict:
    """{question id: rank (1 = best) of the first chunk holding the whole answer, or None past `depth`}."""
    chunks = [(page, chunk) for page, found in chunks_by_page.items() for chunk in found]
    ranked = top_k_each(embed([q["question"] for q in questions]), embed([c.embedding_text for _, c in chunks]), depth)
    ranks = {}
    for question, top in zip(questions, ranked):
        ranks[question["id"]] = next(
            (place for place, (row, _) in enumerate(top, 1)
             if chunks[row][0] == question["doc_id"]
             and chunks[row][1].start <= question["start"] and question["end"] <= chunks[row][1].end), None)
    return ranks


def found_at(ranks: dict, k: int, ids) -> list[float]:
    """1.0 for each question of `ids` whose answer is in the top k, else 0.0: per question, for intervals."""
    return [1.0 if ranks[i] is not None and ranks[i] <= k else 0.0 for i in ids]


def bare_against_headed(bare: dict, headed: dict, max_tokens: int) -> None:
    """Recall@1 and @5 over the corpus's test questions, rag6's bare chunks against the headed ones
    ({page: chunks} each), with intervals and the sentences they support; then the question whose
    answer the header moves up the most, as the data has it, with its header and both ranks."""
    questions = corpus_questions("test")
    ids = [q["id"] for q in questions]
    ranks = {"bare": answer_ranks(bare, questions), "headed": answer_ranks(headed, questions)}
    print(f"\n2. Recall over the corpus ({len(questions)} test questions, {max_tokens}-token chunks);"
          " [low, high]: a 95% interval")
    print(f"   {'chunks':<22} {'recall@1':>20} {'recall@5':>20}")
    for name, label in (("bare", "rag6, bare"), ("headed", "rag7, with headers")):
        print(f"   {label:<22} " + " ".join(f"{mean_interval(found_at(ranks[name], k, ids)).plain():>20}"
                                           for k in (1, 5)))
    differences = {k: paired_difference(found_at(ranks["bare"], k, ids), found_at(ranks["headed"], k, ids))
                   for k in (1, 5)}
    print(f"   {'headers minus bare':<22} " + " ".join(f"{str(d):>20}" for d in differences.values())
          + "  (paired, question by question)")
    for k, difference in differences.items():
        say(f"At recall@{k}, {claim(difference, 'rag7', 'rag6')}.")
    far = 1 + 20  # past the ranks looked at
    moved = sorted(((ranks["bare"][i] or far) - ranks["headed"][i], i) for i in ids if ranks["headed"][i])
    if not moved or moved[-1][0] <= 0:
        print("\n3. No test question's answer ranks higher with headers than without.")
        return
    gain, best = moved[-1]
    question = next(q for q in questions if q["id"] == best)
    holder = next(c for c in headed[question["doc_id"]] if c.start <= question["start"] and question["end"] <= c.end)
    up = sum(1 for shift, _ in moved if shift > 0)
    down = sum(1 for i in ids if (ranks["bare"][i] or far) < (ranks["headed"][i] or far))
    print(f"\n3. The question the header moves up the most: {question['question']!r}")
    print(f"   the answer's chunk has the header: {holder.header}")
    bare_rank = ranks["bare"][best] or f"past {far - 1}"
    print(f"   rank of the answer's chunk: bare {bare_rank}, with headers {ranks['headed'][best]}")
    say(f"Headers move {up} answers up the ranking and {down} down, of {len(ids)}; the sentences of step 2 "
        "say whether that changes recall.")


# --------------------------------------------------------------------------
# Judges: what headed chunks and row chunks must be, read from the text alone
# --------------------------------------------------------------------------

TITLE_FOR_TRICKY_INPUTS = "Orbit docs"  # with a heading, it leaves 4 tokens or more of 16 for text
HEADER_SETTINGS = (dict(max_tokens=16, overlap=0), dict(max_tokens=24, overlap=4), dict(max_tokens=400, overlap=0))
# The front matter alone fits in 16 tokens, but not with its header: it must be flagged oversize.
WITH_FRONT_MATTER = '---\ntitle: Install\napplies_to: "2.x"\n---\n\n# Install\n\nUse apt.\n'
# By budget: at 16 and 24 the section's header (13 tokens with its line break) is over half the
# budget, so it loses its metadata; at 16 the front matter's (10 tokens) does too, flagged oversize.
HEADERS_BY_HAND = {
    16: {"applies_to": "Orbit docs", "Use apt.": "Orbit docs › Install"},
    24: {"applies_to": "Orbit docs (applies to 2.x)", "Use apt.": "Orbit docs › Install"},
    400: {"applies_to": "Orbit docs (applies to 2.x)", "Use apt.": "Orbit docs › Install (applies to 2.x)"},
}
PROSE_UNDER_A_HEADING = "# Satellites\n\n" + "Each satellite dials out to the server and runs its jobs. " * 12


def make_header_cases(make_header) -> list[Case]:
    """make_header on headers worked out by hand."""
    return [
        Case("an empty title", make_header, ("", ("Install",), {}), returns("Install")),
        Case("an empty heading and field", make_header, ("Docs", ("", "Usage"), {"edition": ""}),
             returns("Docs › Usage")),
        Case("a path and a field", make_header, ("Orbit docs", ("Install", "On Linux"), {"applies_to": "2.x"}),
             returns("Orbit docs › Install › On Linux (applies to 2.x)")),
        Case("two fields", make_header, ("Docs", (), {"applies_to": "2.4+", "edition": "enterprise"}),
             returns("Docs (applies to 2.4+; edition enterprise)")),
    ]


def check_header_chunks(chunks, text, title, max_tokens, overlap, headers=None, **markdown):
    """Raise ValueError unless `chunks` keep rag6's promises (check_markdown_chunks, the header counted
    in the budget), each embeds its header on the line before its text, each header starts with
    `title`, and each line of `headers` is only in chunks with the header given."""
    check_markdown_chunks(chunks, text, max_tokens, overlap, **markdown)
    for number, chunk in enumerate(chunks, 1):
        cut = chunk.header.endswith("…") and title.startswith(chunk.header[:-1].rstrip()) and len(chunk.header) > 1
        if not chunk.header.startswith(title) and not cut:
            raise ValueError(f"chunk {number}'s header {chunk.header!r} does not start with {title!r}, nor is "
                             "it the title cut short, ending in '…'")
    for line, header in (headers or {}).items():
        start = text.index(line)
        for chunk in chunks:
            if chunk.start < start + len(line) and start < chunk.end and chunk.header != header:
                raise ValueError(f"the chunk holding {line!r} has the header {chunk.header!r}, not {header!r}")


def shares_neighbours(chunks, text, title, max_tokens, overlap):
    """Raise ValueError unless each chunk after the first reaches back into the one before: the
    overlap asked for, on plain prose under one heading, where nothing stops it."""
    check_header_chunks(chunks, text, title, max_tokens, overlap)
    for before, after in zip(chunks, chunks[1:]):
        if after.start >= before.end:
            raise ValueError(f"overlap={overlap}, yet the chunk at {after.start} shares nothing with the one before")


def header_cases(header_chunks) -> list[Case]:
    """header_chunks on tricky texts and documents at several budgets, and on front matter with headers
    given by hand, smallest text first."""
    documents = [TrickyMarkdown(tricky.what, tricky.text) for tricky in TRICKY_TEXTS + WIDE_PIECE_TEXTS]
    documents += with_every_line_end(TRICKY_MARKDOWN)
    cases = [Case(document.what, header_chunks, (document.text, TITLE_FOR_TRICKY_INPUTS),
                  partial(check_header_chunks, keep_whole=document.keep_whole, paths=document.paths), dict(setting))
             for document in documents for setting in HEADER_SETTINGS]
    cases += [Case("front matter with a field for the header", header_chunks,
                   (WITH_FRONT_MATTER, TITLE_FOR_TRICKY_INPUTS),
                   partial(check_header_chunks, headers=HEADERS_BY_HAND[setting["max_tokens"]]), dict(setting))
              for setting in HEADER_SETTINGS]
    cases.append(Case("a text whose least budget leaves the header less than half the budget", header_chunks,
                      ("토큰 " * 10, TITLE_FOR_TRICKY_INPUTS), partial(check_header_chunks, headers={"토큰": "Orbit…"}),
                      dict(max_tokens=8, overlap=0)))
    cases.append(Case("plain prose under a heading, with overlap", header_chunks,
                      (PROSE_UNDER_A_HEADING, TITLE_FOR_TRICKY_INPUTS), shares_neighbours,
                      dict(max_tokens=48, overlap=8)))
    return sorted(cases, key=lambda case: len(case.args[0]))


def table_rows_of(text: str):
    """[(the header row's text, stripped, [(start, end) of each row's line, its line break in])] for each
    table of `text`, read from the text alone."""
    found = []
    for start, end in tables_in(text):
        lines = [match.span() for match in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text[start:end])]
        found.append((text[start : start + lines[0][1]].strip(), [(start + a, start + b) for a, b in lines[2:]]))
    return found


def check_row_chunks(result, text, chunks, max_tokens):
    """Raise ValueError unless `result` (with_table_rows of `chunks`) is lossless, in order, in budget
    with its headers, and cuts each table that one chunk of `chunks` holds alone into rows: a chunk
    ends at each of its rows' line ends (the last at the chunk's end), and each row but the first
    carries the chunk's header and the table's header row on the line after it; each row after the
    first, the last too, starts a chunk, even where the chunk after reaches back over it. A chunk holding
    no table is left as it was."""
    check_lossless(text, result)
    if any(after.start <= before.start for before, after in zip(result, result[1:])):
        raise ValueError("the chunks are not in order of their starts, or two start at one place")
    for number, chunk in enumerate(result, 1):
        if not chunk.oversize and count_tokens(chunk.embedding_text) > max_tokens:
            raise ValueError(f"chunk {number} [{chunk.start}, {chunk.end}) counts over {max_tokens} with its header")
    ends = {chunk.end: chunk for chunk in result}
    for chunk in chunks:
        tables = table_rows_of(chunk.text)
        if not tables:
            if chunk not in result and not any(c.start < chunk.start < c.end for c in result):
                raise ValueError(f"the chunk [{chunk.start}, {chunk.end}), holding no table, is not kept as it was")
            continue
        names, rows = tables[0]
        cut = [(chunk.start + a, chunk.start + b) for a, b in rows]
        wanted = "\n".join(part for part in (chunk.header, names) if part)
        fits = all(count_tokens(f"{wanted}\n{text[a:b]}") <= max_tokens for a, b in cut[1:-1])
        if len(tables) != 1 or len(rows) < 2 or not fits or chunk.oversize:
            continue
        starts = {c.start for c in result}
        for number, (start, end) in enumerate(cut[1:], 2):
            if start not in starts:
                raise ValueError(f"no chunk starts at row {number} of the table at [{chunk.start}, {chunk.end}), "
                                 f"at {start}: each row after the first starts a chunk, the last too")
        for number, (start, end) in enumerate(cut[:-1], 1):
            if end not in ends:
                raise ValueError(f"no chunk ends after row {number} of the table at [{chunk.start}, {chunk.end}), "
                                 f"at {end}")
            if number > 1 and ends[end].start == start and ends[end].header != wanted:
                raise ValueError(f"row {number}'s chunk has the header {ends[end].header!r}, not {wanted!r}")


SETTINGS_TABLE = ("# Settings\n\nThe server reads these at start.\n\n| key | default | what |\n|---|---|---|\n"
                  "| `workers` | `4` | jobs run at once |\n| `queue` | `main` | where jobs wait |\n"
                  "| `retries` | `3` | tries before a job fails |\n\nRestart after a change.\n")
ROW_DOCUMENTS = (
    ("a table under a heading", SETTINGS_TABLE),
    ("a table with CRLF line ends", SETTINGS_TABLE.replace("\n", "\r\n")),
    ("a table shown in a code block", "# Example\n\n```\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n```\n"),
    ("two tables in one chunk", "# Two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n\n| c |\n|---|\n| 5 |\n| 6 |\n"),
    ("a table of one row", "# One\n\n| a | b |\n|---|---|\n| 1 | 2 |\n"),
    ("no table", "# Prose\n\nJust words here. " * 3),
)
ROW_SETTINGS = (dict(max_tokens=200, overlap=0), dict(max_tokens=40, overlap=8), dict(max_tokens=24, overlap=4))
ROWS_BY_HAND = [  # SETTINGS_TABLE at 200 tokens: one chunk, cut at each row's line end
    (0, 124, "Docs › Settings"),
    (124, 163, "Docs › Settings\n| key | default | what |"),
    (163, 235, "Docs › Settings\n| key | default | what |"),
]


def row_cases(header_chunks, with_table_rows) -> list[Case]:
    """with_table_rows on tables worked out by hand, and on documents and tricky texts at several budgets."""
    def rows_of(text, max_tokens, overlap):
        chunks = header_chunks(text, "Docs", max_tokens, overlap)
        return chunks, with_table_rows(text, chunks, max_tokens)

    def judged(pair, text, max_tokens, overlap):
        chunks, result = pair
        check_row_chunks(result, text, chunks, max_tokens)

    def by_hand(pair, text, max_tokens, overlap):
        judged(pair, text, max_tokens, overlap)
        got = [(c.start, c.end, c.header) for c in pair[1]]
        if got != ROWS_BY_HAND:
            raise ValueError(f"gave {got}, not {ROWS_BY_HAND}")

    documents = list(ROW_DOCUMENTS) + [(tricky.what, tricky.text) for tricky in TRICKY_TEXTS]
    cases = [Case("a table cut into rows by hand", rows_of, (SETTINGS_TABLE,), by_hand,
                  dict(max_tokens=200, overlap=0))]
    cases += [Case(what, rows_of, (text,), judged, dict(setting))
              for what, text in documents for setting in ROW_SETTINGS]
    reaching_back = [make_chunk(SETTINGS_TABLE, 0, 210, header="Docs › Settings"),  # the table whole, then
                     make_chunk(SETTINGS_TABLE, 130, 235, header="Docs › Settings")]  # a chunk from inside row 2
    cases.append(Case("a chunk reaching back into the rows of the table before", with_table_rows,
                      (SETTINGS_TABLE, reaching_back, 200), check_row_chunks))
    return cases


def stops_early(texts: dict, headed: dict, tables_as) -> bool:
    """Before anything is shown: True, after a FAIL line, if the header chunks of a page ({page: chunks})
    are not exact slices that lose nothing, or if cutting them by rows (tables_as("by rows", text,
    chunks)) raises or loses text, so that a broken chunker is named before the demonstration trips
    on it. (The budget is checked with the rest, at the end.)"""
    invariants = Invariants("rag7")
    for page, text in texts.items():
        call = f"header_chunks on the page {page}"
        try:
            check_lossless(text, headed[page])
            call = f"with_table_rows on the page {page}"
            check_lossless(text, tables_as("by rows", text, headed[page]))
        except Exception as problem:  # noqa: BLE001 - the student's code: any error is reported, in one line
            detail = f"ValueError: {problem}" if isinstance(problem, ValueError) else error_line(problem)
            invariants.check(f"{call}: nothing lost, every chunk an exact slice", False, detail)
            return True
    return False


def checks(lab: dict, by_value: dict) -> bool:
    """The checks rag7 ends with, on the functions in `lab` (the lab's globals()) and the dial's chunks
    ({value: {page: chunks}}): PASS or FAIL each, then the public grading tests. True when all pass."""
    texts, max_tokens, title = pages(), lab["MAX_TOKENS"], lab["TITLE"]
    print("\nInvariants")
    invariants = Invariants("rag7")
    invariants.check_chunks(  # the budget check counts header and text together
        "nothing lost, text an exact slice, header + text within budget (tables whole, and by rows)",
        [(texts[page], chunks) for by_page in by_value.values() for page, chunks in by_page.items()], max_tokens)
    whole = [chunk for chunks in by_value["whole"].values() for chunk in chunks]
    unheaded = [chunk for chunk in whole if not chunk.header.startswith(title)
                or chunk.embedding_text != f"{chunk.header}\n{chunk.text}"]
    invariants.check("every chunk embeds a header that starts with the title, on the line before its text",
                     not unheaded, f"{len(unheaded)} chunks do not, the first [{unheaded[0].start}, {unheaded[0].end})"
                     f" with header {unheaded[0].header!r}" if unheaded else "")
    rows, astray = 0, []
    for page, chunks in by_value["by rows"].items():
        names = {start: header for header, lines in table_rows_of(texts[page]) for start, _ in lines}
        for chunk in (chunk for chunk in chunks if "\n" in chunk.header):
            rows += 1
            if names.get(chunk.start) != chunk.header.split("\n")[-1]:
                astray.append(f"{page} [{chunk.start}, {chunk.end}) with header {chunk.header!r}")
    more = sum(map(len, by_value["by rows"].values())) - len(whole)
    invariants.check("tables by rows: more chunks, each row's header ends with its table's column names",
                     rows > 0 and more > 0 and not astray,
                     f"{rows} row chunks, {more} more chunks"
                     + (f"; {len(astray)} astray: {astray[0]}" if astray else ""))
    invariants.check_cases("headers as worked out by hand", make_header_cases(lab["make_header"]))
    invariants.check_cases("tricky inputs: rag6's promises kept, header counted in", header_cases(lab["header_chunks"]))
    invariants.check_cases("table rows: a chunk per row, its column names in its header; other chunks kept",
                           row_cases(lab["header_chunks"], lab["with_table_rows"]))
    # Last, the public grading tests (tests/grading/test_rag7.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    invariants.check_public_tests(lab)
    return invariants.verdict()
