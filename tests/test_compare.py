"""chunking-labs compare: a learner's own documents and questions, read, located, scored and cached."""

import csv
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from academy_llm import embed
from labkit import cli, compare, load_lab
from labkit.uncertainty import paired_difference

ROOT = Path(__file__).resolve().parent.parent

INSTALL = """---
title: Install
---

# Install

Run the installer with `pip install orbit`. It needs Python 3.10 or newer.

## Upgrade

To upgrade, run `pip install --upgrade orbit` and restart the server.
"""
FAQ = "\ufeff# FAQ\r\n\r\nThe server listens on port 8080\r\nby default. Set ORBIT_PORT to change it.\r\n"
OLD_MAC = "# Notes\r\rBackups run every night at two.\rThey keep seven days.\r"
QUESTIONS = [
    '{"question": "Which Python?", "answer": "It needs Python 3.10 or newer."}',  # exact
    '{"question": "Which port?", "answer": "listens on port 8080 by default."}',  # a line break in the file
    '{"question": "When do backups run?", "answer": "Backups   run every\\nnight at two."}',  # spaces differ
    '{"question": "How to upgrade?", "answer": "restart the server", "doc": "guide/install.md"}',
    '{"question": "Anything?", "answer": "this sentence is in no document"}',
    '{"question": "Which command?", "answer": "pip install"}',  # twice in install.md
    'not json at all',
    '{"question": "Which doc?", "answer": "It needs Python", "doc": "missing.md"}',
]


@pytest.fixture
def docs(tmp_path):
    """A folder of documents: front matter in a subfolder, CRLF with a BOM, lone CRs, a file in Latin-1
    and a broken link."""
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "install.md").write_text(INSTALL, encoding="utf-8")
    (folder / "faq.md").write_bytes(FAQ.encode("utf-8"))
    (folder / "notes.txt").write_bytes(OLD_MAC.encode("utf-8"))
    (folder / "latin.md").write_bytes("# Cafe\n\nUn caf\xe9 noir.\n".encode("latin-1"))
    (folder / ".hidden").mkdir()
    (folder / ".hidden" / "skip.md").write_text("never read", encoding="utf-8")
    (folder / "image.png").write_bytes(b"\x89PNG")
    (folder / "moved.md").symlink_to(folder / "gone.md")  # a link to a file since moved: cannot be read
    return folder


@pytest.fixture
def questions(tmp_path):
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(QUESTIONS) + "\n\n", encoding="utf-8")
    return path


def test_documents_are_read_exactly_and_bad_files_named(docs):
    read = compare.read_documents(docs)
    assert sorted(read.texts) == ["faq.md", "guide/install.md", "notes.txt"]
    assert read.texts["faq.md"] == FAQ  # the BOM and the CRLFs kept: offsets are the file's
    assert read.texts["notes.txt"] == OLD_MAC
    latin, moved = read.problems
    assert latin.startswith("latin.md: left out") and "line 3 is not UTF-8; save the file as UTF-8" in latin
    assert moved == ("moved.md: left out, it cannot be read (No such file or directory); "
                     "check that it is a readable file")


def test_quotes_are_located_allowing_whitespace_only(docs, questions):
    texts = compare.read_documents(docs).texts
    found = compare.read_questions(questions, texts)
    assert [q.line for q in found.usable] == [1, 2, 3, 4]
    for question in found.usable:
        span = texts[question.doc][question.start:question.end]
        assert " ".join(span.split()) in {"It needs Python 3.10 or newer.", "listens on port 8080 by default.",
                                          "Backups run every night at two.", "restart the server"}
    assert found.usable[1].doc == "faq.md" and "\r\n" in texts["faq.md"][found.usable[1].start:found.usable[1].end]
    assert found.lines == 8
    reasons = dict(line.split(": ", 1) for line in found.problems)
    assert reasons["line 5"].startswith("the answer is found nowhere in DOCS")
    assert "found in several places in DOCS (guide/install.md line 7, guide/install.md line 11)" in reasons["line 6"]
    assert reasons["line 7"].startswith("not JSON")
    assert reasons["line 8"].startswith("\"doc\" 'missing.md' is not a document read in DOCS")
    assert all("\n" not in line for line in found.problems)


def test_a_quote_is_only_whitespace_tolerant():
    texts = {"a.md": "The quick brown fox.\nThe quick-brown fox.", "b.md": "a a a"}
    assert compare.find_quote("quick   brown\tfox", texts) == [("a.md", 4, 19)]
    assert compare.find_quote("quick brown fox!", texts) == []
    assert compare.find_quote("The quick (brown) fox", texts) == []  # escaped: ( is text
    assert len(compare.find_quote("a a", {"b.md": "a a a"})) == 2  # overlapping places count


def test_an_empty_folder_stops_with_one_line(tmp_path):
    (tmp_path / "empty").mkdir()
    result = subprocess.run([sys.executable, "-m", "labkit.compare", str(tmp_path / "empty")], capture_output=True,
                            text=True, cwd=ROOT, timeout=60)
    assert result.returncode != 0
    assert result.stderr.strip().count("\n") == 0
    assert "no readable .md, .markdown, .mdx or .txt file in" in result.stderr


def test_no_usable_question_stops_with_one_line(docs, tmp_path, capsys):
    path = tmp_path / "bad.jsonl"
    path.write_text('{"question": "q", "answer": "nowhere to be found"}\nnot json\n', encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        compare.main([str(docs), "--questions", str(path), "--cache", str(tmp_path / "cache"),
                      "--out", str(tmp_path / "out")])
    message = str(stopped.value.code)
    assert message.startswith("compare: none of the 2 questions") and "\n" not in message
    printed = capsys.readouterr().out
    assert "bad.jsonl line 1: the answer is found nowhere" in printed and "bad.jsonl line 2: not JSON" in printed


def test_the_whole_run_through_the_console_command(docs, questions, tmp_path, capsys):
    out = tmp_path / "out"
    assert cli.main(["compare", str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"),
                     "--out", str(out), "--sizes", "32", "--size", "32", "--embedder", "hash"]) == 0
    printed = capsys.readouterr()
    assert "latin.md: left out" in printed.err
    assert "4 of 8 questions usable" in printed.out
    for method in ("token windows (rag4)", "recursive (rag5)", "markdown (rag6)", "header + table rows (rag7)",
                   "semantic (rag9)", "small to big (rag10)", "hybrid search (rag11)"):
        assert method in printed.out
    assert compare.NO_WINNER in printed.out.lower()  # 4 questions show nothing
    with open(out / "compare.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 8 and float(rows[0]["recall"]) >= float(rows[-1]["recall"])
    assert (out / "compare.md").read_text(encoding="utf-8").startswith("| method |")
    assert (out / "recall-vs-size.png").read_bytes().startswith(b"\x89PNG")


def test_a_second_run_embeds_only_new_chunks(docs, questions, tmp_path, capsys):
    arguments = [str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"), "--out",
                 str(tmp_path / "out"), "--embedder", "hash", "--methods", "rag5,rag6", "--size", "32"]

    def embedded(sizes):
        compare.main(arguments + ["--sizes", sizes])
        line = [line for line in capsys.readouterr().out.splitlines() if line.startswith("embeddings:")][0]
        return [int(word.replace(",", "")) for word in line.split() if word.replace(",", "").isdigit()]

    first, reused = embedded("32")
    assert first > 0 and reused == 0
    assert embedded("32") == [0, first]  # the same settings: nothing new to embed
    new, reused = embedded("32,48")  # another size: its chunks only
    assert reused == first and 0 < new


def test_the_cache_gives_the_embedders_vectors(tmp_path):
    cache = compare.EmbeddingCache(tmp_path, "hash")
    texts = ["Backups run nightly.", "The port is 8080.", "Backups run nightly."]
    assert np.array_equal(cache.vectors(texts, "test"), embed(texts, "hash"))
    assert cache.embedded == 2
    again = compare.EmbeddingCache(tmp_path, "hash")
    assert np.array_equal(again.vectors(texts + ["A new text."], "test")[:3], embed(texts, "hash"))
    assert (again.embedded, again.reused) == (1, 2)
    assert compare.EmbeddingCache(tmp_path, "wordllama").key("x") != cache.key("x")  # models never mix


def scored(name, recall):
    recall = np.asarray(recall, dtype=float)
    return compare.Scored(name, 256, recall, np.full(len(recall), 900.0), 10)


def test_the_recommendation_says_when_no_method_is_shown_better():
    rag8 = load_lab("rag8", ROOT / "solutions")  # the intervals are rag8's paired bootstrap
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    rows = compare.table_rows([scored("first", a), scored("second", b)], rag8)
    assert rows[0].difference.estimate == 0 and not rows[1].difference.shown
    assert compare.recommendation(rows, 1000).startswith("No method is shown better on these questions: ")
    clear = compare.table_rows([scored("weak", [0] * 30), scored("strong", [1] * 30)], rag8)
    assert compare.recommendation(clear, 1000).startswith("Recommended: strong, recall 1.00 within 1,000 tokens, "
                                                          "1.00 ahead of weak")


def test_paired_difference_is_deterministic_and_paired():
    first, second = np.array([1, 1, 0, 1, 0, 1] * 10), np.array([1, 0, 0, 1, 0, 0] * 10)
    interval = paired_difference(second, first)  # first - second
    assert interval == paired_difference(second, first)  # the same on every run
    assert interval.low <= interval.estimate <= interval.high and interval.estimate == pytest.approx(1 / 3)
    assert interval.low > 0  # every question agrees or favours the first
    with pytest.raises(ValueError):
        paired_difference([1, 0], [1])


def test_learners_unfinished_labs_are_left_out_by_name(docs, questions, tmp_path, capsys):
    with pytest.raises(SystemExit) as stopped:
        compare.main([str(docs), "--questions", str(questions), "--labs", str(ROOT / "labs"), "--cache",
                      str(tmp_path / "cache"), "--out", str(tmp_path / "out"), "--embedder", "hash",
                      "--methods", "rag5,rag10", "--sizes", "32", "--size", "32"])
    assert "every method failed" in str(stopped.value.code)
    printed = capsys.readouterr().out
    assert "recursive (rag5): left out, on " in printed and "NotImplementedError: TODO(rag5)" in printed
    assert "small to big (rag10): left out, NotImplementedError" in printed


def test_the_console_entry_point_is_declared():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["scripts"]["chunking-labs"] == "labkit.cli:main"
    assert "compare" in cli.SUBCOMMANDS


def test_line_numbers_count_every_kind_of_line_end():
    text = "one\r\ntwo\rthree\nfour"
    assert [compare._line_number(text, text.index(word)) for word in ("one", "two", "three", "four")] == [1, 2, 3, 4]
    assert compare._line_number(text.encode(), text.index("four")) == 4
