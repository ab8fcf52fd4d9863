"""The course as a wheel: built, installed where no clone is, started, run and compared from there.

The heavy test builds the wheel, installs it in a new virtual environment (from the package
index, as a learner would), writes a student's copy with `chunking-labs start`, runs a lab
from it, and runs `chunking-labs compare` on a small folder; the others check `start` and
the grader's view of an installed course without building anything.
"""

import os
import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest

import confine
from labkit import cli, start
from academy_llm import COURSE_ROOT

ROOT = Path(__file__).resolve().parent.parent
DOC = ("# Backups\n\nBackups run every night at two and keep seven days.\n\n"
       "## Restore\n\nRun `orbit restore` to bring a backup back.\n")
QUESTIONS = ('{"question": "How long are backups kept?", "answer": "keep seven days"}\n'
             '{"question": "How do I get a backup back?", "answer": "Run `orbit restore`"}\n')


def test_start_writes_the_student_labs_hints_and_notebooks_and_no_reference(tmp_path, capsys):
    folder = tmp_path / "mine"
    assert cli.main(["start", str(folder)]) == 0
    written = {path.relative_to(folder).as_posix() for path in folder.rglob("*") if path.is_file()}
    for lab in (ROOT / "labs").glob("rag*-*.py"):
        assert f"labs/{lab.name}" in written
        assert (folder / "labs" / lab.name).read_text(encoding="utf-8") == lab.read_text(encoding="utf-8")
        assert f"notebooks/labs/{lab.stem}.ipynb" in written
        assert f"labs/hints/{lab.stem.split('-')[0]}.json" in written
    assert "README.md" in written
    assert not any("solution" in name for name in written)
    assert not any("BEGIN SOLUTION" in (folder / name).read_text(encoding="utf-8") for name in written)
    assert "python labs/rag4-chunking.py" in capsys.readouterr().out


def test_start_writes_what_the_handout_gives_a_student():
    """start.STUDENT_FILES repeats the handout's patterns (make_handout is not in the wheel): kept in step here."""
    import make_handout

    assert set(start.STUDENT_FILES) <= set(make_handout.COURSE_FILES)
    assert not any(pattern.startswith(("labs/", "notebooks/")) for pattern in
                   set(make_handout.COURSE_FILES) - set(start.STUDENT_FILES))


def test_start_refuses_a_folder_that_holds_files(tmp_path):
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    with pytest.raises(SystemExit, match="already holds files"):
        cli.main(["start", str(tmp_path)])
    assert [path.name for path in tmp_path.iterdir()] == ["notes.txt"]


def test_a_clone_reads_its_files_from_the_top_of_the_clone():
    assert COURSE_ROOT == ROOT
    assert start.student_files()


def test_an_installed_course_is_hidden_from_workers(tmp_path, monkeypatch):
    """A wheel in the grader's Python holds the reference labs (labkit/course/solutions): no worker reads it."""
    site = tmp_path / "site-packages"
    (site / "labkit" / "course" / "solutions").mkdir(parents=True)
    (site / "other").mkdir()
    monkeypatch.setattr(confine, "python_paths", lambda: [str(site)])
    assert confine.installed_courses() == [os.path.realpath(site / "labkit")]


def run(argv, cwd, **options) -> subprocess.CompletedProcess:
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=900, **options)


@pytest.mark.heavy  # builds a wheel and installs it with its dependencies in a new environment
@pytest.mark.timeout(1800)
def test_the_wheel_installs_starts_runs_a_lab_and_compares(tmp_path):
    source = tmp_path / "course"  # a copy: a build in the clone would leave build/ behind in it
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(".git", "build", "__pycache__", "*.egg-info"))
    built = run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", str(source),
                 "-w", str(tmp_path / "dist")], cwd=tmp_path)
    assert built.returncode == 0, built.stderr[-2000:]
    wheel = next((tmp_path / "dist").glob("chunking_labs-*.whl"))
    venv.create(tmp_path / "env", with_pip=True)
    python = str(tmp_path / "env" / "bin" / "python")
    installed = run([python, "-m", "pip", "install", "--quiet", str(wheel)], cwd=tmp_path)
    assert installed.returncode == 0, installed.stderr[-2000:]
    environment = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "VIRTUAL_ENV")}
    environment["PATH"] = f"{tmp_path / 'env' / 'bin'}{os.pathsep}{environment['PATH']}"
    away = tmp_path / "elsewhere"  # no clone here, nor on the path
    away.mkdir()

    where = run([python, "-c", "import academy_llm as a, labkit.explorer_widget as e; "
                 "print(a.TOKENIZER_FILE.is_file(), e.SCRIPT.is_file(), a.COURSE_ROOT)"], cwd=away, env=environment)
    assert where.stdout.split()[:2] == ["True", "True"] and "site-packages" in where.stdout, where.stderr

    grader = run([python, "-c", f"import sys; sys.path.insert(0, {str(ROOT / 'tools' / 'grading')!r}); import confine; "
                  "print(*confine.hidden_paths(), sep=chr(10))"], cwd=away, env=environment)
    assert any(line.endswith("site-packages/labkit") for line in grader.stdout.splitlines()), grader.stderr[-2000:]

    started = run(["chunking-labs", "start", "mine"], cwd=away, env=environment)
    assert started.returncode == 0, started.stderr
    stub = run([python, "labs/rag4-chunking.py"], cwd=away / "mine", env=environment)
    assert stub.returncode == 1 and "TODO" in stub.stdout + stub.stderr, stub.stdout[-2000:] + stub.stderr[-2000:]
    hint = run([python, "labs/rag4-chunking.py", "--hint", "3"], cwd=away / "mine", env=environment)
    assert "Hint 3 of 3 for word_windows()" in hint.stdout + hint.stderr, hint.stdout[-2000:]  # from the wheel

    shutil.copyfile(ROOT / "solutions" / "rag4-chunking.py", away / "mine" / "labs" / "rag4-chunking.py")
    finished = run([python, "labs/rag4-chunking.py"], cwd=away / "mine", env=environment)
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-2000:]  # its public tests included

    docs = away / "docs"
    docs.mkdir()
    (docs / "backups.md").write_text(DOC, encoding="utf-8")
    (away / "questions.jsonl").write_text(QUESTIONS, encoding="utf-8")
    compared = run(["chunking-labs", "compare", "docs", "--questions", "questions.jsonl", "--out", "report",
                    "--cache", "cache"], cwd=away, env=environment)
    assert compared.returncode == 0, compared.stdout[-3000:] + compared.stderr[-2000:]
    assert (away / "report").is_dir() and any((away / "report").iterdir())
