"""The "openai" embedder behind academy_llm.embed: any server that speaks the OpenAI embeddings API.

OpenAI itself, another remote endpoint (Azure OpenAI, a gateway, a hosted server), or a local
server (Ollama, vLLM, llama.cpp's server, text-embeddings-inference) through OPENAI_BASE_URL.
Every vector is kept in an sqlite cache, so only texts it has never embedded are sent (and
billed), and a warm cache works offline and without a key. Before sending, the cost of what is
missing is estimated, and a run that would cost more than ACADEMY_MAX_COST stops there.

What a text costs depends on where it goes (see is_local_url and Settings.price_per_million):
a server on the learner's own machine or network costs 0; any other endpoint, OpenAI's or not,
is priced by its model, and a model this file has no price for at the dearest price it has
(ACADEMY_OPENAI_PRICE sets the price instead).

Settings, from the environment:
    OPENAI_API_KEY             the key (a local server gets a placeholder when it is not set)
    OPENAI_BASE_URL            default https://api.openai.com/v1
    ACADEMY_OPENAI_MODEL       default text-embedding-3-small
    ACADEMY_OPENAI_DIMENSIONS  optional: shorter vectors (text-embedding-3-* only)
    ACADEMY_OPENAI_TIMEOUT     seconds to wait for one request (default 120)
    ACADEMY_OPENAI_PRICE       optional: USD per million tokens, for any endpoint (say, an Azure
                               deployment, whose model name is the deployment's)
    ACADEMY_CACHE_DIR          the cache's folder (default: the user's cache folder)
    ACADEMY_MAX_COST           dollars a process may send without asking (default 0.05)

The `openai` package is imported only when a request is sent.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import sqlite3
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlparse

import numpy as np

DEFAULT_MODEL = "text-embedding-3-small"
OPENAI_URL = "https://api.openai.com/v1"
# USD per million input tokens, OpenAI's list prices as of PRICES_AS_OF, for any endpoint that
# is not local (is_local_url): Azure OpenAI and most gateways bill these models at these prices.
# A model not listed is estimated at the dearest price here (DEAREST_MODEL), never at 0: the
# cost stop must hold on an endpoint whose prices it does not know.
PRICES_AS_OF = "2026-11"
PRICE_PER_MILLION_TOKENS = {"text-embedding-3-small": 0.02, "text-embedding-3-large": 0.13,
                            "text-embedding-ada-002": 0.10}
DEAREST_MODEL = max(PRICE_PER_MILLION_TOKENS, key=PRICE_PER_MILLION_TOKENS.get)
# Where a server is on the learner's own machine or network: loopback, the private ranges, link-local.
LOCAL_NETWORKS = tuple(ipaddress.ip_network(network) for network in (
    "127.0.0.0/8", "::1/128",  # loopback
    "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7",  # private
    "169.254.0.0/16", "fe80::/10",  # link-local
    "0.0.0.0/32", "::/128",  # "this host": a connection to it reaches the machine itself
))
LOCAL_NAME_SUFFIXES = (".local", ".localhost")  # mDNS names on the local network; names of this machine
DEFAULT_MAX_COST = 0.05  # dollars
DEFAULT_TIMEOUT = 120.0  # seconds

# The API's limits (the token ones counted with cl100k_base, the tokenizer of these models).
MAX_INPUTS_PER_REQUEST = 2048
MAX_TOKENS_PER_REQUEST = 300_000
MAX_TOKENS_PER_INPUT = 8191

ATTEMPTS = 6  # tries of one request on 429, 5xx or a dropped connection
BACKOFF_SECONDS = 0.5  # the first wait when the server gives no Retry-After; doubled after each try
MAX_WAIT_SECONDS = 60.0
PROGRESS_MIN_BATCHES = 3  # a run of this many requests or more shows a progress bar (on a terminal)

_sent_dollars = 0.0  # what this process has sent so far, estimated: ACADEMY_MAX_COST bounds it


class EmbeddingError(RuntimeError):
    """The openai embedder cannot go on; the message, one line, says what to change."""


class CacheError(EmbeddingError):
    """The embedding cache cannot be read or written. `reason` is set when the file itself cannot be
    read (damaged, an older layout, another program's), so that one who can may set it aside."""

    def __init__(self, message: str, reason: str | None = None):
        super().__init__(message)
        self.reason = reason


class CostLimitError(EmbeddingError):
    """Sending the texts would cost more than ACADEMY_MAX_COST."""


# --------------------------------------------------------------------------
# Settings
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Settings:
    base_url: str
    model: str
    dimensions: int | None
    api_key: str | None
    timeout: float
    cache_path: Path
    max_cost: float
    price: float | None = None  # ACADEMY_OPENAI_PRICE, if set

    @property
    def is_openai(self) -> bool:
        """True for OpenAI's own servers, which want a real key."""
        return (urlparse(self.base_url).hostname or "").lower() == "api.openai.com"

    @property
    def is_local(self) -> bool:
        """True for a server on the learner's own machine or network (is_local_url), which costs nothing."""
        return is_local_url(self.base_url)

    @property
    def is_known_model(self) -> bool:
        return self.model in PRICE_PER_MILLION_TOKENS

    @property
    def price_per_million(self) -> float:
        """USD per million tokens: ACADEMY_OPENAI_PRICE if set; else 0 on a local server; else the
        model's list price, or for a model without one the dearest price known (DEAREST_MODEL's)."""
        if self.price is not None:
            return self.price
        if self.is_local:
            return 0.0
        return PRICE_PER_MILLION_TOKENS.get(self.model, PRICE_PER_MILLION_TOKENS[DEAREST_MODEL])

    def price_basis(self) -> str:
        """How the price was chosen, when it is a guess: ' (no price known for it: priced as ...)', else ''."""
        if self.price is not None or self.is_local or self.is_known_model:
            return ""
        return (f" (no price known for it: priced as {DEAREST_MODEL}, the dearest known; "
                f"set ACADEMY_OPENAI_PRICE to its USD per million tokens)")

    def describe(self) -> str:
        """'text-embedding-3-small at https://api.openai.com/v1', with the dimensions if set."""
        dimensions = f", {self.dimensions} dimensions" if self.dimensions else ""
        return f"{self.model} at {self.base_url}{dimensions}"


def _number(name: str, default, kind=float, least: float = 0.0):
    value = os.environ.get(name, "").strip()
    if not value:
        return default
    try:
        number = kind(value)
    except ValueError:
        number = None
    if number is None or not number >= least or number != number:
        raise EmbeddingError(f"{name}={value!r} is not a {'whole ' if kind is int else ''}number "
                             f"of at least {least:g}; set it to one, or unset it")
    return number


def is_local_url(url: str) -> bool:
    """True if the server at `url` is on the learner's own machine or network, so costs nothing.

    Decided from the host of the URL as written, without resolving it (nothing is looked up
    to price a text): local are the name `localhost`, names ending in `.localhost` or `.local`,
    and literal IP addresses in LOCAL_NETWORKS: loopback (127.0.0.0/8, ::1), the private ranges
    (10/8, 172.16/12, 192.168/16, fc00::/7), link-local (169.254/16, fe80::/10) and the
    unspecified 0.0.0.0 and ::, which reach this machine; an IPv4 address written as IPv6
    (::ffff:10.0.0.1) counts as its IPv4 one. Any other name, even one that resolves to
    127.0.0.1, or that a company's DNS keeps inside its network, is remote and priced.
    """
    host = (urlparse(url).hostname or "").lower().rstrip(".")
    if host == "localhost" or host.endswith(LOCAL_NAME_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") aside
    except ValueError:
        return False  # a name (or nothing): not resolved, so remote
    if address.version == 6 and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return any(address in network for network in LOCAL_NETWORKS if network.version == address.version)


def default_cache_dir() -> Path:
    """The user's cache folder for the course: ~/.cache/chunking-labs or the platform's own."""
    if sys.platform == "win32":
        root = Path(os.environ.get("LOCALAPPDATA") or Path.home() / "AppData" / "Local")
    elif sys.platform == "darwin":
        root = Path.home() / "Library" / "Caches"
    else:
        root = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return root / "chunking-labs"


def course_cache_dir() -> Path:
    """The course's cache folder: $ACADEMY_CACHE_DIR, else default_cache_dir(). Every run shares it."""
    folder = os.environ.get("ACADEMY_CACHE_DIR", "").strip()
    return Path(folder).expanduser() if folder else default_cache_dir()


def settings(model: str | None = None) -> Settings:
    """The embedder's settings, read from the environment now (`model` overrides the model)."""
    if model in (None, "openai"):
        model = os.environ.get("ACADEMY_OPENAI_MODEL", "").strip() or DEFAULT_MODEL
    return Settings(
        base_url=(os.environ.get("OPENAI_BASE_URL", "").strip() or OPENAI_URL).rstrip("/"),
        model=model,
        dimensions=_number("ACADEMY_OPENAI_DIMENSIONS", None, int, 1),
        api_key=os.environ.get("OPENAI_API_KEY", "").strip() or None,
        timeout=_number("ACADEMY_OPENAI_TIMEOUT", DEFAULT_TIMEOUT, float, 0.001),
        cache_path=course_cache_dir() / CACHE_FILE,
        max_cost=_number("ACADEMY_MAX_COST", DEFAULT_MAX_COST),
        price=_number("ACADEMY_OPENAI_PRICE", None),
    )


# --------------------------------------------------------------------------
# The cache: one sqlite file, a row per (endpoint, model, dimensions, text)
# --------------------------------------------------------------------------


def cache_key(setting: Settings, text: str) -> str:
    """sha256 of the endpoint, model, dimensions and text: the text itself is not stored."""
    head = f"{setting.base_url}\n{setting.model}\n{setting.dimensions or ''}\n"
    return hashlib.sha256(head.encode() + text.encode("utf-8", "surrogatepass")).hexdigest()


def _checksum(blob: bytes) -> str:
    return hashlib.sha256(blob).hexdigest()[:16]


CACHE_FILE = "embeddings.sqlite"  # the course's one embedding cache: the labs' embedder and compare's
SCHEMA_VERSION = 1  # PRAGMA user_version of the layout below; 0 is the same layout, written before it had one
COLUMNS = ["key", "model", "dimensions", "vector", "checksum"]
PAGE_SIZE = 32768  # bytes: about 25 vectors of 256 dimensions a page, little left over
# A table with rowids: its rows (a vector of 1 KB or more each) sit in the table's own pages, the keys in
# an index beside it. WITHOUT ROWID would keep whole rows in the key's B-tree, where a row over a
# twentieth of a page spills to a page of its own: 4.7 KB on disk for a vector of 1 KB.
SCHEMA = """CREATE TABLE IF NOT EXISTS vectors (
    key TEXT PRIMARY KEY, model TEXT NOT NULL, dimensions INTEGER NOT NULL,
    vector BLOB NOT NULL, checksum TEXT NOT NULL)"""


class Cache:
    """The sqlite file of vectors. WAL mode: readers never wait, and writers take turns.

    A batch's vectors go in with one transaction, after the whole batch has arrived
    and been checked, so an interrupted run leaves only whole, right vectors; two
    processes writing the same text store the same vector once (INSERT OR IGNORE).
    """

    def __init__(self, path: Path):
        self.path = path
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self.connection = sqlite3.connect(path, timeout=60, isolation_level=None)
            self.connection.execute("PRAGMA busy_timeout = 60000")
            self._set_up()
        except sqlite3.DatabaseError as error:
            if hasattr(self, "connection"):
                self.connection.close()  # so that the file can be set aside
            raise self.damaged(error) from None
        except OSError as error:
            raise CacheError(f"cannot open the embedding cache {path} ({error.strerror or error}); "
                             f"set ACADEMY_CACHE_DIR to a folder you can write") from None

    def _set_up(self, patience_seconds: float = 60.0) -> None:
        """Switch to WAL and create the table, retrying while another process does the same.

        Two processes creating one new file can both be refused at once ("database is
        locked"): SQLite does not wait on a lock that could deadlock, so we wait here.
        """
        deadline = time.monotonic() + patience_seconds
        while True:
            try:
                self.connection.execute(f"PRAGMA page_size = {PAGE_SIZE}")  # a new file's only: rows of 1 KB pack well
                if self.connection.execute("PRAGMA journal_mode = WAL").fetchone()[0].lower() != "wal":
                    raise sqlite3.DatabaseError("it cannot be switched to WAL mode")
                self.connection.execute(SCHEMA)
                self._check_layout()
                return
            except sqlite3.OperationalError as error:
                if "locked" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.02)

    def _check_layout(self) -> None:
        """A DatabaseError when the file holds another layout than SCHEMA's, or a later version of it."""
        columns = [row[1] for row in self.connection.execute("PRAGMA table_info(vectors)")]
        if columns != COLUMNS:
            raise sqlite3.DatabaseError(f"its table of vectors has the columns {', '.join(columns)}: an older "
                                        f"layout or another program's")
        version = self.connection.execute("PRAGMA user_version").fetchone()[0]
        if version == 0:
            self.connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        elif version != SCHEMA_VERSION:
            raise sqlite3.DatabaseError(f"its schema is version {version}, this course reads {SCHEMA_VERSION}")

    def damaged(self, reason) -> CacheError:
        return CacheError(f"the embedding cache {self.path} is damaged ({reason}); delete it to rebuild it: "
                          f"rm {self.path}* (its texts are embedded again on the next run)", str(reason))

    def get(self, keys: list[str]) -> dict[str, np.ndarray]:
        """{key: vector} for the keys the cache holds, each vector checked against its checksum."""
        found = {}
        try:
            for start in range(0, len(keys), 500):
                part = keys[start : start + 500]
                rows = self.connection.execute(
                    f"SELECT key, dimensions, vector, checksum FROM vectors WHERE key IN ({','.join('?' * len(part))})",
                    part).fetchall()
                for key, dimensions, blob, checksum in rows:
                    if not isinstance(blob, bytes) or len(blob) != 4 * dimensions or _checksum(blob) != checksum:
                        raise self.damaged(f"the vector stored for key {key[:12]}... fails its check")
                    found[key] = np.frombuffer(blob, dtype="<f4")
        except sqlite3.DatabaseError as error:
            raise self.damaged(error) from None
        return found

    def put(self, model: str, items: list[tuple[str, np.ndarray]]) -> None:
        """Store whole vectors, in one transaction."""
        rows = []
        for key, vector in items:
            blob = np.asarray(vector, dtype="<f4").tobytes()
            rows.append((key, model, len(vector), blob, _checksum(blob)))
        try:
            self.connection.execute("BEGIN IMMEDIATE")
            try:
                self.connection.executemany("INSERT OR IGNORE INTO vectors VALUES (?, ?, ?, ?, ?)", rows)
                self.connection.execute("COMMIT")
            except BaseException:
                self.connection.execute("ROLLBACK")
                raise
        except sqlite3.DatabaseError as error:
            raise self.damaged(error) from None

    def close(self) -> None:
        self.connection.close()


# --------------------------------------------------------------------------
# Cost, and the API's limits
# --------------------------------------------------------------------------


def _missing(texts, setting: Settings, cache: Cache) -> tuple[dict, dict]:
    """({key: vector} found in the cache, {key: text} to send), for the texts with words."""
    wanted = {cache_key(setting, text): text for text in texts if text.strip()}
    found = cache.get(list(wanted))
    return found, {key: text for key, text in wanted.items() if key not in found}


def cost(texts, model: str | None = None) -> float:
    """Estimated USD to embed the texts the cache does not hold yet, at OPENAI_BASE_URL.

    `model` is a model's name, or "openai" (or None) for $ACADEMY_OPENAI_MODEL; the names of
    the offline embedders cost 0. A server on the learner's machine or network costs 0, any
    other endpoint its model's price (an unknown model's: the dearest known): see
    Settings.price_per_million and is_local_url.
    """
    from academy_llm import count_tokens

    if model in ("wordllama", "hash", "minilm"):
        return 0.0
    setting = settings(model)
    cache = Cache(setting.cache_path)
    try:
        _, missing = _missing(list(texts), setting, cache)
    finally:
        cache.close()
    return sum(count_tokens(text) for text in missing.values()) * setting.price_per_million / 1e6


def _check_lengths(texts: list[str], tokens: list[int], setting: Settings) -> None:
    for text, count in zip(texts, tokens):
        if count > MAX_TOKENS_PER_INPUT:
            preview = text[:30].replace("\n", " ")
            raise EmbeddingError(
                f"a text of {count:,} tokens ({preview!r}...) is over the limit of {MAX_TOKENS_PER_INPUT:,} "
                f"tokens per input for {setting.model}; chunk it into pieces of at most {MAX_TOKENS_PER_INPUT:,} "
                f"tokens first")


def _check_cost(texts: list[str], tokens: list[int], setting: Settings) -> float:
    dollars = sum(tokens) * setting.price_per_million / 1e6
    if _sent_dollars + dollars > setting.max_cost:
        so_far = f" after ${_sent_dollars:.4f} already sent" if _sent_dollars else ""
        raise CostLimitError(
            f"embedding {len(texts):,} texts ({sum(tokens):,} tokens) with {setting.model}{setting.price_basis()} "
            f"would cost about ${dollars:.4f}{so_far}, over ACADEMY_MAX_COST=${setting.max_cost:g}; nothing was "
            f"sent. To go on, raise it (ACADEMY_MAX_COST={max(2 * (_sent_dollars + dollars), 0.01):.2f})")
    return dollars


def batches(tokens: list[int]) -> list[range]:
    """Consecutive index ranges within MAX_INPUTS_PER_REQUEST inputs and MAX_TOKENS_PER_REQUEST tokens."""
    result, start, total = [], 0, 0
    for index, count in enumerate(tokens):
        if index > start and (index - start >= MAX_INPUTS_PER_REQUEST or total + count > MAX_TOKENS_PER_REQUEST):
            result.append(range(start, index))
            start, total = index, 0
        total += count
    if start < len(tokens):
        result.append(range(start, len(tokens)))
    return result


# --------------------------------------------------------------------------
# Sending
# --------------------------------------------------------------------------


def _one_line(text, limit: int = 200) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _client(setting: Settings):
    try:
        import openai
    except ImportError:
        raise EmbeddingError("the openai embedder needs the openai package: pip install openai") from None
    key = setting.api_key
    if key is None:
        if setting.is_openai:
            raise EmbeddingError(f"OPENAI_API_KEY is not set: set it to your OpenAI key to embed with {setting.model} "
                                 f"(or set OPENAI_BASE_URL to a local server, or use ACADEMY_EMBEDDER=wordllama)")
        key = "unused"  # a local server mostly takes any key; the client wants one
    return openai.OpenAI(api_key=key, base_url=setting.base_url, timeout=setting.timeout, max_retries=0)


def _retry_after(headers) -> float | None:
    """The wait the server asks for, in seconds (Retry-After in seconds, or retry-after-ms), if any."""
    for name, scale in (("retry-after-ms", 1000), ("retry-after", 1)):
        try:
            return max(0.0, float(headers.get(name))) / scale
        except (TypeError, ValueError):
            continue
    return None


def _refused(error) -> bool:
    """True when no connection could be made at all (as opposed to one that broke)."""
    while error is not None:
        if isinstance(error, ConnectionRefusedError) or type(error).__name__ == "ConnectError":
            return True
        error = error.__cause__ or error.__context__
    return False


def _send(client, setting: Settings, texts: list[str]) -> list[np.ndarray]:
    """The vectors of `texts`, in order, from one request (retried on 429, 5xx and dropped connections)."""
    import openai

    extra = {"dimensions": setting.dimensions} if setting.dimensions else {}
    url = setting.base_url
    for attempt in range(ATTEMPTS):
        wait = None
        try:
            response = client.embeddings.create(input=texts, model=setting.model, **extra)
            return _checked(response, setting, len(texts))
        except openai.AuthenticationError as error:
            raise EmbeddingError(f"the server at {url} rejected the key (401: {_one_line(error.message, 120)}); "
                                 f"set OPENAI_API_KEY to a valid key") from None
        except openai.NotFoundError as error:
            raise EmbeddingError(f"the server at {url} has no model {setting.model!r} (404: "
                                 f"{_one_line(error.message, 120)}); set ACADEMY_OPENAI_MODEL to a model it serves, "
                                 f"or check OPENAI_BASE_URL (it usually ends in /v1)") from None
        except openai.APITimeoutError:
            raise EmbeddingError(f"the server at {url} did not answer within {setting.timeout:g} s; raise "
                                 f"ACADEMY_OPENAI_TIMEOUT, or check the server") from None
        except openai.APIConnectionError as error:
            if _refused(error):
                raise EmbeddingError(f"cannot connect to {url} ({_one_line(error.__cause__ or error, 80)}); start "
                                     f"the server, or set OPENAI_BASE_URL to where it listens") from None
            status = "a dropped connection"
        except openai.APIStatusError as error:
            if error.status_code != 429 and error.status_code < 500:
                raise EmbeddingError(f"the server at {url} refused the request ({error.status_code}: "
                                     f"{_one_line(error.message, 120)}); check ACADEMY_OPENAI_MODEL and "
                                     f"ACADEMY_OPENAI_DIMENSIONS") from None
            status, wait = f"HTTP {error.status_code}", _retry_after(error.response.headers)
        if attempt + 1 < ATTEMPTS:
            time.sleep(min(MAX_WAIT_SECONDS, BACKOFF_SECONDS * 2**attempt if wait is None else wait))
    raise EmbeddingError(f"the server at {url} still answered with {status} after {ATTEMPTS} tries; "
                         f"try again later (what arrived before is cached)")


def _checked(response, setting: Settings, count: int) -> list[np.ndarray]:
    """The response's vectors in input order, or an error: nothing half-arrived is ever stored."""
    rows = sorted(response.data, key=lambda item: item.index)
    if [item.index for item in rows] != list(range(count)):
        raise EmbeddingError(f"the server at {setting.base_url} sent {len(rows)} vectors for {count} texts; "
                             f"nothing of that request was stored, try again")
    vectors = [np.asarray(item.embedding, dtype=np.float32) for item in rows]
    sizes = {vector.shape for vector in vectors}
    if len(sizes) != 1 or len(next(iter(sizes))) != 1 or not all(np.isfinite(v).all() for v in vectors) \
            or (setting.dimensions and vectors[0].shape[0] != setting.dimensions):
        raise EmbeddingError(f"the server at {setting.base_url} sent vectors of sizes {sorted(sizes)} or not "
                             f"finite; nothing of that request was stored, check ACADEMY_OPENAI_DIMENSIONS")
    return vectors


class Progress:
    """A progress bar on stderr, for a run of many requests, on a terminal only."""

    def __init__(self, total: int, requests: int, label: str):
        self.total, self.done, self.label = total, 0, label
        self.shown = requests >= PROGRESS_MIN_BATCHES and sys.stderr.isatty()
        self.show()

    def show(self, done: int = 0) -> None:
        self.done += done
        if self.shown:
            filled = 30 * self.done // max(self.total, 1)
            sys.stderr.write(f"\r{self.label} [{'#' * filled}{'.' * (30 - filled)}] {self.done:,}/{self.total:,} texts")
            sys.stderr.flush()

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\n")
            sys.stderr.flush()


def vectors(texts: list[str]) -> np.ndarray:
    """A row per text (float32, as the server sent it, not yet unit length); an empty text is a zero row."""
    global _sent_dollars
    from academy_llm import count_tokens

    setting = settings()
    cache = Cache(setting.cache_path)
    try:
        found, missing = _missing(texts, setting, cache)
        if missing:
            keys, to_send = list(missing), list(missing.values())
            tokens = [count_tokens(text) for text in to_send]
            _check_lengths(to_send, tokens, setting)
            _check_cost(to_send, tokens, setting)
            client = _client(setting)
            parts = batches(tokens)
            progress = Progress(len(to_send), len(parts), f"embedding with {setting.model}")
            try:
                for part in parts:
                    got = _send(client, setting, [to_send[i] for i in part])
                    cache.put(setting.model, [(keys[i], vector) for i, vector in zip(part, got)])
                    found.update((keys[i], vector) for i, vector in zip(part, got))
                    _sent_dollars += sum(tokens[i] for i in part) * setting.price_per_million / 1e6
                    progress.show(len(part))
            finally:
                progress.close()
                client.close()
    finally:
        cache.close()
    sizes = {vector.shape[0] for vector in found.values()}
    if len(sizes) > 1:
        raise EmbeddingError(f"vectors of sizes {sorted(sizes)} for one model in {setting.cache_path}; "
                             f"delete it to rebuild it: rm {setting.cache_path}*")
    width = sizes.pop() if sizes else (setting.dimensions or 0)
    matrix = np.zeros((len(texts), width), dtype=np.float32)
    for row, text in enumerate(texts):
        if text.strip():
            matrix[row] = found[cache_key(setting, text)]
    return matrix
