"""Write the student labs (labs/) from the reference solutions (solutions/).

solutions/ is the single source. In a solution file, each part a student
writes is an answer region, led by its hints in up to three levels:

        # BEGIN SOLUTION
        # hint 1: the goal: what the function must achieve, and why
        # hint 2: the approach: which helpers, in which order, what to watch for
        # hint 3: close to code
        ...reference code...
        # END SOLUTION

A hint line is `# hint N: text`, N its level. A level may take several
lines, each with the same prefix; they are joined by spaces into one text.
A level written as code keeps its lines and their indentation instead: a level
is code when its lines, less the one space after the colon and dedented, are
a function body, Python that parses and returns at its top level
(is_code_hint). tests/test_hints.py runs each hint 3 that is code in place of
its function's answer, on that function's public grading tests:

        # hint 3: scores = {}
        # hint 3: for item in ranking:
        # hint 3:     scores[item] = ...
        # hint 3: return sorted(scores, key=...)

Level 1 is required; the levels come in order (1, then 2, then 3), each once.

In labs/ the region becomes a stub that shows level 1 only, as a TODO comment
and as the message of a NotImplementedError, and says how to ask for more.
Running an unfinished lab stops at the first TODO it reaches and says what to
write there:

        # TODO(rag5): the goal, wrapped
        #   More help: python labs/rag5-....py --hint 2, or show_hint(2) in a notebook.
        raise NotImplementedError("TODO(rag5) pack(): the goal. More help: ...")

The levels are asked for, not read: they go into a data file beside the
labs, labs/hints/ragN.json ({function: {"1": text, "2": text, "3": text}}, in
file order), never into the lab or its notebook, where a student reading the
code would meet them. A cell just before the one that runs the lab says how to
ask and loads them, `HINTS = lab_hints("rag5")`, for labkit.run_lab
(`--hint N`) and labkit.show_hint (in a notebook). A student's copy needs no
solutions/: the handout carries labs/hints/.

Usage:
    python tools/make_labs.py          # rewrite labs/
    python tools/make_labs.py --check  # exit 1 if labs/ is not what solutions/ gives
"""

import ast
import json
import re
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
LABS = ROOT / "labs"
HINTS = LABS / "hints"  # labs/hints/rag5.json: every level of every TODO of rag5

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
HINT_LINE = re.compile(r"# hint (\d):(.*)")
LEVELS = (1, 2, 3)
WIDTH = 99  # where the generator wraps text (a hint, a comment), no line is longer
RUN_CELL = 'if __name__ == "__main__":'  # the lab's last cell: the hints go before it


class RegionError(ValueError):
    """An answer region is malformed: unclosed, nested, outside a function, or its hints are."""


@dataclass
class Todo:
    """One answer region as its stub needs it: where it is and its hints, level 1 first."""

    lab: str  # "rag5"
    script: str  # the lab file's name: "rag5-recursive-chunking.py"
    function: str
    indent: str
    hints: list[str]  # the text of each level: hints[0] is level 1

    def ask(self, level: int) -> str:
        """How a student asks for hint `level`, from a terminal and in a notebook."""
        return f"python labs/{self.script} --hint {level}, or show_hint({level}) in a notebook"


def enclosing_function(lines: list[str], index: int, indent: int) -> str:
    """Name of the `def` that the line at `index` (indented by `indent`) sits in."""
    for line in reversed(lines[:index]):
        match = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if match and len(match.group(1)) < indent:
            return match.group(2)
    raise RegionError(f"line {index + 1}: an answer region must be inside a function")


def read_hints(lines: list[str], index: int) -> tuple[list[str], int]:
    """The hint levels that start at lines[index] (just after BEGIN), and the index after them.

    Rejects what would give a student a wrong or missing hint: no level 1, a
    level out of order or repeated, an unnumbered `# hint:` line, an empty
    level, or a marker line inside a hint (the handout must never hold one).
    """
    levels: list[list[str]] = []
    while index < len(lines) and lines[index].strip().startswith("# hint"):
        line = lines[index].strip()
        match = HINT_LINE.fullmatch(line)
        where = f"line {index + 1}"
        if not match or int(match.group(1)) not in LEVELS:
            raise RegionError(f"{where}: a hint line is '# hint N: text', N 1, 2 or 3: {line!r}")
        level, text = int(match.group(1)), match.group(2).removeprefix(" ").rstrip()
        if level == len(levels) + 1:
            levels.append([])
        elif level != len(levels):
            expected = "1" if not levels else f"{len(levels)} or {len(levels) + 1}"
            raise RegionError(f"{where}: hint {level} where hint {expected} should come; "
                              "the levels go 1, 2, 3, in order")
        if BEGIN[2:] in text or END[2:] in text:
            raise RegionError(f"{where}: a hint must not hold a region marker")
        levels[-1].append(text)
        index += 1
    if not levels:
        raise RegionError(f"line {index}: a region needs '# hint 1: ...' lines after {BEGIN}")
    hints = [hint_text(level) for level in levels]
    if not all(hints):
        raise RegionError(f"line {index}: hint {hints.index('') + 1} is empty")
    return hints, index


def is_code_hint(text: str) -> bool:
    """True if `text` (a hint level's lines) is a function body: Python that parses and has a
    `return` at its top level. Prose never parses as such; a level that does is code."""
    try:
        body = ast.parse(text).body
    except SyntaxError:
        return False
    return any(isinstance(statement, ast.Return) for statement in body)


def hint_text(lines: list[str]) -> str:
    """One hint level's text: its lines as they are if they are code, else joined by spaces."""
    code = textwrap.dedent("\n".join(lines)).strip("\n")
    if is_code_hint(code):
        return code
    return " ".join(line.strip() for line in lines if line.strip())


def wrap(text: str, width: int) -> list[str]:
    """`text` in lines of at most `width` characters, never breaking a word or a file name."""
    return textwrap.wrap(text, width, break_long_words=False, break_on_hyphens=False)


def literal(text: str) -> str:
    """`text` as a double-quoted Python string: JSON's form of it, which Python reads the same."""
    return json.dumps(text, ensure_ascii=False)


def stub_lines(todo: Todo) -> list[str]:
    """The TODO comment and the raise that replace one answer region: level 1, and how to
    ask for the next level if there is one."""
    indent, first = todo.indent, todo.hints[0]
    comment = wrap(first, WIDTH - len(indent) - len(f"# TODO({todo.lab}): "))
    lines = [f"{indent}# TODO({todo.lab}): {comment[0]}"]
    lines += [f"{indent}#   {line}" for line in comment[1:]]
    message = f"TODO({todo.lab}) {todo.function}(): {first}"
    if len(todo.hints) > 1:
        lines.append(f"{indent}#   More help: {todo.ask(2)}.")
        message += f" More help: {todo.ask(2)}."
    return lines + raise_lines(indent, message)


def raise_lines(indent: str, message: str) -> list[str]:
    """`raise NotImplementedError(message)`, the message cut into literals that Python joins
    back into it, so no line is longer than the lint allows."""
    pieces = textwrap.wrap(message, WIDTH - len(indent) - 8, drop_whitespace=False,
                           replace_whitespace=False, expand_tabs=False, break_long_words=False)
    assert "".join(pieces) == message, message
    if len(pieces) == 1:
        return [f"{indent}raise NotImplementedError({literal(message)})"]
    return ([f"{indent}raise NotImplementedError("] + [f"{indent}    {literal(piece)}" for piece in pieces]
            + [f"{indent})"])


def string_lines(text: str, indent: str) -> list[str]:
    """`text` as string literals that fit the line, one after another: Python joins them."""
    pieces = [""]
    for word in re.findall(r"\S+\s*", text):
        if pieces[-1] and len(indent + literal(pieces[-1] + word)) > WIDTH:
            pieces.append("")
        pieces[-1] += word
    return [indent + literal(piece) for piece in pieces]


def hints_cell(todos: list[Todo]) -> list[str]:
    """The cell that says how to ask for the next hint levels and loads them (not their text)."""
    first = todos[0]
    how = (
        "Each TODO above shows its first hint: what the function must achieve, and why. Two "
        "more levels wait until you ask: the approach, then a sketch close to code. "
        f"`python labs/{first.script} --hint 2` runs the lab and shows hint 2 for the TODO "
        f"where it stops; `--hint 3` shows the next level, and `--hint 2 {first.function}` "
        "one function's. In a notebook, run the cells above, then `show_hint(2)` or "
        f'`show_hint(2, "{first.function}")`.'
    )
    lines = ["# %% [markdown]", "# ## Hints", "#"]
    lines += [f"# {line}" for line in wrap(how, 77)]
    return lines + [
        "",
        "# %%",
        "from labkit import lab_hints, show_hint  # in a notebook: show_hint(2)",
        "",
        f'HINTS = lab_hints("{first.lab}")  # labs/hints/{first.lab}.json: asked for, not read',
    ]


def hints_file(todos: list[Todo]) -> str:
    """labs/hints/ragN.json's text: every level of every TODO, in file order."""
    hints = {todo.function: {str(level): text for level, text in enumerate(todo.hints, 1)} for todo in todos}
    return json.dumps(hints, indent=1, ensure_ascii=False) + "\n"


def with_hints_cell(out: list[str], todos: list[Todo]) -> list[str]:
    """The lab's lines with the hints just before the cell that runs the lab (or at the end)."""
    if not todos:
        return out
    if RUN_CELL not in out:
        return out + ["", ""] + hints_cell(todos)
    place = out.index(RUN_CELL)
    if place > 0 and out[place - 1].startswith("# %%"):
        place -= 1
    return out[:place] + hints_cell(todos) + ["", ""] + out[place:]


def student_version(source: str, script: str) -> str:
    """The student file for a solution file's text: every answer region stubbed out."""
    return student_files(source, script)[0]


def student_files(source: str, script: str) -> tuple[str, str]:
    """(the student file, its hints file) for a solution file's text: every answer region
    stubbed out, and every level of its hints.

    `script` is the lab file's name ("rag5-recursive-chunking.py"); the lab is
    what comes before its first hyphen.
    """
    lab = script.split("-")[0]
    lines = source.splitlines()
    out: list[str] = []
    todos: list[Todo] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() != BEGIN:
            if line.strip() == END:
                raise RegionError(f"line {index + 1}: {END} without {BEGIN}")
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        function = enclosing_function(lines, index, len(indent))
        if any(todo.function == function for todo in todos):
            raise RegionError(f"line {index + 1}: a second answer region in {function}()")
        hints, index = read_hints(lines, index + 1)
        while index < len(lines) and lines[index].strip() != END:
            if lines[index].strip() == BEGIN:
                raise RegionError(f"line {index + 1}: {BEGIN} inside another region")
            if lines[index].strip().startswith("# hint"):
                raise RegionError(f"line {index + 1}: hint lines go right after {BEGIN}")
            index += 1
        if index == len(lines):
            raise RegionError(f"{BEGIN} in {function}() is never closed by {END}")
        todos.append(Todo(lab, script, function, indent, hints))
        out += stub_lines(todos[-1])
        index += 1
    student = "\n".join(with_hints_cell(out, todos)) + "\n"
    compile(student, f"labs/{script}", "exec")  # a stub must never be a syntax error
    return student, hints_file(todos) if todos else ""


def expected_labs() -> dict[Path, str]:
    """Every file of labs/ as solutions/ says it should be."""
    labs = {}
    for solution in sorted(SOLUTIONS.glob("rag*-*.py")):
        student, hints = student_files(solution.read_text(encoding="utf-8"), solution.name)
        labs[LABS / solution.name] = student
        if hints:
            labs[HINTS / f"{solution.name.split('-')[0]}.json"] = hints
    return labs


def stale_labs() -> list[str]:
    """Names of lab files that are missing, out of date, or have no solution."""
    expected = expected_labs()
    stale = [p.name for p, text in expected.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    stale += [p.name for p in [*LABS.glob("rag*-*.py"), *HINTS.glob("*.json")] if p not in expected]
    return sorted(stale)


def report_stale(stale: list[str], folder: str, tool: str, source: str) -> int:
    """What --check says of `folder` (made by `tool` from `source`): 1 and what is stale, or 0."""
    if stale:
        print(f"{folder} is out of date ({', '.join(stale)}); run: python tools/{tool}")
        return 1
    print(f"{folder} matches {source}")
    return 0


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return report_stale(stale_labs(), "labs/", "make_labs.py", "solutions/")
    HINTS.mkdir(parents=True, exist_ok=True)
    for path, text in expected_labs().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
