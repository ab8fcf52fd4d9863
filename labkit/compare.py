"""chunking-labs compare DOCS --questions QUESTIONS: the course's harness on a learner's own documents.

After the labs, the question a learner came with is about their own pages: which
chunking finds *their* answers? This runs rag8's measurement there:

1. DOCS, a folder of .md, .markdown, .mdx and .txt files (symlinked folders followed), is
   read exactly as the labs read a page (academy_llm.read_page): line ends, byte order mark
   and front matter kept, for rag6 to read. Every file left out is named with the reason:
   not UTF-8, unreadable, another kind of file, hidden, a symlink looping back.
2. QUESTIONS is JSON lines, {"question": ..., "answer": ..., "doc": optional}, the answer
   a quote. Its span is found in the text, whitespace allowed to differ (a line break
   where the quote has a space); a quote found nowhere or in several places is listed
   with its line and left out, so one bad line does not cost the others.
3. Every chunker chunks every document at every size (--sizes) and overlap (--overlaps):
   the course's (rag4-rag7, rag9) from solutions/ or from the learner's own labs (--labs),
   and the benchmark's peers (LangChain, semchunk, chonkie) where installed; rag10 and
   rag11 take part as retrievers. One chunking is held at a time, its chunks embedded as
   they come through the course's on-disk cache, so a second run embeds only the chunks
   it has not seen, and its vectors kept on disk; a document is read when its turn comes
   (Library), so the chunkers' memory grows with the largest document, not with the corpus
   (rag10 and rag11 index the whole corpus at once). Before they start, the run says about
   how long they will take.
4. Each question is scored as rag8 scores it, at equal reading cost: did the chunks
   retrieved within `--budget` tokens hold its answer whole? The table answers two
   questions apart, which retriever and which chunker: each row's recall with a bootstrap
   interval over the questions, and its difference from the best of its kind with a paired
   interval. The recommendation says what to do, and how many questions it would take to
   tell the leaders apart when these cannot; per-question.csv gives each question's recall
   by every method, and the run names the questions all miss and those one alone finds.

Without --questions it only chunks, and reports chunks, tokens and time per method.

    chunking-labs compare DOCS --questions QUESTIONS [--sizes 128,256,512] [--overlaps 1/8] [--out DIR]
    python -m labkit.compare DOCS --questions QUESTIONS
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import math
import os
import re
import sys
import time
from array import array
from fractions import Fraction
from pathlib import Path
from collections.abc import Mapping
from typing import Callable, NamedTuple

import numpy as np

from academy_llm import (
    COURSE_ROOT, DEFAULT_EMBEDDER, EMBEDDERS, check_exact_slices, count_tokens, describe_embedder, embed, read_page,
)
from labkit.loading import load_lab
from labkit.lessons.rag8 import within_budget  # rag8's reading budget: hits best first while they fit
from labkit.uncertainty import Interval

ROOT = COURSE_ROOT
SOLUTIONS = ROOT / "solutions"
PEERS_FILE = ROOT / "benchmarks" / "chunkers.py"  # the benchmark's peers, in a clone of the course
SUFFIXES = (".md", ".markdown", ".mdx", ".txt")
BUDGET = 1000  # tokens a question may read: rag8's equal reading cost
SIZE = 256  # the chunk size of the table, rag8's
SIZES = (128, 256, 512)  # chunk sizes of the table and the plot
OVERLAPS = ("1/8",)  # rag8's overlap: an eighth of the size
EMBED_BATCH = 256  # texts embedded at a time, so the progress bar moves
QUESTION_BLOCK = 16  # questions ranked at a time against every chunk or unit
PART_CHARACTERS = 1_000_000  # a document longer than this is chunked a part at a time (see parts)
RETRIEVER_BYTES = 140  # a learner's retrievers' peak per character of corpus (the lesson's index: 0.73 GB for 5.1 M)
RETRIEVER_WARNING = 10_000_000  # characters from which that memory is said before the run
SAMPLE_CHARACTERS = 40_000  # characters each chunker is timed on before the run, for its estimate
MEANINGFUL = 0.05  # the smallest difference in recall worth the questions to show it
LONG_RUN_SECONDS = 300  # a run estimated at this much CPU or more under minilm names the faster embedder


# --------------------------------------------------------------------------
# The documents
# --------------------------------------------------------------------------


class Library(Mapping):
    """{path under DOCS: text} read from the files when asked, not held: iterating the items gives one
    document's text at a time, so a run over a corpus holds its largest document, not all of them. The
    last text read is kept (the questions ask for a few documents again and again)."""

    def __init__(self, paths: dict, lengths: dict):
        self.paths, self.lengths = paths, lengths  # name -> Path, name -> characters
        self.last = (None, None)

    @property
    def characters(self) -> int:
        return sum(self.lengths.values())

    def __getitem__(self, name: str) -> str:
        if self.last[0] != name:
            self.last = (None, None)  # the text before goes first
            self.last = (name, read_page(self.paths[name]))
        return self.last[1]

    def __contains__(self, name) -> bool:
        return name in self.paths

    def __iter__(self):
        return iter(self.paths)

    def __len__(self) -> int:
        return len(self.paths)


class Pages(Mapping):
    """The pages a retriever searches, {page: text}: each document, or each part of one over PART_CHARACTERS
    (see parts) as "name#number", its text read through `texts` (a Library) when asked, not held. A
    retriever reads a page when it cuts it and when it hands a reader a parent, so a run holds the
    largest document, not the corpus (86.5 M characters of Markdown are 211 MB of Python text)."""

    def __init__(self, texts):
        self.texts, self.place = texts, {}  # page -> (document, start, end)
        for name in texts:
            for number, (offset, part) in enumerate(parts(texts[name])):
                self.place[name if offset == 0 else f"{name}#{number}"] = (name, offset, offset + len(part))

    def __getitem__(self, page: str) -> str:
        name, start, end = self.place[page]
        text = self.texts[name]
        return text if start == 0 and end == len(text) else text[start:end]

    def __contains__(self, page) -> bool:
        return page in self.place

    def __iter__(self):
        return iter(self.place)

    def __len__(self) -> int:
        return len(self.place)


def characters_of(texts) -> int:
    """The characters of every document: a Library knows them without reading its files again."""
    return texts.characters if isinstance(texts, Library) else sum(map(len, texts.values()))


class Documents(NamedTuple):
    """The readable documents (a Library: {path under DOCS: text}) and one line per file left out."""

    texts: Library
    problems: list


def read_documents(folder: Path) -> Documents:
    """Every .md/.markdown/.mdx/.txt file under `folder`, as the labs read a page; every other file named.

    Symlinked folders are followed (a loop back to a folder above is named, not entered).
    A file that cannot be read or is not UTF-8, a file of another kind, a hidden file or
    folder: each is left out with a line saying why, so nothing is dropped in silence.
    Each file is read once here to check it, and again when its text is needed (Library).
    """
    paths, lengths, problems = {}, {}, []
    found, skipped = _document_paths(folder)
    for path in found:
        name = path.relative_to(folder).as_posix()
        try:
            lengths[name] = len(read_page(path))
            paths[name] = path
        except UnicodeDecodeError as error:
            data = path.read_bytes()
            line = _line_number(data, error.start)
            problems.append(f"{name}: left out, byte 0x{data[error.start]:02x} on line {line} is not UTF-8; "
                            f"save the file as UTF-8")
        except OSError as error:
            problems.append(f"{name}: left out, it cannot be read ({error.strerror or error}); check that it is a "
                            f"readable file")
    return Documents(Library(paths, lengths), problems + skipped)


def _line_number(text, offset: int) -> int:
    """The line (from 1) of `offset` in a text or its bytes, whatever its line ends: \\n, \\r\\n or a lone \\r."""
    cr, lf, crlf = ("\r", "\n", "\r\n") if isinstance(text, str) else (b"\r", b"\n", b"\r\n")
    return text.count(lf, 0, offset) + text.count(cr, 0, offset) - text.count(crlf, 0, offset) + 1


def _document_paths(folder: Path) -> tuple:
    """([files to read], [a line per file or folder left out]), both sorted by path.

    The walk follows symlinked folders, as a reader of the folder would; it keeps the real
    paths of the folders above, so a link back to one of them is a loop, named and not entered.
    """
    paths, skipped = [], []

    def walk(directory: Path, above: frozenset) -> None:
        try:
            entries = sorted(directory.iterdir())
        except OSError as error:
            skipped.append(f"{directory.relative_to(folder).as_posix()}/: left out, it cannot be listed "
                           f"({error.strerror or error}); check its permissions")
            return
        for entry in entries:
            name = entry.relative_to(folder).as_posix()
            if entry.name.startswith("."):
                kind = "folder" if entry.is_dir() else "file"
                skipped.append(f"{name}: left out, a hidden {kind} (.git, .venv...) is not read")
            elif entry.is_dir():
                real = entry.resolve()
                if real in above:
                    skipped.append(f"{name}: left out, a link back to {real} above it (a loop); its files are "
                                   f"read once, from there")
                else:
                    walk(entry, above | {real})
            elif entry.suffix.lower() not in SUFFIXES:
                skipped.append(f"{name}: left out, not a .md, .markdown, .mdx or .txt file")
            elif entry.is_file() or not entry.exists():
                paths.append(entry)  # a broken link too: its reading names the problem
            else:
                skipped.append(f"{name}: left out, not a regular file (a pipe or a device would never end)")

    walk(folder, frozenset({folder.resolve()}))
    return paths, sorted(skipped)


# --------------------------------------------------------------------------
# The questions: each answer a quote, located
# --------------------------------------------------------------------------


class Question(NamedTuple):
    """A usable question: its line in the file, its text, and its answer's span."""

    line: int
    question: str
    doc: str
    start: int
    end: int


class Questions(NamedTuple):
    """The usable questions, one line per question left out, and how many lines there were."""

    usable: list
    problems: list
    lines: int


def read_questions(path: Path, texts: dict) -> Questions:
    """The questions of a JSON-lines file whose answers are found in `texts`, and the reason for each other line.

    Every answer is looked for in one reading of the documents (a Library reads each file once)."""
    records, lines = [], 0
    with open(path, encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, 1):
            if line.strip():
                lines += 1
                records.append((number, _record_of(line, texts)))
    asked = [(record["answer"], record.get("doc")) for _, record in records if isinstance(record, dict)]
    places = iter(find_quotes(asked, texts))
    usable, problems = [], []
    for number, record in records:
        found = _question_of(number, record, next(places), texts) if isinstance(record, dict) else record
        if isinstance(found, Question):
            usable.append(found)
        else:
            problems.append(f"line {number}: {found}")
    return Questions(usable, problems, lines)


def _record_of(line: str, texts: dict):
    """The question's record (a dict with its question and answer) on one line, or why it cannot be used (a str)."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as error:
        return f'not JSON ({error.msg} at column {error.colno}); write {{"question": ..., "answer": ...}} on one line'
    if not isinstance(record, dict):
        return 'not a JSON object; write {"question": ..., "answer": ...}'
    for field in ("question", "answer"):
        if not isinstance(record.get(field), str) or not record[field].strip():
            return f'no "{field}" (a non-empty string)'
    doc = record.get("doc")
    if doc is not None and doc not in texts:
        return f'"doc" {doc!r} is not a document read in DOCS; give its path under DOCS, such as {next(iter(texts))!r}'
    return record


def _question_of(number: int, record: dict, places: list, texts: dict):
    """The Question of a record whose answer was found at `places`, or the reason it cannot be used (a str)."""
    doc = record.get("doc")
    where = f"in {doc}" if doc else "in DOCS"
    if not places:
        return f"the answer is found nowhere {where}; quote it exactly (only whitespace may differ)"
    if len(places) > 1:
        shown = ", ".join(f"{name} line {_line_number(texts[name], start)}" for name, start, _ in places)
        return (f"the answer is found in several places {where} ({shown}); lengthen the quote"
                + ("" if doc else ' or add a "doc" field'))
    name, start, end = places[0]
    return Question(number, record["question"], name, start, end)


def quote_pattern(quote: str) -> re.Pattern:
    r"""The quote as a regex: its words, escaped, with \s+ between: whitespace may differ, nothing else."""
    return re.compile(r"\s+".join(re.escape(word) for word in quote.split()))


def find_quote(quote: str, texts: dict) -> list:
    """[(doc, start, end)] of the quote's places, at most two (two already make it ambiguous).

    A second place is searched for from one character after the first, so a quote that
    overlaps itself ("a a" in "a a a") is found twice.
    """
    return find_quotes([(quote, None)], texts)[0]


def find_quotes(quotes: list, texts: dict) -> list:
    """find_quote's places for each (quote, doc or None: anywhere) of `quotes`, in one pass over the texts."""
    patterns, places = [quote_pattern(quote) for quote, _ in quotes], [[] for _ in quotes]
    for name, text in texts.items():
        for pattern, (_, doc), found_at in zip(patterns, quotes, places):
            if len(found_at) == 2 or doc not in (None, name):
                continue
            found = pattern.search(text)
            while found and len(found_at) < 2:
                found_at.append((name, found.start(), found.end()))
                found = pattern.search(text, found.start() + 1)
    return places


# --------------------------------------------------------------------------
# The methods: the course's chunkers and retrievers, and the benchmark's peers
# --------------------------------------------------------------------------


class Method(NamedTuple):
    """One way to chunk (`chunk(text, size, overlap)`) or to retrieve (`search(texts, questions, budget)`)."""

    name: str
    chunk: Callable | None = None  # a chunker: chunk(text, size, overlap) -> [Chunk]
    search: Callable | None = None  # a retriever: search(pages, questions, budget) -> [[(page, start, end)]]
    units: Callable | None = None  # a retriever: units(pages) -> how many units it ranks (pages as searched)
    overlaps: bool = True  # False: a chunker with no overlap of its own (rag9's semantic cuts, chonkie)
    release: Callable | None = None  # a retriever: let go of the indexes its lab keeps, once every one has run
    whole: bool = False  # a retriever that takes every question at once (scoring a block at a time itself)


def course_methods(labs: Path, title: str, embedder: str, problems: list, scratch: Path | None = None) -> list:
    """The course's chunkers and retrievers from `labs`; a lab that does not load is left out with a line.
    The reference labs' retrievers search an index kept small (reference_retriever), its vectors in a file in
    `scratch` (the cache's folder; None: the system's temporary folder); a learner's run as written."""
    methods = []
    for lab, make in _COURSE.items():
        try:
            module = load_lab(lab, labs)
        except Exception as error:  # a learner's lab may not load: say so, compare the rest
            problems.append(f"{lab}: left out, it does not load from {labs} ({_one_line(error)})")
            continue
        if lab in REFERENCE_RETRIEVERS and is_reference(labs):
            methods.append(reference_retriever(lab, module, title, embedder, scratch))
        else:
            methods += make(module, title, embedder)
    return methods


def _retriever(name, module, build, title, embedder):
    """rag10 or rag11: its own search, at the question's budget, with the run's title and embedder;
    `build` is the index it searches (built once, kept by the lab), for the count of its units."""
    def search(pages, questions, budget):
        return module.search(pages, questions, budget, title=title, embedder=embedder)

    def release():  # the lab keeps each index it builds (rag11 reuses rag10's): a run needs them no more
        from labkit.lessons import rag10 as lesson10

        for kept in ("INDEXES", "HYBRIDS"):
            getattr(module, kept, {}).clear()
        lesson10.INDEXES.clear()  # where rag10's given build_index keeps them

    return [Method(name, search=search, units=lambda pages: len(build(pages, title, embedder).units),
                   release=release)]


REFERENCE_RETRIEVERS = {"rag10": "small to big (rag10)", "rag11": "hybrid search (rag11)"}


def is_reference(labs: Path) -> bool:
    """True when `labs` is the course's solutions/: its retrievers then run as reference_retriever."""
    return labs.resolve() == SOLUTIONS.resolve()


def reference_retriever(lab: str, module, title: str, embedder: str, scratch: Path | None = None) -> Method:
    """The reference rag10's or rag11's search, as its `search` runs it, over labkit.reference.retrievers'
    index: a page cut, embedded and counted into BM25 at a time, a unit's place in arrays, its vector on
    disk. The same spans as the lab's own search, in memory that grows with the units, not their texts."""
    from labkit.reference import retrievers

    make = retrievers.small_to_big_search if lab == "rag10" else retrievers.hybrid_search
    search, units, release = make(module, title, embedder, scratch)
    return Method(REFERENCE_RETRIEVERS[lab], search=search, units=units, release=release, whole=True)


_COURSE = {  # lab -> its methods, in the order of the course
    "rag4": lambda m, title, embedder: [Method("token windows (rag4)", chunk=m.token_windows)],
    "rag5": lambda m, title, embedder: [Method("recursive (rag5)", chunk=m.recursive_chunks)],
    "rag6": lambda m, title, embedder: [Method("markdown (rag6)", chunk=m.robust_markdown_chunks)],
    "rag7": lambda m, title, embedder: [
        Method("markdown + header (rag7)", chunk=lambda t, s, o: m.header_chunks(t, title, s, o)),
        Method("header + table rows (rag7)",
               chunk=lambda t, s, o: m.with_table_rows(t, m.header_chunks(t, title, s, o), s))],
    "rag9": lambda m, title, embedder: [Method("semantic (rag9)", overlaps=False,
                                               chunk=lambda t, s, o: m.semantic_chunks(t, s, embedder=embedder))],
    "rag10": lambda m, title, embedder: _retriever("small to big (rag10)", m, m.build_index, title, embedder),
    "rag11": lambda m, title, embedder: _retriever("hybrid search (rag11)", m, m.build_hybrid, title, embedder),
}

PEER_PACKAGES = {"langchain_text_splitters": "langchain-text-splitters", "semchunk": "semchunk",
                 "chonkie": "chonkie"}  # import name -> what pip installs


def peer_methods(title: str, problems: list) -> list:
    """The benchmark's peers that are installed, run as the benchmark runs them (benchmarks/chunkers.py,
    which a wheel carries in labkit/course/ as a clone has it); one line names those not installed."""
    import importlib.util

    missing = [package for module, package in PEER_PACKAGES.items() if importlib.util.find_spec(module) is None]
    if missing:
        problems.append(f"peers not installed, left out: {', '.join(missing)} (pip install {' '.join(missing)} "
                        f"to compare with them)")
    if len(missing) == len(PEER_PACKAGES):
        return []
    if not PEERS_FILE.is_file():
        problems.append(f"peers: left out, {PEERS_FILE} is missing from this copy of the course")
        return []
    spec = importlib.util.spec_from_file_location("chunking_labs_peers", PEERS_FILE)
    peers = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclasses look it up there
    spec.loader.exec_module(peers)
    methods = []
    for contender in peers.PEERS:
        def chunk(text, size, overlap, contender=contender):
            return contender.located(text, contender.run(text, size, overlap, title))
        try:
            chunk("A short check that the library is installed.", 64, 0)
        except ImportError:
            continue  # its library is among the missing, named above
        methods.append(Method(contender.name, chunk=chunk, overlaps=contender.has_overlap))
    return methods


def chosen(methods: list, wanted: str | None) -> list:
    """The methods whose name holds one of the comma-separated `wanted` words ("rag5,rag10"); all without."""
    if not wanted:
        return methods
    words = [word.strip().lower() for word in wanted.split(",") if word.strip()]
    return [method for method in methods if any(word in method.name.lower() for word in words)]


def _one_line(error: BaseException) -> str:
    """An error as one short line: its type and the first line of its message."""
    message = str(error).strip().splitlines()
    return f"{type(error).__name__}: {message[0][:200]}" if message else type(error).__name__


# --------------------------------------------------------------------------
# Progress and the embedding cache
# --------------------------------------------------------------------------


class Progress:
    """A progress bar on stderr counting work (characters, texts), with the time left: redrawn in
    place on a terminal, one closing line in a log."""

    def __init__(self, label: str, total: int, unit: str = "", stream=None):
        self.label, self.total, self.unit, self.done = label, max(total, 1), unit, 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.began = self.drawn = time.perf_counter()

    def advance(self, amount: int = 1) -> None:
        """Count `amount` more done; redraw at most ten times a second."""
        self.done += amount
        if self.live and (time.perf_counter() - self.drawn > 0.1 or self.done >= self.total):
            self.drawn = time.perf_counter()
            self.stream.write("\r" + self._line() + self._left())
            self.stream.flush()

    def close(self) -> None:
        """The finished bar, with the time it took, on a line of its own."""
        self.done = self.total
        took = f" in {time.perf_counter() - self.began:.1f} s\n"
        self.stream.write(("\r" if self.live else "") + self._line() + took)
        self.stream.flush()

    def _left(self) -> str:
        """The time left at the rate so far, once there is a rate to go by."""
        spent = time.perf_counter() - self.began
        if not self.done or spent < 1:
            return " " * 16
        left = spent * (self.total - self.done) / self.done
        return f", {left / 60:.0f} min left   " if left >= 90 else f", {left:.0f} s left    "

    def _line(self) -> str:
        filled = int(30 * min(self.done, self.total) / self.total)
        return (f"{self.label:<24} [{'#' * filled}{'.' * (30 - filled)}] {_count(self.done)}/{_count(self.total)}"
                + (f" {self.unit}" if self.unit else ""))


def _count(number: int) -> str:
    """A count as a bar shows it: 950, 12.3 k, 4.56 M."""
    if number >= 1_000_000:
        return f"{number / 1e6:.2f} M"
    return f"{number / 1e3:.1f} k" if number >= 10_000 else str(number)


class EmbeddingCache:
    """Unit vectors on disk, in the course's one embedding cache (labkit/openai_embedder.Cache: an sqlite
    file keyed by model and text, its schema versioned), so a second run embeds only what it has not seen.

    A second run with another size or budget meets mostly the same chunks (and the same
    questions): only the texts it has never embedded go to the embedder. The model is in
    the key, so vectors of two models never mix; the openai embedder's texts have the key its
    own cache gives them, so a text it has paid for is one row, found by both.
    """

    def __init__(self, folder: Path, embedder: str):
        from labkit import openai_embedder

        self.embedder, self.folder = embedder, folder
        self.model = _model_of(embedder)
        self.store = open_cache(folder / openai_embedder.CACHE_FILE)
        self.embedded = 0  # texts sent to the embedder by this run
        self.reused = 0  # texts this run found on disk, embedded by an earlier run
        self.sampling = False  # True while the estimate times a sample: nothing counted then...
        self.sampled = set()  # ...and the keys it embedded count as embedded when the run meets them

    def key(self, text: str) -> str:
        """The text's key: the openai embedder's own for its texts, else the sha256 of model and text."""
        from labkit import openai_embedder

        if self.embedder == "openai":
            return openai_embedder.cache_key(openai_embedder.settings(), text)
        return hashlib.sha256(f"{self.model}\n".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()

    def vectors(self, texts: list, label: str | None = None) -> np.ndarray:
        """A unit vector per text (a row each), from the cache or embedded now (with a bar when `label`)."""
        keys = [self.key(text) for text in texts]
        known = self.store.get(list(dict.fromkeys(keys)))
        if not self.sampling:
            early = [key for key in known if key in self.sampled]
            self.sampled.difference_update(early)
            self.reused += len(known) - len(early)
            self.embedded += len(early)
        missing = {key: text for key, text in zip(keys, texts) if key not in known}
        if missing:
            progress = Progress(label, len(missing), "texts") if label else None
            items = list(missing.items())
            for first in range(0, len(items), EMBED_BATCH):
                batch = items[first:first + EMBED_BATCH]
                rows = embed([text for _, text in batch], self.embedder)
                self.store.put(self.model, [(key, row) for (key, _), row in zip(batch, rows)])
                known.update((key, row) for (key, _), row in zip(batch, rows))
                if progress:
                    progress.advance(len(batch))
            if progress:
                progress.close()
            if self.sampling:
                self.sampled.update(missing)
            else:
                self.embedded += len(missing)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        matrix = np.stack([known[key] for key in keys]).astype(np.float32)
        if self.embedder != "openai":
            return matrix  # embed()'s unit rows, as stored
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)  # the openai embedder keeps the server's rows
        return matrix / np.where(norms == 0, 1, norms)


def open_cache(path: Path):
    """The cache at `path`; one it cannot read (damaged, an older layout, another program's file) is set
    aside with one line on stderr and a new one started: a cache only saves time, it never stops a run."""
    from labkit import openai_embedder

    try:
        return openai_embedder.Cache(path)
    except openai_embedder.CacheError as error:
        if error.reason is None:
            raise  # the folder cannot be written: its line says so
        aside = path.with_name(f"{path.name}.unreadable-{time.strftime('%Y%m%d-%H%M%S')}")
        for suffix in ("", "-wal", "-shm"):
            if Path(f"{path}{suffix}").exists():
                os.replace(f"{path}{suffix}", f"{aside}{suffix}")
        print(f"  the embedding cache {path} cannot be read ({error.reason}); set aside as {aside.name}, "
              f"a new one is started", file=sys.stderr)
        return openai_embedder.Cache(path)


def _model_of(embedder: str) -> str:
    """What makes the embedder's vectors what they are: the openai model and server, wordllama's version,
    minilm's model."""
    if embedder == "wordllama":
        from importlib.metadata import version
        return f"wordllama {version('wordllama')}"
    if embedder == "minilm":  # the labs' own key for it: a text a lab embedded is found here, and the reverse
        from labkit import minilm
        return minilm.CACHE_MODEL
    return describe_embedder(embedder)


def default_cache() -> Path:
    """The course's cache folder ($ACADEMY_CACHE_DIR, else ~/.cache/chunking-labs or the platform's own):
    shared by every run, whatever its --out, and by the openai embedder."""
    from labkit import openai_embedder

    return openai_embedder.course_cache_dir()


# --------------------------------------------------------------------------
# Chunking and scoring, as rag8 scores
# --------------------------------------------------------------------------


def parts(text: str, limit: int | None = None):
    """(offset, part) one at a time: a document over `limit` characters cut before top-level headings
    (a line "# ..." after a blank line, outside a code fence), each part at most `limit` where the
    headings allow.

    A chunker holds a document's tokens, offsets and chunks at once: on a 30 MB file that is
    gigabytes. A top-level heading starts a new section for every chunker that reads headings (its
    heading path starts again there), so cutting before one changes no such chunk; a window that
    would have spanned the cut ends at it. Memory then grows with the largest part.
    """
    limit = limit or PART_CHARACTERS
    starts = [0] if len(text) <= limit else _part_starts(text, limit)
    for first, end in zip(starts, starts[1:] + [len(text)]):
        yield first, text[first:end]


def _part_starts(text: str, limit: int) -> list:
    """Where the parts of a long text start: the last top-level heading before each part would
    outgrow `limit` (a part with no such heading in it grows until one comes)."""
    cuts, fence = [], None
    for found in LINE_MARK.finditer(text):
        if found.group("fence"):
            marker = found.group("fence").strip()
            if fence is None:
                fence = marker
            elif _closes(fence, marker, text, found.end()):
                fence = None
        elif fence is None and found.start() and not text[text.rfind("\n", 0, found.start() - 1) + 1:
                                                          found.start()].strip():
            cuts.append(found.start())
    starts = [0]
    for previous, cut in zip([0] + cuts, cuts + [len(text)]):
        if cut - starts[-1] > limit and previous > starts[-1]:
            starts.append(previous)
    return starts


LINE_MARK = re.compile(r"^(?:(?P<fence>[ \t]*(?:`{3,}|~{3,}))|# )", re.MULTILINE)  # a fence, or a top-level heading


def _closes(fence: str, marker: str, text: str, end: int) -> bool:
    """Does a fence line `marker` (ending at `end`) close the open `fence`? Only a run of the same character,
    as long at least, alone on its line: "```" inside a "````" block is code (CommonMark)."""
    line_end = text.find("\n", end)
    return (marker[0] == fence[0] and len(marker) >= len(fence)
            and not text[end:len(text) if line_end < 0 else line_end].strip())


def chunks_of(method: Method, name: str, text: str, size: int, overlap: int):
    """(offset, chunk) for each chunk of a document, part by part (see parts), each checked to be the
    slice it claims: chunk.start + offset is its start in the document. A ValueError naming the document."""
    for offset, part in parts(text):
        try:
            found = method.chunk(part, size, overlap)
            check_exact_slices(part, found)
        except Exception as error:
            raise ValueError(f"on {name} at {size} tokens: {_one_line(error)}") from error
        for chunk in found:
            yield offset, chunk


class Vectors:
    """A chunking's unit vectors, float32, in a file of their own beside the cache, a block of rows read at
    a time: memory holds a block, whatever the corpus (30 MB of Markdown at 128 tokens is 1 GB of vectors
    in a minilm run). The file goes when the object is closed or collected."""

    ROWS = 16_384  # rows read at a time: 16 MB of minilm's 384 dimensions

    def __init__(self, folder: Path):
        import tempfile

        self.file = tempfile.TemporaryFile(dir=folder, prefix="compare-vectors-")
        self.rows, self.dimensions = 0, None

    def append(self, matrix: np.ndarray) -> None:
        """Add rows (float32) at the end of the file."""
        matrix = np.ascontiguousarray(matrix, dtype=np.float32)
        if not len(matrix):
            return
        self.dimensions = self.dimensions or matrix.shape[1]
        self.file.write(matrix.tobytes())
        self.rows += len(matrix)

    def blocks(self):
        """(first row, matrix) for each block of ROWS rows, in order."""
        self.file.flush()
        for first in range(0, self.rows, self.ROWS):
            count = min(self.ROWS, self.rows - first)
            self.file.seek(first * self.dimensions * 4)
            matrix = np.frombuffer(self.file.read(count * self.dimensions * 4), dtype=np.float32)
            yield first, matrix.reshape(count, self.dimensions)

    def close(self) -> None:
        self.file.close()


class Spans(NamedTuple):
    """One chunking of every document, kept small: a row per chunk (document number, start, end, tokens)
    and its unit vector on disk (Vectors); the chunks' texts are not kept."""

    rows: np.ndarray  # int64, (chunks, 4)
    vectors: Vectors  # a row per chunk
    seconds: float  # chunking and embedding


class Scored(NamedTuple):
    """One method at one size and overlap: each question's recall within the budget and tokens read."""

    method: str
    size: int | None  # None: a retriever, with sizes of its own
    overlap: int | None
    recall: np.ndarray  # a score per question, in the questions' order
    tokens: np.ndarray  # tokens handed to the reader, per question
    chunks: int  # chunks in the index (a retriever: the units it ranks)

    @property
    def setting(self) -> str:
        """The method and where it was measured, as the summary and per-question.csv name it."""
        return self.method if self.size is None else f"{self.method} {self.size}/{self.overlap}"


def chunk_and_embed(method: Method, texts: dict, size: int, overlap: int, cache, progress: Progress) -> Spans:
    """Chunk document after document, embedding as it goes: memory holds one part's chunks (see parts),
    never the texts of a whole corpus's, and the vectors go to disk (Vectors). A ValueError (with the
    document) if the chunker fails or gives a chunk that is not the slice it claims: a comparison must
    rest on true offsets."""
    rows, vectors, pending, began = array("q"), Vectors(cache.folder), [], time.perf_counter()
    try:
        for number, (name, text) in enumerate(texts.items()):
            for offset, chunk in chunks_of(method, name, text, size, overlap):
                rows.extend((number, offset + chunk.start, offset + chunk.end, chunk.n_tokens))
                pending.append(chunk.embedding_text)
                if len(pending) == EMBED_BATCH:
                    vectors.append(cache.vectors(pending))
                    pending = []
            progress.advance(len(text))
        vectors.append(cache.vectors(pending))
    except BaseException:
        vectors.close()
        raise
    return Spans(np.frombuffer(rows, dtype=np.int64).reshape(-1, 4), vectors, time.perf_counter() - began)


def best_rows(question_vectors: np.ndarray, vectors: Vectors, depth: int) -> list:
    """top_k_each's rows, read a block of vectors at a time: for each question, the `depth` rows of highest
    cosine, best first, a tie to the earlier row.

    Each block's scores join the best rows so far, kept in row order, so that a stable sort of the
    scores breaks every tie by row, as one sort of all the scores would."""
    questions = np.asarray(question_vectors, dtype=np.float32)
    kept_rows = np.zeros((len(questions), 0), dtype=np.int64)
    kept_scores = np.zeros((len(questions), 0), dtype=np.float32)
    for first, matrix in vectors.blocks():
        rows = np.concatenate([kept_rows, np.broadcast_to(np.arange(first, first + len(matrix)),
                                                          (len(questions), len(matrix)))], axis=1)
        scores = np.concatenate([kept_scores, questions @ matrix.T], axis=1)
        best = np.sort(np.argsort(-scores, axis=1, kind="stable")[:, :depth], axis=1)  # back in row order
        kept_rows, kept_scores = np.take_along_axis(rows, best, 1), np.take_along_axis(scores, best, 1)
    order = np.argsort(-kept_scores, axis=1, kind="stable")
    return np.take_along_axis(kept_rows, order, 1).tolist()


def score_spans(spans: Spans, names: list, questions: list, question_vectors, budget: int, rag8) -> tuple:
    """(recall, tokens read) per question, as rag8 scores: the chunks ranked by cosine, taken best first
    while they fit in `budget` tokens, and did they hold the answer whole?"""
    depth = min(len(spans.rows), budget + 1)  # every chunk is a token at least: no more can fit
    ranked = [top for first in range(0, len(questions), QUESTION_BLOCK)  # a block at a time: its scores stay small
              for top in (best_rows(question_vectors[first:first + QUESTION_BLOCK], spans.vectors, depth) if depth
                          else [[]] * len(questions[first:first + QUESTION_BLOCK]))]
    recall, tokens = [], []
    for question, top in zip(questions, ranked):
        rows = spans.rows[top].reshape(-1, 4)
        hits = [(names[doc], start, end) for doc, start, end, _ in rows.tolist()]
        kept = within_budget(hits, rows[:, 3].tolist(), budget)
        recall.append(rag8.recall_at_k(kept, [_gold(question)], len(kept)) if kept else 0.0)
        tokens.append(int(rows[:len(kept), 3].sum()))
    return np.array(recall), np.array(tokens)


def score_retriever(method: Method, texts: dict, questions: list, budget: int, rag8) -> Scored:
    """A retriever's own spans within the budget, scored by rag8's recall as a chunker's are.

    The questions go a block at a time: a retriever keeps a score per unit for each question
    it is asked at once, which on a big corpus outweighs its index. A `whole` retriever (the reference
    labs', labkit.reference.retrievers) takes them all and blocks them itself: its BM25 then keeps the
    postings of their terms alone."""
    asked = [question.question for question in questions]
    pages = Pages(texts)  # a big document's parts are pages of their own (see parts), placed back after
    place = pages.place
    block = max(len(asked), 1) if method.whole else QUESTION_BLOCK
    found = [[(place[page][0], place[page][1] + start, place[page][1] + end) for page, start, end in spans]
             for first in range(0, len(asked), block)
             for spans in method.search(pages, asked[first:first + block], budget)]
    recall = [rag8.recall_at_k(spans, [_gold(question)], len(spans)) if spans else 0.0
              for question, spans in zip(questions, found)]
    tokens = [sum(count_tokens(texts[doc][start:end]) for doc, start, end in spans) for spans in found]
    return Scored(method.name, None, None, np.array(recall), np.array(tokens), method.units(pages))


def _gold(question: Question) -> tuple:
    """The question's answer span as rag8's metrics take it."""
    return question.doc, question.start, question.end


# --------------------------------------------------------------------------
# The table, its intervals and the recommendation
# --------------------------------------------------------------------------


class Row(NamedTuple):
    """A line of the table: a method's recall and its difference from the best of its kind, with intervals."""

    method: str
    size: int | None
    overlap: int | None
    recall: object  # an Interval: the mean recall, low, high
    difference: object  # an Interval of (this method - the best of its kind); zero for the best itself
    chunks: int
    tokens: float  # mean tokens read per question
    scores: np.ndarray  # its recall per question, for the paired intervals across kinds

    @property
    def label(self) -> str:
        """'markdown (rag6) at 256 tokens, overlap 32': a setting as a sentence names it."""
        return self.method if self.size is None else f"{self.method} at {self.size} tokens, overlap {self.overlap}"


class Table(NamedTuple):
    """Two answers: which retriever, and which chunker; each ranked best first against its own best."""

    retrievers: list
    chunkers: list
    lead: object  # an Interval of (best retriever - best chunker), paired; None without both kinds
    clear_of_every_chunker: bool  # the best retriever's lead over every chunker setting leaves 0 out


def table_of(scored: list, rag8) -> Table:
    """The retrievers' rows and the chunkers' rows, each against the best of its own kind.
    Every interval is rag8's paired bootstrap (a mean's: its difference from 0)."""
    retrievers = ranked([s for s in scored if s.size is None], rag8)
    chunkers = ranked([s for s in scored if s.size is not None], rag8)
    lead, clear = None, False
    if retrievers and chunkers:
        best = retrievers[0].scores
        lead = bootstrap(rag8, chunkers[0].scores, best)
        clear = all(bootstrap(rag8, row.scores, best).low > 0 for row in chunkers)
    return Table(retrievers, chunkers, lead, clear)


def ranked(scored: list, rag8) -> list:
    """Rows best first: by recall, then by fewer tokens read (the same answers, cheaper)."""
    if not scored:
        return []
    ordered = sorted(scored, key=lambda s: (-s.recall.mean(), s.tokens.mean(), s.method, s.size or 0,
                                            s.overlap or 0))
    best = ordered[0]
    return [Row(s.method, s.size, s.overlap, bootstrap(rag8, [0.0] * len(s.recall), s.recall),
                bootstrap(rag8, best.recall, s.recall),
                s.chunks, float(s.tokens.mean()), s.recall) for s in ordered]


def bootstrap(rag8, a, b) -> Interval:
    """rag8's paired_bootstrap of mean(b - a), as labkit's Interval (its str, verdict and plain)."""
    result = rag8.paired_bootstrap([float(x) for x in a], [float(x) for x in b])
    return Interval(float(result.estimate), float(result.low), float(result.high), float(result.level))


def recommendation(table: Table, budget: int) -> str:
    """What to do, in a sentence a practitioner can act on, then what the questions cannot tell.

    Retrievers and chunkers answer different needs (a pipeline may take plain chunks only),
    so each kind gets its own verdict; a retriever ahead of every chunker, with every
    interval clear of 0, is said first, since that is the more useful thing to know.
    """
    chunker, chunker_doubt = _verdict(table.chunkers, "chunker", budget)
    retriever, retriever_doubt = _verdict(table.retrievers, "retriever", budget)
    count = len((table.chunkers or table.retrievers)[0].scores)
    few = [f"Only {count} question{'s' if count != 1 else ''}: too few to tell methods apart; write 30 or more."
           ] if count < 10 else []
    if table.chunkers and table.retrievers and table.clear_of_every_chunker:
        best = table.retrievers[0]
        first = (f"Retrieve with {best.method}: it finds more answers within {budget:,} tokens than every chunker, "
                 f"each interval clear of 0 ({_difference(table.lead)} over the best chunker). Where a pipeline "
                 f"takes plain chunks: {chunker}")
    elif table.chunkers and table.retrievers:
        first = (f"Chunkers: {chunker} Retrievers: {retriever} The best retriever against the best chunker: "
                 f"{_difference(table.lead)}, {table.lead.verdict('ahead', 'behind')}.")
    else:
        first = chunker or retriever
        first = first[0].upper() + first[1:]
    return " ".join(few + [first] + [doubt for doubt in (chunker_doubt, retriever_doubt) if doubt])


def _verdict(rows: list, kind: str, budget: int) -> tuple:
    """(the sentence naming the best of a kind, a warning when the questions cannot tell it from the next)."""
    if not rows:
        return "", ""
    best = rows[0]
    recall = f"recall {_interval(best.recall, signed=False)} within {budget:,} tokens"
    if len(rows) == 1:
        return f"use {best.label}, the only {kind} measured: {recall}.", ""
    runner, tied = rows[1], [row for row in rows[1:] if not row.difference.shown]
    if not tied:
        return (f"use {best.label}: {recall}, ahead of every other {kind} (the closest, {runner.label}, by "
                f"{_difference(_negated(runner.difference))}).", "")
    close = [best] + [row for row in tied if -row.difference.estimate < MEANINGFUL]  # a lead not worth the cost
    cheapest = min(close, key=lambda row: row.tokens)
    others = f"{len(tied)} other{'s' if len(tied) > 1 else ''}"
    differing = next((row for row in tied if not np.array_equal(row.scores, best.scores)), tied[0])
    cheaper = ("it also reads the fewest tokens" if cheapest is best else
               f"of those within {MEANINGFUL:.2f} of it, {cheapest.label} reads the fewest tokens")
    return (f"{best.label} leads ({recall}) but is not shown better than {others} ({_some([r.label for r in tied])}); "
            f"any of these will do, and {cheaper}.", _too_few(best, differing))


def _too_few(best: Row, runner: Row) -> str:
    """How many questions it would take to tell the best from the closest that finds other questions
    (one that finds the very same questions, a chunker cutting alike, tells nothing), at the spread seen."""
    count = len(best.scores)
    gap, half = -runner.difference.estimate, (runner.difference.high - runner.difference.low) / 2
    if half == 0:
        return (f"{best.label} and {runner.label} score alike on every question: write questions where "
                f"they might differ.")
    shown = max(gap, MEANINGFUL)
    needed = math.ceil(count * (half / shown) ** 2 * 1.1)  # a tenth more: the spread itself is an estimate
    lead = f"its lead of {gap:.{_digits(gap)}f}" if gap >= MEANINGFUL else f"a difference of {MEANINGFUL:.2f}"
    return (f"{count} questions do not tell {best.label} from {runner.label}: at the spread seen, about "
            f"{needed:,} would show {lead}.")


def _negated(interval):
    """The interval of the opposite difference (the best's lead rather than the other's shortfall)."""
    return type(interval)(-interval.estimate, -interval.high, -interval.low, interval.level)


def _digits(*values) -> int:
    """Decimals enough that no value other than 0 prints as 0, and none other than MEANINGFUL as it (2 to 4):
    a verdict must be visible, the recommendation's "within 0.05 of it" too (-0.0545 is not -0.05)."""
    def visible(value, digits):
        shown = round(abs(value), digits)
        return (value == 0 or shown > 0) and (shown != MEANINGFUL or math.isclose(abs(value), MEANINGFUL))

    for digits in (2, 3, 4):
        if all(visible(value, digits) for value in values):
            return digits
    return 4


def _interval(interval, signed: bool = True) -> str:
    """'0.46 [0.37, 0.56]', or '+0.05 [-0.001, +0.10]' signed: as many decimals as the verdict needs."""
    digits = _digits(interval.estimate, interval.low, interval.high) if signed else 2
    sign = "+" if signed else ""
    return (f"{interval.estimate + 0.0:{sign}.{digits}f} [{interval.low + 0.0:{sign}.{digits}f}, "
            f"{interval.high + 0.0:{sign}.{digits}f}]")


def _difference(interval) -> str:
    """A paired difference with its level: '+0.13 [+0.05, +0.21] (95% interval)'."""
    return f"{_interval(interval)} ({interval.level:.0%} interval)"


def _some(names: list, shown: int = 3) -> str:
    """The first few names, and how many more: a sentence stays readable beside a long table."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


HEADERS = ("kind", "method", "size", "overlap", "recall", "recall low", "recall high", "vs best of its kind",
           "vs best low", "vs best high", "chunks", "tokens read")


def _cells(row: Row, kind: str) -> list:
    """A row's values for the CSV file, in HEADERS' order."""
    return [kind, row.method, row.size or "", "" if row.overlap is None else row.overlap,
            f"{row.recall.estimate:.4f}", f"{row.recall.low:.4f}", f"{row.recall.high:.4f}",
            f"{row.difference.estimate:.4f}", f"{row.difference.low:.4f}", f"{row.difference.high:.4f}",
            row.chunks, f"{row.tokens:.0f}"]


def _sections(table: Table) -> list:
    """[(heading, kind, rows)] of the table, retrievers first."""
    return [(heading, kind, rows) for heading, kind, rows in (
        ("retrievers (their own sizes)", "retriever", table.retrievers),
        ("chunkers (size/overlap in tokens)", "chunker", table.chunkers)) if rows]


def table_text(table: Table, budget: int) -> list:
    """The table as printed: two sections, each method against the best of its kind, with intervals."""
    rows = table.retrievers + table.chunkers
    width = max(len(row.method) for row in rows)
    lines = [f"{'method':<{width}}  {'size':>4}  {'overlap':>7}  {f'recall within {budget:,} tokens':>26}  "
             f"{'vs best of its kind':>26}  {'chunks':>7}  {'tokens read':>11}"]
    for heading, _, section in _sections(table):
        lines.append(f"-- {heading}")
        for row in section:
            difference = "best" if row is section[0] else _interval(row.difference)
            overlap = "" if row.overlap is None else row.overlap
            lines.append(f"{row.method:<{width}}  {row.size or 'own':>4}  {overlap:>7}  "
                         f"{_interval(row.recall, signed=False):>26}  {difference:>26}  {row.chunks:>7}  "
                         f"{row.tokens:>11.0f}")
    return lines


def markdown_table(table: Table, budget: int) -> str:
    """The table as Markdown, for a README or an issue."""
    lines = [f"| method | size | overlap | recall within {budget:,} tokens [95% interval] | vs best of its kind "
             f"[interval] | chunks | tokens read |", "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for heading, _, section in _sections(table):
        lines.append(f"| **{heading}** | | | | | | |")
        for row in section:
            difference = "best" if row is section[0] else _interval(row.difference)
            overlap = "" if row.overlap is None else row.overlap
            lines.append(f"| {row.method} | {row.size or 'own'} | {overlap} | {_interval(row.recall, signed=False)} "
                         f"| {difference} | {row.chunks} | {row.tokens:.0f} |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, headers, rows) -> None:
    """A CSV file with a header line."""
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(headers)
        writer.writerows(rows)


def save_plot(path: Path, table: Table, budget: int, embedder: str, overlaps: tuple = (0,)) -> None:
    """Recall within the budget against chunk size, with its intervals: a line per chunker and overlap
    asked (an eighth is 16 tokens at 128, 32 at 256), a dashed line and its band per retriever; the
    legend beside the plot, where it covers no line."""
    from matplotlib.figure import Figure

    from labkit.plots import figure_png

    figure = Figure(figsize=(10, 4.5), layout="constrained")
    axes = figure.subplots()
    lines = {}
    for row in table.chunkers:
        asked = next((spec for spec in overlaps if overlap_tokens(spec, row.size) == row.overlap), row.overlap)
        lines.setdefault((row.method, str(asked)), []).append(row)
    shown_overlap = len(overlaps) > 1
    for number, ((name, overlap), points) in enumerate(lines.items()):
        points.sort(key=lambda row: row.size)
        estimates = np.array([row.recall.estimate for row in points])
        errors = [estimates - [row.recall.low for row in points], [row.recall.high for row in points] - estimates]
        shift = 1 + 0.06 * (number / max(len(lines) - 1, 1) - 0.5)  # side by side, so no bar hides another
        axes.errorbar([row.size * shift for row in points], estimates, yerr=errors, marker="os^Dv"[number // 10 % 5],
                      capsize=3, label=name + (f", overlap {overlap}" if shown_overlap else ""))
    for number, row in enumerate(table.retrievers):
        color = f"C{(len(lines) + number) % 10}"
        axes.axhline(row.recall.estimate, linestyle="--", color=color, label=f"{row.method} (sizes of its own)")
        axes.axhspan(row.recall.low, row.recall.high, color=color, alpha=0.08)
    sizes = sorted({row.size for row in table.chunkers})
    if sizes:
        axes.set_xscale("log", base=2)
        axes.set_xticks(sizes, [str(size) for size in sizes])
    axes.set_xlabel("chunk size (tokens)")
    axes.set_ylabel(f"recall within {budget:,} tokens ({embedder})")
    axes.set_title("Recall against chunk size, at equal reading cost (bars and bands: 95% intervals)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    path.write_bytes(figure_png(figure))


# --------------------------------------------------------------------------
# Each question: which methods found it
# --------------------------------------------------------------------------


def per_question(questions: list, scored: list, texts: dict) -> tuple:
    """(headers, rows) of per-question.csv: a row per usable question, a column per method and setting
    holding that question's recall (what the table averages)."""
    headers = ["questions line", "question", "document", "document line"] + [s.setting for s in scored]
    rows = [[question.line, question.question, question.doc, _line_number(texts[question.doc], question.start)]
            + [f"{s.recall[number]:g}" for s in scored] for number, question in enumerate(questions)]
    return headers, rows


def missed_and_lone(questions: list, scored: list) -> tuple:
    """([questions no method finds], [(question, the one method that finds it)]); a method finds a
    question when one of its settings does."""
    found = {}
    for s in scored:
        found[s.method] = found.get(s.method, np.zeros(len(questions), dtype=bool)) | (s.recall > 0)
    missed, lone = [], []
    for number, question in enumerate(questions):
        finders = [name for name, hits in found.items() if hits[number]]
        if not finders:
            missed.append(question)
        elif len(finders) == 1 and len(found) > 1:
            lone.append((question, finders[0]))
    return missed, lone


def _finding(method: str, number: int, scored: list) -> str:
    """The method that alone finds question `number`, with the settings that find it when not all do:
    'recursive (rag5) at 512/64 only'."""
    settings = [s for s in scored if s.method == method]
    finding = [f"{s.size}/{s.overlap}" for s in settings if s.recall[number] > 0]
    return method if len(finding) == len(settings) else f"{method} at {', '.join(finding)} only"


def question_summary(questions: list, scored: list, texts: dict, shown: int = 10) -> list:
    """The lines naming the questions every method misses and those one method alone finds."""
    missed, lone = missed_and_lone(questions, scored)

    def named(question):
        text = " ".join(question.question.split())
        text = text if len(text) <= 80 else text[:77] + "..."
        return (f'line {question.line} "{text}" (answer in {question.doc} line '
                f'{_line_number(texts[question.doc], question.start)})')

    lines = [f"Missed by every method: {len(missed)} of {len(questions)} questions"
             + (" (check their answers, or the documents lack what they ask)" if missed else "")]
    lines += [f"  {named(question)}" for question in missed[:shown]]
    lines += [f"Found by one method only: {len(lone)}"]
    lines += [f"  {named(question)}: {_finding(method, questions.index(question), scored)}"
              for question, method in lone[:shown]]
    if len(missed) > shown or len(lone) > shown:
        lines.append(f"  (the first {shown} of each; every question is in per-question.csv)")
    return lines


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------


class Settings(NamedTuple):
    """What a run was asked for, checked."""

    docs: Path
    questions: Path | None
    labs: Path
    budget: int
    sizes: tuple
    overlaps: tuple  # each a Fraction of the size, or a whole number of tokens
    title: str
    embedder: str
    cache: Path
    out: Path
    methods: str | None

    def grid(self, method: Method) -> list:
        """[(size, overlap in tokens)] a chunker is measured at: every size and overlap asked, or each
        size with no overlap for a chunker that has none."""
        if not method.overlaps:
            return [(size, 0) for size in self.sizes]
        return [(size, overlap) for size in self.sizes
                for overlap in dict.fromkeys(overlap_tokens(spec, size) for spec in self.overlaps)]


def overlap_tokens(spec, size: int) -> int:
    """An overlap asked as a fraction of the size (1/8) or in tokens (32), in tokens at `size`."""
    return int(size * spec) if isinstance(spec, Fraction) else spec


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare's options, for `python -m labkit.compare` and `chunking-labs compare` alike."""
    parser.add_argument("docs", metavar="DOCS", help="a folder of .md, .markdown, .mdx or .txt files")
    parser.add_argument("--questions", metavar="QUESTIONS",
                        help='JSON lines {"question": ..., "answer": "a quote", "doc": optional}; '
                             "without it, only chunk and count")
    parser.add_argument("--labs", metavar="DIR", help="your own finished labs (default: the reference solutions)")
    parser.add_argument("--budget", type=int, default=BUDGET, help=f"tokens read per question (default {BUDGET})")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)),
                        help="chunk sizes in tokens, comma-separated: each is a row of the table and a point of "
                             "the plot (default %(default)s)")
    parser.add_argument("--overlaps", default=",".join(OVERLAPS),
                        help="overlaps, comma-separated, each a fraction of the size (1/8, 0.25) or whole tokens "
                             "(32); each is a row of the table (default %(default)s)")
    parser.add_argument("--title", help="the documents' title, in rag7's headers (default: DOCS's folder name)")
    parser.add_argument("--embedder", metavar="EMBEDDER",
                        help=f"{', '.join(EMBEDDERS)} (default: $ACADEMY_EMBEDDER, else {DEFAULT_EMBEDDER}, which "
                             f"reads a sentence; wordllama, a static model, is about a hundred times faster)")
    parser.add_argument("--cache", metavar="DIR", help=f"where embeddings are kept (default {default_cache()})")
    parser.add_argument("--out", metavar="DIR", default="compare-output",
                        help="where the table, per-question.csv and the plot are written (default ./compare-output)")
    parser.add_argument("--methods", help='only the methods whose names hold these words, such as "rag5,rag10"')


def settings_of(arguments: argparse.Namespace) -> Settings:
    """The run's settings, every one checked before a document is read: a SystemExit with one line
    saying what to change for a bad one."""
    sizes = _numbers(arguments.sizes, "--sizes", "whole numbers of tokens such as 128,256,512")
    overlaps = tuple(_overlap(spec) for spec in arguments.overlaps.split(",") if spec.strip())
    if not sizes or min(sizes) < 16:
        raise SystemExit("compare: --sizes must be 16 tokens or more, such as 128,256,512")
    if not overlaps:
        raise SystemExit("compare: --overlaps is empty; give 0, a fraction such as 1/8, or tokens such as 32")
    for size in sizes:
        for spec in overlaps:
            if not 0 <= overlap_tokens(spec, size) < size:
                raise SystemExit(f"compare: an overlap of {spec} is {overlap_tokens(spec, size)} tokens at size "
                                 f"{size}; an overlap must be smaller than every size (and 0 or more)")
    if arguments.budget < 1:
        raise SystemExit(f"compare: --budget {arguments.budget}: give 1 token or more, such as 1000")
    embedder = arguments.embedder or os.environ.get("ACADEMY_EMBEDDER") or DEFAULT_EMBEDDER
    check_embedder(embedder)
    docs = Path(arguments.docs)
    if not docs.is_dir():
        raise SystemExit(f"compare: DOCS {docs} is not a folder; give a folder of .md, .markdown, .mdx or .txt files")
    questions = Path(arguments.questions) if arguments.questions else None
    if questions is not None and not questions.is_file():
        raise SystemExit(f"compare: --questions {questions} is not a file; give a JSON-lines file of questions")
    labs = Path(arguments.labs) if arguments.labs else SOLUTIONS
    if not arguments.labs and not labs.is_dir():
        raise SystemExit("compare: this copy of the course has no reference solutions; give your own finished labs "
                         "with --labs DIR")
    if not labs.is_dir():
        raise SystemExit(f"compare: --labs {labs} is not a folder; give the folder of your rag4-...py to rag11-...py")
    title = arguments.title if arguments.title is not None else docs.resolve().name
    cache = Path(arguments.cache) if arguments.cache else default_cache()
    if questions is not None:
        try:
            cache.mkdir(parents=True, exist_ok=True)
            writable = os.access(cache, os.W_OK)
        except OSError as error:
            writable = False
            cache = Path(f"{cache} ({error.strerror or error})")
        if not writable:
            raise SystemExit(f"compare: the embedding cache's folder {cache} cannot be written; give one that can "
                             f"be with --cache DIR (or ACADEMY_CACHE_DIR)")
    return Settings(docs, questions, labs, arguments.budget, sizes, overlaps, title, embedder, cache,
                    Path(arguments.out), arguments.methods)


def _numbers(text: str, option: str, example: str) -> tuple:
    """The sorted whole numbers of a comma-separated option; a SystemExit naming the option otherwise."""
    try:
        return tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError:
        raise SystemExit(f"compare: {option} {text!r}: give {example}") from None


def _overlap(spec: str):
    """'1/8' or '0.125' -> a Fraction of the size; '32' -> 32 tokens; a SystemExit otherwise."""
    spec = spec.strip()
    try:
        return int(spec) if spec.lstrip("-").isdigit() else Fraction(spec)
    except (ValueError, ZeroDivisionError):
        raise SystemExit(f"compare: --overlaps {spec!r}: give 0, a fraction of the size such as 1/8 or 0.25, "
                         f"or whole tokens such as 32") from None


def check_embedder(name: str) -> None:
    """A SystemExit, one line, for an embedder this run could not use (unknown, its package or weights
    missing, no key): found before any document is read, not after an hour of chunking."""
    import importlib.util

    if name not in EMBEDDERS:
        raise SystemExit(f"compare: unknown embedder {name!r}; use one of {', '.join(EMBEDDERS)} "
                         f"(--embedder or ACADEMY_EMBEDDER)")
    if name == "minilm":
        from labkit import minilm
        try:
            minilm.check_available()
        except (ImportError, FileNotFoundError) as error:
            raise SystemExit(f"compare: {error}") from None
    elif name == "openai":
        from labkit import openai_embedder
        if importlib.util.find_spec("openai") is None:
            raise SystemExit("compare: the openai embedder needs the openai package: pip install openai "
                             "(or choose another with --embedder)")
        try:
            setting = openai_embedder.settings()
        except openai_embedder.EmbeddingError as error:
            raise SystemExit(f"compare: {error}") from None
        if setting.api_key is None and setting.is_openai:
            raise SystemExit(f"compare: OPENAI_API_KEY is not set: set it to your OpenAI key to embed with "
                             f"{setting.model} (or set OPENAI_BASE_URL to a local server, or choose another "
                             f"embedder with --embedder)")
    elif name == "wordllama" and importlib.util.find_spec("wordllama") is None:
        raise SystemExit("compare: the wordllama embedder needs its package: pip install wordllama "
                         "(or choose another with --embedder)")


def run(settings: Settings) -> int:
    """The whole comparison (or, without questions, the chunking alone); the exit code."""
    from labkit.openai_embedder import EmbeddingError

    try:
        return _run(settings)
    except EmbeddingError as error:  # the cache's folder, the server, the cost stop: each one line
        raise SystemExit(f"compare: {error}") from None


def _run(settings: Settings) -> int:
    documents = read_documents(settings.docs)
    settings.out.mkdir(parents=True, exist_ok=True)
    _left_out(documents.problems, settings.out / "left-out.txt")
    if not documents.texts:
        raise SystemExit(f"compare: no readable .md, .markdown, .mdx or .txt file in {settings.docs}; "
                         f"point DOCS at a folder of Markdown or text files")
    characters = characters_of(documents.texts)
    print(f"{len(documents.texts)} documents ({characters / 1e6:.2f} M characters) read from {settings.docs}"
          + (f", {len(documents.problems)} files left out (listed on stderr)" if documents.problems else ""))
    questions = None
    if settings.questions is not None:
        questions = read_questions(settings.questions, documents.texts)
        for line in questions.problems:
            print(f"  {settings.questions.name} {line}", file=sys.stderr)
        if not questions.usable:
            raise SystemExit(f"compare: none of the {questions.lines} questions in {settings.questions} is usable "
                             f"(each answer must be a quote found once in DOCS); see the lines above")
        print(f"{len(questions.usable)} of {questions.lines} questions usable" +
              (f" ({len(questions.problems)} listed on stderr, left out)" if questions.problems else ""))
    problems = []
    methods = chosen(course_methods(settings.labs, settings.title, settings.embedder, problems, settings.cache)
                     + peer_methods(settings.title, problems), settings.methods)
    for line in problems:
        print(f"  {line}", file=sys.stderr)
    if not methods:
        raise SystemExit(f"compare: no method to compare (--methods {settings.methods!r} matches none)")
    if questions is None:
        return chunk_only(settings, documents.texts, [m for m in methods if m.chunk])
    return compare(settings, documents.texts, questions.usable, methods)


def _left_out(problems: list, path: Path, shown: int = 20) -> None:
    """Each file left out, on stderr (the first `shown`) and all of them in `path`."""
    for line in problems[:shown]:
        print(f"  {line}", file=sys.stderr)
    if len(problems) > shown:
        print(f"  ... and {len(problems) - shown} more files left out, every one listed in {path}", file=sys.stderr)
    if problems:
        path.write_text("\n".join(problems) + "\n", encoding="utf-8")
    elif path.exists():
        path.unlink()


def chunk_only(settings: Settings, texts: dict, methods: list) -> int:
    """Chunk every document with every chunker at every size and overlap: chunks, mean tokens and seconds."""
    grid = [(method, size, overlap) for method in methods for size, overlap in settings.grid(method)]
    progress = Progress("chunking", len(grid) * characters_of(texts), "characters")
    rows, failed = [], set()
    for method, size, overlap in grid:
        if method.name in failed:
            progress.advance(characters_of(texts))
            continue
        try:
            counts, seconds = _chunk_counts(method, texts, size, overlap, progress)
        except ValueError as error:
            print(f"\n  {method.name}: left out, {error}", file=sys.stderr)
            failed.add(method.name)
            continue
        rows.append([method.name, size, overlap, len(counts), f"{np.mean(counts) if counts else 0:.0f}",
                     f"{seconds:.2f}"])
    progress.close()
    headers = ("method", "size", "overlap", "chunks", "mean tokens", "wall seconds")
    print("\n" + "  ".join(f"{h:>12}" if n else f"{h:<28}" for n, h in enumerate(headers)))
    for row in rows:
        print("  ".join(f"{str(cell):>12}" if n else f"{cell:<28}" for n, cell in enumerate(row)))
    write_csv(settings.out / "chunking.csv", headers, rows)
    print(f"\nWritten: {settings.out / 'chunking.csv'}")
    return 0


def _chunk_counts(method: Method, texts: dict, size: int, overlap: int, progress: Progress) -> tuple:
    """([tokens of each chunk], seconds) of one chunker at one setting; a ValueError naming the document."""
    counts, began = [], time.perf_counter()
    for name, text in texts.items():
        counts += [chunk.n_tokens for _, chunk in chunks_of(method, name, text, size, overlap)]
        progress.advance(len(text))
    return counts, time.perf_counter() - began


def compare(settings: Settings, texts: dict, questions: list, methods: list) -> int:
    """Chunk, embed and score every setting, then the retrievers; print the table, the recommendation and
    the questions missed; write the table (CSV, Markdown), per-question.csv and the plot."""
    # The reference metrics, whoever wrote the chunkers: an independent ruler. A handout has no
    # solutions/: its learner's own rag8 measures then.
    rag8 = load_lab("rag8", SOLUTIONS if SOLUTIONS.is_dir() else settings.labs)
    cache = EmbeddingCache(settings.cache, settings.embedder)
    question_vectors = cache.vectors([question.question for question in questions], "embedding questions")
    grid = [(method, size, overlap) for method in methods if method.chunk for size, overlap in settings.grid(method)]
    _announce(settings, texts, grid, [method.name for method in methods if method.search])
    print(estimate_line(grid, [m for m in methods if m.search], texts, cache, settings.embedder))
    scored = score_grid(grid, texts, questions, question_vectors, cache, settings.budget, rag8)
    scored += retrieve([m for m in methods if m.search], texts, questions, settings.budget, rag8)
    if not scored:
        raise SystemExit("compare: every method failed (see the lines above); nothing to compare")
    table = table_of(scored, rag8)
    advice = recommendation(table, settings.budget)
    overlaps = ", ".join(str(spec) for spec in settings.overlaps)
    print(f"\n{len(questions)} questions, {settings.embedder}; chunks of {_some(list(map(str, settings.sizes)), 9)} "
          f"tokens, overlap {overlaps}; each question reading at most {settings.budget:,} tokens")
    for line in table_text(table, settings.budget):
        print(f"  {line}")
    print("  [low, high]: 95% bootstrap intervals over the questions; vs best of its kind: paired, the same "
          "questions\n  resampled for both; tokens read: mean per question; own: a retriever's sizes are its own "
          "(chunks: the units it ranks)")
    print(f"\n{advice}\n")
    for line in question_summary(questions, scored, texts):
        print(line)
    write_outputs(settings, table, advice, questions, scored, texts)
    print(f"embeddings: {cache.embedded:,} embedded now, {cache.reused:,} found in the cache in {settings.cache} "
          f"(a chunk two settings cut alike is embedded once; the retrievers' units are not counted)")
    return 0


def _announce(settings: Settings, texts: dict, grid: list, retrievers: list = ()) -> None:
    """What is about to be done, before the long part: the chunkings and, for a paid embedder, its cost."""
    characters = characters_of(texts)
    print(f"{len(grid)} chunkings of {characters / 1e6:.2f} M characters to embed and score")
    if retrievers and not is_reference(settings.labs) and characters > RETRIEVER_WARNING:
        print(f"{_some(retrievers)} of {settings.labs} index the whole corpus at once: about "
              f"{characters * RETRIEVER_BYTES / 1e9:.1f} GB of memory for these {characters / 1e6:.0f} M characters "
              f"(the reference labs' need a fraction); --methods without rag10 and rag11 leaves them out")
    if settings.embedder == "openai":
        from labkit import openai_embedder
        setting = openai_embedder.settings()
        tokens = characters / 4 * sum(1 + overlap / size for _, size, overlap in grid)  # about 4 characters a token
        print(f"openai: about {tokens / 1e6:.1f} M tokens to embed, at most about "
              f"${tokens * setting.price_per_million / 1e6:.2f} at {setting.model}'s price (less what is cached); "
              f"ACADEMY_MAX_COST=${setting.max_cost:g} stops a run that would cost more")


def estimate_line(grid: list, retrievers: list, texts: dict, cache, embedder: str,
                  sample: int = SAMPLE_CHARACTERS) -> str:
    """The time the run will take, said before it starts: each chunker timed on a sample (a few thousand
    characters from documents spread over the corpus, chunked and embedded through the cache, where its
    vectors stay for the run), at its first setting, and each retriever building its index of the same
    sample, scaled to the corpus and the chunkers' settings. The embedder's cost is in the timing: under
    minilm a long run names the static model, about a hundred times faster.
    The first piece of a chunker's sample is not timed: it pays the chunker's start (patterns compiled,
    the tokenizer and the embedder warmed), which the run pays once."""
    sample_texts, rates, cache.sampling = _sample(texts, sample), {}, True
    try:
        for method, size, overlap in grid:
            if method.name not in rates:
                rates[method.name] = _rate_on(method, sample_texts, size, overlap, cache)
    finally:
        cache.sampling = False
    sampled, characters = sum(map(len, sample_texts.values())), characters_of(texts)
    chunkings = sum(rates[method.name] for method, _, _ in grid) * characters
    retrieving = sum(_index_seconds(method, sample_texts) for method in retrievers) / max(sampled, 1) * characters
    for method in retrievers:
        method.release()
    both = grid and retrievers
    parts = f"the chunkings {_duration(chunkings)}, the retrievers {_duration(retrieving)}, " if both else ""
    line = (f"about {_duration(chunkings + retrieving)} of CPU ({parts}from each method timed on {sampled:,} "
            f"characters of these documents); the bar counts characters")
    if embedder == "minilm" and chunkings + retrieving >= LONG_RUN_SECONDS:
        line += ("\nminilm reads words in their context; --embedder wordllama, a static model, takes about a "
                 "hundredth of that time (less what the cache holds: a second run pays nothing for what this one "
                 "embeds)")
    return line


def _index_seconds(method: Method, texts: dict) -> float:
    """CPU seconds a retriever takes to index `texts` (cut them into units and embed those); 0 for one that
    fails (its turn says so in one line)."""
    began = time.process_time()
    try:
        method.units(texts)
    except Exception:  # a learner's lab may stop at a TODO: the run says so at its turn
        return 0.0
    return time.process_time() - began


def _rate_on(method: Method, texts: dict, size: int, overlap: int, cache) -> float:
    """CPU seconds a character to chunk and embed `texts`, the first text not counted (unless it is the only
    one); 0 for a chunker that fails (its turn says so in one line)."""
    timed = seconds = 0.0
    try:
        for number, (name, text) in enumerate(texts.items()):
            began = time.process_time()
            pending = [chunk.embedding_text for _, chunk in chunks_of(method, name, text, size, overlap)]
            for first in range(0, len(pending), EMBED_BATCH):
                cache.vectors(pending[first:first + EMBED_BATCH])
            if number or len(texts) == 1:
                seconds, timed = seconds + time.process_time() - began, timed + len(text)
    except ValueError:
        return 0.0
    return seconds / max(timed, 1)


def _sample(texts: dict, characters: int, pieces: int = 8) -> dict:
    """About `characters` characters of the corpus: `pieces` runs of lines, taken at even steps through
    the documents one after another (so one big file gives pieces from its whole length)."""
    total = characters_of(texts)
    if total <= characters:
        return dict(texts)
    picked, each, passed = {}, characters // pieces, 0
    wanted = [round(n * total / pieces) for n in range(pieces)]
    for name, text in texts.items():
        for at in (spot - passed for spot in wanted if passed <= spot < passed + len(text)):
            start = text.rfind("\n", 0, at) + 1
            end = text.find("\n", start + each, start + 4 * each)  # a line end, unless the line is very long
            picked[f"{name} at {start}"] = text[start:start + each if end < 0 else end + 1]
        passed += len(text)
    return picked


def _duration(seconds: float) -> str:
    """A duration as a person reads it: 40 s, 12 min, 2.5 h."""
    if seconds < 90:
        return f"{max(seconds, 1):.0f} s"
    return f"{seconds / 60:.0f} min" if seconds < 5400 else f"{seconds / 3600:.1f} h"


def score_grid(grid: list, texts: dict, questions: list, question_vectors, cache, budget: int, rag8) -> list:
    """A Scored per chunker and setting, under one bar counting characters; a chunker that fails is left
    out with one line (a learner's lab with a TODO left, a chunk off its offsets)."""
    characters, names = characters_of(texts), list(texts)
    progress, scored, failed = Progress("chunking and embedding", len(grid) * characters, "characters"), [], set()
    for number, (method, size, overlap) in enumerate(grid):
        before = progress.done
        if number and method.name != grid[number - 1][0].name:
            release_memory(lines=False)  # a chunker's sentences (rag9 at each size) are not the next one's
        if method.name not in failed:
            try:
                spans = chunk_and_embed(method, texts, size, overlap, cache, progress)
                try:
                    recall, tokens = score_spans(spans, names, questions, question_vectors, budget, rag8)
                finally:
                    spans.vectors.close()
                scored.append(Scored(method.name, size, overlap, recall, tokens, len(spans.rows)))
            except ValueError as error:
                print(f"\n  {method.name}: left out, {error}", file=sys.stderr)
                failed.add(method.name)
        progress.advance(before + characters - progress.done)
    progress.close()
    release_memory()
    return scored


def retrieve(methods: list, texts: dict, questions: list, budget: int, rag8) -> list:
    """Each retriever's Scored; one that fails is left out with one line. Each starts on memory the
    chunkings have let go of, and its indexes go once it has run: rag11 places units in their parents
    its own way (by their middles), so its index is not rag10's, and the two are never held at once."""
    if not methods:
        return []
    progress, scored = Progress("retrieving (rag10, rag11)", len(methods), "retrievers"), []
    for method in methods:
        release_memory()  # wordllama's lines and the index before can go
        try:
            scored.append(score_retriever(method, texts, questions, budget, rag8))
        except Exception as error:  # a learner's lab may stop at a TODO: compare the rest
            print(f"\n  {method.name}: left out, {_one_line(error)}", file=sys.stderr)
        finally:
            method.release()
        progress.advance()
    release_memory()
    progress.close()
    return scored


def release_memory(lines: bool = True) -> None:
    """Let go of what no later step reads: the vectors minilm keeps in the process (compare keeps its own
    on disk), wordllama's lines remembered (up to 110 MB) unless `lines` is False, and the memory freed
    since, handed back to the system (glibc keeps freed blocks for reuse, which the next step, made of
    other sizes, may never reuse)."""
    import ctypes
    import gc

    from labkit import embedders, minilm

    minilm.forget()
    if lines:
        embedders.forget_lines()
    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc (macOS, Windows, musl): its allocator hands memory back itself
        pass


def write_outputs(settings: Settings, table: Table, advice: str, questions: list, scored: list, texts: dict) -> None:
    """compare.csv, compare.md (the table and the recommendation), per-question.csv and recall-vs-size.png."""
    out = settings.out
    write_csv(out / "compare.csv", HEADERS, [_cells(row, kind) for _, kind, rows in _sections(table) for row in rows])
    (out / "compare.md").write_text(markdown_table(table, settings.budget) + f"\n{advice}\n", encoding="utf-8")
    write_csv(out / "per-question.csv", *per_question(questions, scored, texts))
    save_plot(out / "recall-vs-size.png", table, settings.budget, settings.embedder, settings.overlaps)
    print(f"Written: {out / 'compare.csv'}, {out / 'compare.md'}, {out / 'per-question.csv'}, "
          f"{out / 'recall-vs-size.png'}")


def main(argv=None) -> int:
    """`python -m labkit.compare DOCS --questions QUESTIONS ...`"""
    parser = argparse.ArgumentParser(prog="python -m labkit.compare", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(settings_of(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
