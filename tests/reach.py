"""What a lab's worker can reach, and whether any of it solves a TODO (tests/test_reach.py).

A student reads the course's given code, and a TODO that one call of given code
answers teaches nothing. For each function a student writes, this module finds
every callable a lab's worker holds that could stand in for it: the lab's own
given code, the earlier labs it loads (the reference, as the grader gives them),
`academy_llm`, `labkit` and a few installed packages, kept when their signature
takes the function's arguments. Each becomes a delegation,
`return candidate(<the function's arguments>)`, in the lab's stub, and every
grading test charged to that function (public and hidden) runs on it. A case
that an answer knowing nothing passes too (a constant, an error, the given
argument check then no chunks: TRIVIAL) is no sign of reach; any other case a
delegation passes is, and study() counts its points.

The tests run here, in one process a lab, not in workers: the same test
functions with the lab's functions called directly, which grades no stricter
than the grader (the worker sees less: no markdown_it, no bm25s; answers cross
as JSON), so a delegation that passes no call here earns nothing there. Fewer
property examples and no shrinking make it quick; they can only let more pass.

    python tests/reach.py rag6                  # what each delegation earns, as JSON (study())
    python tests/reach.py rag6 atx_heading      # one function's

Run it from a scratch folder: the labs are copied there while it runs, and a
delegation may write files where it runs.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import io
import json
import shutil
import signal
import sys
import tempfile
import types
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for folder in (ROOT, ROOT / "tools" / "grading", ROOT / "tests"):
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))

from points import POINTS  # noqa: E402

CALL_SECONDS = 3  # a stand-in's test call that takes more CPU time is stopped and counted as failed
WAIT_SECONDS = 60  # ... or that takes this long on the clock (one that sleeps or waits uses no CPU)
EXAMPLES = 8  # property examples a test (the grader's profile draws 60)
PACKAGES = ("textwrap", "mistune")  # what a student might call for a chunker or a Markdown rule


class TimedOut(Exception):
    pass


def load_stub_lab(lab: str, folder: Path):
    """The student's stub of `lab`, with the reference's earlier labs beside it, as the grader loads it."""
    for path in (ROOT / "solutions").glob("rag*-*.py"):
        shutil.copy(path, folder)
    stub = next((ROOT / "labs").glob(f"{lab}-*.py"))
    shutil.copy(stub, folder / stub.name)
    from labkit.loading import load_lab

    return load_lab(lab, folder)


def reachable_modules(lab_module) -> list:
    """The lab, the labs it loaded, academy_llm, every labkit module and the obvious packages."""
    modules = [lab_module]
    for module in modules:  # grows as earlier labs are met
        for value in vars(module).values():
            if isinstance(value, types.ModuleType) and value.__name__.startswith("lab_") and value not in modules:
                modules.append(value)
    modules += [module for name, module in sorted(sys.modules.items())
                if name == "academy_llm" or name == "labkit" or name.startswith("labkit.")]
    for name in PACKAGES:
        try:
            modules.append(importlib.import_module(name))
        except ImportError:
            pass
    return modules


def callables(modules: list, lab_module, todos) -> dict:
    """{"module.name": callable} of every distinct callable in `modules` but the lab's own TODOs."""
    found, seen = {}, set()
    for module in modules:
        for name, value in vars(module).items():
            if name.startswith("__") or not callable(value) or id(value) in seen:
                continue
            if module is lab_module and name in todos:
                continue
            if isinstance(value, type) and issubclass(value, BaseException):
                continue
            seen.add(id(value))
            found[f"{module.__name__}.{name}"] = value
    return found


def forwardings(todo, candidate) -> list:
    """The calls of `candidate` that `todo`'s arguments fit, as a student would write them:
    `return candidate(a, b, c)`, then with the last optional arguments left out, one by one.
    Each is (how many positional arguments, the keyword-only ones passed on)."""
    try:
        theirs = inspect.signature(candidate)
    except (TypeError, ValueError):
        return []
    ours = inspect.signature(todo).parameters.values()
    positional = [p for p in ours if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    keywords = [p.name for p in ours if p.kind == p.KEYWORD_ONLY]
    required = sum(p.default is p.empty for p in positional)
    fits = []
    for count in range(len(positional), required - 1, -1):
        accepted = [name for name in keywords if _binds(theirs, count, [name])]
        if _binds(theirs, count, accepted):
            fits.append((count, accepted))
    return fits


def _binds(signature, count, keywords) -> bool:
    try:
        signature.bind(*[None] * count, **{name: None for name in keywords})
    except TypeError:
        return False
    return True


def delegation(todo, candidate, count, keywords):
    """`todo`'s stand-in: every argument it was given (its defaults too) passed on to `candidate`."""
    signature = inspect.signature(todo)

    def delegate(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = list(bound.arguments.values())
        return candidate(*values[:count], **{name: bound.arguments[name] for name in keywords})

    return delegate


def grading_calls(lab: str) -> list:
    """Every call of the lab's public and hidden grading tests, with the function it is charged to."""
    import profiles
    from hypothesis import Phase, settings
    from labkit.public_tests import expanded

    profiles.load_fast_profile()
    settings.register_profile("reach", parent=settings.get_profile("fast"), max_examples=EXAMPLES,
                              phases=[Phase.explicit, Phase.generate])
    settings.load_profile("reach")
    calls = []
    for path in (ROOT / "tests" / "grading" / f"test_{lab}.py",
                 ROOT / "tests" / "grading" / "hidden" / f"test_{lab}_hidden.py"):
        spec = importlib.util.spec_from_file_location(f"_reach_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name, test in vars(module).items():
            if name.startswith("test_") and getattr(test, "__module__", "") == module.__name__:
                calls += expanded(name, test)
    return calls


class StandIn:
    """A stand-in for a TODO function, run on the grading calls; after its first timeout its
    later calls fail at once, as the grader fails them."""

    def __init__(self, function):
        self.function = function
        self.timed_out = False

    def passes(self, call, lab: str, functions) -> bool:
        """Whether one test call passes with this stand-in, in CALL_SECONDS of CPU time at most."""
        if self.timed_out:
            return False
        arguments = dict(call.parameters)
        if lab in inspect.signature(call.test).parameters:
            arguments[lab] = functions
        signal.setitimer(signal.ITIMER_PROF, CALL_SECONDS)  # CPU time: a loaded machine stops no answer early
        signal.setitimer(signal.ITIMER_REAL, WAIT_SECONDS)
        try:
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                call.test(**arguments)
            return True
        except TimedOut:
            self.timed_out = True
            return False
        except BaseException:  # noqa: BLE001 (a delegation may raise anything, SystemExit too)
            return False
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.setitimer(signal.ITIMER_REAL, 0)


def _time_out(signum, frame):
    raise TimedOut


def _answer(value):
    return lambda *args, **kwargs: value


def _raise(error):
    def refuse(*args, **kwargs):
        raise error("no")
    return refuse


# Answers that know nothing: a constant, the first argument, an error, or the argument check
# every chunker is given (academy_llm.check_text_and_window) then no chunks. What one of them
# passes in a test, a delegation may pass too: the given code taught it nothing there (a test
# that a constant passes is the points table's matter, not reach's).
TRIVIAL = {"None": _answer(None), "True": _answer(True), "False": _answer(False), "[]": _answer([]),
           "()": _answer(()), "{}": _answer({}), "''": _answer(""), "0": _answer(0), "1.0": _answer(1.0),
           "the first argument": lambda first=None, *args, **kwargs: first,
           "raise ValueError": _raise(ValueError), "raise TypeError": _raise(TypeError)}


def checked_then_nothing(todo):
    """`todo`'s arguments checked as every chunker checks them, then no chunks; None for a
    function that is not a chunker (no `text` and budget to check)."""
    from academy_llm import check_text_and_window

    signature = inspect.signature(todo)
    names = list(signature.parameters)
    if names[:1] != ["text"] or len(names) < 2:
        return None

    def answer(*args, **kwargs):
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        budget = bound.arguments[names[1]] if names[1] != "title" else bound.arguments[names[2]]
        check_text_and_window(bound.arguments["text"], budget, bound.arguments.get("overlap", 0))
        return []

    return answer


def expects_an_error(call) -> bool:
    """Whether a test call asks for an error (an exception class among its parameters)."""
    return any(isinstance(value, type) and issubclass(value, BaseException) for value in call.parameters.values())


def beyond(passed: set, floors: list, calls) -> set:
    """The calls of `passed` that no answer knowing nothing passes: in each test, the cases
    asking for an answer must be ones a single trivial answer passes (True passes half a table
    of booleans, False the other half), those asking for an error ones some trivial answer passes."""
    found = set()
    errors = {call.name for call in calls if expects_an_error(call)}
    free_errors = errors & set().union(*floors)
    for test in {call.test for call in calls}:
        answers = {call.name for call in calls if call.test is test} - errors
        if not any(passed & answers <= floor for floor in floors):
            found |= passed & answers
    return found | (passed & errors - free_errors)


# Delegations that need a line of glue, written out: {(lab, function): make(the lab's module)}.
WRAPPED = {}  # none today: no given function fuses rankings or reads parents


def shares(calls, points: float) -> dict:
    """{call name: points}: a function's points shared by its tests, a test's by its cases (conftest.py)."""
    tests = {}
    for call in calls:
        tests.setdefault(call.test, []).append(call)
    return {call.name: points / len(tests) / len(cases) for cases in tests.values() for call in cases}


def study(lab: str, only=()) -> dict:
    """{function: {"tried": delegations tried, "reach": {delegation: [calls it passes beyond what
    a trivial answer passes]}, "points": {delegation: their points}}} for every TODO of `lab`."""
    from labkit.public_tests import lab_functions

    signal.signal(signal.SIGALRM, _time_out)
    signal.signal(signal.SIGPROF, _time_out)
    folder = Path(tempfile.mkdtemp(prefix="reach-", dir=Path.cwd()))  # tests/test_reach.py's scratch folder
    try:
        module = load_stub_lab(lab, folder)
        namespace = dict(vars(module))
        candidates = callables(reachable_modules(module), module, POINTS[lab])
        calls = grading_calls(lab)
        results = {}
        for name, points in POINTS[lab].items():
            if only and name not in only:
                continue
            charged = [call for call in calls if call.function == name]
            share = shares(charged, points)

            def passed(stand_in):
                functions = lab_functions({**namespace, name: stand_in.function})
                return {call.name for call in charged if stand_in.passes(call, lab, functions)}

            trivial = [*TRIVIAL.values(), checked_then_nothing(namespace[name])]
            floors = [passed(StandIn(answer)) for answer in trivial if answer is not None]
            reach = {}
            for label, candidate in candidates.items():
                for count, keywords in forwardings(namespace[name], candidate):
                    stand_in = StandIn(delegation(namespace[name], candidate, count, keywords))
                    reach[f"{label}/{count}"] = sorted(beyond(passed(stand_in), floors, charged))
            if (lab, name) in WRAPPED:
                wrapped = WRAPPED[(lab, name)]
                reach[wrapped.__name__] = sorted(beyond(passed(StandIn(wrapped(module))), floors, charged))
            results[name] = {"tried": len(reach),
                             "reach": {label: names for label, names in reach.items() if names},
                             "points": {label: round(sum(share[n] for n in names), 3)
                                        for label, names in reach.items() if names}}
        return results
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    print(json.dumps(study(sys.argv[1], sys.argv[2:])))
