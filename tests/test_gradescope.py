"""tools/grading/gradescope/: the autograder zip set up and run as Gradescope would, under a fake root.

The zip is unpacked into ROOT/source with the modes it carries, setup.sh runs
once, and run_autograder grades three submissions in turn, each with its
submission_metadata.json: the reference solutions, the unfinished notebooks,
and a rag4 that does not parse. Their results.json are held to Gradescope's
format and to what the students may see of the hidden tests.

Gradescope's documentation relied on:
- Autograder Specifications (gradescope-autograders.readthedocs.io/en/latest/specs/,
  the source of gradescope/autograder_samples docs/specs.md): the zip is unpacked in
  /autograder/source; run_autograder runs in /autograder and writes
  /autograder/results/results.json; its format: top-level "score" (overrides the
  tests' total when given), "output", "visibility", "stdout_visibility", "tests",
  each test with "score", "max_score", "name", "output", "visibility"; a visibility is
  one of "hidden", "after_due_date", "after_published", "visible" (the default);
  "after_published" shows a test only once the assignment's grades are published,
  and while any test is hidden from them students do not see their total score.
- Submission Metadata (.../en/latest/submission_metadata/): the shape of
  /autograder/submission_metadata.json written below.
"""

import json
import math
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from points import POINTS, lab_points

COURSE = Path(__file__).resolve().parent.parent
GRADESCOPE = COURSE / "tools" / "grading" / "gradescope"
COURSE_POINTS = sum(map(lab_points, POINTS))  # 10 a lab
VISIBILITIES = {"hidden", "after_due_date", "after_published", "visible"}
# Parametrize ids of tests/grading/hidden/*.py that say what the hidden input is.
HIDDEN_IDS = ("CRLF and no-break space", "CR between letters", "bool budget", "a span over budget",
              "front matter alone", "# Title #####", "#hashtag")

pytestmark = pytest.mark.timeout(480)  # three submissions graded by fresh grader runs


def unpack(archive: Path, dest: Path) -> None:
    """Unpack the zip keeping each member's Unix mode, as Gradescope does (zipfile drops it)."""
    with zipfile.ZipFile(archive) as zipped:
        for member in zipped.infolist():
            zipped.extract(member, dest)
            mode = member.external_attr >> 16 & 0o777
            if mode:
                (dest / member.filename).chmod(mode)


def metadata(user_id: int, name: str) -> dict:
    """A submission_metadata.json in Gradescope's documented shape, for one student."""
    return {
        "id": 100 + user_id, "created_at": "2026-11-30T18:40:00.000000-08:00",
        "assignment": {"id": 25828, "course_id": 1234, "title": "Chunking Labs",
                       "due_date": "2026-12-01T23:00:00.000000-08:00", "late_due_date": None,
                       "release_date": "2026-11-01T00:00:00.000000-08:00", "group_size": None,
                       "group_submission": False, "total_points": f"{COURSE_POINTS}.0"},
        "submission_method": "upload",
        "users": [{"email": f"{name}@example.com", "id": user_id, "name": name.title()}],
        "previous_submissions": [],
    }


def submit_reference(folder: Path) -> None:
    """The reference solutions, in a subfolder: a student may upload a folder."""
    (folder / "my work").mkdir()
    for path in (COURSE / "solutions").glob("rag*-*.py"):
        shutil.copy(path, folder / "my work")


def submit_stubs(folder: Path) -> None:
    """The unfinished notebooks as handed out: graded as the scripts Jupyter pairs with them."""
    for path in (COURSE / "notebooks" / "labs").glob("*.ipynb"):
        shutil.copy(path, folder)


def submit_broken(folder: Path) -> None:
    """A finished rag4 with a last line that does not parse: nothing of it can be imported."""
    source = (COURSE / "solutions" / "rag4-chunking.py").read_text(encoding="utf-8")
    (folder / "rag4-chunking.py").write_text(source + "\ndef unfinished(:\n", encoding="utf-8")


SUBMISSIONS = {  # name -> (how its files are laid out, extra arguments to run_autograder)
    "reference": (submit_reference, ()),
    "stubs": (submit_stubs, ()),
    "broken": (submit_broken, ("--labs", "rag4")),  # rag4 alone: the only lab handed in
}


def run_submission(root: Path, env: dict, number: int, name: str) -> tuple:
    """One submission as Gradescope runs it: a fresh submission/ and metadata, then
    run_autograder from the root; (the finished process, its results.json or None)."""
    lay_out, arguments = SUBMISSIONS[name]
    shutil.rmtree(root / "submission", ignore_errors=True)
    (root / "submission").mkdir()
    lay_out(root / "submission")
    (root / "submission_metadata.json").write_text(json.dumps(metadata(number, name)))
    results = root / "results" / "results.json"
    results.unlink(missing_ok=True)
    done = subprocess.run([str(root / "run_autograder"), *arguments], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)
    return done, json.loads(results.read_text(encoding="utf-8")) if results.exists() else None


@pytest.fixture(scope="module")
def autograder(tmp_path_factory):
    """The zip built, unpacked into a fake root's source/, set up, and the three submissions
    graded: (root, setup's process, {name: (run_autograder's process, results)}, whether
    Gradescope's own /autograder was there before)."""
    real_root_before = Path("/autograder").exists()
    root = tmp_path_factory.mktemp("autograder")
    archive = tmp_path_factory.mktemp("zip") / "autograder.zip"
    subprocess.run([sys.executable, str(GRADESCOPE / "make_autograder_zip.py"), str(archive)],
                   check=True, capture_output=True)
    unpack(archive, root / "source")
    # The current interpreter has the requirements: setup.sh makes no venv, which saves minutes.
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), AUTOGRADER_PYTHON=sys.executable)
    setup = subprocess.run(["bash", "setup.sh"], cwd=root / "source", env=env,
                           capture_output=True, text=True, timeout=300)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")  # as Gradescope does
    graded = {name: run_submission(root, env, number, name)
              for number, name in enumerate(SUBMISSIONS, start=1)}
    return root, setup, graded, real_root_before


@pytest.fixture(scope="module")
def hidden_tests(autograder) -> list[dict]:
    """The hidden grading tests with their points, from the grader's report of a run that only
    collects (every test listed as not run)."""
    root, *_ = autograder
    report = root / "collected.json"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading",
                    "--collect-only", "--lab-dir", "solutions", "--grade-json", str(report)],
                   cwd=root / "source", check=True, capture_output=True, timeout=120)
    labs = json.loads(report.read_text(encoding="utf-8"))["labs"].values()
    return [test for lab in labs for test in lab["tests"] if test["hidden"]]


def results_of(autograder, name: str) -> dict:
    """A submission's results.json, failing with what run_autograder printed if there is none."""
    _, _, graded, _ = autograder
    done, results = graded[name]
    assert results is not None, f"{name}: no results.json\n{done.stdout[-2000:]}\n{done.stderr[-2000:]}"
    return results


def format_problems(results: dict) -> list[str]:
    """How results.json departs from Gradescope's documented format, and from adding up."""
    problems = []
    if not isinstance(results.get("score"), (int, float)) or isinstance(results.get("score"), bool):
        problems.append(f"top-level score {results.get('score')!r} is not a number")
    if not isinstance(results.get("output", ""), str):
        problems.append("top-level output is not a string")
    for key in ("visibility", "stdout_visibility"):
        if key in results and results[key] not in VISIBILITIES:
            problems.append(f"top-level {key} {results[key]!r} is not one of {sorted(VISIBILITIES)}")
    tests = results.get("tests")
    if not isinstance(tests, list):
        return problems + ["tests is not a list"]
    for row in tests:
        if not (isinstance(row.get("name"), str) and isinstance(row.get("output"), str)):
            problems.append(f"row {row.get('name')!r}: name and output must be strings")
        if not all(isinstance(row.get(key), (int, float)) for key in ("score", "max_score")):
            problems.append(f"row {row.get('name')!r}: score and max_score must be numbers")
        elif not 0 <= row["score"] <= row["max_score"]:
            problems.append(f"row {row.get('name')!r}: score {row.get('score')} not in [0, max_score "
                            f"{row.get('max_score')}]")
        if "visibility" in row and row["visibility"] not in VISIBILITIES:
            problems.append(f"row {row.get('name')!r}: visibility {row['visibility']!r}")
    total = round(sum(row.get("score", 0) for row in tests), 4)
    if isinstance(results.get("score"), (int, float)) and round(results["score"], 4) != total:
        problems.append(f"score {results['score']} is not the rows' total {total}, which the "
                        "student would see on the rows (a top-level score overrides their total)")
    return problems


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
def test_setup_and_grading_stay_under_the_root(autograder):
    root, setup, graded, real_root_before = autograder
    assert setup.returncode == 0, setup.stderr[-3000:]
    assert "isolation: sandbox" in setup.stderr or "isolation: user" in setup.stderr, setup.stderr[-3000:]
    assert not (root / "venv").exists()  # AUTOGRADER_PYTHON: none was made
    assert (root / "source" / "COURSE_COMMIT").read_text().strip()
    assert os.access(root / "run_autograder", os.X_OK)  # the zip's mode survived
    assert Path("/autograder").exists() == real_root_before, "the scripts wrote to the real /autograder"
    for name, (done, _) in graded.items():
        assert done.returncode == 0, f"{name}: {done.stderr[-3000:]}"


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_results_are_in_gradescopes_format(autograder, name):
    assert format_problems(results_of(autograder, name)) == []


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
def test_the_reference_earns_full_marks_and_the_stubs_none(autograder):
    reference, stubs = results_of(autograder, "reference"), results_of(autograder, "stubs")
    for results in (reference, stubs):
        assert sum(row["max_score"] for row in results["tests"]) == pytest.approx(COURSE_POINTS, abs=1e-3)
    assert reference["score"] == COURSE_POINTS and all(row["score"] == row["max_score"] for row in reference["tests"])
    assert stubs["score"] == 0


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
def test_a_submission_that_does_not_parse_gets_zero_and_the_reason(autograder):
    results = results_of(autograder, "broken")
    assert results["score"] == 0 and results["tests"]
    said = [results["output"]] + [row["output"] for row in results["tests"]]
    assert any("SyntaxError" in text and "rag4-chunking.py" in text for text in said), said


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_every_row_says_when_students_see_it(autograder, name):
    unset = [row["name"] for row in results_of(autograder, name)["tests"] if "visibility" not in row]
    assert not unset, f"rows without a visibility (Gradescope then shows them at once): {unset}"


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
@pytest.mark.parametrize("name", ["reference", "stubs"])
def test_the_hidden_tests_rows_are_shown_after_publishing(autograder, hidden_tests, name):
    """The rows marked after_published carry exactly the hidden tests' points: hidden tests have
    rows of their own, and those alone wait for the grades to be published."""
    rows = results_of(autograder, name)["tests"]
    later = sum(row["max_score"] for row in rows if row.get("visibility") == "after_published")
    hidden = sum(test["points"] for test in hidden_tests)
    # Each row and each test's points are rounded to 4 places: the sums agree to within those roundings.
    assert math.isclose(later, hidden, abs_tol=1e-4 * (len(rows) + len(hidden_tests))), (
        f"the after_published rows carry {later:.4f} points, the hidden tests {hidden:.4f}: the hidden tests "
        "need rows of their own, after_published by default, so students see them only once "
        f"grades are published (rows: {[(row['name'], row.get('visibility')) for row in rows]})")


@pytest.mark.heavy  # sets up the autograder and grades three submissions: the deeper tier
@pytest.mark.sandbox  # the autograder grades behind the sandbox
@pytest.mark.parametrize("name", list(SUBMISSIONS))
def test_no_row_shows_a_hidden_tests_parameters(autograder, hidden_tests, name):
    results = results_of(autograder, name)
    secrets = [test["name"] for test in hidden_tests if "[" in test["name"]]
    secrets += [f"[{case}" for case in HIDDEN_IDS]
    texts = [results.get("output", "")] + [row[key] for row in results["tests"] for key in ("name", "output")]
    shown = sorted({secret for secret in secrets for text in texts if secret in text})
    assert not shown, f"{len(shown)} hidden tests' parameters are shown to the student, e.g. {shown[:5]}"
