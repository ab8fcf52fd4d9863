"""Grade a class: every student's labs through the grader, then a gradebook and Gradescope results.

    python tools/grading/grade_class.py SUBMISSIONS --out DIR [-j N] [--timeout S] [--labs rag4,rag8]
                                [--allow-unsandboxed]
    python tools/grading/grade_class.py --gradescope-one SUBMISSION --results results.json
                                [--metadata submission_metadata.json] [--hidden-visibility V]

SUBMISSIONS is a folder with one folder or .zip per student, or a .zip of such
a folder; a student's id is the name of their folder (or zip). Their lab files
(rag4-chunking.py ... or notebooks, rag4-chunking.ipynb ..., graded as the
script jupytext makes of each, as Jupyter saves it) may sit up to three
folders down. Each student is graded by the course's grader in a process
of its own, N at a time (-j, default 2), from the course's folder:

    python -m pytest -q -p no:cacheprovider tests/grading --lab-dir LABS \\
        --grade-json REPORT --student ID

What it writes in DIR:

    gradebook.csv                     a row per student: points per lab, total, possible, flags
    similarity.md                     pairs whose code is too alike (tools/grading/similarity.py)
    students/ID/labs/                 the lab files that were graded, copied from the submission
    students/ID/report.json           the grader's report
    students/ID/results.json          the same in Gradescope's format
    students/ID/submission.sha256     the hash of what was graded
    students/ID/grader.log            what the grader printed
    students/ID/not-graded.txt        why there is no report, when there is none

Student code runs in a bubblewrap sandbox per worker (tools/grading/confine.py);
a class is not graded without one unless --allow-unsandboxed says so, and each
report names the isolation it ran under. grade_class is the subreaper of
everything its graders start: before a student's row and reports are written,
every process left of that student's grading is killed, and none is left when
it returns.

A rerun with the same DIR skips every student whose report is there and whose
files (and the labs asked for) hash as before, so after Ctrl-C the same
command carries on; delete students/ID to grade one student again. A grader
that runs longer than --timeout seconds (default 1200) is stopped, and the
student is listed as not graded. The exit status is 0 when every student was
graded, 1 when some were not, 130 when interrupted.

--gradescope-one grades one submission the same way and writes Gradescope's
results.json (tools/grading/gradescope/run_autograder calls it).
"""

import argparse
import csv
import ctypes
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import zipfile
import zlib
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import NamedTuple

import confine
import similarity

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
GRADING_TESTS = ROOT / "tests" / "grading"
LAB_FILE = re.compile(r"(rag\d+)-.*\.(py|ipynb)")


def lab_number(lab: str) -> int:
    """rag10 sorts after rag9."""
    return int(lab.removeprefix("rag"))


LABS = sorted({path.name.split("-")[0] for path in SOLUTIONS.glob("rag*-*.py")}, key=lab_number)

BACKSTOP = 20 * 60  # seconds a student's grader may run before it is stopped
MAX_DEPTH = 3  # folders below a student's folder where lab files are looked for
MAX_UNZIPPED = 1 << 30  # bytes a zip may unpack to, all members together
MAX_MEMBERS = 20_000  # members a zip may have
OUTPUT_LINES = 25  # failed tests listed per Gradescope test row
POLL = 0.2  # seconds between looks at the running graders
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36  # likewise: orphans of our descendants become our children
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")  # Gradescope's words
GRADED, RESUMED, NOT_GRADED = "graded", "resumed", "not graded"
SHORT_FLAGS = {"refused": "refused-access"}  # a grader's flag kind -> the gradebook's word


# ---- submissions: folders, zips, and the lab files in them -------------------------


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


def submissions_in(submissions: Path, scratch: Path) -> list[Submission]:
    """Every student in the class: a folder each, or a zip each (unpacked into `scratch`).

    A student with both a folder and a zip is not graded: which one is the
    work is for the teacher to say.
    """
    found: dict[str, Submission] = {}
    for entry in sorted(class_folder(submissions, scratch).iterdir()):
        if not visible(entry) or not (entry.is_dir() or entry.suffix.lower() == ".zip"):
            continue
        student = entry.name if entry.is_dir() else entry.stem
        if entry.is_symlink():  # a link could lead anywhere: to the course's solutions/, say
            found[student] = Submission(student, None, f"{entry.name} is a link, not the student's own folder")
            continue
        if student in found:
            found[student] = Submission(student, None, f"both {student}/ and {student}.zip")
        elif entry.is_dir():
            found[student] = Submission(student, entry)
        else:
            try:
                safe_extract(entry, scratch / "students" / student)
                found[student] = Submission(student, scratch / "students" / student)
            except UnsafeArchive as error:
                found[student] = Submission(student, None, f"{entry.name}: {error}")
    return list(found.values())


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


# ---- running the graders ---------------------------------------------------------


@dataclass
class Job:
    """One student to grade: where their files are and where the grader's output goes."""

    staged: Staged
    home: Path  # the student's folder of results
    digest: str

    @property
    def report(self) -> Path:
        return self.home / "report.json"

    @property
    def partial(self) -> Path:
        return self.home / "report.partial.json"


class Outcome(NamedTuple):
    """What became of one student: their report, or why there is none."""

    staged: Staged
    status: str  # GRADED, RESUMED or NOT_GRADED
    report: dict | None
    reason: str = ""


def forget(home: Path) -> None:
    """Remove what an earlier run left for a student, before they are graded anew."""
    for name in ("report.json", "submission.sha256", "not-graded.txt", "results.json"):
        (home / name).unlink(missing_ok=True)


def grader_command(job: Job, labs: list[str]) -> list[str]:
    """The grader's command line for one student: all of tests/grading, or, for some labs
    only, their test files (test_rag4.py, test_rag4_hidden.py, in tests/grading or below)."""
    tests = [GRADING_TESTS] if labs == LABS else sorted(
        path for lab in labs for pattern in (f"test_{lab}.py", f"test_{lab}_*.py")
        for path in GRADING_TESTS.rglob(pattern))
    return [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *map(str, tests),
            "--lab-dir", str(job.staged.folder), "--grade-json", str(job.partial),
            "--student", job.staged.student]


def die_with_parent(parent: int):
    """A preexec_fn: the kernel kills the grader when this process dies, even by SIGKILL.

    It runs in the child before exec; if the parent is already gone by then,
    the signal would never come, so the child ends itself.
    """
    def arm() -> None:
        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:
            os.kill(os.getpid(), signal.SIGKILL)

    return arm


def start_grader(command: list[str], log: Path, forbidden: tuple[Path, ...]) -> subprocess.Popen:
    """Start one grader in a session of its own, so that its whole group can be killed.

    The grader's wall also refuses the lab any read of `forbidden` (the other
    students' work), through ACADEMY_GRADING_FORBID; the lab's own folder
    stays open to it.
    """
    env = dict(os.environ)
    env["ACADEMY_GRADING_FORBID"] = os.pathsep.join(
        filter(None, [os.environ.get("ACADEMY_GRADING_FORBID"), *map(str, forbidden)]))
    with open(log, "wb") as output:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=output,
            stderr=subprocess.STDOUT, start_new_session=True,
            preexec_fn=die_with_parent(os.getpid()) if sys.platform == "linux" else None,
        )


def kill_group(process: subprocess.Popen) -> None:
    """Kill a grader and everything it started (the tests' own processes), then reap it."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    process.wait()


def become_subreaper() -> bool:
    """Make every orphan of our graders (a lab's daemon, say) our child, so that we can end it."""
    if sys.platform != "linux":
        return False
    return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0


def our_children() -> list[int]:
    """Pids of this process's children, read from /proc (empty where there is none)."""
    found, me = [], os.getpid()
    for entry in Path("/proc").glob("[0-9]*"):
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if int(fields[1]) == me:
            found.append(int(entry.name))
    return found


def end_orphans(graders: set[int], seconds: float = 10.0) -> None:
    """Kill and reap every child of ours that is not one of the running `graders`.

    An orphan's own children come to us in turn when it dies, so this goes on
    until there are none, or `seconds` have passed.
    """
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        orphans = [pid for pid in our_children() if pid not in graders]
        if not orphans:
            return
        for pid in orphans:
            try:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
            except (ProcessLookupError, ChildProcessError, PermissionError):
                pass


def last_line(log: Path) -> str:
    """The last non-empty line a grader printed: usually what went wrong."""
    lines = [line.strip() for line in log.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1][:300] if lines else "it printed nothing"


def finish(job: Job, status: int | None, backstop: float) -> Outcome:
    """Keep a finished grader's report, or say why there is none (status None: it was stopped).

    pytest exits 0 when every test passed and 1 when some failed: both are a
    grade. Any other status means the run itself went wrong.
    """
    log = job.home / "grader.log"
    if status is None:
        reason = f"the grader did not finish within {backstop:g} s and was stopped"
    elif status in (0, 1) and job.partial.exists():
        try:
            report = json.loads(job.partial.read_text(encoding="utf-8"))
            job.partial.replace(job.report)
            (job.home / "submission.sha256").write_text(job.digest + "\n")
            return Outcome(job.staged, GRADED, report)
        except json.JSONDecodeError as error:
            reason = f"the grader's report is not JSON ({error})"
    else:
        reason = f"the grader exited with status {status}: {last_line(log)}"
    (job.home / "not-graded.txt").write_text(reason + "\n")
    return Outcome(job.staged, NOT_GRADED, None, reason)


class Progress:
    """A one-line bar on stderr (count, elapsed, time left); off a terminal, a line a student."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.done, self.stream = total, 0, stream
        self.started = time.monotonic()
        self.tty = stream.isatty()
        self.drawn = 0.0

    def clock(self, seconds: float) -> str:
        minutes, seconds = divmod(int(seconds), 60)
        return f"{minutes}:{seconds:02d}"

    def status(self) -> str:
        elapsed = time.monotonic() - self.started
        left = elapsed / self.done * (self.total - self.done) if self.done else None
        eta = self.clock(left) if left is not None else "?"
        return f"{self.done}/{self.total} done, {self.clock(elapsed)} elapsed, ETA {eta}"

    def tick(self) -> None:
        """Redraw the bar, at most once a second (the elapsed time moves on)."""
        if self.tty and time.monotonic() - self.drawn >= 1:
            width = 30
            filled = width * self.done // max(self.total, 1)
            self.stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {self.status()} ")
            self.stream.flush()
            self.drawn = time.monotonic()

    def advance(self, outcome: Outcome) -> None:
        self.done += 1
        if self.tty:
            self.drawn = 0.0
            self.tick()
        else:
            note = f": {outcome.reason}" if outcome.reason else ""
            print(f"{outcome.staged.student} {outcome.status}{note} ({self.status()})",
                  file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty and self.total:
            self.stream.write("\n")


class Settings(NamedTuple):
    """How the graders run: the labs, how many at once, for how long, what they may not read."""

    labs: list[str]
    workers: int
    backstop: float  # seconds
    forbidden: tuple[Path, ...] = ()


def run_graders(jobs: list[Job], settings: Settings, progress: Progress) -> list[Outcome]:
    """Grade every job, a few at a time; on Ctrl-C kill every running grader and re-raise."""
    pending, running, outcomes = deque(jobs), {}, []
    try:
        while pending or running:
            while pending and len(running) < settings.workers:
                job = pending.popleft()
                forget(job.home)
                process = start_grader(grader_command(job, settings.labs),
                                       job.home / "grader.log", settings.forbidden)
                running[process] = (job, time.monotonic())
            time.sleep(POLL)
            for process, (job, started) in list(running.items()):
                status = process.poll()
                if status is None and time.monotonic() - started < settings.backstop:
                    continue
                kill_group(process)  # what is left of its session, then what left the session
                del running[process]
                end_orphans({grader.pid for grader in running})
                outcomes.append(finish(job, status, settings.backstop))
                progress.advance(outcomes[-1])
            progress.tick()
    finally:
        for process in running:
            kill_group(process)
        end_orphans(set())
        progress.close()
    return outcomes


# ---- Gradescope's results.json ---------------------------------------------------------


def points(value: float) -> float:
    """Points rounded to 4 places: per-test shares such as 5/6 add up to 4.999999..."""
    return round(float(value), 4)


def failures(tests: list[dict]) -> str:
    """The output of a Gradescope test row: each failed test with its one-line reason."""
    failed = [t for t in tests if t.get("outcome") != "passed"]
    if not failed:
        return "the test passed" if len(tests) == 1 else f"all {len(tests)} tests passed"
    lines = [f"{t['name']}: {t.get('outcome')}: {shown_reason(t)}" for t in failed]
    if len(lines) > OUTPUT_LINES:
        lines = lines[:OUTPUT_LINES] + [f"... and {len(lines) - OUTPUT_LINES} more"]
    return "\n".join(lines)


def shown_reason(test: dict) -> str:
    """A failed test's reason as a student may see it: a hidden test's input stays hidden."""
    if test.get("hidden"):
        return "a hidden test failed (its input is the instructor's; the report.json has it)"
    return test.get("message", "")


def lab_rows(name: str, lab: dict, hidden_visibility: str = "after_published") -> list[dict]:
    """Gradescope test rows for one lab: a row per function for its public tests, and one for its
    hidden tests, which the students see at `hidden_visibility`; or the whole lab in one.

    A group's points are its tests' shares; its earned points are all of them when every test
    passed, so that full marks add up to exactly the lab's points. Points of tests that belong
    to no listed function get a row of their own, so the rows always add up to the lab.
    """
    functions = lab.get("functions")
    if not functions:
        return [gradescope_row(name, lab["earned"], lab["possible"], lab.get("tests", []), "visible")]
    tests = {}
    for test in lab.get("tests", []):
        tests.setdefault(test.get("function"), []).append(test)
    rows = []
    for function, score in functions.items():
        mine = tests.pop(function, [])
        hidden = [test for test in mine if test.get("hidden")]
        public = [test for test in mine if not test.get("hidden")]
        public_possible = sum(test["points"] for test in public) if hidden else score["possible"]
        groups = [(f"{name} {function}", public, public_possible, "visible")]
        if hidden:
            groups.append((f"{name} {function} (hidden tests)", hidden, score["possible"] - public_possible,
                           hidden_visibility))
        for row_name, group, possible, visibility in groups:
            passed = all(test.get("outcome") == "passed" for test in group)
            earned = possible if passed else sum(t["points"] for t in group if t.get("outcome") == "passed")
            rows.append(gradescope_row(row_name, earned, possible, group, visibility))
    rest = [test for group in tests.values() for test in group]
    possible = lab["possible"] - sum(score["possible"] for score in functions.values())
    if rest or points(possible):
        earned = lab["earned"] - sum(score["earned"] for score in functions.values())
        rows.append(gradescope_row(f"{name} (other tests)", earned, possible, rest, "visible"))
    return rows


def gradescope_row(name: str, earned: float, possible: float, tests: list[dict], visibility: str) -> dict:
    """One Gradescope test row: its points, its failed tests, and when the student sees it."""
    return {"name": name, "score": points(min(max(earned, 0.0), possible)), "max_score": points(possible),
            "output": failures(tests), "visibility": visibility}


def summary(report: dict, notes: list[str]) -> str:
    """The results' top text: points per lab, the grader's warnings, files left out."""
    lines = []
    for name, lab in report["labs"].items():
        lines.append(f"{name}: {points(lab['earned']):g} / {points(lab['possible']):g}")
        lines += [f"{name}: {warning}" for warning in lab.get("warnings", [])]
    lines.append(f"total: {points(report['earned']):g} / {points(report['possible']):g}")
    return "\n".join(lines + notes)


def gradescope_results(outcome: Outcome, hidden_visibility: str = "after_published") -> dict:
    """Gradescope's results.json for one student: a score, a text, test rows per function.

    The score is the sum of the rows, as Gradescope shows them. The grader's own
    output (stdout) is the instructor's: it names hidden tests' inputs. A student
    who could not be graded gets 0 and the reason, so that the submission page
    says what happened rather than that the autograder failed.
    """
    if outcome.report is None:
        text = f"Not graded: {outcome.reason}"
        return {"score": 0, "output": "\n".join([text, *outcome.staged.notes]), "tests": [],
                "visibility": "visible", "stdout_visibility": "hidden"}
    report = outcome.report
    rows = [r for name, lab in report["labs"].items() for r in lab_rows(name, lab, hidden_visibility)]
    return {
        "score": points(sum(row["score"] for row in rows)),
        "output": summary(report, outcome.staged.notes),
        "tests": rows,
        "visibility": "visible",
        "stdout_visibility": "hidden",
    }


def write_json(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# ---- the class: gradebook and similarity ------------------------------------------------


def cell(value: float) -> str:
    """A number for the CSV: 42.5, 10 (not 10.0000)."""
    return f"{points(value):.4f}".rstrip("0").rstrip(".")


def gradebook_rows(outcomes: list[Outcome], labs: list[str],
                   flags: dict[str, list[str]]) -> tuple[list, list]:
    """(columns, rows) of the gradebook: a row per student, the labs asked for and any
    other lab a report names."""
    reports = [o.report for o in outcomes if o.report]
    labs = sorted(set(labs).union(*(report["labs"] for report in reports)), key=lab_number)
    rows = []
    for outcome in sorted(outcomes, key=lambda o: o.staged.student):
        student, report = outcome.staged.student, outcome.report
        row = {"student": student, "flags": ";".join(flags.get(student, []))}
        if report is not None:
            row |= {lab: cell(report["labs"][lab]["earned"]) for lab in labs
                    if lab in report["labs"]}
            row |= {"total": cell(report["earned"]), "possible": cell(report["possible"])}
        rows.append(row)
    return ["student", *labs, "total", "possible", "flags"], rows


def short_flag(flag: str) -> str:
    """A grader's flag ("refused: reading ...") as the gradebook's short one ("refused-access");
    the details stay in the report."""
    kind = flag.split(":")[0].strip().lower().replace(" ", "-")
    return SHORT_FLAGS.get(kind, kind)


def class_flags(outcomes: list[Outcome], copies: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every student's short flags: not-graded or the grader's, then the similarity ones."""
    flags = {}
    for outcome in outcomes:
        mine = [] if outcome.report else ["not-graded"]
        for lab in (outcome.report or {}).get("labs", {}).values():
            mine += map(short_flag, lab.get("flags", []))
        mine += copies.get(outcome.staged.student, [])
        flags[outcome.staged.student] = list(dict.fromkeys(mine))  # each flag once, in order
    return flags


def write_gradebook(path: Path, outcomes: list[Outcome], labs: list[str],
                    flags: dict[str, list[str]]) -> None:
    columns, rows = gradebook_rows(outcomes, labs, flags)
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, columns)
        writer.writeheader()
        writer.writerows(rows)


def plan(submission: Submission, out: Path, labs: list[str]) -> Job | Outcome:
    """Stage a student's files; an Outcome if their current report can be kept, else a Job."""
    home = out / "students" / submission.student
    staged = stage(submission, home / "labs", labs)
    if submission.problem:
        forget(home)
        (home / "not-graded.txt").write_text(submission.problem + "\n")
        return Outcome(staged, NOT_GRADED, None, submission.problem)
    digest = submission_hash(staged, labs)
    sidecar, report = home / "submission.sha256", home / "report.json"
    if report.exists() and sidecar.exists() and sidecar.read_text().strip() == digest:
        return Outcome(staged, RESUMED, json.loads(report.read_text(encoding="utf-8")))
    return Job(staged, home, digest)


def isolation_refused(allow_unsandboxed: bool) -> str:
    """Why a class may not be graded here ('' if it may): student code runs in a sandbox, or
    the instructor has said, with --allow-unsandboxed, that a weaker wall will do."""
    closed = [str(ROOT / name) for name in confine.CLOSED_FOLDERS]
    try:
        isolation = confine.choose(closed)
    except confine.Unavailable as error:
        return str(error)
    if isolation == confine.SANDBOX or allow_unsandboxed:
        print(f"isolation: {isolation}", file=sys.stderr)
        return ""
    return (f"no sandbox for student code here ({confine.why_not_sandboxed()}); the workers would run as "
            f"{isolation!r} (docs/instructors.md, section 5). Install bubblewrap, or pass --allow-unsandboxed "
            f"to grade behind the weaker wall")


def grade_class(args) -> int:
    """Grade every student, then write results, similarity and the gradebook."""
    refused = isolation_refused(args.allow_unsandboxed)
    if refused:
        print(refused, file=sys.stderr)
        return 2
    become_subreaper()
    out = args.out.resolve()
    with tempfile.TemporaryDirectory() as scratch:
        planned = [plan(s, out, args.labs) for s in submissions_in(args.submissions,
                                                                  Path(scratch))]
        if not planned:
            print(f"{args.submissions}: no student folders or zips in it", file=sys.stderr)
            return 2
        kept = [p for p in planned if isinstance(p, Outcome)]
        jobs = [p for p in planned if isinstance(p, Job)]
        resumed = [p for p in kept if p.status == RESUMED]
        if resumed:
            print(f"{len(resumed)} of {len(planned)} students already graded (same files): kept",
                  file=sys.stderr)
        settings = Settings(args.labs, args.jobs, args.timeout,
                            (out / "students", args.submissions.resolve(), Path(scratch)))
        outcomes = kept + run_graders(jobs, settings, Progress(len(jobs)))
    for outcome in outcomes:
        write_json(out / "students" / outcome.staged.student / "results.json",
                   gradescope_results(outcome, args.hidden_visibility))
    findings = similarity.find_similar(
        {o.staged.student: o.staged.files for o in outcomes}, SOLUTIONS, args.labs)
    (out / "similarity.md").write_text(similarity.report(findings), encoding="utf-8")
    write_gradebook(out / "gradebook.csv", outcomes, args.labs,
                    class_flags(outcomes, findings.flags()))
    missed = [o for o in outcomes if o.status == NOT_GRADED]
    for outcome in missed:
        print(f"not graded: {outcome.staged.student}: {outcome.reason}", file=sys.stderr)
    print(f"{len(outcomes) - len(missed)} of {len(outcomes)} students graded: "
          f"{out / 'gradebook.csv'}", file=sys.stderr)
    return 1 if missed else 0


# ---- one submission, for Gradescope ------------------------------------------------------


def student_from_metadata(metadata: Path | None) -> str:
    """The submitter's id from Gradescope's submission_metadata.json: emails, or names.

    A group submission joins its members with "+". Without metadata: "submission".
    """
    if metadata is None or not metadata.exists():
        return "submission"
    users = json.loads(metadata.read_text(encoding="utf-8")).get("users") or []
    names = [str(user.get("email") or user.get("name") or user.get("id")) for user in users]
    return "+".join(names) or "submission"


def grade_one(args) -> int:
    """Grade one submission folder as grade_class grades a student; write results.json."""
    student = args.student or student_from_metadata(args.metadata)
    become_subreaper()
    with tempfile.TemporaryDirectory() as work:
        home = Path(work)
        staged = stage(Submission(student, args.gradescope_one), home / "labs", args.labs)
        job = Job(staged, home, submission_hash(staged, args.labs))
        [outcome] = run_graders([job], Settings(args.labs, 1, args.timeout), Progress(1))
        print((home / "grader.log").read_text(errors="replace")[-20_000:])
    args.results.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.results, gradescope_results(outcome, args.hidden_visibility))
    return 0 if outcome.report else 1


# ---- command line ----------------------------------------------------------------------


def lab_list(text: str) -> list[str]:
    """--labs rag4,rag8: known labs only, in the course's order."""
    asked = {lab.strip() for lab in text.split(",") if lab.strip()}
    unknown = sorted(asked - set(LABS))
    if unknown or not asked:
        raise argparse.ArgumentTypeError(
            f"{', '.join(unknown) or 'no lab'}: choose among {', '.join(LABS)}")
    return [lab for lab in LABS if lab in asked]


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Grade a class of lab submissions.",
        epilog="See the module's docstring for what is written where.")
    parser.add_argument("submissions", nargs="?", type=Path,
                        help="folder (or .zip) with a folder or .zip per student")
    parser.add_argument("--out", type=Path, help="folder for the gradebook and reports")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="graders at a time (2)")
    parser.add_argument("--timeout", type=float, default=BACKSTOP,
                        help=f"seconds a student's grading may take before it is stopped "
                             f"({BACKSTOP})")
    parser.add_argument("--labs", type=lab_list, default=LABS,
                        help="grade only these labs, e.g. rag4,rag8 (default: all)")
    parser.add_argument("--allow-unsandboxed", action="store_true",
                        help="grade even where no sandbox can be made (docs/instructors.md, section 5)")
    parser.add_argument("--hidden-visibility", choices=VISIBILITIES, default="after_published",
                        help="when students see the rows of hidden tests on Gradescope (after_published)")
    parser.add_argument("--gradescope-one", type=Path, metavar="SUBMISSION",
                        help="grade one submission folder for Gradescope")
    parser.add_argument("--results", type=Path, help="with --gradescope-one: results.json")
    parser.add_argument("--metadata", type=Path,
                        help="with --gradescope-one: submission_metadata.json, for the id")
    parser.add_argument("--student", help="with --gradescope-one: the student's id")
    args = parser.parse_args(argv)
    if args.gradescope_one:
        if not args.results:
            parser.error("--gradescope-one needs --results")
    elif not (args.submissions and args.out):
        parser.error("give SUBMISSIONS and --out (or --gradescope-one)")
    elif not args.submissions.exists():
        parser.error(f"{args.submissions} does not exist")
    elif args.out.resolve().is_relative_to(args.submissions.resolve()):
        parser.error("--out must not be inside SUBMISSIONS, where it would pass for a student")
    if args.jobs < 1:
        parser.error("-j must be 1 or more")
    return args


def main(argv: list[str]) -> int:
    args = parse(argv)
    try:
        return grade_one(args) if args.gradescope_one else grade_class(args)
    except UnsafeArchive as error:
        print(f"{args.submissions}: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the running graders were stopped; "
              "the same command carries on where this one stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
