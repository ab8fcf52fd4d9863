"""The grader itself: honest on stubs, complete on the reference, unshaken by faulty labs."""

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GRADING = ("tests/grading",)

pytestmark = pytest.mark.timeout(600)  # each test here grades whole folders in fresh pytest runs


class Grading:
    """A fresh pytest grading the tests `tests` on `lab_dir`, started now, its output in `folder`."""

    def __init__(self, lab_dir: Path, folder: Path, tests=GRADING, options=()):
        self.report = folder / f"{lab_dir.name}.json"
        self.output = folder / f"{lab_dir.name}.out"
        with open(self.output, "w") as output:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
                 "--lab-dir", str(lab_dir), "--grade-json", str(self.report), *options],
                cwd=ROOT, stdout=output, stderr=subprocess.STDOUT,
            )

    def result(self) -> tuple[str, dict]:
        """(what the run printed, its JSON report), once it has finished."""
        status = self.process.wait(timeout=600)
        output = self.output.read_text()
        assert status in (0, 1), f"the run was cut short (exit status {status}):\n{output[-3000:]}"
        return output, json.loads(self.report.read_text())


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The reference, the stubs and a folder of planted faults, graded side by side."""
    planted = tmp_path_factory.mktemp("planted")
    plant(planted)
    out = tmp_path_factory.mktemp("grades")
    started = {
        "solutions": Grading(ROOT / "solutions", out),
        "labs": Grading(ROOT / "labs", out),
        "planted": Grading(planted, out, [f"tests/grading/test_{lab}.py" for lab in PLANTED_LABS],
                           options=("--timeout", str(TIME_LIMIT))),
    }
    return {name: grading.result() for name, grading in started.items()}


@pytest.fixture(scope="module")
def reports(runs):
    return runs["solutions"][1], runs["labs"][1]


def test_reference_solutions_earn_every_point(reports):
    solutions, _ = reports
    assert solutions["possible"] > 0
    assert solutions["earned"] == solutions["possible"], [
        t for lab in solutions["labs"].values() for t in lab["tests"] if t["outcome"] != "passed"
    ]


def test_every_grading_test_fails_on_the_student_stubs(reports):
    """The inverted check: a test that passes on a stub asserts nothing."""
    solutions, stubs = reports
    assert set(stubs["labs"]) == set(solutions["labs"])
    for name, lab in stubs["labs"].items():
        passing = [t["name"] for t in lab["tests"] if t["outcome"] == "passed"]
        assert not passing, f"{name}: these grading tests pass on the stubs: {passing}"
        assert lab["earned"] == 0 and lab["possible"] == solutions["labs"][name]["possible"]
        assert all("TODO(" in t["message"] for t in lab["tests"]), "a stub failure should name its TODO"


# ---- a folder of planted faults ------------------------------------------------
# Each fault is a targeted edit of a reference solution, made in a copy. It must
# cost exactly the tests it touches (`costs`, a pattern of test names), each
# failing with a one-line reason matching `reason`; every other test passes.
# rag6 is left out of the folder altogether, and rag7, which builds on rag6 and
# rag5, must still earn its points on every test no fault touches.

PLANTED_LABS = ("rag4", "rag5", "rag6", "rag7")
TIME_LIMIT = 4  # seconds per test in the planted run; the reference needs well under one


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
    Fault("rag4", "word_windows loops forever on one input, swallowing every exception",
          old="    words = [(match.start(), match.end())",
          new=("    while text.endswith('seven'):\n        try:\n            import time; time.sleep(0.01)\n"
               "        except BaseException:\n            pass\n    words = [(match.start(), match.end())"),
          costs=r"test_word_windows_small_example$", reason=rf"^timed out after {TIME_LIMIT} s during call"),
    Fault("rag4", "word_windows rebinds academy_llm.count_tokens on one input",
          old="    chunks = []\n    for first in range(0, len(words), size - overlap):",
          new=("    if text == 'chunk chunk chunk chunk chunk':\n        import academy_llm; academy_llm.count_tokens = len\n"
               "    chunks = []\n    for first in range(0, len(words), size - overlap):"),
          costs=r"test_word_windows_repeated_words", reason=r"^the lab changed academy_llm \(count_tokens\)"),
    Fault("rag4", "token_windows is missing entirely",
          old="def token_windows(", new="def renamed_token_windows(",
          costs=r"test_token_windows_", reason=r"has no attribute 'token_windows'"),
    Fault("rag5", "the lab loops forever when imported: one time limit, then the rest of its tests at once",
          old='rag4 = load_lab("rag4")', new='rag4 = load_lab("rag4")\nwhile True:\n    pass',
          costs=r".", reason=rf"^(timed out after {TIME_LIMIT} s during setup|not run: the set-up timed out)"),
    Fault("rag7", "header_chunks raises on one input",
          old="    if metadata is None:\n",
          new="    if title == 'Docs':\n        raise RuntimeError('planted')\n    if metadata is None:\n",
          costs=r"test_explicit_metadata_replaces", reason=r"^RuntimeError: planted$"),
    Fault("rag7", "header_chunks calls sys.exit on one input",
          old="    if metadata is None:\n",
          new="    if max_tokens == 20:\n        import sys; sys.exit(3)\n    if metadata is None:\n",
          costs=r"test_a_header_longer_than_the_budget", reason=r"^the lab called sys\.exit\(3\)"),
    Fault("rag7", "header_chunks calls os._exit on one input",
          old="    if metadata is None:\n",
          new="    if 'rather long' in text:\n        import os; os._exit(7)\n    if metadata is None:\n",
          costs=r"test_the_header_counts_against", reason=r"exit status 7 .*os\._exit"),
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


def expected_failures(lab: str) -> list[tuple[str, str]]:
    """(test-name pattern, reason pattern) of the faults planted in `lab`."""
    if lab == MISSING_LAB:
        return [(r".", rf"^FileNotFoundError: expected one {lab}-\*\.py.* in .*, found none$")]
    return [(fault.costs, fault.reason) for fault in FAULTS if fault.lab == lab and fault.costs]


def test_planted_faults_cost_only_the_tests_they_touch(runs):
    _, scores = runs["planted"]
    _, reference = runs["solutions"]
    assert sorted(scores["labs"]) == list(PLANTED_LABS)
    for lab in PLANTED_LABS:
        tests = scores["labs"][lab]["tests"]
        assert [t["name"] for t in tests] == [t["name"] for t in reference["labs"][lab]["tests"]], lab
        faults = expected_failures(lab)
        for test in tests:
            matching = [reason for costs, reason in faults if re.match(costs, test["name"])]
            if not matching:
                assert test["outcome"] == "passed", f"{lab}: {test['name']} should pass: {test['message']}"
                continue
            assert test["outcome"] in ("failed", "error"), f"{lab}: {test['name']} should fail"
            assert any(re.search(reason, test["message"]) for reason in matching), test["message"]
        for costs, _ in faults:  # every fault costs at least one test
            assert any(re.match(costs, t["name"]) for t in tests), f"{lab}: no test named like {costs}"


def test_the_planted_run_reports_every_test_in_one_line(runs):
    output, scores = runs["planted"]
    for name, lab in scores["labs"].items():
        earned = sum(1 for t in lab["tests"] if t["outcome"] == "passed")
        assert lab["earned"] == earned and lab["possible"] == len(lab["tests"])
        assert re.search(rf"^  {name}\s+{earned} / {len(lab['tests'])}\s*$", output, re.M), output[-3000:]
        for test in lab["tests"]:
            assert test["outcome"] == "passed" or test["message"], test
            assert "\n" not in test["message"] and len(test["message"]) <= 200
    assert scores["earned"] == sum(lab["earned"] for lab in scores["labs"].values())
    # The labs printed megabytes; the run's own output stays short.
    assert len(output) < 300_000


def test_a_lab_that_hangs_when_imported_costs_one_time_limit(runs):
    _, scores = runs["planted"]
    messages = [test["message"] for test in scores["labs"]["rag5"]["tests"]]
    assert sum(message.startswith("timed out") for message in messages) == 1, messages
