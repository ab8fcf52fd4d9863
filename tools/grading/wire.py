"""Plain data across the wall between the grader and the student's worker process.

The grader never runs a student's code and never unpickles what it sends: a
pickle can run code where it is loaded. Values cross as JSON, one message per
line, with a few tagged shapes for what JSON lacks:

    {"$": "tuple", "items": [...]}               a tuple
    {"$": "namedtuple", "name": "Line", "fields": [...], "items": [...]}
    {"$": "chunk", "fields": {...}}              an academy_llm.Chunk
    {"$": "record", "name": "Block", "fields": {...}}   any other dataclass
    {"$": "dict", "items": [[key, value], ...]}  a dict (keys of any plain type)
    {"$": "set" | "frozenset", "items": [...]}
    {"$": "bytes", "hex": "..."}
    {"$": "ndarray", "dtype": "float64", "shape": [...], "items": [...]}
    {"$": "opaque", "type": "generator", "repr": "..."}   anything else
    {"$": "new", "name": "TokenIndex", "args": [...]}   the lab's own object, made in the worker

The last goes one way only: the grader asks the worker for an object of one
of the lab's classes (New("TokenIndex", (text,))), which the lab's function
is then called with; the grader never makes an object from what a worker sends.

Each side rebuilds the values with its own classes: a Chunk the grader judges
is the grader's own Chunk (its checks run in its own __post_init__), never an
object whose methods the student wrote.

The grader trusts nothing a worker sends. A reply is a line of at most the
grader's REPLY_LIMIT bytes (remote.py) with at most MAX_CONTAINERS lists and
objects, so parsing it stays within a few hundred MB; it is rebuilt only if
its shape is one a worker sends (`reply`), and an array only if its dtype is
a plain number of at most 16 bytes and its shape matches its items, so that
nothing is allocated that the line itself does not hold. Anything else is a
WireError, which fails the test with its reason.
"""

import dataclasses
import json
from collections import namedtuple
from typing import NamedTuple

import numpy as np

import academy_llm

MAX_DEPTH = 64  # deeper values than this are not something a lab returns
MAX_CONTAINERS = 2_000_000  # lists and objects in one message: about 100 bytes each, parsed
MAX_DIMENSIONS = 32  # numpy's own limit on an array's dimensions
NUMBER_KINDS = "biuf"  # bool, int, unsigned, float: the arrays that cross
MESSAGE_TEXT = 20_000  # characters of a reply's error, output or refusal that are kept
REPLY_KEYS = {"ready", "walls", "value", "error", "output", "refused"}
REPR_LIMIT = 120


class WireError(Exception):
    """A value that cannot cross: too deep, malformed, or a Chunk whose span does not fit."""


class New(NamedTuple):
    """An object of the lab's class `name`, made in the worker from `args`: what a lab's function
    takes that only the lab can make (rag5's TokenIndex of a text, say)."""

    name: str
    args: tuple


def encode(value, depth: int = 0):
    """`value` as JSON-ready plain data, tagged where JSON has no shape for it."""
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} levels deep")
    deeper = depth + 1
    if isinstance(value, New):
        return {"$": "new", "name": value.name, "args": [encode(arg, deeper) for arg in value.args]}
    if value is None or type(value) in (bool, str, int, float):
        return value
    if isinstance(value, (bool, str, int, float)):  # a subclass: its plain value
        return encode(type(value).__mro__[-2](value), deeper)
    if isinstance(value, np.generic):
        return encode(value.item(), deeper)
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        return {"$": "ndarray", "dtype": value.dtype.str, "shape": list(value.shape),
                "items": value.ravel().tolist()}
    if isinstance(value, list) and type(value) is list:
        return [encode(item, deeper) for item in value]
    if isinstance(value, tuple):
        items = [encode(item, deeper) for item in value]
        fields = getattr(type(value), "_fields", None)
        if isinstance(fields, tuple) and all(isinstance(f, str) for f in fields):
            return {"$": "namedtuple", "name": type(value).__name__, "fields": list(fields),
                    "items": items}
        return {"$": "tuple", "items": items}
    if isinstance(value, dict):
        return {"$": "dict", "items": [[encode(k, deeper), encode(v, deeper)] for k, v in value.items()]}
    if isinstance(value, (set, frozenset)):
        return {"$": type(value).__name__ if type(value) in (set, frozenset) else "set",
                "items": [encode(item, deeper) for item in value]}
    if isinstance(value, (bytes, bytearray)):
        return {"$": "bytes", "hex": bytes(value).hex()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = {f.name: encode(getattr(value, f.name), deeper) for f in dataclasses.fields(value)}
        if type(value) is academy_llm.Chunk:
            return {"$": "chunk", "fields": fields}
        return {"$": "record", "name": type(value).__name__, "fields": fields}
    return {"$": "opaque", "type": type(value).__name__, "repr": short_repr(value)}


def short_repr(value, limit: int = REPR_LIMIT) -> str:
    """repr(value), cut to `limit` characters; a repr that fails says so."""
    try:
        text = repr(value)
    except Exception as error:  # a student's __repr__ may raise
        text = f"<{type(value).__name__}, repr failed: {type(error).__name__}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---- rebuilding -------------------------------------------------------------


class Record(NamedTuple):
    """A dataclass from the other side, read as data: its class name and fields, each also read as an
    attribute (record.estimate), as on the other side, so a test reads a lab's dataclass as it reads a
    namedtuple (a field called name or fields is read from `fields`)."""

    name: str
    fields: dict

    def __getattr__(self, attribute: str):
        fields = tuple.__getitem__(self, 1)
        if not attribute.startswith("_") and isinstance(fields, dict) and attribute in fields:
            return fields[attribute]
        raise AttributeError(attribute)


class Opaque(NamedTuple):
    """A value that could not cross (a generator, an open file...): its type and repr only."""

    type: str
    repr: str

    def __repr__(self):
        return f"<{self.type} that cannot leave the lab's process{': ' + self.repr if self.repr else ''}>"


_namedtuples: dict = {}


def generic_namedtuple(name: str, fields: list):
    """A namedtuple class of this name and these fields, made once."""
    key = (name, tuple(fields))
    if key not in _namedtuples:
        safe = name if name.isidentifier() else "Record"
        try:
            _namedtuples[key] = namedtuple(safe, fields)
        except ValueError:  # field names a namedtuple cannot have
            _namedtuples[key] = None
    return _namedtuples[key]


def decode(data, classes=None):
    """The value `data` stands for; `classes` maps class names to the side's own classes.

    The worker passes the lab's namespace, so a Line the grader sends back is
    the lab's own Line again; the grader passes nothing and gets plain records.
    Malformed data of any shape is a WireError, never a crash of the grader.
    """
    try:
        return _decode(data, classes)
    except WireError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError, IndexError, RecursionError) as error:
        raise WireError(f"a malformed value ({type(error).__name__}: {str(error)[:200]})") from None


def _decode(data, classes, depth: int = 0):
    if depth > MAX_DEPTH:
        raise WireError(f"a value nested more than {MAX_DEPTH} levels deep")
    deeper = depth + 1
    if not isinstance(data, (dict, list)):
        return data
    if isinstance(data, list):
        return [_decode(item, classes, deeper) for item in data]
    tag = data.get("$")
    if tag == "tuple":
        return tuple(_decode(item, classes, deeper) for item in data["items"])
    if tag == "namedtuple":
        items = [_decode(item, classes, deeper) for item in data["items"]]
        cls = _own_class(classes, data["name"], data["fields"]) or generic_namedtuple(
            data["name"], data["fields"])
        return cls(*items) if cls is not None and len(items) == len(data["fields"]) else tuple(items)
    if tag == "dict":
        return {_decode(k, classes, deeper): _decode(v, classes, deeper) for k, v in data["items"]}
    if tag in ("set", "frozenset"):
        items = [_decode(item, classes, deeper) for item in data["items"]]
        return set(items) if tag == "set" else frozenset(items)
    if tag == "bytes":
        return bytes.fromhex(data["hex"])
    if tag == "ndarray":
        return checked_array(data)
    if tag == "chunk":
        fields = {name: _decode(value, classes, deeper) for name, value in data["fields"].items()}
        return make_chunk(fields)
    if tag == "record":
        fields = {name: _decode(value, classes, deeper) for name, value in data["fields"].items()}
        cls = _own_class(classes, data["name"], list(fields))
        return cls(**fields) if cls is not None else Record(data["name"], fields)
    if tag == "opaque":  # its type's name if it is a plain one; its repr, the lab's own text, stays behind
        name = str(data.get("type"))
        return Opaque(name if name.isidentifier() and len(name) <= 40 else "object", "")
    if tag == "new":  # the worker's side only: the grader passes no classes
        cls = (classes or {}).get(data["name"])
        if not isinstance(cls, type):
            raise WireError(f"no class {str(data['name'])[:40]!r} to make here")
        return cls(*[_decode(arg, classes, deeper) for arg in data["args"]])
    raise WireError(f"unknown value tag {tag!r}")


def checked_array(data: dict) -> np.ndarray:
    """An array from its tagged form, once its dtype, shape and items are known to fit together."""
    dtype, shape, items = np.dtype(str(data["dtype"])), data["shape"], data["items"]
    if dtype.kind not in NUMBER_KINDS or dtype.itemsize > 16:
        raise WireError(f"an array of dtype {str(dtype)[:40]}: only plain numbers cross")
    if not (isinstance(shape, list) and len(shape) <= MAX_DIMENSIONS
            and all(type(n) is int and n >= 0 for n in shape)):
        raise WireError("an array whose shape is not a short list of sizes")
    if not isinstance(items, list) or np.prod(shape, dtype=object) != len(items):
        raise WireError("an array whose items do not fill its shape")
    if not all(type(item) in (int, float, bool) for item in items):
        raise WireError("an array with items that are not numbers")
    return np.array(items, dtype=dtype).reshape(shape)


def make_chunk(fields: dict):
    """This side's own Chunk from its fields; a span that does not fit its text is the lab's error."""
    if "section" in fields and isinstance(fields["section"], list):
        fields["section"] = tuple(fields["section"])
    try:
        return academy_llm.Chunk(**fields)
    except (TypeError, ValueError) as error:
        raise WireError(f"the lab returned a broken Chunk: {error}") from None


def _own_class(classes, name: str, fields: list):
    """The side's class called `name` if it has exactly these fields, else None."""
    if not classes:
        return None
    cls = classes.get(name)
    if not isinstance(cls, type):
        return None
    own = getattr(cls, "_fields", None)
    if own is None and dataclasses.is_dataclass(cls):
        own = tuple(f.name for f in dataclasses.fields(cls))
    return cls if own is not None and list(own) == list(fields) else None


# ---- messages -----------------------------------------------------------------


def dumps(message: dict) -> bytes:
    """One message as one line of ASCII JSON (lone surrogates and all survive as escapes)."""
    return json.dumps(message, ensure_ascii=True, separators=(",", ":")).encode("ascii") + b"\n"


def loads(line: bytes) -> dict:
    """The message on one line; anything else is a WireError."""
    containers = line.count(b"[") + line.count(b"{")
    if containers > MAX_CONTAINERS:
        raise WireError(f"a message of {containers} lists and objects, more than {MAX_CONTAINERS}")
    try:
        message = json.loads(line)
    except (ValueError, RecursionError) as error:
        raise WireError(f"not a message: {str(error)[:200]}") from None
    if not isinstance(message, dict):
        raise WireError("not a message: expected a JSON object")
    return message


def reply(line: bytes) -> dict:
    """A worker's message, read as only a worker's message can be: known keys, text where text goes."""
    message = loads(line)
    if not set(message) <= REPLY_KEYS:
        raise WireError(f"a reply with unknown fields {sorted(map(str, set(message) - REPLY_KEYS))[:5]}")
    if "error" in message:
        error = message["error"]
        if not isinstance(error, dict):
            raise WireError("a reply whose error is not an object")
        message["error"] = {key: str(error.get(key, ""))[:MESSAGE_TEXT]
                            for key in ("type", "builtin", "message", "where")}
    refused = message.get("refused", [])
    if not isinstance(refused, list):
        raise WireError("a reply whose refusals are not a list")
    message["refused"] = [str(item)[:300] for item in refused[:50]]
    message["output"] = str(message.get("output", ""))[:MESSAGE_TEXT]
    if "ready" in message:
        message["ready"] = str(message["ready"])[:20]
    walls = message.get("walls", [])  # sent before the lab's code runs: the kernel's walls it got
    message["walls"] = [str(item)[:80] for item in walls[:4]] if isinstance(walls, list) else []
    return message
