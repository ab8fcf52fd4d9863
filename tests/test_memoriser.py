"""A lab that knows the public tests' answers by heart, and nothing else, earns at most a point a lab.

The public grading tests ship with the handout, their inputs and, run on the
reference, their answers. A student could return those answers from a table
instead of computing them. So the memoriser here is that student at their
best: every call the public tests make, recorded on the reference
(tests/recording.py), answered from the table, and the stub's
NotImplementedError for any other input. It passes every public test; the
hidden tests, whose inputs it never saw, must hold back the rest (conftest.py
gives the public tests PUBLIC_SHARE of each function's points, 10%).
"""

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from points import POINTS

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = ROOT / "tests" / "grading" / "hidden"
MOST = 1.0  # points a lab may give the memoriser: 10 times the public tests' share (conftest.py's PUBLIC_SHARE)

# Appended to a lab's stub: each function a student writes answers from the table, else stays a stub.
BY_HEART = '''

# %%
import builtins as _builtins
import json as _json
import sys as _sys
from pathlib import Path as _Path

_wire = _sys.modules["wire"]  # the worker's own, already loaded
_ANSWERS = _json.loads((_Path(__file__).parent / "{lab}-answers.json").read_text(encoding="utf-8"))


def _as_sent(value):
    """An argument as the grader wrote it: a TokenIndex was sent as the text to make it from."""
    return _wire.New("TokenIndex", (value.text,)) if type(value).__name__ == "TokenIndex" else value


def _by_heart(name, stub):
    def answer(*args, **kwargs):
        key = _wire.dumps({{"call": name, "args": _wire.encode([_as_sent(a) for a in args]),
                            "kwargs": _wire.encode({{k: _as_sent(v) for k, v in kwargs.items()}})}}).decode()
        if key not in _ANSWERS:
            return stub(*args, **kwargs)
        error = _ANSWERS[key].get("error")
        if error:
            raise getattr(_builtins, str(error.get("builtin")), RuntimeError)(error["message"])
        return _wire.decode(_ANSWERS[key].get("value"), globals())
    return answer


for _name in {functions!r}:
    globals()[_name] = _by_heart(_name, globals()[_name])
'''


def pytest_grading(lab_dir: Path, report: Path, *options, env=None) -> dict:
    """The grader's report on `lab_dir` (its pytest form), failing with its output if it broke."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading",
                           "--lab-dir", str(lab_dir), "--grade-json", str(report), *options],
                          cwd=ROOT, capture_output=True, text=True, env={**os.environ, **(env or {})}, timeout=900)
    assert done.returncode in (0, 1) and report.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    return json.loads(report.read_text(encoding="utf-8"))


def marked_functions(test) -> set:
    """The functions a test grades: its own `grades` mark, or its parameters' (one test, several functions)."""
    marks = getattr(test, "pytestmark", [])
    named = {mark.args[0] for mark in marks if mark.name == "grades"}
    for mark in marks:
        if mark.name == "parametrize":
            named |= {inner.args[0] for case in mark.args[1] for inner in getattr(case, "marks", ())
                      if inner.name == "grades"}
    return named


def seeded_functions() -> set:
    """(lab, function) of every hidden test that draws its inputs from the grading seed."""
    found = set()
    for path in sorted(HIDDEN.glob("test_*_hidden.py")):
        spec = importlib.util.spec_from_file_location(f"seeded_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        lab = module.pytestmark.args[0]  # pytest.mark.grade("rag4")
        for test in vars(module).values():
            if callable(test) and getattr(test, "seeded", False):
                found |= {(lab, function) for function in marked_functions(test)}
    return found


def test_every_function_has_hidden_tests_drawn_from_the_grading_seed():
    """Tests drawn from the term's seed hold 80% of a function's points (conftest.py's kind_shares), so each
    function a student writes needs one (@check.hidden_seed): else its fixed hidden cases, which a
    report of an earlier term may have shown, would carry them."""
    seeded = seeded_functions()
    missing = [f"{lab}.{function}" for lab in POINTS for function in POINTS[lab] if (lab, function) not in seeded]
    assert not missing, f"no hidden test drawn from the grading seed for {missing}"


@pytest.mark.heavy  # reads the memoriser's report below, which lists every test with its share, passed or not
@pytest.mark.timeout(900)
def test_each_function_gives_its_public_tests_a_tenth(graded):
    """In the course repository the public tests hold 10% of each function's points, the hidden ones the
    rest, and together exactly what points.py says."""
    for name, lab in graded["labs"].items():
        for function, points in POINTS[name].items():
            tests = [test for test in lab["tests"] if test["function"] == function]
            public = sum(test["points"] for test in tests if not test["hidden"])
            assert sum(test["points"] for test in tests) == pytest.approx(points, abs=0.01), (name, function)
            assert public == pytest.approx(points / 10, abs=0.01), f"{name}.{function}: public tests hold {public}"


@pytest.fixture(scope="module")
def memoriser(tmp_path_factory) -> Path:
    """A lab folder that answers the public tests' calls from a table recorded on the reference."""
    folder = tmp_path_factory.mktemp("memoriser")
    calls = folder / "calls.json"
    path = os.pathsep.join([str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    pytest_grading(ROOT / "solutions", folder / "reference.json", "-p", "recording",
                   "--ignore", "tests/grading/hidden", env={"ACADEMY_RECORD_CALLS": str(calls), "PYTHONPATH": path})
    recorded = json.loads(calls.read_text(encoding="utf-8"))
    labs = folder / "labs"
    labs.mkdir()
    for stub in sorted((ROOT / "labs").glob("rag*-*.py")):
        lab = stub.name.split("-")[0]
        (labs / f"{lab}-answers.json").write_text(json.dumps(recorded.get(lab, {})), encoding="utf-8")
        memorised = BY_HEART.format(lab=lab, functions=tuple(POINTS[lab]))
        (labs / stub.name).write_text(stub.read_text(encoding="utf-8") + memorised, encoding="utf-8")
    return labs


@pytest.fixture(scope="module")
def graded(memoriser) -> dict:
    return pytest_grading(memoriser, memoriser.parent / "memoriser.json")


# Calls the table cannot key yet: rag6's pack_blocks takes Block records the test builds, which reach the
# worker in another form than the recording saw; the memoriser earns less there, which the check below allows.
UNKEYED = {"rag6": ("pack_blocks",)}


@pytest.mark.heavy  # records the public tests' calls on the reference, then grades the memoriser
@pytest.mark.timeout(900)
def test_the_memoriser_passes_every_public_test(graded):
    """Else the check below proves nothing: the table answers every call the public tests make."""
    failed = [f"{name}: {test['name']}: {test['message']}" for name, lab in graded["labs"].items()
              for test in lab["tests"] if not test["hidden"] and test["outcome"] != "passed"
              and not any(f"TODO({name}) {function}()" in test["message"] for function in UNKEYED.get(name, ()))]
    assert not failed, "\n".join(failed[:10])


@pytest.mark.heavy  # records the public tests' calls on the reference, then grades the memoriser
@pytest.mark.timeout(900)
def test_the_memoriser_earns_at_most_a_point_a_lab(graded):
    """The public tests' share and no more: no hidden test repeats a public call, or lets a stub through."""
    earned = {name: lab["earned"] for name, lab in graded["labs"].items()}
    assert all(points <= MOST for points in earned.values()), f"the memoriser earned {earned}"
