"""Where the course's chunkers spend their time: cProfile over the Orbit pages, by function.

Sorted by each function's own time (not counting the functions it calls), so
the first rows name the work to cut; the calls column tells whether that work
is done once per page, per chunk or per line.
"""

from __future__ import annotations

import cProfile
import pstats
from pathlib import Path

from tables import table

TITLE = "Orbit docs"


def label(where):
    """'file.py:line function' for Python code, the name alone for built-ins."""
    file, line, function = where
    return function if file == "~" else f"{Path(file).name}:{line} {function}"


def profile(contender, pages, size, overlap, top=12):
    """Print the `top` functions by own time when `contender` chunks every page once."""
    contender.run(pages[0], size, overlap, TITLE)  # warm up: tokenizer loaded, patterns compiled
    profiler = cProfile.Profile()
    profiler.enable()
    for text in pages:
        contender.run(text, size, overlap, TITLE)
    profiler.disable()
    stats = pstats.Stats(profiler).stats  # {where: (primitive calls, calls, own time, cumulative time, callers)}
    total = sum(own for _, _, own, _, _ in stats.values())
    ranked = sorted(stats.items(), key=lambda item: -item[1][2])[:top]
    print(f"\n#### {contender.name}, {size}/{overlap}: {total:.3f} s under the profiler\n")
    print(table(["function", "calls", "own s", "own %", "with callees s"], [
        [label(where), calls, f"{own:.3f}", f"{100 * own / total:.0f}", f"{cumulative:.3f}"]
        for where, (_, calls, own, cumulative, _) in ranked
    ]))
