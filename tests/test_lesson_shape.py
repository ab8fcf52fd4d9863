"""A lab is its lesson: the student's file is read in one sitting, and the student writes a fifth of it.

The student's code is what the reference writes between BEGIN SOLUTION and END SOLUTION (blank
lines and comments not counted); the student's file is the lab in labs/, stubs and hints included.
"""

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
MOST_LINES = 300
LEAST_SHARE = 0.20
LESSONS = ("rag4", "rag5", "rag6", "rag7", "rag8", "rag9", "rag10", "rag11")  # the labs rewritten as their lesson


def student_code_lines(solution: Path) -> int:
    inside, count = False, 0
    for line in solution.read_text(encoding="utf-8").splitlines():
        if "BEGIN SOLUTION" in line or "END SOLUTION" in line:
            inside = "BEGIN" in line
        elif inside and line.strip() and not line.strip().startswith("#"):
            count += 1
    return count


@pytest.mark.parametrize("lab", LESSONS)
def test_the_student_file_is_its_lesson(lab):
    (solution,) = (ROOT / "solutions").glob(f"{lab}-*.py")
    lines = len((ROOT / "labs" / solution.name).read_text(encoding="utf-8").splitlines())
    written = student_code_lines(solution)
    name = f"labs/{solution.name}"
    assert lines <= MOST_LINES, f"{name} has {lines} lines; a lesson is read in one sitting: at most {MOST_LINES}"
    assert written >= LEAST_SHARE * lines, (f"the student writes {written} of the {lines} lines of {name}, "
                                            f"under a fifth: move given machinery into labkit/lessons/{lab}.py")
