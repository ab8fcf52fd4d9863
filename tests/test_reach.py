"""Nothing a lab's worker can reach solves a TODO.

A student reads the given code, and a TODO that one call of it answers would
earn points for nothing. The heavy test tries every callable a worker holds
(tests/reach.py) as a delegation for every function a student writes, on the
lab's grading calls. The default tier checks the one place where the lab's own
data holds answers: rag6's readings of its tricky lines, which the grading
tests must not ask about.
"""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from points import POINTS

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

import make_markdown_readings  # noqa: E402


def test_the_readings_of_the_tricky_lines_are_the_parsers():
    assert make_markdown_readings.main(["--check"]) == 0, "run python tools/make_markdown_readings.py"


def rule_inputs() -> set:
    """Every line the grading tests (public and hidden) ask rag6's four rules about."""
    import reach

    lines = set()
    for call in reach.grading_calls("rag6"):
        if call.function in ("fence_opening", "closes_fence", "atx_heading"):
            lines.add(call.parameters["line"])
        elif call.function == "is_table_start" and "rows" in call.parameters:
            lines.update(call.parameters["rows"])
    return lines


def test_the_grading_tests_ask_the_rules_about_no_line_the_lab_has_the_reading_of():
    from labkit.markdown import TRICKY_MARKDOWN, split_lines

    read = {line.text for document in TRICKY_MARKDOWN for line in split_lines(document.text)}
    assert sorted(rule_inputs() & read) == []
