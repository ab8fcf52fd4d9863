"""The corpus of real-world Markdown in benchmarks/real-markdown, and what a chunking of it must satisfy.

    from real_markdown import corpus_files, read_text, problems
    for path in corpus_files():
        text = read_text(path)
        print(path, problems(text, rag6.robust_markdown_chunks(text, 128, 16), 128))

`problems` makes each check on its own, so one failure does not hide another;
each failing check gives one line, "kind: what, where", its kind one of KINDS.
Fences, tables and indented code blocks are found by a real Markdown parser
(markdown_oracle), not by the course's own scanner. Nothing here needs pytest.
"""

from pathlib import Path

import academy_llm
from markdown_oracle import FRONT_MATTER, cuts, indented_code_cuts

CORPUS = Path(__file__).resolve().parent.parent / "benchmarks" / "real-markdown"
SUFFIXES = (".md", ".mdx", ".markdown")
# A chunk may be over budget only if it holds one block that must stay whole.
OVERSIZE_KINDS = ("code", "table", "front_matter")
KINDS = ("not a slice", "lost text", "order", "over budget", "oversize kind",
         "fence/table cut", "indented code cut", "front matter cut")


def corpus_files():
    """The corpus's Markdown and MDX files, sorted (its licences, README and SOURCES.json aside)."""
    return sorted(
        path for path in CORPUS.rglob("*")
        if path.is_file() and path.suffix.lower() in SUFFIXES and path.parent != CORPUS
    )


def read_text(path):
    """The file's text exactly as stored: UTF-8, with its line ends (\\r\\n stays) and any byte order mark."""
    return Path(path).read_bytes().decode("utf-8")


def front_matter_region(text):
    """(start, end) of a leading `---` front-matter block, `end` before its last line break; None if none."""
    match = FRONT_MATTER.match(text)
    if not match:
        return None
    return 0, len(match.group().rstrip("\r\n"))


def _first(found, describe):
    """"n times, first: ..." for a non-empty list of findings."""
    more = f" ({len(found)} in all)" if len(found) > 1 else ""
    return f"{describe(found[0])}{more}"


def problems(text, chunks, max_tokens):
    """One line for each check the chunks of `text` fail; [] if they pass them all.

    The budget counts what is embedded (`chunk.embedding_text`: the text, after
    any header a chunker adds), as academy_llm.check_budget does; for a chunk
    without a header that is `chunk.text`.
    """
    chunks = list(chunks)
    found = []

    bad = [(number, chunk) for number, chunk in enumerate(chunks, 1) if chunk.text != text[chunk.start:chunk.end]]
    if bad:
        found.append("not a slice: " + _first(
            bad, lambda item: f"chunk {item[0]} [{item[1].start}, {item[1].end}) is not text[start:end]"))

    try:
        academy_llm.check_lossless(text, chunks)
    except ValueError as error:
        message = str(error)
        if "in no chunk" in message:
            found.append(f"lost text: {message}")
        else:  # check_lossless stopped at a slice or order fault (reported on their own): look for lost text anyway
            lost = academy_llm.find_lost_text(text, chunks)
            if lost is not None:
                found.append(f"lost text: characters [{lost[0]}, {lost[1]}) are in no chunk")

    try:
        academy_llm.check_in_order(chunks)
    except ValueError as error:
        found.append(f"order: {error}")

    over = []
    wrong_kind = []
    for number, chunk in enumerate(chunks, 1):
        if chunk.oversize:
            if chunk.kind not in OVERSIZE_KINDS:
                wrong_kind.append((number, chunk))
            continue
        n_tokens = academy_llm.count_tokens(chunk.embedding_text)
        if n_tokens > max_tokens:
            over.append((number, chunk, n_tokens))
    if over:
        found.append("over budget: " + _first(
            over, lambda item: f"chunk {item[0]} [{item[1].start}, {item[1].end}) has {item[2]} tokens > {max_tokens}"))
    if wrong_kind:
        found.append("oversize kind: " + _first(
            wrong_kind, lambda item: f"chunk {item[0]} [{item[1].start}, {item[1].end}) is oversize "
                                     f"but of kind {item[1].kind!r}"))

    inside = cuts(text, chunks)
    if inside:
        found.append("fence/table cut: " + _first(
            inside, lambda cut: f"boundary at {cut[3]} inside the {cut[0]} at [{cut[1]}, {cut[2]})"))

    inside = indented_code_cuts(text, chunks)
    if inside:
        found.append("indented code cut: " + _first(
            inside, lambda cut: f"boundary at {cut[3]} inside the indented code at [{cut[1]}, {cut[2]})"))

    region = front_matter_region(text)
    if region is not None:
        start, end = region
        inside = [position for chunk in chunks for position in (chunk.start, chunk.end) if start < position < end]
        if inside:
            found.append("front matter cut: " + _first(
                inside, lambda position: f"boundary at {position} inside the front matter at [{start}, {end})"))
    return found


def kind_of(problem):
    """The kind a line from `problems` is of ("lost text", ...)."""
    return problem.split(":", 1)[0]


# ---- the corpus run, shared by the tests and the report ---------------------------

SETTINGS = ((128, 0), (128, 16), (512, 0), (512, 64))  # (max_tokens, overlap)
LINE_ENDS = {"as stored": None, "CRLF": "\r\n", "CR": "\r"}
STRUCTURE = ("not a slice", "lost text", "order", "over budget", "oversize kind")  # what every chunker keeps


def with_line_ends(text, line_end):
    """`text` with every line end (\\r\\n, \\r or \\n) made `line_end`; as stored if None."""
    if line_end is None:
        return text
    return text.replace("\r\n", "\n").replace("\r", "\n").replace("\n", line_end)


def chunkers(folder):
    """{name: chunk(text, max_tokens, overlap)} for the course's chunkers in `folder` (solutions/),
    each with the kinds of problem it answers for: rag5 does not read Markdown."""
    from labkit import load_lab

    rag5, rag6, rag7 = (load_lab(lab, folder) for lab in ("rag5", "rag6", "rag7"))
    return {
        "rag5": (rag5.recursive_chunks, STRUCTURE),
        "rag6": (lambda text, m, o: rag6.robust_markdown_chunks(text, max_tokens=m, overlap=o), KINDS),
        "rag7": (lambda text, m, o: rag7.header_chunks(text, "Docs", m, o), KINDS),
    }


def file_problems(path, folder, settings=SETTINGS, line_ends=tuple(LINE_ENDS)):
    """["file · chunker · setting · line ends: problem"] for one corpus file, every chunker,
    setting and line-end form; an exception is a problem too."""
    found = []
    stored = read_text(path)
    for line_end in line_ends:
        text = with_line_ends(stored, LINE_ENDS[line_end])
        for name, (chunk, answers_for) in chunkers(folder).items():
            for max_tokens, overlap in settings:
                where = f"{Path(path).relative_to(CORPUS)} · {name} · {max_tokens}/{overlap} · {line_end}"
                try:
                    chunks = chunk(text, max_tokens, overlap)
                except Exception as error:  # noqa: BLE001 (a chunker must never raise on a real page)
                    found.append(f"{where}: raised {type(error).__name__}: {str(error)[:200]}")
                    continue
                found += [f"{where}: {problem}" for problem in problems(text, chunks, max_tokens)
                          if kind_of(problem) in answers_for]
    return found
