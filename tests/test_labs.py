"""The labs as a student meets them: solutions pass offline, stubs stop at a TODO, labs/ in sync."""

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("rag*-*.py"))

# Runs a lab with every network connection refused, as in a classroom without network.
OFFLINE = (
    "import runpy, socket, sys\n"
    "def refuse(*a, **k): raise OSError('network disabled by the test')\n"
    "socket.socket.connect = refuse; socket.create_connection = refuse\n"
    "sys.argv = [sys.argv[1]]\n"
    "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)


def run_offline(path: Path, tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", OFFLINE, str(path)],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )


def make_labs():
    spec = importlib.util.spec_from_file_location("make_labs", ROOT / "tools" / "make_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_lab_passes_offline(solution, tmp_path):
    result = run_offline(solution, tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "all invariants hold" in result.stdout


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_student_lab_stops_at_its_first_todo(solution, tmp_path):
    lab = solution.stem.split("-")[0]
    result = run_offline(ROOT / "labs" / solution.name, tmp_path)
    assert result.returncode == 1
    assert f"TODO({lab})" in result.stderr and "-> fill in" in result.stderr
    assert "Traceback" not in result.stderr


def test_labs_folder_matches_solutions():
    stale = make_labs().stale_labs()
    assert not stale, f"labs/ is out of date ({stale}); run: python tools/make_labs.py"


def test_generator_turns_a_region_into_a_hinted_stub():
    source = (
        "def f(x):\n"
        "    '''Double x.'''\n"
        "    # BEGIN SOLUTION\n"
        "    # hint: Multiply by two.\n"
        "    # hint: Return it.\n"
        "    return 2 * x\n"
        "    # END SOLUTION\n"
    )
    stub = make_labs().student_version(source, "rag9")
    assert "return 2 * x" not in stub
    assert "    # TODO(rag9): Multiply by two.\n    #   Return it.\n" in stub
    namespace = {}
    exec(stub, namespace)
    with pytest.raises(NotImplementedError, match=r"TODO\(rag9\) f\(\): Multiply by two. Return it."):
        namespace["f"](1)


@pytest.mark.parametrize(
    "source, problem",
    [
        ("# BEGIN SOLUTION\n# hint: h\nx = 1\n# END SOLUTION\n", "inside a function"),
        ("def f():\n    # BEGIN SOLUTION\n    # hint: h\n    return 1\n", "never closed"),
        ("def f():\n    # BEGIN SOLUTION\n    return 1\n    # END SOLUTION\n", "hint"),
        ("def f():\n    return 1\n    # END SOLUTION\n", "without"),
    ],
)
def test_generator_rejects_malformed_regions(source, problem):
    generator = make_labs()
    with pytest.raises(generator.RegionError, match=problem):
        generator.student_version(source, "rag9")
