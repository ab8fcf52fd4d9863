"""Add labelled questions to the Orbit dataset from drafts that quote their answers, and measure how they lean.

    python tools/questions.py check DRAFT.jsonl     # every problem of a draft, one line each; exit 1 if any
    python tools/questions.py add DRAFT.jsonl ...   # append the drafts to datasets/orbit-questions.jsonl
    python tools/questions.py overlap               # the word-overlap table benchmarks/README.md quotes
    python tools/questions.py audit [--split test]  # questions whose gold span may not be the only answer

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
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from academy_llm import corpus_pages, corpus_questions  # noqa: E402
from labkit.lessons.rag8 import STOP_WORDS, content_words  # noqa: E402 (rag8's dial groups questions by the same rule)

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


# --------------------------------------------------------------------------
# The audit: is each gold span the one place the answer is, and enough to answer?
# --------------------------------------------------------------------------
# Two things make a labelled question unsound, and both cost a retriever a point it earned or
# give it one it did not: the answer also stands somewhere else (a retriever that finds that
# place is scored wrong), or the span alone does not answer (a chunk that holds it is scored
# right without the answer). The audit flags candidates mechanically; a person reads each one.
SHORT_SPAN = 40  # characters: a span this short answers only when it holds what the question asks about
ELSEWHERE_SHARE = 0.8  # a block elsewhere holding this share of the answer's key tokens may answer too
KEY_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:/@-]*[A-Za-z0-9]|[0-9]")


# Flagged questions a person read and kept, with why: the audit leaves them out of what it lists.
SAME_PAGE_OTHER = "the place flagged is on its own page and says something else (another row, command or case)"
ANOTHER_FACT = "the place flagged shares the tokens, not the answer: it does not say what the question asks"
WHOLE_ROW = "a table row, read under its header as the course's table chunks give it, answers"
SHORT_ENOUGH = "short, but it holds what the question asks about: the setting, command or line it names"
READ = {
    "w1-014": "the .pkg's path is the row's system-wide one; the pages flagged give the per-user one",
    "w2-024": SHORT_ENOUGH, "w2-035": SAME_PAGE_OTHER, "w2-036": SAME_PAGE_OTHER,
    "w2-043": ANOTHER_FACT, "w3-016": "the pages flagged are the Go and Python clients', not JavaScript's",
    "w3-044": WHOLE_ROW, "w3-053": WHOLE_ROW, "w3-057": "the place flagged is the API's JSON, not the command line",
    "w3-101": SHORT_ENOUGH, "w3-105": "the place flagged is the release's heading, without the feature",
    "w3-106": "the place flagged is the release's heading, without the feature",
    "w3-128": "the FAQ says the CLI must be within one minor release, not what it does against 2.4",
    "w3-139": "the place flagged is about run_timeout, not what happens when one attempt's timeout is reached",
    "w3-162": SAME_PAGE_OTHER, "w3-196": SHORT_ENOUGH,
    "w3-202": "install-linux says to override units with a drop-in, not where server variables go",
    "w3-297": WHOLE_ROW, "w3-325": "the places flagged install or remove with winget; only the span upgrades",
    "w3-327": "the place flagged opens the satellites' port, not the metrics port",
    "w3-355": "the place flagged gives the default, 50, not the highest an administrator may set",
    "w3-373": "the place flagged turns on debug logging for every component, not the scheduler's",
    "w3-416": "the place flagged opens another port with another rule", "w3-418": ANOTHER_FACT,
    "w3-425": SHORT_ENOUGH, "w3-433": SHORT_ENOUGH,
    "w3-445": "the place flagged names the permission, not the built-in role that holds it",
    "w3-447": SAME_PAGE_OTHER, "w3-459": ANOTHER_FACT,
    "w3-466": "the place flagged says how an out-of-memory kill is reported, not whether it is retried",
    "w3-469": ANOTHER_FACT, "w3-481": SHORT_ENOUGH,
    "w3-494": "the place flagged gives the code, not the Go constant the question asks for",
    "w3-543": "the place flagged creates the token, not the service account", "w4-019": ANOTHER_FACT,
    "w4-030": "the place flagged is the release's heading, without the feature",
    "w4-032": "the place flagged names the setting, not what it changed",
}


def key_tokens(text: str, common: set[str]) -> set[str]:
    """The answer's tokens that say something: a number, an identifier (with _ . : / @ or -), or a word
    no more common in the corpus than a few pages; words of every page, stop words and short ones left out."""
    keys = set()
    for token in KEY_TOKEN.findall(text):
        lowered = token.lower().strip(".:")
        if len(lowered) < 2:
            continue  # a lone digit or letter: a list's number, a table's count, found everywhere
        if any(ch.isdigit() for ch in lowered) or re.search(r"[_.:/@-]", lowered):
            keys.add(lowered)
        elif len(lowered) >= 4 and lowered not in STOP_WORDS and lowered not in common:
            keys.add(lowered)
    return keys


def blocks(page: str) -> list[tuple[int, int]]:
    """The page's places an answer can stand in: paragraphs (runs of lines between blank ones), and each
    line of a table or of a fenced block on its own. (start, end) offsets, lines' ends left out."""
    found, start, fenced = [], None, False
    offset = 0
    for line in page.splitlines(keepends=True):
        bare = line.strip()
        one_line = fenced or bare.startswith("|") or bare.startswith(("```", "~~~"))
        if bare.startswith(("```", "~~~")):
            fenced = not fenced
        if not bare or one_line:
            if start is not None:
                found.append((start, offset))
                start = None
            if bare:
                found.append((offset, offset + len(line.rstrip("\r\n"))))
        elif start is None:
            start = offset
        offset += len(line)
    if start is not None:
        found.append((start, offset))
    return found


def audit(questions: list[dict], pages: dict[str, str]) -> list[tuple[dict, str]]:
    """(question, why) for every question a person should read: its answer's key tokens found together
    in a block outside its spans (another page, or another part of its own), or a span too short."""
    words_by_page = [set(re.findall(r"[a-z0-9]+", page.lower())) for page in pages.values()]
    common = {word for word, n in Counter(w for words in words_by_page for w in words).items()
              if n > len(pages) // 8}
    places = [(doc, start, end, set(t.lower().strip(".:") for t in KEY_TOKEN.findall(page[start:end])))
              for doc, page in pages.items() for start, end in blocks(page)]
    flagged = []
    for q in questions:
        spans = [(q["doc_id"], q["start"], q["end"])] + [(q["doc_id"], s["start"], s["end"])
                                                          for s in q.get("extra_spans", [])]
        answers = [q["answer"]] + [s["answer"] for s in q.get("extra_spans", [])]
        for answer, (doc, start, end) in zip(answers, spans):
            keys = key_tokens(answer, common)
            if len(keys) < 2:
                continue
            for other_doc, other_start, other_end, tokens in places:
                inside = any(other_doc == d and other_start < e and s < other_end for d, s, e in spans)
                if inside or len(keys & tokens) < ELSEWHERE_SHARE * len(keys):
                    continue
                line = pages[other_doc].count("\n", 0, other_start) + 1
                flagged.append((q, f"elsewhere: {len(keys & tokens)}/{len(keys)} of the key tokens of "
                                   f"{answer[:50]!r} also in {other_doc} line {line}: "
                                   f"{pages[other_doc][other_start:other_end][:100]!r}"))
        if len(q["answer"]) < SHORT_SPAN and not q.get("extra_spans") and overlap(q) == 0:
            flagged.append((q, f"short: a span of {len(q['answer'])} characters sharing no word with the question"))
    return flagged


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
    sub.add_parser("audit").add_argument("--split", choices=SPLITS, default="test")
    args = parser.parse_args()
    if args.command == "overlap":
        print(overlap_table(corpus_questions()))
        return 0
    if args.command == "audit":
        flagged = audit(corpus_questions(args.split), corpus_pages())
        for q, why in flagged:
            if q["id"] not in READ:
                print(f"{q['id']} ({q['kind']}, {q['doc_id']}): {q['question']}\n    {why}")
        ids = {q["id"] for q, _ in flagged}
        print(f"{len(ids)} of {len(corpus_questions(args.split))} {args.split} questions flagged: "
              f"{len(ids & READ.keys())} read and kept (READ), {len(ids - READ.keys())} to be read")
        return 1 if ids - READ.keys() else 0
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
