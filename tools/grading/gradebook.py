"""What a grade looks like to its readers: the class's gradebook.csv and each student's Gradescope results.json.

It decides what a reader is shown and that nothing in it acts on them. A
report's points become a row per student (points per lab, total, possible,
short flags) and Gradescope's rows, one per function for its public tests and
one for its hidden tests, whose inputs the student never sees. Every text in
the gradebook comes from a student's folder name or the grader's flags, and a
spreadsheet runs a cell that starts with = + - @ (or a tab or a carriage
return, or any of those after spaces) as a formula: such a cell is written
with a leading apostrophe, which spreadsheets show as text. Every text of a
cell or a row, and every line of a row's output, is escaped and bounded
(safe_text.py): a report read back from disk is not trusted to be so already.

A results file is written whole, into a new file that then replaces the old
one, so a link left at its place is replaced rather than followed.
"""

import csv
import json
import os
import tempfile
import unicodedata
from pathlib import Path

from confine import PROCESS
from safe_text import safe_text
from staging import lab_number
from supervise import Outcome

OUTPUT_LINES = 25  # failed tests listed per Gradescope test row
LINE_LIMIT = 600  # characters of a line of a row's output or of the results' text: a test's name and its reason
CELL_LIMIT = 2000  # characters of a gradebook cell (a long list of flags) or a row's name
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")  # Gradescope's words
SHORT_FLAGS = {"refused": "refused-access"}  # a grader's flag kind -> the gradebook's word
FORMULA_STARTS = set("=+-@")  # a cell starting so (after any spaces) is a formula to a spreadsheet
FORMULA_CONTROLS = set("\t\r")  # and so is one starting with these (sets: an empty cell is neither)


def points(value: float) -> float:
    """Points rounded to 4 places: per-test shares such as 5/6 add up to 4.999999..."""
    return round(float(value), 4)


def failures(tests: list[dict]) -> str:
    """The output of a Gradescope test row: each failed test with its one-line reason."""
    failed = [t for t in tests if t.get("outcome") != "passed"]
    if not failed:
        return "the test passed" if len(tests) == 1 else f"all {len(tests)} tests passed"
    lines = [safe_text(f"{t['name']}: {t.get('outcome')}: {shown_reason(t)}", LINE_LIMIT) for t in failed]
    if len(lines) > OUTPUT_LINES:
        lines = lines[:OUTPUT_LINES] + [f"... and {len(lines) - OUTPUT_LINES} more"]
    return "\n".join(lines)


def shown_reason(test: dict) -> str:
    """A failed test's reason as a student may see it: a hidden test's input stays hidden."""
    if test.get("hidden"):
        return "a hidden test failed (its input is the instructor's; the report.json has it)"
    return test.get("message", "")


def lab_rows(name: str, lab: dict, hidden_visibility: str = "after_published") -> list[dict]:
    """Gradescope test rows for one lab: a row per function for its public tests, and one for its
    hidden tests, which the students see at `hidden_visibility`; or the whole lab in one.

    A group's points are its tests' shares; its earned points are all of them when every test
    passed, so that full marks add up to exactly the lab's points. Points of tests that belong
    to no listed function get a row of their own, so the rows always add up to the lab.
    """
    functions = lab.get("functions")
    if not functions:
        return [gradescope_row(name, lab["earned"], lab["possible"], lab.get("tests", []), "visible")]
    tests = {}
    for test in lab.get("tests", []):
        tests.setdefault(test.get("function"), []).append(test)
    rows = []
    for function, score in functions.items():
        mine = tests.pop(function, [])
        hidden = [test for test in mine if test.get("hidden")]
        public = [test for test in mine if not test.get("hidden")]
        public_possible = sum(test["points"] for test in public) if hidden else score["possible"]
        groups = [(f"{name} {function}", public, public_possible, "visible")]
        if hidden:
            groups.append((f"{name} {function} (hidden tests)", hidden, score["possible"] - public_possible,
                           hidden_visibility))
        for row_name, group, possible, visibility in groups:
            passed = all(test.get("outcome") == "passed" for test in group)
            earned = possible if passed else sum(t["points"] for t in group if t.get("outcome") == "passed")
            rows.append(gradescope_row(row_name, earned, possible, group, visibility))
    rest = [test for group in tests.values() for test in group]
    possible = lab["possible"] - sum(score["possible"] for score in functions.values())
    if rest or points(possible):
        earned = lab["earned"] - sum(score["earned"] for score in functions.values())
        rows.append(gradescope_row(f"{name} (other tests)", earned, possible, rest, "visible"))
    return rows


def gradescope_row(name: str, earned: float, possible: float, tests: list[dict], visibility: str) -> dict:
    """One Gradescope test row: its points, its failed tests, and when the student sees it."""
    return {"name": safe_text(name, CELL_LIMIT), "score": points(min(max(earned, 0.0), possible)),
            "max_score": points(possible),
            "output": failures(tests), "visibility": visibility}


def summary(report: dict, notes: list[str]) -> str:
    """The results' top text: points per lab, the grader's warnings, files left out, and, when
    the lab ran behind the audit hook alone, a line that says so (docs/instructors.md, section 5)."""
    lines = []
    if report.get("isolation") == PROCESS:
        lines.append("isolation: process (no sandbox, no separate user: graded with --allow-unsandboxed)")
    for name, lab in report["labs"].items():
        lines.append(f"{name}: {points(lab['earned']):g} / {points(lab['possible']):g}")
        lines += [f"{name}: {warning}" for warning in lab.get("warnings", [])]
    lines.append(f"total: {points(report['earned']):g} / {points(report['possible']):g}")
    return "\n".join(safe_text(line, LINE_LIMIT) for line in lines + notes)


def gradescope_results(outcome: Outcome, hidden_visibility: str = "after_published") -> dict:
    """Gradescope's results.json for one student: a score, a text, test rows per function.

    The score is the sum of the rows, as Gradescope shows them. The grader's own
    output (stdout) is the instructor's: it names hidden tests' inputs. A student
    who could not be graded gets 0 and the reason, so that the submission page
    says what happened rather than that the autograder failed.
    """
    if outcome.report is None:
        text = f"Not graded: {outcome.reason}"
        output = "\n".join(safe_text(line, LINE_LIMIT) for line in [text, *outcome.staged.notes])
        return {"score": 0, "output": output, "tests": [],
                "visibility": "visible", "stdout_visibility": "hidden"}
    report = outcome.report
    rows = [r for name, lab in report["labs"].items() for r in lab_rows(name, lab, hidden_visibility)]
    return {
        "score": points(sum(row["score"] for row in rows)),
        "output": summary(report, outcome.staged.notes),
        "tests": rows,
        "visibility": "visible",
        "stdout_visibility": "hidden",
    }


def write_json(path: Path, data: dict) -> None:
    """Write `data` to `path` whole: a new file beside it replaces it, so a reader never sees half
    of it and a link found at `path` is replaced, not written through."""
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(json.dumps(data, indent=2) + "\n")
        os.chmod(temporary, 0o644)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


# ---- the class's gradebook ----------------------------------------------------------------


def spreadsheet_text(value: str) -> str:
    """A CSV cell a spreadsheet shows as it is: one that would start a formula gets a leading "'".

    A formula starts with = + - or @, after any spaces (full-width signs too, which some
    spreadsheets read as their ASCII twins), or with a tab or a carriage return.
    """
    first = value.lstrip()[:1]
    if value[:1] in FORMULA_CONTROLS or unicodedata.normalize("NFKC", first)[:1] in FORMULA_STARTS:
        return f"'{value}"
    return value


def cell(value: float) -> str:
    """A number for the CSV: 42.5, 10 (not 10.0000)."""
    return f"{points(value):.4f}".rstrip("0").rstrip(".")


def gradebook_rows(outcomes: list[Outcome], labs: list[str],
                   flags: dict[str, list[str]]) -> tuple[list, list]:
    """(columns, rows) of the gradebook: a row per student, the labs asked for and any
    other lab a report names."""
    reports = [o.report for o in outcomes if o.report]
    labs = sorted(set(labs).union(*(report["labs"] for report in reports)), key=lab_number)
    rows = []
    for outcome in sorted(outcomes, key=lambda o: o.staged.student):
        student, report = outcome.staged.student, outcome.report
        row = {"student": student, "flags": ";".join(flags.get(student, []))}
        if report is not None:
            row |= {lab: cell(report["labs"][lab]["earned"]) for lab in labs
                    if lab in report["labs"]}
            row |= {"total": cell(report["earned"]), "possible": cell(report["possible"])}
        rows.append(row)
    return ["student", *labs, "total", "possible", "flags"], rows


def short_flag(flag: str) -> str:
    """A grader's flag ("refused: reading ...") as the gradebook's short one ("refused-access");
    the details stay in the report."""
    kind = flag.split(":")[0].strip().lower().replace(" ", "-")
    return SHORT_FLAGS.get(kind, kind)


def class_flags(outcomes: list[Outcome], copies: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every student's short flags: not-graded or the grader's, then the similarity ones."""
    flags = {}
    for outcome in outcomes:
        mine = [] if outcome.report else ["not-graded"]
        for lab in (outcome.report or {}).get("labs", {}).values():
            mine += map(short_flag, lab.get("flags", []))
        mine += copies.get(outcome.staged.student, [])
        flags[outcome.staged.student] = list(dict.fromkeys(mine))  # each flag once, in order
    return flags


def write_gradebook(path: Path, outcomes: list[Outcome], labs: list[str],
                    flags: dict[str, list[str]]) -> None:
    """gradebook.csv, every cell of it text a spreadsheet will not run."""
    columns, rows = gradebook_rows(outcomes, labs, flags)
    with open(path, "w", newline="", encoding="utf-8") as out:
        writer = csv.DictWriter(out, columns)
        writer.writeheader()
        writer.writerows({key: spreadsheet_text(safe_text(value, CELL_LIMIT)) for key, value in row.items()}
                         for row in rows)
