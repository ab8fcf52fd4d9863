"""Grading for Chunking Labs: which folder to grade, and a score per lab.

    pytest                                  # grade solutions/ and run the project's checks
    pytest tests/grading --lab-dir labs     # grade a student's folder
    pytest tests/grading --lab-dir DIR --grade-json scores.json

A grading test carries `@pytest.mark.grade("rag4", points=1)` (usually set for
a whole file with `pytestmark`). Its points count when its set-up, call and
tear-down all pass. After the run a table gives the points per lab, and
--grade-json writes the same numbers for a course platform.
"""

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_LABS = ROOT / "solutions"

# Hypothesis: the default "fast" profile runs the same examples every time
# (fair to every student, quick for CI); "deep" searches far wider:
#     pytest --hypothesis-profile=deep
settings.register_profile(
    "fast",
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
settings.register_profile(
    "deep", max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("fast")


def pytest_addoption(parser):
    group = parser.getgroup("grading")
    group.addoption(
        "--lab-dir",
        default=str(REFERENCE_LABS),
        help="folder whose rag*-*.py lab files are graded (default: solutions/)",
    )
    group.addoption("--grade-json", default=None, help="also write the scores as JSON to this file")


def pytest_configure(config):
    config.addinivalue_line("markers", "grade(lab, points=1): a grading test of `lab`")
    # A lab that builds on an earlier one imports it through load_lab(); while
    # grading, the earlier lab is the reference, so each lab is graded on its own.
    os.environ["ACADEMY_EARLIER_LABS"] = str(REFERENCE_LABS)
    config._grades = {}


@pytest.fixture(scope="session")
def lab_dir(request) -> Path:
    """The folder being graded."""
    return Path(request.config.getoption("--lab-dir")).resolve()


def one_line(text: str, limit: int = 200) -> str:
    """The first meaningful line of an error, cut to `limit` characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 3] + "..."


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    marker = item.get_closest_marker("grade")
    if marker is None:
        return
    lab = marker.args[0]
    points = marker.kwargs.get("points", 1)
    grades = item.config._grades
    entry = grades.setdefault(
        item.nodeid,
        {"lab": lab, "points": points, "name": item.name, "outcome": "passed", "message": ""},
    )
    if report.failed and entry["outcome"] == "passed":
        entry["outcome"] = "failed" if report.when == "call" else "error"
        entry["message"] = one_line(call.excinfo.exconly()) if call.excinfo else "failed"
    elif report.skipped and entry["outcome"] == "passed":
        entry["outcome"] = "skipped"
        entry["message"] = one_line(report.longrepr[-1] if isinstance(report.longrepr, tuple) else "")


def grade_summary(grades: dict) -> dict:
    """Points per lab and in total, shaped for --grade-json."""
    labs = {}
    for entry in grades.values():
        lab = labs.setdefault(entry["lab"], {"earned": 0, "possible": 0, "tests": []})
        lab["possible"] += entry["points"]
        if entry["outcome"] == "passed":
            lab["earned"] += entry["points"]
        lab["tests"].append(
            {"name": entry["name"], "outcome": entry["outcome"], "message": entry["message"]}
        )
    return {
        "earned": sum(lab["earned"] for lab in labs.values()),
        "possible": sum(lab["possible"] for lab in labs.values()),
        "labs": dict(sorted(labs.items())),
    }


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not config._grades:
        return
    summary = grade_summary(config._grades)
    write = terminalreporter.write_line
    terminalreporter.section("grades")
    write(f"lab folder: {config.getoption('--lab-dir')}")
    for name, lab in summary["labs"].items():
        write(f"  {name:<8} {lab['earned']:>4} / {lab['possible']:<4}")
    write(f"  {'total':<8} {summary['earned']:>4} / {summary['possible']:<4}")
    path = config.getoption("--grade-json")
    if path:
        Path(path).write_text(json.dumps(summary, indent=2) + "\n", encoding="utf-8")
        write(f"scores written to {path}")
