"""The course's reference chunkers over the real-world Markdown corpus: what breaks, and where.

    python benchmarks/real_markdown_report.py [--only SUBSTRING] [--slowest N]

rag5 (recursive), rag6 (Markdown) and rag7 (Markdown + header) from solutions/
chunk every file of benchmarks/real-markdown at 128 and 512 tokens, with and
without overlap, each file as stored and again with every line end made
`\\r\\n`, then lone `\\r`. Every chunking is judged by tests/real_markdown.py's
`problems` (a real Markdown parser says where fences, tables and indented code
are); an exception is caught and counted. The counts per chunker are printed,
with the first message of each kind of exception, and the slowest files.
CPU seconds are the chunkers' own time in this process, the checks aside.
"""

from __future__ import annotations

import argparse
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]  # this checkout's course modules, before any installed copy

import academy_llm  # noqa: E402
from labkit import load_lab  # noqa: E402
from real_markdown import CORPUS, KINDS, corpus_files, kind_of, problems, read_text  # noqa: E402

SOLUTIONS = ROOT / "solutions"
SETTINGS = ((128, 0), (128, 16), (512, 0), (512, 64))
LINE_END = re.compile(r"\r\n|\r|\n")
VARIANTS = (("as stored", None), ("CRLF", "\r\n"), ("CR", "\r"))


def chunkers():
    """name -> chunk(text, title, max_tokens, overlap), each a reference lab."""
    rag5 = load_lab("rag5", SOLUTIONS)
    rag6 = load_lab("rag6", SOLUTIONS)
    rag7 = load_lab("rag7", SOLUTIONS)
    return {
        "rag5 recursive_chunks": lambda text, title, size, overlap: rag5.recursive_chunks(text, size, overlap),
        "rag6 robust_markdown_chunks": lambda text, title, size, overlap: rag6.robust_markdown_chunks(
            text, max_tokens=size, overlap=overlap),
        "rag7 header_chunks": lambda text, title, size, overlap: rag7.header_chunks(text, title, size, overlap),
    }


def exception_kind(error):
    """An exception's type and message with its particulars (quoted text, numbers) blanked."""
    message = str(error).splitlines()[0] if str(error) else ""
    message = re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "'…'", message)
    return f"{type(error).__name__}: {re.sub(r'[0-9]+', 'N', message)[:90]}"


class Tally:
    """What one chunker did over the corpus."""

    def __init__(self):
        self.files = set()
        self.calls = 0
        self.chunks = 0
        self.exceptions = Counter()  # kind -> calls
        self.first_exception = {}  # kind -> (message, file, setting)
        self.exception_files = defaultdict(set)
        self.problems = Counter()  # problem kind -> calls
        self.problem_files = defaultdict(set)
        self.first_problem = {}  # problem kind -> (line, file, setting)
        self.cpu = 0.0
        self.cpu_by_file = Counter()


def run(files, slowest):
    tallies = {name: Tally() for name in chunkers()}
    chunk_with = chunkers()
    academy_llm.count_tokens("warm the tokenizer up, outside the timing")
    started_wall, started_cpu = time.perf_counter(), time.process_time()
    for path in files:
        relative = path.relative_to(CORPUS).as_posix()
        stored = read_text(path)
        title = path.stem
        for variant, line_end in VARIANTS:
            text = stored if line_end is None else LINE_END.sub(line_end, stored)
            for name, chunk in chunk_with.items():
                tally = tallies[name]
                tally.files.add(relative)
                for size, overlap in SETTINGS:
                    setting = f"{variant}, max_tokens={size}, overlap={overlap}"
                    tally.calls += 1
                    before = time.process_time()
                    try:
                        chunks = chunk(text, title, size, overlap)
                    except Exception as error:  # every failure is counted; none stops the run
                        spent = time.process_time() - before
                        tally.cpu += spent
                        tally.cpu_by_file[relative] += spent
                        kind = exception_kind(error)
                        tally.exceptions[kind] += 1
                        tally.exception_files[kind].add(relative)
                        tally.first_exception.setdefault(kind, (str(error).splitlines()[0][:300], relative, setting))
                        continue
                    spent = time.process_time() - before
                    tally.cpu += spent
                    tally.cpu_by_file[relative] += spent
                    tally.chunks += len(chunks)
                    for line in problems(text, chunks, size):
                        kind = kind_of(line)
                        tally.problems[kind] += 1
                        tally.problem_files[kind].add(relative)
                        tally.first_problem.setdefault(kind, (line[:300], relative, setting))
    wall, cpu = time.perf_counter() - started_wall, time.process_time() - started_cpu
    report(files, tallies, slowest, wall, cpu)


def report(files, tallies, slowest, wall, cpu):
    size = sum(path.stat().st_size for path in files)
    print(f"corpus: {len(files)} files, {size / 1e6:.2f} MB, in {CORPUS.relative_to(ROOT)}")
    print(f"course modules from {Path(academy_llm.__file__).parent}")
    print(f"each file x {len(VARIANTS)} line-end variants ({', '.join(v for v, _ in VARIANTS)}) x settings "
          f"{', '.join(f'({s}, {o})' for s, o in SETTINGS)}")
    for name, tally in tallies.items():
        failed = sum(tally.exceptions.values())
        print(f"\n== {name}")
        print(f"   files {len(tally.files)}, calls {tally.calls}, chunks {tally.chunks}, "
              f"exceptions {failed} (in {len(set().union(*tally.exception_files.values()))} files), "
              f"CPU {tally.cpu:.1f} s")
        for kind, count in tally.exceptions.most_common():
            message, file, setting = tally.first_exception[kind]
            print(f"   exception x{count} in {len(tally.exception_files[kind])} files: {kind}")
            print(f"      first: {file} ({setting}): {message}")
        checked = tally.calls - failed
        print(f"   problems, in calls out of {checked} that returned (files):")
        for kind in KINDS:
            count = tally.problems[kind]
            line = f"      {kind:18} {count:6}  ({len(tally.problem_files[kind])} files)"
            if kind == "indented code cut" and count:
                mdx = sum(1 for file in tally.problem_files[kind] if file.endswith(".mdx"))
                line += f", {mdx} of them .mdx (MDX has no indented code; CommonMark reads one there)"
            print(line)
        for kind in KINDS:
            if tally.problems[kind]:
                problem, file, setting = tally.first_problem[kind]
                print(f"      first {kind}: {file} ({setting}): {problem}")
        print(f"   slowest files (CPU s over their {len(VARIANTS) * len(SETTINGS)} calls):")
        for file, seconds in tally.cpu_by_file.most_common(slowest):
            print(f"      {seconds:7.2f}  {file} ({(CORPUS / file).stat().st_size / 1e3:.0f} KB)")
    print(f"\nreport: {wall:.0f} s wall, {cpu:.0f} s CPU (chunking and checking)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", default="", help="only the files whose corpus path holds this")
    parser.add_argument("--slowest", type=int, default=5, help="how many of the slowest files to show per chunker")
    arguments = parser.parse_args()
    files = [path for path in corpus_files() if arguments.only in path.relative_to(CORPUS).as_posix()]
    run(files, arguments.slowest)


if __name__ == "__main__":
    main()
