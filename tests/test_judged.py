"""What a student is shown of a failed call: the judge's own words (tools/grading/judged.py), never the lab's.

A lab that learned a hidden input (through the page cache, by timing, from a classmate) would show it through
any text it controls: its exception's message and type, where it says it raised, a chunk's text, a value's
repr, a path it asks for. Each is checked here to stay out of a public test's message, and, end to end, a lab
that raises and returns such texts in a worker of its own."""

import sys
from pathlib import Path

import conftest
import confine
import judged
import pytest
import remote

ROOT = Path(__file__).resolve().parent.parent
SECRET = "keep it secret"  # stands for a hidden input the lab learned
FILES = ("rag4-chunking.py",)


def test_the_labs_message_type_and_place_are_told_in_the_judges_words():
    error = {"type": "LeakError", "builtin": "ValueError", "message": SECRET,
             "where": "rag4-chunking.py:12 in word_windows"}
    said = judged.lab_error(error, "word_windows", "rag4", FILES)
    assert said == "raised ValueError (at rag4-chunking.py:12 in word_windows)"
    forged = dict(error, where=f"{SECRET}.py:1 in keep_it_secret", builtin="KeepItSecret")
    assert judged.lab_error(forged, "word_windows", "rag4", FILES) == "raised an exception"
    helper = dict(error, where="rag4-chunking.py:40 in keep_it_secret")
    assert judged.lab_error(helper, "word_windows", "rag4", FILES) == "raised ValueError (at rag4-chunking.py:40)"


def test_a_todo_is_named_only_as_a_function_the_grader_knows():
    stub = {"builtin": "NotImplementedError", "message": "TODO(rag4) word_windows(): split into windows"}
    said = judged.lab_error(stub, "word_windows", "rag4", FILES)
    assert said == "stops at TODO(rag4) word_windows(): not written yet"
    earlier = dict(stub, message="TODO(rag4) token_windows(): hint")
    assert judged.lab_error(earlier, "split_at_seams", "rag5", FILES) == (
        "rag5 builds on your rag4, which stops at TODO(rag4) token_windows(); finish rag4 first")
    forged = dict(stub, message="TODO(rag4) keep_it_secret(): hint")
    assert judged.lab_error(forged, "word_windows", "rag4", FILES) == "stops at a TODO: not written yet"


def test_sys_exit_keeps_its_code_only():
    error = {"builtin": "SystemExit",
             "message": "the lab called sys.exit(3); a lab's functions return, they never exit"}
    assert judged.lab_error(error, "f", "rag4", FILES).startswith("raised SystemExit: the lab called sys.exit(3);")
    leak = {"builtin": "SystemExit", "message": f"the lab called sys.exit({SECRET!r}); ..."}
    assert SECRET not in judged.lab_error(leak, "f", "rag4", FILES)


@pytest.mark.parametrize("message, sent, expected", [
    ("word_windows('one two three four five …', 3, 1): chunk 1 [0, 4) 'keep it se…' is not its span",
     ["one two three four five six"],
     "word_windows('one two three four five …', 3, 1): chunk 1 [0, 4) <a text of the lab's> is not its span"),
    ("f('abc'): expected 'b', got 'zz'", ["abc"], "f('abc'): expected 'b', got <a text of the lab's>"),
    ("the lab's process ended: it isn't 'x'", [], "the lab's process ended: it isn't <a text of the lab's>"),
    ("f(): 0.123456789 != 0.5 and 12345678901234", [], "f(): 0.1235 != 0.5 and <a long number>"),
    ("f(): got \"it's\" and 'a\\x1b[2J'", ["it's a\x1b[2J"], "f(): got \"it's\" and 'a\\x1b[2J'"),
    ("f(): refused open '/proc/self/pagemap'", [], "f(): refused open '/proc/self/pagemap'"),
])
def test_a_public_message_quotes_only_what_the_grader_sent(message, sent, expected):
    assert judged.shown(message, sent) == expected


def test_a_refusal_names_pythons_events_only():
    assert judged.refusal("os.kill") == "os.kill"
    assert judged.refusal(f"{SECRET} x") == "an audit event of the lab's own"


LEAKY = f'''
import academy_llm

SECRET = {SECRET!r}


def word_windows(text, size, overlap=0):
    raise ValueError(SECRET)


def token_windows(text, max_tokens, overlap=0):
    return [academy_llm.Chunk(text=SECRET, start=0, end=len(SECRET), n_tokens=3)]
'''


@pytest.mark.skipif(sys.platform != "linux", reason="a worker of the grader's, as it runs on Linux")
def test_a_lab_that_raises_and_returns_a_secret_shows_none_of_it(tmp_path):
    """End to end: the lab's worker raises its secret and returns it as a chunk's text; the reasons a public
    test would give keep neither (in the course, which has hidden tests)."""
    folder = tmp_path / "labs"
    folder.mkdir()
    path = folder / "rag4-chunking.py"
    path.write_text(LEAKY, encoding="utf-8")
    lab = remote.RemoteLab("rag4", path, {"rag4": path}, {}, [ROOT / name for name in confine.CLOSED_FOLDERS],
                           confine.PROCESS)
    reasons = []
    remote.Clock.start(30)
    try:
        for call in (lambda: lab.word_windows("one two three", 2),
                     lambda: check_chunks(lab.token_windows("one two three", 4))):
            try:
                call()
            except Exception as error:  # noqa: BLE001  (the reason is what is checked)
                reasons.append(conftest.student_message(conftest.failure_reason(error, lab.last_call), False,
                                                         remote.Clock.sent))
    finally:
        remote.Clock.stop()
        lab.close()
    assert len(reasons) == 2 and not [reason for reason in reasons if SECRET in reason], reasons
    assert reasons[0] == "word_windows('one two three', 2) raised ValueError (at rag4-chunking.py:8 in word_windows)"


def check_chunks(chunks):
    import grading_checks

    grading_checks.token_windows_exact("one two three", chunks, 4, 0)




# ---- hidden inputs of a submission's own ------------------------------------------------------------------


def test_each_submission_draws_hidden_inputs_of_its_own(monkeypatch):
    """The hidden inputs come from the term's secret seed and the submission's files: another student's, or
    an earlier submission's, are other inputs, so what a lab learns of them earns nothing; the same files
    draw the same inputs again, and the report's seed draws them without the files."""
    import grading_checks as check

    monkeypatch.delenv("ACADEMY_SUBMISSION_SEED", raising=False)
    monkeypatch.setattr(check, "SUBMISSION", ["alice's files"])
    alice, example = check.submission_seed(), check.varied("  keep it secret  ", "word_windows")
    assert check.varied("  keep it secret  ", "word_windows") == example and check.submission_seed() == alice
    monkeypatch.setattr(check, "SUBMISSION", ["bob's files"])
    assert check.submission_seed() != alice and check.varied("  keep it secret  ", "word_windows") != example
    assert alice != check.grading_seed() and str(check.grading_seed()) not in str(alice)
    monkeypatch.setenv("ACADEMY_SUBMISSION_SEED", str(alice))
    assert check.varied("  keep it secret  ", "word_windows") == example
    shape = [(char.isalpha(), char if not char.isalpha() else "") for char in example]
    assert shape == [(char.isalpha(), char if not char.isalpha() else "") for char in "  keep it secret  "]
    assert "keep" not in example


def test_a_varied_example_keeps_its_answer():
    import grading_checks as check

    text = check.varied("α β\r\nγ\u00a0δ\tε  ζ", "word_windows")
    assert [(i, char) for i, char in enumerate(text) if not char.isalpha()] == [
        (1, " "), (3, "\r"), (4, "\n"), (6, "\u00a0"), (8, "\t"), (10, " "), (11, " ")]
    assert len(text.split()) == 6
