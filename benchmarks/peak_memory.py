"""Peak memory and time of the course's chunkers on one big Markdown file.

`memory_table` writes the file (the Orbit corpus repeated) and runs this
module as a script, once per chunker, each in a fresh process:

    python benchmarks/peak_memory.py FILE CHUNKER SIZE OVERLAP

so that nothing an earlier measurement allocated hides in the peak. The peak
is Linux's high-water mark of resident memory (VmHWM), reset just before
chunking starts: it counts what chunking adds (its work and its chunks) on
top of what the process already held (the interpreter, the tokenizer and the
text itself).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from chunkers import CONTENDERS, MARKDOWN, RECURSIVE
from speed import repeated_corpus
from tables import table

TITLE = "Orbit docs"
MOST_TIMES_FILE = 10  # the target: chunking a file adds at most 10 times its size to the peak


def status_bytes(field):
    """A memory figure of this process from /proc/self/status (given there in kB)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def measure(path, name, size, overlap):
    """Chunk the file once with chunker `name`; print seconds, chunks and memory as one JSON line."""
    contender = next(c for c in CONTENDERS if c.name == name)
    with open(path, encoding="utf-8", newline="") as file:
        text = file.read()
    text_bytes = sys.getsizeof(text)  # before tiktoken caches a UTF-8 copy inside the str
    contender.run("# Warm up\n\nLoads the tokenizer, compiles the patterns.\n", size, overlap, TITLE)
    Path("/proc/self/clear_refs").write_text("5")  # 5: reset the high-water mark to the current size
    before = status_bytes("VmRSS")
    began = time.process_time()  # CPU time, as in speed.py
    chunks = contender.run(text, size, overlap, TITLE)
    seconds = time.process_time() - began
    print(json.dumps({"seconds": seconds, "chunks": len(chunks), "text_bytes": text_bytes,
                      "before_bytes": before, "peak_bytes": status_bytes("VmHWM")}))


def memory_table(pages, size, overlap, megabytes_wanted):
    """Time and peak memory of the recursive and Markdown chunkers on one file of about `megabytes_wanted` MB."""
    copies = math.ceil(megabytes_wanted * 1e6 / len("".join(pages).encode("utf-8")))
    text = repeated_corpus(pages, copies)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "orbit-repeated.md"
        with open(path, "w", encoding="utf-8", newline="") as file:
            file.write(text)
        file_bytes = path.stat().st_size
        results = {}
        for contender in (RECURSIVE, MARKDOWN):
            done = subprocess.run([sys.executable, __file__, str(path), contender.name, str(size), str(overlap)],
                                  capture_output=True, text=True, check=True)
            results[contender.name] = json.loads(done.stdout)
    print(f"\n### Memory: one {file_bytes / 1e6:.1f} MB Markdown file (the Orbit corpus {copies} times, as above), "
          f"{size}/{overlap}, one run each in a fresh process\n")
    rows = []
    for name, r in results.items():
        extra = r["peak_bytes"] - r["before_bytes"]
        rows.append([name, f"{r['seconds']:.1f}", f"{file_bytes / 1e6 / r['seconds']:.2f}", r["chunks"],
                     f"{extra / 1e6:.0f}", f"{extra / file_bytes:.1f}"])
    print(table(["chunker", "CPU seconds", "MB/s", "chunks", "peak MB above start", "x file size"], rows))
    held = next(iter(results.values()))["text_bytes"]
    print(f"(held before the start: the text as a Python str, {held / 1e6:.0f} MB, "
          f"{held / len(text):.1f} bytes a character)")
    for name, r in results.items():
        times = (r["peak_bytes"] - r["before_bytes"]) / file_bytes
        print(f"- {name}, peak at most {MOST_TIMES_FILE} times the file's size: {times:.1f} times: "
              f"{'met' if times <= MOST_TIMES_FILE else 'NOT met'}")


if __name__ == "__main__":
    measure(sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
