"""How graders are run: a few at a time, each in a session of its own, stopped at their time, and nothing left behind.

It decides what a student's grading is allowed to leave running. Each grader
(the course's pytest run on one student's staged labs) starts in a new
session with a parent-death signal, so that it dies with grade_class however
grade_class ends. grade_class is the subreaper of everything the graders
start: a process that left its grader's session is still our child, and is
killed before that student's row and reports are written, so none is alive
while the results are. A grader that runs past its backstop is killed with
its session and the student is not graded; Ctrl-C kills every one at once.

A grader's exit status 0 or 1 with a report is a grade; anything else is an
Outcome without one, and the reason (its last line of output) is kept in
not-graded.txt. What a grader printed is kept in grader.log, escaped
(safe_text.py) once it has ended: the grader prints a lab's words escaped
already, and this holds for whatever else reached its output.
"""

import ctypes
import json
import os
import signal
import subprocess
import sys
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import confine
from safe_text import safe_text
from staging import Staged

ROOT = Path(__file__).resolve().parents[2]
POLL = 0.2  # seconds between looks at the running graders
PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>
PR_SET_CHILD_SUBREAPER = 36  # likewise: orphans of our descendants become our children
GRADED, RESUMED, NOT_GRADED = "graded", "resumed", "not graded"
LOG_LIMIT = 2_000_000  # characters of grader.log kept, its end (where the grades are) when it is longer
REASON_LIMIT = 300  # characters of a reason a student is not graded
ESCAPE_OF_ANY = "\\U0010ffff"  # the longest escape safe_text writes for one character


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


def grader_command(job: Job, tests: list[Path]) -> list[str]:
    """The grader's command line for one student: the course's pytest on `tests`, their staged labs."""
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
    return safe_text(lines[-1], REASON_LIMIT) if lines else "it printed nothing"


def make_log_safe(log: Path) -> None:
    """Rewrite a finished grader's log as text safe to print, its last LOG_LIMIT characters at most."""
    if not log.is_file():
        return
    text = log.read_text(encoding="utf-8", errors="replace")
    escaped = safe_text(text[-LOG_LIMIT:], len(ESCAPE_OF_ANY) * LOG_LIMIT, lines=True)
    cut = "(the log's beginning is cut)\n" if len(text) > LOG_LIMIT or len(escaped) > LOG_LIMIT else ""
    log.write_text(cut + escaped[-LOG_LIMIT:], encoding="utf-8")


def finish(job: Job, status: int | None, backstop: float) -> Outcome:
    """Keep a finished grader's report, or say why there is none (status None: it was stopped).

    pytest exits 0 when every test passed and 1 when some failed: both are a
    grade. Any other status means the run itself went wrong.
    """
    log = job.home / "grader.log"
    make_log_safe(log)
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
            note = f": {safe_text(outcome.reason, REASON_LIMIT)}" if outcome.reason else ""
            print(f"{outcome.staged.student} {outcome.status}{note} ({self.status()})",
                  file=self.stream, flush=True)

    def close(self) -> None:
        if self.tty and self.total:
            self.stream.write("\n")


class Settings(NamedTuple):
    """How the graders run: the grading tests, how many at once, for how long, what they may not read."""

    tests: list[Path]
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
                process = start_grader(grader_command(job, settings.tests),
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
                confine.remove_cgroups_of(process.pid)  # its workers', should it have ended without removing them
                outcomes.append(finish(job, status, settings.backstop))
                progress.advance(outcomes[-1])
            progress.tick()
    finally:
        for process in running:
            kill_group(process)
        end_orphans(set())
        for process in running:
            confine.remove_cgroups_of(process.pid)
        progress.close()
    return outcomes
