"""The labs as a student meets them: solutions pass offline, stubs stop at a TODO with its first
hint and give the next levels on request (`--hint`), labs/ in sync; and the docs quote what the
solutions print, and their images show what they make (tools/make_docs.py)."""

import ast
import json
import importlib.util
import os
import re
import subprocess
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import labkit
import labkit.cases
import pytest
from scratch import temporary_folder
from offline import LAB_RUN_LIMIT, run_offline, student_lab_run, vectors_kept

ROOT = Path(__file__).resolve().parent.parent
# In the course's order: rag10 after rag9 (as text, "rag10" sorts before "rag4").
SOLUTIONS = sorted((ROOT / "solutions").glob("rag*-*.py"), key=lambda path: int(path.stem.split("-")[0][3:]))

# What a chunking lab shows when run as a script: its chunks on the text (in
# plain text here, since the output is a pipe), and the plots it saves.
CHUNK_VIEW = re.compile(r"\{#\d+ \[\d+, \d+\) \d+ tokens")
LABS_WITH_A_CHUNK_VIEW = ("rag4", "rag5", "rag6", "rag7")
PLOTS = {"rag5": "rag5-chunk-sizes.png", "rag6": "rag6-chunk-sizes.png"}
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def make_labs():
    spec = importlib.util.spec_from_file_location("make_labs", ROOT / "tools" / "make_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_docs():
    spec = importlib.util.spec_from_file_location("make_docs", ROOT / "tools" / "make_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


DOCS = make_docs()  # what the docs quote from the labs; what docs/'s images say they show


@dataclass(frozen=True)
class LabRun:
    """A solution lab's run: what it printed, and the folder it ran in (where its plots are)."""

    result: subprocess.CompletedProcess
    folder: Path


@pytest.fixture(scope="module")
def solution_run(tmp_path_factory):
    """A solution lab run offline, once: its test and the checks of the docs share the run.

    The runs were started right after collection (start_early), two at a time,
    the slowest first; a lab no run started is run here.
    """
    def run(lab: str) -> LabRun:
        if lab not in STARTED:
            STARTED[lab] = LAB_RUNS.submit(run_solution, lab, tmp_path_factory.mktemp(lab))
        return STARTED[lab].result()

    return run


STARTED: dict = {}  # lab -> the future of its one run
# A finished lab asked for a hint runs whole, then says that no TODO is left: so rag4 (the quickest lab) is run
# that way, once, and its run is read by its solution's test as well (every other lab is run without arguments).
HINT_RUN = ("rag4", ("--hint", "2"))
# How long a test may wait for its lab's run: the eight runs share two workers and the machine with the
# rest of the tests (and, in CI, with another run of them), so the wait is generous; the runs' own speed
# is measured in the benchmark, not here.
LAB_WAIT = 2 * LAB_RUN_LIMIT + 60
LAB_RUNS = ThreadPoolExecutor(max_workers=2)


def run_solution(lab: str, folder: Path) -> LabRun:
    """The lab run from `folder`, with an embedding cache of its own there (folder/cache), empty at the start."""
    (solution,) = (path for path in SOLUTIONS if path.stem.startswith(f"{lab}-"))
    args = HINT_RUN[1] if lab == HINT_RUN[0] else ()
    env = {**os.environ, "ACADEMY_CACHE_DIR": str(folder / "cache")}
    return LabRun(run_offline(solution, folder, env=env, args=args), folder)


def start_early(session) -> None:
    """Start the run of every solution lab a selected test reads, now, the later labs (the slowest) first."""
    wanted = set().union(*(labs_read_by(item) for item in session.items
                           if item.module.__name__ == __name__ and "solution_run" in item.fixturenames))
    for lab in sorted(wanted, key=lambda lab: -int(lab[3:])):
        STARTED[lab] = LAB_RUNS.submit(run_solution, lab, temporary_folder(f"{lab}-"))


def labs_read_by(item) -> set:
    """The solution labs whose run a test of this module reads."""
    params = getattr(item, "callspec", None)
    params = params.params if params else {}
    if "solution" in params:
        return {params["solution"].stem.split("-")[0]}
    if "block" in params:
        return set() if params["block"].lab.endswith(DOCS.STUB) else {params["block"].lab}
    if item.originalname == "test_the_images_of_docs_show_what_the_labs_make":
        return {"rag5", "rag6"}
    return {HINT_RUN[0]}


# The default tier runs rag4 (the quickest lab, with --hint) and the checks that read its run; every other
# solution lab runs in the heavy tier, which CI runs too: about 40 s of CPU that a developer's quick
# `pytest` need not pay, since it grades every reference lab in full all the same (test_grader).
QUICK_RUNS = (HINT_RUN[0],)


def heavy_unless_quick(lab: str, value, name: str):
    """`value` as a parameter, in the heavy tier unless `lab`'s run is one of QUICK_RUNS."""
    return pytest.param(value, id=name, marks=() if lab in QUICK_RUNS else pytest.mark.heavy)


@pytest.mark.parametrize("solution", [heavy_unless_quick(p.stem.split("-")[0], p, p.stem) for p in SOLUTIONS])
@pytest.mark.timeout(LAB_WAIT)
def test_solution_lab_passes_offline(solution, solution_run):
    lab = solution.stem.split("-")[0]
    run = solution_run(lab)
    result = run.result
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "all invariants hold" in result.stdout
    if lab in LABS_WITH_A_CHUNK_VIEW:
        assert CHUNK_VIEW.search(result.stdout), f"{lab} shows no chunks on their text"
        assert "\x1b[" not in result.stdout, "ANSI colours sent to a pipe"
    if lab in PLOTS:
        plot = run.folder / PLOTS[lab]  # saved in the folder the lab was run from
        saved = plot.is_file() and plot.read_bytes().startswith(PNG_SIGNATURE)
        assert saved, f"{lab} saved no {plot.name}"
    # Every text the reference embeds ships in embeddings/ (tools/make_course_vectors.py): a learner whose
    # chunks match it embeds nothing, and the lab keeps within its CPU budget.
    kept = vectors_kept(run.folder / "cache")
    assert kept == 0, f"{lab} embedded {kept} texts embeddings/ lacks: run python tools/make_course_vectors.py"


# --------------------------------------------------------------------------
# The docs quote the labs (README.md, benchmarks/README.md, the handout's README: make_docs.PAGES),
# and the images of docs/ show what they make
# --------------------------------------------------------------------------
# Checked against the runs above (no lab runs again) with tools/make_docs.py's
# own code, so that this test and the tool cannot disagree on what is stale.

QUOTED_BLOCKS = DOCS.quoted_blocks(DOCS.read_pages())  # every quote, whichever page it is on
REFRESH = "run: python tools/make_docs.py"


@pytest.mark.parametrize("block", [heavy_unless_quick(block.lab, block, f"{block.lab}-{block.name}")
                                   for block in QUOTED_BLOCKS])
@pytest.mark.timeout(LAB_WAIT)
def test_the_docs_quote_what_the_lab_prints(block, solution_run, tmp_path):
    if block.lab.endswith(DOCS.STUB):  # the student's lab, which stops at its first TODO at once
        stdout = DOCS.run_labs([block.lab], tmp_path)[block.lab]
    else:
        stdout = solution_run(block.lab).result.stdout
    absent = block.quote.absent(stdout)
    if absent:
        pytest.skip(f"{block.lab} printed {absent!r}: nothing to check the quote against")
    printed = block.quote.content(stdout)
    assert block.content == printed, f"{block.page}'s {block.marker} is stale; {REFRESH}"


@pytest.mark.heavy
@pytest.mark.timeout(LAB_WAIT)
def test_the_images_of_docs_show_what_the_labs_make(solution_run):
    """docs/chunk-sizes.png says it shows what rag6's plot of this run does, and
    docs/chunk-view.png carries the sha256 of the plain view rag5 printed."""
    stale = DOCS.stale_images(solution_run("rag5").result.stdout, solution_run("rag6").folder)
    assert not stale, f"{'; '.join(stale)}; {REFRESH}"


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_student_lab_stops_at_its_first_todo(solution):
    lab = solution.stem.split("-")[0]
    result = student_lab_run(ROOT / "labs" / solution.name)
    assert result.returncode == 1
    assert f"TODO({lab})" in result.stderr and "-> fill in" in result.stderr
    assert f"More help: python labs/{solution.name} --hint 2" in result.stderr
    assert "Traceback" not in result.stderr


def test_labs_folder_matches_solutions():
    stale = make_labs().stale_labs()
    assert not stale, f"labs/ is out of date ({stale}); run: python tools/make_labs.py"


# --------------------------------------------------------------------------
# The generator: an answer region, its hints in three levels, malformed ones
# --------------------------------------------------------------------------

REGION = (
    "def f(x):\n"
    '    """Double x."""\n'
    "    # BEGIN SOLUTION\n"
    "    # hint 1: Give twice x, because\n"
    "    # hint 1: the caller needs it.\n"
    "    # hint 2: Multiply, do not add in a loop.\n"
    "    # hint 3: return 2 * x\n"
    "    return 2 * x\n"
    "    # END SOLUTION\n"
    "\n"
    "\n"
    "# %%\n"
    'if __name__ == "__main__":\n'
    "    print(f(1))\n"
)
MORE_HELP = "More help: python labs/rag9-demo.py --hint 2, or show_hint(2) in a notebook."


def region(*hint_lines: str, code: str = "    return 1\n") -> str:
    """A solution whose one region is led by `hint_lines`, then holds `code`."""
    hints = "".join(f"    {line}\n" for line in hint_lines)
    return f"def f():\n    # BEGIN SOLUTION\n{hints}{code}    # END SOLUTION\n"


def names_of(stub: str) -> dict:
    """The names a stub defines, as a student's run of it would have them."""
    namespace = {"__name__": "stub"}
    exec(stub, namespace)
    return namespace


def test_generator_turns_a_region_into_a_stub_that_shows_level_1_and_keeps_the_rest():
    stub = make_labs().student_version(REGION, "rag9-demo.py")
    function, hints = stub.split("# ## Hints")
    assert "2 * x" not in function, "the reference code is gone"
    goal = "Give twice x, because the caller needs it."
    assert f"    # TODO(rag9): {goal}\n    #   {MORE_HELP}\n" in function
    assert "Multiply" not in stub, "level 2 is asked for, not shown, in the lab nor its hints cell"
    assert hints.index('HINTS = lab_hints("rag9")') < hints.index('if __name__ == "__main__":'), "read before"
    namespace = names_of(stub)
    with pytest.raises(NotImplementedError) as error:
        namespace["f"](1)
    assert str(error.value) == f"TODO(rag9) f(): {goal} {MORE_HELP}"
    _, levels = make_labs().student_files(REGION, "rag9-demo.py")
    assert json.loads(levels) == {"f": {"1": goal, "2": "Multiply, do not add in a loop.", "3": "return 2 * x"}}


def test_a_region_with_level_1_alone_offers_no_more_help():
    stub, levels = make_labs().student_files(region("# hint 1: Say yes."), "rag9-demo.py")
    assert "More help" not in stub
    assert json.loads(levels) == {"f": {"1": "Say yes."}}


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_every_todo_shows_its_level_1_and_carries_three_levels(solution):
    stub, levels = make_labs().student_files(solution.read_text(encoding="utf-8"), solution.name)
    assert "BEGIN SOLUTION" not in stub and "END SOLUTION" not in stub, "refused by the handout"
    hints = {function: {int(level): text for level, text in texts.items()}
             for function, texts in json.loads(levels).items()}
    raises = [node for node in ast.walk(ast.parse(stub)) if isinstance(node, ast.Raise)
              and getattr(getattr(node.exc, "func", None), "id", "") == "NotImplementedError"]
    raised = [node.exc.args[0].value for node in sorted(raises, key=lambda node: node.lineno)]
    assert [re.match(r"TODO\(\w+\) (\w+)\(\)", text).group(1) for text in raised] == list(hints)
    for message, (function, levels) in zip(raised, hints.items()):
        assert sorted(levels) == [1, 2, 3], f"{function}() needs all three levels"
        more = f"More help: python labs/{solution.name} --hint 2, or show_hint(2) in a notebook."
        assert message.endswith(f"{function}(): {levels[1]} {more}")


@pytest.mark.parametrize(
    "source, problem",
    [
        ("# BEGIN SOLUTION\n# hint 1: h\nx = 1\n# END SOLUTION\n", "inside a function"),
        ("def f():\n    # BEGIN SOLUTION\n    # hint 1: h\n    return 1\n", "never closed"),
        (region(), "a region needs '# hint 1: ...' lines"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "without"),
        (region("# hint: h"), "a hint line is '# hint N: text'"),
        (region("# hint 4: h"), "a hint line is '# hint N: text'"),
        (region("# hint 2: h"), "hint 2 where hint 1 should come"),
        (region("# hint 1: h", "# hint 3: h"), "hint 3 where hint 1 or 2 should come"),
        (region("# hint 1: h", "# hint 2: h", "# hint 1: h"), "hint 1 where hint 2 or 3 should"),
        (region("# hint 1:"), "hint 1 is empty"),
        (region("# hint 1: h", code="    return 1\n    # hint 2: h\n"), "right after"),
        (region("# hint 1: never write END SOLUTION here"), "must not hold a region marker"),
        (region("# hint 1: h") + "    # BEGIN SOLUTION\n    # hint 1: h\n    # END SOLUTION\n",
         "a second answer region in f()"),
    ],
)
def test_generator_rejects_malformed_regions(source, problem):
    generator = make_labs()
    with pytest.raises(generator.RegionError, match=re.escape(problem)):
        generator.student_version(source, "rag9-demo.py")


# --------------------------------------------------------------------------
# Asking for more: `--hint`, run as a student runs it
# --------------------------------------------------------------------------

RAG5 = "rag5-recursive-chunking.py"


def test_no_hint_beyond_level_1_is_in_a_lab_or_its_notebook():
    """Levels 2 and 3 are asked for (--hint, show_hint), never met while reading the lab."""
    readable = [path.read_text(encoding="utf-8") for path in [*(ROOT / "labs").glob("rag*-*.py"),
                                                            *(ROOT / "notebooks" / "labs").glob("*.ipynb")]]
    for hints in (ROOT / "labs" / "hints").glob("*.json"):
        for function, levels in json.loads(hints.read_text(encoding="utf-8")).items():
            for level in ("2", "3"):
                sample = levels[level][:60]
                assert not any(sample in text or json.dumps(sample)[1:-1] in text for text in readable), (
                    f"{hints.name}: hint {level} of {function}() is in a lab or a notebook")


def rag5_hints() -> dict:
    """The hints of the student rag5, read from the lab itself, as a student has them."""
    return labkit.load_lab("rag5", ROOT / "labs").HINTS


def words(text: str) -> str:
    """`text` with every run of spaces and line breaks as one space: a hint is printed wrapped."""
    return " ".join(text.split())


@pytest.mark.parametrize("level", [2, 3])
def test_hint_shows_that_level_for_the_todo_where_the_lab_stops(level, tmp_path):
    plain = student_lab_run(ROOT / "labs" / RAG5)
    stopped_at = re.search(r"^TODO\(rag5\) (\w+)\(\)", plain.stderr, re.M).group(1)
    result = run_offline(ROOT / "labs" / RAG5, tmp_path, args=("--hint", str(level)))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert plain.stderr.strip() in result.stderr, "the TODO and where to fill it in, as before"
    assert f"Hint {level} of 3 for {stopped_at}():" in result.stderr
    assert words(rag5_hints()[stopped_at][level]) in words(result.stderr)
    assert ("Still stuck?" in result.stderr) == (level < 3)
    if level < 3:
        assert f"{RAG5} --hint 3\n" in result.stderr


def test_hint_without_a_level_is_level_2_and_a_function_can_be_named(tmp_path):
    lab = ROOT / "labs" / RAG5
    assert "Hint 2 of 3 for" in run_offline(lab, tmp_path, args=("--hint",)).stderr
    named = run_offline(lab, tmp_path, args=("--hint", "3", "pack"))
    assert named.returncode == 0 and named.stdout.startswith("Hint 3 of 3 for pack():")
    assert words(rag5_hints()["pack"][3]) in words(named.stdout)
    unknown = run_offline(lab, tmp_path, args=("--hint", "2", "packing"))
    assert unknown.returncode == 2
    assert "no TODO named 'packing' here; this lab's TODOs: split_at_seams, pack" in unknown.stderr


@pytest.mark.parametrize("args", [("--hints",), ("--hint", "4"), ("--hint", "2", "pack", "more")])
def test_a_wrong_option_prints_the_usage(args, tmp_path):
    result = run_offline(ROOT / "labs" / RAG5, tmp_path, args=args)
    assert result.returncode == 2 and "[--hint [LEVEL] [FUNCTION]]" in result.stderr


@pytest.mark.timeout(LAB_WAIT)
def test_the_reference_lab_runs_with_hint_and_says_no_todo_is_left(solution_run):
    result = solution_run(HINT_RUN[0]).result
    assert result.returncode == 0, result.stderr[-2000:]
    assert "all invariants hold" in result.stdout
    assert "No TODO left" in result.stdout


def test_a_failing_case_names_what_was_wrong_and_the_call_that_shows_it():
    def lossy(text, max_tokens=4):
        return []

    def judge(result, text, **keywords):
        if not result:
            raise ValueError("lost everything")

    cases = labkit.tricky_cases(lossy, judge, [{"max_tokens": 8}], labkit.TRICKY_TEXTS[1:2])
    failure = str(labkit.cases.first_failure(cases))
    assert failure == (f"lost everything\n        on {labkit.TRICKY_TEXTS[1].what}: "
                       f"lossy({labkit.TRICKY_TEXTS[1].text!r}, max_tokens=8)")
