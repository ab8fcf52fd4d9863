"""Running a lab the way a student does, with the network switched off.

Every connection a lab tries is refused, as in a classroom without network:
so a lab that quietly downloads something fails here rather than there.
"""

import contextlib
import functools
import sqlite3
import subprocess
import sys
from pathlib import Path

# The lines that switch the network off, for a script run or a notebook's kernel.
REFUSE_NETWORK = (
    "import socket\n"
    "def refuse(*a, **k): raise OSError('network disabled by the test')\n"
    "socket.socket.connect = refuse; socket.create_connection = refuse\n"
)

RUN_SCRIPT = REFUSE_NETWORK + (
    "import runpy, sys\n"
    "sys.argv = sys.argv[1:]  # the lab's path, then its own arguments\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


LAB_RUN_LIMIT = 300  # seconds a lab may take here: about 25 alone, many times that on a loaded machine


def run_offline(
    path: Path, cwd: Path, env: dict | None = None, args: tuple = ()
) -> subprocess.CompletedProcess:
    """Run the lab script at `path` (with `args`, as `--hint 2`) from folder `cwd`, offline,
    and capture what it prints."""
    return subprocess.run(
        [sys.executable, "-c", RUN_SCRIPT, str(path), *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=LAB_RUN_LIMIT,
    )


def vectors_kept(cache: Path) -> int:
    """How many vectors a run left in the embedding cache folder `cache` ($ACADEMY_CACHE_DIR): the texts it
    embedded that the course does not ship vectors for (a text found in embeddings/ is looked up, not kept)."""
    file = cache / "embeddings.sqlite"
    if not file.is_file():
        return 0
    with contextlib.closing(sqlite3.connect(file)) as database:
        return database.execute("SELECT COUNT(*) FROM vectors").fetchone()[0]


@functools.cache
def student_lab_run(path: Path) -> subprocess.CompletedProcess:
    """A student's lab at `path` run offline once a test run, from a folder of its own: it stops at
    its first TODO and prints the same each time, so the tests that read it share one run."""
    from scratch import temporary_folder  # the tests' own (tools/make_docs.py loads this file alone)

    return run_offline(path, temporary_folder(f"{path.stem}-"))
