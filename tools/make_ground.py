"""Write datasets/ground/*.jsonl: the chunks the reference labs make of the course's pages.

Later labs read these (labkit/ground.py) instead of running the student's earlier labs, so a
student stuck on one lab can still learn the next. Run it after changing a reference lab whose
chunks a later lab reads:

    python tools/make_ground.py          # every set;  python tools/make_ground.py NAME ...  some

Each maker below takes the reference labs' folder and returns {page: chunks}; its name is the file's.
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from academy_llm import corpus_pages  # noqa: E402
from labkit import ground, load_lab  # noqa: E402

SOLUTIONS = ROOT / "solutions"


def reference(name: str):
    """The reference lab `name` ("rag7"), imported without running its demo."""
    return load_lab(name, SOLUTIONS)


def each_page(chunker):
    """{page: chunker(text)} over the course's pages."""
    return {page: list(chunker(text)) for page, text in corpus_pages().items()}


# name -> a function of no arguments returning {page: chunks}. One entry per set a later lab reads.
MAKERS = {
    "rag5-recursive-256": lambda: each_page(lambda text: reference("rag5").recursive_chunks(text, 256)),
    "rag7-header-256": lambda: each_page(lambda text: reference("rag7").header_chunks(text, "Orbit docs", 256)),
}


def write(name: str, chunks_by_page: dict) -> None:
    """Keep `chunks_by_page` as datasets/ground/NAME.jsonl. Here, not in labkit/ground.py, which a lab
    reaches: a function there that writes files would be tried with a lab's arguments (tests/reach.py)."""
    ground.GROUND.mkdir(parents=True, exist_ok=True)
    with open(ground.GROUND / f"{name}.jsonl", "w", encoding="utf-8", newline="\n") as file:
        for page in sorted(chunks_by_page):
            for chunk in chunks_by_page[page]:
                row = {"page": page, "start": chunk.start, "end": chunk.end, "n_tokens": chunk.n_tokens,
                       "section": list(chunk.section), "kind": chunk.kind, "header": chunk.header,
                       "oversize": chunk.oversize}
                file.write(json.dumps(row, ensure_ascii=False) + "\n")


def main(wanted: list[str]) -> None:
    unknown = [name for name in wanted if name not in MAKERS]
    if unknown:
        raise SystemExit(f"make_ground: no maker named {', '.join(unknown)}; known: {', '.join(sorted(MAKERS))}")
    for name in wanted or sorted(MAKERS):
        write(name, MAKERS[name]())
        print(f"datasets/ground/{name}.jsonl")


if __name__ == "__main__":
    main(sys.argv[1:])
