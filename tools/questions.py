"""Add labelled questions to the Orbit dataset from drafts that quote their answers, and measure how they lean.

    python tools/questions.py check DRAFT.jsonl     # every problem of a draft, one line each; exit 1 if any
    python tools/questions.py add DRAFT.jsonl ...   # append the drafts to datasets/orbit-questions.jsonl
    python tools/questions.py overlap               # the word-overlap table benchmarks/README.md quotes

A draft line is a question whose answer is a quote, never an offset:

    {"doc_id": "install-linux", "question": "...", "answer": "an exact quote of the page",
     "kind": "prose", "split": "test", "extra_answers": ["a second quote, for multi_section only"]}

The tool finds each quote in its page and writes the span (`start`, `end`): a quote that
is found nowhere, or in more than one place, is refused with the reason, so every gold
span in the dataset is exact and unambiguous. Ids are given in order ("w3-001", ...).

Word overlap is how much a question leans on the answer's own words. A content word is a
run of letters or digits, lowercased, three characters or more and not a stop word; the
overlap of a question is the number of distinct content words it shares with its answer
span (all spans, for a multi_section question). A question written as users ask, in
words of its own, shares at most one.
"""

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from academy_llm import corpus_pages, corpus_questions  # noqa: E402
from labkit.lessons.rag8 import content_words  # noqa: E402 (rag8's dial groups questions by the same rule)

QUESTIONS = ROOT / "datasets" / "orbit-questions.jsonl"
KINDS = ("prose", "identifier", "table", "code", "multi_section")
SPLITS = ("dev", "test")
PARAPHRASE = 1  # at most this many content words shared with the answer: a question in the user's own words

def overlap(question: dict) -> int:
    """How many content words the question shares with its answer spans."""
    answers = [question["answer"]] + [span["answer"] for span in question.get("extra_spans", [])]
    return len(content_words(question["question"]) & content_words(" ".join(answers)))


def locate(page: str, quote: str) -> tuple[int | None, str]:
    """(start, "") if `quote` occurs exactly once in `page`, else (None, the reason)."""
    if not quote.strip():
        return None, "empty quote"
    if quote != quote.strip():
        return None, "quote starts or ends with whitespace: trim it"
    first = page.find(quote)
    if first < 0:
        return None, "quote not found in the page (copy it exactly, with its Markdown)"
    if page.find(quote, first + 1) >= 0:
        return None, f"quote found {page.count(quote)} times: lengthen it until it is unique"
    return first, ""


def resolve(draft: dict, pages: dict[str, str]) -> tuple[dict | None, list[str]]:
    """The dataset record for one draft line, or None and every problem found with it."""
    problems = []
    for field in ("doc_id", "question", "answer", "kind", "split"):
        if not isinstance(draft.get(field), str):
            problems.append(f"missing text field {field!r}")
    if problems:
        return None, problems
    if draft["kind"] not in KINDS:
        problems.append(f"kind {draft['kind']!r} is not one of {', '.join(KINDS)}")
    if draft["split"] not in SPLITS:
        problems.append(f"split {draft['split']!r} is not dev or test")
    extras = draft.get("extra_answers", [])
    if (draft["kind"] == "multi_section") != bool(extras):
        problems.append("extra_answers are given exactly when kind is multi_section")
    page = pages.get(draft["doc_id"])
    if page is None:
        return None, problems + [f"no page {draft['doc_id']!r} in datasets/orbit-docs"]
    spans = []
    for quote in [draft["answer"], *extras]:
        start, why = locate(page, quote)
        if start is None:
            problems.append(f"{why}: {quote[:60]!r}")
        else:
            spans.append({"start": start, "end": start + len(quote), "answer": quote})
    ordered = sorted(spans, key=lambda span: span["start"])
    for a, b in zip(ordered, ordered[1:]):
        if b["start"] < a["end"]:
            problems.append("two answers of one question overlap: quote distinct places")
    if problems:
        return None, problems
    record = {
        "doc_id": draft["doc_id"],
        "question": draft["question"],
        "answer": spans[0]["answer"],
        "start": spans[0]["start"],
        "end": spans[0]["end"],
        "kind": draft["kind"],
        "split": draft["split"],
    }
    if spans[1:]:
        record["extra_spans"] = spans[1:]
    return record, []


def read_drafts(paths: list[str], pages: dict[str, str]) -> tuple[list[dict], list[str]]:
    """Every draft line of `paths` resolved, and every problem as "file:line: reason"."""
    records, problems = [], []
    known = {q["question"].strip().lower() for q in corpus_questions()}
    for path in paths:
        for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
            if not line.strip():
                continue
            try:
                draft = json.loads(line)
            except json.JSONDecodeError as error:
                problems.append(f"{path}:{number}: not JSON ({error.msg})")
                continue
            record, found = resolve(draft, pages) if isinstance(draft, dict) else (None, ["not a JSON object"])
            key = str(draft.get("question", "")).strip().lower() if isinstance(draft, dict) else ""
            if key in known:
                found = found + ["the same question is already in the dataset or this draft"]
            known.add(key)
            problems += [f"{path}:{number}: {reason}" for reason in found]
            if record:
                records.append(record)
    return records, problems


def overlap_table(questions: list[dict]) -> str:
    """Questions by content words shared with their answer, per kind: the table the benchmark README shows."""
    bins = ("0", "1", "2", "3", "4+")
    counts = {kind: Counter() for kind in (*KINDS, "all")}
    for q in questions:
        shared = bins[min(overlap(q), 4)]
        counts[q["kind"]][shared] += 1
        counts["all"][shared] += 1
    lines = ["kind            n    " + "  ".join(f"{b:>4}" for b in bins) + "   <=1"]
    for kind, row in counts.items():
        n = sum(row.values())
        if not n:
            lines.append(f"{kind:<13}    0")
            continue
        paraphrased = row["0"] + row["1"]
        lines.append(f"{kind:<13} {n:>4}    " + "  ".join(f"{row[b]:>4}" for b in bins) + f"   {paraphrased / n:.0%}")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("check", "add"):
        sub.add_parser(name).add_argument("drafts", nargs="+")
    sub.add_parser("overlap")
    args = parser.parse_args()
    if args.command == "overlap":
        print(overlap_table(corpus_questions()))
        return 0
    records, problems = read_drafts(args.drafts, corpus_pages())
    for problem in problems:
        print(problem)
    paraphrased = sum(overlap(r) <= PARAPHRASE for r in records)
    print(f"{len(records)} questions usable, {paraphrased} in the user's own words (<= {PARAPHRASE} shared)")
    print("by kind and split:", dict(Counter((r["split"], r["kind"]) for r in records)))
    if problems or args.command == "check":
        return 1 if problems else 0
    existing = QUESTIONS.read_text(encoding="utf-8")
    prefix = "w3-"
    taken = {q["id"] for q in corpus_questions()}
    lines = []
    number = 1
    for record in records:
        while f"{prefix}{number:03d}" in taken:
            number += 1
        record = {"id": f"{prefix}{number:03d}", **record}
        taken.add(record["id"])
        lines.append(json.dumps(record, ensure_ascii=False))
    QUESTIONS.write_text(existing.rstrip("\n") + "\n" + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"added {len(lines)} questions to {QUESTIONS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
