"""wordllama against minilm on the Orbit questions, dev and test: recall within 1,000 tokens, each with its
95% interval, and minilm's paired difference from wordllama on the same questions.

Each embedder runs in a process of its own, with ACADEMY_EMBEDDER set, through rag11's own harness
(`found`): words alone (BM25, the same for both), meaning alone (rag10's units ranked by the
embedder, their parents read), both fused by RRF (rag11's search), rag10's small-to-big search and
rag7's chunks with table rows at 256 tokens (rag8's recommended chunks), each reading at most 1,000 tokens.

    python benchmarks/embedders.py          # a few seconds with wordllama; minilm reads the vectors
                                            # the course ships and embeds what they lack
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from academy_llm import corpus_questions  # noqa: E402
from tables import bootstrap_mean, paired_difference  # noqa: E402 (the benchmark's bootstrap, as run.py's tables)

EMBEDDERS = ("wordllama", "minilm")
METHODS = {"RRF": "rag11, words and meaning fused by RRF", "meaning": "meaning alone (rag10's units)",
           "rag10": "rag10, small to big", "rag7": "rag7, header + table rows", "words": "words alone (BM25)"}
KINDS = ("prose", "identifier", "table", "code", "multi_section")


def recalls(out: str) -> None:
    """Each question's recall within 1,000 tokens, {split: {method: [...]}}, with the embedder of the environment."""
    from academy_llm import corpus_pages
    from labkit import load_lab
    from labkit.lessons import rag10 as lesson10
    from labkit.lessons import rag11 as lesson11

    rag10, rag11 = load_lab("rag10", ROOT / "solutions"), load_lab("rag11", ROOT / "solutions")
    pages = corpus_pages()
    hybrid = rag11.build_hybrid(pages)
    found = {}
    for split in ("dev", "test"):
        questions = corpus_questions(split)
        asked = [question["question"] for question in questions]
        ranked = lesson11.rankings(hybrid, asked, rag11.search_terms)
        hits = {method: rag11.found(hybrid, ranked, method) for method in ("words", "meaning", "RRF")}
        hits["rag10"], hits["rag7"] = rag10.search(pages, asked), lesson10.recommended_hits(questions)
        found[split] = {method: lesson10.scores_of(questions, hits[method]) for method in METHODS}
    Path(out).write_text(json.dumps(found))


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        found = {}
        for name in EMBEDDERS:
            out = Path(folder) / f"{name}.json"
            subprocess.run([sys.executable, __file__, "--recalls", str(out)], check=True,
                           env=dict(os.environ, ACADEMY_EMBEDDER=name))
            found[name] = json.loads(out.read_text())
    print_tables(found)


def print_tables(found: dict) -> None:
    """The tables of main(), from {embedder: {split: {method: each question's recall}}}."""
    for split in ("dev", "test"):
        questions = corpus_questions(split)
        print(f"\nOrbit {split} split, {len(questions)} questions: recall within 1,000 tokens [95% interval]")
        print(f"  {'method':40} {'wordllama':>20} {'minilm':>20} {'minilm - wordllama':>24}")
        for method, label in METHODS.items():
            old, new = found["wordllama"][split][method], found["minilm"][split][method]
            print(f"  {label:40} {bootstrap_mean(old).plain():>20} {bootstrap_mean(new).plain():>20} "
                  f"{str(paired_difference(old, new)):>24}")
        print(f"  by kind, {METHODS['meaning']} and {METHODS['RRF']}:")
        for kind in KINDS:
            rows = [n for n, question in enumerate(questions) if question["kind"] == kind]
            for method in ("meaning", "RRF"):
                old = [found["wordllama"][split][method][n] for n in rows]
                new = [found["minilm"][split][method][n] for n in rows]
                print(f"    {kind:14} {method:8} n={len(rows):3} {bootstrap_mean(old).plain():>20} "
                      f"{bootstrap_mean(new).plain():>20} {str(paired_difference(old, new)):>24}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--recalls"]:
        recalls(sys.argv[2])
    elif sys.argv[1:2] == ["--tables"]:  # from the files two --recalls runs wrote: wordllama's, minilm's
        print_tables({name: json.loads(Path(path).read_text()) for name, path in zip(EMBEDDERS, sys.argv[2:4])})
    else:
        main()
