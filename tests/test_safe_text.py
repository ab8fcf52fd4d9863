"""Every byte a person reads is safe to print, and a lab's last check never crashes.

A student's code controls text that reaches a reader: an exception's message, its class's and function's
names, a returned value, a refusal it makes up. safe_text (labkit/safe_text.py, the grader's
tools/grading/safe_text.py) escapes every control and format character and bounds the length; these tests
hold each way out to it: a lab's own FAIL lines, the pytest form's reasons, report, tracebacks and
captures, and grade_class's gradebook and Gradescope rows. The whole grader, on a lab that answers with
escapes, is tried in the heavy tier (tests/test_redteam.py, with tests/redteam/escape_printer.py).

A lab whose function does not raise an error a public test expects meets pytest's own `Failed` (a
BaseException): the lab says so in its FAIL line, naming the call, and ends with its verdict.
"""

import csv
import json
import re
import sys
import unicodedata
from pathlib import Path
from types import SimpleNamespace

import pytest
from offline import run_offline

ROOT = Path(__file__).resolve().parent.parent
TOOLS = ROOT / "tools" / "grading"
if str(TOOLS) not in sys.path:  # the tools import each other by name
    sys.path.insert(0, str(TOOLS))

import gradebook  # noqa: E402
import safe_text as grader_safe_text  # noqa: E402
from conftest import failure_reason, made_safe_to_print, safe_report  # noqa: E402
from staging import Staged  # noqa: E402
import supervise  # noqa: E402
from supervise import GRADED, Outcome, make_log_safe  # noqa: E402

from labkit.safe_text import safe_text  # noqa: E402

UNSAFE = ("Cc", "Cf")
ESCAPES = ("\r\x1b[2K\x1b[1A  rag4       10.00 / 10  \x1b]0;all tests passed\x07\x1b]52;c;Y3VybA==\x07"
           "\u202e01 / 00.01\u202c\u2066\u2069\u200b\u200f\ufeff\x00\x85\u2028" + "x" * 50_000)


def unsafe_characters(text: str, allowed: str = "") -> list[str]:
    """The control and format characters of `text` (Unicode Cc and Cf), those in `allowed` excepted."""
    return sorted({repr(c) for c in text if c not in allowed and unicodedata.category(c) in UNSAFE})


def strings_in(value):
    """Every text in a JSON value, keys too."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield key
            yield from strings_in(item)
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)


# ---- safe_text itself ------------------------------------------------------------------------


def test_every_control_and_format_character_is_escaped():
    unsafe = "".join(chr(code) for code in range(sys.maxunicode + 1)
                     if unicodedata.category(chr(code)) in UNSAFE)
    assert len(unsafe) > 200  # C0, C1, bidi controls, joiners, tags...
    shown = safe_text(unsafe, limit=10 * len(unsafe))
    assert unsafe_characters(shown) == [] and not shown.endswith("…")
    assert unsafe_characters(safe_text(unsafe, limit=10 * len(unsafe), lines=True), allowed="\n") == []
    assert safe_text("a\x1b[2Jb\u202ec") == "a\\x1b[2Jb\\u202ec"


def test_only_newlines_are_kept_and_only_when_asked():
    assert safe_text("one\ntwo\r\nthree") == "one\\x0atwo\\x0d\\x0athree"
    assert safe_text("one\ntwo\r\nthree", lines=True) == "one\ntwo\\x0d\nthree"
    assert safe_text("tab\there", lines=True) == "tab\\x09here"


@pytest.mark.parametrize("limit", [1, 10, 300, 4096])
def test_the_text_is_bounded_whatever_it_holds(limit):
    for text in ("x" * 100_000, "\x1b" * 100_000, "\U000e0041" * 100_000, ESCAPES):
        assert len(safe_text(text, limit)) <= limit + len(" …")


def test_escaping_twice_changes_nothing_and_plain_text_is_left_alone():
    once = safe_text(ESCAPES[:200], 1000)
    assert safe_text(once, 1000) == once
    plain = "token_windows('héllo 世界 👩\u200d👩', 10, 0): chunk 1 [0, 4) has 5 tokens"
    assert safe_text(plain) == plain.replace("\u200d", "\\u200d")


def test_the_grader_and_the_labs_print_through_one_function():
    assert grader_safe_text.safe_text is safe_text


# ---- the pytest form ---------------------------------------------------------------------------


def lab_error(message: str = ESCAPES):
    """The lab's own exception as the grader rebuilds it (remote.rebuilt_error): its class and
    where it was raised are the lab's words too."""
    error = RuntimeError(message)
    error.lab_call = "word_windows('a b', 3, 1)"
    error.lab_type = "Escaping\x1b]0;title\x07Error\u202e"
    error.lab_where = "rag4-chunking.py:12 in \x1b[2J\u202ewindows"
    return error


def test_a_failure_reason_is_one_escaped_bounded_line():
    for error in (lab_error(), AssertionError(ESCAPES), ValueError(ESCAPES)):
        reason = failure_reason(error, "word_windows('a b', 3, 1)")
        assert unsafe_characters(reason) == [] and len(reason) <= 302, reason
        assert reason.startswith("word_windows('a b', 3, 1)")


def test_what_pytest_prints_of_a_grading_test_is_escaped_and_bounded():
    failed = SimpleNamespace(longrepr=f"E   RuntimeError: {ESCAPES[:300]}\n" * 3 + ESCAPES,
                             sections=[("Captured stdout call", ESCAPES), ("\x1b]0;x\x07", "y")])
    made_safe_to_print(failed)
    assert unsafe_characters(failed.longrepr, allowed="\n") == [] and len(failed.longrepr) <= 20_002
    assert failed.longrepr.count("\n") >= 1  # a traceback keeps its lines
    for title, content in failed.sections:
        assert unsafe_characters(title + content, allowed="\n") == [] and len(content) <= 20_002
    skipped = SimpleNamespace(longrepr=("test_rag4.py", 3, f"Skipped: {ESCAPES}"), sections=[])
    made_safe_to_print(skipped)
    assert unsafe_characters(skipped.longrepr[2]) == [] and skipped.longrepr[:2] == ("test_rag4.py", 3)


def escaping_report() -> dict:
    """A grader's report whose every text a lab could have chosen holds escapes."""
    test = {"name": "test_word_windows_small_example", "function": "word_windows", "hidden": False,
            "points": 1.0, "outcome": "failed", "message": ESCAPES}
    lab = {"earned": 0.0, "possible": 10.0, "file": f"rag4-{ESCAPES[:40]}.py", "warnings": [ESCAPES],
           "flags": [f"refused: open {ESCAPES}"], "functions": {"word_windows": {"earned": 0.0, "possible": 10.0}},
           "tests": [test, dict(test, hidden=True, name="test_word_windows_hidden (hidden case 1)")]}
    return {"student": "alice", "lab_dir": "/tmp/labs", "isolation": "sandbox", "walls": [ESCAPES],
            "earned": 0.0, "possible": 10.0, "labs": {"rag4": lab}}


def test_the_report_holds_no_unsafe_character_and_no_long_text():
    report = safe_report(escaping_report())
    texts = list(strings_in(json.loads(json.dumps(report))))
    assert [text for text in texts if unsafe_characters(text)] == []
    assert max(map(len, texts)) <= 4098
    assert "\\x1b]52;c;" in report["labs"]["rag4"]["tests"][0]["message"]  # shown, as text


# ---- grade_class: Gradescope's rows, the gradebook, the log ------------------------------------------


def test_gradescope_rows_are_escaped_and_bounded_even_from_an_unescaped_report():
    staged = Staged("alice", Path("/tmp/alice"), notes=[f"labs/rag4-{ESCAPES[:60]}.py was not graded: copy"])
    results = gradebook.gradescope_results(Outcome(staged, GRADED, escaping_report()))
    texts = list(strings_in(results))
    assert [text for text in texts if unsafe_characters(text, allowed="\n")] == []
    lines = [line for text in texts for line in text.splitlines()]
    assert max(map(len, lines)) <= gradebook.LINE_LIMIT + 2
    not_graded = gradebook.gradescope_results(Outcome(staged, "not graded", None, ESCAPES))
    assert unsafe_characters(not_graded["output"], allowed="\n") == []


def test_gradebook_cells_are_escaped_and_bounded(tmp_path):
    staged = Staged("alice", tmp_path)
    report = dict(escaping_report(), earned=0.0, possible=10.0)
    path = tmp_path / "gradebook.csv"
    gradebook.write_gradebook(path, [Outcome(staged, GRADED, report)], ["rag4"],
                              {"alice": [f"refused-{ESCAPES}"]})
    rows = list(csv.reader(path.read_text(encoding="utf-8").splitlines()))
    cells = [cell for row in rows for cell in row]
    assert [cell for cell in cells if unsafe_characters(cell)] == []
    assert max(map(len, cells)) <= gradebook.CELL_LIMIT + 3


def test_a_graders_log_is_kept_escaped_and_bounded(tmp_path, monkeypatch):
    monkeypatch.setattr(supervise, "LOG_LIMIT", 5000)
    log = tmp_path / "grader.log"
    log.write_text(("ok line\n" + ESCAPES[:300] + "\n") * 100 + "  rag4  0.00 / 10\n", encoding="utf-8")
    make_log_safe(log)
    text = log.read_text(encoding="utf-8")
    assert unsafe_characters(text, allowed="\n") == [] and "ok line\n" in text
    assert len(text) <= 5100 and text.endswith("  rag4  0.00 / 10\n")  # the end, where the grades are


# ---- a lab's last check ------------------------------------------------------------------------------


NO_CHECK = "    check_text_and_window(text, size, overlap)\n"
TERMINAL_ESCAPES = "\x1b[2K\x1b[1A  rag4   10.00 / 10 \x1b]0;all passed\x07\x1b]52;c;Y3VybA==\x07\u202e01\u202c\x00"
# word_windows with no check of its arguments: it returns [] for a window that would not move, answers an
# overlap below 0 with an error of its own holding escapes, and takes every other argument as it comes.
NO_CHECK_INSTEAD = ("    if overlap < 0:\n"
                    f"        raise RuntimeError({'overlap below 0' + TERMINAL_ESCAPES + 'x' * 2000!r})\n"
                    "    if size - overlap < 1:\n"
                    "        return []\n")


@pytest.fixture(scope="module")
def unchecked_rag4(tmp_path_factory):
    """rag4, run as a student runs it, with a word_windows that raises none of the errors its public
    tests expect."""
    folder = tmp_path_factory.mktemp("unchecked")
    source = (ROOT / "solutions" / "rag4-chunking.py").read_text(encoding="utf-8")
    assert source.count(NO_CHECK) == 1
    lab = folder / "rag4-chunking.py"
    lab.write_text(source.replace(NO_CHECK, NO_CHECK_INSTEAD), encoding="utf-8")
    return run_offline(lab, folder)


def test_a_call_that_does_not_raise_is_a_fail_line_naming_it_and_the_lab_ends_with_its_verdict(unchecked_rag4):
    run = unchecked_rag4
    fails = [line for line in run.stdout.splitlines() if line.strip().startswith("FAIL")]
    assert run.returncode != 0 and "Traceback" not in run.stdout + run.stderr, run.stderr[-3000:]
    assert len(fails) == 1 and "the public grading tests" in fails[0], fails
    assert re.search(r"word_windows\('a b', 0, 0\): Failed: DID NOT RAISE ValueError", run.stdout), run.stdout[-3000:]
    assert "rag4: invariant failed: the public grading tests" in run.stdout


def test_a_labs_own_fail_lines_are_escaped_and_bounded(unchecked_rag4):
    said = unchecked_rag4.stdout + unchecked_rag4.stderr
    assert unsafe_characters(said, allowed="\n") == []
    assert "word_windows('a b', 3, -1): RuntimeError: overlap below 0\\x1b[2K\\x1b[1A" in said
    assert max(len(line) for line in said.splitlines() if "word_windows('a b', 3, -1)" in line) <= 400


def test_every_way_a_public_test_ends_is_its_verdict_but_ctrl_c():
    """sys.exit and pytest's own outcomes in a lab's function fail the call that met them, each in a line
    that names it; a learner's Ctrl-C still stops the lab."""
    from labkit.public_tests import run_public_tests

    def exits(*args, **kwargs):
        sys.exit(3)

    def skips(*args, **kwargs):
        pytest.skip("\x1b]0;skipped\x07")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    count, failures = run_public_tests("rag4", {"word_windows": exits, "token_windows": skips})
    reasons = {failure.call.function: failure.reason for failure in failures}
    assert len(failures) == count, [str(failure) for failure in failures]
    assert re.match(r"word_windows\(.*\): SystemExit: 3 \(", reasons["word_windows"]), reasons
    assert re.match(r"token_windows\(.*\): Skipped: \\x1b\]0;skipped\\x07$", reasons["token_windows"]), reasons
    with pytest.raises(KeyboardInterrupt):
        run_public_tests("rag4", {"word_windows": interrupted, "token_windows": interrupted})
