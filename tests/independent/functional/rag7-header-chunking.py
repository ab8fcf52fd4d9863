# %% [markdown]
# # rag7: Header-prefixed chunks
#
# rag6's chunks know where they live: each carries its heading path. But the
# embedder never sees it. A chunk under `## On Debian and Ubuntu` that says
# "Add the repository key, then install the package" does not contain the
# word *Ubuntu*, so a user asking "how do I install on Ubuntu?" may never
# find it.
#
# The fix is small: give every chunk a **header** built from the document's
# title, the heading path and a few front-matter fields, such as
#
#     Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)
#
# and embed the header together with the text. The header is *not* part of
# `chunk.text`: what a reader is shown and what an answer cites is still the
# exact slice of the page. It lives in `chunk.header` and only enters
# `chunk.embedding_text`.
#
# The header costs tokens, and the embedding model's limit applies to what it
# embeds, so `max_tokens` bounds header and text together.
#
# You write `make_header` and `header_chunks`.

# %%
import re
from dataclasses import replace
from functools import partial

from academy_llm import (
    check_text_and_window, corpus_pages, corpus_questions, count_tokens, embed, is_clean_cut,
    make_chunk, top_k,
)
from labkit import TRICKY_TEXTS, Case, Invariants, load_lab, returns, run_lab, view_chunks

rag6 = load_lab("rag6")  # front_matter, read_document, section_chunks

# Front-matter fields that go into the header when the caller names none.
HEADER_FIELDS = ("applies_to",)

# %% [markdown]
# ## 1. The header
#
# `make_header("Orbit docs", ("Install on Linux", "On Debian and Ubuntu"),
# {"applies_to": "2.x"})` gives
# `"Orbit docs › Install on Linux › On Debian and Ubuntu (applies to 2.x)"`.
# Field names are written as words (`applies_to` reads "applies to"); several
# fields are separated by "; ". Empty parts are left out.


# %%
def make_header(title, section, metadata):
    """A one-line header: title, heading path, then metadata fields in parentheses."""
    path = " › ".join(part for part in (title, *section) if part)
    fields = "; ".join(f"{name.replace('_', ' ')} {value}" for name, value in (metadata or {}).items()
                       if value not in (None, ""))
    return " ".join(part for part in (path, fields and f"({fields})") if part)


# %% [markdown]
# ## 2. Chunks with headers, header included in the budget
#
# Each section gets its header; the room left for text is
# `max_tokens - count_tokens(header + "\n")`. rag6 chunks the section within
# that room, and each chunk gets the header (`dataclasses.replace(chunk,
# header=...)`). When the text starts with a non-space, the line break after
# the header is a clean cut (rag5, section 1), so header and text counts
# simply add up; otherwise they are counted together, and can come out a
# token over. A section with such a chunk is chunked again with one token
# less room. A header that leaves no room at all is an error: the caller must
# raise `max_tokens` or shorten the title.


# %%
def header_chunks(text, title, max_tokens, overlap=0, metadata=None):
    """rag6's chunks, each with a header (title › headings (fields)) counted in max_tokens."""
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if not text:
        return []
    if metadata is None:
        found = rag6.front_matter(text)[0]
        metadata = {name: found[name] for name in HEADER_FIELDS if name in found}
    document = rag6.read_document(text, max_tokens, overlap)

    def front_matter_chunks():
        if not document.body_start:
            return []
        chunk = replace(rag6.front_matter_chunk(text, document.body_start, max_tokens, document.index),
                        header=make_header(title, (), metadata))
        return [replace(chunk, oversize=count_tokens(chunk.embedding_text) > max_tokens)]

    def chunks_of(section):
        header = make_header(title, tuple(name for _, name in section.path), metadata)
        return section_with_header(text, section, header, max_tokens, overlap, document)

    return front_matter_chunks() + [chunk for section in document.sections for chunk in chunks_of(section)]


def section_with_header(text, section, header, max_tokens, overlap, document):
    """The chunks of one section, each carrying `header`, header and text within max_tokens.

    The page's text is what matters: a header takes half of max_tokens at most (less
    if the text's widest uncut piece needs more room), and a longer one is shortened
    (shortened_header). So no page is refused for its headings.
    """
    need = min(max_tokens, document.index.min_budget)  # the room the text cannot do without
    limit = min(max_tokens // 2, max_tokens - need)
    if count_tokens(header + "\n") > limit:
        header = shortened_header(header, limit)
    header_tokens = count_tokens(header + "\n") if header else 0
    for room in range(max_tokens - header_tokens, need - 1, -1):
        chunks = rag6.section_chunks(text, section, room, min(overlap, room - 1), document.index, document.regions)
        chunks = [replace(chunk, header=header) for chunk in chunks]
        if all(c.oversize or embedded_tokens(c, header_tokens) <= max_tokens for c in chunks):
            return chunks
        # header and text counted together came out a token over: one token less room
    return rag6.section_chunks(text, section, max_tokens, overlap, document.index, document.regions)  # no header fits


def shortened_header(header, limit):
    """`header` within `limit` tokens, its line break counted: the title, "…", then the
    nearest headings that fit (the metadata stays with the last); then the title and the
    nearest heading without the metadata; if not even that fits, it cut short, ending
    in "…" ("" if nothing fits).

    make_header("Docs", ("Guide", "Install", "On Debian"), {}) shortened to 8 tokens:
    "Docs › … › On Debian".
    """
    parts = header.split(" › ")
    between = ["…"] if len(parts) > 2 else []
    shorter = [" › ".join([parts[0], "…", *parts[-nearest:]]) for nearest in range(len(parts) - 2, 0, -1)]
    shorter.append(" › ".join([*parts[:-1][:1], *between, re.sub(r" \([^()]*\)$", "", parts[-1])]))
    for candidate in shorter:
        if count_tokens(candidate + "\n") <= limit:
            return candidate
    return cut_to_tokens(shorter[-1], limit)


def cut_to_tokens(text, limit):
    """The longest start of `text` that, with "…" and a line break, counts `limit` tokens
    at most, with the "…"; "" if no start of it does."""
    low, high = 0, len(text)  # characters kept; a binary search, counting a few short texts
    while low < high:
        middle = (low + high + 1) // 2
        if count_tokens(text[:middle] + "…\n") <= limit:
            low = middle
        else:
            high = middle - 1
    kept = text[:low].rstrip()
    return f"{kept}…" if kept and count_tokens(f"{kept}…\n") <= limit else ""


def embedded_tokens(chunk, header_tokens):
    """count_tokens(chunk.embedding_text), added up from the parts when the line break is a clean cut."""
    if not chunk.header:
        return chunk.n_tokens
    if is_clean_cut(chunk.embedding_text, len(chunk.header) + 1):
        return header_tokens + chunk.n_tokens
    return count_tokens(chunk.embedding_text)


# %% [markdown]
# ## 3. An option for tables: one row, one chunk
#
# A question about a table usually asks about one row ("what is the default
# of `storage.postgres_max_idle_conns`?"). A table kept whole is embedded as
# the mean of all its rows' words, which says little about any one row.
# `with_table_rows` cuts each chunk that holds one table into a chunk per row,
# and puts the table's header row (its column names) into each row's header,
# beside the heading path, so that a bare `5` still reads as a default. The
# text of each chunk is still an exact slice of the page. The last step below
# (and rag8, by kind of question) measures what this wins (table questions)
# and what it costs: many more small chunks compete for the top 5.


# %%
def with_table_rows(text, chunks, max_tokens):
    """`chunks`, with each chunk holding one table cut into a chunk per row (see row_chunks).

    A chunk whose pieces reach back before the last one kept (overlap repeating a table) takes the
    last one's place from where it starts: rows that start before it are already given.
    """
    out = []
    for chunk in chunks:
        rows = row_chunks(text, chunk, max_tokens)
        pieces = rows or [chunk]
        if out and (pieces[0].start < out[-1].start or (rows and pieces[0].start == out[-1].start)):
            previous = out.pop()
            later = [piece for piece in pieces if piece.start >= previous.start]
            if not later:
                later = [make_chunk(text, previous.start, chunk.end, section=chunk.section, kind=chunk.kind,
                                    header=chunk.header)]
            elif later[0].start > previous.start:
                out.append(previous)
            pieces = later
        out.extend(pieces)
    return out


def row_chunks(text, chunk, max_tokens):
    """A chunk per row of the one table in `chunk`, the column names in each row's header.

    rag6 reads the chunk's blocks, so a table shown inside a code block is not
    taken for one. The first chunk keeps what comes before the first row (a
    heading, a paragraph, the header row) and the first row; the last keeps
    what follows the last row. None if the chunk does not hold exactly one
    table of two rows or more, or if a row and its header would not fit in
    max_tokens: the chunk then stays as it is.
    """
    lines = rag6.split_lines(text[chunk.start : chunk.end])
    tables = [block for block in rag6.scan_blocks(lines) if block.kind == "table"]
    if len(tables) != 1 or tables[0].last - tables[0].first < 4:  # header row, delimiter row, two rows
        return None
    table = tables[0]
    header = "\n".join(part for part in (chunk.header, lines[table.first].text.strip()) if part)
    row_ends = [chunk.start + line.end for line in lines[table.first + 2 : table.last]]
    row_ends[-1] = chunk.end
    rows = []
    for number, (start, end) in enumerate(zip([chunk.start] + row_ends, row_ends)):
        if number == 0:  # what comes before the first row, the column names with it
            row = make_chunk(text, start, end, section=chunk.section, kind=chunk.kind, header=chunk.header)
        else:
            row = make_chunk(text, start, end, section=chunk.section, kind="table", header=header)
        if count_tokens(row.embedding_text) > max_tokens:
            return None
        rows.append(row)
    return rows


# %% [markdown]
# ## 4. Does it pay? Numbers from the dataset
#
# The course's dataset has 44 pages of Orbit documentation and 176 questions,
# each labelled with the exact span of its answer. We chunk every page with
# rag6 (bare) and rag7 (with headers) at the same budget, search all chunks of
# all pages for each question, and count how often a chunk holding the whole
# answer is among the top 5 (recall@5).

# %%
TITLE = "Orbit docs"
MAX_TOKENS = 256
OVERLAP = 32
# A question from the dataset whose answer's key words are only in its heading.
EXAMPLE_QUESTION = "w4-036"


def corpus_chunks(chunker):
    """[(doc_id, chunk)] for every page of the corpus."""
    return [(doc_id, chunk) for doc_id, text in corpus_pages().items() for chunk in chunker(text)]


def answer_ranks(chunks, questions):
    """{question id: rank (1 = best) of the first chunk holding the whole answer, or None}."""
    vectors = embed([chunk.embedding_text for _, chunk in chunks])
    question_vectors = embed([q["question"] for q in questions])
    ranks = {}
    for question, vector in zip(questions, question_vectors):
        ranks[question["id"]] = None
        for place, (row, _) in enumerate(top_k(vector, vectors, 20), 1):
            doc_id, chunk = chunks[row]
            if doc_id == question["doc_id"] and chunk.start <= question["start"] and question["end"] <= chunk.end:
                ranks[question["id"]] = place
                break
    return ranks


def recall_at(ranks, k):
    return sum(1 for rank in ranks.values() if rank is not None and rank <= k) / len(ranks)


def step_show_headers():
    """Show chunks of one page on its text, each labelled with the header it is embedded with."""
    page = corpus_pages()["install-linux"]
    print("1. Chunks of install-linux on the page; each label shows the chunk's header, which")
    print("   is embedded with the chunk but is not in its text:")
    chunks = header_chunks(page, TITLE, MAX_TOKENS, OVERLAP)
    view_chunks(page, chunks, first=1, limit=3)


def step_measure(questions, headed_chunks):
    print(f"\n2. Recall over the whole corpus ({len(questions)} questions, {MAX_TOKENS}-token chunks)")
    bare = answer_ranks(corpus_chunks(lambda t: rag6.markdown_chunks(t, MAX_TOKENS, OVERLAP)), questions)
    headed = answer_ranks(headed_chunks, questions)
    print(f"   {'chunks':<22} {'recall@1':>9} {'recall@5':>9}")
    for name, ranks in (("rag6, bare", bare), ("rag7, with headers", headed)):
        print(f"   {name:<22} {recall_at(ranks, 1):>9.3f} {recall_at(ranks, 5):>9.3f}")
    return bare, headed


def step_table_rows(questions, headed, headed_chunks):
    """Recall@5 by kind of question: tables kept whole, against a chunk per table row."""
    rowed_chunks = [(doc_id, chunk) for doc_id, text in corpus_pages().items()
                    for chunk in with_table_rows(text, [c for d, c in headed_chunks if d == doc_id], MAX_TOKENS)]
    rowed = answer_ranks(rowed_chunks, questions)
    print(f"\n4. A chunk per table row: {len(headed_chunks)} chunks become {len(rowed_chunks)}")
    print(f"   {'recall@5 of':<22} {'tables whole':>13} {'row chunks':>11}")
    for kind in ("table", "code", "all"):
        ids = {q["id"] for q in questions if kind in (q["kind"], "all")}
        whole = recall_at({i: headed[i] for i in ids}, 5)
        rows = recall_at({i: rowed[i] for i in ids}, 5)
        print(f"   {kind + ' questions':<22} {whole:>13.3f} {rows:>11.3f}")
    return rowed_chunks


# %% [markdown]
# ## 5. Tricky inputs
#
# The lab ends by checking `make_header` on headers worked out by hand (an
# empty title, an empty heading, several fields), and `header_chunks` on the
# course's `TRICKY_TEXTS` and on rag6's tricky Markdown documents with every
# line end, at budgets from 16 tokens up: rag6's promises must hold with the
# header counted in, and a few lines must carry the header given by hand. The
# first input that goes wrong is shown with the call that reproduces it.


# %%
TITLE_FOR_TRICKY_INPUTS = "Orbit docs"  # with a heading, it leaves 4 tokens or more of 16 for text
HEADER_SETTINGS = (
    dict(max_tokens=16, overlap=0), dict(max_tokens=24, overlap=4),
    dict(max_tokens=400, overlap=0),
)
# The front matter alone fits in 16 tokens, but not with its header: it must be flagged oversize.
WITH_FRONT_MATTER = '---\ntitle: Install\napplies_to: "2.x"\n---\n\n# Install\n\nUse apt.\n'
HEADERS_BY_HAND = {"applies_to": "Orbit docs (applies to 2.x)",
                   "Use apt.": "Orbit docs › Install (applies to 2.x)"}


MAKE_HEADER_CASES = [
    Case("an empty title", make_header, ("", ("Install",), {}), returns("Install")),
    Case("an empty heading and field", make_header, ("Docs", ("", "Usage"), {"edition": ""}),
         returns("Docs › Usage")),
    Case("a path and a field", make_header,
         ("Orbit docs", ("Install", "On Linux"), {"applies_to": "2.x"}),
         returns("Orbit docs › Install › On Linux (applies to 2.x)")),
    Case("two fields", make_header,
         ("Docs", (), {"applies_to": "2.4+", "edition": "enterprise"}),
         returns("Docs (applies to 2.4+; edition enterprise)")),
]


def header_cases():
    """Cases for make_header worked out by hand, then for header_chunks on tricky texts and
    documents (the front matter one with headers given by hand), smallest text first."""
    documents = [rag6.TrickyMarkdown(tricky.what, tricky.text) for tricky in TRICKY_TEXTS]
    documents += rag6.with_every_line_end(rag6.TRICKY_MARKDOWN)
    chunk_cases = [
        Case(document.what, header_chunks, (document.text, TITLE_FOR_TRICKY_INPUTS),
             partial(check_header_chunks, keep_whole=document.keep_whole, paths=document.paths),
             dict(setting))
        for document in documents
        for setting in HEADER_SETTINGS
    ]
    chunk_cases += [
        Case("front matter with a field for the header", header_chunks,
             (WITH_FRONT_MATTER, TITLE_FOR_TRICKY_INPUTS),
             partial(check_header_chunks, headers=HEADERS_BY_HAND), dict(setting))
        for setting in HEADER_SETTINGS
    ]
    chunk_cases.append(Case("plain prose under a heading, with overlap", header_chunks,
                            (PROSE_UNDER_A_HEADING, TITLE_FOR_TRICKY_INPUTS), shares_neighbours,
                            dict(max_tokens=48, overlap=8)))
    return MAKE_HEADER_CASES + sorted(chunk_cases, key=lambda case: len(case.args[0]))


def shares_neighbours(chunks, text, title, max_tokens, overlap):
    """Raise ValueError unless each chunk after the first reaches back into the one before: the
    overlap asked for, on plain prose under one heading, where nothing stops it."""
    check_header_chunks(chunks, text, title, max_tokens, overlap)
    for before, after in zip(chunks, chunks[1:]):
        if after.start >= before.end:
            raise ValueError(f"overlap={overlap}, yet the chunk at {after.start} shares nothing with the one before")


PROSE_UNDER_A_HEADING = "# Satellites\n\n" + "Each satellite dials out to the server and runs its jobs. " * 12


def check_header_chunks(chunks, text, title, max_tokens, overlap, headers=None, **markdown):
    """Raise ValueError unless `chunks` keep rag6's promises (rag6.check_markdown_chunks, with
    the header counted in the budget), each header starts with `title`, and each line of
    `headers` is only in chunks with the header given."""
    rag6.check_markdown_chunks(chunks, text, max_tokens, overlap, **markdown)
    for number, chunk in enumerate(chunks, 1):
        if not chunk.header.startswith(title):
            raise ValueError(f"chunk {number}'s header {chunk.header!r} does not start "
                             f"with {title!r}")
    for line, header in (headers or {}).items():
        start = text.index(line)
        for chunk in chunks:
            if chunk.start < start + len(line) and start < chunk.end and chunk.header != header:
                raise ValueError(f"the chunk holding {line!r} has the header {chunk.header!r}, "
                                 f"not {header!r}")


def main():
    questions = corpus_questions()
    step_show_headers()
    headed_chunks = corpus_chunks(lambda t: header_chunks(t, TITLE, MAX_TOKENS, OVERLAP))
    bare, headed = step_measure(questions, headed_chunks)

    example = next(q for q in questions if q["id"] == EXAMPLE_QUESTION)
    holder = next(c for doc_id, c in headed_chunks
                  if doc_id == example["doc_id"] and c.start <= example["start"] and example["end"] <= c.end)
    print(f"\n3. {example['question']!r}")
    print(f"   the answer's chunk has the header: {holder.header}")
    print(f"   rank of the answer's chunk: bare {bare[example['id']]}, with headers {headed[example['id']]}")
    rowed_chunks = step_table_rows(questions, headed, headed_chunks)

    print("\nInvariants")
    checks = Invariants("rag7")
    pages = corpus_pages()
    checks.check_chunks(  # the budget check counts header and text together
        "nothing lost, text an exact slice, header + text within budget (tables whole, and by rows)",
        [(pages[doc_id], [c for page, c in chunks if page == doc_id]) for doc_id in pages
         for chunks in (headed_chunks, rowed_chunks)],
        MAX_TOKENS,
    )
    checks.check(
        "a question answered under its heading is found only with headers",
        headed[example["id"]] == 1 and (bare[example["id"]] or 99) > 5,
        f"rank {headed[example['id']]} with headers, {bare[example['id']]} without",
    )
    checks.check_cases(
        "tricky inputs: headers as worked out by hand; rag6's promises kept, header counted in",
        header_cases(),
    )
    return checks.verdict()


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
