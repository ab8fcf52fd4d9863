"""The "fast" hypothesis profile tries the same examples in every process that runs a test.

The grader's public run, its run with the hidden tests (which import
tools/grading/oracles.py) and a lab's own final check import different modules:
tests/test_memoriser.py records the public tests' calls in one and replays them
in another, and a lab whose check passes must have passed what the grader tries.
"""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The examples a property test of the course draws, printed after importing `first` (or nothing).
EXAMPLES = """
import sys
sys.path[:0] = ["tools/grading", "tests"]
import profiles
profiles.load_fast_profile()
if sys.argv[1]:
    __import__(sys.argv[1])
from hypothesis import given, strategies as st
from text_strategies import any_text, lined_prose, lined_text, prose

@given(text=st.one_of(st.text(), any_text, prose, lined_text, lined_prose), budget=st.integers(4, 60))
def draw(text, budget):
    print(repr((text, budget)))

draw()
"""


def examples_after(module: str) -> str:
    done = subprocess.run([sys.executable, "-c", EXAMPLES, module], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_the_examples_do_not_depend_on_what_else_is_imported():
    """Hypothesis draws now and then a literal of the project's imported modules: the fast profile must not."""
    alone = examples_after("")
    assert alone.count("\n") >= 60, alone
    assert examples_after("oracles") == alone, "importing oracles.py changed the examples drawn"


def test_a_labs_check_keeps_hypothesis_tables_in_the_course_cache(tmp_path, monkeypatch):
    """hypothesis computes its Unicode tables on first use (about a second of CPU) and keeps them where it
    is told: a lab's last check tells it the course's cache folder, so a lab run from a new folder does
    not pay again; $HYPOTHESIS_STORAGE_DIRECTORY, when set, still decides."""
    from hypothesis import configuration

    from labkit import public_tests

    monkeypatch.setenv("ACADEMY_CACHE_DIR", str(tmp_path))
    try:
        monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
        public_tests.keep_hypothesis_tables()
        assert configuration.storage_directory("unicode_data").path == tmp_path / "hypothesis" / "unicode_data"
        configuration.set_hypothesis_home_dir(None)
        monkeypatch.setenv("HYPOTHESIS_STORAGE_DIRECTORY", str(tmp_path / "asked"))
        public_tests.keep_hypothesis_tables()
        assert configuration.storage_directory("unicode_data").path == tmp_path / "asked" / "unicode_data"
    finally:
        configuration.set_hypothesis_home_dir(None)  # read again from the environment, as restored
