"""The mutation study: does a lab notice a student's mistake, and does the grader?

Each mutation (tests/mutations.py) is one realistic mistake in one
student-written function. For each, a copy of solutions/ gets the mistake, and

- the mutated lab is run as a student runs it (offline, from its own folder):
  its own checks must fail, so it exits non-zero;
- the grader grades it: the lab must lose points.

The catch rates (the labs' own checks, the grader) are printed at the end of
the run and written, mistake by mistake, to test-output/mutations.md.

Running a lab takes seconds, so the study is in the deeper tier: `pytest -m heavy
tests/test_mutations.py` studies every mutation, once. Jobs run two at a time;
the grader grades one mutant of each lab per run, so a handful of grader runs
grade them all.
"""

import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from scratch import temporary_folder
from mutations import MUTATIONS, Mutation
from offline import run_offline

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
REPORT = ROOT / "test-output" / "mutations.md"
PARALLEL_JOBS = 2

pytestmark = pytest.mark.timeout(900)  # the whole study runs in the first test's set-up


def solution_file(lab: str) -> Path:
    return next(SOLUTIONS.glob(f"{lab}-*.py"))


def mutated_source(mutation: Mutation) -> str:
    """The lab's solution file with the mistake made."""
    source = solution_file(mutation.lab).read_text(encoding="utf-8")
    return source.replace(mutation.old, mutation.new)


# ---- every mutation is a small change inside the function it names ----------


def answer_region_function(source: str, offset: int) -> str | None:
    """The function whose answer region (# BEGIN SOLUTION ... # END SOLUTION) holds `offset`."""
    begin = source.rfind("# BEGIN SOLUTION", 0, offset)
    if begin < 0 or source.rfind("# END SOLUTION", 0, offset) > begin:
        return None
    return re.findall(r"^\s*def (\w+)\(", source[:begin], re.M)[-1]


@pytest.mark.parametrize("mutation", MUTATIONS, ids=lambda m: m.name)
def test_a_mutation_changes_one_place_in_a_student_written_function(mutation):
    source = solution_file(mutation.lab).read_text(encoding="utf-8")
    assert source.count(mutation.old) == 1, "`old` must occur exactly once in the solution"
    assert mutation.old != mutation.new
    place = source.index(mutation.old)
    for offset in (place, place + len(mutation.old) - 1):
        assert answer_region_function(source, offset) == (None if mutation.given else mutation.function)
        assert re.findall(r"^def (\w+)\(", source[:offset], re.M)[-1] == mutation.function
    compile(mutated_source(mutation), mutation.lab, "exec")


def test_every_lab_has_a_mutation_and_names_are_unique():
    labs = {path.name.split("-")[0] for path in SOLUTIONS.glob("rag*-*.py")}
    assert {m.lab for m in MUTATIONS} == labs
    assert len({m.name for m in MUTATIONS}) == len(MUTATIONS)
    assert GRADER_MISSES <= {m.name for m in MUTATIONS}


# ---- the study ----------------------------------------------------------------


@dataclass
class Outcome:
    """What the lab and the grader made of one mutation."""

    mutation: Mutation
    lab_exit: int = 0
    lab_says: str = ""  # the lab's first FAIL (and the call it names), else its last error line
    points_lost: float = 0.0
    grader_says: str = ""  # the first grading test that failed, and why


def lab_verdict(result: subprocess.CompletedProcess) -> str:
    """What a learner reads first: the first FAIL, else the last line of stderr."""
    lines = result.stdout.splitlines()
    for number, line in enumerate(lines):
        if line.strip().startswith("FAIL"):  # and the call that shows it, if it says one
            call = lines[number + 1].strip() if number + 1 < len(lines) else ""
            return line.strip() + (f" {call}" if call.startswith("on ") else "")
    errors = [line for line in result.stderr.splitlines() if line.strip()]
    return errors[-1].strip() if errors else ""


def run_lab(outcome: Outcome, folder: Path) -> None:
    """Run the mutated lab from a folder holding it and the reference's other labs."""
    folder.mkdir()
    for path in SOLUTIONS.glob("rag*-*.py"):
        shutil.copy(path, folder)
    mutant = folder / solution_file(outcome.mutation.lab).name
    mutant.write_text(mutated_source(outcome.mutation), encoding="utf-8")
    # wordllama, not the default minilm: a mutant cuts chunks the course ships no vectors for, and the
    # labs' checks hold under either embedder (each lab is checked under both), so the verdict is the same
    result = run_offline(mutant, folder, env={**os.environ, "ACADEMY_EMBEDDER": "wordllama"})
    outcome.lab_exit, outcome.lab_says = result.returncode, lab_verdict(result)


def grade(outcomes: list, folder: Path) -> None:
    """Grade a folder holding one mutant per lab (earlier labs come from solutions/)."""
    folder.mkdir()
    for outcome in outcomes:
        path = folder / solution_file(outcome.mutation.lab).name
        path.write_text(mutated_source(outcome.mutation), encoding="utf-8")
    tests = [f"tests/grading/test_{outcome.mutation.lab}.py" for outcome in outcomes]
    report_file = folder / "grades.json"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests,
         "--lab-dir", str(folder), "--grade-json", str(report_file)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    labs = json.loads(report_file.read_text())["labs"] if report_file.is_file() else {}
    for outcome in outcomes:
        lab = labs.get(outcome.mutation.lab)
        if lab is None:
            outcome.grader_says = "the grader wrote no report"
            continue
        outcome.points_lost = round(lab["possible"] - lab["earned"], 2)
        failed = [test for test in lab["tests"] if test["outcome"] != "passed"]
        if failed:
            outcome.grader_says = f"{failed[0]['name']}: {failed[0]['message']}"


def grading_batches(outcomes: list) -> list:
    """Outcomes in batches holding at most one mutant of each lab."""
    batches = []
    for outcome in outcomes:
        batch = next((b for b in batches if outcome.mutation.lab not in
                      {o.mutation.lab for o in b}), None)
        if batch is None:
            batches.append(batch := [])
        batch.append(outcome)
    return batches


def run_study(mutations: list, folder: Path) -> list:
    """Run and grade every mutant, PARALLEL_JOBS at a time, the longest jobs (grading) first."""
    outcomes = [Outcome(mutation) for mutation in mutations]
    jobs = [(grade, batch, folder / f"graded-{number}")
            for number, batch in enumerate(grading_batches(outcomes))]
    jobs += [(run_lab, outcome, folder / f"run-{number}")
             for number, outcome in enumerate(outcomes)]
    with ThreadPoolExecutor(PARALLEL_JOBS) as pool:
        for job in [pool.submit(*job) for job in jobs]:
            job.result()
    return outcomes


def catch_rates(outcomes: list) -> str:
    """'the labs' own checks caught 33/34 (97%), the grader 34/34 (100%)'."""
    def rate(caught):
        return f"{caught}/{len(outcomes)} ({100 * caught / len(outcomes):.0f}%)"
    by_lab = sum(o.lab_exit != 0 for o in outcomes)
    by_grader = sum(o.points_lost > 0 for o in outcomes)
    return f"the labs' own checks caught {rate(by_lab)}, the grader {rate(by_grader)}"


def write_report(outcomes: list) -> None:
    """test-output/mutations.md: every mistake, and what the lab and the grader said of it."""
    lines = ["# Mutation study", "", catch_rates(outcomes) + ".", "",
             "| mistake | the lab says | the grader says |", "|---|---|---|"]
    for o in outcomes:
        lab = f"exit {o.lab_exit}: {o.lab_says}" if o.lab_exit else "**passes**"
        grader = (f"-{o.points_lost:g} points: {o.grader_says}" if o.points_lost
                  else "**full marks**")
        cells = [o.mutation.name, lab, grader]
        lines.append("| " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    REPORT.parent.mkdir(exist_ok=True)
    written = REPORT.with_name(f".{REPORT.name}.{os.getpid()}")  # whole, then in place: a run beside it writes too
    written.write_text("\n".join(lines) + "\n", encoding="utf-8")
    os.replace(written, REPORT)


def study_summary(outcomes: list) -> list:
    """The lines the run ends with: the catch rates, and the mistakes missed."""
    lines = [catch_rates(outcomes) + f"; details in {REPORT}"]
    for o in outcomes:
        if o.lab_exit == 0:
            lines.append(f"  the lab misses {o.mutation.name}")
        if o.points_lost == 0:
            lines.append(f"  the grader misses {o.mutation.name}")
    return lines


def selected_mutations(session) -> list:
    """The mutations whose study tests this run selected (every one with -m heavy; -k picks some)."""
    chosen = []
    for item in session.items:
        mutation = getattr(item, "callspec", None) and item.callspec.params.get("studied")
        if mutation is not None and mutation not in chosen:
            chosen.append(mutation)
    return chosen


EARLY: dict = {}  # "study" -> the study's future, started right after collection


def start_early(session) -> None:
    """Start the study in the background now, if this run studies any mutation; the `study` fixture
    waits for it."""
    if not selected_mutations(session):
        return
    folder = temporary_folder("mutants-")
    EARLY["study"] = ThreadPoolExecutor(max_workers=1).submit(
        run_study, selected_mutations(session), folder)


@pytest.fixture(scope="module")
def study(request, tmp_path_factory) -> dict:
    """{mutation: Outcome} for every mutation this run studies, all run at once."""
    early = EARLY.pop("study", None)
    outcomes = early.result() if early else run_study(
        selected_mutations(request.session), tmp_path_factory.mktemp("mutants"))
    write_report(outcomes)
    request.config.pluginmanager.getplugin("closing-sections").add("mutation study", study_summary(outcomes))
    return {outcome.mutation: outcome for outcome in outcomes}


# Mistakes the grading tests are known to miss (none now): a grader test of one is expected
# to fail, strictly, so once the grading tests catch it, its name must come out.
GRADER_MISSES: set = set()


def studied(known_misses=frozenset()) -> list:
    """The mutations as test parameters, in the deeper tier; a test of one in `known_misses` is
    expected to fail."""
    params = []
    for mutation in MUTATIONS:
        marks = [pytest.mark.heavy]
        if mutation.name in known_misses:
            marks.append(pytest.mark.xfail(reason="a known miss", strict=True))
        params.append(pytest.param(mutation, id=mutation.name, marks=marks))
    return params


@pytest.mark.parametrize("studied", studied())
def test_the_lab_notices_the_mistake(studied, study):
    outcome = study[studied]
    assert outcome.lab_exit != 0, "the mutated lab passes its own checks"
    assert outcome.lab_says.startswith("FAIL"), f"the lab stops without a FAIL line: {outcome.lab_says}"


@pytest.mark.parametrize("studied", studied(GRADER_MISSES))
def test_the_grader_notices_the_mistake(studied, study):
    outcome = study[studied]
    assert outcome.points_lost > 0, f"the grader gives full marks ({outcome.grader_says})"
