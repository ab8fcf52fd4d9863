"""The red team: students who attack the grader, graded by grade_class, and what must hold for the whole class.

tests/redteam/attacks.py makes the students. Each attacker hands in the course's stubs with attack code
after them, so any point one earns, its attack won. grade_class grades two classes, each run in a fresh
process so that the peak memory of its waited-for descendants (graders and workers) can be read:

- the class: two students hand in the reference, one graded beside a saboteur, the other after it, on
  every lab;
- the attacks: one student per attack, on rag4 and rag10 only. An attack needs no more, and a student
  graded on all seven labs costs some 20 s even with six of them missing.

For both runs: every byte of what grade_class writes and prints is safe to print (no control or format
character, every line bounded), whatever the escape printer sent. The pytest form is tried on the escape
printer too, as an instructor runs it and with every traceback shown.

For both runs: every attacked lab earns 0; the honest students keep every point and their files; no process
a lab started outlives grade_class; the gradebook and the reports are the same 10 s later; no literal of a
hidden test reaches what a student sees; grading stays under 1 GB; every report names the sandbox; and no lab
reaches the host (the harness's loopback listener, files left behind, what the labs say they reached).
Today's grader, with no sandbox, fails most of these, and the messages say which attack did what.

    python -m pytest -m heavy tests/test_redteam.py
"""

import csv
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import pytest
from points import POINTS, lab_points
from redteam.attacks import (
    ATTACKS, HONEST, SABOTEUR, SOLUTIONS, cold_boards, honest_files, lab_file, lab_source, link_zip, write_class,
)

ROOT = Path(__file__).resolve().parent.parent
GRADE_CLASS = ROOT / "tools" / "grading" / "grade_class.py"
SEED = (ROOT / "tests" / "grading" / "hidden" / "seed.txt").read_text(encoding="utf-8").strip()
MEMORY_LIMIT_MB = 1024  # what the grading of a class may take, its biggest process
SETTLE = 10.0  # seconds after grade_class returns that its results must stay as they were
GRACE = 5.0  # seconds after it returns for the processes it stopped to be gone
REACHED = re.compile(r"redteam-reached: ([^;]*)")  # what a lab says it reached, in its failure messages
UNSAFE = ("Cc", "Cf")  # Unicode's control and format characters: a terminal acts on some, bidi reorders a line
LINE_LIMIT = 5000  # characters of any line a teacher or a student reads (a reason is 300; a row's line 600)
FORGED_GRADE = re.compile(r"\s*rag4\s+10\.00 / 10")  # the escape printer's forged line of the grades table

# Strings of the hidden tests that no public file has (test_the_hidden_literals_are_the_hidden_tests_own):
# their parameters' ids and input texts. A student must never see one, nor the hidden tests' seed.
HIDDEN_LITERALS = (
    "CRLF and no-break space", "overlap of size - 1", "bool budget", "float overlap", "negative budget",
    "lead and trail", "The quick brown fox jumps over the lazy dog", "Ünïcödé",
    "Backups run nightly at two", "Restores need the key; keep it offline", "Rotate the key once a year",
    "exactly full", "a span over budget", "Hidden page", "a hash line in code", "not a closing fence for tildes",
    "three inside five", "Intro paragraph before any heading", "Ops manual", "Handbook of operations",
    "tier gold; zone eu", "Certificates expire after ninety days", "Satellites report heartbeats to servers",
    "wide text here", "Keys rotate yearly", "Ports: 7400, 7401", "Field guide", "Restore › keys", "Keys rotate!",
)
PUBLIC_FILES = ("tests/grading/test_*.py", "tests/*.py", "labs/*.py", "solutions/*.py", "tools/grading/*.py",
                "academy_llm.py", "labkit/*.py", "labkit/lessons/*.py", "docs/*.md", "README.md")

pytestmark = [
    pytest.mark.heavy,
    pytest.mark.sandbox,
    pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads processes from Linux's /proc"),
    pytest.mark.timeout(900),
]


class Listener:
    """A TCP server on this machine's loopback that no lab may reach; it keeps what each caller said."""

    def __init__(self):
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.heard: list[str] = []
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self) -> None:
        while True:
            try:
                line, _ = self.server.accept()
            except OSError:  # closed
                return
            with line:
                line.settimeout(2)
                try:
                    self.heard.append(line.recv(200).decode(errors="replace").strip())
                except OSError:
                    self.heard.append("(a connection that said nothing)")


@dataclass
class Run:
    """One run of grade_class on one class folder, and what was seen around it."""

    name: str
    folder: Path  # the submissions
    out: Path
    token: str  # in every attack lab's file names and survivors' argv
    attacks: tuple
    labs: tuple = ()  # --labs; none: every lab
    status: int | None = None
    stderr: str = ""
    peak_mb: float = 0.0
    returned: float = 0.0  # when grade_class returned (time.monotonic)
    at_return: dict = field(default_factory=dict)  # results file -> its bytes, as grade_class returned
    settled: dict = field(default_factory=dict)  # the same, SETTLE seconds or more later
    survivors: list = field(default_factory=list)  # "pid: command line", GRACE seconds after the return

    def reports(self) -> dict:
        """{student: report.json}, as they stand after SETTLE."""
        return {path.parent.name: json.loads(data) for path, data in self.settled.items()
                if path.name == "report.json"}

    def gradebook(self) -> dict:
        data = self.settled.get(self.out / "gradebook.csv", b"")
        return {row["student"]: row for row in csv.DictReader(data.decode().splitlines())}


def results_files(out: Path) -> dict:
    """Every file of the results a teacher or a student reads, and its bytes."""
    paths = [out / "gradebook.csv", *out.glob("students/*/report.json"), *out.glob("students/*/results.json")]
    return {path: path.read_bytes() for path in paths if path.is_file()}


def processes_naming(needles) -> list[str]:
    """'pid: command line' of every live process whose command line holds one of `needles`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            command = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            zombie = "\nState:\tZ" in (entry / "status").read_text()
        except OSError:
            continue
        if not zombie and any(needle in command for needle in needles):
            found.append(f"{entry.name}: {command[:200]}")
    return found


# The run, in a process of its own: its children's peak resident size is the biggest grader's or worker's.
MEASURED = ("import json, resource, subprocess, sys; status = subprocess.call(sys.argv[2:]); "
            "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss; "
            "open(sys.argv[1], 'w').write(json.dumps({'status': status, 'peak_kb': peak}))")


class Graded(NamedTuple):
    """How a run of grade_class ended."""

    status: int | None  # its exit status; None if it could not be measured
    peak_mb: float  # the peak resident size of its waited-for descendants
    stderr: str


def grade_class(folder: Path, out: Path, *options: str) -> Graded:
    """grade_class.py FOLDER --out OUT -j 2 OPTIONS, as an instructor runs it, in a process of its own."""
    measured = out.with_suffix(".json")
    command = [sys.executable, "-c", MEASURED, str(measured), sys.executable, str(GRADE_CLASS), str(folder),
               "--out", str(out), "-j", "2", *options]
    # The hidden tests' seed is set as an instructor sets it; the course's own folder stands in for its
    # `pip install -e .` (grade_class imports labkit), so this checkout is what is graded.
    env = dict(os.environ, ACADEMY_GRADING_SEED=SEED,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    outcome = json.loads(measured.read_text()) if measured.is_file() else {"status": None, "peak_kb": 0}
    return Graded(outcome["status"], outcome["peak_kb"] / 1024, done.stderr)


def grade(run: Run) -> None:
    """Run grade_class on the run's class; keep its results as it returns, and what still runs GRACE s later."""
    run.status, run.peak_mb, run.stderr = grade_class(
        run.folder, run.out, *(["--labs", ",".join(run.labs)] if run.labs else []))
    run.returned = time.monotonic()
    run.at_return = results_files(run.out)
    needles = (run.token, str(run.folder), str(run.out))
    while (survivors := processes_naming(needles)) and time.monotonic() < run.returned + GRACE:
        time.sleep(0.2)
    run.survivors = survivors


def settle(run: Run) -> None:
    """The run's results again, at least SETTLE seconds after grade_class returned."""
    time.sleep(max(0.0, run.returned + SETTLE - time.monotonic()))
    run.settled = results_files(run.out)


def clean_up(runs) -> None:
    """Kill what the runs' labs left running (by pid) and remove the files they left where tmp_path is not."""
    for run in runs:
        for line in processes_naming((run.token, str(run.folder), str(run.out))):
            try:
                os.kill(int(line.split(":")[0]), signal.SIGKILL)
            except ProcessLookupError:
                pass
        for path in left_on_the_host(run):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)


def left_on_the_host(run: Run) -> list[Path]:
    """Files named with the run's token where the labs' scratch folders are not: the temporary folder,
    shared memory, the home folder, and the class's own folders."""
    places = [Path("/tmp"), Path("/dev/shm"), Path.home()]
    found = [path for place in places if place.is_dir() for path in place.iterdir() if run.token in path.name]
    return found + [path for folder in (run.out, run.folder) for path in folder.rglob(f"*{run.token}*")]


@pytest.fixture(scope="module")
def listener():
    heard = Listener()
    yield heard
    heard.server.close()


@pytest.fixture(scope="module")
def runs(tmp_path_factory, listener):
    """The class and the attacks, graded one after the other; what their labs leave is cleaned up after."""
    leftover = tmp_path_factory.mktemp("leftovers") / "ref"  # as an earlier test run leaves the reference in /tmp
    shutil.copytree(SOLUTIONS, leftover)
    made = []
    for name, attacks, honest, labs in (("class", (SABOTEUR,), HONEST, ()),
                                        ("attacks", ATTACKS, (), ("rag4", "rag10"))):
        base = tmp_path_factory.mktemp(name)
        run = Run(name, base / "submissions", base / "out", f"{name}{secrets.token_hex(4)}", attacks, labs)
        write_class(run.folder, attacks, honest, {"token": run.token, "port": listener.port, "boards": cold_boards()})
        made.append(run)
    try:
        for run in made:  # the class settles while the attacks are graded
            grade(run)
            assert run.status in (0, 1) and run.at_return, (
                f"grade_class on {run.name} ended with status {run.status}:\n{run.stderr[-3000:]}")
        for run in made:
            settle(run)
        yield {run.name: run for run in made}
    finally:
        clean_up(made)


def test_the_hidden_literals_are_the_hidden_tests_own():
    """A literal found in a student's results comes from a hidden test, not from anything public."""
    hidden = "".join(path.read_text(encoding="utf-8") for path in (ROOT / "tests" / "grading" / "hidden").glob("*.py"))
    checks = {Path(__file__).name, "test_gradescope.py"}  # the checks that look for hidden literals name them
    public = "".join(path.read_text(encoding="utf-8") for pattern in PUBLIC_FILES for path in ROOT.glob(pattern)
                     if path.name not in checks)
    assert [literal for literal in HIDDEN_LITERALS if literal not in hidden] == []
    assert [literal for literal in HIDDEN_LITERALS if literal in public] == []
    assert SEED not in public


def test_every_cheat_earns_nothing(runs):
    won = []
    for run in runs.values():
        rows, reports = run.gradebook(), run.reports()
        for attack in (attack for attack in run.attacks if not attack.accomplice):
            for lab, _ in attack.labs:
                book = float(rows.get(attack.student, {}).get(lab) or 0)
                report = reports.get(attack.student, {}).get("labs", {}).get(lab, {}).get("earned", 0)
                if book or report:
                    won.append(f"{attack.student} ({attack.what}): {lab} earned {book} in the gradebook, "
                               f"{report} in its report")
    assert not won, "\n".join(won)


def test_the_honest_students_keep_every_point_and_their_files(runs):
    run = runs["class"]
    rows, reports = run.gradebook(), run.reports()
    problems = []
    for student in HONEST:
        row, report = rows.get(student, {}), reports.get(student, {})
        reference = {path.name: path.read_bytes() for path in honest_files(student)}
        total, possible = sum(lab_points(name.split("-")[0]) for name in reference), sum(map(lab_points, POINTS))
        if row.get("total") != str(total) or row.get("possible") != str(possible) or report.get("earned") != total:
            labs = {lab: points for lab, points in row.items() if lab.startswith("rag")}
            problems.append(f"{student}: {row.get('total')} / {row.get('possible')} in the gradebook {labs}, "
                            f"{report.get('earned')} in its report")
        for folder in (run.folder / student, run.out / "students" / student / "labs"):
            changed = [name for name, data in reference.items()
                       if not (folder / name).is_file() or (folder / name).read_bytes() != data]
            if changed:
                problems.append(f"{student}: {changed} in {folder} are not the files handed in")
    assert not problems, "\n".join(problems)


def test_nothing_a_lab_started_outlives_grade_class(runs):
    left = [f"{run.name}: {line}" for run in runs.values() for line in run.survivors]
    assert not left, f"alive {GRACE:g} s after grade_class returned:\n" + "\n".join(left)


def test_the_results_are_the_same_after_grade_class_returns(runs):
    changed = []
    for run in runs.values():
        for path in sorted(set(run.at_return) | set(run.settled)):
            if run.at_return.get(path) != run.settled.get(path):
                changed.append(f"{run.name}: {path.relative_to(run.out)}")
    assert not changed, f"changed {SETTLE:g} s or more after grade_class returned:\n" + "\n".join(changed)


def shown_to_the_student(results: dict):
    """(where, text) of everything a student sees of results.json: its top text, every row not hidden."""
    yield "output", results.get("output", "")
    for row in results.get("tests", []):
        if row.get("visibility") != "hidden":
            yield f"row {row.get('name')!r}", f"{row.get('name', '')}\n{row.get('output', '')}"


def test_no_hidden_literal_reaches_a_student(runs):
    """Neither through a hidden test's own row (its name, its parameters) nor through a public failure."""
    leaks, named = {}, {}
    for run in runs.values():
        for path, data in run.settled.items():
            if path.name != "results.json":
                continue
            student = path.parent.name
            for where, text in shown_to_the_student(json.loads(data)):
                for line in text.splitlines():
                    found = [literal for literal in (*HIDDEN_LITERALS, SEED) if literal in line]
                    if found and "_hidden" in line.split(":")[0]:
                        named.setdefault(student, set()).update(found)
                    elif found:
                        leaks.setdefault(student, []).append(f"{student}, {where}: {found} in {line[:200]!r}")
    said = [line for lines in leaks.values()
            for line in lines[:3] + ([f"... and {len(lines) - 3} more"] if len(lines) > 3 else [])]
    said += [f"{student}: hidden tests' names show {sorted(found)}" for student, found in sorted(named.items())]
    assert not said, "shown to students:\n" + "\n".join(said)


def test_no_lab_s_own_words_reach_a_student(runs):
    """A public test's message is the judge's (tools/grading/judged.py): what an attack raised or returned,
    its marks included ('redteam-leak: ...', the page-cache reader's hidden inputs), is in no row a student sees."""
    shown = []
    for run in runs.values():
        for path, data in run.settled.items():
            if path.name == "results.json":
                shown += [f"{path.parent.name}, {where}: {line[:200]!r}"
                          for where, text in shown_to_the_student(json.loads(data))
                          for line in text.splitlines() if "redteam-" in line]
    assert not shown, "shown to students:\n" + "\n".join(shown[:10])


def test_the_relay_and_the_page_cache_reader_earn_nothing_and_are_heard(runs):
    """The page-cache attacks earn 0 (test_every_cheat_earns_nothing), and none of them heard anything: each
    says why in its own words, which only the instructor's report keeps."""
    reports = runs["attacks"].reports()
    reader = [test.get("lab_said", "") for test in reports["page-cache-reader"]["labs"]["rag4"]["tests"]]
    assert not [words for words in reader if words.startswith("redteam-leak: ") and words.strip(" |") !=
                "redteam-leak:"], reader[:5]
    receiver = reports["relay-b-receiver"]["labs"]["rag4"]["tests"]
    assert not [test["name"] for test in receiver if test["outcome"] == "passed"], receiver[:5]
    silencer = reports["hook-silencer"]["labs"]["rag4"]
    assert silencer["earned"] == 0 and any(flag.startswith("refused: os.kill") for flag in silencer["flags"]), silencer


def test_the_grading_stays_under_a_gigabyte(runs):
    peaks = {run.name: round(run.peak_mb) for run in runs.values()}
    assert all(peak < MEMORY_LIMIT_MB for peak in peaks.values()), f"peak resident MB of a grader or worker: {peaks}"


def test_every_report_names_the_sandbox(runs):
    named = {f"{run.name}/{student}": report.get("isolation")
             for run in runs.values() for student, report in run.reports().items()}
    assert named and all(isolation == "sandbox" for isolation in named.values()), named


def test_no_lab_reaches_the_host(runs, listener):
    reached = []
    for run in runs.values():
        reached += [f"{run.name}: left {path}" for path in left_on_the_host(run)]
        for student, report in run.reports().items():
            said = {note for lab in report["labs"].values() for test in lab["tests"]
                    for note in REACHED.findall(test["message"] + " " + test.get("lab_said", ""))}
            reached += [f"{run.name}: {student} reached {note}" for note in sorted(said)]
    reached += [f"the loopback listener heard {line!r}" for line in listener.heard]
    assert not reached, "\n".join(reached)


def unsafe_to_print(where: str, text: str, line_limit: int | None = LINE_LIMIT) -> list[str]:
    """What of `text` is not safe to print: its control and format characters but the newline, its lines
    over `line_limit`; each said in a line that names `where`."""
    unsafe = sorted({repr(c) for c in text if c != "\n" and unicodedata.category(c) in UNSAFE})
    long = [len(line) for line in text.splitlines() if line_limit and len(line) > line_limit]
    return ([f"{where}: {', '.join(unsafe[:12])}"] if unsafe else []) + (
        [f"{where}: {len(long)} lines over {LINE_LIMIT} characters, up to {max(long)}"] if long else [])


def texts_of(path: Path) -> list[str]:
    """What a reader reads of a results file: a JSON file's texts, a CSV file's cells, else its text."""
    data = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".json":
        return texts_of_json(data)[:-1]  # its texts; the file itself holds each on one line
    if path.suffix == ".csv":
        return [cell for row in csv.reader(data.splitlines()) for cell in row]
    return [data]


def test_every_byte_a_person_reads_is_safe_to_print(runs):
    """The gradebook's cells, each report's and Gradescope results' texts, grader.log, not-graded.txt,
    similarity.md and what grade_class printed hold no control or format character, and no long line;
    and the escape printer's words did reach them, as text."""
    problems, shown = [], []
    for run in runs.values():
        problems += unsafe_to_print(f"{run.name}: grade_class's output", run.stderr)
        files = [run.out / "gradebook.csv", run.out / "similarity.md",
                 *(path for name in ("report.json", "results.json", "grader.log", "not-graded.txt")
                   for path in run.out.glob(f"students/*/{name}"))]
        for path in files:
            texts = texts_of(path) if path.is_file() else []
            where = str(path.relative_to(run.out))
            problems += [line for text in texts for line in unsafe_to_print(where, text)]
            if path.suffix == ".json":
                problems += unsafe_to_print(where, path.read_text(encoding="utf-8"), line_limit=None)
            shown += [path.name for text in texts if "escape-printer" in str(path) and "\\x1b]52;c;" in text]
    assert not problems, "not safe to print:\n" + "\n".join(problems[:40])
    assert {"report.json", "results.json", "grader.log"} <= set(shown), f"the escape printer's words reached {shown}"


# ---- the pytest form, on the escape printer ----------------------------------------------------------------


@pytest.fixture(scope="module")
def escape_printed(tmp_path_factory):
    """pytest tests/grading/test_rag4.py on the escape printer's rag4, as an instructor runs it ("quiet") and
    with every traceback and capture shown ("verbose"), side by side: {case: what it printed}."""
    base = tmp_path_factory.mktemp("escape-printer")
    (base / "labs").mkdir()
    settings = {"token": f"escape{secrets.token_hex(4)}", "port": 9}
    (base / "labs" / lab_file("rag4")).write_text(lab_source("rag4", "escape_printer", settings), encoding="utf-8")
    options = {"quiet": ["-q"], "verbose": ["-v", "--tb=long", "-rA", "--showlocals"]}
    env = dict(os.environ, PY_COLORS="0")  # the colours pytest adds on a terminal are its own, not the lab's
    started = {case: subprocess.Popen(
        [sys.executable, "-m", "pytest", *extra, "-p", "no:cacheprovider", "tests/grading/test_rag4.py",
         "--lab-dir", str(base / "labs"), "--grade-json", str(base / f"{case}.json")],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT) for case, extra in options.items()}
    printed = {case: process.communicate(timeout=600)[0].decode("utf-8", errors="replace")
               for case, process in started.items()}
    return {case: (printed[case], (base / f"{case}.json").read_text(encoding="utf-8")) for case in started}


@pytest.mark.parametrize("case", ["quiet", "verbose"])
def test_the_pytest_form_prints_an_escape_printers_words_as_text(escape_printed, case):
    printed, report = escape_printed[case]
    problems = unsafe_to_print("what the pytest form printed", printed)
    problems += [line for text in texts_of_json(report)[:-1] for line in unsafe_to_print("--grade-json", text)]
    problems += unsafe_to_print("--grade-json's file", report, line_limit=None)
    forged = [line for line in printed.splitlines() if FORGED_GRADE.match(line)]
    problems += [f"a forged grade line: {line[:200]!r}" for line in forged]
    assert not problems, "\n".join(problems)
    assert re.search(r"^\s*rag4\s+0\.00 / 10", printed, re.M) and "\\x1b]52;c;" in printed, printed[-3000:]
    assert len(printed) < 2_000_000, f"{len(printed)} characters printed"


def texts_of_json(data: str) -> list[str]:
    """Every text of a JSON document, then the document itself."""
    found, stack = [], [json.loads(data)]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            found.append(value)
        elif isinstance(value, dict):
            stack += [*value.keys(), *value.values()]
        elif isinstance(value, list):
            stack += value
    return found + [data]


# ---- the page-cache attacks in the other grading paths: the pytest form and Gradescope's ------------------------

PAGE_CACHE_ATTACKS = ("page-cache-reader", "relay-a-sender", "relay-b-receiver")


@pytest.fixture(scope="module")
def other_paths(tmp_path_factory):
    """The page-cache reader and the relay pair, on fresh cold regions, graded on rag4 in the pytest form and by
    Gradescope's grade_class --gradescope-one, all at once: {(path, student): (what a student sees, points)}."""
    base = tmp_path_factory.mktemp("paths")
    attacks = [attack for attack in ATTACKS if attack.student in PAGE_CACHE_ATTACKS]
    write_class(base / "class", attacks, (), {"token": f"paths{secrets.token_hex(4)}", "port": 9,
                                              "boards": cold_boards()})
    env = dict(os.environ, ACADEMY_GRADING_SEED=SEED,
               PYTHONPATH=os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    started = {}
    for attack in attacks:
        folder = base / "class" / attack.student
        started["pytest", attack.student] = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading/test_rag4.py",
             "tests/grading/hidden/test_rag4_hidden.py", "--lab-dir", str(folder),
             "--grade-json", str(base / f"{attack.student}.json")],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        started["gradescope", attack.student] = subprocess.Popen(
            [sys.executable, str(GRADE_CLASS), "--gradescope-one", str(folder), "--labs", "rag4", "--results",
             str(base / f"{attack.student}.results.json"), "--student", attack.student],
            cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for process in started.values():
        process.wait(timeout=900)
    found = {}
    for (path, student) in started:
        if path == "pytest":
            report = json.loads((base / f"{student}.json").read_text())
            tests = report["labs"]["rag4"]["tests"]
            seen = "\n".join(test["message"] for test in tests if not test["hidden"])
            found[path, student] = (seen, report["labs"]["rag4"]["earned"])
        else:
            results = json.loads((base / f"{student}.results.json").read_text())
            seen = "\n".join(text for _, text in shown_to_the_student(results))
            found[path, student] = (seen, results["score"])
    return found


def test_the_page_cache_attacks_earn_nothing_and_show_nothing_in_every_path(other_paths):
    problems = []
    for (path, student), (seen, points) in other_paths.items():
        if student != "relay-a-sender" and points:
            problems.append(f"{path}: {student} earned {points}")
        shown = [literal for literal in (*HIDDEN_LITERALS, SEED, "redteam-") if literal in seen]
        if shown:
            problems.append(f"{path}: {student} was shown {shown}")
    assert not problems, "\n".join(problems)


# ---- a linked lab folder, graded by pytest itself ----------------------------------------------------------


@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """pytest tests/grading/test_rag4.py on a folder whose rag4 is a link to the reference ("file"), and on a
    link to solutions/ itself ("folder"), graded side by side: {case: report}."""
    base = tmp_path_factory.mktemp("linked")
    (base / "file").mkdir()
    (base / "file" / "rag4-chunking.py").symlink_to(SOLUTIONS / "rag4-chunking.py")
    (base / "folder").symlink_to(SOLUTIONS, target_is_directory=True)
    started = {case: subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading/test_rag4.py",
         "--lab-dir", str(base / case), "--grade-json", str(base / f"{case}.json")],
        cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) for case in ("file", "folder")}
    for process in started.values():
        process.wait(timeout=600)
    return {case: json.loads((base / f"{case}.json").read_text()) for case in started}


@pytest.mark.parametrize("case", ["file", "folder"])
def test_a_linked_lab_is_graded_as_missing_and_flagged(linked, case):
    lab = linked[case]["labs"]["rag4"]
    said = " ".join(lab["warnings"] + lab["flags"])
    assert lab["earned"] == 0 and "link" in said, f"{lab['earned']} points; warnings and flags: {said!r}"


def test_a_zip_of_links_only_is_a_student_with_no_labs(tmp_path):
    """Its links are skipped, so nothing is unpacked: that student has no labs, and the rest of the class is graded."""
    (tmp_path / "class" / "honest").mkdir(parents=True)
    shutil.copy(SOLUTIONS / "rag4-chunking.py", tmp_path / "class" / "honest")
    link_zip(tmp_path / "class", "links-only", notes=False)
    graded = grade_class(tmp_path / "class", tmp_path / "out", "--labs", "rag4")
    book = tmp_path / "out" / "gradebook.csv"
    assert book.is_file(), f"grade_class ended with status {graded.status}:\n{graded.stderr[-2000:]}"
    rows = {row["student"]: row for row in csv.DictReader(book.read_text().splitlines())}
    assert float(rows["honest"]["rag4"]) == 10 and float(rows["links-only"].get("rag4") or 0) == 0, rows
