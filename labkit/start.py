"""chunking-labs start DIR: a student's copy of the labs, to work in, from the installed course alone.

A learner who installed the course (`pip install chunking-labs-*.whl`, or `pip install .`)
has no clone to work in. This writes one: the student labs with their TODOs, their hints
and their notebooks, laid out as the handout lays them out (labs/, labs/hints/,
notebooks/labs/), with a README saying how to run them. Everything else a lab reads (the
tokenizer, the datasets, the public tests its last check runs) stays in the installed
course, where academy_llm finds it. No reference solution is written.

    chunking-labs start DIR       DIR must not exist, or be empty
"""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path
from typing import NamedTuple

from academy_llm import COURSE_ROOT

STUDENT_FILES = ("labs/rag*-*.py", "labs/hints/*.json", "notebooks/labs/rag*-*.ipynb")  # the handout's

README = """\
# Chunking Labs: your copy

Each lab is a script with TODOs. Fill one in, rerun, and go on until the lab's own check passes:

    python labs/rag4-chunking.py             run a lab: it stops at the first TODO and says why
    python labs/rag4-chunking.py --hint      the next hint for the TODO where it stops (--hint 3: close to code)

The labs build on each other, rag4 to rag11, and a later lab reads your earlier ones from labs/.

Every lab is also a notebook, in notebooks/labs/. Install the course's notebook extra (the
wheel's file name followed by [notebooks], `pip install "chunking_labs-0.1.0-py3-none-any.whl[notebooks]"`,
or `pip install ".[notebooks]"` in a clone), then start `jupyter lab` in this folder: saving a
notebook there also writes its lab script (jupytext pairs them), so a later lab sees your work
whichever form you wrote it in.

When the labs are done, try your own documents, then take the chunker you chose to your pipeline:

    chunking-labs compare YOUR_DOCS --questions YOUR_QUESTIONS.jsonl --labs labs
    chunking-labs chunk YOUR_DOCS --method "markdown (rag6)" --labs labs --out chunks.jsonl

The reference labs (the solutions) are not in this folder: an installed course keeps them
inside the package, where this prints their folder (a clone has them in solutions/):

    python -c "import academy_llm; print(academy_llm.COURSE_ROOT / 'solutions')"
"""


class Settings(NamedTuple):
    folder: Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("folder", metavar="DIR", help="where to write your copy of the labs (new or empty)")


def settings_of(arguments: argparse.Namespace) -> Settings:
    """The folder to write; a SystemExit with one line for one that holds files already."""
    folder = Path(arguments.folder)
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise SystemExit(f"start: {folder} already holds files; give a new or empty folder, "
                         f"so no work of yours is overwritten")
    return Settings(folder)


def student_files() -> list[Path]:
    """The course's student files, relative to the course; every pattern must match one."""
    files = []
    for pattern in STUDENT_FILES:
        found = sorted(path for path in COURSE_ROOT.glob(pattern) if path.is_file())
        if not found:
            raise SystemExit(f"start: this copy of the course has no {pattern}; reinstall it")
        files += [path.relative_to(COURSE_ROOT) for path in found]
    return files


def run(settings: Settings) -> int:
    """Write the copy and say what to run first."""
    files = student_files()
    for relative in files:
        destination = settings.folder / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(COURSE_ROOT / relative, destination)
    (settings.folder / "README.md").write_text(README, encoding="utf-8")
    labs = sum(relative.parts[0] == "labs" and relative.suffix == ".py" for relative in files)
    print(f"wrote {labs} labs, their hints and notebooks to {settings.folder}")
    print(f"next: cd {settings.folder} && python labs/rag4-chunking.py")
    return 0
