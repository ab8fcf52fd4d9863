"""The grader itself: honest on stubs, complete on the reference, unshaken by faulty or cheating labs."""

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import gradings
import pytest
from gradings import Grading
from scratch import temporary_folder
from points import POINTS
from doc_tables import code_table
from redteam.attacks import lab_file, lab_source

ROOT = Path(__file__).resolve().parent.parent
# Correct code, graded whole: the one grading test_independent.py makes of it (gradings.shared).
# The reference itself is graded by the plain `pytest`, whose grading tests must all pass on it.
APART = ROOT / "tests" / "independent" / "plain"
TIME_FLOOR = 5  # seconds: the least time limit in the planted runs (the reference needs well under one)

pytestmark = pytest.mark.timeout(600)  # each test here grades whole folders in fresh pytest runs


STARTED: dict = {}  # name -> Grading, started right after collection (start_early)


def start_early(session) -> None:
    """Start the gradings the selected tests need now; the fixtures below wait for them."""
    needed = set().union(*(item.fixturenames for item in session.items if item.module.__name__ == __name__))
    folder = temporary_folder("grader-runs-")
    if "stubs" in needed:
        STARTED["labs"] = Grading(ROOT / "labs", folder)
    if "runs" in needed:
        STARTED.update(start_runs(folder))


@pytest.fixture(scope="module")
def stubs(tmp_path_factory):
    """The student stubs, graded: quick, since every call stops at a TODO."""
    grading = STARTED.pop("labs", None) or Grading(ROOT / "labs", tmp_path_factory.mktemp("grades"))
    return grading.result()[1]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The reference, planted faults, cheats and a student's own labs, graded side by side."""
    started = {name: STARTED.pop(name) for name in RUNS if name in STARTED}
    started = started or start_runs(tmp_path_factory.mktemp("grades"))
    return {name: grading.result() for name, grading in started.items()}


RUNS = ("apart", "planted", "cheats", "own")


def start_runs(out: Path) -> dict:
    """Write the planted, cheating and own-lab folders under `out` and start grading all four."""
    planted, cheats, own = out / "planted", out / "cheats", out / "own"
    for folder in (planted, cheats, own):
        folder.mkdir()
    plant(planted)
    write_cheats(cheats)
    write_own_labs(own)
    floor = ("--time-floor", str(TIME_FLOOR))
    return {
        "apart": gradings.shared(APART),
        "planted": Grading(planted, out, [f"tests/grading/test_{lab}.py" for lab in PLANTED_LABS],
                           options=floor),
        "cheats": Grading(cheats, out, [f"tests/grading/test_{lab}.py" for lab in CHEATS], options=floor),
        "own": Grading(own, out, [f"tests/grading/test_{lab}.py" for lab in OWN_LABS], options=floor,
                       env={"ACADEMY_GRADE_WITH_OWN_LABS": "1"}),
    }


def test_every_grading_test_fails_on_the_student_stubs(stubs):
    """The inverted check: a test that passes on a stub asserts nothing.

    (That every grading test passes on the reference, the plain `pytest` checks
    by grading solutions/ itself.)
    """
    assert sorted(stubs["labs"]) == sorted(POINTS)
    for name, lab in stubs["labs"].items():
        passing = [t["name"] for t in lab["tests"] if t["outcome"] == "passed"]
        assert not passing, f"{name}: these grading tests pass on the stubs: {passing}"
        assert lab["earned"] == 0 and lab["possible"] == 10
        assert all(f"TODO({name})" in t["message"] for t in lab["tests"]), "a stub failure should name its TODO"


def test_a_lab_not_begun_shows_the_todos_that_stop_it_not_each_test(stubs):
    """The grades table of the stubs: one line a TODO that stops tests, with their count."""
    from conftest import failure_lines

    lines = failure_lines(stubs["labs"]["rag4"]["tests"])
    assert [line.split(" stop")[1] for line in lines] == [
        " at TODO(rag4) word_windows(): not written yet", " at TODO(rag4) token_windows(): not written yet"]
    assert sum(int(line.split()[0]) for line in lines) == len(stubs["labs"]["rag4"]["tests"])
    other = {"name": "test_x", "outcome": "failed", "message": "f('a'): expected 1, got 2"}
    assert failure_lines([other, {**other, "outcome": "passed"}]) == ["test_x: f('a'): expected 1, got 2"]


@pytest.mark.heavy
def test_every_lab_is_worth_the_same_and_its_functions_share_it(runs):
    """Read from a whole grading of correct code (the reference's own, by the plain `pytest`, must pass
    every grading test: that it earns every point is the default tier's to say)."""
    report = runs["apart"][1]
    labs = sorted(path.name.split("-")[0] for path in (ROOT / "solutions").glob("rag*-*.py"))
    assert sorted(report["labs"]) == labs and report["possible"] == 10 * len(labs)
    for name, lab in report["labs"].items():
        assert lab["possible"] == 10, name
        assert sum(f["possible"] for f in lab["functions"].values()) == pytest.approx(10), name
        for function, total in lab["functions"].items():
            shares = [t["points"] for t in lab["tests"] if t["function"] == function]
            assert sum(shares) == pytest.approx(total["possible"], abs=0.01), (name, function)


@pytest.mark.heavy
def test_a_report_says_who_when_and_which_course(runs):
    report = runs["apart"][1]
    assert report["student"] == APART.name and report["graded_at"].startswith("20")
    assert report["course_commit"] is None or re.fullmatch(r"[0-9a-f]{40}", report["course_commit"])


# ---- a folder of planted faults ------------------------------------------------
# Each fault is a targeted edit of a reference solution, made in a copy. It must
# cost exactly the tests it touches (`costs`, a pattern of test names), each
# failing with a one-line reason matching `reason`; every other test passes.
# rag6 is left out of the folder altogether, and rag7, which builds on rag6 and
# rag5, must still earn its points on every test no fault touches.

PLANTED_LABS = ("rag4", "rag5", "rag6", "rag7", "rag8")


@dataclass
class Fault:
    lab: str
    what: str
    old: str  # text of the solution file to replace (it must occur exactly once)
    new: str
    costs: str | None = None  # a pattern of the names of the tests it must fail; None: it costs none
    reason: str = ""  # a pattern of the one-line reason each of them gives


FAULTS = [
    Fault("rag4", "word_windows prints a megabyte on every call",
          old="    check_text_and_window(text, size, overlap)\n",
          new="    check_text_and_window(text, size, overlap)\n    print('x' * 1_000_000)\n"),
    Fault("rag4", "word_windows rebinds academy_llm.count_tokens: its chunks claim false counts, which the judge, "
          "counting with its own, refuses",
          old="    chunks = []\n    for first in range(0, len(words), size - overlap):",
          new=("    import academy_llm; academy_llm.count_tokens = len\n"
               "    chunks = []\n    for first in range(0, len(words), size - overlap):"),
          # pages with no chunk claim true counts even with len as the count:
          costs=r"test_word_windows_(?!of_no_words|reject)",
          reason=r"says \d+ tokens, the tokenizer counts \d+$"),
    Fault("rag4", "token_windows never returns, and swallows every exception",
          old='    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")\n',
          new=('    check_text_and_window(text, max_tokens, overlap, "max_tokens", "tokens")\n'
               "    while True:\n        try:\n            pass\n        except BaseException:\n"
               "            pass\n"),
          costs=r"test_token_windows_",
          reason=r"^token_windows\(.*(timed out after \d+ s \(an endless loop\?\)$|not run: it timed out)"),
    Fault("rag5", "the lab loops forever when imported: one time limit, then the rest of its tests at once",
          old='rag4 = load_lab("rag4")', new='rag4 = load_lab("rag4")\nwhile True:\n    pass',
          costs=r".", reason=r"^(.* not run: )?importing rag5 timed out after \d+ s"),
    Fault("rag7", "header_chunks raises on one input",
          old="    if metadata is None:\n",
          new="    if title == 'Docs':\n        raise RuntimeError('planted')\n    if metadata is None:\n",
          costs=r"test_explicit_metadata_replaces",
          reason=r"^header_chunks\('---.*', 'Docs', 64, metadata=.*\) raised RuntimeError "
                 r"\(at rag7-header-chunking\.py:\d+ in header_chunks\)$"),
    Fault("rag7", "header_chunks calls sys.exit on one input",
          old="    if metadata is None:\n",
          new="    if title.startswith('A very long'):\n        import sys; sys.exit(3)\n    if metadata is None:\n",
          costs=r"test_a_title_longer_than_the_budget", reason=r"the lab called sys\.exit\(3\)"),
    Fault("rag7", "header_chunks calls os._exit on one input",
          old="    if metadata is None:\n",
          new="    if 'rather long' in text:\n        import os; os._exit(7)\n    if metadata is None:\n",
          costs=r"test_the_header_counts_against", reason=r"exit status 7 .*os\._exit"),
    Fault("rag8", "a line at the top level names what was never defined, so the lab cannot be imported",
          old="def precision_and_iou(", new="SHOWN = precision_and_IoU\n\n\ndef precision_and_iou(",
          costs=r".", reason=r"^the lab cannot be imported: it raised NameError \(at rag8-[\w-]+\.py:\d+\)$"),
]
MISSING_LAB = "rag6"


def plant(folder: Path) -> None:
    """Copy the reference labs into `folder`, make every planted edit, and leave one lab out."""
    for lab in PLANTED_LABS:
        if lab != MISSING_LAB:
            source = next((ROOT / "solutions").glob(f"{lab}-*.py"))
            shutil.copy(source, folder / source.name)
    for fault in FAULTS:
        path = next(folder.glob(f"{fault.lab}-*.py"))
        text = path.read_text(encoding="utf-8")
        assert text.count(fault.old) == 1, f"{fault.what}: the edit no longer fits {path.name}"
        path.write_text(text.replace(fault.old, fault.new), encoding="utf-8")
    (folder / "rag4-chunking (1).py").write_text("raise SystemExit('a stray copy is never read')\n")


def expected_failures(lab: str) -> list[tuple[str, str]]:
    """(test-name pattern, reason pattern) of the faults planted in `lab`."""
    if lab == MISSING_LAB:
        return [(r".", rf"^no {lab} lab file in .*: expected {lab}-markdown-chunking\.py$")]
    return [(fault.costs, fault.reason) for fault in FAULTS if fault.lab == lab and fault.costs]


@pytest.mark.heavy
def test_planted_faults_cost_only_the_tests_they_touch(runs):
    _, scores = runs["planted"]
    _, whole = runs["apart"]
    assert sorted(scores["labs"]) == list(PLANTED_LABS)
    for lab in PLANTED_LABS:
        tests = scores["labs"][lab]["tests"]
        public = [t["name"] for t in whole["labs"][lab]["tests"] if not t["hidden"]]
        assert [t["name"] for t in tests] == public, lab
        faults = expected_failures(lab)
        for test in tests:
            matching = [reason for costs, reason in faults if re.match(costs, test["name"])]
            if not matching:
                assert test["outcome"] == "passed", f"{lab}: {test['name']} should pass: {test['message']}"
                continue
            assert test["outcome"] == "failed", f"{lab}: {test['name']} should fail: {test['outcome']}"
            assert any(re.search(reason, test["message"]) for reason in matching), test["message"]
        for costs, _ in faults:  # every fault costs at least one test
            assert any(re.match(costs, t["name"]) for t in tests), f"{lab}: no test named like {costs}"


@pytest.mark.heavy
def test_a_stray_copy_is_ignored_with_a_warning(runs):
    _, scores = runs["planted"]
    assert scores["labs"]["rag4"]["file"] == "rag4-chunking.py"
    assert scores["labs"]["rag4"]["warnings"] == ["ignored 'rag4-chunking (1).py': only rag4-chunking.py is graded"]


@pytest.mark.heavy
def test_the_planted_run_reports_every_test_in_one_line(runs):
    output, scores = runs["planted"]
    for name, lab in scores["labs"].items():
        earned = sum(t["points"] for t in lab["tests"] if t["outcome"] == "passed")
        assert lab["earned"] == pytest.approx(earned, abs=0.01)
        assert re.search(rf"^  {name}\s+{lab['earned']:.2f} / 10\b", output, re.M), output[-3000:]
        for test in lab["tests"]:
            assert test["outcome"] == "passed" or test["message"], test
            assert "\n" not in test["message"] and len(test["message"]) <= 300
            assert not re.search(r"\bassert (False|True)\b", test["message"]), test["message"]
    assert scores["earned"] == pytest.approx(sum(lab["earned"] for lab in scores["labs"].values()), abs=0.01)
    # The labs printed megabytes; the run's own output stays short.
    assert len(output) < 300_000


@pytest.mark.heavy
def test_a_function_that_hangs_costs_one_time_limit(runs):
    _, scores = runs["planted"]
    for lab in ("rag4", "rag5"):
        messages = [test["message"] for test in scores["labs"][lab]["tests"] if test["outcome"] != "passed"]
        first = [m for m in messages if "timed out after" in m and "not run" not in m]
        assert len(first) == 1, messages


# ---- a folder of cheats ------------------------------------------------------------
# Each lab tries to win points without earning them, or to reach what a lab must
# not: the grader, the reference, the tests. None of it may change a verdict.

CHEATS = ("rag4", "rag5", "rag6", "rag7", "rag8")
PLANTED_BY_A_LAB = ROOT / "tests" / "grading" / "test_planted_by_a_lab.py"
PYTEST_PATCH = "import _pytest.python\n_pytest.python.Function.runtest = lambda self: None\n"


def write_cheats(folder: Path) -> None:
    """One cheating lab per lab of CHEATS, each described where it is written."""
    def lab_file(lab: str, kind: str) -> tuple[Path, str]:
        source = next((ROOT / kind).glob(f"{lab}-*.py"))
        return folder / source.name, source.read_text(encoding="utf-8")

    # rag4: the stubs, with the two lines that once skipped every test.
    path, text = lab_file("rag4", "labs")
    path.write_text(PYTEST_PATCH + text, encoding="utf-8")
    # rag5: the reference, imported from solutions/ rather than written.
    path, _ = lab_file("rag5", "labs")
    path.write_text(
        "import importlib.util\n"
        f"spec = importlib.util.spec_from_file_location('ref', {str(ROOT / 'solutions' / path.name)!r})\n"
        "reference = importlib.util.module_from_spec(spec)\nspec.loader.exec_module(reference)\n"
        "globals().update({k: v for k, v in vars(reference).items() if not k.startswith('__')})\n",
        encoding="utf-8")
    # rag6: the reference, which at import writes a test into tests/ (and hides the failure).
    path, text = lab_file("rag6", "solutions")
    path.write_text(
        f"try:\n    open({str(PLANTED_BY_A_LAB)!r}, 'w').write('def test_x(): pass\\n')\n"
        "except OSError:\n    pass\n" + text, encoding="utf-8")
    # rag7: the reference, whose make_header tries to kill the grader, and start a process.
    path, text = lab_file("rag7", "solutions")
    path.write_text(text.replace(
        'def make_header(title, section, metadata):\n',
        "def make_header(title, section, metadata):\n"
        "    import os, signal, subprocess\n"
        "    for attempt in (lambda: os.kill(os.getppid(), signal.SIGKILL),\n"
        "                    lambda: subprocess.Popen(['sleep', '600'])):\n"
        "        try:\n            attempt()\n        except OSError:\n            pass\n", 1),
        encoding="utf-8")
    # rag8: the stubs, patching the helper and the test tools the judge uses.
    path, text = lab_file("rag8", "labs")
    path.write_text(
        "import academy_llm, hypothesis, pytest\n"
        "academy_llm.check_lossless = academy_llm.check_budget = lambda *a, **k: None\n"
        "pytest.approx = lambda *a, **k: True\nhypothesis.given = lambda *a, **k: (lambda f: f)\n"
        + text, encoding="utf-8")


@pytest.mark.heavy
def test_cheats_earn_nothing_and_leave_no_trace(runs):
    _, scores = runs["cheats"]
    earned = {lab: scores["labs"][lab]["earned"] for lab in CHEATS}
    assert earned["rag4"] == earned["rag5"] == earned["rag6"] == earned["rag8"] == 0, earned
    assert not PLANTED_BY_A_LAB.exists()
    messages = {lab: {t["message"] for t in scores["labs"][lab]["tests"]} for lab in CHEATS}
    assert messages["rag5"] == {"importing rag5: the grader refused open "
                                f"{str(ROOT / 'solutions' / 'rag5-recursive-chunking.py')!r} "
                                "(closed to labs: the course's reference, tests, history, other work)"}
    assert all("for writing" in m for m in messages["rag6"]), messages["rag6"]
    rag7 = scores["labs"]["rag7"]  # header_chunks calls make_header, so both pay
    assert rag7["functions"]["make_header"]["earned"] == 0
    assert all("the grader refused" in t["message"] for t in rag7["tests"] if t["outcome"] != "passed")
    assert "refused: os.kill" in rag7["flags"], rag7["flags"]
    assert "refused: subprocess.Popen" in rag7["flags"], rag7["flags"]


CLAIMED = ("rag4", "rag5", "rag6", "rag7", "rag9")  # the labs whose chunkers tests/redteam/claimer.py fakes


@pytest.mark.heavy
@pytest.mark.parametrize("claim", ["code", "table", "section", "header"])
def test_chunks_that_claim_what_they_are_not_earn_nothing(tmp_path, claim):
    """The stubs, each chunker returning the whole text as one chunk flagged oversize (tests/redteam/claimer.py):
    a code block, a table, a made-up heading path or a header, all claimed. The grader derives each from the
    text, so not one function that calls a chunker earns a point."""
    folder = tmp_path / f"claimer-{claim}"
    folder.mkdir()
    for lab in CLAIMED:
        (folder / lab_file(lab)).write_text(lab_source(lab, "claimer", {"claim": claim}), encoding="utf-8")
    tests = [str(path.relative_to(ROOT)) for lab in CLAIMED
             for path in sorted((ROOT / "tests" / "grading").rglob(f"test_{lab}*.py"))]
    _, scores = Grading(folder, tmp_path, tests, options=("--time-floor", str(TIME_FLOOR))).result()
    won = {f"{lab}.{function}": round(entry["earned"], 2) for lab in CLAIMED
           for function, entry in scores["labs"][lab]["functions"].items() if entry["earned"]}
    assert not won, f"claiming {claim!r} won {sum(won.values()):.2f} points: {won}"


@pytest.mark.heavy
@pytest.mark.skipif(not os.path.isdir("/proc"), reason="reads processes from Linux's /proc")
def test_killing_the_grader_leaves_no_worker_behind(tmp_path):
    """However the grader ends (here SIGKILL, which it cannot catch), its workers end with it."""
    lab = tmp_path / "rag4-chunking.py"
    lab.write_text("def word_windows(text, size, overlap=0):\n    while True:\n        pass\n")
    grader = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/grading/test_rag4.py",
         "--lab-dir", str(tmp_path)], cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        workers = wait_for(lambda: children_running("worker.py", grader.pid), seconds=120)
        assert workers, "the grader started no worker"
    finally:
        grader.send_signal(signal.SIGKILL)
        grader.wait()
    assert wait_for(lambda: not any(alive(pid) for pid in workers), seconds=30), "a worker outlived the grader"


def children_running(name: str, parent: int) -> list[int]:
    """Pids of the processes whose parent is `parent` and whose command line holds `name`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                status = (entry / "status").read_text()
                command = (entry / "cmdline").read_bytes().decode(errors="replace")
            except OSError:
                continue
            if re.search(rf"^PPid:\s*{parent}$", status, re.M) and name in command:
                found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its parent's wait counts as ended)."""
    try:
        return "\nState:\tZ" not in Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False


def wait_for(condition, seconds: float):
    """`condition()` once it is true, polled for up to `seconds`; its last value otherwise."""
    deadline = time.monotonic() + seconds
    while True:
        value = condition()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


# ---- a student's own labs, as in the handout ----------------------------------------
# A stub rag4 under a rag5 that lets chunks run 8 tokens over budget, a stub rag6
# whose verify was renamed, and a rag9 that is not Python: each lab is
# graded on the student's own earlier labs.

OWN_LABS = ("rag4", "rag5", "rag6", "rag9")


def write_own_labs(folder: Path) -> None:
    shutil.copy(ROOT / "labs" / "rag4-chunking.py", folder)
    text = (ROOT / "labs" / "rag6-markdown-chunking.py").read_text(encoding="utf-8")
    assert text.count("def verify(") == 1, "the renamed function no longer fits rag6"
    text = text.replace("def verify(", "def verify_renamed(")
    (folder / "rag6-markdown-chunking.py").write_text(text, encoding="utf-8")
    text = (ROOT / "solutions" / "rag5-recursive-chunking.py").read_text(encoding="utf-8")
    for budget in ("        if chunks and total + tokens <= max_tokens:\n",
                   "        if n_tokens <= max_tokens:\n            chunks.append("):
        assert text.count(budget) == 1, "the planted budget fault no longer fits rag5"
        text = text.replace(budget, budget.replace("max_tokens:", "max_tokens + 8:"))
    (folder / "rag5-recursive-chunking.py").write_text(text, encoding="utf-8")
    (folder / "rag9-semantic-chunking.py").write_text("def window_texts(:\n", encoding="utf-8")


@pytest.mark.heavy
def test_a_later_lab_says_which_of_the_students_own_labs_to_finish(runs):
    _, scores = runs["own"]
    messages = {t["message"] for t in scores["labs"]["rag5"]["tests"]}
    assert any(m.endswith("rag5 builds on your rag4, which stops at TODO(rag4) token_windows(); "
                          "finish rag4 first") for m in messages), messages


MESSAGES = ROOT / "docs" / "instructors.md"


def message_table() -> dict[str, str]:
    """{what happened: the message} from the instructors' page's table of failure messages."""
    return code_table(MESSAGES.read_text(encoding="utf-8").split("## 6. What a failure message means", 1)[1])


@pytest.mark.heavy
def test_every_kind_of_message_in_the_table_is_what_the_grader_says(runs):
    said = [t["message"] for name in ("planted", "cheats", "own")
            for lab in runs[name][1]["labs"].values() for t in lab["tests"]]
    table = message_table()
    assert len(table) >= 12
    for situation, message in table.items():
        pattern = re.compile(".+?".join(re.escape(part) for part in message.split("…")))
        assert any(pattern.fullmatch(m) for m in said), f"{situation}: nothing like {message!r}"
