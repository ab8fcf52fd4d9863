# %% [markdown]
# # rag7: Header-prefixed chunks, and a chunk per table row
#
# rag6's chunks know where they live: each carries its heading path. But the
# embedder never sees it. A chunk under `## On Debian and Ubuntu` that says
# "Add the repository key, then install the package" does not contain the
# word *Ubuntu*, so a user asking "how do I install on Ubuntu?" may never
# find it.
#
# The remedy is small: give every chunk a **header** made of the document's
# title, its heading path and a few front-matter fields,
#
#     Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)
#
# and embed the header with the text. The header is *not* part of `chunk.text`:
# what a reader is shown and an answer cites is still the exact slice
# `page[start:end]`. It lives in `chunk.header` and only enters
# `chunk.embedding_text` (header, a line break, text). The embedder's limit
# applies to all it embeds, so `max_tokens` bounds header and text together.
#
# Tables ask the same of rows. "What is the default of `max_idle_conns`?" asks
# about one row, yet a table kept whole is embedded as the mean of all its
# rows. Cut into a chunk per row, each carrying the column names in its
# header, a bare `5` still reads as a default.
#
# You write `make_header`, `section_with_header` and `header_chunks`, then
# `row_chunks` and `with_table_rows`. The lab stops at the first TODO it
# reaches when run: `header_chunks`, which calls the two before it.

# %%
from dataclasses import replace
from itertools import groupby

from academy_llm import check_text_and_window, count_tokens, make_chunk
from labkit import load_lab, run_lab
from labkit.explorer_widget import show_explorer  # given: the chunk explorer, in a notebook
from labkit.lessons import rag7 as lesson  # given: the demonstration, the dial's chunks, the checks
from labkit.lessons.dial import dial_report  # given: recall with its interval for each value of a dial
from labkit.lessons.rag7 import fit_header, front_matter_fields, least_budget, tables_in
from labkit.markdown import split_lines
from labkit.notebook import in_notebook

rag6 = load_lab("rag6")  # robust_markdown_chunks(text, max_tokens, overlap): the course's Markdown reader

# Given, one sentence each:
# - front_matter_fields(text) is the page's front matter as a {key: value} dict ({} if it has none);
# - least_budget(text) is the fewest tokens a chunk of `text` needs: its widest piece no cut may split;
# - fit_header(header, limit) is `header` if it fits in `limit` tokens with its line break, else a
#   shorter one that does: the title, "…", the nearest headings (see labkit/lessons/rag7.py);
# - tables_in(text) lists the (start, end) of each table in `text`, a table shown in a code block left out;
# - split_lines(text, start) gives the lines of `text` from `start` on, each with .start, .end (after its
#   line break) and .text (without it).

HEADER_FIELDS = ("applies_to",)  # the front-matter fields a header carries when the caller names none

# %% [markdown]
# ## 1. The header
#
# `make_header("Orbit docs", ("Install on Linux", "On Debian and Ubuntu"),
# {"applies_to": "2.x"})` gives
# `"Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)"`.
# Field names are written as words (`applies_to` reads "applies to"), several
# fields are separated by "; ", and empty parts are left out.


# %%
def make_header(title, section, metadata):
    """A one-line header: title, heading path, then metadata fields in parentheses."""
    path = " › ".join(part for part in (title, *section) if part)
    fields = "; ".join(f"{name.replace('_', ' ')} {value}" for name, value in (metadata or {}).items()
                       if value not in (None, ""))
    return " ".join(part for part in (path, fields and f"({fields})") if part)


# %% [markdown]
# ## 2. Chunks with headers, the header inside the budget
#
# rag6 cuts the page into sections. Each section gets its header, and its
# text is cut again with the room the header leaves: `max_tokens` less the
# header's tokens with its line break. Counted together, header and text can
# come out a token over what their counts add up to (when the text starts
# with a space, the two merge into other tokens): then the section is cut
# again with a token less room, until every chunk fits. A table or code block
# over budget alone stays whole, flagged `oversize`, as in rag6.
#
# The page's text is what matters, so a header takes half of `max_tokens` at
# most, less if the text's widest uncut piece (`least_budget`) needs more
# room; `fit_header` shortens a longer one. No page is refused for its headings.


# %%
def section_with_header(text, start, end, section, header, max_tokens, overlap):
    """The chunks of text[start:end] (one section), each with `section` and `header`: header and
    text within max_tokens together, but for a block alone over budget (flagged oversize)."""
    header_tokens = count_tokens(header + "\n") if header else 0
    piece = text[start:end]

    def cut(room, overlap, **header_field):
        """The section's chunks at `room`, moved to the page's offsets."""
        return [replace(chunk, start=start + chunk.start, end=start + chunk.end, section=section, **header_field)
                for chunk in rag6.robust_markdown_chunks(piece, room, overlap)]

    def fits(chunks):
        return all(chunk.oversize or count_tokens(chunk.embedding_text) <= max_tokens for chunk in chunks)

    rooms = range(max_tokens - header_tokens, least_budget(piece) - 1, -1)  # a token less each time
    attempts = (cut(room, min(overlap, room - 1), header=header) for room in rooms)
    return next(filter(fits, attempts), None) or cut(max_tokens, overlap)  # else without the header


# %%
def header_chunks(text, title, max_tokens, overlap=0, metadata=None):
    """rag6's chunks, each with a header (title › headings (fields)) counted in max_tokens.

    Bad arguments raise as rag6's do, and a title that is not a str is a TypeError.
    `metadata` None means the HEADER_FIELDS of the page's front matter.
    """
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not isinstance(title, str):
        raise TypeError(f"the title is a {type(title).__name__}: give the document's title as a str")
    if not text:
        return []
    fields = front_matter_fields(text) if metadata is None else {}
    metadata = dict((name, fields[name]) for name in filter(fields.__contains__, HEADER_FIELDS)) \
        if metadata is None else metadata
    text_needs = min(max_tokens, least_budget(text))  # the widest piece of the page no cut may split
    limit = min(max_tokens // 2, max_tokens - text_needs)
    runs = (list(run) for _, run in groupby(rag6.robust_markdown_chunks(text, max_tokens),
                                            key=lambda chunk: tuple(chunk.section)))
    return [chunk for run in runs
            for chunk in section_with_header(text, run[0].start, run[-1].end, tuple(run[0].section),
                                             fit_header(make_header(title, tuple(run[0].section), metadata), limit),
                                             max_tokens, overlap)]


# %% [markdown]
# ## 3. One row, one chunk
#
# `row_chunks` cuts a chunk that holds one table into a chunk per row. The
# first keeps what comes before the first row (a heading, a paragraph, the
# column names) with that row; the last keeps what follows the last row. Each
# row's header is the chunk's header and, on the next line, the table's header
# row, so that the embedder reads each cell beside its column's name. Every
# text is still an exact slice of the page.
#
# `with_table_rows` does that to a page's chunks. With overlap a chunk can
# repeat a table the chunk before already cut into rows: a row is kept once,
# and the chunks stay in order of their starts.


# %%
def row_chunks(text, chunk, max_tokens):
    """A chunk per row of the one table in `chunk`, the column names in each row's header; None
    if `chunk` holds no table, or several, or one of fewer than two rows, or if a row with its
    header would be over max_tokens (the chunk then stays whole)."""
    tables = tables_in(chunk.text)
    if len(tables) != 1:
        return None
    table_start, table_end = tables[0]
    lines = split_lines(chunk.text[:table_end], table_start)  # the column names, the delimiter row, the rows
    if len(lines) < 4:
        return None
    row_header = "\n".join(filter(None, (chunk.header, lines[0].text.strip())))
    ends = [chunk.start + line.end for line in lines[2:-1]] + [chunk.end]

    def row(number, start, end):
        """The first row keeps the chunk's kind and header; the others are rows with the column names."""
        first = number == 0
        return make_chunk(text, start, end, section=chunk.section, kind=chunk.kind if first else "table",
                          header=chunk.header if first else row_header)

    rows = [row(number, start, end) for number, (start, end) in enumerate(zip([chunk.start, *ends], ends))]
    return rows if all(count_tokens(row.embedding_text) <= max_tokens for row in rows) else None


# %%
def with_table_rows(text, chunks, max_tokens):
    """`chunks`, each that holds one table cut into a chunk per row (row_chunks).

    With overlap, a chunk can repeat a table the chunk before already cut into rows. Its
    rows that start before the last chunk kept are left out, so each row starts one chunk
    and chunks stay in order; a piece that starts where that chunk does holds it, and
    takes its place.
    """
    def in_order():
        """Yield the pieces, holding the last one back: the next chunk's pieces may take its place."""
        last = None
        for chunk in chunks:
            pieces = row_chunks(text, chunk, max_tokens) or [chunk]
            if last is not None and pieces[0].start <= last.start:
                pieces = [piece for piece in pieces if piece.start >= last.start] or [make_chunk(
                    text, last.start, chunk.end, section=chunk.section, kind=chunk.kind, header=chunk.header)]
                if pieces[0].start > last.start:
                    yield last
            elif last is not None:
                yield last
            yield from pieces[:-1]
            last = pieces[-1]
        if last is not None:
            yield last

    return list(in_order())


# %% [markdown]
# ## 4. What to look at, and the dial
#
# A page's chunks with their headers, then recall over the course's 44 pages,
# bare against headed, and a question the header moves (chosen from the data).
# Then **the dial: tables whole or by rows**. Change `TABLES` and run again:
# each value cuts every page with your functions and prints recall@5 with its
# interval, and what the data shows.

# %%
TITLE, MAX_TOKENS, OVERLAP = "Orbit docs", 256, 32
TABLES = ("whole", "by rows")  # the dial


def tables_as(tables, text, chunks):
    """A page's header chunks, its tables kept whole or cut by rows."""
    return with_table_rows(text, chunks, MAX_TOKENS) if tables == "by rows" else chunks


def main():
    pages = lesson.pages()
    headed = {name: header_chunks(text, TITLE, MAX_TOKENS, OVERLAP) for name, text in pages.items()}
    if lesson.stops_early(pages, headed, tables_as):  # a FAIL before the demonstration trips on it
        return False
    lesson.show_headers(pages["install-linux"], headed["install-linux"])
    bare = {name: rag6.robust_markdown_chunks(text, MAX_TOKENS, OVERLAP) for name, text in pages.items()}
    lesson.bare_against_headed(bare, headed, MAX_TOKENS)
    print(f"\n4. The dial: tables whole or by rows, header chunks of at most {MAX_TOKENS} tokens, overlap {OVERLAP}")
    by_value = {tables: {name: tables_as(tables, text, headed[name]) for name, text in pages.items()}
                for tables in TABLES}
    dial_report("tables", by_value)
    return lesson.checks(globals(), by_value)  # the lab's checks, then its public grading tests


# %%
# In a notebook, an explorer: pick a chunker, move its budget and overlap, watch the chunks and headers.
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    show_explorer(lesson.pages()["storage-backends"], {
        "with headers": lambda text, max_tokens, overlap: header_chunks(text, TITLE, max_tokens, overlap),
        "headers + table rows": lambda text, max_tokens, overlap: with_table_rows(
            text, header_chunks(text, TITLE, max_tokens, overlap), max_tokens),
        "markdown (rag6)": rag6.markdown_chunks,
    }, lesson.QUESTION, lesson.ANSWER)


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. Two more levels wait until you ask: the approach, then a sketch close to
# code. `python labs/rag7-header-chunking.py --hint 2` runs the lab and shows
# hint 2 for the TODO where it stops; `--hint 3` shows the next level, and
# `--hint 2 make_header` one function's. In a notebook, run the cells above,
# then `show_hint(2)` or `show_hint(2, "make_header")`.

# %%
from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)

HINTS = lab_hints("rag7")  # labs/hints/rag7.json: asked for, not read


# %%
if __name__ == "__main__":
    run_lab(main)
