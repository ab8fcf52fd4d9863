"""No hint is an answer: a stuck student gets the way, never the code to paste.

The hints ship with the handout (labs/hints/), so a hint that solved its TODO
would hand the marks to whoever copies it, and the worker of a grading run can
read them too. Each hint level is held to two rules:

- put in place of its function's answer, a hint that is code (tools/make_labs.py's
  rule, is_code_hint: its lines, dedented, parse as Python and return at their top
  level) fails at least one of that function's public grading tests: a level 3 is
  a skeleton, the decisive expressions left as `...` with a comment saying what
  goes there. A hint in prose cannot be pasted and is skipped, and its skip says so;
- no hint repeats its answer: at most half of the lines that compute the answer
  (not the trivial ones, `return result`, `chunks = []`; not control flow, which a
  skeleton shows; not argument checks, nor the glue three answers share) stand
  anywhere in the function's hints, whitespace aside, so code joined by ";" in
  prose is found too.

A skeleton must not mislead either: every name it reads that it does not bind
itself is one the lab defines (or a builtin), so it never points at a helper
that is not there.
"""

import ast
import builtins
import importlib.util
import re
import textwrap
from collections import Counter
from pathlib import Path
from typing import NamedTuple

import labkit
import pytest
from labkit.public_tests import lab_functions, public_test_calls

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"


def load_make_labs():
    spec = importlib.util.spec_from_file_location("make_labs", ROOT / "tools" / "make_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_labs = load_make_labs()


class Region(NamedTuple):
    """One answer region of a solution: its lab, function, hints, and where its answer lies."""

    lab: str  # "rag11"
    path: Path
    function: str
    hints: list  # the levels' texts, level 1 first, as labs/hints/ has them
    indent: str  # the BEGIN marker's indentation
    answer: tuple  # (first, last) line indices of the answer, after the hints, before END


def regions() -> list[Region]:
    """Every answer region of solutions/, in file order."""
    found = []
    for path in sorted(SOLUTIONS.glob("rag*-*.py")):
        lines = path.read_text(encoding="utf-8").splitlines()
        lab = path.stem.split("-")[0]
        for index, line in enumerate(lines):
            if line.strip() != make_labs.BEGIN:
                continue
            hints, first = make_labs.read_hints(lines, index + 1)
            last = next(i for i in range(first, len(lines)) if lines[i].strip() == make_labs.END)
            function = make_labs.enclosing_function(lines, index, len(line) - len(line.lstrip()))
            found.append(Region(lab, path, function, hints, line[: len(line) - len(line.lstrip())],
                                (first, last)))
    return found


REGIONS = regions()
def with_hint(region: Region, hint: str) -> str:
    """The source of the region's function with its answer replaced by `hint`."""
    lines = region.path.read_text(encoding="utf-8").splitlines()
    first, last = region.answer
    hint = textwrap.indent(hint, region.indent)
    text = "\n".join(lines[:first] + hint.splitlines() + lines[last:]) + "\n"
    tree = ast.parse(text)
    node = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == region.function)
    return ast.get_source_segment(text, node)


# Lines of an answer that carry no decision: a hint may show them.
TRIVIAL = re.compile(r"(return \w+|\w+ = (\[\]|\{\}|0|None|\(\))|pass|else:|continue|break|try:|[)\]}]|return|"
                     r"return (\[\]|\{\}))")
STRUCTURE = ("for ", "while ", "if ", "elif ", "with ", "def ")  # the shape a skeleton shows
AT_MOST_REPEATED = 0.5


def squashed(text: str) -> str:
    return "".join(text.split())


def computing_lines(region: Region) -> list[str]:
    """The answer's lines that compute something: not trivial, not control flow (a skeleton shows that),
    not an argument check (a raise and the condition before it), comments dropped."""
    lines = region.path.read_text(encoding="utf-8").splitlines()
    first, last = region.answer
    code = [" ".join(line.split("  #")[0].split()) for line in lines[first:last]]
    code = [line for line in code if line and not line.startswith("#")]
    return [line for number, line in enumerate(code)
            if not (TRIVIAL.fullmatch(line) or line.startswith((*STRUCTURE, "raise ", '"', 'f"'))
                    or number + 1 < len(code) and code[number + 1].startswith("raise "))]


def decisive_lines(region: Region) -> list[str]:
    """The answer's computing lines less the glue three or more answers share (checking a window's
    arguments, making one TokenIndex): what is this function's own."""
    return [line for line in computing_lines(region) if SHARED_GLUE[squashed(line)] < 3]


SHARED_GLUE = Counter(squashed(line) for region in REGIONS for line in set(computing_lines(region)))


def code_hints(region: Region) -> list[tuple[int, str]]:
    """(level, text) of each of the region's hints that is code."""
    return [(level, hint) for level, hint in enumerate(region.hints, 1) if make_labs.is_code_hint(hint)]


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.lab}-{r.function}")
def test_no_hint_repeats_its_answer(region):
    answer = decisive_lines(region)
    shown = "".join(squashed(hint) for hint in region.hints)  # prose joins code with ";": search it whole
    repeated = [line for line in answer if squashed(line) in shown]
    assert len(repeated) <= AT_MOST_REPEATED * len(answer), (
        f"the hints of {region.lab} {region.function}() repeat {len(repeated)} of the {len(answer)} lines that "
        f"compute its answer, over the half allowed: {repeated[:4]}")


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.lab}-{r.function}")
def test_a_hint_that_is_code_names_only_what_the_lab_has(region):
    hints = code_hints(region)
    if not hints:
        pytest.skip("no hint of this function is code (tools/make_labs.py is_code_hint)")
    lab = vars(labkit.load_lab(region.lab, SOLUTIONS))
    signature = ast.parse(with_hint(region, hints[0][1])).body[0].args
    parameters = {arg.arg for arg in [*signature.posonlyargs, *signature.args, *signature.kwonlyargs,
                                       *filter(None, (signature.vararg, signature.kwarg))]}
    for level, hint in hints:
        tree = ast.parse(hint)
        bound = parameters | {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
                              and isinstance(node.ctx, ast.Store)}
        bound |= {node.name for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)}
        bound |= {arg.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) for arg in node.args.args}
        unknown = sorted({node.id for node in ast.walk(tree) if isinstance(node, ast.Name)
                          and isinstance(node.ctx, ast.Load)} - bound - set(lab) - set(dir(builtins)))
        assert not unknown, f"hint {level} of {region.lab} {region.function}() names what the lab lacks: {unknown}"


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.lab}-{r.function}")
def test_no_hint_passes_its_functions_public_tests(region):
    hints = code_hints(region)
    if not hints:
        pytest.skip("no hint of this function is code (tools/make_labs.py is_code_hint): prose is not pasted")
    calls = [call for call in public_test_calls(region.lab) if call.function == region.function]
    if not calls:  # judged through the functions that call it: then a skeleton must leave a blank
        for level, hint in hints:
            blanks = [n for n in ast.walk(ast.parse(hint)) if isinstance(n, ast.Constant) and n.value is ...]
            assert blanks, f"hint {level} of {region.lab} {region.function}() is code with no `...` left to write"
        return
    for level, hint in hints:
        lab = labkit.load_lab(region.lab, SOLUTIONS)
        namespace = vars(lab)
        reference = namespace[region.function]
        passed = 0
        try:
            exec(compile(with_hint(region, hint), f"<hint {level} of {region.function}>", "exec"), namespace)
            functions = lab_functions(namespace)
            for call in calls:
                arguments = dict(call.parameters)
                arguments[region.lab] = functions
                try:
                    call.test(**arguments)
                    passed += 1
                except (Exception, pytest.fail.Exception):  # noqa: BLE001, S110 - a failing call is what a hint must give
                    pass
        finally:
            namespace[region.function] = reference
        assert passed < len(calls), (f"hint {level} of {region.lab} {region.function}(), typed in as it stands, "
                                     f"passes all {len(calls)} public test calls: it is an answer")
