"""How the tests share two pytest processes (pytest-xdist), and why a grading keeps to one.

The project's own run spreads its scopes over two workers (conftest.process_scope); a grading runs in
one process whatever `-n` says (conftest.one_process_for_a_grading): its public and hidden lab workers
must never be alive at once, and its grades table is one process's.
"""

from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def conftest(request):
    [module] = [plugin for plugin in request.config.pluginmanager.get_plugins()
                if getattr(plugin, "__file__", "") == str(ROOT / "tests" / "conftest.py")]
    return module


def a_run(args: list, lab_dir: Path) -> SimpleNamespace:
    """What one_process_for_a_grading reads of a pytest run asked for two processes."""
    return SimpleNamespace(option=SimpleNamespace(dist="load", numprocesses=2, tx=["popen", "popen"]),
                           args=args, invocation_params=SimpleNamespace(dir=ROOT),
                           getoption=lambda name: str(lab_dir))


@pytest.mark.parametrize("args, lab_dir, processes", [
    (["tests"], ROOT / "solutions", 2),  # the README's `pytest`
    (["tests/test_labs.py", "tests/grading/test_rag4.py"], ROOT / "solutions", 2),
    (["tests/grading"], ROOT / "solutions", 1),  # the grading tests alone
    (["tests/grading/test_rag4.py::test_word_windows_by_hand"], ROOT / "solutions", 1),
    (["tests"], ROOT / "labs", 1),  # a student's folder
])
def test_a_grading_runs_in_one_process(conftest, args, lab_dir, processes):
    run = a_run(args, lab_dir)
    conftest.one_process_for_a_grading(run)
    assert (run.option.dist != "no") == (processes == 2)
    assert len(run.option.tx) == (processes if processes == 2 else 0)


def test_every_grading_test_is_in_one_scope_and_each_other_module_in_its_own(conftest):
    assert conftest.process_scope("tests/grading/test_rag4.py::test_x[1]") == "tests/grading"
    assert conftest.process_scope("tests/grading/hidden/test_rag4_hidden.py::test_y") == "tests/grading"
    assert conftest.process_scope("tests/test_chunk.py::test_z") == "tests/test_chunk.py"
    for module, joined in conftest.SHARED_WORK.items():
        assert (ROOT / module).is_file() and (ROOT / joined).is_file()
        assert conftest.process_scope(f"{module}::test_a") == conftest.process_scope(f"{joined}::test_b")


def test_the_modules_that_start_outside_work_are_known_to_the_plan(conftest):
    """The first worker runs (and starts the work of) every module with a start_early."""
    config = SimpleNamespace(rootpath=ROOT)
    early = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tests").glob("test_*.py")
             if conftest.starts_outside_work(config, path.relative_to(ROOT).as_posix())}
    assert {"tests/test_grader.py", "tests/test_labs.py", "tests/test_mutations.py"} <= early
    assert conftest.starts_outside_work(config, "tests/test_labs.py")  # and test_notebooks.py, joined to it
    assert not conftest.starts_outside_work(config, "tests/test_chunk.py")
