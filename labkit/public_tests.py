"""A lab's public grading tests, run in the lab's own process as its last check.

The grader runs tests/grading/test_ragN.py on a student's lab (in a sandbox,
with points). A lab ends by running the same tests, from the same file, on the
functions it has just defined: the same cases, and the same property-test
examples (the "fast" hypothesis profile draws the same ones every time). So a
lab whose checks all pass has passed every public test the grader runs; the
hidden tests only add inputs.

Each test gets the lab's functions where pytest would give it the lab (its
`rag4` argument), and each `parametrize` case is one call, as in pytest.

The grader runs a lab where the course's tests, tools and judges do not exist
(tools/grading/confine.py), so a lab that imports one of them would pass here
and fail there: such an import fails this check too (unreachable_imports).
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import itertools
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace

import pytest

from academy_llm import COURSE_ROOT
from labkit.cases import error_line, shown
from labkit.safe_text import safe_text
from labkit.sealed import seal

ROOT = COURSE_ROOT
TESTS = ROOT / "tests" / "grading"
SHOWN_FAILURES = 5  # failing tests named in the check's line; pytest lists them all
REASON_LIMIT = 300  # characters of a failing call's reason, as the grader's
# pytest's own verdicts on a test (pytest.raises's "DID NOT RAISE", pytest.fail, pytest.skip, and xfail's,
# a kind of fail) derive from BaseException, not Exception, so that code under test does not catch them.
PYTEST_OUTCOMES = (pytest.fail.Exception, pytest.skip.Exception)


@dataclass(frozen=True)
class TestCall:
    """One public test with one set of parameters, as pytest would run it."""

    name: str  # "test_word_windows_small_example[text1]"
    function: str  # the student-written function its points are charged to
    test: object
    parameters: dict


@dataclass(frozen=True)
class TestFailure:
    call: TestCall
    reason: str  # one line

    def __str__(self) -> str:
        return f"{self.call.name} ({self.call.function}): {self.reason}"


def test_file(lab: str) -> Path:
    return TESTS / f"test_{lab}.py"


def public_test_calls(lab: str) -> list[TestCall]:
    """Every call of the lab's public tests, in the file's order."""
    path = test_file(lab)
    if not path.is_file():
        raise FileNotFoundError(f"{path.relative_to(ROOT)} is missing: restore it (git checkout tests/)")
    for folder in (ROOT / "tools" / "grading", ROOT / "tests"):  # what the tests import, as conftest finds it
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
    import profiles

    profiles.load_fast_profile()
    keep_hypothesis_tables()
    spec = importlib.util.spec_from_file_location(f"_public_tests_{lab}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    calls = []
    for name, test in vars(module).items():
        if name.startswith("test_") and callable(test) and getattr(test, "__module__", "") == module.__name__:
            calls += expanded(name, test)
    return calls


def keep_hypothesis_tables() -> None:
    """Keep hypothesis's Unicode tables in the course's cache folder (its hypothesis/), not in a
    .hypothesis folder wherever the lab is run from: hypothesis computes them on first use, about a
    second of CPU, and a lab run from a new folder would pay again. The examples a check tries do not
    depend on where they are kept (the "fast" profile keeps no database). $HYPOTHESIS_STORAGE_DIRECTORY,
    when set, still decides."""
    from hypothesis import configuration

    from labkit.openai_embedder import course_cache_dir

    if not os.environ.get("HYPOTHESIS_STORAGE_DIRECTORY"):
        configuration.set_hypothesis_home_dir(course_cache_dir() / "hypothesis")


def expanded(name: str, test) -> list[TestCall]:
    """A test's calls: one per combination of its `parametrize` cases."""
    marks = getattr(test, "pytestmark", [])
    charged = next((mark.args[0] for mark in marks if mark.name == "grades"), "?")
    tables = [parameter_sets(mark) for mark in reversed(marks) if mark.name == "parametrize"]
    calls = []
    for combination in itertools.product(*tables):
        parameters, function, ids = {}, charged, []
        for values, case_marks, case_id in combination:
            parameters.update(values)
            function = next((m.args[0] for m in case_marks if m.name == "grades"), function)
            ids.append(case_id)
        label = f"{name}[{'-'.join(ids)}]" if tables else name
        calls.append(TestCall(label, function, test, parameters))
    return calls


def parameter_sets(mark) -> list[tuple[dict, list, str]]:
    """A parametrize mark's cases: (values by argument name, the case's own marks, its id)."""
    names, table = mark.args[0], mark.args[1]
    names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
    ids = mark.kwargs.get("ids")
    cases = []
    for number, case in enumerate(table):
        if hasattr(case, "values") and hasattr(case, "marks"):  # pytest.param(...)
            values, marks, case_id = tuple(case.values), list(case.marks), case.id
        else:
            values, marks, case_id = (tuple(case) if len(names) > 1 else (case,)), [], None
        if case_id is None and ids is not None:
            case_id = "-".join(str(ids(value)) for value in values) if callable(ids) else ids[number]
        if case_id is None:
            case_id = "-".join(value_id(value, name, number) for value, name in zip(values, names))
        cases.append((dict(zip(names, values)), marks, str(case_id)))
    return cases


def value_id(value, name: str, number: int) -> str:
    """A case's id as pytest makes it: a short plain value as itself, else the name and number."""
    if isinstance(value, (bool, int, float, type(None))) or (isinstance(value, str) and value.isprintable()
                                                            and len(value) <= 30):
        return str(value)
    return f"{name}{number}"


class LabFunctions(SimpleNamespace):
    """The lab's names as a test reaches them (`rag4.word_windows`); `last_call` is the
    lab call a test made last, as a learner would type it, for the reason a test failed."""

    def __repr__(self) -> str:
        return "<the lab's functions>"


def lab_functions(namespace: dict) -> LabFunctions:
    """The lab's functions, each call recorded, with the grader's `wire.New(name, args)`
    arguments made here as the worker makes them: the lab's own objects."""
    import wire

    functions = LabFunctions(last_call="")

    def made(value):
        if isinstance(value, list):  # a list of the lab's objects (rag6's Blocks), made one by one
            return [made(item) for item in value]
        return namespace[value.name](*map(made, value.args)) if isinstance(value, wire.New) else value

    def recorded(name, function):
        def call(*args, **keywords):
            shown_args = [shown(value) for value in args] + [f"{key}={shown(value)}" for key, value in keywords.items()]
            functions.last_call = f"{name}({', '.join(shown_args)})"
            return function(*map(made, args), **{key: made(value) for key, value in keywords.items()})
        call.__name__ = name
        return call

    for name, value in namespace.items():
        if not name.startswith("_"):
            setattr(functions, name, recorded(name, value) if callable(value) else value)
    return functions


def unreachable_imports(namespace: dict) -> list[str]:
    """What the lab's file imports that the grader's worker cannot: the packages that judge a lab
    (confine.HIDDEN_PACKAGES) and the course's own tests and grading tools, each as
    "line N: import NAME"."""
    import confine  # on the path public_test_calls made

    source = Path(namespace.get("__file__") or "")
    if source.suffix != ".py" or not source.is_file():
        return []
    course = {path.stem for folder in (ROOT / "tests", ROOT / "tools" / "grading") for path in folder.glob("*.py")}
    unreachable = set(confine.HIDDEN_PACKAGES) | course
    found = []
    for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
        names = ([alias.name for alias in node.names] if isinstance(node, ast.Import)
                 else [node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else [])
        found += [f"line {node.lineno}: import {name}" for name in names if name.split(".")[0] in unreachable]
    return found


def run_public_tests(lab: str, namespace: dict) -> tuple[int, list[TestFailure]]:
    """Run every public test of `lab` on the functions in `namespace` (a lab's globals()).
    Return how many calls ran and the ones that failed, each with a one-line reason; an import
    the grader's worker cannot make is a failure of its own, as it is in the grader."""
    calls = public_test_calls(lab)
    functions = lab_functions(namespace)
    imports = [TestFailure(TestCall("the lab's imports", "every function", None, {}),
                           f"{where}, which the grader does not have: use what the lab imports already")
               for where in unreachable_imports(namespace)]
    failures = list(imports)
    restore = seal(lab, namespace)  # as in the grader's worker: given code that does a TODO refuses
    try:
        run_calls(lab, calls, functions, failures)
    finally:
        restore()
    return len(calls) + len(imports), failures


def run_calls(lab: str, calls: list, functions, failures: list) -> None:
    """Run each public test call on the lab's functions, adding each failure to `failures`."""
    for call in calls:
        arguments = dict(call.parameters)
        if lab in inspect.signature(call.test).parameters:
            arguments[lab] = functions
        functions.last_call = ""
        try:
            call.test(**arguments)
        except KeyboardInterrupt:
            raise  # the learner's Ctrl-C: the lab stops, as any program does
        except BaseException as error:  # every other way a test ends is its verdict (pytest.raises's too)
            if isinstance(error, Exception) and str(error).startswith("TODO("):
                raise
            failures.append(TestFailure(call, reason(error, functions.last_call)))


def reason(error: BaseException, last_call: str) -> str:
    """One line, safe to print: the lab's last call, then the test's own words for what was
    wrong (its assertion's, or pytest's as the grader reports them: "Failed: DID NOT RAISE
    ValueError"), or what the lab raised (sys.exit too) and where."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    message = lines[0] if lines else ""
    if isinstance(error, PYTEST_OUTCOMES):
        problem = f"{type(error).__name__}: {message}" if message else type(error).__name__
    elif isinstance(error, AssertionError) and message:
        problem = message
    else:
        problem = error_line(error)
    return safe_text(f"{last_call}: {problem}" if last_call else problem, REASON_LIMIT)


def public_tests_detail(lab: str, count: int, failures: list[TestFailure]) -> str:
    """The check's detail: how many calls passed, or the first failing tests and their reasons."""
    where = test_file(lab).relative_to(ROOT)
    if not failures:
        return f"{count} calls of {where}"
    shown = "\n        ".join(str(failure) for failure in failures[:SHOWN_FAILURES])
    more = f"\n        and {len(failures) - SHOWN_FAILURES} more" if len(failures) > SHOWN_FAILURES else ""
    return f"{len(failures)} of {count} calls of {where} fail:\n        {shown}{more}"
