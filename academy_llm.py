"""academy_llm: the helper every lab imports, and the one file of the course's own to read.

It holds what every lab needs and nothing a lab is meant to teach:

- an offline tokenizer (tiktoken's cl100k_base, loaded from the file the repo ships),
- `Chunk`, the one data model every chunker returns, and `make_chunk` to build it,
- the checks every lab and grading test share (`check_lossless`, `check_budget`),
- embeddings (offline: "minilm" contextual, the default; "wordllama" static and fast;
  "hash" lexical; "openai": a server's) and cosine search,
- the course's dataset: Orbit's documentation and questions labelled with spans.

What runs, checks and shows a lab (load_lab, run_lab, Invariants, hints, the chunk
view, plots) is in the package `labkit`; a lab imports it from there.

Everything is deterministic: the same text gives the same tokens, chunks and
scores on every machine, with no network (but for the "openai" embedder).
"""

from __future__ import annotations

import base64
import functools
import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

# One BLAS thread: the course's matrix products are small, and BLAS threads left
# spinning on another core would cost more CPU time than they save.
threadpool_limits(1, user_api="blas")

__all__ = [  # what a lab or a test may import from here
    "COURSE_ROOT", "DATASETS", "MAX_TOKENS_PER_CHARACTER", "TOKENIZER_FILE", "TokenizerFileError",
    "read_bpe_ranks", "tokenizer", "encode", "count_tokens", "token_positions", "token_starts",
    "is_clean_cut", "Chunk", "make_chunk", "check_text_and_window", "check_exact_slices",
    "check_in_order", "find_lost_text", "check_lossless", "check_budget", "check_chunking",
    "EMBEDDERS", "embedder_name", "describe_embedder", "embed", "embed_cost", "cosine", "top_k", "top_k_each",
    "read_page", "corpus_pages", "corpus_questions",
]

# The course's files (datasets/, assets/, the labs' hints and public tests, the reference labs
# compare chunks with): beside this module in a clone or a handout. A wheel installs modules
# only, so its build (setup.py) puts the same files in labkit/course/, found here once installed.
HERE = Path(__file__).resolve().parent
COURSE_ROOT = HERE / "labkit" / "course" if (HERE / "labkit" / "course").is_dir() else HERE
DATASETS = COURSE_ROOT / "datasets"  # the corpora and questions the labs use

# --------------------------------------------------------------------------
# Tokenizer: cl100k_base, offline
# --------------------------------------------------------------------------
# tiktoken downloads its BPE file on first use, which fails without a network.
# We build the same encoding from the copy shipped in assets/, after checking
# its sha256. We never touch TIKTOKEN_CACHE_DIR, so a user's own tiktoken
# set-up keeps working side by side with ours.

TOKENIZER_FILE = COURSE_ROOT / "assets" / "cl100k_base.tiktoken"
TOKENIZER_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"

# The pre-tokenizer pattern and special tokens of cl100k_base (as in tiktoken).
CL100K_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+|"""
    r""" ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
CL100K_SPECIAL_TOKENS = {"<|endoftext|>": 100257, "<|fim_prefix|>": 100258, "<|fim_middle|>": 100259,
                         "<|fim_suffix|>": 100260, "<|endofprompt|>": 100276}

# A character is at most 4 UTF-8 bytes and every byte is a token of its own,
# so no single character ever needs more than 4 tokens.
MAX_TOKENS_PER_CHARACTER = 4

_encoding = None
# Per token id, from its bytes: how many characters it starts (its bytes that are not UTF-8
# continuation bytes, 10xxxxxx), and whether its first byte starts one. token_positions reads
# character offsets from them, without decoding a token or holding the text's bytes.
_token_characters = None
_token_opens_character = None
CONTINUATION_BYTES = bytes(range(0x80, 0xC0))


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
    global _encoding, _token_characters, _token_opens_character
    if _encoding is None:
        import tiktoken

        ranks = read_bpe_ranks()
        _encoding = tiktoken.Encoding(name="cl100k_base", pat_str=CL100K_PATTERN, mergeable_ranks=ranks,
                                      special_tokens=CL100K_SPECIAL_TOKENS)
        _token_characters = np.zeros(max(ranks.values()) + 1, dtype=np.uint8)  # a token is at most 128 bytes
        _token_opens_character = np.zeros(len(_token_characters), dtype=bool)
        for token_bytes, rank in ranks.items():
            _token_characters[rank] = len(token_bytes.translate(None, CONTINUATION_BYTES))
            _token_opens_character[rank] = token_bytes[0] not in CONTINUATION_BYTES
    return _encoding


def encode(text: str) -> list[int]:
    """Token ids of `text`. Text that looks like a special token is plain text here."""
    return tokenizer().encode_ordinary(text)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`, counted on this text alone.

    The counts of the last few thousand texts of up to REMEMBERED_CHARACTERS are kept: rag10 and
    rag11 count the same parents for question after question, and each count is a tokenization.
    """
    if len(text) > REMEMBERED_CHARACTERS:
        return len(encode(text))
    return _remembered_count(text)


REMEMBERED_CHARACTERS = 4_096  # rag11's parents: 1,223 characters at most. Kept: 16 MB at most (64 in emoji)


@functools.lru_cache(maxsize=4096)
def _remembered_count(text: str) -> int:
    return len(encode(text))


@functools.lru_cache(maxsize=8)
def token_positions(text: str) -> tuple[np.ndarray, np.ndarray]:
    """(starts, numbers): where tokens start in `text`, as compact arrays.

    `starts` holds the character offsets of token_starts(text); `numbers[i]`
    is the position, in the text's token list, of the token that starts at
    `starts[i]`, and one last entry holds the number of tokens. A token that
    begins inside a multi-byte character is not in `starts`, but `numbers`
    still counts it: the tokens between two offsets are a difference of two
    numbers, exact even for emoji.

    The last few texts' answers are kept (read-only arrays), so a page that
    several chunkers read in a row (rag10 builds its parents, its units and
    rag7's chunks of each page) is tokenized once.
    """
    starts, numbers = _token_positions(text)
    starts.setflags(write=False)
    numbers.setflags(write=False)
    return starts, numbers


def _token_positions(text: str) -> tuple[np.ndarray, np.ndarray]:
    """token_positions, computed with little memory: a 20 MB text has 5 million tokens.

    Each token is kept as two bytes (the characters it starts, whether it
    starts one) instead of its id, and the text is tokenized a piece at a time
    (_pieces), so neither the token ids nor a UTF-8 copy of the whole text is
    ever held; only the two int64 arrays returned are the text's size.
    """
    tokenizer()
    characters, opens = [], []
    for start, end in _pieces(text):
        tokens = _token_ids(text[start:end])  # text[0:len(text)] is the text itself, not a copy
        characters.append(_token_characters.take(tokens))  # take(): quicker than indexing by an array
        opens.append(_token_opens_character.take(tokens))
    characters, opens = np.concatenate(characters), np.concatenate(opens)
    # A token that begins inside a character is no place to cut: numbers skips it, and the
    # token before it takes its characters. numbers ends with the number of tokens.
    numbers = np.flatnonzero(np.append(opens, True))
    # int64 throughout: numpy would copy a smaller-typed array to compare it with a Python int.
    starts = np.zeros(len(numbers) - 1, dtype=np.int64)
    starts[1:] = characters[opens][:-1]  # starts[i + 1] - starts[i]: the characters of token numbers[i]...
    skipped = np.flatnonzero(~opens)
    owners = skipped - np.arange(len(skipped))  # ...and of the skipped tokens after it: i + 1 for each
    before_last = owners < len(starts)  # a skipped token after the last start moves no start
    np.add.at(starts, owners[before_last], characters[skipped[before_last]])
    np.cumsum(starts, out=starts)
    return starts, numbers


PIECE = 1 << 18  # characters token_positions tokenizes at a time, at least


def _pieces(text: str):
    """(start, end) of consecutive pieces of `text`, each cut at a clean cut some PIECE characters on.

    The tokens of the pieces are the text's tokens (is_clean_cut), so a long
    text can be tokenized one piece at a time. Text with no clean cut past
    PIECE characters is one piece.
    """
    start = 0
    while len(text) - start > PIECE:
        cut = _clean_cut_from(text, start + PIECE)
        if cut is None:
            break
        yield start, cut
        start = cut
    yield start, len(text)


CUT_CANDIDATE = re.compile(r"(?<=\S)[ \t]|(?<=[\r\n])\S")  # what is_clean_cut accepts, near enough


def _clean_cut_from(text: str, position: int) -> int | None:
    """The first clean cut strictly inside `text` at or after `position`, or None."""
    for match in CUT_CANDIDATE.finditer(text, position):
        if is_clean_cut(text, match.start()):  # re's \s and str.isspace differ on a few characters
            return match.start()
    return None


def _token_ids(text: str) -> np.ndarray:
    """The token ids of `text` as a numpy array; text that looks like a special token is plain text."""
    try:
        return tokenizer().encode_to_numpy(text, disallowed_special=())
    except UnicodeEncodeError:  # a lone surrogate: the slower list path replaces it with U+FFFD
        return np.asarray(encode(text), dtype=np.uint32)


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
    if not 0 <= start <= end <= len(source):
        raise ValueError(f"make_chunk: the span [{start}, {end}) is not one of the source's "
                         f"{len(source)} characters; a chunk needs 0 <= start <= end <= {len(source)}")
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
    """A short, one-line rendering of `text` for error messages and tables: its repr, which writes a
    line break as \\n once, cut to `width` characters of the text."""
    return repr(text if len(text) <= width else text[: width - 3] + "...")


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
                f"chunk {number + 1} [{after.start}, {after.end}) starts or ends before "
                f"chunk {number} [{before.start}, {before.end}), the one ahead of it; return chunks "
                "in document order"
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
        raise ValueError(f"characters [{start}, {end}) {_preview(source[start:end])} are in no chunk")


def check_budget(chunks, max_tokens: int) -> None:
    """Raise ValueError at the first chunk whose embedded text exceeds max_tokens tokens."""
    for number, chunk in enumerate(chunks, 1):
        if chunk.oversize:
            continue
        n = count_tokens(chunk.embedding_text)
        if n > max_tokens:
            counted = " with its header" if chunk.header else ""
            raise ValueError(f"chunk {number} [{chunk.start}, {chunk.end}) has {n} tokens{counted}, "
                             f"over the budget of {max_tokens}")


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
# Embeddings
# --------------------------------------------------------------------------
# "minilm" (the default): all-MiniLM-L6-v2, a small contextual model (384-d): it reads a
#   sentence, where wordllama averages words. Run by onnxruntime from the model the course
#   ships in assets/, offline; the course's own texts' vectors ship too, and any other text's
#   is kept in the embedding cache once computed (labkit/minilm.py).
# "wordllama": static word embeddings (256-d) whose weights ship inside the
#   wordllama wheel: semantic ("install" is near "set up"), no network, about a hundred
#   times faster than minilm: the fast choice (ACADEMY_EMBEDDER=wordllama).
# "hash": a hashed bag of words: lexical only, it matches words, not meanings.
#   Useful to see what an embedder adds beyond shared words.
# "openai": a model behind the OpenAI embeddings API, cached (labkit/openai_embedder.py).

EMBEDDERS = ("wordllama", "hash", "openai", "minilm")
DEFAULT_EMBEDDER = "minilm"


def embedder_name(model: str | None = None) -> str:
    """The embedder to use: `model` if given, else $ACADEMY_EMBEDDER, else minilm (DEFAULT_EMBEDDER)."""
    name = model or os.environ.get("ACADEMY_EMBEDDER") or DEFAULT_EMBEDDER
    if name not in EMBEDDERS:
        raise ValueError(f"unknown embedder {name!r}; use one of {', '.join(EMBEDDERS)} "
                         f"(argument model= or environment variable ACADEMY_EMBEDDER)")
    return name


def describe_embedder(model: str | None = None) -> str:
    """The embedder as a lab names it in what it prints: "wordllama", "hash", "minilm", or, for "openai",
    the model and the server ("openai, text-embedding-3-small at https://api.openai.com/v1")."""
    name = embedder_name(model)
    if name != "openai":
        return name
    from labkit import openai_embedder
    return f"openai, {openai_embedder.settings().describe()}"


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
    from labkit import embedders, minilm, openai_embedder  # the machinery behind the embedders

    rows = {"wordllama": embedders.wordllama_vectors, "hash": embedders.hash_vectors, "openai": openai_embedder.vectors,
            "minilm": minilm.vectors}
    return _unit_rows(np.asarray(rows[name](texts), dtype=np.float32))


def embed_cost(texts, model: str | None = None) -> float:
    """Estimated USD to embed `texts` with the openai embedder, counting only the texts its cache lacks.

    `model`: a model's name, or an embedder as for embed; the offline embedders cost 0. A server
    on the learner's own machine or network (OPENAI_BASE_URL's host is localhost, a *.local or
    *.localhost name, or a literal loopback, private or link-local address; names are not
    resolved) costs 0. Any other endpoint, OpenAI's, Azure's, a gateway's, is priced by the
    model: a model without a known price at the dearest known (labkit/openai_embedder.py)."""
    from labkit import openai_embedder
    return openai_embedder.cost([texts] if isinstance(texts, str) else list(texts), model or embedder_name())


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
    return [list(zip(best.tolist(), row[best].tolist())) for row, best in zip(scores, order)]


# --------------------------------------------------------------------------
# The course's dataset: Orbit's documentation and questions about it
# --------------------------------------------------------------------------


def read_page(path) -> str:
    """A page's exact text: UTF-8, its line ends (\\r\\n, \\r) and any byte order mark kept.

    Nothing is translated, so a span [start, end) of the text is a span of the file's
    characters, and the chunkers see the page as its author saved it (rag6 reads front
    matter, any line ends and a byte order mark). Bytes that are not UTF-8 raise
    UnicodeDecodeError, whose `start` is the offending byte's offset in the file.
    """
    return Path(path).read_bytes().decode("utf-8")


def corpus_pages() -> dict[str, str]:
    """{doc_id: exact text} of every page in datasets/orbit-docs (read_page: line endings kept)."""
    return {path.stem: read_page(path) for path in sorted((DATASETS / "orbit-docs").glob("*.md"))}


def corpus_questions(split: str | None = None) -> list[dict]:
    """The labelled questions (one dict each), optionally only the "dev" or "test" split.

    Answers are character spans into a page: page[q["start"]:q["end"]] == q["answer"];
    "multi_section" questions have more spans in q["extra_spans"].
    """
    with open(DATASETS / "orbit-questions.jsonl", encoding="utf-8") as file:
        questions = [json.loads(line) for line in file if line.strip()]
    return [q for q in questions if split is None or q["split"] == split]


