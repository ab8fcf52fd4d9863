"""The course's dataset: an original corpus and questions whose answers are exact spans."""

import re
import sys
from collections import Counter
from pathlib import Path

import pytest

from academy_llm import corpus_pages, corpus_questions

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
PAGES = corpus_pages()
QUESTIONS = corpus_questions()


def test_corpus_is_large_enough_and_has_front_matter():
    assert len(PAGES) >= 40
    assert sum(len(text.split()) for text in PAGES.values()) >= 60_000
    for doc_id, text in PAGES.items():
        head = re.match(r"---\nid: (.+)\ntitle: .+\napplies_to: .+\n---\n", text)
        assert head and head.group(1) == doc_id, f"{doc_id}: front matter id, title, applies_to"


def test_questions_are_labelled_with_exact_spans():
    assert len(QUESTIONS) >= 150
    assert len({q["id"] for q in QUESTIONS}) == len(QUESTIONS)
    for q in QUESTIONS:
        page = PAGES[q["doc_id"]]
        for span in [q] + q.get("extra_spans", []):
            assert page[span["start"] : span["end"]] == span["answer"], q["id"]
        assert (q["kind"] == "multi_section") == bool(q.get("extra_spans")), q["id"]


KINDS = {"prose", "identifier", "table", "code", "multi_section"}


@pytest.mark.parametrize("field, values", [("kind", KINDS), ("split", {"dev", "test"})])
def test_every_kind_and_split_is_used(field, values):
    counts = Counter(q[field] for q in QUESTIONS)
    assert set(counts) == values and min(counts.values()) >= 10


def test_enough_questions_to_tell_methods_apart():
    """480 test and 200 dev questions, 60 of each kind in test: one question is about 0.002 of test recall."""
    test = Counter(q["kind"] for q in QUESTIONS if q["split"] == "test")
    assert sum(test.values()) >= 480 and len(QUESTIONS) - sum(test.values()) >= 200
    assert min(test.values()) >= 60, test


def test_benchmark_readme_shows_how_the_questions_lean():
    """benchmarks/README.md's word-overlap table is what tools/questions.py measures on the dataset today."""
    from questions import overlap_table

    readme = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    shown = re.search(r"<!-- questions: overlap -->\n```text\n(.*?)\n```\n<!-- /questions -->", readme, re.S)
    assert shown, "benchmarks/README.md has no <!-- questions: overlap --> block"
    assert shown.group(1) == overlap_table(QUESTIONS), "stale: paste `python tools/questions.py overlap` in it"


def test_a_draft_question_gets_its_one_exact_span_or_the_reason():
    from questions import resolve

    pages = {"p": "alpha beta. gamma beta."}
    draft = {"doc_id": "p", "question": "q?", "answer": "gamma beta.", "kind": "prose", "split": "test"}
    record, problems = resolve(draft, pages)
    assert problems == [] and (record["start"], record["end"]) == (12, 23)
    for answer, reason in (("beta.", "found 2 times"), ("delta", "not found"), (" gamma", "whitespace")):
        record, problems = resolve({**draft, "answer": answer}, pages)
        assert record is None and reason in problems[0]
    record, problems = resolve({**draft, "kind": "multi_section"}, pages)
    assert record is None and "extra_answers" in problems[0]


def test_the_audit_flags_an_answer_that_stands_elsewhere_and_a_span_too_short():
    from questions import audit

    pages = {"a": "# Ports\n\nThe console listens on `http.port` 7400.\n\n| `ORBIT_PORT` | 7400 |\n",
             "b": "# FAQ\n\nBy default `http.port` is 7400.\n\nSomething else entirely.\n",
             "c": "# Other\n\nYes.\n"}
    elsewhere = {"id": "x", "doc_id": "a", "question": "Which port does the console use?", "kind": "prose",
                 "answer": "The console listens on `http.port` 7400.", "start": 9, "end": 49}
    short = {"id": "y", "doc_id": "c", "question": "Is it safe to restart?", "kind": "prose",
             "answer": "Yes.", "start": 9, "end": 13}
    flagged = audit([elsewhere, short], pages)
    assert [(q["id"], why.split(":")[0]) for q, why in flagged] == [("x", "elsewhere"), ("y", "short")]
    assert "also in b line 3" in flagged[0][1]


@pytest.mark.heavy  # reads every block of every page for each question: a second or two of CPU
def test_every_test_question_the_audit_flags_was_read():
    from questions import READ, audit

    unread = {q["id"] for q, _ in audit(corpus_questions("test"), PAGES)} - READ.keys()
    assert not unread, f"read these and fix, drop or add them to READ: {sorted(unread)}"
