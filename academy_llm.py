"""academy_llm: the shared helper of Chunking Labs.

Students use this module; they do not write it. It holds what every lab needs
and nothing a lab is meant to teach:

- an offline tokenizer (tiktoken's cl100k_base, loaded from the file the repo ships),
- offline embeddings ("wordllama": semantic; "hash": lexical) and cosine search,
- `Chunk`, the one data model every chunker returns, and `make_chunk` to build it,
- the checks every lab and grading test share (`check_lossless`, `check_budget`),
- small tools to run a lab: `load_lab`, `show_chunks`, `Invariants`, `run_lab`.

Everything is deterministic: the same text gives the same tokens, chunks and
scores on every machine, with no network.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import json
import os
import re
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path

import numpy as np

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


def token_starts(text: str) -> list[int]:
    """Character offsets at which a token of `text` starts, in order.

    Tokens are byte sequences, so a token may begin inside a multi-byte
    character (some emoji and rare CJK characters take 2-4 tokens). Such a
    start is not a place where text can be cut, so it is left out: the token
    is merged with the one before it. Every offset returned is a valid cut.
    The first offset is 0 for any non-empty text; `len(text)` is not included.
    """
    if not text:
        return []
    try:
        tokens = tokenizer().encode_to_numpy(text, disallowed_special=()).astype(np.int64)
    except UnicodeEncodeError:  # a lone surrogate: the slower list path replaces it
        tokens = np.asarray(encode(text), dtype=np.int64)
    byte_starts = np.concatenate(([0], np.cumsum(_token_byte_lengths[tokens])[:-1]))
    # A lone surrogate is 3 bytes here and 3 bytes (U+FFFD) for tiktoken: the offsets agree.
    raw = np.frombuffer(text.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    is_char_start = (raw & 0xC0) != 0x80
    char_index_of_byte = np.cumsum(is_char_start) - 1
    aligned = byte_starts[is_char_start[byte_starts]]
    # Distinct character starts map to distinct, increasing character offsets.
    return char_index_of_byte[aligned].tolist()


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


def make_chunk(source: str, start: int, end: int, **fields) -> Chunk:
    """The chunk `source[start:end]`, with its token count; extra fields as in Chunk."""
    text = source[start:end]
    return Chunk(text=text, start=start, end=end, n_tokens=count_tokens(text), **fields)


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

        # WordLlama.load() would look for its tokenizer in a download cache and
        # try the network; pointing it at its own package folder keeps it offline.
        package_folder = Path(wordllama.__file__).parent
        _wordllama_model = wordllama.WordLlama.load(
            cache_dir=package_folder, disable_download=True
        )
    return _wordllama_model


def _hash_vector(text: str) -> np.ndarray:
    """Bag of lower-cased words, each hashed with crc32 to a signed slot."""
    vector = np.zeros(HASH_DIMENSIONS, dtype=np.float32)
    for word in re.findall(r"\w+", text.lower()):
        code = zlib.crc32(word.encode("utf-8"))
        sign = 1.0 if code & 0x80000000 else -1.0
        vector[code % HASH_DIMENSIONS] += sign
    return vector


def _unit_rows(matrix: np.ndarray) -> np.ndarray:
    """Scale every row to length 1; an all-zero row stays zero."""
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return (matrix / np.where(norms == 0, 1, norms)).astype(np.float32)


def embed(texts, model: str | None = None) -> np.ndarray:
    """Embed a list of texts: a float32 array of shape (len(texts), d), unit rows.

    An empty text (or one with no words) embeds to a zero row.
    """
    if isinstance(texts, str):
        raise TypeError("embed() takes a list of texts; wrap a single text: embed([text])")
    texts = list(texts)
    name = embedder_name(model)
    if name == "hash":
        matrix = np.stack([_hash_vector(t) for t in texts]) if texts else np.zeros((0, HASH_DIMENSIONS))
    else:
        matrix = _wordllama_vectors(texts)
    return _unit_rows(np.asarray(matrix, dtype=np.float32))


def _wordllama_vectors(texts: list[str], batch_size: int = 32) -> np.ndarray:
    """The mean of each text's token vectors: wordllama's pooling, without its padding.

    wordllama's own embed() pads every batch to its longest text, which makes
    long chunks slow; summing each text's rows with np.add.reduceat gives the
    same means several times faster. Small batches keep the temporary arrays
    small enough to be reused rather than paged in afresh. A text with no
    tokens stays a zero row.
    """
    model = _wordllama()
    weights = model.embedding
    vectors = np.zeros((len(texts), weights.shape[1]), dtype=np.float32)
    for first in range(0, len(texts), batch_size):
        batch = texts[first : first + batch_size]
        encodings = model.tokenizer.encode_batch(batch, add_special_tokens=False)
        ids = [
            np.asarray(e.ids, dtype=np.int64)[np.asarray(e.attention_mask, dtype=bool)]
            if text.strip() else np.zeros(0, dtype=np.int64)  # only spaces: no meaning, a zero row
            for text, e in zip(batch, encodings)
        ]
        rows = [first + n for n, token_ids in enumerate(ids) if len(token_ids)]
        if not rows:
            continue
        lengths = np.array([len(token_ids) for token_ids in ids if len(token_ids)])
        flat = np.clip(np.concatenate([token_ids for token_ids in ids if len(token_ids)]), 0, len(weights) - 1)
        offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
        vectors[rows] = np.add.reduceat(weights[flat], offsets, axis=0) / lengths[:, None]
    return vectors


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
    scores = np.asarray(matrix, dtype=np.float32) @ np.asarray(query_vector, dtype=np.float32)
    order = np.argsort(-scores, kind="stable")[:k]
    return [(int(i), float(scores[i])) for i in order]


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
    """The file of lab `name` ("rag4") in `folder`, e.g. folder/rag4-chunking.py."""
    matches = sorted(Path(folder).glob(f"{name}-*.py"))
    if len(matches) != 1:
        found = ", ".join(m.name for m in matches) or "none"
        raise FileNotFoundError(f"expected one {name}-*.py in {folder}, found {found}")
    return matches[0]


def load_lab(name: str, folder=None):
    """Import lab `name` ("rag4") as a module, without running its demo.

    Lab files have hyphens in their names, so `import` cannot reach them.
    By default the lab comes from the folder of the file that calls this
    (labs/ for a student, solutions/ for the reference). A grader sets
    $ACADEMY_EARLIER_LABS to a reference folder, so that a student's later lab
    is graded on its own even when an earlier one is unfinished.
    """
    if folder is None:
        caller = sys._getframe(1).f_globals.get("__file__")
        folder = os.environ.get("ACADEMY_EARLIER_LABS") or (
            Path(caller).parent if caller else Path.cwd()
        )
    path = lab_file(name, folder).resolve()
    if path not in _loaded_labs:
        module_name = f"lab_{name}_{zlib.crc32(str(path).encode()):08x}"
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


def show_chunks(chunks, width: int = 60, limit: int = 12) -> None:
    """Print chunks as a table: number, span, tokens, overlap with the previous one, text.

    The overlap column counts the characters a chunk shares with the one before
    it, taken from the true offsets; the shared text is shown in «guillemets».
    A chunk with a header or a heading path (or flagged oversize) gets a second
    line saying so.
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
        if chunk.header or chunk.section or chunk.oversize:
            place = f"header: {chunk.header}" if chunk.header else " › ".join(chunk.section)
            notes = [place, chunk.kind] + (["oversize"] if chunk.oversize else [])
            print(f"  {'':>3}  {'':<16} {'':>6} {'':>8}  ({', '.join(n for n in notes if n)})")
        previous_end = chunk.end
    if len(chunks) > limit:
        print(f"  ... {len(chunks) - limit} more chunks")


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

    def verdict(self) -> bool:
        if self.failed:
            print(f"\n{self.lab}: invariant failed: {'; '.join(self.failed)}")
        else:
            print(f"\n{self.lab}: all invariants hold.")
        return not self.failed


def _in_notebook() -> bool:
    return "ipykernel" in sys.modules


def todo_location(error: BaseException) -> str:
    """'file:line in function' of the innermost frame that raised `error`."""
    trace = error.__traceback__
    while trace.tb_next is not None:
        trace = trace.tb_next
    code = trace.tb_frame.f_code
    return f"{Path(code.co_filename).name}:{trace.tb_lineno} in {code.co_name}()"


class LabFailed(Exception):
    """Raised in a notebook (instead of exiting) when a lab's check fails."""


def run_lab(main) -> None:
    """Run a lab's `main()`, which returns True when all its invariants hold.

    As a script: exit 0 on success, 1 on a failed invariant or an unfilled TODO
    (printing the TODO's hint and where it is, not a traceback). In a notebook:
    raise LabFailed instead of exiting, so the failing cell is marked.
    """
    try:
        ok = main()
    except NotImplementedError as error:
        if not str(error).startswith("TODO("):
            raise
        message = f"{error}\n  -> fill in {todo_location(error)}, then run the lab again."
        if _in_notebook():
            raise LabFailed(message) from None
        print(f"\n{message}", file=sys.stderr)
        sys.exit(1)
    if _in_notebook():
        if not ok:
            raise LabFailed("an invariant failed; see the FAIL lines above")
    else:
        sys.exit(0 if ok else 1)
