"""Temporary folders for the project's own test runs, removed when the run ends.

Several tests copy the reference solutions into a temporary folder (a class of
students, planted faults, mutants). A copy left behind after the run would be
something a graded lab could find (issue 21), so every such folder is made
here and removed at exit; pytest's own tmp_path folders are not kept either
(each run has a --basetemp of its own: own_temporary_folder in conftest.py).
"""

import atexit
import shutil
import tempfile
from pathlib import Path

_made: list[Path] = []


def temporary_folder(prefix: str) -> Path:
    """A new folder, private to this user, removed when the test run ends."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    _made.append(folder)
    return folder


@atexit.register
def _remove_all() -> None:
    for folder in _made:
        shutil.rmtree(folder, ignore_errors=True)
