"""The checks a lab ends with (Invariants), and tricky inputs to run a student's functions on (Case)."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from academy_llm import check_budget, check_lossless
from labkit.safe_text import safe_text

DETAIL_LIMIT = 4000  # characters of a check's detail: five failing calls of 300, and what surrounds them


def answer_span(text: str, answer: str) -> tuple[int, int]:
    """(start, end) of a lab's answer in its document: the lab's own label of where the answer
    lies, which its checks compare chunks against (a label, not a chunk offset)."""
    start = text.find(answer)
    if start < 0:
        raise SystemExit(f"the lab's answer {answer[:40]!r}... is not in its document any more: "
                         f"restore the dataset (git checkout datasets/) or update the lab's answer")
    return start, start + len(answer)


class Invariants:
    """The checks a lab ends with: each prints PASS or FAIL; the lab passes if all do."""

    def __init__(self, lab: str):
        self.lab = lab
        self.failed: list[str] = []

    def check(self, name: str, ok: bool, detail: str = "") -> bool:
        """Print the check's PASS or FAIL line; its detail, which may quote what the student's
        code raised or returned, is escaped and bounded (labkit/safe_text.py)."""
        mark = "PASS" if ok else "FAIL"
        print(f"  {mark}  {name}" + (f": {safe_text(detail, DETAIL_LIMIT, lines=True)}" if detail else ""))
        if not ok:
            self.failed.append(name)
        return ok

    def check_chunks(self, name: str, pairs, max_tokens=None, whitespace_may_be_lost=False) -> bool:
        """Check each (source, chunks) pair: lossless, and within max_tokens if it is given.

        The first problem found (check_lossless's or check_budget's message)
        becomes the FAIL line's detail.
        """
        try:
            for source, chunks in pairs:
                check_lossless(source, chunks, whitespace_may_be_lost)
                if max_tokens is not None:
                    check_budget(chunks, max_tokens)
        except ValueError as problem:
            return self.check(name, False, str(problem))
        return self.check(name, True)

    def verdict(self) -> bool:
        if self.failed:
            print(f"\n{self.lab}: invariant failed: {'; '.join(self.failed)}")
        else:
            print(f"\n{self.lab}: all invariants hold.")
        return not self.failed

    def check_public_tests(self, namespace: dict) -> bool:
        """Run the lab's public grading tests on the functions in `namespace` (the lab's
        globals()), as the grader does: all pass here, all pass there (labkit/public_tests.py)."""
        from labkit.public_tests import public_tests_detail, run_public_tests

        try:
            count, failures = run_public_tests(self.lab, namespace)
        except FileNotFoundError as missing:
            return self.check("the public grading tests", False, str(missing))
        return self.check("the public grading tests, as the grader runs them", not failures,
                          public_tests_detail(self.lab, count, failures))

    def check_cases(self, name: str, cases) -> bool:
        """Run a battery of Cases, smallest input first; the first that goes wrong becomes
        the FAIL line's detail: what was wrong, then the call that shows it."""
        failure = first_failure(cases)
        detail = str(failure) if failure else f"{len(cases)} calls"
        return self.check(name, failure is None, detail)


# --------------------------------------------------------------------------
# Tricky inputs: where a lab's own documents never go
# --------------------------------------------------------------------------
# The course's documents are tidy: LF line ends, short words, no emoji. A
# function can be wrong and still do well on them. So each lab also calls the
# functions a student writes on a battery of small, tricky inputs, and judges
# each result with code that does not trust them: check_lossless and
# check_budget (the real tokenizer), values worked out by hand. The battery
# runs from the smallest input up and stops at the first that goes wrong, the
# easiest one to reproduce and to think about.


@dataclass(frozen=True)
class TrickyText:
    """A text that chunkers get wrong, and what makes it tricky."""

    what: str
    text: str


# Smallest first; every chunking lab tries its chunker on each. The emoji are
# written as code points: a joiner (U+200D) is invisible in an editor.
TRICKY_TEXTS = (
    TrickyText("an empty text", ""),
    TrickyText("a character of 4 tokens", "\U00029755"),
    TrickyText("only whitespace", " \t\n  "),
    TrickyText(
        "characters of several tokens", "\U00029755\U00029755 a\U00029755b \U00029755\U00029755 c"
    ),
    TrickyText("lone CR line ends", "one\rtwo\r\rthree\r"),
    TrickyText("CRLF line ends", "one.\r\ntwo\r\n\r\nthree\r\n"),
    TrickyText(
        "emoji with joiners",  # a family, a rainbow flag, a thumbs-up with a skin tone
        "\U0001F469\u200d\U0001F469\u200d\U0001F467\u200d\U0001F466 family, "
        "\U0001F3F3\ufe0f\u200d\U0001F308 flag, \U0001F44D\U0001F3FD ok",
    ),
    TrickyText(
        "every line-end style", "LF\nCRLF\r\nCR\rblank LF\n\nblank CRLF\r\n\r\nblank CR\r\rend"
    ),
    TrickyText("a URL", "go https://example.com/" + "x" * 60),
    TrickyText("no spaces at all", "a1b2c3d4" * 12),
    TrickyText(
        "long words",
        "Donaudampfschifffahrtsgesellschaft " * 3
        + "pneumonoultramicroscopicsilicovolcanoconiosis.",
    ),
    TrickyText("repeated text", "chunk chunk chunk. " * 12),
    TrickyText(
        "prose",
        "Orbit runs jobs on satellites. The server decides what runs where, and when.\n\n"
        "Satellites dial out on port 7401; they never accept connections. A satellite that "
        "misses its heartbeats for 30 seconds is marked lost, and its work is requeued.\n\n"
        "Certificates last 90 days and renew when a third of that remains.",
    ),
)


# A piece no chunk may cut can need more than 4 tokens: '토큰' is 5, with no token start
# between its two characters. So a chunker must read the least budget from the text
# (rag5's TokenIndex.min_budget), not assume one. These run at budgets that hold it.
WIDE_PIECE_TEXTS = (
    TrickyText("Korean, where '토큰' is 5 tokens no cut may split", "토큰 " * 30 + "한국어 토큰."),
)
WIDE_PIECE_SETTINGS = (dict(max_tokens=8, overlap=2), dict(max_tokens=20, overlap=16))


@dataclass(frozen=True)
class Case:
    """One call of a student-written function on a tricky input, and how to judge the result.

    `judge(result, *args, **keywords)` gets what the call returned and the
    call's own arguments; it raises ValueError (or AssertionError) saying in a
    few words what is wrong. `what` says what is tricky about the input.
    """

    what: str
    function: Callable
    args: tuple
    judge: Callable
    keywords: dict = field(default_factory=dict)
    raises: type | None = None  # the exception the call must raise instead (its judge is then not used)

    def call(self) -> str:
        """The call as a learner types it, long texts cut: f('go https://example.com/x…')."""
        arguments = [shown(value) for value in self.args]
        arguments += [f"{name}={shown(value)}" for name, value in self.keywords.items()]
        return f"{self.function.__name__}({', '.join(arguments)})"


def tricky_cases(function, judge, settings, texts=TRICKY_TEXTS) -> list[Case]:
    """A Case for `function` on each text at each setting (a dict of keyword arguments),
    smallest text first, each judged by `judge`."""
    return [Case(tricky.what, function, (tricky.text,), judge, dict(setting))
            for tricky in texts for setting in settings]


@dataclass(frozen=True)
class CaseFailure:
    """The first case of a battery that went wrong, and what was wrong."""

    case: Case
    problem: str

    def __str__(self) -> str:
        return f"{self.problem}\n        on {self.case.what}: {self.case.call()}"


def first_failure(cases) -> CaseFailure | None:
    """Run `cases` in order and stop at the first that goes wrong; None if none does.

    A call that raises has gone wrong too (the report says what it raised and
    where), except at a TODO: that goes on up, for run_lab to show its hint.
    """
    for case in cases:
        try:
            result = case.function(*case.args, **case.keywords)
        except Exception as error:
            if str(error).startswith("TODO("):
                raise
            if case.raises is not None and isinstance(error, case.raises):
                continue
            return CaseFailure(case, f"raised {error_line(error)}")
        if case.raises is not None:
            return CaseFailure(case, f"returned {shown(result)}, expected it to raise {case.raises.__name__}")
        try:
            case.judge(result, *case.args, **case.keywords)
        except (ValueError, AssertionError) as problem:
            return CaseFailure(case, str(problem))
        except Exception as error:  # the result is not even of the shape the judge reads
            problem = f"returned {shown(result)}, unreadable: {error_line(error)}"
            return CaseFailure(case, problem)
    return None


def returns(expected, tolerance: float = 1e-9) -> Callable:
    """A judge for a Case: the call must return `expected` (numbers equal up to `tolerance`)."""

    def judge(result, *args, **keywords):
        if not _same(result, expected, tolerance):
            raise ValueError(f"returned {shown(result, 60)}, expected {shown(expected, 60)}")

    return judge


def _same(value, expected, tolerance: float) -> bool:
    """value == expected, numbers up to `tolerance`; a list, tuple or array for a list or tuple."""
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(expected, (list, tuple)):
        return (isinstance(value, (list, tuple)) and len(value) == len(expected)
                and all(_same(v, e, tolerance) for v, e in zip(value, expected)))
    if isinstance(expected, float):
        number = isinstance(value, (int, float, np.number)) and not isinstance(value, bool)
        return number and abs(value - expected) <= tolerance
    return value == expected


def shown(value, width: int = 24) -> str:
    """A value as a report shows it, on one line: a long text cut inside its quotes
    ('go https://example.com/x…'), anything else cut after 3 * width characters."""
    if isinstance(value, str) and len(value) > width:
        cut = repr(value[:width])
        return f"{cut[:-1]}…{cut[-1]}"
    text = " ".join(repr(value).split())
    return text if len(text) <= 3 * width else text[: 3 * width - 1] + "…"


def error_line(error: Exception) -> str:
    """'IndexError: list index out of range (rag5-recursive-chunking.py:151)': the error,
    and the line that raised it."""
    where = traceback.extract_tb(error.__traceback__)[-1]
    message = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {message} ({Path(where.filename).name}:{where.lineno})"
