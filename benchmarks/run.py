"""Benchmark: the course's chunkers beside the libraries people would pick instead.

    /tmp/bench-venv/bin/python benchmarks/run.py [--quick] [--no-chroma] [--embedder hash] [--speed-only] [--profile]

The same questions and the same embedder go through the course's recursive,
Markdown and Markdown + header chunkers (the recommended one, with a chunk per
table row, first), lab rag10's small-to-big retrieval and lab rag11's hybrid
search, and through LangChain's recursive splitter (default and Markdown
separators), semchunk and chonkie's recursive chunker, all counting
cl100k_base tokens; then rag10's and rag11's indexing and queries and every
chunker are timed. The output is Markdown tables, which the README shows
as printed.

The peers are not part of the course: install them in a venv of their own
(see benchmarks/requirements.txt). Nothing is downloaded at run time.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import platform
import sys
import time
from importlib import metadata
from pathlib import Path

from academy_llm import CL100K_SPECIAL_TOKENS, EMBEDDERS, corpus_pages, corpus_questions, embedder_name

import chroma
import indexing
import orbit
import peak_memory
import profiling
import speed
from chunkers import MARKDOWN, RECURSIVE

PACKAGES = ("tiktoken", "numpy", "wordllama", "onnxruntime", "langchain-text-splitters", "semchunk", "chonkie",
            "chonkie-core")
PEER_MODULES = ("langchain_text_splitters", "semchunk", "chonkie")


def require_peers():
    """Stop with the install command if a peer is missing, before minutes of work are spent."""
    missing = [name for name in PEER_MODULES if importlib.util.find_spec(name) is None]
    if missing:
        sys.exit(f"missing {', '.join(missing)}: install the peers in a venv of their own:\n"
                 "  python3 -m venv /tmp/bench-venv\n"
                 "  /tmp/bench-venv/bin/pip install -r requirements.txt -r benchmarks/requirements.txt")


def describe_machine():
    """The CPU, cores, Python and package versions the numbers were measured with."""
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor() or "unknown")
    versions = ", ".join(f"{name} {metadata.version(name)}" for name in PACKAGES)
    print(f"- command: `{' '.join(['python', 'benchmarks/run.py'] + sys.argv[1:])}`")
    print(f"- CPU: {cpu}, {os.cpu_count()} cores; Python {platform.python_version()}")
    print(f"- packages: {versions}")
    print(f"- load average (1, 5, 15 min) at the start: {', '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if os.environ.get("OPENBLAS_CORETYPE"):
        print(f"- OPENBLAS_CORETYPE={os.environ['OPENBLAS_CORETYPE']} (left as set on this machine)")


def describe_openai():
    """The model, and what embedding the Orbit pages and questions costs, before anything is sent."""
    from academy_llm import corpus_questions, embed_cost
    from labkit.openai_embedder import settings

    texts = list(corpus_pages().values()) + [question["question"] for question in corpus_questions()]
    print(f"- embedder: openai, {settings().describe()}; the Orbit pages and questions not cached yet cost about "
          f"USD {embed_cost(texts):.4f}, and each chunking about as much again; ACADEMY_MAX_COST="
          f"{settings().max_cost:g} stops a run that would send more")


REAL_MARKDOWN_SIZE = 512


def real_markdown_documents():
    """([(title, text)], [files left out]) of the real-world Markdown corpus (benchmarks/real-markdown):
    speed on what people write, MDX, templating, every script, CRLF, big tables and all. A file's title
    is its name. A file that shows a special token's text is left out: LangChain's and chonkie's tiktoken
    calls raise on it."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from real_markdown import corpus_files, read_text

    documents, refused = [], []
    for path in corpus_files():
        text = read_text(path)
        if any(special in text for special in CL100K_SPECIAL_TOKENS):  # "<|endoftext|>" shown in a page
            refused.append(path.name)
        else:
            documents.append((path.stem, text))
    return documents, refused


def parse_arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true",
                        help="one chunk size, 2 timing runs (growth: still 3), growth to 4x, a 2 MB memory test")
    parser.add_argument("--no-chroma", action="store_true", help="skip Chroma's benchmark even if its data is there")
    parser.add_argument("--chroma-data", type=Path, default=chroma.DEFAULT_FOLDER,
                        help=f"folder of Chroma's benchmark data (default: {chroma.DEFAULT_FOLDER})")
    parser.add_argument("--embedder", choices=EMBEDDERS, default=embedder_name(),
                        help="embedder for retrieval (default: $ACADEMY_EMBEDDER, else minilm)")
    parser.add_argument("--runs", type=int, default=10, help="timing runs per measurement; the best counts")
    parser.add_argument("--speed-only", action="store_true",
                        help="only the timings (speed, growth, memory): no retrieval, no indexing")
    parser.add_argument("--profile", action="store_true", help="also profile the course's chunkers by function")
    return parser.parse_args()


def main():
    args = parse_arguments()
    require_peers()
    runs = 2 if args.quick else args.runs
    began = time.perf_counter()
    print("## Benchmark: the course's chunkers beside the libraries\n")
    describe_machine()
    if args.embedder == "openai":
        describe_openai()

    orbit_sizes = orbit.SIZES[:1] if args.quick else orbit.SIZES
    if not args.speed_only:
        orbit.run(args.embedder, orbit_sizes)
    pages = list(corpus_pages().values())
    datasets = [("Orbit", orbit_sizes[0], [(orbit.harness.TITLE, page) for page in pages])]
    asked = [(orbit.harness.TITLE, [q["question"] for q in corpus_questions("test")])]  # the retrievers' questions
    if args.no_chroma or not (args.chroma_data / "questions_df.csv").is_file():
        reason = "--no-chroma" if args.no_chroma else f"no data in {args.chroma_data}"
        print(f"\n(Chroma's benchmark skipped: {reason})")
    else:
        chroma_sizes = chroma.SIZES[:1] if args.quick else chroma.SIZES
        if not args.speed_only:
            chroma.run(args.embedder, args.chroma_data, chroma_sizes)
        corpora, questions = chroma.load(args.chroma_data)
        datasets.append(("Chroma", chroma_sizes[0], chroma.titled(corpora)))
        asked.append((chroma.NO_TITLE, [q["question"] for q in questions]))

    real, refused = real_markdown_documents()
    datasets.append(("real Markdown", REAL_MARKDOWN_SIZE, real))
    print(f"\n(real Markdown: {len(real)} files of benchmarks/real-markdown, {speed.megabytes(real):.1f} MB, "
          f"timed at {REAL_MARKDOWN_SIZE} tokens; left out, as LangChain's and chonkie's tiktoken calls raise on "
          f"the text of a special token in them: {', '.join(refused) or 'none'})")

    if not args.speed_only:  # the retrievers on the datasets with questions (the real Markdown has none)
        indexing.indexing_table([(*dataset, *titled) for dataset, titled in zip(datasets, asked)], runs, args.embedder)
    speeds = speed.speed_table(datasets, runs)
    steps = speed.GROWTH[:2] if args.quick else speed.GROWTH
    growth = speed.growth_table(pages, orbit_sizes[0], speed.GROWTH_RUNS, steps)
    speed.print_targets(speeds, growth, steps)
    peak_memory.memory_table(pages, orbit_sizes[0], orbit_sizes[0] // 8, 2 if args.quick else 20)

    if args.profile:
        print("\n### Profile of the course's chunkers on the Orbit pages")
        for contender in (RECURSIVE, MARKDOWN):
            profiling.profile(contender, pages, orbit_sizes[0], 0)
    print(f"\n(whole run: {time.perf_counter() - began:.0f} s; load average at the end: "
          f"{', '.join(f'{x:.2f}' for x in os.getloadavg())})")


if __name__ == "__main__":
    main()
