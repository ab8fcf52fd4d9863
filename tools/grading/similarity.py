"""Which students' code is too alike: each pair of students, and each student and the reference.

What is compared, lab by lab: the functions a student writes, those that
hold a `# BEGIN SOLUTION` region in solutions/<lab>-*.py, found by name in the
student's lab file (a script, or a notebook's code cells in order). Of each
function only what the student wrote counts: its docstring, and the statements
the lab gives before and after the region, are left out, since every student
has them. A function that is still its stub (it raises
NotImplementedError("TODO(...")) is left out: stubs are alike by design.

Layout, comments and names must not hide a copy, so each function is parsed
with ast and normalised: every name it binds (arguments, variables, loop
targets, nested functions) becomes v0, v1, ... in the order of first use, and
ast.unparse writes it back in one layout, with no comments. Names from outside
the function (modules, helpers, builtins), attribute names and constants stay:
they are what the code does. The text is then cut into tokens.

The score is the Jaccard similarity of 5-token shingles (every run of five
consecutive tokens): shingles two students share over all the shingles either
has, summed over the functions of a lab that both wrote. 1.0 is the same code
up to names and layout; one changed token in a function of 200 costs about
0.05. Shingles rather than an edit distance: moving a block of code does not
hide it, and sets are cheap enough to compare every pair of a large class.

A lab is flagged when its score is at least THRESHOLD over at least
MIN_SHINGLES shingles: short functions that every correct answer writes alike
do not flag anyone on their own. Two students who both match the reference on
a lab are flagged as such, not as copies of each other.

What is parsed is bounded before it is parsed: ast takes some 150 bytes of
memory per byte of ordinary code and up to 750 per word or sign of dense code
(a tuple of a million names), so a file of more than MAX_BYTES, or of more
than MAX_TOKENS words and signs, is not compared, and similarity.md says so.
Both limits are some twenty times the longest solution. The report is
Markdown whose student ids and file names come from the class: they are
escaped, so none can make a table cell, a link or a heading of its own.
"""

import ast
import copy
import json
import re
import unicodedata
from dataclasses import dataclass, field
from functools import cached_property
from itertools import combinations
from pathlib import Path

from labkit.loading import lab_file

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
SHINGLE = 5  # tokens per shingle
THRESHOLD = 0.9  # a lab at least this alike is flagged...
MIN_SHINGLES = 60  # ...when it has at least this many shingles (some 8 lines of code)
LISTED = 0.6  # pairs at least this alike are listed in the report, flagged or not
REFERENCE = "solutions/"  # how the report names the reference
TOKEN = re.compile(r"\w+|[^\w\s]")
MAX_BYTES = 1 << 20  # bytes of a lab file read for comparing (the longest solution has 44 KB)...
MAX_TOKENS = 200_000  # ...and words and signs parsed (it has 11,600): ast's memory grows with them
MARKDOWN_SIGNS = re.compile(r"([\\`*_\[\]<>|!&~#])")  # escaped wherever they are in a student's text
LEADING_MARKER = re.compile(r"^([-+=])|^(\d+)([.)])")  # a list item or heading, at the start of a line


# ---- what a student writes ----------------------------------------------------


@dataclass(frozen=True)
class Template:
    """A function the student completes, and the statements the lab gives around its region."""

    name: str
    before: tuple[str, ...]  # the shape of each given statement before the region
    after: tuple[str, ...]  # and after it


def statements(function: ast.FunctionDef) -> list[ast.stmt]:
    """The function's body without its docstring, which the lab gives."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        if isinstance(body[0].value.value, str):
            return body[1:]
    return body


def shape(statement: ast.stmt) -> str:
    """A statement with every name blanked out, so that a given statement the student
    renamed variables in is still recognised as given."""
    blank = copy.deepcopy(statement)
    for node in ast.walk(blank):
        if isinstance(node, ast.Name):
            node.id = "_"
        elif isinstance(node, ast.arg):
            node.arg = "_"
    return ast.dump(blank)


def templates(source: str) -> list[Template]:
    """The functions of a solution's text that hold an answer region, in order.

    A region belongs to the innermost function around its BEGIN line; what a
    function gives runs up to its first region and from the end of its last.
    Comments are not in the ast, so the markers are found in the text and
    placed by line.
    """
    lines = source.splitlines()
    functions = [
        node for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    regions: dict[str, tuple[ast.FunctionDef, int, int]] = {}  # name -> (function, begin, end)
    for number, line in enumerate(lines, start=1):
        if line.strip() != BEGIN:
            continue
        function = max((f for f in functions if f.lineno < number <= f.end_lineno),
                       key=lambda f: f.lineno)
        end = next(n for n in range(number, len(lines) + 1) if lines[n - 1].strip() == END)
        begin = regions[function.name][1] if function.name in regions else number
        regions[function.name] = (function, begin, end)
    return [
        Template(name, tuple(shape(s) for s in statements(function) if s.end_lineno < begin),
                 tuple(shape(s) for s in statements(function) if s.lineno > end))
        for name, (function, begin, end) in regions.items()
    ]


def reference_templates(solutions: Path, labs: list[str]) -> dict[str, list[Template]]:
    """For each lab, the functions a student writes, read from its solution file."""
    return {lab: templates(lab_file(lab, solutions).read_text(encoding="utf-8")) for lab in labs}


class TooLarge(Exception):
    """A lab file bigger than what is compared; the message says by how much."""


def bounded_text(path: Path) -> str:
    """The text of a lab file, reading MAX_BYTES at most (a file may grow while it is read)."""
    with open(path, "rb") as file:
        data = file.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        size = max(path.stat().st_size, len(data))
        raise TooLarge(f"{path.name} is {size / (1 << 20):.1f} MB, more than the {MAX_BYTES >> 20} MB compared")
    return data.decode("utf-8", errors="replace")


def code_of(path: Path) -> str:
    """The Python code of a lab file: a script as it is, a notebook's code cells in order.

    A notebook cell is read as IPython reads it, so a `%magic` or `!command`
    line becomes a call instead of a syntax error. TooLarge for more code than
    is compared.
    """
    text = bounded_text(path)
    if path.suffix == ".ipynb":
        from IPython.core.inputtransformer2 import TransformerManager  # slow to import: on need

        reader = TransformerManager()
        text = "\n".join(
            reader.transform_cell("".join(cell["source"]))
            for cell in json.loads(text)["cells"] if cell.get("cell_type") == "code"
        )
    tokens = TOKEN.subn("", text)[1]  # counted without keeping them
    if tokens > MAX_TOKENS:
        raise TooLarge(f"{path.name} has {tokens:,} words and signs of code, more than the {MAX_TOKENS:,} compared")
    return text


def written_part(function: ast.FunctionDef, template: Template) -> list[ast.stmt]:
    """The statements the student wrote: the body less the given ones at either end."""
    body = statements(function)
    start = 0
    for given, statement in zip(template.before, body):
        if shape(statement) != given:
            break
        start += 1
    stop = len(body)
    for given, statement in zip(reversed(template.after), reversed(body[start:])):
        if shape(statement) != given:
            break
        stop -= 1
    return body[start:stop]


def is_stub(part: list[ast.stmt]) -> bool:
    """True if the written part still raises the lab's NotImplementedError("TODO(...")."""
    for node in ast.walk(ast.Module(body=part, type_ignores=[])):
        if isinstance(node, ast.Raise) and isinstance(node.exc, ast.Call):
            call = node.exc
            if getattr(call.func, "id", None) == "NotImplementedError" and call.args:
                message = call.args[0]
                if isinstance(message, ast.Constant) and str(message.value).startswith("TODO("):
                    return True
    return False


# ---- normalised, then cut into shingles ----------------------------------------


def bound_names(function: ast.FunctionDef) -> set[str]:
    """Every name the function (or anything nested in it) binds, less global/nonlocal ones."""
    bound, declared = set(), set()
    for node in ast.walk(function):
        if isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node is not function:
                bound.add(node.name)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
        elif isinstance(node, (ast.Global, ast.Nonlocal)):
            declared.update(node.names)
    return bound - declared


class Renamer(ast.NodeTransformer):
    """Renames the function's own names to v0, v1, ... in the order they are first met."""

    def __init__(self, local: set[str]):
        self.local = local
        self.names: dict[str, str] = {}

    def placeholder(self, name: str) -> str:
        if name not in self.local:
            return name
        return self.names.setdefault(name, f"v{len(self.names)}")

    def visit_Name(self, node: ast.Name) -> ast.Name:
        node.id = self.placeholder(node.id)
        return node

    def visit_arg(self, node: ast.arg) -> ast.arg:
        node.arg = self.placeholder(node.arg)
        node.annotation = None
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.FunctionDef:
        node.name = self.placeholder(node.name)
        node.returns = None
        return self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def visit_ClassDef(self, node: ast.ClassDef) -> ast.ClassDef:
        node.name = self.placeholder(node.name)
        return self.generic_visit(node)


def normalised(function: ast.FunctionDef, part: list[ast.stmt]) -> str:
    """The written part as layout-free text, with the function's own names as placeholders.

    The arguments are renamed first, in their order, so an argument keeps its
    placeholder whatever the written part uses first.
    """
    renamer = Renamer(bound_names(function))
    renamer.visit(function.args)
    return ast.unparse([renamer.visit(statement) for statement in part])


def shingles(text: str) -> frozenset[tuple[str, ...]]:
    """Every run of SHINGLE consecutive tokens of `text` (the whole text if it is shorter)."""
    tokens = TOKEN.findall(text)
    if len(tokens) <= SHINGLE:
        return frozenset([tuple(tokens)]) if tokens else frozenset()
    return frozenset(tuple(tokens[i : i + SHINGLE]) for i in range(len(tokens) - SHINGLE + 1))


@dataclass
class LabWork:
    """One lab file's written functions, normalised: name -> shingles. `problem` if unreadable."""

    functions: dict[str, frozenset] = field(default_factory=dict)
    problem: str = ""


def lab_work(path: Path, wanted: list[Template]) -> LabWork:
    """The written, non-stub functions of one lab file, as shingles; or why it cannot be read
    (not Python, a damaged notebook, code nested too deep for ast)."""
    try:
        return LabWork(written_functions(ast.parse(code_of(path)), wanted))
    except TooLarge as error:
        return LabWork(problem=f"not compared: {error}")
    except (SyntaxError, ValueError, LookupError, TypeError, RecursionError) as error:
        return LabWork(problem=f"{path.name} cannot be read ({type(error).__name__}: {error})")


def written_functions(tree: ast.Module, wanted: list[Template]) -> dict[str, frozenset]:
    """Shingles of each wanted function the file defines and the student has written.

    A function is looked up by name at the top level of the file; with two
    definitions of the same name, the last one is what Python keeps.
    """
    defined = {
        node.name: node for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    }
    written = {}
    for template in wanted:
        function = defined.get(template.name)
        if function is None:
            continue
        part = written_part(function, template)
        if part and not is_stub(part):
            written[template.name] = shingles(normalised(function, part))
    return written


# ---- comparing ----------------------------------------------------------------


@dataclass(frozen=True)
class Match:
    """How alike two students (or a student and the reference) are on one lab."""

    lab: str
    first: str
    second: str  # REFERENCE for the reference
    score: float
    shingles: int  # all shingles of the functions compared: how much code the score rests on
    functions: tuple[str, ...]

    @property
    def flagged(self) -> bool:
        return self.score >= THRESHOLD and self.shingles >= MIN_SHINGLES


def compare(lab: str, first: str, a: LabWork, second: str, b: LabWork) -> Match | None:
    """The Jaccard score of two students' shared functions of a lab; None if they share none."""
    names = tuple(name for name in a.functions if name in b.functions)
    shared = sum(len(a.functions[n] & b.functions[n]) for n in names)
    either = sum(len(a.functions[n] | b.functions[n]) for n in names)
    if not either:
        return None
    return Match(lab, first, second, shared / either, either, names)


@dataclass
class Findings:
    """Every listed pair, every student against the reference, and what could not be read."""

    pairs: list[Match]
    reference: list[Match]
    problems: list[str]

    @cached_property
    def near_reference(self) -> set[tuple[str, str]]:
        """(student, lab) for every lab flagged against the reference."""
        return {(m.first, m.lab) for m in self.reference if m.flagged}

    def explained(self, match: Match) -> bool:
        """True if both students of a pair match the reference on the lab: the reference
        explains their likeness, and they are not copies of each other."""
        return {(match.first, match.lab), (match.second, match.lab)} <= self.near_reference

    def flags(self) -> dict[str, list[str]]:
        """Short flags per student: "same-as-reference", "copy-of:<other>"."""
        flags: dict[str, list[str]] = {}
        for student, _ in sorted(self.near_reference):
            add(flags, student, "same-as-reference")
        for match in self.pairs:
            if match.flagged and not self.explained(match):
                add(flags, match.first, f"copy-of:{match.second}")
                add(flags, match.second, f"copy-of:{match.first}")
        return flags


def add(flags: dict[str, list[str]], student: str, flag: str) -> None:
    """Add a flag to a student's list once."""
    if flag not in flags.setdefault(student, []):
        flags[student].append(flag)


def find_similar(students: dict[str, dict[str, Path]], solutions: Path,
                 labs: list[str]) -> Findings:
    """Compare every pair of students, and each with the reference, lab by lab.

    `students` maps a student to their lab files (lab -> path); a lab without
    a file has nothing to compare.
    """
    wanted = reference_templates(solutions, labs)
    reference = {lab: lab_work(lab_file(lab, solutions), wanted[lab]) for lab in labs}
    work = {
        student: {lab: lab_work(path, wanted[lab]) for lab, path in files.items() if lab in wanted}
        for student, files in sorted(students.items())
    }
    problems = [
        f"{student} {lab}: {done.problem}"
        for student, labs_done in work.items() for lab, done in labs_done.items() if done.problem
    ]
    against_reference = [
        match for student, labs_done in work.items() for lab, done in labs_done.items()
        if (match := compare(lab, student, done, REFERENCE, reference[lab]))
    ]
    pairs = [
        match for first, second in combinations(work, 2) for lab in labs
        if lab in work[first] and lab in work[second]
        if (match := compare(lab, first, work[first][lab], second, work[second][lab]))
        if match.score >= LISTED
    ]
    return Findings(sorted(pairs, key=most_alike_first),
                    sorted(against_reference, key=most_alike_first), problems)


def most_alike_first(match: Match) -> tuple:
    """Sort key: highest score first, then by lab and names, so the report is stable."""
    return -match.score, match.lab, match.first, match.second


# ---- the report -----------------------------------------------------------------


def markdown_text(text: str) -> str:
    """A student's text (an id, a file name, a message) as Markdown shows it, literally, on one line:
    line breaks and controls become spaces, and every sign that could open a link, a code span,
    a table cell, emphasis, a heading or a list is escaped with a backslash."""
    flat = "".join(" " if unicodedata.category(c) in ("Cc", "Cf", "Zl", "Zp") else c for c in text).strip()
    escaped = MARKDOWN_SIGNS.sub(r"\\\1", flat)
    return LEADING_MARKER.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", escaped)


def names(match: Match) -> str:
    """The student, or both students, of a match, escaped for a table cell."""
    if match.second == REFERENCE:
        return markdown_text(match.first)
    return f"{markdown_text(match.first)}, {markdown_text(match.second)}"


def table(matches: list[Match], who: str) -> list[str]:
    """A Markdown table of matches, most alike first; `who` heads the students' column."""
    rows = [f"| score | lab | {who} | shingles | functions compared | flagged |",
            "|---:|---|---|---:|---|---|"]
    rows += [
        f"| {m.score:.2f} | {m.lab} | {names(m)} | {m.shingles} | {', '.join(m.functions)} "
        f"| {'yes' if m.flagged else ''} |"
        for m in matches
    ]
    return rows


def report(findings: Findings) -> str:
    """similarity.md: the method in two lines, then the pairs and the reference matches."""
    pairs = [m for m in findings.pairs if not findings.explained(m)]
    listed = [m for m in findings.reference if m.score >= LISTED]
    lines = [
        "# Similar code",
        "",
        f"Score: Jaccard similarity of {SHINGLE}-token shingles of the written functions, "
        "normalised (no comments, docstrings or layout; local names replaced), "
        "over the functions both wrote in a lab.",
        f"Flagged: score >= {THRESHOLD} over at least {MIN_SHINGLES} shingles. "
        f"Listed: score >= {LISTED}.",
        "",
        "## Pairs of students",
        "",
    ]
    lines += table(pairs, "students") if pairs else ["None listed."]
    if len(pairs) < len(findings.pairs):
        lines += ["", f"Left out: {len(findings.pairs) - len(pairs)} pairs of students who both "
                      "match the reference on the lab (listed below), not each other."]
    lines += ["", f"## Students and the reference ({REFERENCE})", ""]
    lines += table(listed, "student") if listed else ["None listed."]
    if findings.problems:
        lines += ["", "## Not compared", ""] + [f"- {markdown_text(problem)}" for problem in findings.problems]
    return "\n".join(lines) + "\n"
