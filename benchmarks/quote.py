"""Put a benchmark run's output into RESULTS.md, and quote it in benchmarks/README.md.

    python benchmarks/run.py > /tmp/run.md && python benchmarks/quote.py /tmp/run.md
    python benchmarks/quote.py --check      # exit 1 if the README's quotes differ from RESULTS.md

RESULTS.md is its preface (the lines before the run's first heading) and then
the run's output as printed. The README quotes parts of it between markers,

    <!-- benchmark-output orbit-256-0 -->
    ...the part, as printed...
    <!-- /benchmark-output -->

so that no figure or claim of the README is typed by hand: every sentence the
benchmark may make about a comparison is printed by the run, from its
intervals (benchmarks/tables.py), and quoted here as it was printed.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "RESULTS.md"
README = HERE / "README.md"
FIRST_HEADING = "## Benchmark: the course's chunkers beside the libraries"
BLOCK = re.compile(r"(<!-- benchmark-output ([\w-]+) -->\n)(.*?)(<!-- /benchmark-output -->)", re.S)

# What each quote holds: the line it starts at (a pattern, the first match after the section
# named), and how many paragraphs (runs of lines between blank lines) from there.
QUOTES = {
    "machine": ("", r"- command: ", 1),
    "orbit-256-0": ("### Orbit docs", r"#### 256 tokens, overlap 0$", 3),
    "rag11-targets": ("### Orbit docs", r"Targets of hybrid search", 1),
    "rag10-targets": ("### Orbit docs", r"Targets of small to big", 1),
    "rows-peers": ("### Orbit docs", r"Over \d+ comparisons at equal size and overlap, header \+ table rows", 1),
    "headed-peers": ("### Orbit docs", r"Over \d+ comparisons at equal size and overlap, markdown \+ header", 1),
    "chroma-targets": ("### Chroma's benchmark", r"Targets at ", 1),
    "speed": ("", r"### Speed: ", 2),
    "speed-targets": ("", r"Speed targets, on ", 1),
    "growth": ("", r"### Growth with input size", 2),
    "memory": ("", r"### Memory: ", 2),
}


class QuoteError(Exception):
    """A quote the run's output does not have; the message names it."""


def output_of(results: str) -> str:
    """The run's output in RESULTS.md (what follows its preface)."""
    start = results.find(FIRST_HEADING)
    if start < 0:
        raise QuoteError(f"RESULTS.md has no {FIRST_HEADING!r}: is it a run's output?")
    return results[start:]


def quoted(output: str, name: str) -> str:
    """The part of a run's `output` the quote `name` holds, as printed."""
    if name not in QUOTES:
        raise QuoteError(f"the README quotes {name!r}, which benchmarks/quote.py does not know: add it to QUOTES")
    section, start, paragraphs = QUOTES[name]
    after = output.find(section) if section else 0
    match = re.compile(start, re.M).search(output, max(after, 0))
    if after < 0 or not match:
        raise QuoteError(f"the run printed nothing like {start!r} (quote {name!r}): was it a --quick run?")
    rest = output[match.start():].strip("\n")
    return "\n\n".join(re.split(r"\n\s*\n", rest)[:paragraphs]) + "\n"


def refreshed(readme: str, output: str) -> str:
    """The README with every quote rewritten from `output`."""
    return BLOCK.sub(lambda m: m.group(1) + quoted(output, m.group(2)) + m.group(4), readme)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run", nargs="?", type=Path, help="a run's output (python benchmarks/run.py > FILE)")
    parser.add_argument("--check", action="store_true", help="only say whether the README's quotes are current")
    args = parser.parse_args()
    results = RESULTS.read_text(encoding="utf-8")
    try:
        if args.run:
            preface = results[: results.find(FIRST_HEADING)] if FIRST_HEADING in results else ""
            results = preface + output_of(args.run.read_text(encoding="utf-8"))
        readme = README.read_text(encoding="utf-8")
        new = refreshed(readme, output_of(results))
    except QuoteError as error:
        sys.exit(f"benchmarks/quote.py: {error}")
    if args.check:
        if new != readme:
            sys.exit("benchmarks/README.md's quotes differ from RESULTS.md: run python benchmarks/quote.py")
        print("benchmarks/README.md's quotes match RESULTS.md")
        return
    if args.run:
        RESULTS.write_text(results, encoding="utf-8")
    README.write_text(new, encoding="utf-8")
    print(f"wrote {README.relative_to(HERE.parent)}" + (f" and {RESULTS.relative_to(HERE.parent)}" if args.run else ""))


if __name__ == "__main__":
    main()
