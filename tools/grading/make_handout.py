"""Write the handout: the course as a teacher gives it to students, with no reference code.

    python tools/grading/make_handout.py DIR           # DIR must not exist, or be empty
    python tools/grading/make_handout.py DIR --force   # replace what DIR holds

The handout is a repository of its own, with one commit when git is installed,
so a teacher can push it as it is. It holds the student labs and notebooks,
academy_llm and labkit with their assets and datasets, pyproject.toml (so `pip install -e .`
installs them), the grading tests and the modules they run on, and a
README, requirements.txt and .gitignore written for the student (the README
from tools/grading/handout/README.md).

It holds no reference code: no solutions/, no solution notebooks, no hidden
tests, no tools, none of the grader's oracles (tools/grading/oracles.py), nor labkit/reference/ (compare's
way to a TODO's numbers on a big corpus). After
writing, the build reads every file it wrote and stops if one holds an answer
region's marker, sits in a reference folder, or defines a function shaped as
an answer: a function of solutions/ that holds an answer region, or an oracle,
even renamed, whole or among a given function's own statements (answer_copies),
or a hint that is such an answer in code (hint_answers). Then it calls them: a
function the handout ships that passes a TODO's public tests in the TODO's place
answers it by call, whatever its name and code (answers_by_call; OPEN_ANSWERS
names the ones still shipped, and why). It is
built in a folder beside DIR and moved into place only when it is complete,
so a failed build leaves DIR as it was.
"""

import argparse
import ast
import importlib.util
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[2]
README_TEMPLATE = ROOT / "tools" / "grading" / "handout" / "README.md"

# The student's tests: glob patterns under the course folder, each file that
# matches is copied. A module of tests/ that a copied file imports must match
# one of them (the build checks it). Not here: tests/grading/hidden/ (the
# instructor's hidden tests) and tests/test_*.py (the project's own checks,
# which need solutions/).
STUDENT_TESTS = (
    "tests/conftest.py",
    "tests/text_strategies.py",
    "tests/markdown_oracle.py",
    "tools/grading/worker.py",
    "tools/grading/confine.py",
    "tools/grading/remote.py",
    "tools/grading/wire.py",
    "tools/grading/lockdown.py",
    "tools/grading/points.py",
    "tools/grading/profiles.py",
    "tools/grading/safe_text.py",
    "tools/grading/grading_checks.py",
    "tools/grading/judged.py",
    "tools/grading/safe_text.py",
    "tests/fixtures/**/*",
    "tests/grading/*.py",
    "tests/grading/reference_times.json",  # the time limits, so a student's match the grader's
)

# The rest of the course the student gets; each pattern must match a file.
COURSE_FILES = (
    "academy_llm.py",
    "labkit/*.py",
    "labkit/lessons/*.py",  # what a lab's lesson stands on: its report, its dial, its checks
    "labkit/explorer.js",  # the chunk explorer's front end, drawn in rag4-rag7's notebooks
    "pyproject.toml",
    "labs/rag*-*.py",
    "labs/hints/*.json",  # the hint levels beyond the first, which --hint and show_hint read
    "notebooks/labs/rag*-*.ipynb",
    "assets/*",
    "datasets/**/*",
    "embeddings/*",  # the minilm vectors of the course's own texts, which no grading worker reads
)

# What must never reach a student. The marker lines open and close an answer
# region in solutions/ (tools/make_labs.py).
REFERENCE_MARKERS = ("BEGIN SOLUTION", "END SOLUTION")
REFERENCE_FOLDERS = (
    "solutions", "notebooks/solutions", "tests/grading/hidden", "benchmarks",
    "tools/make_labs.py", "tools/make_notebooks.py", "tools/make_docs.py", "tools/grading/grade_class.py",
    "tools/grading/make_handout.py", "tools/grading/similarity.py", "tools/grading/gradescope",
    "tools/grading/staging.py", "tools/grading/supervise.py", "tools/grading/gradebook.py",  # grade_class's parts
    "tools/grading/oracles.py",  # the grader's own answers, which only the hidden tests use
    "labkit/reference",  # what compare runs beside the reference labs: a lab's TODO done another way
)
NOT_COURSE_FILES = {"__pycache__", ".ipynb_checkpoints"}  # left behind by runs, never copied


class RequirementGroup(NamedTuple):
    """Lines of the course's requirements.txt that the student gets, under one comment."""

    comment: str
    names: tuple[str, ...]


# The student's requirements.txt: these packages, with their versions as the
# course's requirements.txt gives them. Every package there must be either
# here or in PROJECT_ONLY, so a new one is never dropped unnoticed.
STUDENT_REQUIREMENTS = (
    RequirementGroup(
        "The labs' helper academy_llm and their machinery labkit, with numpy, tiktoken, wordllama, onnxruntime, "
        "matplotlib",
        ("-e .",),
    ),
    RequirementGroup(
        "Real embeddings, only if you choose them (ACADEMY_EMBEDDER=openai): the official OpenAI client",
        ("openai",),
    ),
    RequirementGroup(
        "The tests that check your labs",
        ("pytest", "pytest-timeout", "pytest-xdist", "hypothesis", "markdown-it-py", "bm25s"),
    ),
    RequirementGroup(
        "The notebooks: JupyterLab, jupytext to turn a notebook back into a lab file, anywidget for the explorer",
        ("jupyterlab", "ipykernel", "ipython", "jupytext", "nbformat", "anywidget"),
    ),
)
# The project's notebook and browser checks, its lint, and scipy: the hidden tests' judge of rag8's bootstrap
# (the public tests a student runs judge it by bands the grader computed, written in tests/grading/test_rag8.py).
PROJECT_ONLY = {"nbclient", "nbconvert", "selenium", "psutil", "ruff", "scipy"}

GITIGNORE = """\
__pycache__/
*.egg-info/
.pytest_cache/
.hypothesis/
.ipynb_checkpoints/
.venv/
# plots a lab saves in the folder it runs from
rag*.png
# a notebook run by jupyter nbconvert --to notebook --execute, written beside it
*.nbconvert.ipynb
"""

GIT = ("-c", "user.name=Chunking Labs", "-c", "user.email=chunking-labs@example.invalid",
       "-c", "commit.gpgsign=false")  # works with no git config of the teacher's own
BRANCH = "main"


class HandoutError(Exception):
    """Why the handout cannot be written, in one line that says what to do."""


class Summary(NamedTuple):
    """What was written, for the lines printed at the end."""

    folder: Path
    files: int
    size: int
    committed: bool  # False where git is not installed


# ---- the target folder ---------------------------------------------------------------


def check_target(target: Path, force: bool) -> None:
    """Refuse a folder that overlaps the course, or holds something, unless --force."""
    real = target.resolve()
    if real == ROOT or ROOT in real.parents or real in ROOT.parents:
        raise HandoutError(
            f"{target} overlaps the course folder {ROOT}; write the handout elsewhere"
        )
    if force or not (target.exists() or target.is_symlink()):
        return
    if not target.is_dir():
        raise HandoutError(
            f"{target} is a file; choose a new folder, or pass --force to replace it"
        )
    if any(target.iterdir()):
        raise HandoutError(
            f"{target} is not empty; choose a new or empty folder, or pass --force to replace it"
        )


def put_in_place(built: Path, target: Path) -> None:
    """Move the finished handout to `target`, replacing what is there (checked before)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        shutil.rmtree(target)
    built.rename(target)


# ---- what goes in --------------------------------------------------------------------


def load_tool(name: str):
    """A tool of tools/ as a module, to ask it whether what it writes is current."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check_labs_current() -> None:
    """Refuse stale stubs: a student would get labs the grading tests no longer match."""
    stale = load_tool("make_labs").stale_labs()
    stale += load_tool("make_notebooks").stale_notebooks()
    if stale:
        raise HandoutError(
            f"labs/ or notebooks/ is out of date ({', '.join(stale)}); "
            f"run: python tools/make_labs.py && python tools/make_notebooks.py"
        )


def course_files(pattern: str) -> list[Path]:
    """The files of the course that `pattern` matches, without what runs leave behind."""
    return sorted(
        path for path in ROOT.glob(pattern)
        if path.is_file() and not NOT_COURSE_FILES & set(path.parts)
    )


def required_files(patterns: tuple[str, ...]) -> list[Path]:
    """Every file the patterns match; a pattern that matches none means the course is broken."""
    files = []
    for pattern in patterns:
        matches = course_files(pattern)
        if not matches:
            raise HandoutError(f"the course has no {pattern}; restore it before making a handout")
        files += matches
    return files


def readme_images(readme: str) -> list[Path]:
    """The images of docs/ that the student README shows."""
    images = [ROOT / name for name in re.findall(r"\]\((docs/[^)\s]+)\)", readme)]
    for image in images:
        if not image.is_file():
            shown = image.relative_to(ROOT)
            raise HandoutError(f"tools/grading/handout/README.md shows {shown}, which is missing")
    return images


def imported_modules(path: Path) -> set[str]:
    """Top-level names of the modules a Python file imports, wherever in the file."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def check_test_imports(tests: list[Path]) -> None:
    """Refuse tests that import a module of tests/ or tools/grading/ the handout leaves out:
    they could not run."""
    folders = (ROOT / "tests", ROOT / "tools" / "grading")
    course_modules = {path.stem for folder in folders for path in folder.glob("*.py")}
    copied = {path.stem for path in tests if path.parent in folders}
    for path in tests:
        if path.suffix != ".py":
            continue
        missing = sorted((imported_modules(path) & course_modules) - copied)
        if missing:
            raise HandoutError(
                f"{path.relative_to(ROOT)} imports {', '.join(missing)}, which "
                f"STUDENT_TESTS in tools/grading/make_handout.py leaves out; "
                f"add it there or drop the import"
            )


def requirement_name(line: str) -> str:
    """The package a requirements line names ("-e ." for the course itself), '' for none."""
    spec = line.split(" #")[0].strip()
    if spec.startswith("#") or not spec:
        return ""
    if spec.startswith("-e "):
        return spec
    return re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", spec).group().lower().replace("_", "-")


def student_requirements() -> str:
    """requirements.txt for the student: the course's lines they need, under comments for them."""
    specs = {}
    for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines():
        name = requirement_name(line)
        if name:
            specs[name] = line.split(" #")[0].strip()
    given = {name for group in STUDENT_REQUIREMENTS for name in group.names}
    unknown = sorted(set(specs) - given - PROJECT_ONLY)
    if unknown:
        raise HandoutError(
            f"requirements.txt lists {', '.join(unknown)}, which tools/grading/make_handout.py has in "
            f"neither STUDENT_REQUIREMENTS nor PROJECT_ONLY; add each to one of them"
        )
    missing = sorted(given - set(specs))
    if missing:
        raise HandoutError(
            f"STUDENT_REQUIREMENTS in tools/grading/make_handout.py names {', '.join(missing)}, "
            f"which requirements.txt does not list; drop it there"
        )
    lines = ["# The whole set-up: pip install -r requirements.txt"]
    for group in STUDENT_REQUIREMENTS:
        lines += [f"# {group.comment}", *(specs[name] for name in group.names)]
    return "\n".join(lines) + "\n"


def write_handout(folder: Path) -> None:
    """Copy the student's part of the course into `folder` and write the student's own files."""
    readme = README_TEMPLATE.read_text(encoding="utf-8")
    tests = [path for pattern in STUDENT_TESTS for path in course_files(pattern)]
    check_test_imports(tests)
    for source in required_files(COURSE_FILES) + tests + readme_images(readme):
        destination = folder / source.relative_to(ROOT)
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, destination)
    keep_public_times(folder / "tests" / "grading" / "reference_times.json")
    (folder / "README.md").write_text(readme, encoding="utf-8")
    (folder / "requirements.txt").write_text(student_requirements(), encoding="utf-8")
    (folder / ".gitignore").write_text(GITIGNORE, encoding="utf-8")


def keep_public_times(path: Path) -> None:
    """Drop the hidden tests' entries from the copied time table: their names say what they try."""
    public = {f"{test.stem.removeprefix('test_')}::{name}"
              for test in path.parent.glob("test_*.py")
              for name in re.findall(r"^def (test_\w+)", test.read_text(encoding="utf-8"), re.M)}
    times = json.loads(path.read_text(encoding="utf-8"))
    kept = {name: seconds for name, seconds in times.items() if name in public}
    path.write_text(json.dumps(kept, indent=1) + "\n", encoding="utf-8")


# ---- the checks at the end -----------------------------------------------------------


def handout_files(folder: Path) -> list[Path]:
    """Every file of the handout, outside its .git."""
    return sorted(
        path for path in folder.rglob("*")
        if path.is_file() and ".git" not in path.relative_to(folder).parts
    )


def reference_code(folder: Path) -> list[str]:
    """What in `folder` is reference code: files with an answer marker, reference folders."""
    found = [name for name in REFERENCE_FOLDERS if (folder / name).exists()]
    markers = [marker.encode() for marker in REFERENCE_MARKERS]
    for path in handout_files(folder):
        data = path.read_bytes()
        if any(marker in data for marker in markers):
            found.append(path.relative_to(folder).as_posix())
    return found


ORACLES = ROOT / "tools" / "grading" / "oracles.py"
SHORTEST_ANSWER = 20  # AST nodes: a shorter body (a call, a return of a name) is too common a shape to call a copy


class Shaped(ast.NodeTransformer):
    """A function's body with every name, argument and docstring taken out: what is left is what it
    does, so a copy renamed has the same shape."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_arg(self, node):
        return ast.copy_location(ast.arg(arg="_"), node)


def shape(statements: list) -> tuple | None:
    """The shape of a run of statements (docstring dropped), a statement's shape each, or None when it
    is too short to tell."""
    if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant):
        statements = statements[1:]
    if sum(1 for statement in statements for _ in ast.walk(statement)) < SHORTEST_ANSWER:
        return None
    return tuple(statement_shape(s) for s in statements)


def statement_shape(statement, known: dict | None = None) -> str:
    """One statement's shape, from `known` ({id(node): shape}) when a file's scan has shaped it already
    (a statement is in its function's body, its block's, and an enclosing function's)."""
    if known is not None and id(statement) in known:
        return known[id(statement)]
    # Shaped from a parsed copy: the transformer edits the tree it visits.
    found = ast.dump(Shaped().visit(ast.parse(ast.unparse(statement)).body[0]), annotate_fields=False)
    if known is not None:
        known[id(statement)] = found
    return found


def blocks(function) -> list[list]:
    """Every run of statements a function holds: its body, and the body of each loop, branch, `with`
    and `try` in it, however deep."""
    found = []
    for node in ast.walk(function):
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and statements and isinstance(statements[0], ast.stmt):
                found.append(statements)
        found += [handler.body for handler in getattr(node, "handlers", [])]
    return found


def held_answer(function, shapes: dict, known: dict | None = None) -> str | None:
    """What answer `function` holds: its whole body shaped as one, or any run of statements inside it
    (a given function that does an answer's work among its own), or None. `known`: statement_shape's."""
    lengths = {len(found) for found in shapes}
    for statements in blocks(function):  # the function's own body first
        shaped = [statement_shape(s, known) for s in statements]
        for length in lengths:
            for first in range(len(shaped) - length + 1):
                what = shapes.get(tuple(shaped[first:first + length]))
                if what:
                    return what
    return None


def functions(tree: ast.AST) -> list:
    return [node for node in ast.walk(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))]


def answer_shapes() -> dict:
    """{shape: what it answers}: each function of solutions/ that holds an answer region, whole and its
    region alone, and each function of the grader's oracles."""
    shapes = {}
    for path in sorted((ROOT / "solutions").glob("rag*.py")):
        source = path.read_text(encoding="utf-8")
        lines = source.splitlines()
        regions = [number + 1 for number, line in enumerate(lines) if line.strip() == f"# {REFERENCE_MARKERS[0]}"]
        for function in functions(ast.parse(source)):
            held = [line for line in regions if function.lineno < line <= function.end_lineno]
            if not held or any(inner is not function and inner.lineno < held[0] <= inner.end_lineno
                               for inner in functions(function)):
                continue
            where = f"{path.stem}'s {function.name}"
            region = [statement for statement in function.body if statement.lineno > held[0]]
            for found in (shape(function.body), shape(region)):
                if found:
                    shapes.setdefault(found, where)
    for function in functions(ast.parse(ORACLES.read_text(encoding="utf-8"))):
        found = shape(function.body)
        if found:
            shapes.setdefault(found, f"the grader's {function.name}")
    return shapes


def answer_copies(folder: Path) -> list[str]:
    """Every function of the handout's Python files shaped as an answer (given code in a lab too), or
    holding one among its own statements, or named as one of the grader's oracles:
    'labkit/x.py: name (rag8's paired_bootstrap)'."""
    shapes = answer_shapes()
    oracles = {function.name for function in functions(ast.parse(ORACLES.read_text(encoding="utf-8")))}
    found = []
    for path in handout_files(folder):
        name = path.relative_to(folder).as_posix()
        if path.suffix != ".py":
            continue
        known: dict = {}  # this file's statements, each shaped once
        for function in functions(ast.parse(path.read_text(encoding="utf-8"), name)):
            what = held_answer(function, shapes, known) or (
                f"the grader's {function.name}" if function.name in oracles else None)
            if what:
                found.append(f"{name}: {function.name} ({what})")
    return found


def hint_answers(folder: Path) -> list[str]:
    """Every hint level of the handout's labs/hints/ that is code shaped as an answer: a hint a student
    could paste in place of a TODO: 'labs/hints/rag7.json: with_table_rows hint 3 (rag7's ...)'."""
    shapes = answer_shapes()
    found = []
    for path in sorted((folder / "labs" / "hints").glob("*.json")):
        for function, levels in json.loads(path.read_text(encoding="utf-8")).items():
            for level, text in levels.items():
                try:
                    what = shapes.get(shape(ast.parse(text).body))
                except SyntaxError:  # prose
                    continue
                if what:
                    found.append(f"{path.relative_to(folder).as_posix()}: {function} hint {level} ({what})")
    return found


# ---- answers by call: a shipped function that returns what a TODO returns ---------------------

PROBES_PER_TODO = 16  # a TODO's public calls kept as probes: enough to tell an answer from a look-alike
CALL_SECONDS = 2  # a shipped function probed longer than this is no answer the probes can see
TESTS_SECONDS = 60  # the public tests of one TODO, with a shipped function in its place
PROBED_FILES = ("academy_llm.py", "labkit/**/*.py", "tools/grading/*.py", "tests/*.py", "labs/rag*.py")
NOT_PROBED = {"tools/grading/worker.py"}  # the grader's worker, a script that reads its task on import


# Answers by call the handout still ships, each with why, until the course gives what a later lab
# needs in a form that does not answer: the build refuses any other, and an entry that no longer
# answers (answers_by_call), so the list only shrinks.
OPEN_ANSWERS = {
    "labs/rag6-markdown-chunking.py: robust_markdown_chunks (rag6's markdown_chunks)":
        "rag7's header_chunks, rag6's real-files report and `chunking-labs compare` stand on the course's "
        "CommonMark chunker, which keeps rag6's promises: a one-line call of it would pass rag6's public "
        "tests of markdown_chunks, so it is sealed while rag6 is judged (labkit/sealed.py: it raises, in "
        "the grader's worker and in the lab's own check); a copy of its code is not caught",
}


class Probe(NamedTuple):
    """One call a lab's public tests make of a TODO, with what the reference answers (`plain`)."""

    args: tuple
    keywords: dict
    outcome: tuple  # ("value", plain result) or ("raises", the exception's class name)


def todo_names() -> dict[str, list[str]]:
    """{lab ("rag8"): the module-level functions of its reference that hold an answer region}."""
    todos = {}
    for path in sorted((ROOT / "solutions").glob("rag*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        todos[path.stem.split("-")[0]] = [
            node.name for node in tree.body if isinstance(node, ast.FunctionDef)
            and any(f"# {REFERENCE_MARKERS[0]}" in line for line in
                    ast.get_source_segment(path.read_text(encoding="utf-8"), node).splitlines())]
    return todos


def plain(value, depth: int = 0):
    """`value` as plain data to compare answers by: numbers rounded, sequences as tuples, a chunk or
    span object as its (start, end), a record as its fields; what is none of these, as its type."""
    import numpy

    if depth > 6:
        return ("deep",)
    if isinstance(value, (bool, int, str, type(None))):
        return value
    if isinstance(value, (float, numpy.floating)):
        return round(float(value), 9)
    if isinstance(value, numpy.integer):
        return int(value)
    if isinstance(value, numpy.ndarray):
        return plain(value.tolist(), depth + 1)
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return tuple(plain(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return tuple(sorted((repr(key), plain(item, depth + 1)) for key, item in value.items()))
    if hasattr(value, "start") and hasattr(value, "end"):
        return ("span", plain(value.start, depth + 1), plain(value.end, depth + 1))
    fields = getattr(value, "_fields", None) or list(getattr(value, "__dataclass_fields__", {}))
    if fields:
        return tuple(plain(getattr(value, field), depth + 1) for field in fields)
    return ("object", type(value).__name__)


def is_data(value, depth: int = 0) -> bool:
    """Whether `value` may be handed to any function the handout ships: data, and objects of the
    course's modules (a Chunk, a TokenIndex), not an object of a lab's own class (rag6's Block),
    which only that lab's functions take."""
    if depth > 6:
        return False
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return all(is_data(item, depth + 1) for item in value)
    if isinstance(value, dict):
        return all(is_data(key, depth + 1) and is_data(item, depth + 1) for key, item in value.items())
    return not type(value).__module__.startswith("lab_") and not callable(value)


def outcome(function, args: tuple, keywords: dict) -> tuple:
    """What `function` answers to a call: ("value", plain result) or ("raises", class name)."""
    import copy

    try:
        return ("value", plain(function(*copy.deepcopy(args), **copy.deepcopy(keywords))))
    except Exception as error:  # a probe's error is an outcome to compare, as a test's pytest.raises is
        return ("raises", type(error).__name__)


def recorded_probes(lab: str, names: list[str]) -> dict[str, list[Probe]]:
    """{TODO name: the calls the lab's public tests make of it with data only, and the reference's
    outcomes}, from a run of the public tests on the reference lab."""
    import copy
    import inspect

    from labkit import load_lab
    from labkit.public_tests import lab_functions

    module = load_lab(lab, ROOT / "solutions")
    namespace = dict(vars(module))
    probes = {name: {} for name in names}

    def recording(name, function):
        def call(*args, **keywords):
            kept = probes[name]
            if len(kept) < PROBES_PER_TODO and is_data(args) and is_data(keywords):
                key = repr((args, sorted(keywords.items())))
                if key not in kept:
                    kept[key] = Probe(copy.deepcopy(args), copy.deepcopy(keywords), outcome(function, args, keywords))
            return function(*args, **keywords)
        return call

    for name in names:
        namespace[name] = recording(name, namespace[name])
    functions = lab_functions(namespace)
    for call in test_calls(lab):
        if hasattr(call.test, "hypothesis"):
            continue  # drawn inputs: many calls, slow to make, and the written ones probe enough
        arguments = dict(call.parameters)
        if lab in inspect.signature(call.test).parameters:
            arguments[lab] = functions
        try:
            call.test(**arguments)
        except BaseException:  # the reference's own verdicts are not what is recorded here
            pass
    return {name: list(kept.values()) for name, kept in probes.items()}


def shipped_functions(folder: Path) -> list[tuple[str, object]]:
    """('labkit/x.py: name', function) for each function the handout's Python files define at their
    top level, and each object's method they name there (a lab's `robust.markdown_chunks`), each file
    loaded as a module of its own (a lab without running its demo)."""
    import importlib.util
    import inspect


    found = []
    for number, path in enumerate(sorted({p for pattern in PROBED_FILES for p in folder.glob(pattern)
                                          if not NOT_COURSE_FILES & set(p.parts)})):
        where = path.relative_to(folder).as_posix()
        if where in NOT_PROBED:
            continue
        try:
            if where.startswith("labs/"):
                module = beside_the_reference(path)
            else:
                spec = importlib.util.spec_from_file_location(f"_shipped_{number}", path)
                module = importlib.util.module_from_spec(spec)
                sys.modules[spec.name] = module
                spec.loader.exec_module(module)
        except Exception as error:
            raise HandoutError(f"{where} cannot be imported to probe it ({type(error).__name__}: {error})") from error
        found += [(f"{where}: {name}", value) for name, value in vars(module).items()
                  if inspect.ismethod(value) or inspect.isfunction(value) and value.__module__ == module.__name__]
    return found


def form(value):
    """The form of a plain value, its data left out: ("seq", form of its first item), "span", a
    number's, a text's, a record's fields' forms."""
    if isinstance(value, bool) or value is None:
        return type(value).__name__
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "text"
    if value and value[0] == "span":
        return "span"
    if value and value[0] == "object":
        return value
    return ("seq", form(value[0]) if value else None)


def alike(got: tuple, expected: tuple) -> bool:
    """Whether a probe's outcome is of the reference's kind: a value of the same form where it
    returns one (chunks where it returns chunks), the same exception where it raises."""
    if got[0] == expected[0] == "value":
        return form(got[1]) == form(expected[1]) or not (got[1] and expected[1])
    return got == expected


def test_calls(lab: str, kept: dict = {}) -> list:  # noqa: B006 (a cache: each test file is loaded once)
    """The public test calls of `lab` (labkit.public_tests), loaded once in this process."""
    from labkit.public_tests import public_test_calls

    if lab not in kept:
        kept[lab] = public_test_calls(lab)
    return kept[lab]


def passes_public_tests(lab: str, name: str, function) -> bool:
    """Whether the public tests of `lab` charged to its TODO `name` all pass with `function` in its
    place (the rest of the lab the reference's): the points a student would earn by calling it."""
    import inspect

    from labkit import load_lab
    from labkit.public_tests import lab_functions

    calls = [call for call in test_calls(lab) if call.function == name]
    functions = lab_functions({**vars(load_lab(lab, ROOT / "solutions")), name: function})
    for call in calls:
        arguments = dict(call.parameters)
        if lab in inspect.signature(call.test).parameters:
            arguments[lab] = functions
        try:
            call.test(**arguments)
        except BaseException:  # pytest's outcomes too: any way a test ends but passing
            return False
    return bool(calls)


def beside_the_reference(path: Path):
    """A lab of the handout loaded as a student who finished the labs before it has it: the earlier
    labs it loads (rag6's rag5, on which its given chunker stands) are the reference's."""
    from labkit import load_lab

    folder = Path(tempfile.mkdtemp(prefix="labs-", dir=Path.cwd()))  # in answers_by_call_in's scratch folder
    for lab in (ROOT / "solutions").glob("rag*.py"):
        shutil.copyfile(lab, folder / lab.name)
    shutil.copyfile(path, folder / path.name)
    return load_lab(path.stem.split("-")[0], folder)


def answers_by_call(folder: Path) -> list[str]:
    """Every function the handout ships that, called in a TODO's place, passes every public test of
    that TODO, under any name or form: 'labkit/x.py: name (rag8's recall_at_k)'. Probed first on the
    TODO's public calls with data (recorded_probes): a function that returns where the reference
    returns and raises what it raises is then put in the TODO's place and its tests run. A TODO
    whose probes all answer alike is not probed: a constant is no answer."""
    import contextlib
    import inspect
    import io
    import signal

    def too_long(*_):
        raise TimeoutError("probe took too long")

    signal.signal(signal.SIGALRM, too_long)
    probes = {(lab, name): found for lab, names in todo_names().items()
              for name, found in recorded_probes(lab, names).items()}
    probes = {todo: found for todo, found in probes.items()
              if len({probe.outcome for probe in found}) >= 2 and any(p.outcome[0] == "value" for p in found)}
    found = []
    for where, function in shipped_functions(folder):
        try:
            signature = inspect.signature(function)
        except (TypeError, ValueError):
            continue
        for (lab, name), todo_probes in probes.items():
            if where.startswith(f"labs/{lab}-") and where.endswith(f": {name}"):
                continue  # the TODO itself
            try:
                for probe in todo_probes:
                    signature.bind(*probe.args, **probe.keywords)
            except TypeError:
                continue
            with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
                answers = True
                for probe in todo_probes:
                    signal.alarm(CALL_SECONDS)
                    try:
                        answers = alike(outcome(function, probe.args, probe.keywords), probe.outcome)
                    except BaseException:  # a probe that exits or runs out of time answers nothing
                        answers = False
                    finally:
                        signal.alarm(0)
                    if not answers:
                        break
                if answers:
                    signal.alarm(TESTS_SECONDS)
                    try:
                        answers = passes_public_tests(lab, name, function)
                    except BaseException:
                        answers = False
                    finally:
                        signal.alarm(0)
            if answers:
                found.append(f"{where} ({lab}'s {name})")
    return found


def answers_by_call_in(folder: Path) -> list[str]:
    """answers_by_call in a process of its own, from a folder of its own: the probed functions
    run there, with the handout first on the path, and leave nothing behind in this one."""
    with tempfile.TemporaryDirectory() as scratch:
        done = subprocess.run(
            [sys.executable, __file__, "--answers-by-call", str(folder)], cwd=scratch, capture_output=True,
            text=True, timeout=600,
            env={**os.environ, "PYTHONPATH": os.pathsep.join(
                [str(folder), str(folder / "tools" / "grading"), str(folder / "tests"), str(ROOT)])})
    if done.returncode != 0:
        reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise HandoutError(f"probing the handout's functions failed: {reason}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def check_no_reference_code(folder: Path) -> None:
    """Stop before anything is committed or put in place if reference code, or an answer, got in:
    in a reference file, in a function shaped as one, or in a function that answers as one."""
    found = reference_code(folder) + answer_copies(folder) + hint_answers(folder)
    if not found:
        called = answers_by_call_in(folder)
        found = [answer for answer in called if answer not in OPEN_ANSWERS]
        stale = sorted(set(OPEN_ANSWERS) - set(called))
        if stale:
            raise HandoutError(f"OPEN_ANSWERS in tools/grading/make_handout.py names {', '.join(stale)}, "
                               f"which answers no TODO any more; drop it there")
    if found:
        raise HandoutError(
            f"the handout would hold reference code ({', '.join(found)}); nothing was written"
        )


# ---- git -----------------------------------------------------------------------------


def commit(folder: Path) -> bool:
    """Make the handout a repository with one commit, so the teacher can push it; False: no git."""
    git = shutil.which("git")
    if git is None:
        return False
    for args in (
        ("init", "-q", "-b", BRANCH),
        ("add", "-A"),
        ("commit", "-q", "--no-verify", "-m", "Chunking Labs: the student labs"),
    ):
        done = subprocess.run([git, *GIT, *args], cwd=folder, capture_output=True, text=True)
        if done.returncode != 0:
            reason = (done.stderr.strip().splitlines() or ["no message"])[-1]
            raise HandoutError(f"git {args[0]} failed in the handout: {reason}")
    return True


# ---- the whole build -----------------------------------------------------------------


def make_handout(target: Path, force: bool) -> Summary:
    """Build the handout beside `target`, check it, commit it, and move it into place."""
    check_target(target, force)
    check_labs_current()
    target.parent.mkdir(parents=True, exist_ok=True)
    built = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=target.parent))
    try:
        write_handout(built)
        check_no_reference_code(built)
        files = handout_files(built)
        size = sum(path.stat().st_size for path in files)
        committed = commit(built)
        put_in_place(built, target)
    except BaseException:
        shutil.rmtree(built, ignore_errors=True)
        raise
    return Summary(target, len(files), size, committed)


def report(summary: Summary) -> str:
    """The lines printed at the end: what was written, and what the teacher does next."""
    if summary.committed:
        git = f"a git repository with one commit on branch {BRANCH}"
        push = f"  git remote add origin YOUR-REPOSITORY-URL && git push -u origin {BRANCH}"
    else:
        git = "not a git repository (git was not found)"
        push = f"  git init -b {BRANCH} && git add -A && git commit -m 'Chunking Labs'"
    lines = [
        f"Handout written to {summary.folder}: {summary.files} files, "
        f"{summary.size / 1e6:.1f} MB; {git}.",
        "Next:",
        f"  cd {shlex.quote(str(summary.folder))}",
        push,
    ]
    lines += [
        "Try it as a student would:",
        "  python3 -m venv .venv && . .venv/bin/activate",
        "  pip install -r requirements.txt",
        "  python labs/rag4-chunking.py   # stops at the first TODO",
        "  pytest                         # grades labs/",
    ]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv[:1] == ["--answers-by-call"]:  # answers_by_call_in's own process
        print(json.dumps(answers_by_call(Path(argv[1]))))
        return 0
    parser = argparse.ArgumentParser(description="Write the course's student handout to DIR.")
    parser.add_argument("dir", metavar="DIR", help="a new or empty folder")
    parser.add_argument("--force", action="store_true", help="replace what DIR holds")
    args = parser.parse_args(argv)
    try:
        summary = make_handout(Path(os.path.abspath(args.dir)), args.force)
    except (HandoutError, OSError) as error:
        print(f"make_handout: {error}", file=sys.stderr)
        return 1
    print(report(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
