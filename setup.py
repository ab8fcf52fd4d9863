"""The wheel's build: the course's files (datasets, tokenizer, labs, tests, references) go into labkit/course/.

pyproject.toml says everything else. A wheel installs packages and modules only, so the
files the labs read from the top of a clone are copied into the package, where
academy_llm.COURSE_ROOT finds them once installed. An editable install (`pip install -e .`, what
requirements.txt does) reads them from the clone itself and copies nothing.
"""

import shutil
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT / "tools" / "grading"))
from make_handout import COURSE_FILES, STUDENT_TESTS, course_files  # noqa: E402  one list, the handout's

# What a lab, its hints, its final check and `chunking-labs compare` read: the handout's files but
# the code the wheel installs as modules, then the reference labs and the benchmark's peers
# (compare's default chunkers and its contenders). labkit/explorer.js goes in as the package's data (pyproject.toml).
INSTALLED_AS_CODE = ("academy_llm.py", "labkit/*.py", "labkit/lessons/*.py", "labkit/explorer.js", "pyproject.toml")
COURSE_DATA = tuple(pattern for pattern in COURSE_FILES if pattern not in INSTALLED_AS_CODE) + STUDENT_TESTS + (
    "solutions/rag*-*.py",
    "benchmarks/chunkers.py",
)


class build_py_with_course(build_py):
    """build_py, then the course's files copied into labkit/course/ of the build."""

    def run(self):
        super().run()
        if self.editable_mode:
            return
        target = Path(self.build_lib) / "labkit" / "course"
        for pattern in COURSE_DATA:
            for path in course_files(pattern):
                destination = target / path.relative_to(ROOT)
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, destination)


setup(cmdclass={"build_py": build_py_with_course})
