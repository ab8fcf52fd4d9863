"""chunking-labs chunk DOCS --method NAME --out chunks.jsonl: the chunking `compare` chose, for your own pipeline.

`compare` says which chunker finds the answers in a learner's documents; this writes that
chunker's chunks of every document, one JSON object a line, for whatever indexes them next:

    {"doc": "guide/install.md", "start": 0, "end": 412, "text": "...", "heading_path": ["Install"],
     "header": "Docs > Install", "tokens": 97}

`doc` is the file's path under DOCS, `start` and `end` are offsets in its text as the labs
read it (Python characters, a byte order mark and \\r\\n kept), and `text` is exactly
text[start:end]. `heading_path` holds the headings above the chunk (empty for a chunker
that reads no headings); `header` is there only for a method that makes one (rag7's), and
is what it embeds before the text; `tokens` counts the text in cl100k_base tokens.

    chunking-labs chunk DOCS --method "header + table rows (rag7)" [--max-tokens 256 --overlap 32] --out chunks.jsonl
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import NamedTuple

from labkit import compare


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """chunk's options."""
    parser.add_argument("docs", metavar="DOCS", help="a folder of .md, .markdown, .mdx or .txt files")
    parser.add_argument("--method", required=True,
                        help='a chunker as compare names it, or words of its name: "rag6", "header + table rows"')
    parser.add_argument("--max-tokens", type=int, default=compare.SIZES[1],
                        help=f"the chunk size in tokens (default {compare.SIZES[1]})")
    parser.add_argument("--overlap", type=int, help="tokens shared by neighbouring chunks (default: an eighth of "
                                                    "--max-tokens)")
    parser.add_argument("--title", help="the documents' title, in rag7's headers (default: DOCS's folder name)")
    parser.add_argument("--labs", metavar="DIR", help="your own finished labs (default: the reference solutions)")
    parser.add_argument("--embedder", metavar="EMBEDDER",
                        help=f"for rag9's semantic cuts: {', '.join(compare.EMBEDDERS)} (default: $ACADEMY_EMBEDDER, "
                             f"else {compare.DEFAULT_EMBEDDER})")
    parser.add_argument("--out", metavar="FILE", default="chunks.jsonl", help="the JSON-lines file to write "
                                                                              "(default ./chunks.jsonl)")


class Settings(NamedTuple):
    """What a run was asked for, checked."""

    docs: Path
    method: str
    size: int
    overlap: int
    title: str
    labs: Path
    embedder: str
    out: Path


def settings_of(arguments: argparse.Namespace) -> Settings:
    """The settings, each checked before a document is read; a SystemExit with one line for a bad one."""
    size = arguments.max_tokens
    overlap = size // 8 if arguments.overlap is None else arguments.overlap
    if size < 16:
        raise SystemExit(f"chunk: --max-tokens {size}: give 16 tokens or more, such as 256")
    if not 0 <= overlap < size:
        raise SystemExit(f"chunk: --overlap {overlap}: give 0 or more tokens, fewer than --max-tokens ({size})")
    embedder = arguments.embedder or os.environ.get("ACADEMY_EMBEDDER") or compare.DEFAULT_EMBEDDER
    if "rag9" in arguments.method.lower() or "semantic" in arguments.method.lower():
        compare.check_embedder(embedder)  # rag9 cuts where meaning changes: it embeds
    docs = Path(arguments.docs)
    if not docs.is_dir():
        raise SystemExit(f"chunk: DOCS {docs} is not a folder; give a folder of .md, .markdown, .mdx or .txt files")
    labs = Path(arguments.labs) if arguments.labs else compare.SOLUTIONS
    if not labs.is_dir():
        what = f"--labs {labs} is not a folder" if arguments.labs else "this copy of the course has no solutions"
        raise SystemExit(f"chunk: {what}; give the folder of your finished rag4-...py to rag9-...py with --labs DIR")
    out = Path(arguments.out)
    if not out.parent.is_dir():
        raise SystemExit(f"chunk: --out {out}: its folder {out.parent} does not exist; create it or choose another")
    title = arguments.title if arguments.title is not None else docs.resolve().name
    return Settings(docs, arguments.method, size, overlap, title, labs, embedder, out)


def chunker(settings: Settings) -> compare.Method:
    """The one chunker the --method names: its exact name, or words that name it alone."""
    problems = []
    methods = [method for method in compare.course_methods(settings.labs, settings.title, settings.embedder, problems)
               + compare.peer_methods(settings.title, []) if method.chunk]
    names = [method.name for method in methods]
    exact = [method for method in methods if method.name.lower() == settings.method.strip().lower()]
    found = exact or compare.chosen(methods, settings.method)
    if len(found) != 1:
        which = "names none" if not found else f"names {len(found)} ({'; '.join(m.name for m in found)})"
        raise SystemExit(f"chunk: --method {settings.method!r} {which}; give one of: {'; '.join(names)}"
                         + (f" ({problems[0]})" if problems else ""))
    return found[0]


def record(doc: str, offset: int, chunk) -> dict:
    """A chunk as one line of the output: where it is (`offset`: where its part starts, see
    compare.parts), its exact text, its headings and its size; `oversize` when the chunker kept a
    block whole over the budget."""
    line = {"doc": doc, "start": offset + chunk.start, "end": offset + chunk.end, "text": chunk.text,
            "heading_path": list(chunk.section), "tokens": chunk.n_tokens}
    if chunk.header:
        line["header"] = chunk.header
    if getattr(chunk, "oversize", False):
        line["oversize"] = True  # a block kept whole over the budget (a big table or code block)
    return line


def run(settings: Settings) -> int:
    """Chunk every document and write the chunks; a file is written whole or not at all."""
    method = chunker(settings)
    documents = compare.read_documents(settings.docs)
    for line in documents.problems:
        print(f"  {line}", file=sys.stderr)
    if not documents.texts:
        raise SystemExit(f"chunk: no readable .md, .markdown, .mdx or .txt file in {settings.docs}")
    overlap = settings.overlap if method.overlaps else 0
    if overlap != settings.overlap:
        print(f"  {method.name} has no overlap of its own: chunks without overlap", file=sys.stderr)
    partial = settings.out.with_name(settings.out.name + ".partial")
    count = 0
    with open(partial, "w", encoding="utf-8") as file:
        for name, text in documents.texts.items():
            try:
                for offset, piece in compare.chunks_of(method, name, text, settings.size, overlap):
                    file.write(json.dumps(record(name, offset, piece), ensure_ascii=False) + "\n")
                    count += 1
            except ValueError as error:
                file.close()
                partial.unlink()
                raise SystemExit(f"chunk: {method.name} fails {error}") from None
    os.replace(partial, settings.out)
    print(f"{count:,} chunks of {len(documents.texts)} documents by {method.name} at {settings.size} tokens, overlap "
          f"{overlap}: written to {settings.out}")
    return 0


def main(argv=None) -> int:
    """`python -m labkit.chunk DOCS --method NAME ...`"""
    parser = argparse.ArgumentParser(prog="python -m labkit.chunk", description=__doc__.split("\n\n")[0])
    add_arguments(parser)
    return run(settings_of(parser.parse_args(argv)))


if __name__ == "__main__":
    sys.exit(main())
