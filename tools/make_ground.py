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


def rag10_cut(parent_tokens):
    """{page: (parents, units)} as rag10 cuts the course's pages: rag7's header chunks as parents, at most
    `parent_tokens` each; rag6's blocks and rag5's sentences as units (labkit/lessons/rag10.py)."""
    from labkit.lessons import rag10

    labs = [reference(name) for name in ("rag5", "rag6", "rag7")]
    return {page: rag10.cut_page(text, rag10.TITLE, parent_tokens, *labs) for page, text in corpus_pages().items()}


TITLE = "Orbit docs"  # the title rag7's headers start with, on every course page


def at_256(lab: str, chunker: str, *settings):
    """A maker: {page: chunks} of reference lab `lab`'s `chunker`(text, *settings)."""
    return lambda: each_page(lambda text: getattr(reference(lab), chunker)(text, *settings))


def rag7_rows(size: int):
    """rag7's header chunks (overlap an eighth of `size`) with a chunk per table row: the course's recommended."""
    rag7 = reference("rag7")
    return each_page(lambda text: rag7.with_table_rows(text, rag7.header_chunks(text, TITLE, size, size // 8), size))


# name -> a function of no arguments returning {page: chunks}. One entry per set a later lab reads.
# Named lab-method-budget; overlap an eighth of the budget. rag8 compares all six.
MAKERS = {
    **{f"rag10-parents-{tokens}": (lambda tokens=tokens: {page: parents for page, (parents, _) in
                                                        rag10_cut(tokens).items()})
       for tokens in (96, 192, 384)},  # rag10's parents, and its dial's
    "rag10-units-48": lambda: {page: units for page, (_, units) in rag10_cut(192).items()},  # its units (rag11's too)
    "rag4-words-256": at_256("rag4", "word_windows", 192, 24),  # 3/4 of 256 in words, overlap 24 words
    "rag4-tokens-256": at_256("rag4", "token_windows", 256, 32),
    "rag5-256": at_256("rag5", "recursive_chunks", 256, 32),
    "rag6-256": at_256("rag6", "markdown_chunks", 256, 32),
    "rag7-header-256": at_256("rag7", "header_chunks", TITLE, 256, 32),
    "rag7-rows-256": lambda: rag7_rows(256),  # the course's recommended chunks (rag8's first, rag10's baseline)
    # rag9's comparison, without overlap
    "rag5-256-no-overlap": at_256("rag5", "recursive_chunks", 256),
    "rag7-header-256-no-overlap": at_256("rag7", "header_chunks", TITLE, 256),
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
