"""Grading for Chunking Labs: which folder to grade, and a score per lab.

    pytest                                  # grade solutions/ and run the project's checks
    pytest tests/grading --lab-dir labs     # grade a student's folder
    pytest tests/grading --lab-dir DIR --grade-json scores.json

A grading test carries `@pytest.mark.grade("rag4", points=1)` (usually set for
a whole file with `pytestmark`). Its points count when its set-up, call and
tear-down all pass. Each grading test runs in a process of its own with a time
limit (isolation.py), so a student's code costs only the tests it touches.
After the run a table gives the points per lab, and --grade-json writes the
same numbers for a course platform, with a one-line reason for each failure.
"""

import json
import os
from pathlib import Path

import isolation
import pytest
from hypothesis import HealthCheck, Phase, settings

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_LABS = ROOT / "solutions"

# Hypothesis: the default "fast" profile runs the same examples every time
# (fair to every student, quick for CI) and skips the "explain" phase, which
# reruns a failing test many times over to say which parts of its input matter
# (seconds per failure, and the one-line reason does not show it). "deep"
# searches far wider, with a time limit to match (see the README):
#     pytest --hypothesis-profile=deep --timeout=600
settings.register_profile(
    "fast",
    max_examples=60,
    derandomize=True,
    database=None,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
    phases=[Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink],
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
    config.addinivalue_line("markers", "slow: a big input, run only with `pytest -m slow`")
    # A lab that builds on an earlier one imports it through load_lab(); while
    # grading, the earlier lab is the reference, so each lab is graded on its own.
    os.environ["ACADEMY_EARLIER_LABS"] = str(REFERENCE_LABS)
    config.pluginmanager.register(isolation, "grading-isolation")
    config.pluginmanager.register(GradeBook(), "grade-book")


@pytest.fixture(scope="session")
def lab_dir(request) -> Path:
    """The folder being graded."""
    return Path(request.config.getoption("--lab-dir")).resolve()


# ---- why a grading test failed, in one line ----------------------------------


def one_line(text: str, limit: int = 200) -> str:
    """The first meaningful line of an error, cut to `limit` characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    first = lines[0] if lines else ""
    return first if len(first) <= limit else first[: limit - 3] + "..."


def failure_reason(error: BaseException) -> str:
    """One line on why a test failed: the error's type and the first line of its message."""
    if isinstance(error, SystemExit):
        return f"the lab called sys.exit({error.code!r}); a lab's functions return, they never exit"
    group = getattr(error, "exceptions", None)
    if group:  # an exception group: hypothesis found several distinct failures
        return one_line(f"{len(group)} distinct failures, the first: {failure_reason(group[0])}")
    message = one_line(str(error))
    return one_line(f"{type(error).__name__}: {message}" if message else type(error).__name__)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item, call):
    """Give a grading test's report its one-line reason; fail it if the lab changed academy_llm.

    This runs where the test runs (in its child process), so the reason
    travels back with the report. A change to academy_llm fails the set-up or
    call in which it is first seen (the tear-down would only see it again), so
    a grading test must never patch academy_llm itself.
    """
    report = yield
    if item.get_closest_marker("grade") is None:
        return report
    changed = isolation.changed_helper_names() if call.when in ("setup", "call") else []
    if changed:
        report.outcome = "failed"
        report.longrepr = (
            f"the lab changed academy_llm ({', '.join(changed)}), which every lab shares "
            f"and the grading tests rely on; a lab must leave it as it is"
        )
        report.grade_message = one_line(report.longrepr)
        isolation.restore_helper(changed)
    elif report.failed:
        report.grade_message = failure_reason(call.excinfo.value) if call.excinfo else one_line(report.longrepr)
    elif report.skipped:
        report.grade_message = one_line(report.longrepr[-1] if isinstance(report.longrepr, tuple) else "")
    isolation.trim_captured_output(report)
    return report


# ---- points per lab ----------------------------------------------------------


class GradeBook:
    """The outcome of every grading test, read from its reports, and the points they add up to."""

    def __init__(self):
        self.entries = {}  # nodeid -> {"lab", "points", "name", "outcome", "message"}

    def pytest_collection_finish(self, session):
        """Enter every grading test as not run, so that even an interrupted run lists them all."""
        for item in session.items:
            marker = item.get_closest_marker("grade")
            if marker is not None:
                self.entries[item.nodeid] = {
                    "lab": marker.args[0],
                    "points": marker.kwargs.get("points", 1),
                    "name": item.name,
                    "outcome": "not run",
                    "message": "the test did not run",
                }

    def pytest_runtest_logreport(self, report):
        """The first phase that fails or skips decides the outcome; a passing call makes it passed."""
        entry = self.entries.get(report.nodeid)
        if entry is None or entry["outcome"] not in ("not run", "passed"):
            return
        if report.failed:
            entry["outcome"] = "failed" if report.when == "call" else "error"
            entry["message"] = getattr(report, "grade_message", "") or "failed"
        elif report.skipped:
            entry["outcome"] = "skipped"
            entry["message"] = getattr(report, "grade_message", "")
        elif report.when == "call":
            entry["outcome"] = "passed"
            entry["message"] = ""

    def pytest_terminal_summary(self, terminalreporter, config):
        if not self.entries:
            return
        summary = grade_summary(self.entries)
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


def grade_summary(entries: dict) -> dict:
    """Points per lab and in total, shaped for --grade-json."""
    labs = {}
    for entry in entries.values():
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
