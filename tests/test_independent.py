"""Correct code written apart from the reference earns every point.

tests/independent/ holds complete labs written by people who saw only the
student handout (its labs, hints, README and public tests), never solutions/,
each folder in a style of its own (plain loops; comprehensions, generators and
itertools). Each is the student's file (labs/) with its TODOs written: what the
lab gives is imported as the lab imports it, never copied.
The grader, public and hidden tests alike, must give each of them every point: a
test that takes points off one of them demands something the handout does
not say.

Each folder is graded once a run, in one way in: "plain" in the folder form here (its report
is also the one tests/test_grader.py reads), "functional" in the class form, handed in by the
red team's honest student beside a saboteur (tests/test_redteam.py).
"""

from pathlib import Path

import gradings
import pytest
from points import POINTS, lab_points
from redteam.attacks import WRITTEN_APART

ROOT = Path(__file__).resolve().parent.parent
COURSE_POINTS = sum(map(lab_points, POINTS))  # 10 a lab
FOLDERS = [ROOT / "tests" / "independent" / "plain"]  # graded here; WRITTEN_APART by the red team

pytestmark = [pytest.mark.heavy, pytest.mark.timeout(600)]


def test_every_folder_written_apart_is_graded_once():
    written = sorted(path for path in (ROOT / "tests" / "independent").iterdir() if path.is_dir())
    assert written == sorted([*FOLDERS, WRITTEN_APART])


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda path: path.name)
def test_correct_code_written_apart_earns_every_point(folder):
    """One grading of the folder a run (test_grader.py reads the same report)."""
    output, grades = gradings.shared(folder).result()
    lost = [f"{lab}: {test['name']}: {test['message']}" for lab, result in grades["labs"].items()
            for test in result["tests"] if test["outcome"] != "passed"]
    assert grades["earned"] == grades["possible"] == COURSE_POINTS, "\n".join(lost[:20]) or output[-3000:]
