"""chunking-labs compare DOCS --questions QUESTIONS: the course's harness on a learner's own documents.

After the labs, the question a learner came with is about their own pages: which
chunking finds *their* answers? This runs rag8's measurement there:

1. DOCS, a folder of .md, .markdown, .mdx and .txt files, is read exactly as the labs
   read a page (academy_llm.read_page): line ends, byte order mark and front matter kept,
   for rag6 to read. A file that cannot be read is named, with what to do, and left out.
2. QUESTIONS is JSON lines, {"question": ..., "answer": ..., "doc": optional}, the answer
   a quote. Its span is found in the text, whitespace allowed to differ (a line break
   where the quote has a space); a quote found nowhere or in several places is listed
   with its line and left out, so one bad line does not cost the others.
3. Every method chunks every document: the course's chunkers (rag4-rag7, rag9) from
   solutions/ or from the learner's own labs (--labs), at one size for the table and at
   a few for the plot; rag10 and rag11 take part as retrievers; the benchmark's peers
   (LangChain, semchunk, chonkie) when installed. Chunks are embedded through an on-disk
   cache, so a second run re-embeds only the chunks it has not seen.
4. Each question is scored as rag8 scores it, at equal reading cost: did the chunks
   retrieved within `--budget` tokens hold its answer whole? The table gives each method's
   recall with a bootstrap interval over the questions, and its difference from the best
   with a paired interval; the recommendation says whether the best is shown better.

Without --questions it only chunks, and reports chunks, tokens and time per method.

    chunking-labs compare DOCS --questions QUESTIONS [--labs DIR] [--budget 1000] [--out DIR]
    python -m labkit.compare DOCS --questions QUESTIONS
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import json
import os
import re
import sqlite3
import sys
import time
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np

from academy_llm import (
    COURSE_ROOT, check_exact_slices, count_tokens, describe_embedder, embed, embedder_name, read_page, top_k_each,
)
from labkit.loading import load_lab
from labkit.uncertainty import Interval

ROOT = COURSE_ROOT
SOLUTIONS = ROOT / "solutions"
PEERS_FILE = ROOT / "benchmarks" / "chunkers.py"  # the benchmark's peers, in a clone of the course
PEER_MODULES = ("langchain_text_splitters", "semchunk", "chonkie")
SUFFIXES = (".md", ".markdown", ".mdx", ".txt")
BUDGET = 1000  # tokens a question may read: rag8's equal reading cost
SIZE = 256  # the chunk size of the table, rag8's
PLOT_SIZES = (128, 256, 512)
EMBED_BATCH = 256  # texts embedded at a time, so the progress bar moves
NO_WINNER = "no method is shown better on these questions"


# --------------------------------------------------------------------------
# The documents
# --------------------------------------------------------------------------


class Documents(NamedTuple):
    """The readable documents ({path under DOCS: text}) and one line per file left out."""

    texts: dict
    problems: list


def read_documents(folder: Path) -> Documents:
    """Every .md/.markdown/.mdx/.txt file under `folder` (hidden folders aside), as the labs read a page.

    A file that cannot be read or is not UTF-8 is left out with a line saying what to do:
    one bad file should not stop a comparison of the others.
    """
    texts, problems = {}, []
    for path in _document_paths(folder):
        name = path.relative_to(folder).as_posix()
        try:
            texts[name] = read_page(path)
        except UnicodeDecodeError as error:
            data = path.read_bytes()
            line = _line_number(data, error.start)
            problems.append(f"{name}: left out, byte 0x{data[error.start]:02x} on line {line} is not UTF-8; "
                            f"save the file as UTF-8")
        except OSError as error:
            problems.append(f"{name}: left out, it cannot be read ({error.strerror or error}); check that it is a "
                            f"readable file")
    return Documents(texts, problems)


def _line_number(text, offset: int) -> int:
    """The line (from 1) of `offset` in a text or its bytes, whatever its line ends: \\n, \\r\\n or a lone \\r."""
    cr, lf, crlf = ("\r", "\n", "\r\n") if isinstance(text, str) else (b"\r", b"\n", b"\r\n")
    return text.count(lf, 0, offset) + text.count(cr, 0, offset) - text.count(crlf, 0, offset) + 1


def _document_paths(folder: Path) -> list:
    """The files to read, sorted, skipping hidden files and folders (.git, .venv...)."""
    return sorted(path for path in folder.rglob("*")
                  if path.suffix.lower() in SUFFIXES and not path.is_dir()
                  and not any(part.startswith(".") for part in path.relative_to(folder).parts))


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
    """The questions of a JSON-lines file whose answers are found in `texts`, and the reason for each other line."""
    usable, problems, lines = [], [], 0
    with open(path, encoding="utf-8", errors="replace") as file:
        for number, line in enumerate(file, 1):
            if not line.strip():
                continue
            lines += 1
            found = _question_of(number, line, texts)
            if isinstance(found, Question):
                usable.append(found)
            else:
                problems.append(f"line {number}: {found}")
    return Questions(usable, problems, lines)


def _question_of(number: int, line: str, texts: dict):
    """The Question on one line, or the reason it cannot be used (a str)."""
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
    places = find_quote(record["answer"], {doc: texts[doc]} if doc else texts)
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
    pattern, places = quote_pattern(quote), []
    for name, text in texts.items():
        found = pattern.search(text)
        while found and len(places) < 2:
            places.append((name, found.start(), found.end()))
            found = pattern.search(text, found.start() + 1)
        if len(places) == 2:
            break
    return places


# --------------------------------------------------------------------------
# The methods: the course's chunkers and retrievers, and the benchmark's peers
# --------------------------------------------------------------------------


class Method(NamedTuple):
    """One way to chunk (`chunk(text, size)`) or to retrieve (`search(texts, questions, budget)`)."""

    name: str
    chunk: Callable | None = None  # a chunker: chunk(text, size) -> [Chunk]
    search: Callable | None = None  # a retriever: -> [[(doc, start, end)]] a question, within budget
    units: Callable | None = None  # a retriever: units(texts) -> how many units it ranks


def course_methods(labs: Path, title: str, embedder: str, problems: list) -> list:
    """The course's chunkers and retrievers from `labs`; a lab that does not load is left out with a line."""
    methods = []
    for lab, make in _COURSE.items():
        try:
            module = load_lab(lab, labs)
        except Exception as error:  # a learner's lab may not load: say so, compare the rest
            problems.append(f"{lab}: left out, it does not load from {labs} ({_one_line(error)})")
            continue
        methods += make(module, title, embedder)
    return methods


def _sized(name, chunk):
    """A chunker, `chunk(text, size)`; the windows and seams below overlap by an eighth of the size, as
    rag8 chunks (rag9's semantic cuts have no overlap)."""
    return [Method(name, chunk=chunk)]


def _retriever(name, module, build, title, embedder):
    """rag10 or rag11: its own search, at the question's budget, with the run's title and embedder;
    `build` is the index it searches (built once, kept by the lab), for the count of its units."""
    def search(texts, questions, budget):
        return module.search(texts, questions, budget, title=title, embedder=embedder)

    return [Method(name, search=search, units=lambda texts: len(build(texts, title, embedder).units))]


_COURSE = {  # lab -> its methods, in the order of the course
    "rag4": lambda m, title, embedder: _sized("token windows (rag4)", lambda t, s: m.token_windows(t, s, s // 8)),
    "rag5": lambda m, title, embedder: _sized("recursive (rag5)", lambda t, s: m.recursive_chunks(t, s, s // 8)),
    "rag6": lambda m, title, embedder: _sized("markdown (rag6)", lambda t, s: m.markdown_chunks(t, s, s // 8)),
    "rag7": lambda m, title, embedder: (
        _sized("markdown + header (rag7)", lambda t, s: m.header_chunks(t, title, s, s // 8))
        + _sized("header + table rows (rag7)",
                 lambda t, s: m.with_table_rows(t, m.header_chunks(t, title, s, s // 8), s))),
    "rag9": lambda m, title, embedder: _sized("semantic (rag9)",
                                              lambda t, s: m.semantic_chunks(t, s, embedder=embedder)),
    "rag10": lambda m, title, embedder: _retriever("small to big (rag10)", m, m.build_index, title, embedder),
    "rag11": lambda m, title, embedder: _retriever("hybrid search (rag11)", m, m.build_hybrid, title, embedder),
}


def peer_methods(title: str) -> list:
    """The benchmark's peers that are installed, as the benchmark runs them (benchmarks/chunkers.py).

    None when no peer library is installed or the benchmark is not beside the package (an
    installed course, a handout): the course's own methods are compared then.
    """
    import importlib.util

    if not PEERS_FILE.is_file() or not any(importlib.util.find_spec(name) for name in PEER_MODULES):
        return []
    spec = importlib.util.spec_from_file_location("chunking_labs_peers", PEERS_FILE)
    peers = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # its dataclasses look it up there
    spec.loader.exec_module(peers)
    methods = []
    for contender in peers.PEERS:
        def chunk(text, size, contender=contender):
            return contender.located(text, contender.run(text, size, size // 8, title))
        try:
            chunk("A short check that the library is installed.", 64)
        except ImportError:
            continue
        methods.append(Method(contender.name, chunk=chunk))
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
    """A progress bar on stderr: redrawn in place on a terminal, one closing line in a log."""

    def __init__(self, label: str, total: int, stream=None):
        self.label, self.total, self.done = label, max(total, 1), 0
        self.stream = stream or sys.stderr
        self.live = self.stream.isatty()
        self.began = self.drawn = time.perf_counter()

    def advance(self, amount: int = 1) -> None:
        """Count `amount` more done; redraw at most ten times a second."""
        self.done += amount
        if self.live and (time.perf_counter() - self.drawn > 0.1 or self.done >= self.total):
            self.drawn = time.perf_counter()
            self.stream.write("\r" + self._line())
            self.stream.flush()

    def close(self) -> None:
        """The finished bar, with the time it took, on a line of its own."""
        self.done = self.total
        took = f" in {time.perf_counter() - self.began:.1f} s\n"
        self.stream.write(("\r" if self.live else "") + self._line() + took)
        self.stream.flush()

    def _line(self) -> str:
        filled = int(30 * self.done / self.total)
        return f"{self.label:<24} [{'#' * filled}{'.' * (30 - filled)}] {self.done}/{self.total}"


class EmbeddingCache:
    """Vectors on disk (sqlite), keyed by the embedder, its model and the sha256 of the text.

    A second run with another size or budget meets mostly the same chunks (and the same
    questions): only the texts it has never embedded are sent to the embedder. The model
    is in the key, so vectors of two models never mix.
    """

    def __init__(self, folder: Path, embedder: str):
        folder.mkdir(parents=True, exist_ok=True)
        self.embedder = embedder
        self.model = _model_of(embedder)
        self.database = sqlite3.connect(folder / "embeddings.sqlite")
        self.database.execute("CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB)")
        self.memo = {}  # key -> vector, of every text met in this run: each is read from disk once
        self.embedded = 0  # texts sent to the embedder by this run
        self.reused = 0  # texts this run found on disk, embedded by an earlier run

    def key(self, text: str) -> str:
        """The text's key: embedder, model and the text's sha256."""
        return f"{self.embedder}|{self.model}|{hashlib.sha256(text.encode('utf-8', 'surrogatepass')).hexdigest()}"

    def vectors(self, texts: list, label: str) -> np.ndarray:
        """A unit vector per text (a row each), from the cache or embedded now, with a progress bar."""
        known = self.embed_missing(texts, label)
        if not texts:
            return np.zeros((0, 1), dtype=np.float32)
        return np.stack([known[self.key(text)] for text in texts])

    def embed_missing(self, texts: list, label: str) -> dict:
        """{key: vector} of the texts, embedding (under one progress bar) only those the cache lacks."""
        keys = list(dict.fromkeys(self.key(text) for text in texts))
        known = self._stored(keys)
        missing = list(dict.fromkeys(text for text in texts if self.key(text) not in known))
        if missing:
            progress = Progress(label, len(missing))
            for first in range(0, len(missing), EMBED_BATCH):
                batch = missing[first:first + EMBED_BATCH]
                rows = embed(batch, self.embedder)
                self._store({self.key(text): row for text, row in zip(batch, rows)}, known)
                progress.advance(len(batch))
            progress.close()
            self.embedded += len(missing)
        return known

    def _stored(self, keys: list) -> dict:
        """{key: vector} of the keys already in the cache (this run's first, then the disk's)."""
        found = {key: self.memo[key] for key in keys if key in self.memo}
        unseen = [key for key in keys if key not in found]
        for first in range(0, len(unseen), 500):
            batch = unseen[first:first + 500]
            rows = self.database.execute(
                f"SELECT key, vector FROM vectors WHERE key IN ({','.join('?' * len(batch))})", batch)
            for key, blob in rows:
                found[key] = self.memo[key] = np.frombuffer(blob, dtype=np.float32)
                self.reused += 1
        return found

    def _store(self, rows: dict, known: dict) -> None:
        """Save new vectors (float32 bytes), and add them to `known`."""
        self.database.executemany("INSERT OR REPLACE INTO vectors VALUES (?, ?)",
                                  [(key, np.asarray(row, dtype=np.float32).tobytes()) for key, row in rows.items()])
        self.database.commit()
        known.update(rows)
        self.memo.update(rows)


def _model_of(embedder: str) -> str:
    """What makes the embedder's vectors what they are: the openai model and server, wordllama's version."""
    if embedder == "wordllama":
        from importlib.metadata import version
        return f"wordllama {version('wordllama')}"
    return describe_embedder(embedder)


def default_cache() -> Path:
    """~/.cache/chunking-labs (or under $XDG_CACHE_HOME): shared by every run, whatever its --out."""
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "chunking-labs"


# --------------------------------------------------------------------------
# Chunking and scoring, as rag8 scores
# --------------------------------------------------------------------------


class Chunked(NamedTuple):
    """One method's chunks of every document at one size: [(doc, Chunk)], and the seconds it took."""

    chunks: list
    seconds: float


class Scored(NamedTuple):
    """One method at one size: each question's recall within the budget and tokens read, and its chunks."""

    method: str
    size: int | None  # None: a retriever, with sizes of its own
    recall: np.ndarray  # a score per question, in the questions' order
    tokens: np.ndarray  # tokens handed to the reader, per question
    chunks: int  # chunks in the index (a retriever: the units it ranks)


def chunk_all(method: Method, texts: dict, size: int, progress: Progress) -> Chunked:
    """Every document's chunks; a ValueError (with the document) if the chunker fails or gives a chunk
    that is not the slice it claims: a comparison must rest on true offsets."""
    chunks, began = [], time.perf_counter()
    for name, text in texts.items():
        try:
            found = method.chunk(text, size)
            check_exact_slices(text, found)
        except Exception as error:
            raise ValueError(f"on {name} at {size} tokens: {_one_line(error)}") from error
        chunks += [(name, chunk) for chunk in found]
        progress.advance()
    return Chunked(chunks, time.perf_counter() - began)


def score_chunks(name, size, chunked: Chunked, questions: list, question_vectors, cache, budget, rag8) -> Scored:
    """rag8's recall within `budget` tokens: the chunks ranked by cosine, taken best first while they fit."""
    chunks = chunked.chunks
    vectors = cache.vectors([chunk.embedding_text for _, chunk in chunks], f"embedding {size}-token chunks")
    depth = min(len(chunks), budget + 1)  # every chunk is a token at least: no more can fit
    ranked = top_k_each(question_vectors, vectors, depth) if chunks else [[] for _ in questions]
    recall, tokens = [], []
    for question, top in zip(questions, ranked):
        hits = [(chunks[row][0], chunks[row][1].start, chunks[row][1].end) for row, _ in top]
        kept = rag8.within_budget(hits, [chunks[row][1].n_tokens for row, _ in top], budget)
        recall.append(rag8.recall_at_k(kept, [_gold(question)], len(kept)) if kept else 0.0)
        tokens.append(sum(chunks[row][1].n_tokens for row, _ in top[:len(kept)]))
    return Scored(name, size, np.array(recall), np.array(tokens), len(chunks))


def score_retriever(method: Method, texts: dict, questions: list, budget: int, rag8) -> Scored:
    """A retriever's own spans within the budget, scored by rag8's recall as a chunker's are."""
    found = method.search(texts, [question.question for question in questions], budget)
    recall = [rag8.recall_at_k(spans, [_gold(question)], len(spans)) if spans else 0.0
              for question, spans in zip(questions, found)]
    tokens = [sum(count_tokens(texts[doc][start:end]) for doc, start, end in spans) for spans in found]
    return Scored(method.name, None, np.array(recall), np.array(tokens), method.units(texts))


def _gold(question: Question) -> tuple:
    """The question's answer span as rag8's metrics take it."""
    return question.doc, question.start, question.end


# --------------------------------------------------------------------------
# The table, its intervals and the recommendation
# --------------------------------------------------------------------------


class Row(NamedTuple):
    """A line of the table: a method's recall and its difference from the best, each with an interval."""

    method: str
    size: int | None
    recall: object  # an Interval: the mean recall, low, high
    difference: object  # an Interval of (this method - the best); zero for the best itself
    chunks: int
    tokens: float  # mean tokens read per question


def table_rows(scored: list, rag8) -> list:
    """The rows, best first: ordered by recall, then by fewer tokens read (the same answers, cheaper).
    Each interval is rag8's paired bootstrap (a mean's: its difference from 0)."""
    ordered = sorted(scored, key=lambda s: (-s.recall.mean(), s.tokens.mean(), s.method))
    best = ordered[0]
    return [Row(s.method, s.size, bootstrap(rag8, [0.0] * len(s.recall), s.recall),
                bootstrap(rag8, best.recall, s.recall), s.chunks, float(s.tokens.mean())) for s in ordered]


def bootstrap(rag8, a, b) -> Interval:
    """rag8's paired_bootstrap of mean(b - a), as labkit's Interval (its str, verdict and plain)."""
    result = rag8.paired_bootstrap([float(x) for x in a], [float(x) for x in b])
    return Interval(float(result.estimate), float(result.low), float(result.high), float(result.level))


def recommendation(rows: list, budget: int) -> str:
    """The best method and its margin over the next, or NO_WINNER when any difference's interval holds 0."""
    best = rows[0]
    if len(rows) == 1:
        return f"Only {best.method} was measured: recall {best.recall.estimate:.2f} within {budget:,} tokens."
    runner = rows[1]
    margin = _shown(-runner.difference.estimate)
    interval = f"{_shown(-runner.difference.high)} to {_shown(-runner.difference.low)}"
    tied = [row.method for row in rows[1:] if not row.difference.shown]
    level = f"{best.recall.level:.0%}"
    if tied:
        return (f"{NO_WINNER[0].upper()}{NO_WINNER[1:]}: {best.method} leads {runner.method} by {margin} "
                f"in recall within {budget:,} tokens ({level} interval {interval}), and the interval of its "
                f"difference from {_some(tied)} holds 0; more questions would narrow it.")
    return (f"Recommended: {best.method}, recall {best.recall.estimate:.2f} within {budget:,} tokens, "
            f"{margin} ahead of {runner.method} ({level} interval {interval}).")


def _some(names: list, shown: int = 3) -> str:
    """The first few names, and how many more: a sentence stays readable beside a long table."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def _shown(value: float) -> str:
    """A difference as printed, two decimals, with no "-0.00" for a difference that rounds to nothing."""
    return f"{round(value, 2) + 0.0:.2f}"


HEADERS = ("method", "size", "recall", "recall low", "recall high", "vs best", "vs best low", "vs best high",
           "chunks", "tokens read")


def _cells(row: Row) -> list:
    """A row's values for the CSV file, in HEADERS' order."""
    return [row.method, row.size or "", f"{row.recall.estimate:.4f}", f"{row.recall.low:.4f}",
            f"{row.recall.high:.4f}", f"{row.difference.estimate:.4f}", f"{row.difference.low:.4f}",
            f"{row.difference.high:.4f}", row.chunks, f"{row.tokens:.0f}"]


def table_text(rows: list, budget: int) -> list:
    """The table as printed: recall with its interval, the difference from the best with its interval."""
    width = max(len(row.method) for row in rows)
    lines = [f"{'method':<{width}}  {'size':>4}  {f'recall within {budget:,} tokens':>26}  "
             f"{'vs best':>22}  {'chunks':>7}  {'tokens read':>11}"]
    for row in rows:
        recall = f"{row.recall.estimate:.2f} [{row.recall.low:.2f}, {row.recall.high:.2f}]"
        difference = ("best" if row is rows[0] else
                      f"{row.difference.estimate:+.2f} [{row.difference.low:+.2f}, {row.difference.high:+.2f}]")
        lines.append(f"{row.method:<{width}}  {row.size or 'own':>4}  {recall:>26}  {difference:>22}  "
                     f"{row.chunks:>7}  {row.tokens:>11.0f}")
    return lines


def markdown_table(rows: list, budget: int) -> str:
    """The table as Markdown, for a README or an issue."""
    lines = [f"| method | size | recall within {budget:,} tokens [95% interval] | vs best [interval] | chunks "
             f"| tokens read |", "| --- | ---: | ---: | ---: | ---: | ---: |"]
    for row in rows:
        difference = ("best" if row is rows[0] else
                      f"{row.difference.estimate:+.2f} [{row.difference.low:+.2f}, {row.difference.high:+.2f}]")
        lines.append(f"| {row.method} | {row.size or 'own'} | {row.recall.estimate:.2f} [{row.recall.low:.2f}, "
                     f"{row.recall.high:.2f}] | {difference} | {row.chunks} | {row.tokens:.0f} |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, headers, rows) -> None:
    """A CSV file with a header line."""
    with open(path, "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file)
        writer.writerow(headers)
        writer.writerows(rows)


def save_plot(path: Path, by_size: dict, retrievers: list, budget: int, embedder: str) -> None:
    """Recall within the budget against chunk size, a line per chunker, a dashed line per retriever."""
    from matplotlib.figure import Figure

    from labkit.plots import figure_png

    figure = Figure(figsize=(8, 4.5), layout="constrained")
    axes = figure.subplots()
    for name, points in by_size.items():
        sizes = sorted(points)
        axes.plot(sizes, [points[size] for size in sizes], marker="o", label=name)
    for number, scored in enumerate(retrievers):
        axes.axhline(scored.recall.mean(), linestyle="--", color=f"C{len(by_size) + number}",
                     label=f"{scored.method} (sizes of its own)")
    sizes = sorted({size for points in by_size.values() for size in points})
    if sizes:
        axes.set_xscale("log", base=2)
        axes.set_xticks(sizes, [str(size) for size in sizes])
    axes.set_xlabel("chunk size (tokens)")
    axes.set_ylabel(f"recall within {budget:,} tokens ({embedder})")
    axes.set_title("Recall against chunk size, at equal reading cost")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=8)
    path.write_bytes(figure_png(figure))


# --------------------------------------------------------------------------
# The run
# --------------------------------------------------------------------------


class Settings(NamedTuple):
    """What a run was asked for, checked."""

    docs: Path
    questions: Path | None
    labs: Path
    budget: int
    size: int
    sizes: tuple
    title: str
    embedder: str
    cache: Path
    out: Path
    methods: str | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """compare's options, for `python -m labkit.compare` and `chunking-labs compare` alike."""
    parser.add_argument("docs", metavar="DOCS", help="a folder of .md, .markdown, .mdx or .txt files")
    parser.add_argument("--questions", metavar="QUESTIONS",
                        help='JSON lines {"question": ..., "answer": "a quote", "doc": optional}; '
                             "without it, only chunk and count")
    parser.add_argument("--labs", metavar="DIR", help="your own finished labs (default: the reference solutions)")
    parser.add_argument("--budget", type=int, default=BUDGET, help=f"tokens read per question (default {BUDGET})")
    parser.add_argument("--size", type=int, default=SIZE, help=f"chunk size of the table, in tokens (default {SIZE})")
    parser.add_argument("--sizes", default=",".join(map(str, PLOT_SIZES)),
                        help="chunk sizes of the plot, comma-separated (default %(default)s)")
    parser.add_argument("--title", help="the documents' title, in rag7's headers (default: DOCS's folder name)")
    parser.add_argument("--embedder", help="wordllama, hash or openai (default: $ACADEMY_EMBEDDER, else wordllama)")
    parser.add_argument("--cache", metavar="DIR", help=f"where embeddings are kept (default {default_cache()})")
    parser.add_argument("--out", metavar="DIR", default="compare-output",
                        help="where the table and the plot are written (default ./compare-output)")
    parser.add_argument("--methods", help='only the methods whose names hold these words, such as "rag5,rag10"')


def settings_of(arguments: argparse.Namespace) -> Settings:
    """The run's settings; a SystemExit with one line saying what to change for a bad one."""
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
    try:
        sizes = tuple(sorted({int(size) for size in arguments.sizes.split(",") if size.strip()} | {arguments.size}))
        embedder = embedder_name(arguments.embedder)
    except ValueError as error:
        raise SystemExit(f"compare: {error}; --sizes takes whole numbers such as 128,256,512") from None
    if min(sizes) < 16 or arguments.budget < 1:
        raise SystemExit("compare: chunk sizes must be 16 tokens or more, and --budget 1 or more")
    title = arguments.title if arguments.title is not None else docs.resolve().name
    cache = Path(arguments.cache) if arguments.cache else default_cache()
    return Settings(docs, questions, labs, arguments.budget, arguments.size, sizes, title, embedder, cache,
                    Path(arguments.out), arguments.methods)


def run(settings: Settings) -> int:
    """The whole comparison (or, without questions, the chunking alone); the exit code."""
    documents = read_documents(settings.docs)
    for line in documents.problems:
        print(f"  {line}", file=sys.stderr)
    if not documents.texts:
        raise SystemExit(f"compare: no readable .md, .markdown, .mdx or .txt file in {settings.docs}; "
                         f"point DOCS at a folder of Markdown or text files")
    characters = sum(map(len, documents.texts.values()))
    print(f"{len(documents.texts)} documents ({characters / 1e6:.2f} M characters) read from {settings.docs}"
          + (f", {len(documents.problems)} left out" if documents.problems else ""))
    questions = None
    if settings.questions is not None:
        questions = read_questions(settings.questions, documents.texts)
        for line in questions.problems:
            print(f"  {settings.questions.name} {line}")
        if not questions.usable:
            raise SystemExit(f"compare: none of the {questions.lines} questions in {settings.questions} is usable "
                             f"(each answer must be a quote found once in DOCS); see the lines above")
        print(f"{len(questions.usable)} of {questions.lines} questions usable" +
              (f" ({len(questions.problems)} listed above, left out)" if questions.problems else ""))
    problems = []
    methods = chosen(course_methods(settings.labs, settings.title, settings.embedder, problems)
                     + peer_methods(settings.title), settings.methods)
    for line in problems:
        print(f"  {line}")
    if not methods:
        raise SystemExit(f"compare: no method to compare (--methods {settings.methods!r} matches none)")
    settings.out.mkdir(parents=True, exist_ok=True)
    if questions is None:
        return chunk_only(settings, documents.texts, [m for m in methods if m.chunk])
    return compare(settings, documents.texts, questions.usable, methods)


def chunk_only(settings: Settings, texts: dict, methods: list) -> int:
    """Chunk every document with every chunker at --size: chunks, mean tokens and seconds, as a table."""
    progress = Progress("chunking", len(methods) * len(texts))
    rows = []
    for method in methods:
        try:
            chunked = chunk_all(method, texts, settings.size, progress)
        except ValueError as error:
            print(f"  {method.name}: left out, {error}")
            continue
        tokens = [chunk.n_tokens for _, chunk in chunked.chunks]
        rows.append([method.name, settings.size, len(tokens), f"{np.mean(tokens) if tokens else 0:.0f}",
                     f"{chunked.seconds:.2f}"])
    progress.close()
    headers = ("method", "size", "chunks", "mean tokens", "wall seconds")
    print("\n" + "  ".join(f"{h:>12}" if n else f"{h:<28}" for n, h in enumerate(headers)))
    for row in rows:
        print("  ".join(f"{str(cell):>12}" if n else f"{cell:<28}" for n, cell in enumerate(row)))
    write_csv(settings.out / "chunking.csv", headers, rows)
    print(f"\nWritten: {settings.out / 'chunking.csv'}")
    return 0


def compare(settings: Settings, texts: dict, questions: list, methods: list) -> int:
    """Chunk, embed, score and print the table; write it as CSV and Markdown, and the plot as PNG."""
    # The reference metrics, whoever wrote the chunkers: an independent ruler. A handout has no
    # solutions/: its learner's own rag8 measures then.
    rag8 = load_lab("rag8", SOLUTIONS if SOLUTIONS.is_dir() else settings.labs)
    cache = EmbeddingCache(settings.cache, settings.embedder)
    chunked = chunk_every_size([m for m in methods if m.chunk], texts, settings.sizes)
    cache.embed_missing([chunk.embedding_text for result in chunked.values() for _, chunk in result.chunks],
                        "embedding chunks")
    question_vectors = cache.vectors([question.question for question in questions], "embedding questions")
    scored = {(name, size): score_chunks(name, size, result, questions, question_vectors, cache, settings.budget,
                                         rag8) for (name, size), result in chunked.items()}
    del chunked  # the scores are all that is needed now: the retrievers' indexes take the room
    cache.memo.clear()
    retrieved = retrieve([m for m in methods if m.search], texts, questions, settings.budget, rag8)
    at_size = [result for (_, size), result in scored.items() if size == settings.size] + retrieved
    if not at_size:
        raise SystemExit("compare: every method failed (see the lines above); nothing to compare")
    rows = table_rows(at_size, rag8)
    advice = recommendation(rows, settings.budget)
    print(f"\n{len(questions)} questions, {settings.embedder}; chunks of {settings.size} tokens (overlap an eighth), "
          f"each question reading at most {settings.budget:,} tokens")
    for line in table_text(rows, settings.budget):
        print(f"  {line}")
    print(f"  [low, high]: {rows[0].recall.level:.0%} bootstrap intervals over the questions; vs best: paired, "
          f"the same questions resampled for both;\n  tokens read: mean per question; own: a retriever's sizes "
          f"are its own (chunks: the units it ranks)")
    print(f"\n{advice}")
    write_outputs(settings, rows, advice, scored, retrieved)
    print(f"embeddings: {cache.embedded:,} embedded now, {cache.reused:,} taken from the cache in {settings.cache}")
    return 0


def chunk_every_size(methods: list, texts: dict, sizes: tuple) -> dict:
    """{(method, size): Chunked} for every chunker and size, under one progress bar; a chunker that
    fails is left out with one line (a learner's lab with a TODO left, a chunk off its offsets)."""
    progress, chunked = Progress("chunking", len(methods) * len(sizes) * len(texts)), {}
    for method in methods:
        for size in sizes:
            try:
                chunked[method.name, size] = chunk_all(method, texts, size, progress)
            except ValueError as error:
                print(f"\n  {method.name}: left out, {error}")
                chunked = {key: value for key, value in chunked.items() if key[0] != method.name}
                progress.advance(len(texts) * (len(sizes) - sizes.index(size)))
                break
    progress.close()
    return chunked


def retrieve(methods: list, texts: dict, questions: list, budget: int, rag8) -> list:
    """Each retriever's Scored; one that fails is left out with one line."""
    progress, scored = Progress("retrieving (rag10, rag11)", len(methods)), []
    for method in methods:
        try:
            scored.append(score_retriever(method, texts, questions, budget, rag8))
        except Exception as error:  # a learner's lab may stop at a TODO: compare the rest
            print(f"\n  {method.name}: left out, {_one_line(error)}")
        progress.advance()
    progress.close()
    return scored


def write_outputs(settings: Settings, rows: list, advice: str, scored: dict, retrieved: list) -> None:
    """compare.csv, compare.md (the table and the recommendation) and recall-vs-size.png into --out."""
    out = settings.out
    write_csv(out / "compare.csv", HEADERS, [_cells(row) for row in rows])
    (out / "compare.md").write_text(markdown_table(rows, settings.budget) + f"\n{advice}\n", encoding="utf-8")
    by_size = {}
    for (name, size), result in scored.items():
        by_size.setdefault(name, {})[size] = float(result.recall.mean())
    save_plot(out / "recall-vs-size.png", by_size, retrieved, settings.budget, settings.embedder)
    print(f"Written: {out / 'compare.csv'}, {out / 'compare.md'}, {out / 'recall-vs-size.png'}")


def main(argv=None) -> int:
    """`python -m labkit.compare DOCS --questions QUESTIONS ...`"""
    parser = argparse.ArgumentParser(prog="python -m labkit.compare", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(settings_of(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
