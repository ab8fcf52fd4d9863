"""Nothing the handout ships answers a TODO, and a lab's own check decides as the grader does.

The grader's oracles (tools/grading/oracles.py) stay on its side: the public tests hold what
they computed as data, checked here against them. The intervals the labs are given
(labkit.uncertainty) are a formula, not rag8's bootstrap: a rag8 that hands its TODO to them
fails its own check, as it fails the grader. And a lab that imports what the grader's worker
does not have fails its own check too, rather than passing here and failing there.
"""

import importlib.util
import math
from pathlib import Path

import oracles
import pytest

from labkit import load_lab
from labkit.public_tests import run_public_tests, unreachable_imports
from labkit.uncertainty import paired_difference

ROOT = Path(__file__).resolve().parent.parent


def public_tests(lab: str):
    """tests/grading/test_LAB.py as a module, for the data it holds."""
    spec = importlib.util.spec_from_file_location(f"_data_of_{lab}", ROOT / "tests" / "grading" / f"test_{lab}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rag8s_public_bands_are_the_exact_distributions():
    for case, ((a, b), level, resamples, low, high) in public_tests("rag8").BOOTSTRAP_CASES.items():
        for written, computed in zip((low, high), oracles.bands(a, b, level, resamples)):
            assert all(map(math.isclose, written, computed)), (case, written, computed)


def test_rag9s_public_breakpoints_are_the_graders():
    rag9 = public_tests("rag9")
    assert oracles.breakpoint_starts(rag9.TWO_TOPICS) == [len(rag9.QUEUES)]


@pytest.fixture(scope="module")
def rag8():
    return load_lab("rag8", ROOT / "solutions")


def test_rag8_passes_its_own_check(rag8):
    count, failures = run_public_tests("rag8", dict(vars(rag8)))
    assert count and not failures, failures[:3]


def test_a_rag8_handing_its_bootstrap_to_the_given_intervals_fails_its_own_check(rag8):
    """The given intervals are no answer: a paired_bootstrap that returns labkit.uncertainty's
    paired_difference fails the public tests, in the lab's own check as in the grader."""

    def paired_bootstrap(a, b, *, resamples=2000, level=0.95, seed=0):
        if isinstance(resamples, bool) or not isinstance(resamples, int) or any(
                isinstance(score, bool) or not isinstance(score, (int, float)) for score in [*a, *b]):
            raise TypeError("scores must be numbers and resamples an int")
        if resamples < 1:
            raise ValueError("resamples must be 1 or more")
        return paired_difference(a, b, level=level)  # refuses unpaired or empty scores and a bad level

    _, failures = run_public_tests("rag8", {**vars(rag8), "paired_bootstrap": paired_bootstrap})
    failed = {failure.call.name for failure in failures}
    assert "test_bootstrap_interval_is_the_paired_percentile_interval[one-better]" in failed, failed
    assert {failure.call.function for failure in failures} == {"paired_bootstrap"}


@pytest.mark.parametrize("line", ["import scipy.stats", "from bm25s import BM25", "import markdown_it",
                                  "from grading_checks import lossless", "import oracles"])
def test_an_import_the_grader_lacks_fails_the_labs_own_check(tmp_path, rag8, line):
    lab = tmp_path / "rag8-evaluate-chunking.py"
    lab.write_text(f"import numpy\n\n\ndef helper():\n    {line}\n", encoding="utf-8")
    assert unreachable_imports({"__file__": str(lab)}) == [f"line 5: import {line.split()[1]}"]
    _, failures = run_public_tests("rag8", {**vars(rag8), "__file__": str(lab)})
    assert [failure.call.name for failure in failures] == ["the lab's imports"]
    assert "the grader does not have" in failures[0].reason
