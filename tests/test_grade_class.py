"""tools/grading/grade_class.py and its parts (staging, gradebook, similarity): a class of three graded end to end.

The class: "stubs" hands in the unfinished notebooks (whose rag4 also tries
to read rag4only's work), "rag4only" one finished lab in a subfolder, and
"copy" the reference with its variables renamed and its layout redone, as a
zip: correct code, which earns every point and is flagged as the reference's.
Only rag4 and rag8 are graded, to keep the run short; the reference itself is
graded in the class form once, by the red team's class (tests/test_redteam.py,
its honest students).
"""

import ast
import csv
import importlib
import json
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools" / "grading"  # the grader's machinery
LABS = "rag4,rag8"

pytestmark = pytest.mark.timeout(300)  # the class is graded by fresh pytest runs


def tool(name: str):
    """A module of tools/grading/; they import each other by name, so it goes on the path."""
    if str(TOOLS) not in sys.path:
        sys.path.insert(0, str(TOOLS))
    return importlib.import_module(name)


def disguised(source: str) -> str:
    """The source with every variable a function assigns renamed, and no comments or layout.

    Arguments keep their names, since callers may pass them by keyword.
    """
    tree = ast.parse(source)
    for function in ast.walk(tree):
        if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        nodes = list(ast.walk(function))
        declared = {n for s in nodes if isinstance(s, (ast.Global, ast.Nonlocal)) for n in s.names}
        assigned = {n.id for n in nodes
                    if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)}
        arguments = {n.arg for n in nodes if isinstance(n, ast.arg)}
        for node in nodes:
            if isinstance(node, ast.Name) and node.id in assigned - declared - arguments:
                node.id = f"my_{node.id}"
    return ast.unparse(tree)


PEEK = """import os
try:  # the staged copy of rag4only's work, beside this student's own folder
    open(os.path.join(os.path.dirname(__file__), "..", "..", "rag4only", "labs", "rag4-chunking.py"))
except OSError:
    pass
"""


def peek_at_a_classmate(notebook: Path) -> None:
    """Add a first code cell that reads another student's lab, as a cheat might."""
    content = json.loads(notebook.read_text(encoding="utf-8"))
    cell = {"cell_type": "code", "execution_count": None, "id": "peek", "metadata": {},
            "outputs": [], "source": PEEK.splitlines(keepends=True)}
    content["cells"].insert(0, cell)
    notebook.write_text(json.dumps(content), encoding="utf-8")


def make_class(folder: Path) -> Path:
    """The three students' submissions, as a teacher might collect them."""
    shutil.copytree(ROOT / "notebooks" / "labs", folder / "stubs")
    peek_at_a_classmate(folder / "stubs" / "rag4-chunking.ipynb")
    (folder / "rag4only" / "labs").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "rag4-chunking.py", folder / "rag4only" / "labs")
    with zipfile.ZipFile(folder / "copy.zip", "w") as archive:
        for path in sorted((ROOT / "solutions").glob("rag*-*.py")):
            archive.writestr(f"my labs/{path.name}", disguised(path.read_text(encoding="utf-8")))
    return folder


def grade(submissions: Path, out: Path, *options: str) -> tuple:
    """Run grade_class on a class; (the finished process, its seconds)."""
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, str(TOOLS / "grade_class.py"), str(submissions), "--out", str(out),
         "-j", "2", "--labs", LABS, *options],
        cwd=ROOT, capture_output=True, text=True, timeout=280,
    )
    return done, time.monotonic() - started


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """The class graded once, then graded again into the same folder."""
    submissions = make_class(tmp_path_factory.mktemp("class"))
    out = tmp_path_factory.mktemp("grades")
    first, _ = grade(submissions, out)
    assert first.returncode == 0, first.stderr[-3000:]
    mtimes = {path: path.stat().st_mtime_ns for path in out.glob("students/*/report.json")}
    again, seconds = grade(submissions, out)
    return out, again, seconds, mtimes


def gradebook_rows(out: Path) -> dict[str, dict]:
    with open(out / "gradebook.csv", newline="", encoding="utf-8") as rows:
        return {row["student"]: row for row in csv.DictReader(rows)}


def report(out: Path, student: str) -> dict:
    return json.loads((out / "students" / student / "report.json").read_text(encoding="utf-8"))


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_gradebook_has_a_row_per_student_matching_their_report(graded):
    out, *_ = graded
    rows = gradebook_rows(out)
    assert sorted(rows) == ["copy", "rag4only", "stubs"]
    for student, row in rows.items():
        graded_report = report(out, student)
        assert graded_report["student"] == student
        assert float(row["total"]) == pytest.approx(graded_report["earned"])
        assert float(row["possible"]) == pytest.approx(graded_report["possible"])
        for lab in ("rag4", "rag8"):
            assert float(row[lab]) == pytest.approx(graded_report["labs"][lab]["earned"])


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_points_follow_the_work(graded):
    out, *_ = graded
    rows = gradebook_rows(out)
    assert float(rows["copy"]["total"]) == float(rows["copy"]["possible"]) > 0
    assert float(rows["stubs"]["total"]) == 0
    assert float(rows["rag4only"]["rag4"]) > 0 and float(rows["rag4only"]["rag8"]) == 0


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_results_are_in_gradescopes_shape(graded):
    out, *_ = graded
    for student in gradebook_rows(out):
        results = json.loads((out / "students" / student / "results.json").read_text())
        assert isinstance(results["score"], (int, float)) and isinstance(results["output"], str)
        assert results["tests"], student
        for row in results["tests"]:
            assert isinstance(row["name"], str) and isinstance(row["output"], str)
            assert 0 <= row["score"] <= row["max_score"]
        assert sum(row["score"] for row in results["tests"]) == pytest.approx(results["score"])
        assert results["score"] == pytest.approx(report(out, student)["earned"])


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_the_disguised_copy_is_flagged(graded):
    out, *_ = graded
    flags = gradebook_rows(out)["copy"]["flags"].split(";")
    assert "same-as-reference" in flags
    assert "| copy |" in (out / "similarity.md").read_text()


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_reading_a_classmates_work_is_refused_and_flagged(graded):
    out, *_ = graded
    assert gradebook_rows(out)["stubs"]["flags"] == "refused-access"
    assert report(out, "stubs")["labs"]["rag4"]["flags"]


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_a_rerun_keeps_every_report(graded):
    out, again, seconds, mtimes = graded
    assert again.returncode == 0, again.stderr[-3000:]
    assert "3 of 3 students already graded" in again.stderr
    assert {path: path.stat().st_mtime_ns for path in out.glob("students/*/report.json")} == mtimes
    assert seconds < 30


@pytest.mark.heavy  # grades a class: the deeper tier
@pytest.mark.sandbox  # grade_class grades behind the sandbox alone
def test_a_grader_past_its_time_is_stopped_and_the_student_not_graded(tmp_path):
    (tmp_path / "class" / "slow").mkdir(parents=True)
    shutil.copy(ROOT / "solutions" / "rag4-chunking.py", tmp_path / "class" / "slow")
    done, seconds = grade(tmp_path / "class", tmp_path / "out", "--timeout", "0.5")
    assert done.returncode == 1 and seconds < 30
    reason = (tmp_path / "out" / "students" / "slow" / "not-graded.txt").read_text()
    assert "did not finish within 0.5 s" in reason
    row = gradebook_rows(tmp_path / "out")["slow"]
    assert row["total"] == "" and "not-graded" in row["flags"].split(";")


# ---- submissions and zips --------------------------------------------------------------


def test_a_zip_of_the_class_folder_gives_its_students(tmp_path):
    staging = tool("staging")
    with zipfile.ZipFile(tmp_path / "class.zip", "w") as archive:
        archive.writestr("class/alice/labs/rag4-chunking.py", "x = 1\n")
        archive.writestr("class/bob/rag4-chunking.ipynb", "{}")
    found = staging.submissions_in(tmp_path / "class.zip", tmp_path / "scratch")
    assert [s.student for s in found] == ["alice", "bob"]
    staged = staging.stage(found[0], tmp_path / "staged", ["rag4"])
    assert [path.name for path in staged.files.values()] == ["rag4-chunking.py"]


@pytest.mark.parametrize("member", ["../escape.py", "/etc/escape.py", "a/../../escape.py"])
def test_a_zip_that_writes_outside_its_folder_is_refused(tmp_path, member):
    staging = tool("staging")
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as archive:
        archive.writestr(member, "x = 1\n")
    with pytest.raises(staging.UnsafeArchive):
        staging.safe_extract(tmp_path / "bad.zip", tmp_path / "out" / "inside")
    assert not (tmp_path / "out" / "escape.py").exists() and not (tmp_path / "escape.py").exists()


def test_the_graded_file_is_the_students_own_not_a_copy_of_the_solutions(tmp_path):
    staging = tool("staging")
    for name in ("solutions/rag4-chunking.py", "work/rag4-chunking.ipynb", "rag4-chunking.py"):
        (tmp_path / "alice" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "alice" / name).write_text(name)
    submission = staging.Submission("alice", tmp_path / "alice")
    staged = staging.stage(submission, tmp_path / "staged", ["rag4"])
    assert staged.files["rag4"].read_text() == "rag4-chunking.py"
    assert len(staged.notes) == 2


# ---- Gradescope's rows from a report -----------------------------------------------------


def test_gradescope_rows_add_up_with_or_without_functions():
    gradebook = tool("gradebook")
    tests = [{"name": "t1", "function": "f", "outcome": "passed", "message": ""},
             {"name": "t2", "function": "g", "outcome": "failed", "message": "AssertionError: no"},
             {"name": "t3", "function": None, "outcome": "passed", "message": ""}]
    with_functions = {"earned": 3.0, "possible": 4.0, "tests": tests,
                      "functions": {"f": {"earned": 2.0, "possible": 2.0},
                                    "g": {"earned": 0.0, "possible": 1.0}}}
    rows = gradebook.lab_rows("rag4", with_functions)
    assert [r["name"] for r in rows] == ["rag4 f", "rag4 g", "rag4 (other tests)"]
    assert [r["score"] for r in rows] == [2.0, 0.0, 1.0] and rows[2]["max_score"] == 1.0
    assert rows[1]["output"] == "t2: failed: AssertionError: no"
    without = {"earned": 3.0, "possible": 4.0, "tests": tests}
    assert [(r["name"], r["score"]) for r in gradebook.lab_rows("rag4", without)] == [
        ("rag4", 3.0)]


# ---- similarity on small examples --------------------------------------------------------

SOLUTION = '''
def longest_run(values, limit=3):
    """The longest run of equal neighbours, at most `limit` long."""
    # BEGIN SOLUTION
    # hint: walk the values and count
    best, current = 0, 0
    previous = None
    for value in values:
        current = current + 1 if value == previous else 1
        previous = value
        if current > best:
            best = min(current, limit)
    return best
    # END SOLUTION


def mean(values):
    """The mean, or 0.0 for no values."""
    # BEGIN SOLUTION
    # hint: sum over len
    if not values:
        return 0.0
    return sum(values) / len(values)
    # END SOLUTION
'''

RENAMED = '''
def longest_run(xs, limit=3):
    # my own version, honest
    top,   streak = 0, 0
    last = None
    for x in xs:
        streak = (streak + 1
                  if x == last else 1)
        last = x
        if streak > top: top = min(streak, limit)
    return top
'''

DIFFERENT = '''
def longest_run(values, limit=3):
    runs = [len(list(group)) for _, group in itertools.groupby(values)]
    return min(max(runs, default=0), limit)


def mean(values):
    return statistics.fmean(values) if values else 0.0
'''

STUB = '''
def longest_run(values, limit=3):
    """The longest run of equal neighbours, at most `limit` long."""
    # TODO(lab1): walk the values and count
    raise NotImplementedError("TODO(lab1) longest_run(): walk the values and count")


def mean(values):
    """The mean, or 0.0 for no values."""
    raise NotImplementedError("TODO(lab1) mean(): sum over len")
'''


def work(tmp_path: Path, name: str, source: str):
    similarity = tool("similarity")
    path = tmp_path / name / "lab1-runs.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(source)
    return similarity.lab_work(path, similarity.templates(SOLUTION))


def test_renamed_and_reformatted_code_is_the_same_code(tmp_path):
    similarity = tool("similarity")
    match = similarity.compare("lab1", "a", work(tmp_path, "a", SOLUTION),
                               "b", work(tmp_path, "b", RENAMED))
    assert match.score == 1.0 and match.functions == ("longest_run",)


def test_different_code_scores_low(tmp_path):
    similarity = tool("similarity")
    match = similarity.compare("lab1", "a", work(tmp_path, "a", SOLUTION),
                               "b", work(tmp_path, "b", DIFFERENT))
    assert match.score < 0.3 and not match.flagged


def test_stubs_are_left_out(tmp_path):
    assert work(tmp_path, "stub", STUB).functions == {}
    assert set(work(tmp_path, "solution", SOLUTION).functions) == {"longest_run", "mean"}


GIVEN_AFTER = '''
def chunk_lengths(text, size):
    """The lengths of the pieces of `text`, `size` characters each; the lab gives the last line."""
    # BEGIN SOLUTION
    check_text_and_window(text, size)
    pieces = [text[start:start + size] for start in range(0, len(text), size)]
    # END SOLUTION
    return [len(piece) for piece in TokenIndex(pieces)]
'''


def test_code_the_lab_gives_around_a_region_is_left_out(tmp_path):
    similarity = tool("similarity")
    [given] = similarity.templates(GIVEN_AFTER)
    assert given.after and not given.before  # the function ends with code the lab gives
    path = tmp_path / "lab1-lengths.py"
    path.write_text(GIVEN_AFTER)
    written = similarity.lab_work(path, [given])
    tokens = {token for shingle in written.functions["chunk_lengths"] for token in shingle}
    assert "TokenIndex" not in tokens and "check_text_and_window" in tokens


def test_a_notebook_is_read_as_its_code_cells():
    similarity = tool("similarity")
    [wanted] = similarity.reference_templates(ROOT / "solutions", ["rag4"]).values()
    script = similarity.lab_work(ROOT / "solutions" / "rag4-chunking.py", wanted)
    notebook = similarity.lab_work(ROOT / "notebooks/solutions/rag4-chunking.ipynb", wanted)
    assert notebook.functions == script.functions and len(script.functions) == 2


def test_every_lab_of_a_disguised_copy_matches_the_reference(tmp_path):
    """Renamed variables also in the code a lab gives around a region, on every lab."""
    similarity = tool("similarity")
    files = {}
    for path in sorted((ROOT / "solutions").glob("rag*-*.py")):
        files[path.name.split("-")[0]] = tmp_path / path.name
        (tmp_path / path.name).write_text(disguised(path.read_text(encoding="utf-8")))
    findings = similarity.find_similar({"copy": files}, ROOT / "solutions", sorted(files))
    assert {m.lab: m.score for m in findings.reference} == {lab: 1.0 for lab in files}
    assert all(m.flagged for m in findings.reference)


def test_two_students_alike_but_unlike_the_reference_are_flagged_as_copies(tmp_path):
    similarity = tool("similarity")
    solutions = tmp_path / "solutions"
    solutions.mkdir()
    (solutions / "rag4-chunking.py").write_text(SOLUTION)
    shared = DIFFERENT + "\n\ndef spare(values):\n    return sorted(values)[::-1]\n"
    longer = shared.replace("return min(max(runs, default=0), limit)", "\n".join(
        ["total = 0"] + [f"    total += sum(runs[{i}::7]) * {i}" for i in range(8)]
        + ["    return min(max(runs, default=0), limit, total)"]))
    students = {}
    for name, source in (("ann", longer), ("ben", disguised(longer)), ("cy", SOLUTION)):
        (tmp_path / name).mkdir()
        (tmp_path / name / "rag4-chunking.py").write_text(source)
        students[name] = {"rag4": tmp_path / name / "rag4-chunking.py"}
    findings = similarity.find_similar(students, solutions, ["rag4"])
    flags = findings.flags()
    assert flags["ann"] == ["copy-of:ben"] and flags["ben"] == ["copy-of:ann"]
    assert not any(flag.startswith("copy-of") for flag in flags.get("cy", []))
    assert "| ann, ben |" in similarity.report(findings)
