"""Grading for Chunking Labs: which folder to grade, where its code runs, and the points.

    pytest                                  # grade the reference and run the project's checks
    pytest tests/grading --lab-dir DIR      # grade a student's folder
    pytest tests/grading --lab-dir DIR --grade-json report.json --student alice

A grading test says which lab and which student-written function it judges:
`pytestmark = pytest.mark.grade("rag4")` for its file and
`@pytest.mark.grades("token_windows")` for the test. It gets the lab from a
fixture (`open_lab("rag4")`), an object whose functions run in a worker
process behind the operating system's wall (confine.py: a bubblewrap sandbox
where the machine has one; remote.py, worker.py); the test itself, and every
check it makes, runs here, out of the student's reach. The hidden tests
(tests/grading/hidden/) call the lab in workers of their own, so nothing a
lab saw there can reach a public test's message.

Points come from one table (points.py): a function's points are shared by its
tests, and a parametrized test's share by its cases; where a function has hidden
tests, those drawn from the grading seed share 80% of its points, the fixed
hidden cases 10% and the public tests 10%. Each test's time limit
follows the reference's own time for it (tests/grading/reference_times.json)
with a floor. After the run a table gives the points per lab; --grade-json
writes them, each failure with a one-line reason, for a gradebook.
"""

import datetime
import functools
import hashlib
import json
import os
import re
import shutil
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path

import confine
import grading_checks
import judged
import profiles
import pytest
import remote
from hypothesis import settings
from points import POINTS
from safe_text import safe_text

ROOT = Path(__file__).resolve().parent.parent
REFERENCE_LABS = ROOT / "solutions"
STUDENT_LABS = ROOT / "labs"
REFERENCE_TIMES = Path(__file__).resolve().parent / "grading" / "reference_times.json"
GRADING_TESTS = Path(__file__).resolve().parent / "grading"
HIDDEN_TESTS = Path(__file__).resolve().parent / "grading" / "hidden"  # absent from the handout
# What a lab may not read while it is graded: the reference, the judge, the tools, the history.
FORBIDDEN = [ROOT / name for name in confine.CLOSED_FOLDERS]
TIME_FLOOR = 10.0  # seconds: the least time limit of a grading test
TIME_FACTOR = 10.0  # a test may take this many times what the reference took
OUTER_GUARD = 120.0  # seconds beyond a test's limit before pytest-timeout stops the grader's own side
# A function's points its public tests share where it has hidden ones (kind_shares): their answers are known, so
# a lab that returns them by heart earns no more (tests/test_memoriser.py checks it).
PUBLIC_SHARE = 0.1
KIND_WEIGHTS = {"seeded": 8, "hidden": 1}  # how the hidden tests share the rest: 80% and 10% of the points
REASON_LIMIT = 300  # characters of a failure's one-line reason
REPORT_TEXT_LIMIT = 4096  # characters of any other text in the report (a path, a warning, a flag)
SHOWN_REFUSALS = 10  # refusals a lab's flags list; a lab may make up as many as it likes
LONGREPR_LIMIT = 20_000  # characters of what pytest prints of a failed grading test (-v, --tb), and of each capture
NOT_CHOSEN = "none: the tests were only collected"  # a --collect-only report's isolation: no worker was started

profiles.load_fast_profile()  # the same examples a lab's own final check runs


def pytest_addoption(parser):
    group = parser.getgroup("grading")
    group.addoption(
        "--lab-dir",
        default=str(REFERENCE_LABS if REFERENCE_LABS.is_dir() else STUDENT_LABS),
        help="folder whose lab files (rag4-chunking.py, ...) are graded "
             "(default: solutions/, or labs/ where there is no solutions/)",
    )
    group.addoption("--grade-json", default=None, help="also write the scores as JSON to this file")
    group.addoption("--student", default=None, help="the student's id in the report (default: the folder's name)")
    group.addoption("--time-floor", type=float, default=TIME_FLOOR,
                    help=f"the least time limit of a grading test, in seconds ({TIME_FLOOR:g})")
    group.addoption("--record-times", default=None,
                    help="write each grading test's time to this file (run it on the reference)")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    one_process_for_a_grading(config)
    own_temporary_folder(config)
    own_embedding_cache(config)
    config.addinivalue_line("markers", "grade(lab): a grading test of `lab`")
    config.addinivalue_line("markers", "grades(function): the student-written function a grading test judges")
    config.addinivalue_line("markers", "slow: a big input, run only with `pytest -m slow`")
    config.addinivalue_line("markers", "sandbox: needs bubblewrap's sandbox; skipped with the reason where "
                            "there is none, failed where the CI variable is set (.ci/run installs it)")
    config.addinivalue_line("markers", "heavy: the deeper tier CI also runs (`pytest -m heavy`): "
                            "the grader against faults and cheats, a class, every mutation")
    config.pluginmanager.register(GradeBook(config), "grade-book")
    config.pluginmanager.register(ClosingSections(config), "closing-sections")
    if config.pluginmanager.hasplugin("xdist"):
        config.pluginmanager.register(ProcessPlan(), "process-plan")


# ---- two processes for the project's own run, one for a grading ----------------------------


def one_process_for_a_grading(config) -> None:
    """Run a grading in this process alone, whatever `-n` says (pyproject.toml's addopts ask for two).

    The project's own run spreads its tests over two pytest processes (pytest-xdist), but a grading
    keeps to one: a run of grading tests alone (all its paths in tests/grading, as grade_class,
    Gradescope and an instructor run it), any run of a folder other than the reference (--lab-dir),
    and a handout's (no solutions/). Its public and hidden workers must never run at once
    (LabFolder.close_the_other_kind), which two processes could not promise, and its grades table
    and one-line failures are one process's. Called before pytest-xdist starts its processes.
    """
    option = config.option
    if getattr(option, "dist", "no") == "no" or getattr(config, "workerinput", None) is not None:
        return
    grading_only = all(is_within(config.invocation_params.dir / arg.split("::")[0], GRADING_TESTS)
                       for arg in config.args)
    other_folder = Path(config.getoption("--lab-dir")).resolve() != REFERENCE_LABS.resolve()
    if grading_only or other_folder or not REFERENCE_LABS.is_dir():
        option.dist, option.numprocesses, option.tx = "no", 0, []


def is_within(path: Path, folder: Path) -> bool:
    return path.resolve().is_relative_to(folder)


def process_scope(nodeid: str) -> str:
    """Which tests one pytest process runs together: every grading test in one (the GradeBook and the
    lab workers are one process's); a test module with the module that reads the same outside work
    (SHARED_WORK); every other module on its own."""
    path = nodeid.split("::", 1)[0]
    if path.startswith("tests/grading/"):
        return "tests/grading"
    return SHARED_WORK.get(path, path)


# Modules that read one outside run of the same thing (a process-wide cache), so one process runs both:
# the independent labs' grading (gradings.shared) and a student lab's run (offline.student_lab_run).
SHARED_WORK = {"tests/test_independent.py": "tests/test_grader.py",
               "tests/test_notebooks.py": "tests/test_labs.py"}


class ProcessPlan:
    """How pytest-xdist shares the project's run between its processes (process_scope).

    The first worker runs every scope whose modules start work in other processes (start_early), and
    starts all that work when the tests start to run, as a run in one process does, so that it runs
    beside everything else; every other scope goes to whichever worker is free, the grading first,
    then the largest. A scope reading outside work is never left to a worker that did not start it.
    """

    @pytest.hookimpl(optionalhook=True)
    def pytest_xdist_make_scheduler(self, config, log):
        from xdist.scheduler import LoadScopeScheduling

        class ScopeScheduling(LoadScopeScheduling):
            early = None  # the scopes that read outside work, known once the tests are collected

            def _split_scope(self, nodeid: str) -> str:
                return process_scope(nodeid)

            def _assign_work_unit(self, node) -> None:
                if self.early is None:
                    self.early = {scope for scope in self.workqueue if starts_outside_work(config, scope)}
                    for scope in sorted(self.workqueue, key=lambda scope: (scope != "tests/grading",
                                                                           -len(self.workqueue[scope]))):
                        self.workqueue.move_to_end(scope)
                first = node.gateway.id == FIRST_WORKER
                ours = [scope for scope in self.workqueue if (scope in self.early) == first]
                mine = ours or ([] if not first else list(self.workqueue))
                if not mine:
                    node.shutdown()  # after the tests it has: what is left is the first worker's
                    return
                work_unit = self.workqueue.pop(mine[0])
                self.assigned_work.setdefault(node, {})[mine[0]] = work_unit
                collection = self.registered_collections[node]
                node.send_runtest_some([collection.index(nodeid) for nodeid, done in work_unit.items() if not done])

        return ScopeScheduling(config, log)


FIRST_WORKER = "gw0"  # pytest-xdist's name of its first worker process


def starts_outside_work(config, scope: str) -> bool:
    """Whether a module of `scope` defines start_early (read from its text: the controller imports no test)."""
    modules = {scope, *(module for module, joined in SHARED_WORK.items() if joined == scope)}
    return any("\ndef start_early(" in (config.rootpath / path).read_text(encoding="utf-8")
               for path in modules if path.endswith(".py") and (config.rootpath / path).is_file())


class ClosingSections:
    """Sections a test module adds to the end of the run (the mutation study's catch rates), printed
    where the run's summary is: under pytest-xdist, by the controller, to which each worker sends its own."""

    def __init__(self, config):
        self.config, self.sections = config, []

    def add(self, title: str, lines: list) -> None:
        if is_worker(self.config):
            self.config.workeroutput.setdefault("sections", []).append([title, list(lines)])
        else:
            self.sections.append([title, list(lines)])

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        self.sections += getattr(node, "workeroutput", {}).get("sections", [])

    def pytest_terminal_summary(self, terminalreporter):
        for title, lines in self.sections:
            terminalreporter.section(title)
            for line in lines:
                terminalreporter.write_line(line)


def is_worker(config) -> bool:
    """Whether this pytest process is one of pytest-xdist's workers."""
    return getattr(config, "workerinput", None) is not None


def own_temporary_folder(config) -> None:
    """Give this run a temporary folder of its own (pytest's --basetemp), removed when it ends.

    pytest's shared /tmp/pytest-of-USER keeps its last runs, with the copies of
    the reference some tests make, unless told to keep none; and told so, it
    drops the lock that keeps a second run beside it from deleting the first
    one's live folder. A private folder per run does both: two runs side by
    side never meet, and nothing a run made outlives it.
    """
    if config.option.basetemp is None:
        folder = tempfile.mkdtemp(prefix="pytest-run-")
        config.option.basetemp = folder
        config.add_cleanup(functools.partial(shutil.rmtree, folder, ignore_errors=True))


def own_embedding_cache(config) -> None:
    """Give this run an embedding cache of its own ($ACADEMY_CACHE_DIR), empty at the start, removed at the end.

    The course keeps every vector it computes in the user's cache folder (minilm's for the texts the
    course does not ship, compare's, the openai embedder's), so that a rerun pays nothing. A test
    that read that folder would pass or fail by what ran before it on this machine, and one that
    wrote there would leave its texts behind: the labs a test runs, and the tests themselves, use
    this run's folder instead (a test of the cache sets its own). A folder apart from --basetemp,
    which pytest empties when it first hands out a temporary path.
    """
    folder = tempfile.mkdtemp(prefix="pytest-cache-")
    os.environ["ACADEMY_CACHE_DIR"] = folder
    config.add_cleanup(functools.partial(shutil.rmtree, folder, ignore_errors=True))
    # hypothesis's Unicode tables, which a lab's last check keeps in the cache folder
    # (labkit/public_tests.keep_hypothesis_tables): computed once for the checkout, not again for each lab
    # a test runs with a cache folder of its own
    os.environ.setdefault("HYPOTHESIS_STORAGE_DIRECTORY", str(Path(__file__).resolve().parent.parent / ".hypothesis"))


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session):
    """Let test modules start their slow outside work now, so that it runs beside the rest.

    A module may define `start_early(session)`: it is called once, when the
    tests are about to run and at least one of its tests was selected (the
    grading runs of test_grader.py, the mutation study). Its fixtures then wait
    for the results. A run that runs no test (`--collect-only`, or one whose
    collection failed) starts nothing: collecting is reading, not working.
    """
    if not will_run_tests(session):
        return None
    session.config.pluginmanager.getplugin("grade-book").choose_isolation(session.items)
    if is_worker(session.config) and session.config.workerinput["workerid"] != FIRST_WORKER:
        return None  # under pytest-xdist, the first worker runs every module that starts outside work
    for module in dict.fromkeys(getattr(item, "module", None) for item in session.items):
        if module is not None and hasattr(module, "start_early"):
            module.start_early(session)
    return None  # pytest's own loop runs the tests


def will_run_tests(session) -> bool:
    """Whether pytest goes on to run the collected tests (as its own pytest_runtestloop decides)."""
    option = session.config.option
    stopped = session.testsfailed and not option.continue_on_collection_errors
    return bool(session.items) and not option.collectonly and not stopped


def pytest_runtest_setup(item):
    """A test marked `sandbox` needs bubblewrap: without it, skipped with the reason, or failed in CI."""
    if item.get_closest_marker("sandbox"):
        require_sandbox(confine.bwrap_works())


def require_sandbox(missing: str) -> None:
    """Skip the test, saying why, when `missing` says why there is no sandbox here; fail it instead
    where the CI variable is set, since .ci/run installs bubblewrap: there it can never pass unseen."""
    if not missing:
        return
    reason = f"needs bubblewrap's sandbox: {missing}"
    if os.environ.get("CI"):
        pytest.fail(f"{reason}; .ci/run installs bubblewrap, so in CI this test must run", pytrace=False)
    pytest.skip(reason)


def pytest_unconfigure(config):
    remote.stop_all()


# ---- the labs being graded --------------------------------------------------------


def course_lab_files() -> dict:
    """{"rag4": "rag4-chunking.py", ...}: every lab's exact file name, as labs/ has it, in the
    course's order (rag10 after rag9, not after rag1 as text sorts it)."""
    files = {path.name.split("-")[0]: path.name for path in STUDENT_LABS.glob("rag*-*.py")}
    return dict(sorted(files.items(), key=lambda item: lab_number(item[0])))


def find_lab_file(lab: str, folder: Path) -> tuple:
    """(the file to grade for `lab` in `folder` or None, warnings about the others, or why none).

    The exact name comes first, so a stray "rag4-chunking (1).py" beside it is
    ignored with a warning. Without it, one other rag4-*.py is taken, also with
    a warning. A notebook is graded through its script: Jupyter writes it on
    saving (tools/make_notebooks.py pairs the two).
    """
    exact = course_lab_files().get(lab, f"{lab}.py")
    links = sorted(path.name for path in folder.glob(f"{lab}-*.py") if path.is_symlink())
    if links:
        return None, [], f"{links[0]} is a link, not a file: a lab is graded only from the student's own file"
    candidates = sorted(folder.glob(f"{lab}-*.py"))
    if (folder / exact).is_file():
        others = [path.name for path in candidates if path.name != exact]
        return folder / exact, [f"ignored {other!r}: only {exact} is graded" for other in others], ""
    if len(candidates) == 1:
        return candidates[0], [f"graded {candidates[0].name}; name it {exact}"], ""
    if candidates:
        names = ", ".join(path.name for path in candidates)
        return None, [], f"several {lab} files in {folder} ({names}) and none named {exact}; keep one"
    notebooks = sorted(path.name for path in folder.glob(f"{lab}-*.ipynb"))
    if notebooks:
        return None, [], (f"{folder} has the notebook {notebooks[0]} but no {exact}; grade the labs/ folder "
                          f"its saves write to, or: jupytext --to py:percent {notebooks[0]}")
    return None, [], f"no {lab} lab file in {folder}: expected {exact}"


class MissingLab:
    """A lab with no file to grade: every function call fails with the reason."""

    def __init__(self, reason: str):
        self.reason, self.last_call, self.refusals = reason, "", []

    def __getattr__(self, function: str):
        if function.startswith("_"):
            raise AttributeError(function)

        def call(*args, **kwargs):
            raise remote.LabUnavailable(self.reason)

        return call


def reached_through_a_link(given: str) -> str:
    """Why the lab folder as given is not graded, if a link leads to it; else ''."""
    absolute = os.path.abspath(given)
    if os.path.realpath(absolute) == os.path.normpath(absolute):
        return ""
    return f"the lab folder {given} is reached through a link: grade the folder itself"


class LabFolder:
    """The folder being graded: each lab's file, its warnings, and the lab objects tests call.

    Every lab has two lab objects, each with workers of its own: one for the
    public tests and one for the hidden ones.
    """

    def __init__(self, folder: Path, given: str):
        self.folder = folder
        link = reached_through_a_link(given)
        self.found = {lab: (None, [], link) if link else find_lab_file(lab, folder) for lab in course_lab_files()}
        self.labs = {}  # (lab, hidden) -> the lab object its tests call
        self.order: list = []  # (lab, hidden) in the order the tests first call them
        self.called: set = set()  # those the tests have opened so far

    @functools.cached_property
    def isolation(self) -> str:
        """The wall the workers get here (confine.choose), looked for when a lab is first needed:
        the look runs bubblewrap, which a run that only collects never does."""
        try:
            return confine.choose(list(map(str, FORBIDDEN)))
        except confine.Unavailable as error:
            raise pytest.UsageError(str(error)) from None

    def files(self) -> dict:
        return {lab: found[0] for lab, found in self.found.items() if found[0] is not None}

    def given(self, lab: str) -> dict:
        """The reference labs before `lab`, where the course has them; else none (the student's own)."""
        if not REFERENCE_LABS.is_dir() or os.environ.get("ACADEMY_GRADE_WITH_OWN_LABS"):
            return {}
        earlier = [name for name in course_lab_files() if lab_number(name) < lab_number(lab)]
        return {name: REFERENCE_LABS / course_lab_files()[name] for name in earlier}

    def forbidden(self) -> list:
        extra = [Path(p) for p in os.environ.get("ACADEMY_GRADING_FORBID", "").split(os.pathsep) if p]
        return FORBIDDEN + extra

    def open(self, lab: str, hidden: bool = False, prestart_next: bool = True):
        if (lab, hidden) not in self.labs:
            path, _, reason = self.found.get(lab, (None, [], f"there is no lab {lab} in this course"))
            if path is None:
                self.labs[lab, hidden] = MissingLab(reason)
            else:
                self.labs[lab, hidden] = remote.RemoteLab(
                    lab, path, self.files(), self.given(lab), self.forbidden(), self.isolation,
                    before_start=functools.partial(self.close_the_other_kind, hidden))
        if prestart_next and (lab, hidden) not in self.called:
            self.called.add((lab, hidden))
            self.prestart_after((lab, hidden))
        return self.labs[lab, hidden]

    def close_the_other_kind(self, hidden: bool) -> None:
        """Stop every worker of the other kind (hidden, or public) before one of this kind is called.

        A hidden test's worker has seen hidden inputs; were it alive while a
        public test's worker runs, the two could talk, and a hidden input would
        reach a message the student sees. So the two kinds never run at once.
        """
        for (_, other), lab in self.labs.items():
            if other != hidden and isinstance(lab, remote.RemoteLab):
                lab.close()

    def prestart_after(self, opened: tuple) -> None:
        """Start the worker the tests will call after `opened`'s, so that it loads while they run
        (not one of the other kind: see close_the_other_kind)."""
        following = self.order[self.order.index(opened) + 1:] if opened in self.order else []
        if following and following[0] not in self.labs and following[0][1] == opened[1]:
            upcoming = self.open(*following[0], prestart_next=False)
            if isinstance(upcoming, remote.RemoteLab):  # a missing lab has no worker to start
                upcoming.prestart()

    def walls(self) -> list:
        """The kernel's walls the workers put up (lockdown.py), or said they could not, each named once."""
        labs = [lab for lab in self.labs.values() if isinstance(lab, remote.RemoteLab)]
        return list(dict.fromkeys(wall for lab in labs for wall in lab.walls))

    def refusals(self, lab: str) -> list:
        """What the wall refused the lab, in its public and its hidden workers."""
        found = [what for hidden in (False, True) for what in getattr(self.labs.get((lab, hidden)), "refusals", [])]
        return list(dict.fromkeys(found))


def lab_number(lab: str) -> int:
    return int(re.sub(r"\D", "", lab) or 0)


@pytest.fixture(scope="session")
def lab_dir(request) -> Path:
    """The folder being graded."""
    return Path(request.config.getoption("--lab-dir")).resolve()


@pytest.fixture(scope="module")
def open_lab(request):
    """open_lab("rag4"): the lab under grading, its functions run in a worker (the hidden tests' own)."""
    hidden = "hidden" in Path(str(request.path)).parts
    return functools.partial(request.config.pluginmanager.getplugin("grade-book").lab_folder.open, hidden=hidden)


# ---- why a grading test failed, in one line ----------------------------------


def one_line(text: str, limit: int = REASON_LIMIT) -> str:
    """The first meaningful line of an error, safe to print: its controls and format characters
    escaped (a lab's message may hold a terminal's escapes), cut to `limit` characters."""
    lines = [line.strip() for line in str(text).splitlines() if line.strip()]
    return safe_text(lines[0] if lines else "", limit)


def failure_reason(error: BaseException, last_call: str, lab_words: bool = False) -> str:
    """One line: the call, and what was wrong with what came back (or how the call ended).

    The lab's exception is told in the grader's words (judged.lab_error); with `lab_words` (a course
    with no hidden tests, a student's own copy, where there is nothing to hide) its message follows.
    """
    group = getattr(error, "exceptions", None)
    if group:  # an exception group: hypothesis found several distinct failures
        first = failure_reason(group[0], last_call, lab_words)
        return one_line(f"{len(group)} distinct failures, the first: {first}")
    message = one_line(str(error))
    if isinstance(error, remote.LabProblem) and not getattr(error, "lab_call", None):
        return message
    if getattr(error, "lab_call", None):  # the lab's own exception, raised in the worker
        own = f": {error.lab_words}" if lab_words and getattr(error, "lab_words", "") else ""
        if message.startswith("raised "):
            return one_line(f"{error.lab_call} {message}{own}")
        return one_line(f"{error.lab_call}: {message}")
    problem = f"{type(error).__name__}: {message}" if message else type(error).__name__
    if isinstance(error, (AssertionError, ValueError)):  # a check of the judge's own: its words suffice
        problem = message or "an assertion failed"
    return one_line(f"{last_call}: {problem}" if last_call else problem)


def student_message(reason: str, hidden: bool, sent: list) -> str:
    """A failure's reason as it goes in the report: a public test's reduced to the judge's own words
    (judged.shown: quoted texts the grader did not send in the test, `sent`, long numbers and the lab's
    words left out); a hidden test's, which no student sees, kept whole for the instructor, escaped."""
    if hidden or not HIDDEN_TESTS.is_dir():
        return safe_text(reason, judged.LIMIT)
    return judged.shown(reason, sent)


# ---- points, time limits and reports ---------------------------------------------


def submission_key(files: dict) -> str:
    """A digest of the lab files graded: the submission's share of its hidden inputs' seed
    (grading_checks.submission_seed)."""
    digest = hashlib.sha256()
    for lab, path in sorted(files.items()):
        digest.update(f"{lab}\0{len(path.read_bytes())}\0".encode() + path.read_bytes())
    return digest.hexdigest()


class GradeBook:
    """Each grading test's share of the points, its time limit, its outcome and its reason."""

    def __init__(self, config):
        self.config = config
        self.folder = Path(config.getoption("--lab-dir")).resolve()
        self.lab_folder = LabFolder(self.folder, config.getoption("--lab-dir"))
        grading_checks.SUBMISSION[:] = [submission_key(self.lab_folder.files())]
        self.entries = {}  # nodeid -> {"lab", "function", "points", "name", "outcome", "message"}
        self.times = defaultdict(float)  # test (lab::name) -> the longest of its cases, in seconds
        self.reference_times = (json.loads(REFERENCE_TIMES.read_text()) if REFERENCE_TIMES.is_file()
                                else {})
        self.list_failures = False  # each failure in a line of the grades table (one_line_failures)
        self.gathered: dict = {}  # under pytest-xdist, what the workers' lab workers said (pytest_testnodedown)

    # -- collection: shares and limits

    @pytest.hookimpl(trylast=True)  # after -m and -k have deselected what will not run
    def pytest_collection_modifyitems(self, session, config, items):
        graded = [item for item in items if item.get_closest_marker("grade")]
        problems = [item.nodeid for item in graded if not grading_target(item)[1]]
        if problems:
            raise pytest.UsageError(f"grading tests without @pytest.mark.grades(function): {problems}")
        tests = defaultdict(lambda: defaultdict(list))  # (lab, function) -> test -> [items]
        for item in graded:
            lab, function = grading_target(item)
            tests[(lab, function)][test_name(item)].append(item)
        shares = {}
        for (lab, function), by_test in tests.items():
            points = POINTS.get(lab, {}).get(function)
            if points is None:
                raise pytest.UsageError(f"{lab}.{function} has no points in tools/grading/points.py")
            shares.update(function_shares(points, by_test))
        if graded and len(graded) == len(items):
            self.one_line_failures(config)
        for item in graded:  # in the order they run
            self.enter(item, *grading_target(item), shares[item.nodeid])
            opens = (grading_target(item)[0], is_hidden(item))
            if opens not in self.lab_folder.order:
                self.lab_folder.order.append(opens)
            item.add_marker(pytest.mark.timeout(remote.TEST_LIMITS * self.limit(item) + OUTER_GUARD))

    def one_line_failures(self, config) -> None:
        """A run of grading tests alone (a student's `pytest`, a grader) says each failure in one
        line, in the grades table, rather than in tracebacks; `-v` or `--tb` brings them back."""
        if config.option.verbose > 0 or config.option.tbstyle != "auto":
            return
        config.option.tbstyle = "no"
        self.listed_failures(config)

    def listed_failures(self, config) -> None:
        """Failures in the grades table, and not again in pytest's short summary."""
        terminal = config.pluginmanager.getplugin("terminalreporter")
        if terminal is not None:
            terminal.reportchars = terminal.reportchars.replace("f", "").replace("E", "")
        self.list_failures = True

    def enter(self, item, lab: str, function: str, points: float) -> None:
        """Enter `item` as not run, so that even an interrupted run lists every test."""
        hidden = is_hidden(item)
        self.entries[item.nodeid] = {"lab": lab, "function": function, "points": points,
                                     "name": self.hidden_name(item) if hidden else item.name, "hidden": hidden,
                                     "outcome": "not run", "message": "the test did not run"}

    def hidden_name(self, item) -> str:
        """A hidden test's name without its parameters, which are its inputs: 'test_x (hidden case 3)'."""
        name = test_name(item)
        if name == item.name:
            return name
        cases = sum(entry["name"].startswith(name + " (") for entry in self.entries.values() if entry["hidden"])
        return f"{name} (hidden case {cases + 1})"

    def limit(self, item) -> float:
        """The test's time limit: TIME_FACTOR times the reference's time, at least the floor."""
        reference = self.reference_times.get(f"{grading_target(item)[0]}::{test_name(item)}", 0.0)
        if getattr(item.obj, "is_hypothesis_test", False):  # the deep profile runs more examples
            reference *= max(1.0, settings.default.max_examples / profiles.FAST_EXAMPLES)
        return max(self.config.getoption("--time-floor"), TIME_FACTOR * reference)

    def choose_isolation(self, items) -> None:
        """Choose the workers' wall before the first test runs, when any selected test grades a lab,
        so that an isolation that cannot be had stops the run at once, not at its first grading test."""
        if any(item.nodeid in self.entries for item in items):
            self.lab_folder.isolation

    # -- running: the clock, the reasons, the outcomes

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_call(self, item):
        if item.nodeid not in self.entries:
            return (yield)
        for lab in self.lab_folder.labs.values():
            lab.last_call = ""
        remote.Clock.start(self.limit(item))
        try:
            return (yield)
        finally:
            remote.Clock.stop()

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_makereport(self, item, call):
        report = yield
        entry = self.entries.get(item.nodeid)
        if entry is None:
            return report
        if report.when == "call":
            name = f"{entry['lab']}::{test_name(item)}"
            self.times[name] = max(self.times[name], report.duration - remote.Clock.excused)
        if report.failed:
            lab = self.lab_folder.labs.get((entry["lab"], entry["hidden"]))
            last_call = lab.last_call if lab is not None else ""
            if call.excinfo is not None:
                reason = failure_reason(call.excinfo.value, last_call, lab_words=not HIDDEN_TESTS.is_dir())
            else:
                reason = one_line(report.longrepr)
            sent = remote.Clock.sent if report.when == "call" else []  # what this test's own calls sent
            report.grade_message = student_message(reason, entry["hidden"], sent)
            report.lab_said = getattr(call.excinfo.value if call.excinfo else None, "lab_words", "")
        elif report.skipped:
            report.grade_message = one_line(report.longrepr[-1] if isinstance(report.longrepr, tuple) else "")
        made_safe_to_print(report)
        return report

    def pytest_runtest_logreport(self, report):
        """The first phase that fails or skips decides the outcome; a passing call makes it passed."""
        entry = self.entries.get(report.nodeid)
        if entry is None or entry["outcome"] not in ("not run", "passed"):
            return
        if report.failed:
            entry["outcome"] = "failed" if report.when == "call" else "error"
            entry["message"] = getattr(report, "grade_message", "") or "failed"
            entry["lab_said"] = getattr(report, "lab_said", "")
        elif report.skipped:
            entry["outcome"] = "skipped"
            entry["message"] = getattr(report, "grade_message", "")
        elif report.when == "call":
            entry["outcome"] = "passed"
            entry["message"] = ""

    # -- under pytest-xdist: each worker's grades, gathered where the table is printed

    def pytest_sessionfinish(self, session):
        """A worker sends the controller its entries, with what its lab workers said (walls, refusals)."""
        if not is_worker(session.config) or not self.entries:
            return
        session.config.workeroutput["grades"] = {
            "entries": self.entries, "times": dict(self.times), "walls": self.lab_folder.walls(),
            "refusals": {lab: self.lab_folder.refusals(lab) for lab in course_lab_files()},
            "isolation": self.lab_folder.isolation, "list_failures": self.list_failures,
        }

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node, error):
        """The controller keeps, of each test, the entry of the worker that ran it (process_scope
        runs every grading test in one worker; the others send theirs as not run)."""
        sent = getattr(node, "workeroutput", {}).get("grades")
        if not sent:
            return
        for nodeid, entry in sent["entries"].items():
            if self.entries.get(nodeid, {"outcome": "not run"})["outcome"] == "not run":
                self.entries[nodeid] = entry
        for name, seconds in sent["times"].items():
            self.times[name] = max(self.times[name], seconds)
        self.gathered["walls"] = list(dict.fromkeys(self.gathered.get("walls", []) + sent["walls"]))
        for lab, found in sent["refusals"].items():
            self.gathered.setdefault("refusals", {})[lab] = list(
                dict.fromkeys(self.gathered.get("refusals", {}).get(lab, []) + found))
        self.gathered["isolation"] = sent["isolation"]
        if sent["list_failures"] and not self.list_failures:
            self.list_failures = True
            self.listed_failures(self.config)

    def isolation(self) -> str:
        return self.gathered.get("isolation") or self.lab_folder.isolation

    def walls(self) -> list:
        return self.gathered.get("walls") or self.lab_folder.walls()

    def refusals(self, lab: str) -> list:
        return list(dict.fromkeys(self.lab_folder.refusals(lab) + self.gathered.get("refusals", {}).get(lab, [])))

    # -- the end: the table, the JSON, the times

    def pytest_terminal_summary(self, terminalreporter, config):
        path = config.getoption("--grade-json")
        collected_only = config.option.collectonly  # no grades to show, but --grade-json lists the tests
        if not self.entries or (collected_only and not path):
            return
        report = self.report()
        write = terminalreporter.write_line
        if not collected_only:
            self.write_grades(terminalreporter, report)
        if path:
            Path(path).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
            write(f"scores written to {path}")
        record = config.getoption("--record-times")
        if record:
            times = {name: round(seconds, 3) for name, seconds in sorted(self.times.items())}
            Path(record).write_text(json.dumps(times, indent=1) + "\n", encoding="utf-8")
            write(f"test times written to {record}")

    def write_grades(self, terminalreporter, report: dict) -> None:
        """The grades table: each lab's points, with its warnings and flags (and failures, see one_line_failures)."""
        write = terminalreporter.write_line
        terminalreporter.section("grades")
        walls = f"; {', '.join(report['walls'])}" if report["walls"] else ""
        write(f"lab folder: {report['lab_dir']} (isolation: {report['isolation']}{walls})")
        for name, lab in report["labs"].items():
            write(f"  {name:<8} {lab['earned']:>6.2f} / {lab['possible']:<4g}"
                  + (f"  ({'; '.join(lab['warnings'] + lab['flags'])})" if lab["warnings"] or lab["flags"] else ""))
            if self.list_failures:
                for line in failure_lines(lab["tests"]):
                    write(f"      {line}")
        write(f"  {'total':<8} {report['earned']:>6.2f} / {report['possible']:<4g}")

    def report(self) -> dict:
        """The whole grade, shaped for --grade-json (the README's instructors' page documents it)."""
        labs = {}
        for entry in self.entries.values():
            lab = labs.setdefault(entry["lab"], new_lab_report(entry["lab"], self.lab_folder,
                                                               self.refusals(entry["lab"])))
            function = lab["functions"].setdefault(entry["function"], {"earned": 0.0, "possible": 0.0})
            earned = entry["points"] if entry["outcome"] == "passed" else 0.0
            for total in (lab, function):
                total["earned"] += earned
                total["possible"] += entry["points"]
            lab["tests"].append({"name": entry["name"], "function": entry["function"],
                                 "hidden": entry["hidden"], "points": round(entry["points"], 4),
                                 "outcome": entry["outcome"], "message": entry["message"]}
                                | ({"lab_said": entry["lab_said"]} if entry.get("lab_said") else {}))
        for lab in labs.values():
            for total in [lab, *lab["functions"].values()]:
                total["earned"], total["possible"] = round(total["earned"], 2), round(total["possible"], 2)
        return safe_report({
            "student": self.config.getoption("--student") or self.folder.name,
            "graded_at": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "course_commit": course_commit(),
            "lab_dir": str(self.folder),
            "isolation": NOT_CHOSEN if self.config.option.collectonly else self.isolation(),
            "submission_seed": grading_checks.submission_seed() if HIDDEN_TESTS.is_dir() else None,
            "walls": self.walls(),
            "earned": round(sum(lab["earned"] for lab in labs.values()), 2),
            "possible": round(sum(lab["possible"] for lab in labs.values()), 2),
            "labs": dict(sorted(labs.items(), key=lambda item: lab_number(item[0]))),
        })


NOT_WRITTEN = re.compile(r"stops at (TODO\(\w+\) \w+\(\)|a TODO): not written yet$")


def failure_lines(tests: list) -> list[str]:
    """A line for each failed test, but one for all the tests that stop at the same TODO: a lab not yet
    begun shows which TODOs stop it, not one line for each of its tests."""
    lines, stopped = [], {}
    for test in tests:
        if test["outcome"] == "passed":
            continue
        stop = NOT_WRITTEN.search(test["message"])
        if stop:
            stopped[stop[1]] = stopped.get(stop[1], 0) + 1
        else:
            lines.append(f"{test['name']}: {test['message']}")
    return lines + [f"{count} tests stop at {mark}: not written yet" if count > 1 else
                    f"1 test stops at {mark}: not written yet" for mark, count in stopped.items()]


def safe_report(value):
    """The report with every text in it safe to print (tools/grading/safe_text.py): a lab's
    messages and refusals, the warnings that name its files. The terminal's table and
    --grade-json both show this, and grade_class's gradebook and Gradescope rows are made from it."""
    if isinstance(value, str):
        return safe_text(value, REPORT_TEXT_LIMIT)
    if isinstance(value, dict):
        return {safe_report(key): safe_report(item) for key, item in value.items()}
    if isinstance(value, list):
        return [safe_report(item) for item in value]
    return value


def made_safe_to_print(report) -> None:
    """Rewrite what pytest itself prints of a grading test (its traceback with -v or --tb, the
    reason of a skip, what it captured) as text safe to print, bounded: the assertion
    rewriting's values and the lab's exception quote what the lab sent."""
    if isinstance(report.longrepr, tuple):  # a skip: (file, line, reason)
        path, line, reason = report.longrepr
        report.longrepr = (path, line, safe_text(reason, REASON_LIMIT))
    elif report.longrepr is not None:
        report.longrepr = safe_text(str(report.longrepr), LONGREPR_LIMIT, lines=True)
    report.sections = [(safe_text(title), safe_text(content, LONGREPR_LIMIT, lines=True))
                       for title, content in report.sections]


def function_shares(points: float, by_test: dict) -> dict:
    """{nodeid: points} for one function's tests ({test name: [its cases]}), adding up to `points`.

    The tests fall in three kinds (kind_of), which share the points as
    kind_shares says; within a kind, the tests share its part evenly, and a
    test's part is split evenly among its cases.
    """
    kinds = defaultdict(dict)  # kind -> {test name: [its cases]}
    for name, cases in by_test.items():
        kinds[kind_of(cases[0])][name] = cases
    shares = kind_shares(set(kinds))
    return {item.nodeid: points * shares[kind] / len(tests) / len(cases)
            for kind, tests in kinds.items() for cases in tests.values() for item in cases}


def kind_shares(present: set) -> dict:
    """{kind: its part of a function's points}, for the kinds of test the function has.

    The public tests' inputs and answers are known, so where a function has
    hidden tests the public ones share PUBLIC_SHARE only: a lab that returns
    their answers by heart earns no more. The hidden tests share the rest,
    those drawn from the grading seed 8 to 1 over the fixed hidden cases, which
    stay the same from term to term (KIND_WEIGHTS). In the handout, with
    public tests alone, they share everything.
    """
    hidden = {kind: KIND_WEIGHTS[kind] for kind in present if kind != "public"}
    if not hidden:
        return {"public": 1.0}
    public = PUBLIC_SHARE if "public" in present else 0.0
    shares = {kind: (1 - public) * weight / sum(hidden.values()) for kind, weight in hidden.items()}
    return shares | ({"public": public} if public else {})


def kind_of(item) -> str:
    """The kind of a grading test: "seeded" (hidden, drawn from the grading seed), "hidden" or "public"."""
    if not is_hidden(item):
        return "public"
    return "seeded" if getattr(getattr(item, "obj", None), "seeded", False) else "hidden"


def is_hidden(item) -> bool:
    """A hidden grading test: one in tests/grading/hidden/, which the handout leaves out."""
    return "/hidden/" in item.nodeid


def new_lab_report(lab: str, folder: LabFolder, refusals: list) -> dict:
    path, warnings, reason = folder.found.get(lab, (None, [], ""))
    flags = [f"refused: {safe_text(what, REASON_LIMIT)}" for what in refusals[:SHOWN_REFUSALS]]
    if len(refusals) > SHOWN_REFUSALS:
        flags.append(f"refused: and {len(refusals) - SHOWN_REFUSALS} more")
    if " is a link" in reason or "through a link" in reason:
        flags.append("link: a lab file or folder that is a link was graded as missing")
    return {"earned": 0.0, "possible": 0.0, "file": path.name if path else None,
            "warnings": warnings + ([reason] if reason else []), "flags": flags,
            "functions": {}, "tests": []}


def grading_target(item) -> tuple:
    """(lab, function) a grading test judges, from its markers."""
    lab = item.get_closest_marker("grade").args[0]
    marker = item.get_closest_marker("grades")
    return lab, (marker.args[0] if marker else None)


def test_name(item) -> str:
    """The test's name without its parameters: its cases share its points."""
    return getattr(item, "originalname", None) or item.name


def course_commit() -> str | None:
    """The course's git commit, so a report says which version of the tests graded it.

    Without git (a Gradescope autograder), the COURSE_COMMIT file its zip carries.
    """
    try:
        result = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                                capture_output=True, text=True, timeout=10)
        if result.returncode == 0 and result.stdout.strip():
            return result.stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    recorded = ROOT / "COURSE_COMMIT"
    return recorded.read_text(encoding="utf-8").strip() or None if recorded.is_file() else None
