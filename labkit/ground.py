"""Given ground: what the earlier labs made of the course's own pages, shipped as data.

A later lab needs an earlier lab's *results* (the chunks of the Orbit pages at the settings the
course uses), not its code. Shipping those results as offsets lets a student stuck on rag6 still
learn rag8-rag11, and it solves no earlier TODO: the grader judges every TODO on texts the course
never shows. Each set of chunks is a file datasets/ground/NAME.jsonl, one chunk a line:

    {"page": "install", "start": 0, "end": 812, "n_tokens": 190, "section": [...], "kind": "text",
     "header": "", "oversize": false}

`text` is not stored: it is page[start:end] of corpus_pages(), so a chunk read back is an exact
slice by construction. tools/make_ground.py writes the files from the reference labs (nothing here
writes: a lab reaches this module, and tests/reach.py tries what a lab reaches with a lab's
arguments), and tests/test_ground.py checks they are current.
"""

from __future__ import annotations

import json
from functools import lru_cache

from academy_llm import COURSE_ROOT, Chunk, corpus_pages

GROUND = COURSE_ROOT / "datasets" / "ground"


def names() -> list[str]:
    """The sets of chunks the course ships."""
    return sorted(path.stem for path in GROUND.glob("*.jsonl"))


@lru_cache(maxsize=None)
def _read(name: str) -> dict[str, tuple[Chunk, ...]]:
    path = GROUND / f"{name}.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no given ground named {name!r} in {GROUND}; the course ships: "
                                f"{', '.join(names()) or 'none'}")
    pages = corpus_pages()
    chunks: dict[str, list[Chunk]] = {page: [] for page in pages}
    with open(path, encoding="utf-8") as file:
        for line in file:
            row = json.loads(line)
            page = row.pop("page")
            source = pages[page]
            chunks[page].append(Chunk(text=source[row["start"]:row["end"]], section=tuple(row.pop("section")), **row))
    return {page: tuple(found) for page, found in chunks.items()}


def chunks(name: str) -> dict[str, list[Chunk]]:
    """{page: its chunks, in order} as the reference lab cut every course page for `name`."""
    return {page: list(found) for page, found in _read(name).items()}
