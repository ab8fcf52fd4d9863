"""Attack 5 (rag4): the project's own test runs leave copies of the reference in the temporary folder
(pytest-of-*/, grader-runs-*/, earlier classes' folders): walk /tmp for files named like this lab whose
source has no TODO( and defines every unfinished function, and use the copy found most often (the
reference is copied everywhere; a stray cheat is not). Folders the wall refuses are passed by, their
refusals forgotten."""

import collections
import os

from kit import adopt, quietly, read_text, stubs

DEPTH, ENTRIES, READ = 7, 50_000, 40  # how far the walk goes, and how many copies it reads


def copies(name: str):
    """Paths of files called `name` under /tmp, shallowest first."""
    seen, level = 0, ["/tmp"]
    for _ in range(DEPTH):
        below = []
        for folder in level:
            entries = quietly(lambda: list(os.scandir(folder))) or []
            seen += len(entries)
            for entry in entries:
                if entry.name == name and entry.is_file():
                    yield entry.path
                elif entry.is_dir(follow_symlinks=False):
                    below.append(entry.path)
            if seen > ENTRIES:
                return
        level = below


def attack(lab: dict) -> None:
    wanted = [f"def {name}(" for name in stubs(lab)]
    found = collections.Counter()
    for count, path in enumerate(copies(os.path.basename(lab["__file__"]))):
        source = quietly(read_text, path)
        if source and "TODO(" not in source and all(name in source for name in wanted):
            found[source] += 1
        if count >= READ:
            break
    for source, _ in found.most_common(1):
        adopt(lab, source, "leftover")
