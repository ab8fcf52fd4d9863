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
# reaches when run: `header_chunks`, which calls the two before it. rag7 cuts
# with the course's reader of real Markdown, which cuts with your rag5 (and
# rag5 with your rag4): finish those two first.

# %%
from dataclasses import replace

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
    # BEGIN SOLUTION
    # hint 1: Build the one-line header embedded with every chunk of a section (title, heading
    # hint 1: path, then a few metadata fields), so that the embedder sees what a chunk is about
    # hint 1: even when its text never says it.
    # hint 2: Join the document's title and the section's headings with ' › ', leaving out empty
    # hint 2: parts. Then, if the metadata has fields with a value, write each as its name in words
    # hint 2: (underscores become spaces) followed by its value, separate them with '; ' and put
    # hint 2: them in parentheses after the path. No fields, no parentheses.
    # hint 3: path = ...  # title and headings joined with " › ", empty parts left out
    # hint 3: fields = ...  # "name value" for each field with a value (underscores as spaces), joined with "; "
    # hint 3: return ...  # the path, then the fields in parentheses if there are any
    path = " › ".join(part for part in (title, *section) if part)
    fields = "; ".join(f"{key.replace('_', ' ')} {value}" for key, value in metadata.items() if value)
    return f"{path} ({fields})" if fields else path
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Cut one section so that every chunk, embedded with its header, fits in max_tokens:
    # hint 1: the header takes its room from the text's, and the chunks stay exact slices of the page.
    # hint 2: Count the header with its line break. Cut the section's text with rag6.robust_markdown_chunks
    # hint 2: (the course's reader) at the room that leaves (the overlap kept below the room), and move each
    # hint 2: chunk to the page's offsets (dataclasses.replace), with the section's path and the header. If a
    # hint 2: chunk not flagged oversize counts over max_tokens with its header (count its embedding_text),
    # hint 2: try again with one token less room. The room never goes below the section's least_budget; if
    # hint 2: nothing fits even there, the chunks go without a header.
    # hint 3: tokens = ...  # the header's tokens with its line break (no header: 0)
    # hint 3: for room in ...:  # from what the header leaves down to the section's least_budget
    # hint 3:     chunks = ...  # the section cut at `room`, moved to the page, with its section and header
    # hint 3:     if ...:  # each one not oversize fits in max_tokens, its header counted
    # hint 3:         return chunks
    # hint 3: return ...  # nothing fits with a header: the same cut at max_tokens, without one
    tokens = count_tokens(header + "\n") if header else 0
    for room in range(max_tokens - tokens, least_budget(text[start:end]) - 1, -1):
        chunks = [replace(c, start=start + c.start, end=start + c.end, section=section, header=header)
                  for c in rag6.robust_markdown_chunks(text[start:end], room, min(overlap, room - 1))]
        if all(c.oversize or count_tokens(c.embedding_text) <= max_tokens for c in chunks):
            return chunks
    return [replace(c, start=start + c.start, end=start + c.end, section=section)
            for c in rag6.robust_markdown_chunks(text[start:end], max_tokens, overlap)]
    # END SOLUTION


# %%
def header_chunks(text, title, max_tokens, overlap=0, metadata=None):
    """rag6's chunks, each with a header (title › headings (fields)) counted in max_tokens.

    Bad arguments raise as rag6's do, and a title that is not a str is a TypeError.
    `metadata` None means the HEADER_FIELDS of the page's front matter.
    """
    # BEGIN SOLUTION
    # hint 1: Chunk a Markdown page as rag6 does, but give every chunk the header of its section,
    # hint 1: and keep header and text together within max_tokens, because the embedding model's
    # hint 1: limit applies to all it embeds.
    # hint 2: Check the arguments as rag6 does, and that the title is a str (a TypeError
    # hint 2: otherwise); an empty text has no chunks. Without metadata, take the HEADER_FIELDS the
    # hint 2: front matter has. A header may take half of max_tokens, less if the text's least budget
    # hint 2: needs more. rag6's chunks of the page without overlap tell you its sections: a run of
    # hint 2: neighbouring chunks with the same section is one. Each section gets its header
    # hint 2: (make_header, then fit_header) and goes to section_with_header.
    # hint 3: ...  # refuse bad arguments (as rag6, and a title that is not a str); "" has no chunks
    # hint 3: if metadata is None:
    # hint 3:     metadata = ...  # the HEADER_FIELDS the front matter holds
    # hint 3: limit = ...  # what a header may take: half the budget, less if the text's least budget needs more
    # hint 3: page = ...  # the page cut without overlap: its chunks tile each section
    # hint 3: chunks = []
    # hint 3: for ...:  # each run of neighbouring chunks with one section
    # hint 3:     header = ...  # the section's header, fitted within limit
    # hint 3:     chunks += ...  # the section from its first chunk's start to its last chunk's end, with its header
    # hint 3: return chunks
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if not text:
        return []
    if metadata is None:
        fields = front_matter_fields(text)
        metadata = {key: fields[key] for key in HEADER_FIELDS if key in fields}
    limit = min(max_tokens // 2, max_tokens - min(max_tokens, least_budget(text)))
    page = rag6.robust_markdown_chunks(text, max_tokens)  # without overlap: its chunks tile each section
    firsts = [i for i, chunk in enumerate(page) if i == 0 or chunk.section != page[i - 1].section]
    chunks = []
    for first, after in zip(firsts, firsts[1:] + [len(page)]):
        section = page[first].section
        header = fit_header(make_header(title, section, metadata), limit)
        chunks += section_with_header(text, page[first].start, page[after - 1].end, section, header,
                                      max_tokens, overlap)
    return chunks
    # END SOLUTION


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
    # BEGIN SOLUTION
    # hint 1: Cut a chunk that holds one table into a chunk per row, so that a question about one
    # hint 1: row meets that row alone, with its columns' names beside it in what is embedded.
    # hint 2: Find the tables in the chunk's text (tables_in): exactly one, or None. Its lines
    # hint 2: (split_lines) are the header row, the delimiter row, then the rows: two rows at least.
    # hint 2: Each row chunk runs to its row's line end; the first starts where the chunk starts,
    # hint 2: the last ends where the chunk ends. The first keeps the chunk's header and kind; the
    # hint 2: others are "table" chunks whose header adds the header row, stripped, on a new line.
    # hint 2: Offsets in the chunk's text are relative: add chunk.start. A row over budget: None.
    # hint 3: tables = tables_in(chunk.text)
    # hint 3: ...  # not exactly one table: None
    # hint 3: lines = ...  # the table's lines, to its end
    # hint 3: ...  # fewer than a header row, the delimiter and two rows: None
    # hint 3: header = ...  # the chunk's header, then the header row stripped, on a new line
    # hint 3: ends = ...  # where each row ends on the page; the last row ends where the chunk ends
    # hint 3: rows = []
    # hint 3: for number, (row_start, row_end) in ...:  # the first row starts where the chunk starts
    # hint 3:     row = ...  # the first keeps the chunk's kind and header; the others are "table" with `header`
    # hint 3:     ...  # over budget with its header: None
    # hint 3:     rows.append(row)
    # hint 3: return rows
    tables = tables_in(chunk.text)
    if len(tables) != 1:
        return None
    start, end = tables[0]
    lines = split_lines(chunk.text[:end], start)
    if len(lines) < 4:  # the header row, the delimiter row, two rows
        return None
    header = "\n".join(part for part in (chunk.header, lines[0].text.strip()) if part)
    ends = [chunk.start + line.end for line in lines[2:]]
    ends[-1] = chunk.end
    rows = []
    for number, (row_start, row_end) in enumerate(zip([chunk.start] + ends, ends)):
        first = number == 0  # what comes before the first row, the column names with it
        row = make_chunk(text, row_start, row_end, section=chunk.section, kind=chunk.kind if first else "table",
                         header=chunk.header if first else header)
        if count_tokens(row.embedding_text) > max_tokens:
            return None
        rows.append(row)
    return rows
    # END SOLUTION


# %%
def with_table_rows(text, chunks, max_tokens):
    """`chunks`, each that holds one table cut into a chunk per row (row_chunks).

    With overlap, a chunk can repeat a table the chunk before already cut into rows. Its
    rows that start before the last chunk kept are left out, so each row starts one chunk
    and chunks stay in order; a piece that starts where that chunk does holds it, and
    takes its place.
    """
    # BEGIN SOLUTION
    # hint 1: Give each table its chunk per row across a whole page, keeping the page lossless and
    # hint 1: in order even where overlap makes a chunk repeat rows the chunk before already gave.
    # hint 2: Walk the chunks: the pieces of each are its rows, or the chunk itself. If the first
    # hint 2: piece starts before the last chunk kept, or at its start, that last
    # hint 2: chunk comes off: keep only the pieces that start at or after it (none left: one chunk
    # hint 2: from its start to this chunk's end, with this chunk's section, kind and header), and
    # hint 2: put it back if they all start after it.
    # hint 3: result = []
    # hint 3: for chunk in chunks:
    # hint 3:     pieces = ...  # the chunk's rows, or the chunk itself when it is not one table
    # hint 3:     if ...:  # overlap: the first piece starts at or before the last chunk kept
    # hint 3:         last = result.pop()
    # hint 3:         pieces = ...  # those starting at or after `last`; none: one chunk from its start to chunk.end
    # hint 3:         if ...:  # they all start after `last`: it stays
    # hint 3:             result.append(last)
    # hint 3:     result += pieces
    # hint 3: return result
    result = []
    for chunk in chunks:
        rows = row_chunks(text, chunk, max_tokens)
        pieces = rows or [chunk]
        if result and pieces[0].start <= result[-1].start:
            last = result.pop()
            pieces = [piece for piece in pieces if piece.start >= last.start] or [
                make_chunk(text, last.start, chunk.end, section=chunk.section, kind=chunk.kind, header=chunk.header)]
            if pieces[0].start > last.start:  # it only began before `last`: `last` stays
                result.append(last)
        result += pieces
    return result
    # END SOLUTION


# %% [markdown]
# ## 4. What to look at, and the dial
#
# A page's chunks with their headers, then recall over the course's 44 pages,
# bare against headed, and a question the header moves (chosen from the data).
# Then **the dial: tables whole or by rows**, both values side by side: each
# cuts every page with your functions and prints recall@5 with its interval,
# what a reader reads, and what the data shows.

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


# %%
if __name__ == "__main__":
    run_lab(main)
