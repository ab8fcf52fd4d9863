"""The course's dataset: an original corpus and questions whose answers are exact spans."""

import re
from collections import Counter

import pytest

from academy_llm import corpus_pages, corpus_questions

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
