"""What grade_class writes cannot be turned against its reader, and --gradescope-one grades behind a wall.

A student names their folder; that name becomes a gradebook row, a Markdown table cell and a file
name, so it is normalised (one id however it was typed, nothing invisible in it) and whatever of it
reaches a CSV cell or similarity.md is shown as text. similarity.py reads a student's file
before it parses it, and reads only so much. --gradescope-one refuses the process layer unless told.
"""

import csv
import json
import os
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools" / "grading"

pytestmark = pytest.mark.timeout(300)

if str(TOOLS) not in sys.path:  # the tools import each other by name
    sys.path.insert(0, str(TOOLS))

import gradebook  # noqa: E402
import similarity  # noqa: E402
import staging  # noqa: E402
from supervise import NOT_GRADED, Outcome  # noqa: E402

NFC = unicodedata.normalize("NFC", "José")
NFD = unicodedata.normalize("NFD", "José")


def run_tool(*arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """grade_class.py with `arguments`, as an instructor runs it."""
    return subprocess.run([sys.executable, str(TOOLS / "grade_class.py"), *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=280, env=env)


# ---- the gradebook's cells -----------------------------------------------------------------


@pytest.mark.parametrize("text", ['=HYPERLINK("http://evil.example","click")', "+1", "-1", "@x", "\t=1+1",
                                  "\r=1", "  =1+1", "\u3000=1", "\uff1d1"])
def test_a_cell_that_would_start_a_formula_is_shown_as_text(text):
    assert gradebook.spreadsheet_text(text) == "'" + text


@pytest.mark.parametrize("text", ["alice", NFC, "copy-of:bob;same-as-reference", "42.5", "10", "", "a=b"])
def test_an_ordinary_cell_is_left_as_it_is(text):
    assert gradebook.spreadsheet_text(text) == text


def test_the_gradebook_neutralises_student_ids_and_flags(tmp_path):
    students = ['=HYPERLINK("http://evil.example","x")', "@sum", "bob"]
    outcomes = [Outcome(staging.Staged(name, tmp_path), NOT_GRADED, None, "no files") for name in students]
    flags = {"bob": ["copy-of:-1"], "@sum": ["not-graded"]}
    gradebook.write_gradebook(tmp_path / "gradebook.csv", outcomes, ["rag4"], flags)
    with open(tmp_path / "gradebook.csv", newline="", encoding="utf-8") as rows:
        cells = [cell for row in csv.reader(rows) for cell in row]
    assert all(not cell or cell[0] not in "=+-@\t\r" for cell in cells), cells
    assert "'@sum" in cells and "'" + students[0] in cells


def test_results_replace_a_link_left_in_their_place(tmp_path):
    """A link planted where results.json goes is replaced; what it points at is never written."""
    target = tmp_path / "elsewhere.txt"
    target.write_text("untouched")
    (tmp_path / "results.json").symlink_to(target)
    gradebook.write_json(tmp_path / "results.json", {"score": 0})
    assert target.read_text() == "untouched"
    assert not (tmp_path / "results.json").is_symlink()
    assert json.loads((tmp_path / "results.json").read_text()) == {"score": 0}


# ---- student ids ---------------------------------------------------------------------------


@pytest.mark.parametrize("name, expected", [(NFD, NFC), ("bob\t", "bob"), ("mallory\n=cmd", "mallory=cmd"),
                                            ("a\u200bb\u202e", "ab"), ("eve\x07", "eve"), (" ann ", "ann"),
                                            ("line\u2028break", "linebreak")])
def test_a_student_id_is_nfc_without_what_a_reader_cannot_see(name, expected):
    assert staging.student_id(name) == expected


def test_two_names_that_normalise_alike_are_both_refused_and_the_rest_graded(tmp_path):
    for name in (NFC, NFD, "bob", "eve\x07"):
        (tmp_path / "class" / name).mkdir(parents=True)
    found = {s.student: s for s in staging.submissions_in(tmp_path / "class", tmp_path / "scratch")}
    assert sorted(found) == sorted(["bob", "eve", NFC, "Jose\\u0301"])
    assert found["bob"].folder and found["eve"].folder and not found["eve"].problem
    for student in (NFC, "Jose\\u0301"):
        problem = found[student].problem
        assert found[student].folder is None and "\n" not in problem
        assert f"{NFC}/ and Jose\\u0301/" in problem or f"Jose\\u0301/ and {NFC}/" in problem, problem


def test_a_folder_and_a_zip_of_one_name_are_one_row_not_graded(tmp_path):
    (tmp_path / "class" / "alice").mkdir(parents=True)
    (tmp_path / "class" / "alice.zip").write_bytes(b"")
    [found] = staging.submissions_in(tmp_path / "class", tmp_path / "scratch")
    assert found.student == "alice" and found.folder is None and "alice/ and alice.zip" in found.problem


def test_an_escaped_name_never_shares_a_row_with_an_id_that_reads_the_same(tmp_path):
    for name in (NFC, NFD, "Jose\\u0301"):  # the last typed with a backslash
        (tmp_path / "class" / name).mkdir(parents=True)
    found = staging.submissions_in(tmp_path / "class", tmp_path / "scratch")
    assert sorted(s.student for s in found) == sorted([NFC, "Jose\\u0301"])
    assert all(s.folder is None and s.problem for s in found)


def test_a_name_that_normalises_to_a_hidden_folder_is_refused(tmp_path):
    (tmp_path / "class" / "\u200b..").mkdir(parents=True)
    [found] = staging.submissions_in(tmp_path / "class", tmp_path / "scratch")
    assert found.folder is None and found.student == "\\u200b.." and "not a student id" in found.problem


@pytest.mark.sandbox  # grade_class grades behind the sandbox alone, even a class it cannot grade
def test_a_class_of_refused_names_writes_rows_a_reader_can_trust(tmp_path):
    """grade_class end to end on students none of whom can be graded, so no grader runs."""
    for name in (NFC, NFD):
        (tmp_path / "class" / name).mkdir(parents=True)
    (tmp_path / "class" / '=HYPERLINK("http:evil","x").zip').write_text("not a zip")
    done = run_tool(str(tmp_path / "class"), "--out", str(tmp_path / "out"), "--labs", "rag4")
    assert done.returncode == 1, done.stderr
    with open(tmp_path / "out" / "gradebook.csv", newline="", encoding="utf-8") as rows:
        book = {row["student"]: row for row in csv.DictReader(rows)}
    assert sorted(book) == sorted([NFC, "Jose\\u0301", "'=HYPERLINK(\"http:evil\",\"x\")"])
    assert all(row["flags"] == "not-graded" and row["total"] == "" for row in book.values())
    refused = (tmp_path / "out" / "students" / NFC / "not-graded.txt").read_text()
    assert "one student id" in refused and "Jose\\u0301" in refused
    assert f"not graded: {NFC}: " in done.stderr


# ---- similarity.md -------------------------------------------------------------------------


@pytest.mark.parametrize("student", ["a | b", "x\ny", "`code`", "[click](http://evil.example)", "<img src=x>",
                                     "# heading", "- item", "1. item"])
def test_a_student_id_in_similarity_md_stays_one_literal_cell(student):
    match = similarity.Match("rag4", student, "bob", 0.95, 100, ("word_windows",))
    findings = similarity.Findings([match], [], [f"{student} rag4: not compared"])
    lines = similarity.report(findings).splitlines()
    [row] = [line for line in lines if line.startswith("| 0.95 |")]
    assert row.count("|") - row.count("\\|") == 7, row  # the table's own seven bars, no more
    assert "\n" not in similarity.markdown_text(student)
    assert not any(sign in row.replace("\\", "") and f"\\{sign}" not in row for sign in "`[<"), row
    [note] = [line for line in lines if line.startswith("- ") and "not compared" in line]
    assert not note[2:].startswith(("#", "-", "1.")), note


def test_markdown_text_escapes_what_could_make_markup():
    assert similarity.markdown_text("a|b [c](d) `e` <f>") == "a\\|b \\[c\\](d) \\`e\\` \\<f\\>"
    assert similarity.markdown_text("-1") == "\\-1" and similarity.markdown_text("12) x") == "12\\) x"


def write_lab(folder: Path, source: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "rag4-chunking.py").write_text(source)
    return folder / "rag4-chunking.py"


REFERENCE = (ROOT / "solutions" / "rag4-chunking.py").read_text(encoding="utf-8")


@pytest.mark.parametrize("padding, said", [("# padding\n" * 2_000_000, "MB"),  # 20 MB: over the bytes read
                                           ("X = (" + "a," * 400_000 + ")\n", "words and signs")])  # dense
def test_similarity_skips_a_file_over_its_limits_and_says_so(tmp_path, padding, said):
    path = write_lab(tmp_path / "big", REFERENCE + padding)
    findings = similarity.find_similar({"big": {"rag4": path}}, ROOT / "solutions", ["rag4"])
    assert not findings.reference
    [problem] = findings.problems
    assert problem.startswith("big rag4: not compared:") and said in problem, problem
    assert "## Not compared" in similarity.report(findings)


MEASURE = """
import resource, sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
import similarity
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
similarity.find_similar({"big": {"rag4": Path(sys.argv[2])}}, Path(sys.argv[3]), ["rag4"])
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before)
"""


HELPERS = "".join(f"\ndef helper_{i}(values, limit=3):\n    total = 0\n    for value in values:\n"
                  f"        total += value * {i} + len(str(value))\n    return min(total, limit)\n"
                  for i in range(1_000))


@pytest.mark.parametrize("padding", [
    HELPERS * 220,  # 20 MB of ordinary code: 3.3 GB before the limits
    "X = (" + "a," * 400_000 + ")\n",  # 0.8 MB of dense code: 600 MB before the limits
    "X = (" + "a," * 90_000 + ")\n",  # dense code just under the token limit: it is parsed
], ids=["20 MB", "dense", "dense under the limit"])
def test_similarity_memory_stays_bounded_whatever_the_file(tmp_path, padding):
    """Peak memory grows by less than 250 MB, in a process of its own."""
    path = write_lab(tmp_path / "big", REFERENCE + padding)
    done = subprocess.run([sys.executable, "-c", MEASURE, str(TOOLS), str(path), str(ROOT / "solutions")],
                          capture_output=True, text=True, timeout=120, cwd=ROOT,
                          env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert done.returncode == 0, done.stderr[-2000:]
    growth_mb = int(done.stdout.split()[-1]) / 1024  # ru_maxrss is in KB on Linux
    assert growth_mb < 250, f"peak memory grew by {growth_mb:.0f} MB"


# ---- --gradescope-one and the wall ---------------------------------------------------------


def gradescope_one(tmp_path: Path, *options: str, isolation: str = "process", source: str = REFERENCE) -> tuple:
    """--gradescope-one on a rag4 (the reference's by default); (the finished process, results.json)."""
    submission = tmp_path / "submission"
    submission.mkdir(exist_ok=True)
    (submission / "rag4-chunking.py").write_text(source)
    results = tmp_path / "results" / "results.json"
    env = dict(os.environ, ACADEMY_ISOLATION=isolation) if isolation else None
    done = run_tool("--gradescope-one", str(submission), "--results", str(results), "--labs", "rag4",
                    *options, env=env)
    return done, json.loads(results.read_text(encoding="utf-8"))


def test_gradescope_one_refuses_the_process_layer_and_says_why_in_results(tmp_path):
    done, results = gradescope_one(tmp_path)
    assert done.returncode == 2, done.stderr[-2000:]
    assert results["score"] == 0 and results["tests"] == []
    [line] = results["output"].splitlines()
    assert line.startswith("Not graded: no sandbox or user layer") and "'process'" in line, line
    assert "--allow-unsandboxed" in line and "ACADEMY_ISOLATION=process" in line


@pytest.mark.heavy  # grades a lab: the deeper tier
def test_gradescope_one_behind_the_process_layer_says_so_in_results(tmp_path):
    done, results = gradescope_one(tmp_path, "--allow-unsandboxed")
    assert done.returncode == 0, done.stderr[-2000:]
    assert results["score"] == 10
    assert "isolation: process" in results["output"].splitlines()[0]


PLANT = """
import os
for path, make in (({results!r}, lambda p: open(p, "w").write("{{}}")),
                   ({link!r}, lambda p: os.symlink("/etc/passwd", p))):
    try:
        make(path)
    except OSError:
        pass
"""


@pytest.mark.heavy  # grades a lab: the deeper tier
@pytest.mark.sandbox  # behind the strongest wall, which the autograder requires
def test_a_worker_cannot_write_the_results(tmp_path):
    """A lab that writes results.json, or plants a link there, changes nothing: the grader writes
    them alone, once the workers have ended, behind the strongest wall this machine gives."""
    folder = tmp_path / "results"
    folder.mkdir()
    attack = PLANT.format(results=str(folder / "results.json"), link=str(folder / "planted"))
    done, results = gradescope_one(tmp_path, isolation="", source=REFERENCE + attack)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(path.name for path in folder.iterdir()) == ["results.json"]
    assert results["tests"] and results["score"] == 0  # reaching outside on import fails the lab


def test_a_gradescope_submitters_name_is_normalised_as_a_class_id(tmp_path):
    import grade_class

    users = [{"name": NFD + "\n", "id": 1}, {"email": "\u200bbob@example.com", "id": 2}]
    (tmp_path / "metadata.json").write_text(json.dumps({"users": users}))
    assert grade_class.student_from_metadata(tmp_path / "metadata.json") == f"{NFC}+bob@example.com"
