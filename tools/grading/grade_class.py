"""Grade a class: every student's labs through the grader, then a gradebook and Gradescope results.

    python tools/grading/grade_class.py SUBMISSIONS --out DIR [-j N] [--timeout S] [--labs rag4,rag8]
                                [--allow-unsandboxed]
    python tools/grading/grade_class.py --gradescope-one SUBMISSION --results results.json
                                [--metadata submission_metadata.json] [--hidden-visibility V]
                                [--allow-unsandboxed]

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

This module is the scheduler: it decides what is graded, in which order, and
when to stop. The parts are modules of their own: staging.py (zips, folders,
links, student ids, which file is graded), supervise.py (running the graders,
their time limits, killing what they leave) and gradebook.py (gradebook.csv
and Gradescope's results.json); similarity.py writes similarity.md.

A rerun with the same DIR skips every student whose report is there and whose
files (and the labs asked for) hash as before, so after Ctrl-C the same
command carries on; delete students/ID to grade one student again. A grader
that runs longer than --timeout seconds (default 1200) is stopped, and the
student is listed as not graded. The exit status is 0 when every student was
graded, 1 when some were not, 130 when interrupted.

--gradescope-one grades one submission the same way and writes Gradescope's
results.json (tools/grading/gradescope/run_autograder calls it). A Gradescope
container holds one submission, so the separate user will do as well as the
sandbox; with neither, it grades nothing unless --allow-unsandboxed says so,
and results.json gives 0 and the reason. Exit status: 0 graded, 1 not graded,
2 refused.
"""

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

import confine
import similarity
from gradebook import VISIBILITIES, class_flags, gradescope_results, write_gradebook, write_json
from safe_text import safe_text
from staging import Staged, Submission, UnsafeArchive, lab_number, stage, submission_hash, submissions_in, \
    student_id
from supervise import NOT_GRADED, RESUMED, Job, Outcome, Progress, Settings, become_subreaper, forget, \
    run_graders

ROOT = Path(__file__).resolve().parents[2]
SOLUTIONS = ROOT / "solutions"
GRADING_TESTS = ROOT / "tests" / "grading"
LABS = sorted({path.name.split("-")[0] for path in SOLUTIONS.glob("rag*-*.py")}, key=lab_number)
BACKSTOP = 20 * 60  # seconds a student's grader may run before it is stopped


def grading_tests(labs: list[str]) -> list[Path]:
    """What the graders run: all of tests/grading, or, for some labs only, their test files
    (test_rag4.py, test_rag4_hidden.py, in tests/grading or below)."""
    if labs == LABS:
        return [GRADING_TESTS]
    return sorted(path for lab in labs for pattern in (f"test_{lab}.py", f"test_{lab}_*.py")
                  for path in GRADING_TESTS.rglob(pattern))


def plan(submission: Submission, out: Path, labs: list[str]) -> Job | Outcome:
    """Stage a student's files; an Outcome if their current report can be kept, else a Job."""
    home = out / "students" / submission.student
    staged = stage(submission, home / "labs", labs)
    if submission.problem:
        forget(home)
        (home / "not-graded.txt").write_text(safe_text(submission.problem, 4096) + "\n", encoding="utf-8")
        return Outcome(staged, NOT_GRADED, None, submission.problem)
    digest = submission_hash(staged, labs)
    sidecar, report = home / "submission.sha256", home / "report.json"
    if report.exists() and sidecar.exists() and sidecar.read_text().strip() == digest:
        return Outcome(staged, RESUMED, json.loads(report.read_text(encoding="utf-8")))
    return Job(staged, home, digest)


CLASS_WALLS = (confine.SANDBOX,)  # a class shares one machine: only the sandbox keeps classmates apart
SUBMISSION_WALLS = (confine.SANDBOX, confine.USER)  # a Gradescope container holds one submission


def isolation_refused(allow_unsandboxed: bool, enough: tuple[str, ...]) -> str:
    """Why student code may not be graded here ('' if it may), in one line: its workers would get
    a wall weaker than `enough`, and the instructor has not said, with --allow-unsandboxed,
    that a weaker one will do. The wall they get is printed either way."""
    closed = [str(ROOT / name) for name in confine.CLOSED_FOLDERS]
    try:
        isolation = confine.choose(closed)
    except confine.Unavailable as error:
        return str(error)
    if isolation in enough or allow_unsandboxed:
        print(f"isolation: {isolation}", file=sys.stderr)
        return ""
    return (f"no {' or '.join(enough)} layer for student code here ({why_weaker(closed, enough)}); the workers "
            f"would run as {isolation!r} (docs/instructors.md, section 5). Install bubblewrap, or pass "
            f"--allow-unsandboxed to grade behind the weaker wall")


def why_weaker(closed: list[str], enough: tuple[str, ...]) -> str:
    """Why each wall of `enough` cannot be had here, for the refusal's message."""
    asked = os.environ.get("ACADEMY_ISOLATION", "").strip()
    if asked:
        return f"ACADEMY_ISOLATION={asked} asks for less"
    reasons = [f"no sandbox: {confine.why_not_sandboxed()}"]
    if confine.USER in enough:
        reasons.append(f"no separate user: {confine.user_can_run(closed)}")
    return "; ".join(reasons)


def grade_class(args) -> int:
    """Grade every student, then write results, similarity and the gradebook."""
    refused = isolation_refused(args.allow_unsandboxed, CLASS_WALLS)
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
        settings = Settings(grading_tests(args.labs), args.jobs, args.timeout,
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
        print(safe_text(f"not graded: {outcome.staged.student}: {outcome.reason}", 4096), file=sys.stderr)
    print(f"{len(outcomes) - len(missed)} of {len(outcomes)} students graded: "
          f"{out / 'gradebook.csv'}", file=sys.stderr)
    return 1 if missed else 0


# ---- one submission, for Gradescope ------------------------------------------------------


def student_from_metadata(metadata: Path | None) -> str:
    """The submitter's id from Gradescope's submission_metadata.json: emails, or names, each
    normalised as a class's ids are.

    A group submission joins its members with "+". Without metadata: "submission".
    """
    if metadata is None or not metadata.exists():
        return "submission"
    users = json.loads(metadata.read_text(encoding="utf-8")).get("users") or []
    names = [student_id(str(user.get("email") or user.get("name") or user.get("id"))) for user in users]
    return "+".join(filter(None, names)) or "submission"


def grade_one(args) -> int:
    """Grade one submission folder as grade_class grades a student; write results.json.

    Without the sandbox or the separate user, and without --allow-unsandboxed, nothing is
    graded: results.json gives 0 and the reason, which the instructor sees on the submission.
    """
    student = student_id(args.student) if args.student else student_from_metadata(args.metadata)
    refused = isolation_refused(args.allow_unsandboxed, SUBMISSION_WALLS)
    if refused:
        print(refused, file=sys.stderr)
        outcome = Outcome(Staged(student, args.gradescope_one), NOT_GRADED, None, refused)
    else:
        outcome = graded_alone(student, args)
    args.results.parent.mkdir(parents=True, exist_ok=True)
    write_json(args.results, gradescope_results(outcome, args.hidden_visibility))
    return 2 if refused else 0 if outcome.report else 1


def graded_alone(student: str, args) -> Outcome:
    """One submission through the grader, in a folder of its own; what it printed goes to stdout,
    which Gradescope shows the instructor alone. Every process it started is dead on return."""
    become_subreaper()
    with tempfile.TemporaryDirectory() as work:
        home = Path(work)
        staged = stage(Submission(student, args.gradescope_one), home / "labs", args.labs)
        job = Job(staged, home, submission_hash(staged, args.labs))
        [outcome] = run_graders([job], Settings(grading_tests(args.labs), 1, args.timeout), Progress(1))
        print((home / "grader.log").read_text(errors="replace")[-20_000:])
    return outcome


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
                        help="grade even behind a weaker wall than the sandbox (or, with --gradescope-one, the "
                             "separate user) (docs/instructors.md, section 5)")
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
        print(safe_text(f"{args.submissions}: {error}", 4096), file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: the running graders were stopped; "
              "the same command carries on where this one stopped", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
