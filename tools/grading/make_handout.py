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
even renamed (answer_copies). It is
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
        ("pytest", "pytest-timeout", "hypothesis", "markdown-it-py", "bm25s"),
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


def shape(statements: list) -> str | None:
    """The shape of a run of statements (docstring dropped), or None when it is too short to tell."""
    if statements and isinstance(statements[0], ast.Expr) and isinstance(statements[0].value, ast.Constant):
        statements = statements[1:]
    if sum(1 for statement in statements for _ in ast.walk(statement)) < SHORTEST_ANSWER:
        return None
    return ast.dump(ast.Module(body=[Shaped().visit(ast.parse(ast.unparse(s)).body[0]) for s in statements],
                               type_ignores=[]), annotate_fields=False)


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
    named as one of the grader's oracles: 'labkit/x.py: name (rag8's paired_bootstrap)'."""
    shapes = answer_shapes()
    oracles = {function.name for function in functions(ast.parse(ORACLES.read_text(encoding="utf-8")))}
    found = []
    for path in handout_files(folder):
        name = path.relative_to(folder).as_posix()
        if path.suffix != ".py":
            continue
        for function in functions(ast.parse(path.read_text(encoding="utf-8"), name)):
            what = shapes.get(shape(function.body)) or (
                f"the grader's {function.name}" if function.name in oracles else None)
            if what:
                found.append(f"{name}: {function.name} ({what})")
    return found


def check_no_reference_code(folder: Path) -> None:
    """Stop before anything is committed or put in place if reference code, or an answer, got in."""
    found = reference_code(folder) + answer_copies(folder)
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
