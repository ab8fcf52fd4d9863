"""The handout (tools/grading/make_handout.py): no reference code in it, and it works as a student's copy.

The handout is built once into a temporary folder. Its lab and grading tests
run there as a student runs them, with the handout's own academy_llm: the
course's editable install would otherwise answer `import academy_llm`, so the
runs put the handout first on PYTHONPATH. They leave out the ACADEMY_ and
PYTEST_ variables of this run (the grader here sets some of its own).
"""

import importlib.util
import os
import re
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from unittest import mock

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOL = ROOT / "tools" / "grading" / "make_handout.py"


def load_make_handout():
    """tools/grading/make_handout.py as a module, to build in this process and reach its checks."""
    spec = importlib.util.spec_from_file_location("make_handout", TOOL)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make_handout = load_make_handout()
pytestmark = pytest.mark.timeout(300)  # the build probes every function the handout ships, in a process of its own


@pytest.fixture(scope="module")
def handout(tmp_path_factory) -> Path:
    """A handout built with --force over a folder holding a stray file, which must go.

    Built without calling the functions it ships (the probe costs some ten seconds of CPU, most of
    this file's time): test_the_built_handout_answers_no_todo_by_call probes this same handout in
    the deeper tier, and the probe's own tests, on planted answers, run here."""
    folder = tmp_path_factory.mktemp("handout")
    (folder / "stray.txt").write_text("from before\n", encoding="utf-8")
    with mock.patch.object(make_handout, "answers_by_call_in", lambda built: list(make_handout.OPEN_ANSWERS)):
        assert make_handout.main([str(folder), "--force"]) == 0
    return folder


@pytest.mark.heavy  # calls every function the handout ships: some ten seconds of CPU
def test_the_built_handout_answers_no_todo_by_call(handout):
    """The probe make_handout runs before it writes: no shipped function answers a TODO's public calls
    in its place, but those OPEN_ANSWERS names (each with why)."""
    assert sorted(make_handout.answers_by_call_in(handout)) == sorted(make_handout.OPEN_ANSWERS)


def as_student(handout: Path, *args: str) -> subprocess.CompletedProcess:
    """Run this Python in the handout with its own academy_llm and none of this run's settings."""
    env = {
        name: value for name, value in os.environ.items()
        if not name.startswith(("ACADEMY_", "PYTEST_"))
    }
    env["PYTHONPATH"] = str(handout)
    return subprocess.run(
        [sys.executable, *args], cwd=handout, env=env, capture_output=True, text=True, timeout=300
    )


def pytest_summary(result: subprocess.CompletedProcess) -> str:
    """pytest's last line, such as '23 failed in 1.77s'."""
    return result.stdout.strip().splitlines()[-1]


def test_the_handout_uses_its_own_academy_llm(handout):
    result = as_student(handout, "-c", "import academy_llm; print(academy_llm.__file__)")
    assert Path(result.stdout.strip()).resolve() == (handout / "academy_llm.py").resolve()


def test_the_handout_holds_no_reference_code(handout):
    assert not (handout / "stray.txt").exists()
    for folder in make_handout.REFERENCE_FOLDERS:
        assert not (handout / folder).exists(), folder
    assert not list((handout / "tests").glob("test_*.py"))
    for path in handout.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert b"BEGIN SOLUTION" not in data and b"END SOLUTION" not in data, path
    assert sorted(p.name for p in (handout / "labs").glob("rag*.py")) == sorted(
        p.name for p in (ROOT / "labs").glob("rag*.py")
    )
    assert list((handout / "notebooks" / "labs").glob("rag*.ipynb"))


def test_the_handout_holds_no_answer(handout):
    """No file the handout ships defines a function shaped as an answer region of solutions/ or as
    one of the grader's oracles (renamed or not), and none imports the oracles."""
    assert make_handout.answer_copies(handout) == []
    assert make_handout.hint_answers(handout) == []
    assert not (handout / "tools" / "grading" / "oracles.py").exists()
    assert not (handout / "labkit" / "bootstrap.py").exists()
    for path in handout.rglob("*.py"):
        assert "oracles" not in make_handout.imported_modules(path), path


def test_the_answer_scan_finds_a_copy_renamed(tmp_path):
    """An oracle and a lab's answer, copied into a module a handout ships under other names, are found."""
    source = (ROOT / "tools" / "grading" / "oracles.py").read_text(encoding="utf-8")
    weight = source[source.index("def lucene"):source.index("def terms_by_scanning")]
    solution = (ROOT / "solutions" / "rag11-hybrid-search.py").read_text(encoding="utf-8")
    fusion = solution[solution.index("def reciprocal_rank_fusion"):]
    fusion = fusion[:fusion.index("\ndef ", 1)]
    copied = weight.replace("lucene", "okapi").replace("tf", "count") + "\n\n" + fusion.replace(
        "reciprocal_rank_fusion", "merged").replace("rankings", "lists")
    (tmp_path / "labkit").mkdir()
    (tmp_path / "labkit" / "ranking.py").write_text("import math\n\n\n" + copied, encoding="utf-8")
    assert make_handout.answer_copies(tmp_path) == [
        "labkit/ranking.py: okapi (the grader's lucene)",
        "labkit/ranking.py: merged (rag11-hybrid-search's reciprocal_rank_fusion)",
    ]


def test_the_answer_scan_finds_a_hint_that_is_an_answer(tmp_path):
    """A hint level holding a lab's answer as code, its names changed, is found; a skeleton is not."""
    solution = (ROOT / "solutions" / "rag11-hybrid-search.py").read_text(encoding="utf-8")
    body = solution[solution.index("def reciprocal_rank_fusion"):]
    body = body[body.index("    # END SOLUTION") - 400:body.index("    # END SOLUTION")]
    body = "\n".join(line[4:] for line in body.splitlines() if line.startswith("    ") and "#" not in line)
    body = body[body.index("scores = {}"):]
    skeleton = "scores = {}\nfor ranking in rankings:\n    ...\nreturn ..."
    (tmp_path / "labs" / "hints").mkdir(parents=True)
    hints = {"reciprocal_rank_fusion": {"1": "Fuse by ranks.", "2": skeleton, "3": body.replace("scores", "tally")}}
    (tmp_path / "labs" / "hints" / "rag11.json").write_text(json.dumps(hints), encoding="utf-8")
    assert make_handout.hint_answers(tmp_path) == [
        "labs/hints/rag11.json: reciprocal_rank_fusion hint 3 (rag11-hybrid-search's reciprocal_rank_fusion)"]


PLANTED = """\
import re


def share_found(read, wanted, depth):
    \"\"\"rag8's recall_at_k under another name, written another way.\"\"\"
    top = read[:depth]
    held = [span for span in wanted if [h for h in top if h[0] == span[0] and h[1] <= span[1] <= span[2] <= h[2]]]
    return len(held) / len(wanted)


def spread(text, words, back=0):
    \"\"\"rag4's word_windows under another name, with a while loop and word records of its own.\"\"\"
    if not isinstance(text, str) or type(words) is not int or type(back) is not int:
        raise TypeError("a text and whole numbers")
    if words < 1 or back < 0 or back >= words:
        raise ValueError("bad sizes")
    found = list(re.finditer(r"\\S+", text))
    pieces, first = [], 0
    while first < len(found):
        last = min(first + words, len(found)) - 1
        pieces.append((found[first].start(), found[last].end()))
        if last == len(found) - 1:
            break
        first += words - back
    return [make(text, a, b) for a, b in pieces]


def make(text, start, end):
    from academy_llm import make_chunk
    return make_chunk(text, start, end)


def markdown_pieces(text, budget, overlap=0):
    \"\"\"The course's CommonMark chunker standing on rag5's reference: rag6's markdown_chunks by call,
    though its chunks are not the reference's on every page.\"\"\"
    from academy_llm import COURSE_ROOT
    from labkit import load_lab
    from labkit.markdown_chunking import RobustMarkdown
    return RobustMarkdown(load_lab("rag5", COURSE_ROOT / "solutions")).markdown_chunks(text, budget, overlap)


def unrelated(text, words, back=0):
    \"\"\"Takes the same arguments, answers something else.\"\"\"
    return [text[:words]]
"""


def test_the_answer_scan_finds_an_answer_inside_a_given_function(tmp_path):
    """An answer region pasted among a given function's own statements (in a loop of a report, say)
    is found: a copy need not be a function of its own."""
    solution = (ROOT / "solutions" / "rag8-evaluate-chunking.py").read_text(encoding="utf-8")
    start = solution.index("    retrieved = merged(hits[:k])")
    region = textwrap.dedent(solution[start:solution.index("    # END SOLUTION", start)])
    (tmp_path / "labkit").mkdir()
    (tmp_path / "labkit" / "report.py").write_text(
        "def report(pages, hits, gold, k):\n    print(len(pages))\n    for page in pages:\n        print(page)\n"
        + textwrap.indent(region, "        "), encoding="utf-8")
    assert make_handout.answer_copies(tmp_path) == [
        "labkit/report.py: report (rag8-evaluate-chunking's precision_and_iou)"]


def test_the_answer_probe_finds_an_answer_in_another_form(tmp_path):
    """A shipped function that passes a TODO's public tests in its place is an answer, whatever its
    name and form: rag8's recall and rag4's windows rewritten, and a chunker that keeps rag6's
    promises with chunks of its own."""
    (tmp_path / "labkit").mkdir()
    (tmp_path / "labkit" / "helpers.py").write_text(PLANTED, encoding="utf-8")
    found = make_handout.answers_by_call_in(tmp_path)
    assert "labkit/helpers.py: share_found (rag8's recall_at_k)" in found, found
    assert "labkit/helpers.py: spread (rag4's word_windows)" in found, found
    assert "labkit/helpers.py: markdown_pieces (rag6's markdown_chunks)" in found, found
    assert not [line for line in found if "unrelated" in line or ": make " in line], found


def test_the_share_of_answers_held_whole_is_given_once(handout):
    """The course's recall (the share of answer spans one chunk read holds whole) is one given
    function, computed for a whole split at once, not a question's loop a rag8 student could paste as
    recall_at_k; the lessons call it rather than repeating it."""
    assert "def answer_shares(" in (handout / "labkit" / "retrieval.py").read_text(encoding="utf-8")
    for path in sorted((handout / "labkit").rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        assert "def recall_within(spans, question)" not in source, path
        assert "held / len(spans)" not in source and "/ len(answers)" not in source, path


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_the_handout_is_a_repository_with_one_commit(handout):
    log = subprocess.run(
        ["git", "log", "--format=%an"], cwd=handout, capture_output=True, text=True, check=True
    )
    assert log.stdout.splitlines() == ["Chunking Labs"]


def test_the_student_readme_says_what_to_run(handout):
    readme = (handout / "README.md").read_text(encoding="utf-8")
    for command in (
        "pip install -r requirements.txt",
        "python labs/rag4-chunking.py",
        "pytest",
        "jupyter lab",
        "writes `labs/rag4-chunking.py`",
    ):
        assert command in readme, command
    assert "solutions" not in readme
    for image in re.findall(r"\]\((docs/[^)\s]+)\)", readme):
        assert (handout / image).is_file(), image


def test_the_student_requirements_leave_out_the_projects_own(handout):
    requirements = (handout / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert "-e ." in requirements
    assert not [line for line in requirements if re.match(r"(selenium|nbconvert|nbclient)", line)]


def test_the_handout_draws_the_explorer_of_its_notebooks(handout):
    """rag4-rag7's notebooks draw labkit/explorer.js with anywidget: both ship, and the explorer's
    page is made from the handout's own files, with no network."""
    requirements = (handout / "requirements.txt").read_text(encoding="utf-8").splitlines()
    assert any(line.startswith("anywidget") for line in requirements)
    drawn = as_student(handout, "-c", "from labkit.explorer_widget import SCRIPT, static_html; "
                                      "from labkit.explorer import Grid, read_page; page = read_page('a b', 'q', 'b'); "
                                      "grid = Grid(('x',), (8,), (0,)); "
                                      "print(SCRIPT.is_file(), 'mountStatic' in static_html(page, grid, {}))")
    assert drawn.stdout.split() == ["True", "True"], drawn.stderr[-2000:]


def test_an_unfinished_lab_stops_at_its_first_todo(handout):
    result = as_student(handout, "labs/rag4-chunking.py")
    assert result.returncode == 1
    assert "TODO(rag4)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.heavy  # runs the grader inside the handout: the deeper tier
def test_grading_the_stubs_fails_without_set_up_errors(handout):
    result = as_student(handout, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/grading/test_rag4.py")
    summary = pytest_summary(result)
    assert re.search(r"\d+ failed", summary), result.stdout[-2000:]
    assert "error" not in summary, result.stdout[-2000:]


@pytest.mark.heavy  # runs the grader inside the handout: the deeper tier
def test_grading_a_finished_lab_passes(handout, tmp_path):
    finished = tmp_path / "finished"
    shutil.copytree(handout, finished, ignore=shutil.ignore_patterns(".git"))
    lab = Path("rag4-chunking.py")
    shutil.copyfile(ROOT / "solutions" / lab, finished / "labs" / lab)
    result = as_student(finished, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/grading/test_rag4.py")
    assert result.returncode == 0, result.stdout[-2000:]
    assert re.fullmatch(r"\d+ passed in .*", pytest_summary(result)), result.stdout[-2000:]


def test_a_folder_that_holds_something_is_refused(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine\n", encoding="utf-8")
    assert make_handout.main([str(tmp_path)]) == 1
    error = capsys.readouterr().err
    assert len(error.strip().splitlines()) == 1 and "--force" in error
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


def test_the_course_folder_is_refused_even_with_force(capsys):
    assert make_handout.main([str(ROOT / "labs"), "--force"]) == 1
    assert "overlaps the course folder" in capsys.readouterr().err
    assert (ROOT / "labs" / "rag4-chunking.py").is_file()


def test_the_final_check_finds_reference_code(tmp_path):
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "rag4-chunking.py").write_text("    # BEGIN SOLUTION\n", encoding="utf-8")
    (tmp_path / "tests" / "grading" / "hidden").mkdir(parents=True)
    found = make_handout.reference_code(tmp_path)
    assert found == ["tests/grading/hidden", "labs/rag4-chunking.py"]
