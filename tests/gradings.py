"""Fresh pytest gradings of whole folders, for the tests that judge the grader from outside.

A grading of correct code is the longest work of the deeper tier, so each folder is graded once
a run, and every test that reads its report shares that one grading (`shared`): the independent
labs' grading (tests/test_independent.py) is also the whole report test_grader.py reads.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from scratch import temporary_folder

ROOT = Path(__file__).resolve().parent.parent
GRADING = ("tests/grading",)


class Grading:
    """A fresh pytest grading the tests `tests` on `lab_dir`, started now, its output in `folder`."""

    def __init__(self, lab_dir: Path, folder: Path, tests=GRADING, options=(), env=None):
        self.report = folder / f"{lab_dir.name}.json"
        self.output = folder / f"{lab_dir.name}.out"
        self.started = time.monotonic()
        with open(self.output, "w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
                 "--lab-dir", str(lab_dir), "--grade-json", str(self.report), *options],
                cwd=ROOT, stdout=output, stderr=subprocess.STDOUT, env={**os.environ, **(env or {})},
            )

    def result(self) -> tuple[str, dict]:
        """(what the run printed, its JSON report), once it has finished."""
        status = self.process.wait(timeout=600)
        self.seconds = time.monotonic() - self.started
        output = self.output.read_text()
        assert status in (0, 1), f"the run was cut short (exit status {status}):\n{output[-3000:]}"
        return output, json.loads(self.report.read_text())


_SHARED: dict = {}  # lab folder -> its one Grading of this run


def shared(lab_dir: Path) -> Grading:
    """The whole grading of `lab_dir` (every lab, public and hidden tests), started at the first call."""
    if lab_dir not in _SHARED:
        _SHARED[lab_dir] = Grading(lab_dir, temporary_folder(f"grading-{lab_dir.name}-"))
    return _SHARED[lab_dir]
