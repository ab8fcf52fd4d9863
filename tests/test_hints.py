"""Every hint 3 that is code works: put in place of its answer, it passes its function's public tests.

A student stuck at level 3 may type the hint in as it stands, so a hint 3
written as code must be right code, not a sketch that calls min() on an empty
list or leaves out an argument. How a hint is judged to be code is
tools/make_labs.py's rule (is_code_hint), the same that decides whether the
hint is shown line by line: its lines, dedented, parse as Python and return at
their top level, a function body. A hint 3 in prose (most of them: "Match
ATX_HEADING; the level is ...") is skipped here, and its skip says so.

For each code hint 3, the solution's answer region (the lines between the
hints and `# END SOLUTION`) is replaced by the hint, indented as the region
is; the function so written replaces the reference in the loaded solution lab,
and that function's calls of the lab's public grading tests
(tests/grading/test_ragN.py, the calls charged to it, as the lab's own last
check runs them: labkit/public_tests.py) must all pass. A test checks what it
checks, and a public test may not look at everything (no public test of rag5
reads a chunk's `kind`), so each call of the hint's function is also made to
the reference, and the two must agree: the same value (floats to 1e-12), or
an error from both. The reference comes back after each, so the other tests
see the lab as it is.
"""

import ast
import importlib.util
import math
import textwrap
from pathlib import Path
from typing import NamedTuple

import labkit
import pytest
from labkit.public_tests import lab_functions, public_test_calls, reason

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
# The hints the issue found wrong; they must stay code, so that this test keeps running them.
MUST_BE_CODE = {("rag5", "recursive_chunks"), ("rag11", "reciprocal_rank_fusion"), ("rag11", "convex_fusion")}


def with_hint(region: Region) -> str:
    """The source of the region's function with its answer replaced by its hint 3."""
    lines = region.path.read_text(encoding="utf-8").splitlines()
    first, last = region.answer
    hint = textwrap.indent(region.hints[2], region.indent)
    text = "\n".join(lines[:first] + hint.splitlines() + lines[last:]) + "\n"
    tree = ast.parse(text)
    node = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == region.function)
    return ast.get_source_segment(text, node)


def same(got, expected) -> bool:
    """True if two results agree: equal, floats to 1e-12, arrays and sequences item by item."""
    if hasattr(got, "tolist") and hasattr(expected, "tolist"):
        got, expected = got.tolist(), expected.tolist()
    if isinstance(got, float) and isinstance(expected, (float, int)):
        return math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12)
    if isinstance(got, (list, tuple)) and type(got) is type(expected) and not hasattr(got, "_fields"):
        return len(got) == len(expected) and all(map(same, got, expected))
    if isinstance(got, dict) and isinstance(expected, dict):
        return got.keys() == expected.keys() and all(same(got[key], expected[key]) for key in got)
    return type(got) is type(expected) and got == expected


def agreeing(hint, reference):
    """`hint`, checked at each call against `reference` called with the same arguments."""

    def call(*args, **keywords):
        try:
            expected = reference(*args, **keywords)
        except Exception as error:  # noqa: BLE001 - the hint must raise too
            hint(*args, **keywords)
            raise AssertionError(f"the hint returns where the reference raises {type(error).__name__}: "
                                 f"{error}") from None
        got = hint(*args, **keywords)
        if not same(got, expected):
            raise AssertionError(f"the hint returns {got!r:.200} where the reference returns {expected!r:.200}")
        return got

    return call


def test_the_hints_found_wrong_are_code_and_so_run_here():
    code = {(r.lab, r.function) for r in REGIONS if len(r.hints) == 3 and make_labs.is_code_hint(r.hints[2])}
    assert MUST_BE_CODE <= code, f"no longer code, so no longer run: {sorted(MUST_BE_CODE - code)}"


@pytest.mark.parametrize("region", REGIONS, ids=lambda r: f"{r.lab}-{r.function}")
def test_a_hint_3_that_is_code_passes_its_functions_public_tests(region):
    if len(region.hints) < 3 or not make_labs.is_code_hint(region.hints[2]):
        pytest.skip("hint 3 is prose: its lines, dedented, are not Python that returns at its "
                    "top level (tools/make_labs.py is_code_hint)")
    source = with_hint(region)
    lab = labkit.load_lab(region.lab, SOLUTIONS)
    namespace = vars(lab)
    reference = namespace[region.function]
    calls = [call for call in public_test_calls(region.lab) if call.function == region.function]
    assert calls, f"tests/grading/test_{region.lab}.py charges no test to {region.function}()"
    failures = []
    try:
        exec(compile(source, f"<hint 3 of {region.function}>", "exec"), namespace)
        namespace[region.function] = agreeing(namespace[region.function], reference)
        functions = lab_functions(namespace)
        for call in calls:
            arguments = dict(call.parameters)
            arguments[region.lab] = functions
            functions.last_call = ""
            try:
                call.test(**arguments)
            except Exception as error:  # noqa: BLE001 - every failure is reported, one line each
                failures.append(f"{call.name}: {reason(error, functions.last_call)}")
    finally:
        namespace[region.function] = reference
    assert not failures, (f"hint 3 of {region.lab} {region.function}(), typed in as it stands, fails "
                          f"{len(failures)} of {len(calls)} public test calls:\n" + "\n".join(failures[:5]))
