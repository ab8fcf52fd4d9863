"""academy_llm: the shared helper of Chunking Labs.

Students use this module; they do not write it. It holds what every lab needs
and nothing a lab is meant to teach:

- an offline tokenizer (tiktoken's cl100k_base, loaded from the file the repo ships),
- offline embeddings ("wordllama": semantic; "hash": lexical) and cosine search,
- `Chunk`, the one data model every chunker returns, and `make_chunk` to build it,
- the checks every lab and grading test share (`check_lossless`, `check_budget`),
- tricky inputs to try a lab's functions on (`TRICKY_TEXTS`, `Case`, `tricky_cases`),
- small tools to run a lab: `load_lab`, `Invariants`, `run_lab`, and
  `show_hint` for the next level of a TODO's hint (a script's `--hint`),
- ways to see chunks: `show_chunks` (a table) and `view_chunks` (on their text:
  HTML in a notebook, ANSI colours in a terminal, plain text elsewhere),
- plots that work anywhere: `plot_chunk_sizes`, `show_figure` (a PNG file from
  a script, a picture in a notebook).

Everything is deterministic: the same text gives the same tokens, chunks and
scores on every machine, with no network.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.abc
import importlib.util
import io
import json
import os
import re
import sys
import textwrap
import traceback
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

# One BLAS thread: the course's matrix products are small, and BLAS threads left
# spinning on another core would cost more CPU time than they save.
threadpool_limits(1, user_api="blas")

HERE = Path(__file__).resolve().parent
DATASETS = HERE / "datasets"  # the corpora and questions the labs use

# --------------------------------------------------------------------------
# Tokenizer: cl100k_base, offline
# --------------------------------------------------------------------------
# tiktoken downloads its BPE file on first use, which fails without a network.
# We build the same encoding from the copy shipped in assets/, after checking
# its sha256. We never touch TIKTOKEN_CACHE_DIR, so a user's own tiktoken
# set-up keeps working side by side with ours.

TOKENIZER_FILE = HERE / "assets" / "cl100k_base.tiktoken"
TOKENIZER_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# The pre-tokenizer pattern and special tokens of cl100k_base (as in tiktoken).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

# A character is at most 4 UTF-8 bytes and every byte is a token of its own,
# so no single character ever needs more than 4 tokens.
MAX_TOKENS_PER_CHARACTER = 4

_encoding = None
_token_byte_lengths = None


class TokenizerFileError(RuntimeError):
    """The shipped tokenizer file is missing or is not the expected file."""


def read_bpe_ranks(path: Path = TOKENIZER_FILE) -> dict[bytes, int]:
    """Read a .tiktoken file (one `base64-token rank` pair a line), hash checked."""
    if not path.is_file():
        raise TokenizerFileError(
            f"tokenizer file {path} is missing; restore it with `git checkout -- assets/`"
        )
    data = path.read_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if digest != TOKENIZER_SHA256:
        raise TokenizerFileError(
            f"tokenizer file {path} fails its sha256 check (got {digest[:12]}..., "
            f"expected {TOKENIZER_SHA256[:12]}...); restore it with `git checkout -- assets/`"
        )
    ranks = {}
    for line in data.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def tokenizer():
    """The cl100k_base encoding (a tiktoken.Encoding), loaded once per process."""
    global _encoding, _token_byte_lengths
    if _encoding is None:
        import tiktoken

        ranks = read_bpe_ranks()
        _encoding = tiktoken.Encoding(
            name="cl100k_base",
            pat_str=CL100K_PATTERN,
            mergeable_ranks=ranks,
            special_tokens=CL100K_SPECIAL_TOKENS,
        )
        # How many UTF-8 bytes each token stands for: lets token_starts map
        # tokens to character offsets without decoding them one by one.
        _token_byte_lengths = np.zeros(max(ranks.values()) + 1, dtype=np.int64)
        for token_bytes, rank in ranks.items():
            _token_byte_lengths[rank] = len(token_bytes)
    return _encoding


def encode(text: str) -> list[int]:
    """Token ids of `text`. Text that looks like a special token is plain text here."""
    return tokenizer().encode_ordinary(text)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`, counted on this text alone."""
    return len(encode(text))


def token_positions(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(starts, numbers): where tokens start in `text`, as compact arrays.

    `starts` holds the character offsets of token_starts(text); `numbers[i]`
    is the position, in the text's token list, of the token that starts at
    `starts[i]`, and one last entry holds the number of tokens. A token that
    begins inside a multi-byte character is not in `starts`, but `numbers`
    still counts it: the tokens between two offsets are a difference of two
    numbers, exact even for emoji.
    """
    if not text:
        return np.zeros(0, dtype=np.int64), np.zeros(1, dtype=np.int64)
    try:
        tokens = tokenizer().encode_to_numpy(text, disallowed_special=())
    except UnicodeEncodeError:  # a lone surrogate: the slower list path replaces it
        tokens = np.asarray(encode(text), dtype=np.uint32)
    token_bytes = _token_byte_lengths[tokens]
    byte_starts = np.cumsum(token_bytes)
    byte_starts -= token_bytes  # in place: a 20 MB text has 5 million tokens
    if text.isascii():  # a byte a character: every token starts a character, at its byte offset
        return byte_starts, np.arange(len(tokens) + 1)
    # A lone surrogate is 3 bytes here and 3 bytes (U+FFFD) for tiktoken: the offsets agree.
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    continuation = np.flatnonzero((raw & 0xC0) == 0x80)  # bytes that do not start a character
    # A token start is a place to cut only if it is a character's first byte.
    at_character = np.searchsorted(continuation, byte_starts) == np.searchsorted(continuation, byte_starts, "right")
    aligned = byte_starts[at_character]
    # A byte's character offset: its byte offset less the continuation bytes before it.
    # int64 throughout: numpy would copy a smaller-typed array to compare it with a Python int.
    starts = aligned - np.searchsorted(continuation, aligned)
    numbers = np.append(np.flatnonzero(at_character), len(tokens))
    return starts, numbers


def token_starts(text: str) -> list[int]:
    """Character offsets at which a token of `text` starts, in order.

    Tokens are byte sequences, so a token may begin inside a multi-byte
    character (some emoji and rare CJK characters take 2-4 tokens). Such a
    start is not a place where text can be cut, so it is left out: the token
    is merged with the one before it. Every offset returned is a valid cut.
    The first offset is 0 for any non-empty text; `len(text)` is not included.
    """
    return token_positions(text)[0].tolist()


def is_clean_cut(text: str, position: int) -> bool:
    r"""True if text[:position] and text[position:] tokenize exactly as they do inside `text`.

    cl100k_base first splits text into pieces with CL100K_PATTERN (a word with
    the space before it, up to three digits, punctuation with the line breaks
    after it, a run of spaces or of line breaks) and then encodes each piece on
    its own. Two places end a piece whatever text surrounds them:

    - right before a space or tab that follows a non-space: "end.| Next"
      (no piece holds a non-space and then a space);
    - right after a line break that a non-space follows: "para.\n\n|Next"
      (no piece holds a line break and then a non-space).

    Cut only at such places (and at the text's ends), and the tokens of
    text[a:b] are exactly the whole text's tokens between a and b: a chunker
    can count a slice from one tokenization, without re-encoding it. Anywhere
    else the answer is False, even where a cut happens to be harmless.
    """
    if position <= 0 or position >= len(text):
        return True
    before, after = text[position - 1], text[position]
    if after in " \t":
        return not before.isspace()
    if before in "\r\n":
        return not after.isspace()
    return False


# --------------------------------------------------------------------------
# Chunk: the one data model every lab returns
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Chunk:
    """A piece of a source text, located exactly.

    `text == source[start:end]` always: the text shown to a reader and cited
    is an exact slice. What a chunker adds for the embedder (a `header` such
    as "Orbit docs > Install") lives apart from it and only enters
    `embedding_text`.
    """

    text: str
    start: int
    end: int
    n_tokens: int
    section: tuple[str, ...] = ()
    kind: str = "text"
    header: str = ""
    oversize: bool = False

    def __post_init__(self):
        if not 0 <= self.start <= self.end or len(self.text) != self.end - self.start:
            raise ValueError(
                f"Chunk span [{self.start}, {self.end}) does not fit its text of "
                f"{len(self.text)} characters; build chunks with make_chunk()"
            )

    @property
    def embedding_text(self) -> str:
        """What gets embedded: the header (if any), a line break, then the text."""
        return f"{self.header}\n{self.text}" if self.header else self.text


def make_chunk(source: str, start: int, end: int, n_tokens: int | None = None, **fields) -> Chunk:
    """The chunk `source[start:end]` with its token count; extra fields as in Chunk.

    Pass `n_tokens` only if you have just counted that very slice (so it is
    not counted twice); otherwise it is counted here.
    """
    start, end = int(start), int(end)  # plain ints, even from numpy arithmetic
    text = source[start:end]
    n_tokens = count_tokens(text) if n_tokens is None else int(n_tokens)
    return Chunk(text=text, start=start, end=end, n_tokens=n_tokens, **fields)


# --------------------------------------------------------------------------
# Checks shared by the labs and the grading tests
# --------------------------------------------------------------------------


def check_text_and_window(text, size, overlap, size_name: str = "size", unit: str = "words"):
    """Raise a one-line TypeError/ValueError saying what to change, for bad window parameters."""
    if not isinstance(text, str):
        hint = " (decode bytes first: data.decode('utf-8'))" if isinstance(text, bytes) else ""
        raise TypeError(f"text must be a str, got {type(text).__name__}{hint}")
    for name, value in ((size_name, size), ("overlap", overlap)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{name} must be an int, got {value!r}")
    if size <= 0:
        raise ValueError(f"{size_name} must be a positive number of {unit}, got {size}")
    if overlap < 0:
        raise ValueError(f"overlap must be 0 or more {unit}, got {overlap}")
    if overlap >= size:
        raise ValueError(
            f"overlap ({overlap}) must be smaller than {size_name} ({size}) so each window "
            f"moves forward; use overlap <= {size - 1}"
        )


def _preview(text: str, width: int = 40) -> str:
    """A short, one-line rendering of `text` for error messages and tables."""
    flat = text.replace("\r", "\\r").replace("\n", "\\n")
    return repr(flat if len(flat) <= width else flat[: width - 3] + "...")


def check_exact_slices(source: str, chunks) -> None:
    """Raise ValueError at the first chunk whose text is not source[start:end]."""
    for number, chunk in enumerate(chunks, 1):
        if source[chunk.start : chunk.end] != chunk.text:
            raise ValueError(
                f"chunk {number} claims [{chunk.start}, {chunk.end}) but its text "
                f"{_preview(chunk.text)} differs from the source there "
                f"{_preview(source[chunk.start:chunk.end])}"
            )


def check_in_order(chunks) -> None:
    """Raise ValueError where a chunk starts before the chunk ahead of it."""
    for number in range(1, len(chunks)):
        before, after = chunks[number - 1], chunks[number]
        if after.start < before.start or after.end < before.end:
            raise ValueError(
                f"chunk {number + 1} [{after.start}, {after.end}) comes before "
                f"chunk {number} [{before.start}, {before.end}); return chunks in document order"
            )


def find_lost_text(source: str, chunks, whitespace_may_be_lost: bool = False):
    """The first range of `source` that no chunk holds, as (start, end), or None.

    With `whitespace_may_be_lost`, gaps made only of whitespace do not count
    (a word window need not hold the spaces between two windows).
    """
    covered_to = 0
    spans = sorted((chunk.start, chunk.end) for chunk in chunks)
    for start, end in spans + [(len(source), len(source))]:
        if start > covered_to:
            gap = source[covered_to:start]
            if not (whitespace_may_be_lost and gap.strip() == ""):
                return covered_to, start
        covered_to = max(covered_to, end)
    return None


def check_lossless(source: str, chunks, whitespace_may_be_lost: bool = False) -> None:
    """Raise ValueError unless every chunk is an exact slice, in order, and nothing is lost."""
    check_exact_slices(source, chunks)
    check_in_order(chunks)
    lost = find_lost_text(source, chunks, whitespace_may_be_lost)
    if lost is not None:
        start, end = lost
        raise ValueError(
            f"characters [{start}, {end}) {_preview(source[start:end])} are in no chunk"
        )


def check_budget(chunks, max_tokens: int) -> None:
    """Raise ValueError at the first chunk whose embedded text exceeds max_tokens tokens."""
    for number, chunk in enumerate(chunks, 1):
        if chunk.oversize:
            continue
        n = count_tokens(chunk.embedding_text)
        if n > max_tokens:
            raise ValueError(
                f"chunk {number} [{chunk.start}, {chunk.end}) has {n} tokens, "
                f"over the budget of {max_tokens}"
            )


def check_chunking(source: str, chunks, max_tokens: int) -> None:
    """Raise ValueError unless `chunks` is what every chunker here must return for `source`:
    exact slices, in order, nothing lost, none empty, each within max_tokens (unless
    flagged oversize) and each with its true n_tokens. An empty text has no chunks."""
    check_lossless(source, chunks)
    check_budget(chunks, max_tokens)
    for number, chunk in enumerate(chunks, 1):
        if not chunk.text:
            raise ValueError(f"chunk {number} [{chunk.start}, {chunk.end}) is empty")
        if chunk.n_tokens != count_tokens(chunk.text):
            raise ValueError(
                f"chunk {number} [{chunk.start}, {chunk.end}) says n_tokens={chunk.n_tokens}, "
                f"but its text has {count_tokens(chunk.text)} tokens"
            )


# --------------------------------------------------------------------------
# Embeddings, offline
# --------------------------------------------------------------------------
# "wordllama": static word embeddings (256-d) whose weights ship inside the
#   wordllama wheel: semantic ("install" is near "set up"), fast, no network.
# "hash": a hashed bag of words: lexical only, it matches words, not meanings.
#   Useful to see what an embedder adds beyond shared words.

EMBEDDERS = ("wordllama", "hash")
DEFAULT_EMBEDDER = "wordllama"
HASH_DIMENSIONS = 1024
_wordllama_model = None


def embedder_name(model: str | None = None) -> str:
    """The embedder to use: `model` if given, else $ACADEMY_EMBEDDER, else wordllama."""
    name = model or os.environ.get("ACADEMY_EMBEDDER") or DEFAULT_EMBEDDER
    if name not in EMBEDDERS:
        raise ValueError(
            f"unknown embedder {name!r}; use one of {', '.join(EMBEDDERS)} "
            f"(argument model= or environment variable ACADEMY_EMBEDDER)"
        )
    return name


def _wordllama():
    """The wordllama model, loaded once, from the files inside the installed package."""
    global _wordllama_model
    if _wordllama_model is None:
        import wordllama
        from tokenizers import normalizers

        # WordLlama.load() would look for its tokenizer in a download cache and
        # try the network; pointing it at its own package folder keeps it offline.
        package_folder = Path(wordllama.__file__).parent
        _wordllama_model = wordllama.WordLlama.load(
            cache_dir=package_folder, disable_download=True
        )
        # We tokenize line by line (see _wordllama_vectors) and pool each text alone:
        # no "▁" before every line (we add LINE_START to a text's first), no padding.
        _wordllama_model.tokenizer.normalizer = normalizers.Replace(" ", LINE_START)
        _wordllama_model.tokenizer.no_padding()
    return _wordllama_model


def _hash_vector(text: str) -> np.ndarray:
    """Bag of lower-cased words, each hashed with crc32 to a signed slot."""
    codes = np.array([zlib.crc32(word.encode("utf-8")) for word in re.findall(r"\w+", text.lower())], dtype=np.int64)
    signs = np.where(codes & 0x80000000, 1.0, -1.0)
    return np.bincount(codes % HASH_DIMENSIONS, weights=signs, minlength=HASH_DIMENSIONS).astype(np.float32)


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale every row to length 1; an all-zero row stays zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def embed(texts, model: str | None = None) -> np.ndarray:
    """Embed a list of texts: a float32 array of shape (len(texts), d), unit rows.

    A single string gives a single vector, of shape (d,). An empty text (or
    one with no words) embeds to a zero row.
    """
    if isinstance(texts, str):
        return embed([texts], model)[0]
    texts = list(texts)
    name = embedder_name(model)
    if name == "hash":
        matrix = np.stack([_hash_vector(t) for t in texts]) if texts else np.zeros((0, HASH_DIMENSIONS))
    else:
        matrix = _wordllama_vectors(texts)
    return _unit_rows(np.asarray(matrix, dtype=np.float32))


def _wordllama_vectors(texts: list[str]) -> np.ndarray:
    """The mean of each text's token vectors (wordllama's pooling), summed line by line.

    wordllama's tokenizer never merges a line break with what is around it, so
    a text's tokens are its lines' tokens with a line-break token between them.
    Each distinct line is tokenized, and its token vectors summed, once per
    process: chunkings of one corpus share most of their lines, so embedding
    the second costs little more than a few additions. A text of only spaces has
    no meaning and stays a zero row.
    """
    weights = _wordllama().embedding
    lines = [[LINE_START + line if n == 0 else line for n, line in enumerate(text.split("\n"))] for text in texts]
    if len(_line_sums) > 500_000:  # a bound on memory for very long runs
        _line_sums.clear()
    missing = list(dict.fromkeys(line for text_lines in lines for line in text_lines if line not in _line_sums))
    for line, encoding in zip(missing, _wordllama().tokenizer.encode_batch_fast(missing, add_special_tokens=False)):
        _line_sums[line] = (np.add.reduce(weights[encoding.ids], axis=0), len(encoding.ids))
    line_break = weights[_wordllama().tokenizer.token_to_id("<0x0A>")]
    vectors = np.zeros((len(texts), weights.shape[1]), dtype=np.float32)
    for row, (text, text_lines) in enumerate(zip(texts, lines)):
        if text.strip():
            sums, counts = zip(*(_line_sums[line] for line in text_lines))
            breaks = len(text_lines) - 1
            vectors[row] = (np.add.reduce(sums, axis=0) + breaks * line_break) / (sum(counts) + breaks)
    return vectors


LINE_START = "\u2581"  # what wordllama's tokenizer puts before a text ("▁")
_line_sums: dict[str, tuple[np.ndarray, int]] = {}  # a line -> (sum of its token vectors, its token count)


def cosine(a, b) -> float:
    """Cosine similarity of two vectors (0.0 when either is all zeros)."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    norms = np.linalg.norm(a) * np.linalg.norm(b)
    return float(a @ b / norms) if norms else 0.0


def top_k(query_vector, matrix, k: int) -> list[tuple[int, float]]:
    """The k rows of `matrix` most similar to `query_vector`, as (row, score), best first.

    Rows are assumed unit length (as `embed` returns them), so the dot product
    is the cosine. Ties go to the earlier row, so results never depend on luck.
    """
    return top_k_each(np.asarray(query_vector)[None, :], matrix, k)[0]


def top_k_each(query_vectors, matrix, k: int) -> list[list[tuple[int, float]]]:
    """top_k for every row of `query_vectors` at once: one matrix product for all queries."""
    scores = np.asarray(query_vectors, dtype=np.float32) @ np.asarray(matrix, dtype=np.float32).T
    order = np.argsort(-scores, axis=1, kind="stable")[:, :k]
    return [[(int(i), float(row[i])) for i in best] for row, best in zip(scores, order)]


# --------------------------------------------------------------------------
# The course's dataset: Orbit's documentation and questions about it
# --------------------------------------------------------------------------


def corpus_pages() -> dict[str, str]:
    """{doc_id: exact text} of every page in datasets/orbit-docs (line endings kept)."""
    pages = {}
    for path in sorted((DATASETS / "orbit-docs").glob("*.md")):
        with open(path, encoding="utf-8", newline="") as file:
            pages[path.stem] = file.read()
    return pages


def corpus_questions(split: str | None = None) -> list[dict]:
    """The labelled questions (one dict each), optionally only the "dev" or "test" split.

    Answers are character spans into a page: page[q["start"]:q["end"]] == q["answer"];
    "multi_section" questions have more spans in q["extra_spans"].
    """
    with open(DATASETS / "orbit-questions.jsonl", encoding="utf-8") as file:
        questions = [json.loads(line) for line in file if line.strip()]
    return [q for q in questions if split is None or q["split"] == split]


# --------------------------------------------------------------------------
# Running labs
# --------------------------------------------------------------------------

_loaded_labs: dict[Path, object] = {}


def lab_file(name: str, folder) -> Path:
    """The file of lab `name` ("rag4") in `folder`: folder/rag4-chunking.py, or
    in a folder of notebooks (and no script), folder/rag4-chunking.ipynb."""
    for pattern in (f"{name}-*.py", f"{name}-*.ipynb"):
        matches = sorted(Path(folder).glob(pattern))
        if len(matches) == 1:
            return matches[0]
        if matches:
            found = ", ".join(m.name for m in matches)
            raise FileNotFoundError(f"expected one {pattern} in {folder}, found {found}")
    raise FileNotFoundError(f"expected one {name}-*.py (or {name}-*.ipynb) in {folder}, found none")


def load_lab(name: str, folder=None):
    """Import lab `name` ("rag4") as a module, without running its demo.

    Lab files have hyphens in their names, so `import` cannot reach them.
    By default the lab comes from the folder of the file that calls this
    (labs/ for a student, solutions/ for the reference). A notebook has no
    file of its own, so there it is the current folder, which Jupyter sets to
    the notebook's: notebooks/labs/rag5-....ipynb imports the rag4 notebook
    beside it, so the work saved there is what rag5 builds on. (The grader
    chooses the earlier labs itself: tests/worker.py.)
    """
    if folder is None:
        caller = sys._getframe(1).f_globals.get("__file__")
        folder = Path(caller).parent if caller else Path.cwd()
    path = lab_file(name, folder).resolve()
    if path not in _loaded_labs:
        module_name = f"lab_{name}_{zlib.crc32(str(path).encode()):08x}"
        if path.suffix == ".ipynb":
            spec = importlib.util.spec_from_loader(module_name, NotebookLoader(path), origin=str(path))
        else:
            spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        _loaded_labs[path] = module
    return _loaded_labs[path]


class NotebookLoader(importlib.abc.Loader):
    """Imports the code cells of a notebook as a module: how load_lab reads an .ipynb lab."""

    def __init__(self, path: Path):
        self.path = path

    def create_module(self, spec):
        return None  # the usual empty module

    def exec_module(self, module) -> None:
        """Run the code cells in order, each compiled on its own and read as IPython reads it.

        Compiling cell by cell lets an error name a line of its cell; IPython's
        reading turns a `%magic` into a call, so the code runs as it does in
        the notebook. __file__ is the notebook, so a lab it loads in turn is
        looked for beside it. The last cell's `if __name__ == "__main__":` is
        false here, as for an imported script.
        """
        from IPython.core.inputtransformer2 import TransformerManager

        module.__file__ = str(self.path)
        with open(self.path, encoding="utf-8") as file:
            cells = json.load(file)["cells"]
        reader = TransformerManager()
        for cell in cells:
            if cell["cell_type"] == "code":
                source = reader.transform_cell("".join(cell["source"]))
                exec(compile(source, str(self.path), "exec"), module.__dict__)


class Invariants:
    """The checks a lab ends with: each prints PASS or FAIL; the lab passes if all do."""

    def __init__(self, lab: str):
        self.lab = lab
        self.failed: list[str] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        mark = "PASS" if ok else "FAIL"
        print(f"  {mark}  {name}" + (f": {detail}" if detail else ""))
        if not ok:
            self.failed.append(name)
        return ok

    def check_chunks(self, name: str, pairs, max_tokens=None, whitespace_may_be_lost=False) -> bool:
        """Check each (source, chunks) pair: lossless, and within max_tokens if it is given.

        The first problem found (check_lossless's or check_budget's message)
        becomes the FAIL line's detail.
        """
        try:
            for source, chunks in pairs:
                check_lossless(source, chunks, whitespace_may_be_lost)
                if max_tokens is not None:
                    check_budget(chunks, max_tokens)
        except ValueError as problem:
            return self.check(name, False, str(problem))
        return self.check(name, True)

    def verdict(self) -> bool:
        if self.failed:
            print(f"\n{self.lab}: invariant failed: {'; '.join(self.failed)}")
        else:
            print(f"\n{self.lab}: all invariants hold.")
        return not self.failed

    def check_cases(self, name: str, cases) -> bool:
        """Run a battery of Cases, smallest input first; the first that goes wrong becomes
        the FAIL line's detail: what was wrong, then the call that shows it."""
        failure = first_failure(cases)
        detail = str(failure) if failure else f"{len(cases)} calls"
        return self.check(name, failure is None, detail)


# --------------------------------------------------------------------------
# Tricky inputs: where a lab's own documents never go
# --------------------------------------------------------------------------
# The course's documents are tidy: LF line ends, short words, no emoji. A
# function can be wrong and still do well on them. So each lab also calls the
# functions a student writes on a battery of small, tricky inputs, and judges
# each result with code that does not trust them: check_lossless and
# check_budget (the real tokenizer), values worked out by hand. The battery
# runs from the smallest input up and stops at the first that goes wrong, the
# easiest one to reproduce and to think about.


@dataclass(frozen=True)
class TrickyText:
    """A text that chunkers get wrong, and what makes it tricky."""

    what: str
    text: str


# Smallest first; every chunking lab tries its chunker on each. The emoji are
# written as code points: a joiner (U+200D) is invisible in an editor.
TRICKY_TEXTS = (
    TrickyText("an empty text", ""),
    TrickyText("a character of 4 tokens", "\U00029755"),
    TrickyText("only whitespace", " \t\n  "),
    TrickyText(
        "characters of several tokens", "\U00029755\U00029755 a\U00029755b \U00029755\U00029755 c"
    ),
    TrickyText("lone CR line ends", "one\rtwo\r\rthree\r"),
    TrickyText("CRLF line ends", "one.\r\ntwo\r\n\r\nthree\r\n"),
    TrickyText(
        "emoji with joiners",  # a family, a rainbow flag, a thumbs-up with a skin tone
        "\U0001F469\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 family, "
        "\U0001F3F3\ufe0f\u200d\U0001F308 flag, \U0001F44D\U0001F3FD ok",
    ),
    TrickyText(
        "every line-end style", "LF\nCRLF\r\nCR\rblank LF\n\nblank CRLF\r\n\r\nblank CR\r\rend"
    ),
    TrickyText("a URL", "go https://example.com/" + "x" * 60),
    TrickyText("no spaces at all", "a1b2c3d4" * 12),
    TrickyText(
        "long words",
        "Donaudampfschifffahrtsgesellschaft " * 3
        + "pneumonoultramicroscopicsilicovolcanoconiosis.",
    ),
    TrickyText("repeated text", "chunk chunk chunk. " * 12),
    TrickyText(
        "prose",
        "Orbit runs jobs on satellites. The server decides what runs where, and when.\n\n"
        "Satellites dial out on port 7401; they never accept connections. A satellite that "
        "misses its heartbeats for 30 seconds is marked lost, and its work is requeued.\n\n"
        "Certificates last 90 days and renew when a third of that remains.",
    ),
)


@dataclass(frozen=True)
class Case:
    """One call of a student-written function on a tricky input, and how to judge the result.

    `judge(result, *args, **keywords)` gets what the call returned and the
    call's own arguments; it raises ValueError (or AssertionError) saying in a
    few words what is wrong. `what` says what is tricky about the input.
    """

    what: str
    function: Callable
    args: tuple
    judge: Callable
    keywords: dict = field(default_factory=dict)

    def call(self) -> str:
        """The call as a learner types it, long texts cut: f('go https://example.com/x…')."""
        shown = [_shown(value) for value in self.args]
        shown += [f"{name}={_shown(value)}" for name, value in self.keywords.items()]
        return f"{self.function.__name__}({', '.join(shown)})"


def tricky_cases(function, judge, settings, texts=TRICKY_TEXTS) -> list[Case]:
    """A Case for `function` on each text at each setting (a dict of keyword arguments),
    smallest text first, each judged by `judge`."""
    return [Case(tricky.what, function, (tricky.text,), judge, dict(setting))
            for tricky in texts for setting in settings]


@dataclass(frozen=True)
class CaseFailure:
    """The first case of a battery that went wrong, and what was wrong."""

    case: Case
    problem: str

    def __str__(self) -> str:
        return f"{self.problem}\n        on {self.case.what}: {self.case.call()}"


def first_failure(cases) -> CaseFailure | None:
    """Run `cases` in order and stop at the first that goes wrong; None if none does.

    A call that raises has gone wrong too (the report says what it raised and
    where), except at a TODO: that goes on up, for run_lab to show its hint.
    """
    for case in cases:
        try:
            result = case.function(*case.args, **case.keywords)
        except Exception as error:
            if str(error).startswith("TODO("):
                raise
            return CaseFailure(case, f"raised {_error_line(error)}")
        try:
            case.judge(result, *case.args, **case.keywords)
        except (ValueError, AssertionError) as problem:
            return CaseFailure(case, str(problem))
        except Exception as error:  # the result is not even of the shape the judge reads
            problem = f"returned {_shown(result)}, unreadable: {_error_line(error)}"
            return CaseFailure(case, problem)
    return None


def returns(expected, tolerance: float = 1e-9) -> Callable:
    """A judge for a Case: the call must return `expected` (numbers equal up to `tolerance`)."""

    def judge(result, *args, **keywords):
        if not _same(result, expected, tolerance):
            raise ValueError(f"returned {_shown(result, 60)}, expected {_shown(expected, 60)}")

    return judge


def _same(value, expected, tolerance: float) -> bool:
    """value == expected, numbers up to `tolerance`; a list, tuple or array for a list or tuple."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(expected, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(expected)
                and all(_same(v, e, tolerance) for v, e in zip(value, expected)))
    if isinstance(expected, float):
        number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
        return number and abs(value - expected) <= tolerance
    return value == expected


def _shown(value, width: int = 24) -> str:
    """A value as a report shows it, on one line: a long text cut inside its quotes
    ('go https://example.com/x…'), anything else cut after 3 * width characters."""
    if isinstance(value, str) and len(value) > width:
        cut = repr(value[:width])
        return f"{cut[:-1]}…{cut[-1]}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 3 * width else text[: 3 * width - 1] + "…"


def _error_line(error: Exception) -> str:
    """'IndexError: list index out of range (rag5-recursive-chunking.py:151)': the error,
    and the line that raised it."""
    where = traceback.extract_tb(error.__traceback__)[-1]
    message = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {message} ({Path(where.filename).name}:{where.lineno})"


def _in_notebook() -> bool:
    """True inside a Jupyter kernel, where output can be HTML and a lab must not exit.

    ipykernel being imported is not enough (Jupyter's own tools import it);
    the running IPython shell must be a kernel's, which has a `kernel`.
    """
    if "ipykernel" not in sys.modules:
        return False
    from IPython import get_ipython

    return hasattr(get_ipython(), "kernel")


def todo_advice(error: BaseException) -> str:
    """Where to fill in the TODO that raised `error`, and how to run the lab after.

    In a script: 'rag4-chunking.py:73 in word_windows(), then run the lab
    again'. Code typed in a notebook cell has a temporary file name that means
    nothing to a reader, so there the place is the cell as IPython names it:
    'word_windows() in cell In[5], line 12'. A TODO in a lab that the notebook
    imported with load_lab is filled in that lab's own file, and the kernel
    keeps what it imported until it is restarted.
    """
    trace = _innermost(error)
    code, line = trace.tb_frame.f_code, trace.tb_lineno
    filename = Path(code.co_filename)
    if not _in_notebook():
        return f"{filename.name}:{line} in {code.co_name}(), then run the lab again"
    cell = _notebook_cell_name(code.co_filename)
    if cell:
        return f"{code.co_name}() in cell {cell}, line {line}, then run that cell and this one again"
    if filename.suffix == ".ipynb":
        place = f"{filename.name}, line {line} of its cell"
    else:
        place = f"{filename.name}:{line}"
    return f"{code.co_name}() in {place}, then save it and restart this notebook's kernel"


def _notebook_cell_name(filename: str) -> str:
    """'In[5]' if `filename` is the code of a cell run in this kernel, else ''."""
    from IPython import get_ipython

    shell = get_ipython()
    label = shell.compile.format_code_name(filename) if shell else None
    return label[1] if label else ""


class LabFailed(Exception):
    """Raised in a notebook (instead of exiting) when a lab's check fails or a TODO is reached."""

    def _render_traceback_(self):
        """What IPython shows instead of a traceback: the message says all a learner needs."""
        return [f"LabFailed: {self}"]


def _lab_of(main) -> str:
    """'rag5' for the main() of rag5-recursive-chunking.py (or its notebook); '' if unknown."""
    match = re.match(r"(rag\d+)-", Path(main.__code__.co_filename).name)
    return match.group(1) if match else ""


def _innermost(error: BaseException):
    """The last entry of `error`'s traceback: where it was raised (for a TODO, in the stub)."""
    trace = error.__traceback__
    while trace.tb_next is not None:
        trace = trace.tb_next
    return trace


def _run_to_first_todo(main):
    """Run `main()`: (what it returned, None), or (False, the error) if it stops at a TODO.

    A TODO is a NotImplementedError whose message starts with "TODO(", as every
    stub of labs/ raises; any other error goes on up.
    """
    try:
        return main(), None
    except NotImplementedError as error:
        if not str(error).startswith("TODO("):
            raise
        return False, error


TODO_MARK = re.compile(r"TODO\((\w+)\) (\w+)\(\)")  # "TODO(rag4) token_windows()"


def earlier_lab_first(lab: str, todo_text: str) -> str:
    """'rag5 builds on your rag4, which stops at TODO(rag4) token_windows(); finish rag4
    first' when `todo_text` is a TODO of a lab other than `lab`; '' otherwise.

    The lab run and the grader both say it, so a student reads the same words in both.
    """
    todo = TODO_MARK.match(todo_text)
    if not lab or not todo or todo.group(1) == lab:
        return ""
    earlier = todo.group(1)
    return f"{lab} builds on your {earlier}, which stops at {todo.group()}; finish {earlier} first"


def todo_message(error: BaseException, main) -> str:
    """The TODO's own message (its first hint), where to fill it in, and, when the TODO is
    in an earlier lab than the one run, that the earlier lab comes first."""
    message = f"{error}\n  -> fill in {todo_advice(error)}."
    earlier = earlier_lab_first(_lab_of(main), str(error))
    return f"{earlier}.\n{message}" if earlier else message


def run_lab(main) -> None:
    """Run a lab's `main()`, which returns True when all its invariants hold.

    As a script: exit 0 on success, 1 on a failed invariant or an unfilled TODO
    (printing the TODO's hint and where it is, not a traceback). In a notebook:
    raise LabFailed instead of exiting, so the failing cell is marked, with the
    same hint and no traceback either.

    A script takes one option, `--hint [LEVEL] [FUNCTION]` (LEVEL 1-3, 2 if
    left out): the lab runs as usual and, at the TODO where it stops, also
    shows that level of the TODO's hints. With a function's name it shows that
    function's hint at once, without running the lab. (In a notebook, where
    the kernel has arguments of its own, show_hint does the same.)
    """
    request = None if _in_notebook() else hint_request(sys.argv[1:])
    if request and request.function:
        try:
            print(function_hint(main.__globals__, request))
        except LookupError as problem:
            print(problem.args[0], file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    ok, todo = _run_to_first_todo(main)
    if todo is not None:
        message = todo_message(todo, main)
        if request:
            message += f"\n\n{todo_hint(todo, request.level)}"
        if _in_notebook():
            raise LabFailed(message) from None
        sys.stdout.flush()  # what the lab printed comes before the TODO, in a pipe too
        print(f"\n{message}", file=sys.stderr)
        sys.exit(1)
    if request:
        print(f"\n{no_todo_left(main.__globals__)}")
    if _in_notebook():
        if not ok:
            raise LabFailed("an invariant failed; see the FAIL lines above")
    else:
        sys.exit(0 if ok else 1)


# --------------------------------------------------------------------------
# Hints: three levels for each TODO
# --------------------------------------------------------------------------
# A TODO shows its first hint: what the function must achieve, and why. The
# student lab holds every level in HINTS = {function: {1: the goal, 2: the
# approach, 3: close to code}}, a cell written by tools/make_labs.py, so a
# student's copy needs nothing else. The next level is one request away:
# `--hint N` on the lab's command line, show_hint(N) in a notebook. Without a
# function's name, a request is for the TODO where the lab stops when run,
# the one its run reports, found by running it: the lab's first function to
# fill in is not always the first in the file (rag5 reaches recursive_chunks,
# which calls the others, before any of them).

HINT_LEVELS = (1, 2, 3)


@dataclass(frozen=True)
class HintRequest:
    """A request for a hint: its level, and the function it is for ("": where the lab stops)."""

    level: int
    function: str = ""


def hint_request(argv: list[str]) -> HintRequest | None:
    """The hint a lab's command line asks for, None if it asks for none.

    Anything but `--hint [LEVEL] [FUNCTION]` prints the usage and exits 2:
    a mistyped option must not pass for a plain run.
    """
    if not argv:
        return None
    words = argv[1:]
    level = int(words.pop(0)) if words and words[0].isdecimal() else 2
    if argv[0] == "--hint" and level in HINT_LEVELS and len(words) <= 1:
        return HintRequest(level, words[0] if words else "")
    usage = f"usage: python {sys.argv[0]} [--hint [LEVEL] [FUNCTION]]"
    print(f"{usage}   (LEVEL 1, 2 or 3; 2 if left out)", file=sys.stderr)
    sys.exit(2)


def show_hint(level: int = 2, function: str = "") -> None:
    """Print hint `level` (1 the goal, 2 the approach, 3 close to code) of a TODO of the lab.

    For a lab's notebook, once its cells have run: without a function, it runs
    the lab's main() as the last cell does, up to the TODO where it stops, and
    shows that TODO's hint. With one, show_hint(3, "pack"), it shows that
    function's hint, written or not, without running the lab.
    """
    if level not in HINT_LEVELS:
        raise ValueError(f"level must be 1, 2 or 3, got {level!r}")
    lab = sys._getframe(1).f_globals  # the notebook's names, where its cells put the lab
    if function:
        try:
            print(function_hint(lab, HintRequest(level, function)))
        except LookupError as problem:
            print(problem.args[0])
        return
    main = lab.get("main")
    if main is None:
        print("show_hint runs the lab's main(): run the lab's cells first")
        return
    _, todo = _run_to_first_todo(main)
    print(f"{todo_message(todo, main)}\n\n{todo_hint(todo, level)}" if todo else no_todo_left(lab))


def todo_hint(error: BaseException, level: int) -> str:
    """Hint `level` of the TODO that raised `error`, from the HINTS of the lab the stub is in
    (an earlier lab's, when that is where the run stopped)."""
    frame = _innermost(error).tb_frame
    function = frame.f_code.co_name
    levels = frame.f_globals.get("HINTS", {}).get(function)
    if not levels:
        return f"{function}() has no hints beyond its TODO."
    return format_hint(levels, function, level)


def function_hint(lab: dict, request: HintRequest) -> str:
    """Hint `request.level` of the TODO in `request.function`, from the lab's HINTS.

    LookupError, naming the lab's TODOs, if the lab has no TODO of that name.
    """
    hints = lab.get("HINTS", {})
    if request.function not in hints:
        names = ", ".join(hints) or "none (hints come with the labs to fill in, in labs/)"
        raise LookupError(f"no TODO named {request.function!r} here; this lab's TODOs: {names}")
    return format_hint(hints[request.function], request.function, request.level, by_name=True)


def format_hint(levels: dict, function: str, level: int, by_name: bool = False) -> str:
    """Hint `level` of a TODO (its last, if it has fewer), wrapped, and how to ask for the next.

    `levels` is {1: text, 2: text, ...}; `by_name` says the request named the
    function, so the next one does too.
    """
    level = min(level, len(levels))
    text = textwrap.fill(
        levels[level], 88, initial_indent="  ", subsequent_indent="  ",
        break_long_words=False, break_on_hyphens=False,  # a name stays whole, as typed
    )
    hint = f"Hint {level} of {len(levels)} for {function}():\n{text}"
    if level < len(levels):
        hint += f"\n  Still stuck? {how_to_ask(level + 1, function if by_name else '')}"
    return hint


def how_to_ask(level: int, function: str = "") -> str:
    """How to ask for hint `level` from here: a call in a notebook, the lab's command line elsewhere."""
    if _in_notebook():
        return f"show_hint({level}, {function!r})" if function else f"show_hint({level})"
    return f"python {sys.argv[0]} --hint {level}" + (f" {function}" if function else "")


def no_todo_left(lab: dict) -> str:
    """What a request for the next TODO's hint says when the lab (its names: `lab`) ran
    without reaching one."""
    done = "No TODO left: the lab ran without reaching one, so there is no TODO to give a hint for."
    if not lab.get("HINTS"):
        return done
    return f"{done} For a function you wrote, ask by its name: {how_to_ask(2, 'FUNCTION')}"


# --------------------------------------------------------------------------
# Seeing chunks: as a table, or marked on the text they come from
# --------------------------------------------------------------------------
# show_chunks lists chunks, one line each. view_chunks shows them where they
# are: the document's own text, cut where the chunks cut it. Every mark is
# placed by a chunk's start and end, its true offsets, never by adding up
# lengths or searching for its text, so a chunker that reports a wrong offset
# is seen to. Chunks alternate between two background colours, text that two
# chunks share gets a third, and each chunk opens with a label: its number,
# span and token count (and its header, heading path or flags if it has any).
#
# The view takes the form its output can show:
# - in a notebook, HTML;
# - in a terminal, ANSI colours;
# - anywhere else (a file, a pipe), or when NO_COLOR is set (no-color.org),
#   plain text: labels in {braces}, shared text in «guillemets», and {/#n}
#   where chunk n ends with no chunk after it. A view cut short by its limit
#   ends with {/#n · the view stops; ...} instead: what follows is in chunks
#   the view leaves out, not in none.

# Light backgrounds that dark text reads well on, the same in HTML and in a
# 256-colour terminal: blue and peach alternate, green is text two chunks share.
CHUNK_COLOURS = {"odd": "#afd7ff", "even": "#ffd7af", "overlap": "#afd7af"}
ANSI_COLOURS = {"odd": 153, "even": 223, "overlap": 151}  # xterm's numbers for the same colours
ANSI_LABEL_STYLE = "1;97;48;5;238"  # bold white on dark grey
TEXT_KEY = "({#n ...} opens chunk n; «...» is in two chunks; {/#n}: chunk n ends, what follows is in none)"
ANSI_KEY = (
    "(blue: chunks #1, #3, ...; peach: chunks #2, #4, ...; green, underlined: in two chunks; "
    "no colour: in no chunk)"
)


def chunk_notes(chunk) -> list[str]:
    """What a chunk carries besides its span: its header or heading path, its kind, oversize."""
    if not (chunk.header or chunk.section or chunk.oversize):
        return []
    place = f"header: {chunk.header}" if chunk.header else " › ".join(chunk.section)
    notes = [place, chunk.kind] + (["oversize"] if chunk.oversize else [])
    return [note for note in notes if note]


def show_chunks(chunks, width: int = 60, limit: int = 12) -> None:
    """Print chunks as a table: number, span, tokens, overlap with the previous one, text.

    The overlap column counts the characters a chunk shares with the one before
    it, taken from the true offsets; the shared text is shown in «guillemets».
    A chunk with a header or a heading path (or flagged oversize) gets a second
    line saying so. To see chunks on their text, use view_chunks.
    """
    print(f"  {'#':>3}  {'span':<16} {'tokens':>6} {'overlap':>8}  text")
    previous_end = None
    for number, chunk in enumerate(chunks[:limit], 1):
        shared = 0 if previous_end is None else max(0, min(previous_end, chunk.end) - chunk.start)
        shown = chunk.text.replace("\r", " ").replace("\n", " ")
        if shared:
            shown = f"«{shown[:shared]}»{shown[shared:]}"
        if len(shown) > width:
            shown = shown[: width - 3] + "..."
        span = f"[{chunk.start}, {chunk.end})"
        print(f"  {number:>3}  {span:<16} {chunk.n_tokens:>6} {shared or '-':>8}  {shown}")
        notes = chunk_notes(chunk)
        if notes:
            print(f"  {'':>3}  {'':<16} {'':>6} {'':>8}  ({', '.join(notes)})")
        previous_end = chunk.end
    if len(chunks) > limit:
        print(f"  ... {len(chunks) - limit} more chunks")


@dataclass(frozen=True)
class ViewPiece:
    """A stretch [start, end) of the source held by the same chunks (their numbers)."""

    start: int
    end: int
    holders: tuple[int, ...]

    @property
    def role(self) -> str:
        """How it is coloured: "gap" (in no chunk), "overlap" (in two or more), else "odd" or "even"."""
        if not self.holders:
            return "gap"
        if len(self.holders) > 1:
            return "overlap"
        return "odd" if self.holders[0] % 2 else "even"


def view_pieces(numbered) -> list[ViewPiece]:
    """Cut the text the chunks span at every chunk start and end; each piece knows its holders.

    `numbered` is a list of (number, chunk). Between two neighbouring cuts the
    same chunks hold every character, so one colour fits a whole piece.
    """
    cuts = sorted({chunk.start for _, chunk in numbered} | {chunk.end for _, chunk in numbered})
    pieces = []
    for start, end in zip(cuts, cuts[1:]):
        holders = tuple(number for number, chunk in numbered if chunk.start <= start and end <= chunk.end)
        pieces.append(ViewPiece(start, end, holders))
    return pieces


def view_marks(numbered, cut_short: bool = False) -> list[tuple[str, object]]:
    """The view in reading order, as ("end", number), ("label", number) and ("text", piece).

    At each cut come first the ends of chunks that stop with no chunk going
    on after them, then the labels of the chunks that start there, then the
    text up to the next cut. Each renderer only decides how a mark looks.
    In a view `cut_short` (chunks after it are left out), the ends at its last
    cut are ("stop", number): the text after them may well be in a chunk the
    view does not show, so no mark may say it is in none.
    """
    pieces = {piece.start: piece for piece in view_pieces(numbered)}
    cuts = sorted({chunk.start for _, chunk in numbered} | {chunk.end for _, chunk in numbered})
    marks = []
    for cut in cuts:
        if not any(chunk.start <= cut < chunk.end for _, chunk in numbered):
            ending = "stop" if cut_short and cut == cuts[-1] else "end"
            ending_here = [number for number, chunk in numbered if chunk.start < chunk.end == cut]
            marks += [(ending, number) for number in ending_here]
        marks += [("label", number) for number, chunk in numbered if chunk.start == cut]
        if cut in pieces:
            marks.append(("text", pieces[cut]))
    return marks


def chunk_label(number: int, chunk, source: str) -> str:
    """'#3 [412, 980) 128 tokens', then the chunk's notes, and a warning if its text is not the source's."""
    notes = chunk_notes(chunk)
    if source[chunk.start : chunk.end] != chunk.text:
        notes.append("its text differs from the source at this span")
    tokens = "1 token" if chunk.n_tokens == 1 else f"{chunk.n_tokens} tokens"
    return " · ".join([f"#{number} [{chunk.start}, {chunk.end}) {tokens}"] + notes)


def view_caption(source: str, chunks, first: int, shown) -> str:
    """'chunks 2-4 of 14, characters [412, 2210) of 45120', or why there is nothing to show."""
    if not shown:
        return f"no chunk to show ({len(chunks)} in all)"
    numbers = f"chunk {first + 1}" if len(shown) == 1 else f"chunks {first + 1}-{first + len(shown)}"
    start = min(chunk.start for chunk in shown)
    end = max(chunk.end for chunk in shown)
    return f"{numbers} of {len(chunks)}, characters [{start}, {end}) of {len(source)}"


def use_colour(stream) -> bool:
    """ANSI colours only for a terminal, and never when NO_COLOR is set (to anything but "")."""
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def view_chunks(source: str, chunks, first: int = 0, limit: int = 4) -> None:
    """Show chunks[first:first + limit] on `source`, the text they were cut from.

    In a notebook as HTML; in a terminal with ANSI colours; elsewhere, or with
    NO_COLOR set, as plain text with bracket markers.
    """
    if _in_notebook():
        from IPython.display import HTML, display

        display(HTML(chunks_as_html(source, chunks, first, limit)))
    else:
        print(chunks_as_text(source, chunks, first, limit, colour=use_colour(sys.stdout)))


def chunks_as_text(source: str, chunks, first: int = 0, limit: int = 4, colour: bool = False) -> str:
    """The view for a terminal (`colour`: ANSI colours) or for plain text (bracket markers)."""
    shown = chunks[first : first + limit]
    numbered = list(enumerate(shown, first + 1))
    by_number = dict(numbered)
    left_out = len(chunks) - first - len(shown)  # chunks after the view
    out = [view_caption(source, chunks, first, shown), "\n", ANSI_KEY if colour else TEXT_KEY, "\n"]
    for mark, value in view_marks(numbered, cut_short=left_out > 0):
        if mark == "label":
            label = chunk_label(value, by_number[value], source)
            out.append(_ansi(f" {label} ", ANSI_LABEL_STYLE) if colour else f"{{{label}}}")
        elif mark == "end" and not colour:
            out.append(f"{{/#{value}}}")
        elif mark == "stop" and not colour:
            more = "1 more chunk" if left_out == 1 else f"{left_out} more chunks"
            out.append(f"{{/#{value} · the view stops; {more} not shown}}")
        elif mark == "text":
            out.append(_text_piece(source[value.start : value.end], value.role, colour))
    return "".join(out)


def _text_piece(text: str, role: str, colour: bool) -> str:
    """One piece of the text view: coloured by its role, or with shared text in «guillemets»."""
    if not colour:
        return f"«{text}»" if role == "overlap" else text
    if role == "gap":
        return text
    underline = "4;" if role == "overlap" else ""
    return _ansi(text, f"30;{underline}48;5;{ANSI_COLOURS[role]}")


def _ansi(text: str, style: str) -> str:
    """`text` in an ANSI style, closed at each line break so the colour stops with the text."""
    lines = []
    for line in text.split("\n"):
        lines.append(f"\x1b[{style}m{line}\x1b[0m" if line else "")
    return "\n".join(lines)


_HTML_PIECE_STYLES = {
    "odd": f"background:{CHUNK_COLOURS['odd']};color:#1a1a1a",
    "even": f"background:{CHUNK_COLOURS['even']};color:#1a1a1a",
    "overlap": f"background:{CHUNK_COLOURS['overlap']};color:#1a1a1a;text-decoration:underline",
    "gap": "",
}
# Lines wrap at spaces, as a reader expects (JupyterLab's own outputs may break inside words).
_HTML_TEXT_STYLE = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;line-height:1.6;margin:4px 0"
_HTML_LABEL_STYLE = (
    "background:#3a3a3a;color:#ffffff;border-radius:4px;padding:0 5px;margin-right:3px;"
    "font-family:sans-serif;font-size:78%;white-space:nowrap"
)


def chunks_as_html(source: str, chunks, first: int = 0, limit: int = 4) -> str:
    """The view as one HTML fragment, styled inline.

    Inline styles look the same in JupyterLab, in a notebook exported by
    nbconvert and in a browser, with no style sheet to load. Classes and
    data- attributes (chunk numbers, true offsets) let a test find each part.
    """
    shown = chunks[first : first + limit]
    numbered = list(enumerate(shown, first + 1))
    by_number = dict(numbered)
    parts = []
    for mark, value in view_marks(numbered):
        if mark == "label":
            label = escape(chunk_label(value, by_number[value], source))
            parts.append(
                f'<span class="chunk-label" data-chunk="{value}" style="{_HTML_LABEL_STYLE}">{label}</span>'
            )
        elif mark == "text":
            holders = " ".join(str(number) for number in value.holders)
            parts.append(
                f'<span class="chunk-piece chunk-{value.role}" data-chunks="{holders}" '
                f'data-start="{value.start}" data-end="{value.end}" '
                f'style="{_HTML_PIECE_STYLES[value.role]}">{escape(source[value.start : value.end])}</span>'
            )
    caption = escape(view_caption(source, chunks, first, shown))
    return (
        f'<div class="chunk-view" data-chunks="{len(shown)}">'
        f'<div class="chunk-view-caption" style="font-family:sans-serif;font-size:90%">{caption}</div>'
        f'<pre class="chunk-view-text" style="{_HTML_TEXT_STYLE}">'
        f'{"".join(parts)}</pre>{_html_key()}</div>'
    )


def _html_key() -> str:
    """A line of colour swatches saying what each colour means."""
    meanings = (
        ("odd", "chunks #1, #3, ..."),
        ("even", "chunks #2, #4, ..."),
        ("overlap", "in two chunks"),
        ("gap", "in no chunk"),
    )
    swatches = "".join(
        f'<span style="{_HTML_PIECE_STYLES[role]};border:1px solid #999;padding:0 6px;margin:0 4px 0 10px">'
        f"&nbsp;</span>{meaning}"
        for role, meaning in meanings
    )
    return f'<div class="chunk-view-key" style="font-family:sans-serif;font-size:80%">{swatches}</div>'


# --------------------------------------------------------------------------
# Plots: a PNG file beside a script's run, a picture in a notebook
# --------------------------------------------------------------------------
# matplotlib draws with its Agg backend, which needs no screen. These helpers
# never import pyplot, so no window can open and no figure outlives its plot,
# in a script, in a notebook, or on a machine with no display at all.
#
# A plot says what it shows: plot_chunk_sizes records a digest of its inputs
# on the figure (`png_source`), and figure_png writes it into the PNG as a
# text chunk. A copy of a plot (the README's docs/chunk-sizes.png) is then
# checked against a fresh run by comparing digests, not pixels.

PNG_SOURCE_KEY = "Source"  # the PNG text chunk that holds a plot's digest


def plot_chunk_sizes(sizes: dict, max_tokens: int, title: str):
    """Histograms of chunk sizes in tokens, one row per strategy, the budget a dashed line.

    `sizes` maps a strategy's name to the token counts of its chunks. Rows
    share their x axis, so strategies compare at a glance: windows pile up at
    the budget, seams spread below it, an oversize block stands past the line.
    The axis stops at twice the budget; a bigger chunk (a huge table) is drawn
    in the last bar and counted in its row's title, so a few giants do not
    squeeze everything else into a corner.
    """
    from matplotlib.figure import Figure

    largest = max([max_tokens] + [max(counts) for counts in sizes.values() if counts])
    axis_end = min(largest, 2 * max_tokens)
    # Bar edges sit half a token past whole numbers, so a chunk of exactly
    # max_tokens is drawn left of the budget line, where it belongs.
    bins = np.arange(0, axis_end + max_tokens / 16, max_tokens / 16) + 0.5
    figure = Figure(figsize=(7, 1.0 + 1.5 * len(sizes)), layout="constrained")
    rows = figure.subplots(len(sizes), 1, sharex=True, squeeze=False)[:, 0]
    for number, (name, counts) in enumerate(sizes.items()):
        row = rows[number]
        row.hist(np.minimum(counts, axis_end), bins=bins, color=f"C{number}")
        row.axvline(max_tokens, color="black", linestyle="--", linewidth=1)
        row.set_title(size_summary(name, counts, axis_end), loc="left", fontsize=10)
        row.set_ylabel("chunks")
    rows[-1].set_xlabel(f"tokens per chunk (dashed line: the budget, {max_tokens})")
    figure.suptitle(title)
    figure.png_source = chunk_sizes_source(sizes, max_tokens, title)
    return figure


def chunk_sizes_source(sizes: dict, max_tokens: int, title: str) -> str:
    """'chunk-sizes sha256:...': a digest of all a size plot shows, the same on every machine.

    The rows keep their order (it is the plot's), and counts are plain ints,
    so numpy's integers and Python's give the same digest.
    """
    shown = {
        "sizes": [[name, [int(count) for count in counts]] for name, counts in sizes.items()],
        "max_tokens": int(max_tokens),
        "title": title,
    }
    digest = hashlib.sha256(json.dumps(shown).encode("utf-8")).hexdigest()
    return f"chunk-sizes sha256:{digest}"


def size_summary(name: str, counts, axis_end: int) -> str:
    """'recursive: 1108 chunks, median 109 tokens', and how many lie past the axis."""
    if not counts:
        return f"{name}: no chunks"
    summary = f"{name}: {len(counts)} chunks, median {np.median(counts):.0f} tokens"
    beyond = [count for count in counts if count > axis_end]
    if beyond:
        summary += f"; {len(beyond)} over {axis_end} (up to {max(beyond)}) in the last bar"
    return summary


def figure_png(figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes. A figure made without pyplot is saved by Agg, matplotlib's PNG painter.

    A figure that records what it shows (`png_source`) carries it in the PNG's text chunks.
    """
    source = getattr(figure, "png_source", None)
    metadata = {PNG_SOURCE_KEY: source} if source else None
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def show_figure(figure, filename: str) -> None:
    """Show a figure inline in a notebook; from a script, save it as `filename` in the current folder."""
    png = figure_png(figure)
    if _in_notebook():
        from IPython.display import Image, display

        display(Image(data=png, format="png"))
        return
    path = Path(filename).resolve()
    path.write_bytes(png)
    print(f"   plot saved to {path}")
