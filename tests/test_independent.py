"""Correct code written apart from the reference earns every point.

tests/independent/ holds complete labs written by people who saw only the
student handout (its labs, hints, README and public tests), never solutions/,
each folder in a style of its own (plain loops; comprehensions and itertools).
The grader, public and hidden tests alike, must give each of them every point: a
test that takes points off one of them demands something the handout does
not say.
"""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from points import POINTS, lab_points

ROOT = Path(__file__).resolve().parent.parent
COURSE_POINTS = sum(map(lab_points, POINTS))  # 10 a lab
FOLDERS = sorted(path for path in (ROOT / "tests" / "independent").iterdir() if path.is_dir())

pytestmark = [pytest.mark.heavy, pytest.mark.timeout(600)]


@pytest.mark.parametrize("folder", FOLDERS, ids=lambda path: path.name)
def test_correct_code_written_apart_earns_every_point(folder, tmp_path):
    report = tmp_path / "report.json"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading", "--lab-dir", str(folder),
         "--grade-json", str(report)], cwd=ROOT, capture_output=True, text=True, timeout=580)
    assert report.exists(), done.stdout[-3000:] + done.stderr[-2000:]
    grades = json.loads(report.read_text(encoding="utf-8"))
    lost = [f"{lab}: {test['name']}: {test['message']}" for lab, result in grades["labs"].items()
            for test in result["tests"] if test["outcome"] != "passed"]
    assert grades["earned"] == grades["possible"] == COURSE_POINTS, "\n".join(lost[:20])
