"""The "minilm" embedder: all-MiniLM-L6-v2, a small contextual model, run by onnxruntime.

wordllama gives each token one vector whatever surrounds it. This model is a 6-layer BERT: every
token's vector is rewritten six times from the others around it, so "lease" in "the lease expires"
and in "lease a satellite" end up apart. Its output is what sentence-transformers makes of the
model (tests/test_minilm.py checks against it where it is installed): word pieces cut at 256, the
mean of the last layer's vectors over them, scaled to length 1.

Everything ships with the course, so nothing is downloaded: the model in ONNX form
(assets/all-MiniLM-L6-v2.onnx, 45 MB, weights stored as float16, arithmetic in float32; made by
tools/make_minilm_onnx.py, licence and notice beside it) and its word-piece tokenizer. onnxruntime
runs it on Linux, macOS and Windows, with no torch.

It is about a hundred times slower than wordllama, so the vectors of the course's own texts (the
chunks and questions the reference labs embed) are computed ahead and ship in
embeddings/all-MiniLM-L6-v2.orbit.npz (tools/make_course_vectors.py): a lab whose chunks match the
reference's embeds nothing. A text the course does not ship (a student's own chunk) is embedded
once and kept in the course's one embedding cache ($ACADEMY_CACHE_DIR/embeddings.sqlite, the
openai embedder's and compare's too), so a rerun pays nothing for it.

A grading worker reads neither (its environment says ACADEMY_COURSE_VECTORS=0, and its walls keep
both out of reach): keyed by the texts the reference cuts, the shipped file would tell a worker
where the reference's boundaries are, and a cache the instructor's own runs filled would do the
same; one a worker wrote could hand the next lab a wrong vector.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time

import numpy as np

from academy_llm import COURSE_ROOT

NAME = "all-MiniLM-L6-v2"
MODEL_FILE = COURSE_ROOT / "assets" / f"{NAME}.onnx"
TOKENIZER_FILE = COURSE_ROOT / "assets" / f"{NAME}.tokenizer.json"
COURSE_VECTORS = COURSE_ROOT / "embeddings" / f"{NAME}.orbit.npz"
DIMENSIONS = 384
MAX_PIECES = 256  # sentence-transformers' max_seq_length for this model, [CLS] and [SEP] included
BATCH_PIECES = 1024  # texts of like length run together, this many word pieces a batch (padding included):
# measured on 2 cores, 4,096 costs a quarter more CPU and 256 the same
PIECES_PER_SECOND = 3_500  # word pieces embedded per second of CPU, measured on a 2-core AMD EPYC (one thread)
PROGRESS_MIN_TEXTS = 500  # embedding this many texts or more states its cost and shows a progress bar
KEY_BYTES = 16  # a text's key in the course's vectors: the first bytes of its UTF-8's sha256
_model = None
_course: dict[bytes, np.ndarray] | None = None
_vectors: dict[str, np.ndarray] = {}  # text -> its vector, once per process: the labs embed some texts twice
MAX_KEPT = 200_000  # vectors kept at most (about 300 MB): a bound on memory for very long runs
# What makes a vector in the cache this model's: a new model file, or another cut or pooling, needs a new name.
CACHE_MODEL = f"minilm {NAME} onnx float16-stored, {MAX_PIECES} pieces, mean pooled"
CACHE_BATCH = 512  # texts stored in one transaction: an interrupted run keeps all but the last few
_cache_failed: list[str] = []  # why the cache could not be used, said once per process


class Model:
    """The tokenizer and the onnxruntime session, loaded once."""

    def __init__(self):
        check_available()
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        # One thread: the same vectors on every run, and a lab's CPU time is what it costs.
        options.intra_op_num_threads = options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(str(MODEL_FILE), options, providers=["CPUExecutionProvider"])
        # The tokenizer file pads and cuts every text to 128 pieces; sentence-transformers runs the
        # model at 256 instead, and pads a batch itself.
        self.tokenizer = Tokenizer.from_file(str(TOKENIZER_FILE))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(MAX_PIECES)

    def forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """(B, L) piece ids and 0/1 mask -> (B, 384) unit vectors: mean of the last layer over the real pieces."""
        last = self.session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        pooled = (last * mask[:, :, None]).sum(1) / mask.sum(1, keepdims=True)
        return pooled / np.linalg.norm(pooled, axis=1, keepdims=True)


def check_available() -> None:
    """Fail in one line, before any work, if the model cannot run here: its packages or its files missing."""
    import importlib.util

    lacking = [name for name in ("onnxruntime", "tokenizers") if importlib.util.find_spec(name) is None]
    if lacking:
        raise ImportError(f"the minilm embedder needs {' and '.join(lacking)}: pip install -r requirements.txt "
                          f"(or choose another embedder with ACADEMY_EMBEDDER)")
    for path in (MODEL_FILE, TOKENIZER_FILE):
        if not path.is_file():
            raise FileNotFoundError(f"the minilm embedder's file {path} is missing; restore it with "
                                    f"`git checkout -- assets/` (or choose another embedder with ACADEMY_EMBEDDER)")


def model() -> Model:
    """The model, loaded once per process."""
    global _model
    if _model is None:
        _model = Model()
    return _model


def text_key(text: str) -> bytes:
    """A text's key among the course's vectors."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:KEY_BYTES]


def course_knowledge_allowed() -> bool:
    """False in a grading worker (ACADEMY_COURSE_VECTORS=0): neither the shipped vectors nor the cache."""
    return os.environ.get("ACADEMY_COURSE_VECTORS", "1") != "0"


def course_vectors() -> dict[bytes, np.ndarray]:
    """The course's own texts' vectors, {key: vector}, read once; none in a grading worker
    (ACADEMY_COURSE_VECTORS=0) or where the file is absent."""
    global _course
    if _course is None:
        _course = {}
        if course_knowledge_allowed() and COURSE_VECTORS.is_file():
            with np.load(COURSE_VECTORS) as kept:
                _course = {key.tobytes(): vector for key, vector in zip(kept["keys"], kept["vectors"])}
    return _course


def vectors(texts: list[str]) -> np.ndarray:
    """A unit row per text (a text of only spaces: a zero row, as the other embedders give it).

    A text the course ships a vector for is looked up; the others are embedded, sorted by length
    and run in batches of like length, so little is padding. A text longer than 256 word pieces is
    cut there, as the model is: the rest of it does not count.
    """
    if len(_vectors) > MAX_KEPT:
        _vectors.clear()
    missing = []
    for text in dict.fromkeys(texts):
        if text.strip() and text not in _vectors:
            kept = course_vectors().get(text_key(text))
            if kept is None:
                missing.append(text)
            else:
                _vectors[text] = kept.astype(np.float32)
    embed_missing(from_cache(missing))
    result = np.zeros((len(texts), DIMENSIONS), np.float32)
    for row, text in enumerate(texts):
        if text.strip():
            result[row] = _vectors[text]
    return result


def cache_key(text: str) -> str:
    """A text's key in the course's embedding cache: sha256 of the model's name and the text (compare's key too)."""
    return hashlib.sha256(f"{CACHE_MODEL}\n".encode() + text.encode("utf-8", "surrogatepass")).hexdigest()


def open_cache():
    """The course's embedding cache, or None: in a grading worker, or where it cannot be used (said once).

    A cache only saves time: one that cannot be opened (a folder that cannot be written, a damaged
    file, another layout) is left as it is, and this process embeds without it.
    """
    from labkit import openai_embedder

    if not course_knowledge_allowed() or _cache_failed:
        return None
    path = openai_embedder.settings().cache_path
    try:
        return openai_embedder.Cache(path)
    except openai_embedder.CacheError as error:
        _cache_failed.append(str(error))
        print(f"minilm: embedding without the cache: {error}", file=sys.stderr)
        return None


def from_cache(missing: list[str]) -> list[str]:
    """Take from the cache the vectors of `missing` it holds; the texts still to embed."""
    if not missing:
        return missing
    cache = open_cache()
    if cache is None:
        return missing
    from labkit import openai_embedder

    try:
        keys = [cache_key(text) for text in missing]
        found = cache.get(keys)
    except openai_embedder.CacheError as error:
        _cache_failed.append(str(error))
        print(f"minilm: embedding without the cache: {error}", file=sys.stderr)
        return missing
    finally:
        cache.close()
    for key, text in zip(keys, missing):
        if key in found:
            _vectors[text] = found[key].copy()
    return [text for key, text in zip(keys, missing) if key not in found]

def forget() -> None:
    """Let go of the vectors kept in this process: a caller that keeps its own (compare, on disk) needs
    them no longer than one chunker's run."""
    _vectors.clear()


def embed_missing(missing: list[str]) -> None:
    """Run the model on texts it has not seen, nor the course or the cache holds; a long run states its
    cost first. What it computes goes into the cache as it goes, so an interrupted run keeps it too."""
    if not missing:
        return
    encodings = model().tokenizer.encode_batch(missing)
    keeping = Keeper()
    progress = Progress([len(encoding.ids) for encoding in encodings], kept=keeping.cache is not None)
    try:
        for batch in batches([len(encoding.ids) for encoding in encodings]):
            length = len(encodings[batch[-1]].ids)
            ids, mask = np.zeros((len(batch), length), np.int64), np.zeros((len(batch), length), np.int64)
            for row, n in enumerate(batch):
                ids[row, :len(encodings[n].ids)], mask[row, :len(encodings[n].ids)] = encodings[n].ids, 1
            for n, vector in zip(batch, model().forward(ids, mask)):
                _vectors[missing[n]] = vector
                keeping.add(missing[n], vector)
            progress.show(len(batch))
    finally:
        keeping.close()
        progress.close()


class Keeper:
    """Vectors on their way into the cache, CACHE_BATCH texts a transaction; nothing where there is no cache."""

    def __init__(self):
        self.cache, self.pending = open_cache(), []

    def add(self, text: str, vector: np.ndarray) -> None:
        if self.cache is not None:
            self.pending.append((cache_key(text), vector))
            if len(self.pending) >= CACHE_BATCH:
                self.flush()

    def flush(self) -> None:
        from labkit import openai_embedder

        try:
            self.cache.put(CACHE_MODEL, self.pending)
        except openai_embedder.CacheError as error:  # a full disk, a file damaged meanwhile: keep embedding
            _cache_failed.append(str(error))
            print(f"minilm: no longer keeping vectors in the cache: {error}", file=sys.stderr)
            self.cache.close()
            self.cache = None
        self.pending = []

    def close(self) -> None:
        if self.cache is not None:
            if self.pending:
                self.flush()
            if self.cache is not None:
                self.cache.close()


class Progress:
    """What a long run will cost, said before it starts, then a progress bar on stderr (a terminal's only)."""

    def __init__(self, lengths: list[int], kept: bool = False):
        self.total, self.done, self.started = len(lengths), 0, time.monotonic()
        self.shown = self.total >= PROGRESS_MIN_TEXTS
        self.bar = self.shown and sys.stderr.isatty()
        if self.shown:
            seconds = sum(lengths) / PIECES_PER_SECOND
            kept = " (kept in the embedding cache for the next run)" if kept else ""
            print(f"minilm: embedding {self.total:,} texts the course does not ship vectors for "
                  f"({sum(lengths):,} word pieces, about {seconds:,.0f} s of CPU){kept}; "
                  f"ACADEMY_EMBEDDER=wordllama is about a hundred times faster", file=sys.stderr)

    def show(self, done: int) -> None:
        self.done += done
        if self.bar:
            filled = 30 * self.done // self.total
            sys.stderr.write(f"\rminilm [{'#' * filled}{'.' * (30 - filled)}] {self.done:,}/{self.total:,} texts")
            sys.stderr.flush()

    def close(self) -> None:
        if self.bar:
            sys.stderr.write(f" in {time.monotonic() - self.started:.0f} s\n")
            sys.stderr.flush()


def batches(lengths: list[int]) -> list[list[int]]:
    """The positions of `lengths`, shortest first, in runs whose padded size (count x longest) stays
    within BATCH_PIECES: a batch is padded to its longest text, and like lengths waste little."""
    result, batch = [], []
    for n in sorted(range(len(lengths)), key=lengths.__getitem__):
        if batch and (len(batch) + 1) * lengths[n] > BATCH_PIECES:
            result.append(batch)
            batch = []
        batch.append(n)
    return result + [batch] if batch else result
