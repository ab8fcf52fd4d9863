"""The grader itself: honest on stubs, complete on the reference."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def grade(lab_dir: Path, tmp_path: Path) -> dict:
    """Run the grading tests on `lab_dir` in a fresh pytest and return its JSON report."""
    report = tmp_path / f"{lab_dir.name}.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading",
         "--lab-dir", str(lab_dir), "--grade-json", str(report)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    return json.loads(report.read_text())


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("grades")
    return grade(ROOT / "solutions", tmp), grade(ROOT / "labs", tmp)


def test_reference_solutions_earn_every_point(reports):
    solutions, _ = reports
    assert solutions["possible"] > 0
    assert solutions["earned"] == solutions["possible"], [
        t for lab in solutions["labs"].values() for t in lab["tests"] if t["outcome"] != "passed"
    ]


def test_every_grading_test_fails_on_the_student_stubs(reports):
    """The inverted check: a test that passes on a stub asserts nothing."""
    solutions, stubs = reports
    assert set(stubs["labs"]) == set(solutions["labs"])
    for name, lab in stubs["labs"].items():
        passing = [t["name"] for t in lab["tests"] if t["outcome"] == "passed"]
        assert not passing, f"{name}: these grading tests pass on the stubs: {passing}"
        assert lab["earned"] == 0 and lab["possible"] == solutions["labs"][name]["possible"]
        assert all("TODO(" in t["message"] for t in lab["tests"]), "a stub failure should name its TODO"
