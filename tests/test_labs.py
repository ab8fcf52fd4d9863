"""The labs as a student meets them: solutions pass offline, stubs stop at a TODO, labs/ in sync."""

import importlib.util
import re
from pathlib import Path

import pytest
from offline import run_offline

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = sorted((ROOT / "solutions").glob("rag*-*.py"))

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


@pytest.mark.parametrize("solution", SOLUTIONS, ids=lambda p: p.stem)
def test_solution_lab_passes_offline(solution, tmp_path):
    result = run_offline(solution, tmp_path)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert "all invariants hold" in result.stdout
    lab = solution.stem.split("-")[0]
    if lab in LABS_WITH_A_CHUNK_VIEW:
        assert CHUNK_VIEW.search(result.stdout), f"{lab} shows no chunks on their text"
        assert "\x1b[" not in result.stdout, "ANSI colours sent to a pipe"
    if lab in PLOTS:
        plot = tmp_path / PLOTS[lab]  # saved in the folder the lab was run from
        assert plot.is_file() and plot.read_bytes().startswith(PNG_SIGNATURE), f"{lab} saved no {plot.name}"


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
