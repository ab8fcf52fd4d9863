"""Write what the docs quote from the labs, and the images of docs/, from the labs' own runs.

    python tools/make_docs.py            # rewrite the quoted lab output and stale images
    python tools/make_docs.py --check    # exit 1, listing what is stale; writes nothing
    python tools/make_docs.py --redraw   # redraw the images even if what they show is current

The pages in PAGES (README.md, benchmarks/README.md) quote what labs print
between markers, on a line of their own for a code block, or inside a
sentence for an inline quote:

    <!-- lab-output rag8: strategies -->
    ```text
    ...lines rag8 prints...
    ```
    <!-- /lab-output -->

    ... it is plain text: <!-- lab-output rag5: chunk-label -->`{#2 ...}`<!-- /lab-output -->

The name after the lab says what is quoted (QUOTES below); each quote is on
one of the pages, once, and may move from one page to another. The tool runs the
reference labs offline, as tests/offline.py runs them, in a folder of their
own, and puts what they printed between the markers.

The images carry a digest of what they show in a PNG text chunk
("Source"), so a stale image is found without comparing pixels:
docs/chunk-sizes.png is the size plot rag6 saves (labkit.plots.figure_png
writes its digest), and docs/chunk-view.png is the HTML chunk view of rag5's
step 4 as headless Chromium draws it, marked with the sha256 of the same view
in plain text, as rag5 prints it. docs/explorer.png is the chunk explorer of
rag5's notebook as a page with no kernel draws it, marked with the sha256 of its
data and its script. Drawing them needs chromium, chromedriver and selenium;
checking them does not. tests/test_labs.py checks all of this against
its own runs of the labs, with the functions here.
"""

import argparse
import hashlib
import importlib.util
import json
import re
import shutil
import sys
import tempfile
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import labkit
import labkit.plots
import labkit.view

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
# The pages that quote the labs. A quote may sit on any of them; each quote of QUOTES is on one.
PAGES = (README, ROOT / "benchmarks" / "README.md", ROOT / "tools" / "grading" / "handout" / "README.md")
CHUNK_SIZES = ROOT / "docs" / "chunk-sizes.png"
CHUNK_VIEW = ROOT / "docs" / "chunk-view.png"
EXPLORER = ROOT / "docs" / "explorer.png"  # rag5's notebook explorer, as its HTML export draws it
RAG6_PLOT = "rag6-chunk-sizes.png"  # where rag6 saves its plot, in the folder it runs from
VIEW_LIMIT = 3  # rag5's step 4 shows its first three chunks: view_chunks(page, chunks, limit=3)

BLOCK = re.compile(r"<!-- lab-output (rag\d+(?:-stub)?): ([\w-]+) -->(.*?)<!-- /lab-output -->", re.S)
STUB = "-stub"  # "rag4-stub": the student's lab in labs/, run as a student first runs it
# A plain view as view_chunks prints it: its caption, up to the next step of the lab.
PRINTED_VIEW = re.compile(
    r"^chunks? \d+(?:-\d+)? of \d+, characters .*?(?=\n\n\d+\. )", re.M | re.S
)
STEP_NUMBER = re.compile(r"^\d+\. ")  # how a lab's step heading begins: "2. "
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# No network here or in CI, no first-run screens (tests/test_notebooks.py starts it so too).
CHROMIUM_FLAGS = (
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--window-size=1200,1400",
)
VIEW_PAGE = (
    '<!DOCTYPE html><html><head><meta charset="utf-8"><title>chunk view</title></head>'
    '<body style="max-width:1000px;margin:12px">{view}</body></html>'
)


class DocsError(Exception):
    """Something the docs cannot be made from; the message says what, in one line."""


# ---- what the pages quote ----------------------------------------------------------


@dataclass(frozen=True)
class Quote:
    """Something a lab prints that a page quotes, and how the page shows it."""

    lab: str
    name: str
    extract: Callable[[str], str]  # the quoted text, from all the lab printed
    inline: bool = False  # `code` inside a sentence, or a code block of its own
    absent_when: str = ""  # what the lab prints when it lacks the data this quote needs

    def absent(self, stdout: str) -> str:
        """The line in which the lab said it could not print this quote ('' if it did not)."""
        if self.absent_when:
            for line in stdout.splitlines():
                if self.absent_when in line:
                    return line.strip()
        return ""

    def content(self, stdout: str) -> str:
        """What a page holds between this quote's markers."""
        text = self.extract(stdout)
        return f"`{text}`" if self.inline else f"\n```text\n{text}\n```\n"


def printed_view(stdout: str) -> str:
    """The plain chunk view rag5 prints in its step 4, exactly as view_chunks wrote it."""
    match = PRINTED_VIEW.search(stdout)
    if not match:
        raise DocsError("rag5 printed no chunk view ('chunks 1-3 of ...') before a next step")
    return match.group()


def printed_mark(pattern: str) -> Callable[[str], str]:
    """An extractor of the first mark of rag5's printed view that matches `pattern`."""

    def extract(stdout: str) -> str:
        match = re.search(pattern, printed_view(stdout))
        if not match:
            raise DocsError(f"rag5's printed chunk view has no mark like {pattern!r}")
        return match.group()

    return extract


def printed_line(pattern: str) -> Callable[[str], str]:
    """An extractor of the first line a lab prints that matches `pattern` (a generated sentence)."""

    def extract(stdout: str) -> str:
        match = re.search(pattern, stdout, re.M)
        if not match:
            raise DocsError(f"the lab printed no line like {pattern!r}")
        return match.group().strip()

    return extract


@dataclass(frozen=True)
class Table:
    """Lines of a table a lab prints under a step's heading ('2. ...'), to quote as printed.

    A step is found by its heading's words, not its number, and quoted
    without the number: a lab that gains a step leaves the pages as they were.
    The heading and the column header are always quoted, with the `rows` and
    the `notes` (lines under the table) that match. A table with a column of
    timings is quoted up to that column (`cut_at`, its name): times differ
    from run to run, and a quote must be the same on every run.
    """

    heading: str  # a regular expression for a heading's words, after its step number
    rows: str  # a regular expression matched at the start of each row to quote
    notes: str = ""
    cut_at: str = ""

    def __call__(self, stdout: str) -> str:
        sections = printed_sections(stdout, self.heading)
        if not sections:
            raise DocsError(f"the lab printed no step headed {self.heading!r}")
        return "\n\n".join(self.quoted(section) for section in sections)

    def quoted(self, section: list[str]) -> str:
        """One section's heading, column header, and the rows and notes that match."""
        heading, header, *body = section
        width = header.find(self.cut_at) if self.cut_at else len(header)
        if width < 0:
            raise DocsError(f"the table under {heading!r} has no column {self.cut_at!r}")
        lines = [STEP_NUMBER.sub("", heading), header[:width]]
        for line in body:
            if re.match(self.rows, line):
                lines.append(line[:width] if self.cut_at else line)
            elif self.notes and re.match(self.notes, line):
                lines.append(line)
        return "\n".join(line.rstrip() for line in lines)


def printed_sections(stdout: str, heading: str) -> list[list[str]]:
    """Each step whose heading's words match `heading`, and the lines under it up to a blank."""
    sections, current = [], None
    for line in stdout.splitlines() + [""]:
        step = STEP_NUMBER.match(line)
        if current is None and step and re.match(heading, line[step.end() :]):
            current = [line]
        elif current is not None and line.strip():
            current.append(line)
        elif current is not None:
            sections.append(current)
            current = None
    return sections


def printed_todo(stdout: str) -> tuple[str, str]:
    """(the TODO's message, its '-> fill in' line) where an unfinished lab stops."""
    lines = stdout.splitlines()
    for number, line in enumerate(lines[:-1]):
        if line.startswith("TODO(") and lines[number + 1].strip().startswith("-> fill in"):
            return line, lines[number + 1]
    raise DocsError("the stub printed no TODO followed by its '-> fill in' line")


def first_todo(stdout: str) -> str:
    """The TODO where rag4's stub stops, its goal cut after the first clause, and where to write."""
    message, where = printed_todo(stdout)
    head, _, _ = message.partition(", ")
    _, more, rest = message.partition("More help:")
    return f"{head}, ... {more}{rest}\n{where}"


def fill_in(stdout: str) -> str:
    """'-> fill in rag4-chunking.py:59 in word_windows()': where rag4's stub says to write."""
    return printed_todo(stdout)[1].strip().split(", then")[0]


def notebook_fill_in(stdout: str) -> str:
    """'word_windows() in cell In[2], line 12': where rag4's student notebook, run top to bottom
    in a fresh kernel, says to write, found from where its script says to (rag4-chunking.py:59).

    The cell is the notebook's code cell that defines the function, numbered as a fresh kernel
    numbers the cells it runs (each code cell once, in order, from 1); the line is the script's,
    counted from that cell's first line. tests/test_notebooks.py checks it against a real run.
    """
    where = re.search(r"-> fill in (rag\d+-[\w-]+)\.py:(\d+) in (\w+)\(\)", printed_todo(stdout)[1])
    if not where:
        raise DocsError("the stub's '-> fill in' line names no script line and function")
    script, line, function = where.group(1), int(where.group(2)), where.group(3)
    notebook = json.loads((ROOT / "notebooks" / "labs" / f"{script}.ipynb").read_text(encoding="utf-8"))
    code = [cell for cell in notebook["cells"] if cell["cell_type"] == "code"]
    definition = f"def {function}("
    number = next((n for n, cell in enumerate(code, 1) if definition in "".join(cell["source"])), None)
    if number is None:
        raise DocsError(f"notebooks/labs/{script}.ipynb has no code cell that defines {function}()")
    cell_lines = "".join(code[number - 1]["source"]).splitlines()
    script_lines = (ROOT / "labs" / f"{script}.py").read_text(encoding="utf-8").splitlines()
    in_cell = next(i for i, text in enumerate(cell_lines) if text.startswith(definition))
    in_script = next(i for i, text in enumerate(script_lines) if text.startswith(definition))
    return f"{function}() in cell In[{number}], line {line - in_script + in_cell}"


# Rows of the three Markdown strategies, each name whole (numbers follow it).
MARKDOWN_ROWS = r"\s+(markdown|markdown \+ header|header \+ table rows)\s+\d"
QUOTES = (
    # Where rag4's stub stops: on the README, and where to write on the handout's.
    Quote("rag4-stub", "first-todo", first_todo),
    Quote("rag4-stub", "fill-in", fill_in, inline=True),
    Quote("rag4-stub", "notebook-fill-in", notebook_fill_in, inline=True),  # the same, in its notebook
    # The label of chunk 2, and the mark where the view stops, in rag5's step 4.
    Quote("rag5", "chunk-label", printed_mark(r"\{#2 \[[^{}]*\}"), inline=True),
    Quote("rag5", "view-stop", printed_mark(r"\{/#\d+ · [^{}]*\}"), inline=True),
    # rag8's scores of every strategy (and what word windows hold in tokens), and by kind for the Markdown ones.
    Quote("rag8", "strategies", Table(r"\d+ test questions", r"\s+\S")),
    Quote("rag8", "by-kind", Table(r"recall.* by kind of question", MARKDOWN_ROWS)),
    # rag8's headline recall with its interval, and each strategy's difference from the recommended one.
    Quote("rag8", "intervals",
          Table(r"recall.* with its 95% interval", r"\s+[a-z]", r"\s+(\d+ questions|A difference)")),
    # rag8's embedder dial: wordllama and minilm on the same chunks, by kind and by shared words, and what it shows.
    Quote("rag8", "embedders", Table(r"The embedder dial", r"\s")),
    # rag9's recall by kind beside rag5's and rag7's chunks, and what its intervals let it say.
    Quote("rag9", "orbit", Table(r"Over the corpus", r"\s+\S")),
    # rag11's recall by kind with intervals: words, meaning, both, beside rag7's chunks; every line under
    # the heading (the intervals, the paired differences, the sentences they support).
    Quote("rag11", "by-kind", Table(r"Recall within .* by kind", r"\s")),
)


# ---- the pages' blocks --------------------------------------------------------------


@dataclass(frozen=True)
class Block:
    """A quote on a page: its lab and name, and what it holds between its markers."""

    lab: str
    name: str
    content: str
    start: int  # where the content is on its page
    end: int
    page: str = "README.md"  # the page, from the repository's folder

    @property
    def marker(self) -> str:
        return f"<!-- lab-output {self.lab}: {self.name} -->"

    @property
    def quote(self) -> Quote:
        return next(q for q in QUOTES if (q.lab, q.name) == (self.lab, self.name))


def read_pages() -> dict[str, str]:
    """The text of each page of PAGES, by its path from the repository's folder."""
    return {str(path.relative_to(ROOT)): path.read_text(encoding="utf-8") for path in PAGES}


def page_blocks(text: str, page: str = "README.md") -> list[Block]:
    """One page's quotes, in order; each marker closed, each quote known and there once."""
    blocks = [
        Block(m.group(1), m.group(2), m.group(3), m.start(3), m.end(3), page)
        for m in BLOCK.finditer(text)
    ]
    if len(re.findall(r"<!-- lab-output rag", text)) != len(blocks):
        raise DocsError(f"{page} has a lab-output marker that no '<!-- /lab-output -->' closes")
    found = [(block.lab, block.name) for block in blocks]
    known = [(quote.lab, quote.name) for quote in QUOTES]
    for lab, name in found:
        if (lab, name) not in known:
            raise DocsError(f"{page} quotes '{lab}: {name}', unknown to tools/make_docs.py")
        if found.count((lab, name)) > 1:
            raise DocsError(f"{page} quotes '{lab}: {name}' twice")
    for block in blocks:
        line_start = text.rfind("\n", 0, block.start) + 1
        if block.quote.inline and text.startswith(block.marker, line_start):
            # Markdown reads a line that starts with '<!--' as HTML, quote and all.
            raise DocsError(f"{page}: {block.marker} is inline, so it must not start a line")
    return blocks


def quoted_blocks(pages: dict[str, str]) -> list[Block]:
    """The quotes of all pages (read_pages()), page by page; each quote of QUOTES on one, once."""
    blocks = [block for page, text in pages.items() for block in page_blocks(text, page)]
    for lab, name in [(quote.lab, quote.name) for quote in QUOTES]:
        on = [block.page for block in blocks if (block.lab, block.name) == (lab, name)]
        if not on:
            raise DocsError(f"no page has a '<!-- lab-output {lab}: {name} -->' block "
                            f"(pages: {', '.join(pages)})")
        if len(on) > 1:
            raise DocsError(f"'{lab}: {name}' is quoted on {' and '.join(on)}; quote it on one page")
    return blocks


@dataclass(frozen=True)
class Refresh:
    """A page with every quote as the labs print it now, and what changed or was kept."""

    text: str
    stale: list[str]
    kept: list[str]


def refresh_page(text: str, stdouts: dict[str, str], page: str = "README.md") -> Refresh:
    """Put what each lab printed (`stdouts`, by lab) between the page's markers."""
    parts, stale, kept, position = [], [], [], 0
    for block in page_blocks(text, page):
        stdout = stdouts[block.lab]
        absent = block.quote.absent(stdout)
        content = block.content if absent else block.quote.content(stdout)
        if absent:
            kept.append(f"{page}: {block.marker} kept as it is: {block.lab} printed {absent!r}")
        elif content != block.content:
            stale.append(f"{page}: {block.marker} differs from what {block.lab} prints")
        parts += [text[position : block.start], content]
        position = block.end
    return Refresh("".join(parts + [text[position:]]), stale, kept)


# ---- images that say what they show ---------------------------------------------------


def png_text(png: bytes) -> dict[str, str]:
    """The tEXt chunks of a PNG, keyword to text: where the images of docs/ say what they show."""
    if not png.startswith(PNG_SIGNATURE):
        raise DocsError("not a PNG file")
    texts, position = {}, len(PNG_SIGNATURE)
    while position + 8 <= len(png):
        length = int.from_bytes(png[position : position + 4], "big")
        kind = png[position + 4 : position + 8]
        if kind == b"tEXt":
            keyword, _, text = png[position + 8 : position + 8 + length].partition(b"\0")
            texts[keyword.decode("latin-1")] = text.decode("latin-1")
        position += 12 + length  # length, type, data, crc
    return texts


def with_png_text(png: bytes, keyword: str, text: str) -> bytes:
    """`png` with a tEXt chunk `keyword`: `text` right after its header chunk (IHDR)."""
    data = keyword.encode("latin-1") + b"\0" + text.encode("latin-1")
    chunk = b"tEXt" + data
    after_header = len(PNG_SIGNATURE) + 12 + 13  # IHDR: length, type, 13 bytes of data, crc
    added = len(data).to_bytes(4, "big") + chunk + zlib.crc32(chunk).to_bytes(4, "big")
    return png[:after_header] + added + png[after_header:]


def image_source(path: Path) -> str:
    """What an image says it shows (its "Source" text), '' for none or no file."""
    if not path.is_file():
        return ""
    return png_text(path.read_bytes()).get(labkit.plots.PNG_SOURCE_KEY, "")


def view_source(view: str) -> str:
    """What docs/chunk-view.png must say it shows: the sha256 of the view in plain text."""
    return f"chunk-view sha256:{hashlib.sha256(view.encode('utf-8')).hexdigest()}"


def stale_images(rag5_stdout: str, rag6_folder: Path) -> list[str]:
    """The images of docs/ that show something other than what the labs show now."""
    stale = []
    plot_source = image_source(rag6_folder / RAG6_PLOT)
    if not plot_source:
        raise DocsError(f"rag6 saved no {RAG6_PLOT} that says what it shows")
    if image_source(CHUNK_SIZES) != plot_source:
        stale.append(f"{CHUNK_SIZES.relative_to(ROOT)}: not the size plot rag6 saves now")
    if image_source(CHUNK_VIEW) != view_source(printed_view(rag5_stdout)):
        stale.append(f"{CHUNK_VIEW.relative_to(ROOT)}: not the chunk view rag5 prints now")
    if image_source(EXPLORER) != explorer_page()[1]:
        stale.append(f"{EXPLORER.relative_to(ROOT)}: not the explorer rag5's notebook draws now")
    return stale


def explorer_page() -> tuple[str, str]:
    """(HTML, Source) of rag5's notebook explorer: the same page, chunkers, question and answer as
    its explorer cell, on the precomputed grid an exported notebook carries."""
    from labkit import explorer_widget

    rag5 = labkit.load_lab("rag5", ROOT / "solutions")
    chunkers = {"recursive": rag5.recursive_chunks, "token windows (rag4)": rag5.rag4.token_windows}
    page, grid, explored = explorer_widget.precomputed(rag5.PAGE.read_text(encoding="utf-8"), chunkers,
                                                       rag5.QUESTION, rag5.FACT)
    shown = explorer_widget.static_payload(page, grid, explored) + explorer_widget.SCRIPT.read_text(encoding="utf-8")
    source = f"explorer sha256:{hashlib.sha256(shown.encode('utf-8')).hexdigest()}"
    return explorer_widget.static_html(page, grid, explored), source


@dataclass(frozen=True)
class ChunkView:
    """One chunk view in two forms: plain text (as a lab prints it) and HTML (to draw)."""

    plain: str
    html: str


def rag5_view(rag5_stdout: str) -> ChunkView:
    """rag5's step 4 view, its plain form checked against what rag5 printed.

    The image must show the view rag5 prints; if the lab shows other chunks
    now, VIEW_LIMIT here no longer matches it, and drawing stops.
    """
    rag5 = labkit.load_lab("rag5", ROOT / "solutions")
    page = rag5.PAGE.read_text(encoding="utf-8")
    chunks = rag5.recursive_chunks(page, rag5.MAX_TOKENS, rag5.OVERLAP)
    plain = labkit.view.chunks_as_text(page, chunks, limit=VIEW_LIMIT)
    if plain != printed_view(rag5_stdout):
        raise DocsError(
            f"rag5's step 4 prints a view other than its first {VIEW_LIMIT} chunks with overlap; "
            "make VIEW_LIMIT and rag5_view in tools/make_docs.py show what it prints"
        )
    return ChunkView(plain, labkit.view.chunks_as_html(page, chunks, limit=VIEW_LIMIT))


def missing_browser() -> str:
    """What drawing the chunk view lacks, in one line ('' when all is there)."""
    missing = [
        f"{program} (apt-get install {package})"
        for program, package in (("chromium", "chromium"), ("chromedriver", "chromium-driver"))
        if shutil.which(program) is None
    ]
    if importlib.util.find_spec("selenium") is None:
        missing.append("selenium (pip install selenium)")
    return ", ".join(missing)


def chromium(profile: Path):
    """Debian's chromium, headless and offline, driven through chromedriver (selenium)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = shutil.which("chromium")
    for flag in CHROMIUM_FLAGS + (f"--user-data-dir={profile}",):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=options)


def screenshot(html: str, selector: str = ".chunk-view") -> bytes:
    """The view (or what `selector` finds) as headless Chromium draws it on a page of its own, as a PNG."""
    from selenium.webdriver.common.by import By

    with tempfile.TemporaryDirectory() as scratch:
        page = Path(scratch) / "chunk-view.html"
        page.write_text(VIEW_PAGE.format(view=html), encoding="utf-8")
        driver = chromium(Path(scratch) / "profile")
        try:
            driver.get(page.as_uri())
            return driver.find_element(By.CSS_SELECTOR, selector).screenshot_as_png
        finally:
            driver.quit()


# ---- running the labs ------------------------------------------------------------------


def offline_runner():
    """tests/offline.py's run_offline: the labs run here as the tests run them."""
    spec = importlib.util.spec_from_file_location("offline", ROOT / "tests" / "offline.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run_offline


def run_labs(labs: list[str], scratch: Path) -> dict[str, str]:
    """What each reference lab prints, run offline in a folder of its own: scratch/rag5, ..."""
    run_offline = offline_runner()
    stdouts = {}
    for lab in labs:
        stub = lab.endswith(STUB)
        (solution,) = (ROOT / ("labs" if stub else "solutions")).glob(f"{lab.removesuffix(STUB)}-*.py")
        (scratch / lab).mkdir()
        began = time.perf_counter()
        result = run_offline(solution, scratch / lab)
        if result.returncode != (1 if stub else 0):  # a stub stops at its first TODO, with status 1
            tail = (result.stdout + result.stderr).strip().splitlines()[-1:]
            raise DocsError(f"{solution.name} failed (exit {result.returncode}): {' '.join(tail)}")
        print(f"  ran {lab} ({time.perf_counter() - began:.0f} s)", file=sys.stderr)
        stdouts[lab] = result.stdout + (result.stderr if stub else "")
    return stdouts


# ---- the tool ---------------------------------------------------------------------------


def write_images(rag5_stdout: str, rag6_folder: Path, redraw: bool) -> None:
    """Copy rag6's plot, draw rag5's view and its notebook's explorer into docs/, each only if stale (or `redraw`)."""
    if redraw or image_source(CHUNK_SIZES) != image_source(rag6_folder / RAG6_PLOT):
        shutil.copyfile(rag6_folder / RAG6_PLOT, CHUNK_SIZES)
        print(f"wrote {CHUNK_SIZES.relative_to(ROOT)}")
    if redraw or image_source(CHUNK_VIEW) != view_source(printed_view(rag5_stdout)):
        missing = missing_browser()
        if missing:
            raise DocsError(f"{CHUNK_VIEW.relative_to(ROOT)} needs redrawing, with {missing}")
        view = rag5_view(rag5_stdout)
        png = screenshot(view.html)
        source = view_source(view.plain)
        CHUNK_VIEW.write_bytes(with_png_text(png, labkit.plots.PNG_SOURCE_KEY, source))
        print(f"wrote {CHUNK_VIEW.relative_to(ROOT)}")
    html, source = explorer_page()
    if redraw or image_source(EXPLORER) != source:
        missing = missing_browser()
        if missing:
            raise DocsError(f"{EXPLORER.relative_to(ROOT)} needs redrawing, with {missing}")
        png = screenshot(html, ".chunk-explorer")
        EXPLORER.write_bytes(with_png_text(png, labkit.plots.PNG_SOURCE_KEY, source))
        print(f"wrote {EXPLORER.relative_to(ROOT)}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="exit 1, listing what is stale; write nothing")
    parser.add_argument("--redraw", action="store_true",
                        help="redraw the images even if what they show is current")
    args = parser.parse_args(argv)
    try:
        pages = read_pages()
        labs = sorted({block.lab for block in quoted_blocks(pages)} | {"rag5", "rag6"})
        with tempfile.TemporaryDirectory() as scratch:
            stdouts = run_labs(labs, Path(scratch))
            refreshes = {page: refresh_page(text, stdouts, page) for page, text in pages.items()}
            kept = [line for refresh in refreshes.values() for line in refresh.kept]
            stale = [line for refresh in refreshes.values() for line in refresh.stale]
            stale += stale_images(stdouts["rag5"], Path(scratch) / "rag6")
            current = f"{', '.join(pages)} and docs/ are current"
            print("\n".join(kept + (stale or [current])))
            if args.check:
                return 1 if stale else 0
            for page, refresh in refreshes.items():
                if refresh.text != pages[page]:
                    (ROOT / page).write_text(refresh.text, encoding="utf-8")
                    print(f"wrote {page}")
            write_images(stdouts["rag5"], Path(scratch) / "rag6", args.redraw)
    except DocsError as error:
        print(f"make_docs: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
