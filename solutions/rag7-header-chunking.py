# %% [markdown]
# # rag7: Header-prefixed chunks
#
# rag6's chunks know where they live: each carries its heading path. But the
# embedder never sees it. A chunk under `## On Debian and Ubuntu` that says
# "Add the repository key, then install the package" does not contain the
# word *Ubuntu*, so a user asking "how do I install on Ubuntu?" may never
# find it.
#
# The remedy this lab tries is small: give every chunk a **header** built from the document's
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
# You write `make_header` and `header_chunks`. Run as it is, the lab stops
# first at `header_chunks`, the second: its first step chunks the pages with
# it, and it reaches `make_header` only once it is written. A lab stops at the
# first TODO it reaches when run, wherever that is in the file.

# %%
import re
from dataclasses import replace
from functools import partial

from academy_llm import (
    check_text_and_window, corpus_pages, corpus_questions, count_tokens, embed, is_clean_cut,
    make_chunk, top_k,
)
from labkit import TRICKY_TEXTS, WIDE_PIECE_TEXTS, Case, Invariants, load_lab, returns, run_lab, view_chunks
from labkit.retrieval import say
from labkit.uncertainty import claim, mean_interval, paired_difference  # given: intervals (rag8 builds a bootstrap)
from labkit.explorer_widget import show_explorer  # given: the chunk explorer (last cell but one)
from labkit.notebook import in_notebook

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
    # BEGIN SOLUTION
    # hint 1: Build the one-line header embedded with every chunk of a section (title, heading
    # hint 1: path, then a few metadata fields), so that the embedder sees what a chunk is about
    # hint 1: even when its text never says it.
    # hint 2: Join the document's title and the section's headings with ' › ', leaving out empty
    # hint 2: parts. Then, if the metadata has fields with a value, write each as its name in words
    # hint 2: (underscores become spaces) followed by its value, separate them with '; ' and put
    # hint 2: them in parentheses after the path. No fields, no parentheses.
    # hint 3: Join the title and the section's headings with " › " (leave out empty ones). If
    # hint 3: metadata has fields with a value, append " (" + "; ".join(f"{key with _ as space}
    # hint 3: {value}") + ")".
    path = " › ".join(part for part in (title, *section) if part)
    fields = "; ".join(f"{key.replace('_', ' ')} {value}" for key, value in metadata.items() if value)
    return f"{path} ({fields})" if fields else path
    # END SOLUTION


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
# less room.
#
# A heading path can be long: real pages nest headings six deep, in scripts
# that take many tokens a word. The page's text is what matters, so a header
# takes half of `max_tokens` at most. A longer one keeps the title and the
# nearest headings, with "…" for the ones between (`Orbit docs › … › On
# Debian and Ubuntu`), and is cut short if even that is too long. No page
# is refused for its headings.


# %%
def header_chunks(text, title, max_tokens, overlap=0, metadata=None):
    """rag6's chunks, each with a header (title › headings (fields)) counted in max_tokens.

    Bad arguments raise as rag6's do, and a title that is not a str is a TypeError.
    """
    # BEGIN SOLUTION
    # hint 1: Chunk a Markdown page as rag6 does, but give every chunk the header of its section
    # hint 1: and keep header and text together within max_tokens, because the embedding model's
    # hint 1: limit applies to all it embeds.
    # hint 2: Check the arguments as before, and that the title is a string (a TypeError
    # hint 2: otherwise); an empty text has no chunks. When the caller gives no metadata, take the
    # hint 2: HEADER_FIELDS found in the page's front matter. Read the document once with rag6's
    # hint 2: read_document. The front-matter chunk, if there is one, gets a header of the
    # hint 2: title and the metadata (no heading), flagged oversize if the two exceed max_tokens.
    # hint 2: Each section then goes to the given section_with_header, with a header made of the
    # hint 2: title, that section's heading titles and the metadata.
    # hint 3: check_text_and_window(...) as before, and title must be a str (TypeError). "" gives
    # hint 3: []. metadata None means: the HEADER_FIELDS found in rag6.front_matter(text)[0].
    # hint 3: document = rag6.read_document(text, max_tokens, overlap); the
    # hint 3: front matter chunk (if any) gets make_header(title, (), metadata); then for each section
    # hint 3: call section_with_header(text, section, make_header(...), max_tokens, overlap,
    # hint 3: document).
    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")
    if not isinstance(title, str):
        raise TypeError(f"title must be a str, got {type(title).__name__}")
    if not text:
        return []
    if metadata is None:
        found = rag6.front_matter(text)[0]
        metadata = {key: found[key] for key in HEADER_FIELDS if key in found}
    document = rag6.read_document(text, max_tokens, overlap)
    chunks = []
    if document.body_start:
        header = make_header(title, (), metadata)
        chunk = replace(rag6.front_matter_chunk(text, document.body_start, max_tokens), header=header)
        chunks.append(replace(chunk, oversize=count_tokens(chunk.embedding_text) > max_tokens))
    for section in document.sections:
        header = make_header(title, tuple(t for _, t in section.path), metadata)
        chunks += section_with_header(text, section, header, max_tokens, overlap, document)
    return chunks
    # END SOLUTION


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
# (and rag8, by kind of question) measures whether this finds more answers to
# table questions, and what it may cost: many more small chunks compete for
# the top 5.


# %%
def with_table_rows(text, chunks, max_tokens):
    """`chunks`, with each chunk holding one table cut into a chunk per row (see row_chunks).

    With overlap, a chunk can repeat a table the chunk before already cut into rows. Its
    rows that start before the last chunk kept are left out, so each row starts one chunk
    and chunks stay in order; a piece that starts where that chunk does holds it, and
    takes its place.
    """
    result = []
    for chunk in chunks:
        rows = row_chunks(text, chunk, max_tokens)
        pieces = rows or [chunk]
        if result and (pieces[0].start < result[-1].start or rows and pieces[0].start == result[-1].start):
            last = result.pop()
            pieces = [piece for piece in pieces if piece.start >= last.start] or [
                make_chunk(text, last.start, chunk.end, section=chunk.section, kind=chunk.kind, header=chunk.header)]
            if pieces[0].start > last.start:  # it only began before `last`: `last` stays
                result.append(last)
        result += pieces
    return result


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
# The course's dataset is the Orbit documentation and its questions, each
# labelled with the exact span of its answer. We chunk every page with rag6
# (bare) and rag7 (with headers) at the same budget, search all chunks of all
# pages for each question, and count how often a chunk holding the whole
# answer is first (recall@1) or among the top 5 (recall@5).
#
# Each recall comes with its 95% interval, the mean plus or minus 1.96
# standard errors (given in `labkit/uncertainty.py`; rag8 builds a bootstrap),
# and the difference with the interval of the per-question differences. Whether headers pay is what that
# interval says: the lab prints the sentence it supports, and where it holds
# 0, that this data does not show a difference. Step 4 does the same for
# rag7's option of a chunk per table row, by kind of question.

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


def found_at(ranks, k, ids):
    """1.0 for each question of `ids` whose answer is in the top k, else 0.0: per question, for intervals."""
    return [1.0 if ranks[i] is not None and ranks[i] <= k else 0.0 for i in ids]


def compared(before, after, k, ids):
    """(recall of `before`, of `after`, after minus before) at k over `ids`, each with its interval."""
    old, new = found_at(before, k, ids), found_at(after, k, ids)
    return mean_interval(old), mean_interval(new), paired_difference(old, new)


def step_show_headers():
    """Show chunks of one page on its text, each labelled with the header it is embedded with."""
    page = corpus_pages()["install-linux"]
    print("1. Chunks of install-linux on the page; each label shows the chunk's header, which")
    print("   is embedded with the chunk but is not in its text:")
    chunks = header_chunks(page, TITLE, MAX_TOKENS, OVERLAP)
    view_chunks(page, chunks, first=1, limit=3)


def step_measure(questions, headed_chunks):
    """Recall@1 and recall@5 over the corpus, bare chunks against headed ones, with intervals."""
    print(f"\n2. Recall over the whole corpus ({len(questions)} questions, {MAX_TOKENS}-token chunks);"
          " [low, high]: a 95% interval")
    bare = answer_ranks(corpus_chunks(lambda t: rag6.markdown_chunks(t, MAX_TOKENS, OVERLAP)), questions)
    headed = answer_ranks(headed_chunks, questions)
    ids = [q["id"] for q in questions]
    scores = {k: compared(bare, headed, k, ids) for k in (1, 5)}
    print(f"   {'chunks':<22} {'recall@1':>20} {'recall@5':>20}")
    for name, row in (("rag6, bare", 0), ("rag7, with headers", 1)):
        print(f"   {name:<22} " + " ".join(f"{scores[k][row].plain():>20}" for k in scores))
    print(f"   {'headers minus bare':<22} " + " ".join(f"{str(scores[k][2]):>20}" for k in scores)
          + "  (paired, question by question)")
    for k, (_, _, difference) in scores.items():
        say(f"At recall@{k}, {claim(difference, 'rag7', 'rag6')}.")
    return bare, headed


def step_table_rows(questions, headed, headed_chunks):
    """Recall@5 by kind of question: tables kept whole, against a chunk per table row, with intervals."""
    rowed_chunks = [(doc_id, chunk) for doc_id, text in corpus_pages().items()
                    for chunk in with_table_rows(text, [c for d, c in headed_chunks if d == doc_id], MAX_TOKENS)]
    rowed = answer_ranks(rowed_chunks, questions)
    print(f"\n4. A chunk per table row: {len(headed_chunks)} chunks become {len(rowed_chunks)}")
    print(f"   {'recall@5 of':<24} {'tables whole':>18} {'row chunks':>18} {'rows minus whole':>21}  what it shows")
    claims = {}
    for kind in ("table", "code", "all"):
        ids = [q["id"] for q in questions if kind in (q["kind"], "all")]
        whole, rows, difference = compared(headed, rowed, 5, ids)
        label = f"{kind} questions ({len(ids)})"
        print(f"   {label:<24} {whole.plain():>18} {rows.plain():>18} {str(difference):>21}  {difference.verdict()}")
        claims[kind] = f"On {kind} questions, {claim(difference, 'row chunks', 'tables whole')}."
    say(claims["table"])  # what the option is for; the last column says the same of the rest
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
# By budget: at 16 and 24 the section's header (13 tokens with its line break) is over half
# the budget, so it loses its metadata; the front matter's header stays whole, flagged oversize.
HEADERS_BY_HAND = {
    16: {"applies_to": "Orbit docs (applies to 2.x)", "Use apt.": "Orbit docs › Install"},
    24: {"applies_to": "Orbit docs (applies to 2.x)", "Use apt.": "Orbit docs › Install"},
    400: {"applies_to": "Orbit docs (applies to 2.x)", "Use apt.": "Orbit docs › Install (applies to 2.x)"},
}


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
    documents = [rag6.TrickyMarkdown(tricky.what, tricky.text) for tricky in TRICKY_TEXTS + WIDE_PIECE_TEXTS]
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
             partial(check_header_chunks, headers=HEADERS_BY_HAND[setting["max_tokens"]]), dict(setting))
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
    # Last, the public grading tests (tests/grading/test_rag7.py), run on your functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    checks.check_public_tests(globals())
    return checks.verdict()


# %% [markdown]
# ## Explore
#
# In a notebook, the cell below draws an explorer: choose a chunker, move
# `max_tokens` and `overlap`, and the page is chunked again and marked at the
# chunks' true offsets (text two chunks share in green). Beside it are the
# counts to watch: how many chunks, the tokens each holds against the budget,
# the code blocks, tables and lists no chunk holds whole (read by a real
# Markdown parser, not by the chunker), and the rank of the chunk holding the
# lab's answer for its question. The question is the lab's example, answered
# under its heading: compare its rank with and without headers. Until a TODO
# is done, it says which one to finish first. Run as a script, the lab skips
# it.

# %%
if __name__ == "__main__" and in_notebook():  # in a notebook only, not when a later lab loads this one
    example = next(q for q in corpus_questions() if q["id"] == EXAMPLE_QUESTION)
    show_explorer(corpus_pages()[example["doc_id"]], {
        "with headers": lambda text, max_tokens, overlap: header_chunks(text, TITLE, max_tokens, overlap),
        "headers + table rows": lambda text, max_tokens, overlap: with_table_rows(
            text, header_chunks(text, TITLE, max_tokens, overlap), max_tokens),
        "markdown (rag6)": rag6.markdown_chunks,
    }, example["question"], example["answer"])


# %%
if __name__ == "__main__":
    run_lab(main)
