"""Pack the course as a Gradescope autograder.

    python tools/grading/gradescope/make_autograder_zip.py OUT.zip

Gradescope unpacks the zip into /autograder/source, runs setup.sh from its
root once, and run_autograder for every submission. So the zip holds those two
at its root, beside the whole course: the files git tracks and the new ones it
does not ignore, as they are in the working tree (no caches, no virtual
environment, no test output). Gradescope gets no .git, so the zip also holds
COURSE_COMMIT, the commit it was made from, which the reports then name (as
does the zip's comment).
"""

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
HERE = Path(__file__).resolve().parent
ENTRY_POINTS = ("setup.sh", "run_autograder")  # at the zip's root, executable


def course_files() -> list[str]:
    """The course's files, relative to its root: tracked or new, never ignored ones."""
    listed = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        capture_output=True, check=True,
    ).stdout.decode().split("\0")
    return sorted({name for name in listed if name and (ROOT / name).is_file()})


def commit() -> str:
    """The commit the course is at, with "+changes" if the working tree differs from it."""
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain"],
                           capture_output=True, text=True, check=True).stdout.strip()
    return head + ("+changes" if dirty else "")


def add(archive: zipfile.ZipFile, path: Path, name: str, mode: int) -> None:
    """Add one file under `name` with Unix permissions `mode`, which Gradescope keeps."""
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, path.read_bytes())


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__.splitlines()[2].strip(), file=sys.stderr)
        return 2
    out = Path(argv[0]).resolve()
    files = [name for name in course_files() if ROOT / name != out]
    with zipfile.ZipFile(out, "w") as archive:
        archive.comment = f"Chunking Labs autograder, course at {commit()}".encode()
        archive.writestr("COURSE_COMMIT", commit() + "\n")
        for name in ENTRY_POINTS:
            add(archive, HERE / name, name, 0o755)
        for name in files:
            executable = (ROOT / name).stat().st_mode & 0o111
            add(archive, ROOT / name, name, 0o755 if executable else 0o644)
    print(f"wrote {out} ({len(files)} course files, {out.stat().st_size >> 10} KB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
