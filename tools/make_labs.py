"""Write the student labs (labs/) from the reference solutions (solutions/).

solutions/ is the single source. In a solution file, each part a student
writes is an answer region:

        # BEGIN SOLUTION
        # hint: what to do, on one or more lines
        ...reference code...
        # END SOLUTION

In labs/ the region becomes the hint as a TODO comment and a stub that raises
NotImplementedError carrying the same hint, so running an unfinished lab
stops at the first TODO and says what to write there:

        # TODO(rag4): what to do, on one or more lines
        raise NotImplementedError("TODO(rag4) word_windows(): what to do ...")

Usage:
    python tools/make_labs.py          # rewrite labs/
    python tools/make_labs.py --check  # exit 1 if labs/ is not what solutions/ gives
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
LABS = ROOT / "labs"

BEGIN = "# BEGIN SOLUTION"
END = "# END SOLUTION"
HINT = "# hint:"


class RegionError(ValueError):
    """An answer region is malformed: unclosed, nested, outside a function, without a hint."""


def enclosing_function(lines: list[str], index: int, indent: int) -> str:
    """Name of the `def` that the line at `index` (indented by `indent`) sits in."""
    for line in reversed(lines[:index]):
        match = re.match(r"(\s*)(?:async\s+)?def\s+(\w+)", line)
        if match and len(match.group(1)) < indent:
            return match.group(2)
    raise RegionError(f"line {index + 1}: an answer region must be inside a function")


def stub_lines(lab: str, function: str, indent: str, hints: list[str]) -> list[str]:
    """The TODO comment and the raise that replace one answer region."""
    comment = [f"{indent}# TODO({lab}): {hints[0]}"]
    comment += [f"{indent}#   {hint}" for hint in hints[1:]]
    message = f"TODO({lab}) {function}(): " + " ".join(hints)
    return comment + [f"{indent}raise NotImplementedError({message!r})"]


def student_version(source: str, lab: str) -> str:
    """The student file for a solution file's text: every answer region stubbed out."""
    lines = source.splitlines()
    out: list[str] = []
    index = 0
    while index < len(lines):
        line = lines[index]
        if line.strip() != BEGIN:
            if line.strip() == END:
                raise RegionError(f"line {index + 1}: {END} without {BEGIN}")
            out.append(line)
            index += 1
            continue
        indent = line[: len(line) - len(line.lstrip())]
        function = enclosing_function(lines, index, len(indent))
        hints = []
        index += 1
        while index < len(lines) and lines[index].strip().startswith(HINT):
            hints.append(lines[index].strip()[len(HINT) :].strip())
            index += 1
        if not hints:
            raise RegionError(f"line {index}: a region needs '{HINT} ...' lines after {BEGIN}")
        while index < len(lines) and lines[index].strip() != END:
            if lines[index].strip() == BEGIN:
                raise RegionError(f"line {index + 1}: {BEGIN} inside another region")
            index += 1
        if index == len(lines):
            raise RegionError(f"{BEGIN} in {function}() is never closed by {END}")
        out += stub_lines(lab, function, indent, hints)
        index += 1
    student = "\n".join(out) + "\n"
    compile(student, f"labs/{lab}", "exec")  # a stub must never be a syntax error
    return student


def expected_labs() -> dict[Path, str]:
    """Every file of labs/ as solutions/ says it should be."""
    labs = {}
    for solution in sorted(SOLUTIONS.glob("rag*-*.py")):
        lab = solution.name.split("-")[0]
        text = solution.read_text(encoding="utf-8")
        labs[LABS / solution.name] = student_version(text, lab)
    return labs


def stale_labs() -> list[str]:
    """Names of lab files that are missing, out of date, or have no solution."""
    expected = expected_labs()
    stale = [p.name for p, text in expected.items() if not p.exists() or p.read_text(encoding="utf-8") != text]
    stale += [p.name for p in LABS.glob("rag*-*.py") if p not in expected]
    return sorted(stale)


def main(argv: list[str]) -> int:
    if "--check" in argv:
        stale = stale_labs()
        if stale:
            print(f"labs/ is out of date ({', '.join(stale)}); run: python tools/make_labs.py")
            return 1
        print("labs/ matches solutions/")
        return 0
    LABS.mkdir(exist_ok=True)
    for path, text in expected_labs().items():
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
