"""What of a submission is graded: the class's folders and zips opened, each student named, one file a lab chosen.

It decides four things, before any student code runs:

- which archives may be opened: a zip member with an absolute path or `..`,
  a zip of more than MAX_MEMBERS members or that unpacks to more than
  MAX_UNZIPPED bytes is refused whole, and links are never followed or made;
- who a student is: the name of their folder or zip, normalised (Unicode NFC,
  no control or format characters, no surrounding space), so that the id in
  the gradebook is the one a reader sees; two entries that normalise to one id
  are both refused, with the reason, rather than graded as one student;
- which file is graded for each lab, among the ragN-*.py and ragN-*.ipynb up
  to MAX_DEPTH folders down: the shallowest, a script before a notebook, never
  a copy of the course's solutions/; the others are named in the notes;
- what was graded, as a hash, so that a rerun can keep a report whose files
  have not changed.
"""

import hashlib
import re
import shutil
import unicodedata
import zipfile
import zlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

LAB_FILE = re.compile(r"(rag\d+)-.*\.(py|ipynb)")
MAX_DEPTH = 3  # folders below a student's folder where lab files are looked for
MAX_UNZIPPED = 1 << 30  # bytes a zip may unpack to, all members together
MAX_MEMBERS = 20_000  # members a zip may have
UNSEEN = {"Cc", "Cf", "Zl", "Zp"}  # Unicode categories dropped from ids: controls, format marks, line breaks


def lab_number(lab: str) -> int:
    """rag10 sorts after rag9."""
    return int(lab.removeprefix("rag"))


# ---- zips --------------------------------------------------------------------------


class UnsafeArchive(Exception):
    """A zip that would write outside its folder, or unpack to too much."""


def member_path(dest: Path, name: str) -> Path:
    """Where a zip member goes in `dest`; refuses absolute paths, drives and `..`."""
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or ".." in path.parts or (path.parts and ":" in path.parts[0]):
        raise UnsafeArchive(f"member {name!r} would be written outside the folder")
    return dest.joinpath(*path.parts)


def safe_extract(archive: Path, dest: Path) -> None:
    """Unpack `archive` into `dest`, or refuse it whole (zipfile alone trusts member names).

    Sizes are counted as the bytes come out, not read from the headers, which
    can lie; links are skipped, since a link could point anywhere.
    """
    try:
        with zipfile.ZipFile(archive) as zipped:
            members = zipped.infolist()
            if len(members) > MAX_MEMBERS:
                raise UnsafeArchive(f"{len(members)} members, more than {MAX_MEMBERS}")
            written = 0
            for member in members:
                target = member_path(dest, member.filename)
                if member.is_dir() or (member.external_attr >> 16) & 0o170000 == 0o120000:
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with zipped.open(member) as source, open(target, "wb") as out:
                    while block := source.read(1 << 20):
                        written += len(block)
                        if written > MAX_UNZIPPED:
                            raise UnsafeArchive(f"unpacks to more than {MAX_UNZIPPED >> 20} MB")
                        out.write(block)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError,
            OSError) as error:  # damaged, encrypted, or members that clash on disk
        raise UnsafeArchive(f"cannot be unpacked ({type(error).__name__}: {error})") from error


def visible(path: Path) -> bool:
    """False for hidden entries and archivers' folders (.git, __MACOSX, .ipynb_checkpoints)."""
    return not path.name.startswith((".", "__"))


# ---- students ------------------------------------------------------------------------


def student_id(name: str) -> str:
    """A student's id as the gradebook shows it: NFC, without the characters a reader cannot see.

    "José" typed on a Mac (e + a combining accent) and on Linux (é) look the
    same and must be the same id; a tab, a newline or a zero-width mark in a
    folder's name would make a row that looks like another student's.
    """
    composed = unicodedata.normalize("NFC", name)
    return "".join(c for c in composed if unicodedata.category(c) not in UNSEEN).strip()


def usable(student: str) -> bool:
    """False for an id left empty or hidden by normalising ("\\u200b.." becomes ".."): it
    names a folder of results, and must name a student's own."""
    return bool(student) and not student.startswith((".", "__"))


def shown(name: str) -> str:
    """A name as it can be told apart from others: as it is if it is already an id, else escaped
    ("Jose\\u0301", "bob\\x07"), so that two names that normalise alike never read alike."""
    return name if student_id(name) == name else name.encode("unicode_escape").decode("ascii")


class Submission(NamedTuple):
    """A student's id and the folder their work is in, or why it could not be opened."""

    student: str
    folder: Path | None
    problem: str = ""


def class_folder(submissions: Path, scratch: Path) -> Path:
    """The folder of students: SUBMISSIONS itself, or its zip unpacked into `scratch`.

    A zip made of the folder (`zip -r class.zip class`) holds it as its one top
    folder; that is opened too, unless lab files lie in it, as in a class of one.
    """
    if submissions.is_dir():
        return submissions
    root = scratch / "class"
    safe_extract(submissions, root)
    inside = [entry for entry in root.iterdir() if visible(entry)]
    if len(inside) == 1 and inside[0].is_dir() and not lab_files_in(inside[0], depth=0):
        return inside[0]
    return root


def entry_name(entry: Path) -> str:
    """The name a class entry gives its student: a folder's name, a zip's without .zip."""
    return entry.name if entry.is_dir() else entry.stem


def submissions_in(submissions: Path, scratch: Path) -> list[Submission]:
    """Every student in the class: a folder each, or a zip each (unpacked into `scratch`).

    Entries whose names are one id once normalised (a folder and a zip of the
    same name, or "José" written two ways) are none of them graded: which one
    is the work, and whose, is for the teacher to say.
    """
    by_id: dict[str, list[Path]] = {}
    for entry in sorted(class_folder(submissions, scratch).iterdir()):
        if visible(entry) and (entry.is_dir() or entry.suffix.lower() == ".zip"):
            by_id.setdefault(student_id(entry_name(entry)), []).append(entry)
    rows: dict[str, list[Submission]] = {}  # the gradebook's row name -> what it would stand for
    for student, entries in by_id.items():
        if len(entries) == 1 and usable(student):
            made = [opened(student, entries[0], scratch)]
        else:
            made = clashing(student, entries)
        for submission in made:
            rows.setdefault(submission.student, []).append(submission)
    return [one_row(name, same) for name, same in rows.items()]


def one_row(name: str, same: list[Submission]) -> Submission:
    """The submission a gradebook row stands for; none graded if the row would stand for two (a
    name escaped for a clash can read as another entry's id: "Jose\\u0301" typed so)."""
    if len(same) == 1:
        return same[0]
    return Submission(name, None, f"{name} names two entries of the class (one of them escaped); "
                                  f"neither is graded: rename one")


def opened(student: str, entry: Path, scratch: Path) -> Submission:
    """One student's entry: their folder, or their zip unpacked into `scratch`."""
    if entry.is_symlink():  # a link could lead anywhere: to the course's solutions/, say
        return Submission(student, None, f"{entry.name} is a link, not the student's own folder")
    if entry.is_dir():
        return Submission(student, entry)
    try:
        safe_extract(entry, scratch / "students" / student)
        return Submission(student, scratch / "students" / student)
    except UnsafeArchive as error:
        return Submission(student, None, f"{entry.name}: {error}")


def clashing(student: str, entries: list[Path]) -> list[Submission]:
    """Entries that are one student id, or whose id would be hidden or empty: each distinct name
    listed, none graded."""
    listed = " and ".join(f"{shown(entry.name)}{'/' if entry.is_dir() else ''}" for entry in entries)
    if len(entries) == 1:
        problem = (f"{listed}: once normalised (Unicode NFC, no control characters) the name is "
                   f"{student!r}, not a student id")
    elif len({entry_name(entry) for entry in entries}) == 1:
        problem = f"{listed} are both {student}; neither is graded: which one is the work is for you to say"
    else:
        problem = (f"{listed} are one student id once normalised ({student}: Unicode NFC, no control "
                   f"characters); none of them is graded: rename all but one")
    names = dict.fromkeys(shown(entry_name(entry)) for entry in entries)
    return [Submission(name, None, problem) for name in names]


# ---- the files graded -------------------------------------------------------------------


def lab_files_in(folder: Path, depth: int = MAX_DEPTH) -> list[Path]:
    """Lab files (ragN-*.py, ragN-*.ipynb) in `folder` and up to `depth` folders below it."""
    found = []
    if not folder.is_dir():  # a zip of links only unpacks to nothing
        return found
    for path in sorted(folder.iterdir()):
        if not visible(path) or path.is_symlink():
            continue
        if path.is_dir() and depth > 0:
            found += lab_files_in(path, depth - 1)
        elif path.is_file() and LAB_FILE.fullmatch(path.name):
            found.append(path)
    return found


def preference(folder: Path, path: Path) -> tuple:
    """Sort key among a student's files for one lab: the file to grade comes first.

    A copy of the course's solutions/ uploaded with the work never wins; then
    the shallowest file, a script before a notebook (as the grader itself
    prefers), then by name.
    """
    relative = path.relative_to(folder)
    return "solutions" in relative.parts[:-1], len(relative.parts), path.suffix != ".py", relative


@dataclass
class Staged:
    """A student's lab files copied into one folder for the grader, and what was left out."""

    student: str
    folder: Path
    files: dict[str, Path] = field(default_factory=dict)  # lab -> the copy that is graded
    notes: list[str] = field(default_factory=list)


def stage(submission: Submission, dest: Path, labs: list[str]) -> Staged:
    """Copy one file per lab from the submission into `dest`, emptied first.

    The grader looks for each lab's file in one folder and refuses two, so
    the choice among several is made here, and said in the notes.
    """
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    staged = Staged(submission.student, dest)
    if submission.folder is None:
        return staged
    by_lab: dict[str, list[Path]] = {}
    for path in lab_files_in(submission.folder):
        lab = LAB_FILE.fullmatch(path.name).group(1)
        if lab in labs:
            by_lab.setdefault(lab, []).append(path)
    for lab, paths in sorted(by_lab.items()):
        chosen, *others = sorted(paths, key=lambda path: preference(submission.folder, path))
        try:
            staged.files[lab] = graded_copy(chosen, dest)
        except ValueError as problem:
            staged.notes.append(f"{chosen.relative_to(submission.folder)} was not graded: {problem}")
        staged.notes += [
            f"{other.relative_to(submission.folder)} was not graded: "
            f"{chosen.relative_to(submission.folder)} was graded for {lab}"
            for other in others
        ]
    return staged


def graded_copy(path: Path, dest: Path) -> Path:
    """The file the grader reads, in `dest`: a script as it is; a notebook as the script
    Jupyter would save beside it (the two are paired through jupytext).

    ValueError, saying why, for a notebook that jupytext cannot read.
    """
    if path.suffix == ".py":
        return Path(shutil.copyfile(path, dest / path.name))
    import jupytext

    try:
        script = jupytext.writes(jupytext.read(path), fmt="py:percent")
    except Exception as error:  # a notebook file is the student's: anything may be in it
        raise ValueError(f"not a notebook jupytext can read ({type(error).__name__})") from None
    copy = dest / path.with_suffix(".py").name
    copy.write_text(script, encoding="utf-8")
    return copy


def submission_hash(staged: Staged, labs: list[str]) -> str:
    """sha256 over the labs asked for and each graded file's name and bytes."""
    digest = hashlib.sha256(",".join(labs).encode() + b"\0")
    for path in sorted(staged.files.values()):
        data = path.read_bytes()
        digest.update(f"{path.name}\0{len(data)}\0".encode() + data)
    return digest.hexdigest()
