"""Hints in three levels for each TODO: --hint N on a lab's command line, show_hint(N) in a notebook.

A TODO shows its first hint: what the function must achieve, and why. The
other levels are asked for, not read: they live in labs/hints/ragN.json
({function: {"1": the goal, "2": the approach, "3": close to code}}, written
by tools/make_labs.py), which the lab loads as HINTS = lab_hints("ragN"), so
a student reading the lab or its notebook never meets them. The next level is
one request away:
`--hint N` on the lab's command line, show_hint(N) in a notebook. Without a
function's name, a request is for the TODO where the lab stops when run,
the one its run reports, found by running it: the lab's first function to
fill in is not always the first in the file (rag5 reaches recursive_chunks,
which calls the others, before any of them).
"""

from __future__ import annotations

import json
import sys
import textwrap
from dataclasses import dataclass

from academy_llm import COURSE_ROOT
from labkit.notebook import in_notebook


HINT_LEVELS = (1, 2, 3)
HINTS_FOLDER = COURSE_ROOT / "labs" / "hints"


def lab_hints(lab: str) -> dict:
    """{function: {level: text}} of lab `lab` ("rag5"), from labs/hints/rag5.json; {} if it has none."""
    path = HINTS_FOLDER / f"{lab}.json"
    if not path.is_file():
        return {}
    levels = json.loads(path.read_text(encoding="utf-8"))
    return {function: {int(level): text for level, text in texts.items()} for function, texts in levels.items()}


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


def todo_hint(error: BaseException, level: int) -> str:
    """Hint `level` of the TODO that raised `error`, from the HINTS of the lab the stub is in
    (an earlier lab's, when that is where the run stopped)."""
    frame = innermost(error).tb_frame
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
    """Hint `level` of a TODO (its last, if it has fewer), wrapped (code: line by line, as
    written), and how to ask for the next.

    `levels` is {1: text, 2: text, ...}; `by_name` says the request named the
    function, so the next one does too.
    """
    level = min(level, len(levels))
    if "\n" in levels[level]:  # code (tools/make_labs.py keeps its lines): shown as written
        text = textwrap.indent(levels[level], "  ")
    else:
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
    if in_notebook():
        return f"show_hint({level}, {function!r})" if function else f"show_hint({level})"
    return f"python {sys.argv[0]} --hint {level}" + (f" {function}" if function else "")


def no_todo_left(lab: dict) -> str:
    """What a request for the next TODO's hint says when the lab (its names: `lab`) ran
    without reaching one."""
    done = "No TODO left: the lab ran without reaching one, so there is no TODO to give a hint for."
    if not lab.get("HINTS"):
        return done
    return f"{done} For a function you wrote, ask by its name: {how_to_ask(2, 'FUNCTION')}"


def innermost(error: BaseException):
    """The last entry of `error`'s traceback: where it was raised (for a TODO, in the stub)."""
    trace = error.__traceback__
    while trace.tb_next is not None:
        trace = trace.tb_next
    return trace
