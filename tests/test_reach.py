"""Nothing a lab's worker can reach solves a TODO.

A student reads the given code, and a TODO that one call of it answers would
earn points for nothing. The heavy test tries every callable a worker holds
(tests/reach.py) as a delegation for every function a student writes, on the
lab's grading calls: none may pass a test further than an answer that knows
nothing. The default tier checks the one place where the lab's own data holds
answers: rag6's readings of its tricky lines, which the grading tests must not
ask about.
"""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from points import POINTS
from scratch import temporary_folder

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import make_markdown_readings  # noqa: E402

PARALLEL_JOBS = 2


def test_the_readings_of_the_tricky_lines_are_the_parsers():
    assert make_markdown_readings.main(["--check"]) == 0, "run python tools/make_markdown_readings.py"


def rule_inputs() -> set:
    """Every line the grading tests (public and hidden) ask rag6's four rules about by hand
    (the hidden properties draw theirs)."""
    import reach

    lines = set()
    for call in reach.grading_calls("rag6"):
        if call.function in ("fence_opening", "closes_fence", "atx_heading") and "line" in call.parameters:
            lines.add(call.parameters["line"])
        elif call.function == "is_table_start" and "rows" in call.parameters:
            lines.update(call.parameters["rows"])
    return lines


def test_the_grading_tests_ask_the_rules_about_no_line_the_lab_has_the_reading_of():
    from labkit.markdown import TRICKY_MARKDOWN, split_lines

    read = {line.text for document in TRICKY_MARKDOWN for line in split_lines(document.text)}
    assert sorted(rule_inputs() & read) == []


# ---- every delegation, every TODO (heavy) ---------------------------------------------

# Functions a delegation still earns points in, and why: a test of one is expected to fail,
# strictly, so once its tests demand what the given code does not do, it must come out.
KNOWN_REACH = {}


def study_lab(lab: str) -> dict:
    """tests/reach.py's study of `lab`, run in a process of its own, in a folder of its own
    (a delegation may write files where it runs)."""
    folder = temporary_folder(f"reach-{lab}-")
    result = subprocess.run([sys.executable, str(ROOT / "tests" / "reach.py"), lab], cwd=folder,
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def studied() -> dict:
    """{lab: study} for every lab, PARALLEL_JOBS labs at a time."""
    with ThreadPoolExecutor(PARALLEL_JOBS) as pool:
        return dict(zip(POINTS, pool.map(study_lab, POINTS)))


def todo_functions() -> list:
    params = []
    for lab, functions in POINTS.items():
        for function in functions:
            reason = KNOWN_REACH.get((lab, function))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            params.append(pytest.param(lab, function, id=f"{lab}.{function}", marks=marks))
    return params


@pytest.mark.slow  # some four minutes: a developer's run, beside -m heavy
@pytest.mark.timeout(1800)
@pytest.mark.parametrize("lab, function", todo_functions())
def test_no_delegation_to_reachable_code_earns_points(studied, lab, function):
    study = studied[lab][function]
    assert study["tried"] > 0, "no callable in reach fits its arguments: the study tried nothing"
    earned = {delegation: f"{points:g} points ({', '.join(study['reach'][delegation][:3])})"
              for delegation, points in study["points"].items()}
    assert not earned, f"delegations that earn points: {earned}"
