"""Running a lab: exit codes, the TODO where a lab stops, and what to do next."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from labkit.hints import HINT_LEVELS, HintRequest, function_hint, hint_request, innermost, no_todo_left, todo_hint
from labkit.notebook import LabFailed, in_notebook, notebook_cell_name


def todo_advice(error: BaseException) -> str:
    """Where to fill in the TODO that raised `error`, and how to run the lab after.

    In a script: 'rag4-chunking.py:73 in word_windows(), then run the lab
    again'. Code typed in a notebook cell has a temporary file name that means
    nothing to a reader, so there the place is the cell as IPython names it:
    'word_windows() in cell In[5], line 12'. A TODO in a lab that the notebook
    imported with load_lab is filled in that lab (its script, or its notebook,
    which writes the script on saving), and the kernel keeps what it imported
    until it is restarted.
    """
    trace = innermost(error)
    code, line = trace.tb_frame.f_code, trace.tb_lineno
    filename = Path(code.co_filename)
    if not in_notebook():
        return f"{filename.name}:{line} in {code.co_name}(), then run the lab again"
    cell = notebook_cell_name(code.co_filename)
    if cell:
        return f"{code.co_name}() in cell {cell}, line {line}, then run that cell and this one again"
    place = f"{filename.name}:{line} (or its notebook)"
    return f"{code.co_name}() in {place}, then save it and restart this notebook's kernel"


def lab_of(main) -> str:
    """'rag5' for the main() of rag5-recursive-chunking.py (or its notebook); '' if unknown."""
    match = re.match(r"(rag\d+)-", Path(main.__code__.co_filename).name)
    return match.group(1) if match else ""


def run_to_first_todo(main):
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
    earlier = earlier_lab_first(lab_of(main), str(error))
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
    request = None if in_notebook() else hint_request(sys.argv[1:])
    if request and request.function:
        try:
            print(function_hint(main.__globals__, request))
        except LookupError as problem:
            print(problem.args[0], file=sys.stderr)
            sys.exit(2)
        sys.exit(0)
    ok, todo = run_to_first_todo(main)
    if todo is not None:
        message = todo_message(todo, main)
        if request:
            message += f"\n\n{todo_hint(todo, request.level)}"
        if in_notebook():
            raise LabFailed(message) from None
        sys.stdout.flush()  # what the lab printed comes before the TODO, in a pipe too
        print(f"\n{message}", file=sys.stderr)
        sys.exit(1)
    if request:
        print(f"\n{no_todo_left(main.__globals__)}")
    if in_notebook():
        if not ok:
            raise LabFailed("an invariant failed; see the FAIL lines above")
    else:
        sys.exit(0 if ok else 1)


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
    _, todo = run_to_first_todo(main)
    print(f"{todo_message(todo, main)}\n\n{todo_hint(todo, level)}" if todo else no_todo_left(lab))
