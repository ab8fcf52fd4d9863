"""chunking-labs compare: a learner's own documents and questions, read, located, scored and cached."""

import csv
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import numpy as np
import pytest

from academy_llm import embed
from labkit import cli, compare, load_lab
from labkit.uncertainty import Interval, paired_difference

ROOT = Path(__file__).resolve().parent.parent
RAG8 = load_lab("rag8", ROOT / "solutions")  # compare's intervals are rag8's paired bootstrap

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


def test_documents_are_read_exactly_and_every_file_left_out_named(docs):
    read = compare.read_documents(docs)
    assert sorted(read.texts) == ["faq.md", "guide/install.md", "notes.txt"]
    assert read.texts["faq.md"] == FAQ  # the BOM and the CRLFs kept: offsets are the file's
    assert read.texts["notes.txt"] == OLD_MAC
    reasons = dict(line.split(": ", 1) for line in read.problems)
    assert set(reasons) == {"latin.md", "moved.md", ".hidden", "image.png"}
    assert "line 3 is not UTF-8; save the file as UTF-8" in reasons["latin.md"]
    assert reasons["moved.md"] == ("left out, it cannot be read (No such file or directory); "
                                   "check that it is a readable file")
    assert reasons[".hidden"].startswith("left out, a hidden folder")
    assert reasons["image.png"] == "left out, not a .md, .markdown, .mdx or .txt file"


def test_symlinked_folders_are_followed_and_loops_named(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "api.md").write_text("# API\n\nThe endpoint is /v2/items.\n", encoding="utf-8")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "index.md").write_text("# Home\n", encoding="utf-8")
    (docs / "reference").symlink_to(shared, target_is_directory=True)
    (shared / "back").symlink_to(docs, target_is_directory=True)  # docs/reference/back -> docs: a loop
    read = compare.read_documents(docs)
    assert sorted(read.texts) == ["index.md", "reference/api.md"]
    [loop] = read.problems
    assert loop.startswith("reference/back: left out, a link back to ") and "(a loop)" in loop and "\n" not in loop
    path = tmp_path / "questions.jsonl"
    path.write_text('{"question": "q", "answer": "The endpoint is /v2/items."}\n', encoding="utf-8")
    assert [question.doc for question in compare.read_questions(path, read.texts).usable] == ["reference/api.md"]


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
    printed = capsys.readouterr().err  # every problem on one stream, the table's kept clean
    assert "bad.jsonl line 1: the answer is found nowhere" in printed and "bad.jsonl line 2: not JSON" in printed


@pytest.fixture
def no_peers(monkeypatch):
    """The course's own methods only, whether or not the peers' libraries are installed here."""
    monkeypatch.setattr(compare, "peer_methods", lambda title, problems: [])


def test_the_whole_run_through_the_console_command(docs, questions, tmp_path, capsys, no_peers):
    out = tmp_path / "out"
    assert cli.main(["compare", str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"),
                     "--out", str(out), "--sizes", "32", "--overlaps", "0,1/8", "--embedder", "hash"]) == 0
    printed = capsys.readouterr()
    assert "latin.md: left out" in printed.err and "image.png: left out" in printed.err
    assert "4 of 8 questions usable" in printed.out
    for method in ("token windows (rag4)", "recursive (rag5)", "markdown (rag6)", "header + table rows (rag7)",
                   "semantic (rag9)", "small to big (rag10)", "hybrid search (rag11)"):
        assert method in printed.out
    assert "-- retrievers" in printed.out and "-- chunkers" in printed.out
    assert "Only 4 questions: too few to tell methods apart" in printed.out
    with open(out / "compare.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert len(rows) == 5 * 2 + 1 + 2  # 5 chunkers at 2 overlaps, rag9 without overlap, 2 retrievers
    assert [row["kind"] for row in rows[:2]] == ["retriever"] * 2
    assert {row["overlap"] for row in rows[2:]} == {"0", "4"}
    chunkers = [float(row["recall"]) for row in rows if row["kind"] == "chunker"]
    assert chunkers == sorted(chunkers, reverse=True)
    assert (out / "compare.md").read_text(encoding="utf-8").startswith("| method |")
    assert (out / "recall-vs-size.png").read_bytes().startswith(b"\x89PNG")
    with open(out / "per-question.csv", newline="", encoding="utf-8") as file:
        table = list(csv.reader(file))
    assert table[0][:4] == ["questions line", "question", "document", "document line"]
    assert len(table[0]) == 4 + len(rows) and "recursive (rag5) 32/4" in table[0]
    assert [row[:4] for row in table[1:]] == [["1", "Which Python?", "guide/install.md", "7"],
                                              ["2", "Which port?", "faq.md", "3"],
                                              ["3", "When do backups run?", "notes.txt", "3"],
                                              ["4", "How to upgrade?", "guide/install.md", "11"]]
    assert all(float(cell) in (0.0, 1.0) for row in table[1:] for cell in row[4:])
    assert "Missed by every method: " in printed.out and "Found by one method only: " in printed.out
    assert (out / "left-out.txt").read_text(encoding="utf-8").count("left out") == 4


def test_the_summary_names_questions_missed_by_all_and_found_by_one():
    asked = [compare.Question(line, f"question {line}?", "a.md", 0, 1) for line in (1, 2, 3)]
    scored = [compare.Scored("rag5", 128, 16, np.array([1.0, 0.0, 0.0]), np.zeros(3), 9),
              compare.Scored("rag5", 256, 32, np.array([0.0, 0.0, 1.0]), np.zeros(3), 9),  # rag5 finds 1 and 3
              compare.Scored("rag11", None, None, np.array([1.0, 0.0, 0.0]), np.zeros(3), 9)]
    missed, lone = compare.missed_and_lone(asked, scored)
    assert missed == [asked[1]] and lone == [(asked[2], "rag5")]
    lines = compare.question_summary(asked, scored, {"a.md": "x"})
    assert lines[0].startswith("Missed by every method: 1 of 3 questions")
    assert lines[1] == '  line 2 "question 2?" (answer in a.md line 1)'
    assert lines[3] == '  line 3 "question 3?" (answer in a.md line 1): rag5 at 256/32 only'  # the setting too
    scored[0] = scored[0]._replace(recall=np.array([1.0, 0.0, 1.0]))
    assert compare.question_summary(asked, scored, {"a.md": "x"})[3].endswith("(answer in a.md line 1): rag5")


def test_a_difference_near_the_meaningful_gap_prints_the_digits_that_place_it():
    """The recommendation names the settings "within 0.05" of the best: a row at -0.0545 must not print
    as -0.05, nor one at -0.0495 as -0.050."""
    assert compare._digits(-0.0545, -0.16, 0.04) == 3 and compare._digits(-0.0495, -0.1, 0.01) == 4
    assert compare._digits(-0.05, -0.1, 0.02) == 2 and compare._digits(-0.03, -0.1, 0.05) == 2


def test_a_second_run_embeds_only_new_chunks(docs, questions, tmp_path, capsys, no_peers):
    arguments = [str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"), "--out",
                 str(tmp_path / "out"), "--embedder", "hash", "--methods", "rag5,rag6"]

    def embedded(sizes):
        compare.main(arguments + ["--sizes", sizes])
        line = [line for line in capsys.readouterr().out.splitlines() if line.startswith("embeddings:")][0]
        return [int(word.replace(",", "")) for word in line.split() if word.replace(",", "").isdigit()]

    first, reused = embedded("32")  # reused: texts met twice in one run (rag5 and rag6 cut some alike)
    assert first > 0
    assert embedded("32") == [0, first + reused]  # the same settings: nothing new to embed
    new, again = embedded("32,48")  # another size: its chunks only
    assert again >= first + reused and 0 < new


def test_the_cache_gives_the_embedders_vectors(tmp_path):
    cache = compare.EmbeddingCache(tmp_path, "hash")
    texts = ["Backups run nightly.", "The port is 8080.", "Backups run nightly."]
    assert np.array_equal(cache.vectors(texts, "test"), embed(texts, "hash"))
    assert cache.embedded == 2
    again = compare.EmbeddingCache(tmp_path, "hash")
    assert np.array_equal(again.vectors(texts + ["A new text."], "test")[:3], embed(texts, "hash"))
    assert (again.embedded, again.reused) == (1, 2)
    assert compare.EmbeddingCache(tmp_path, "wordllama").key("x") != cache.key("x")  # models never mix


def scored(name, recall, size=256):
    recall = np.asarray(recall, dtype=float)
    return compare.Scored(name, size, None if size is None else 32, recall, np.full(len(recall), 900.0), 10)


def test_chunkers_are_told_apart_from_each_other_not_only_from_the_best_retriever():
    rng = np.random.default_rng(3)
    strong, weak = (rng.random(120) < 0.75).astype(float), (rng.random(120) < 0.35).astype(float)
    table = compare.table_of([scored("rag7", strong), scored("rag5", weak), scored("rag11", np.ones(120), None)], RAG8)
    assert [row.method for row in table.retrievers] == ["rag11"]
    assert [row.method for row in table.chunkers] == ["rag7", "rag5"]  # rag5 against rag7, the best chunker
    assert table.chunkers[1].difference.high < 0 and table.clear_of_every_chunker
    advice = compare.recommendation(table, 1000)
    assert advice.startswith("Retrieve with rag11: it finds more answers within 1,000 tokens than every chunker, "
                             "each interval clear of 0")
    assert "Where a pipeline takes plain chunks: use rag7 at 256 tokens, overlap 32: recall" in advice
    assert "ahead of every other chunker (the closest, rag5 at 256 tokens, overlap 32, by +0." in advice


def test_the_recommendation_says_how_many_questions_would_tell_two_apart():
    rng = np.random.default_rng(1)
    a, b = rng.integers(0, 2, 40), rng.integers(0, 2, 40)
    table = compare.table_of([scored("first", a), scored("second", b)], RAG8)
    assert table.chunkers[0].difference.estimate == 0 and not table.chunkers[1].difference.shown
    advice = compare.recommendation(table, 1000)
    assert " leads (recall " in advice and "but is not shown better than 1 other" in advice
    assert ("40 questions do not tell first at 256 tokens, overlap 32 from second at 256 tokens, overlap 32: "
            "at the spread seen, about ") in advice
    needed = int(advice.split("about ")[-1].split()[0].replace(",", ""))
    assert needed > 40  # more than were asked: the interval holds 0
    alone = compare.recommendation(compare.table_of([scored("strong", [1] * 30), scored("weak", [0] * 30)], RAG8), 1000)
    assert alone.startswith("Use strong at 256 tokens, overlap 32: recall 1.00 [1.00, 1.00] within 1,000 tokens, "
                            "ahead of every other chunker (the closest, weak at 256 tokens, overlap 32, by +1.00")
    few = compare.recommendation(compare.table_of([scored("x", [1, 0]), scored("y", [0, 0])], RAG8), 1000)
    assert few.startswith("Only 2 questions: too few to tell methods apart; write 30 or more.")


def test_intervals_print_the_digits_their_verdict_needs():
    assert compare._interval(Interval(0.07, -0.0004, 0.14)) == "+0.0700 [-0.0004, +0.1400]"  # not [-0.00, ...]
    assert compare._interval(Interval(0.07, 0.004, 0.14)) == "+0.070 [+0.004, +0.140]"
    assert compare._interval(Interval(0.07, 0.02, 0.14)) == "+0.07 [+0.02, +0.14]"
    assert compare._interval(Interval(0.0, 0.0, 0.0)) == "+0.00 [+0.00, +0.00]"


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
                      "--methods", "rag5,rag10", "--sizes", "32"])
    assert "every method failed" in str(stopped.value.code)
    printed = capsys.readouterr().err
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


def one_line_failure(arguments, tmp_path, environment=None):
    """compare run as a learner runs it; its stderr, which must be one line and no traceback."""
    import os

    env = {key: value for key, value in os.environ.items() if not key.startswith(("OPENAI_", "ACADEMY_"))}
    result = subprocess.run([sys.executable, "-m", "labkit.compare", *arguments, "--cache", str(tmp_path / "cache"),
                             "--out", str(tmp_path / "out")], capture_output=True, text=True, cwd=ROOT, timeout=60,
                            env=env | (environment or {}))
    assert result.returncode != 0 and result.stdout == "", result.stdout
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr, result.stderr
    return result.stderr.strip()


@pytest.mark.parametrize("arguments, said", [
    (["--embedder", "bert"], "compare: unknown embedder 'bert'; use one of wordllama, hash, openai, minilm "
                             "(--embedder or ACADEMY_EMBEDDER)"),
    (["--sizes", "8"], "compare: --sizes must be 16 tokens or more"),
    (["--sizes", "128,big"], "compare: --sizes '128,big': give whole numbers of tokens"),
    (["--overlaps", "a lot"], "compare: --overlaps 'a lot': give 0, a fraction of the size"),
    (["--overlaps", "64", "--sizes", "64,128"], "compare: an overlap of 64 is 64 tokens at size 64; an overlap must "
                                                "be smaller than every size"),
    (["--budget", "0"], "compare: --budget 0: give 1 token or more"),
])
def test_bad_arguments_stop_in_one_line_before_any_document_is_read(arguments, said, tmp_path):
    # DOCS does not exist: an argument checked after reading it would say so instead
    with pytest.raises(SystemExit) as stopped:
        compare.main([str(tmp_path / "never-read"), *arguments])
    assert str(stopped.value.code).startswith(said) and "\n" not in str(stopped.value.code)


def test_a_cache_folder_that_cannot_be_written_stops_in_one_line_before_any_document_is_read(docs, questions,
                                                                                             tmp_path, monkeypatch):
    monkeypatch.setattr(compare, "read_documents", lambda folder: pytest.fail("a document was read"))
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    with pytest.raises(SystemExit) as stopped:
        compare.main([str(docs), "--questions", str(questions), "--cache", str(tmp_path / "a-file" / "cache")])
    said = str(stopped.value.code)
    assert said.startswith("compare: the embedding cache's folder ") and "cannot be written; give one" in said
    assert "\n" not in said


def test_a_bad_argument_ends_in_one_line_on_the_terminal(tmp_path):
    said = one_line_failure([str(tmp_path / "never-read"), "--embedder", "bert"], tmp_path)
    assert said.startswith("compare: unknown embedder 'bert'")


def test_an_embedder_it_cannot_use_stops_in_one_line_before_any_document_is_read(tmp_path, monkeypatch):
    import importlib.util

    if importlib.util.find_spec("openai") is not None:
        said = one_line_failure([str(tmp_path / "never-read"), "--embedder", "openai"], tmp_path)
        assert said.startswith("compare: OPENAI_API_KEY is not set")
    said = one_line_failure([str(tmp_path / "never-read")], tmp_path, {"ACADEMY_EMBEDDER": "bert"})
    assert said.startswith("compare: unknown embedder 'bert'")
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *rest: None if name in (
        "openai", "onnxruntime") else real(name, *rest))
    monkeypatch.setattr(compare, "read_documents", lambda folder: pytest.fail("a document was read"))
    for embedder, said in (("openai", "compare: the openai embedder needs the openai package: pip install openai"),
                           ("minilm", "compare: the minilm embedder needs onnxruntime: pip install -r requirements")):
        with pytest.raises(SystemExit) as stopped:
            compare.main([str(tmp_path), "--embedder", embedder])
        assert str(stopped.value.code).startswith(said) and "\n" not in str(stopped.value.code)


def test_help_lists_every_embedder(capsys):
    with pytest.raises(SystemExit):
        cli.main(["compare", "--help"])
    assert "wordllama, hash, openai, minilm" in " ".join(capsys.readouterr().out.split())


def test_missing_peers_are_named_in_one_line(monkeypatch):
    monkeypatch.setattr(compare, "PEER_PACKAGES", {"no_such_splitter_library": "no-such-splitter"})
    problems = []
    assert compare.peer_methods("Docs", problems) == []
    assert problems == ["peers not installed, left out: no-such-splitter (pip install no-such-splitter to compare "
                        "with them)"]


def test_the_peers_file_is_in_the_wheel():
    spec = (ROOT / "setup.py").read_text(encoding="utf-8")
    assert '"benchmarks/chunkers.py"' in spec  # copied into labkit/course/, where PEERS_FILE finds it installed
    assert compare.PEERS_FILE == compare.ROOT / "benchmarks" / "chunkers.py"


@pytest.mark.parametrize("kind", ["older compare layout", "openai layout before versions", "damaged", "future"])
def test_a_cache_it_cannot_read_is_set_aside_in_one_line_and_the_run_goes_on(kind, tmp_path, capsys):
    import sqlite3

    path = tmp_path / "embeddings.sqlite"
    if kind == "damaged":
        path.write_bytes(b"this is not an sqlite file" * 100)
    else:
        database = sqlite3.connect(path)
        if kind == "older compare layout":  # what compare kept before: the run that failed with OperationalError
            database.execute("CREATE TABLE vectors (key TEXT PRIMARY KEY, vector BLOB)")
            database.execute("INSERT INTO vectors VALUES ('k', x'00')")
        else:
            from labkit import openai_embedder
            database.execute(openai_embedder.SCHEMA)
            database.execute("INSERT INTO vectors VALUES ('k', 'm', 1, x'00000000', 'c')")
            if kind == "future":
                database.execute("PRAGMA user_version = 99")
        database.commit()
        database.close()
    cache = compare.EmbeddingCache(tmp_path, "hash")
    texts = ["Backups run nightly.", "The port is 8080."]
    assert np.array_equal(cache.vectors(texts), embed(texts, "hash"))
    said = capsys.readouterr().err.strip()
    aside = [name.name for name in tmp_path.iterdir() if ".unreadable-" in name.name]
    if kind == "openai layout before versions":  # the same layout: kept, its vectors not lost
        assert said == "" and aside == []
        assert sqlite3.connect(path).execute("SELECT count(*) FROM vectors").fetchone()[0] == 3
        return
    assert said.count("\n") == 0 and said.startswith(f"the embedding cache {path} cannot be read (")
    assert said.endswith("a new one is started") and len(aside) == 1 and aside[0] in said
    assert compare.EmbeddingCache(tmp_path, "hash").vectors(texts).shape == (2, 1024)  # and kept from then on
    assert capsys.readouterr().err == ""


def test_the_progress_bar_counts_characters_and_says_the_time_left(monkeypatch):
    import io

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    now = [0.0]
    monkeypatch.setattr(compare.time, "perf_counter", lambda: now[0])
    stream = Terminal()
    bar = compare.Progress("chunking and embedding", 4_000_000, "characters", stream)
    now[0] = 10.0
    bar.advance(1_000_000)  # a quarter in 10 s: 30 s left
    assert "1.00 M/4.00 M characters, 30 s left" in stream.getvalue()
    now[0] = 20.0
    bar.close()
    assert stream.getvalue().endswith("4.00 M/4.00 M characters in 20.0 s\n")


def test_a_paid_embedder_says_what_the_run_may_cost_before_it_starts(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("ACADEMY_OPENAI_MODEL", raising=False)
    monkeypatch.delenv("ACADEMY_OPENAI_PRICE", raising=False)
    settings = compare.Settings(tmp_path, None, tmp_path, 1000, (256,), (0,), "t", "openai", tmp_path, tmp_path, None)
    method = compare.Method("m", chunk=lambda text, size, overlap: [])
    compare._announce(settings, {"a.md": "x" * 4_000_000}, [(method, 256, 0)])
    printed = capsys.readouterr().out
    assert "1 chunkings of 4.00 M characters" in printed
    assert "openai: about 1.0 M tokens to embed, at most about $0.02 at text-embedding-3-small's price" in printed


def test_the_contextual_default_says_up_front_when_it_would_take_long_and_names_the_faster_choice(tmp_path,
                                                                                                  monkeypatch):
    """One estimate, from each method timed on a sample (the embedder's cost is in the timing); a long one under
    minilm names the static model."""
    released = []
    chunker = compare.Method("m", chunk=lambda text, size, overlap: [])
    retriever = compare.Method("r", search=lambda pages, questions, budget: [], units=lambda pages: 1,
                               release=lambda: released.append(True))
    grid = [(chunker, size, size // 8) for size in (128, 256, 512)]
    cache = compare.EmbeddingCache(tmp_path, "hash")
    monkeypatch.setattr(compare, "_rate_on", lambda method, texts, size, overlap, cache: 2e-5)  # CPU s a character
    monkeypatch.setattr(compare, "_index_seconds", lambda method, texts: 1.6)
    texts = {"a.md": "x\n" * 2_500_000}
    line = compare.estimate_line(grid, [retriever], texts, cache, "minilm", sample=40_000)
    assert line.startswith("about 8 min of CPU (the chunkings 5 min, the retrievers 3 min, from each method timed on "
                           "40,016 characters of these documents)"), line
    assert "--embedder wordllama, a static model, takes about a hundredth of that time" in line
    assert released == [True]  # the retriever's index of the sample is let go before the run
    assert "wordllama" not in compare.estimate_line(grid, [retriever], texts, cache, "wordllama", sample=40_000)
    short = compare.estimate_line(grid, [], {"a.md": "x\n" * 10_000}, cache, "minilm", sample=40_000)
    assert short.startswith("about 1 s of CPU (from each method timed on 20,000 characters") and "\n" not in short
    assert compare._duration(45) == "45 s" and compare._duration(600) == "10 min"


SECTION = "# Part {n}\n\nBackups of part {n} run at {n} o'clock.\n\n```bash\n# not a heading {n}\necho {n}\n```\n\n"


def test_a_big_document_is_cut_before_top_level_headings_only():
    text = "---\ntitle: Big\n---\n\n" + "".join(SECTION.format(n=n) for n in range(40))
    cut = list(compare.parts(text, 300))
    assert len(cut) > 10 and "".join(part for _, part in cut) == text
    for offset, part in cut:
        assert text[offset:offset + len(part)] == part and len(part) <= 300
        assert offset == 0 or part.startswith("# Part ")  # never inside a fence, at "# not a heading"
    assert list(compare.parts(text, len(text))) == [(0, text)]
    rag6 = compare.load_lab("rag6", compare.SOLUTIONS)
    method = compare.Method("markdown (rag6)", chunk=rag6.robust_markdown_chunks)
    whole = [(chunk.start, chunk.end) for chunk in rag6.robust_markdown_chunks(text, 64, 8)]
    compare.PART_CHARACTERS, before = 300, compare.PART_CHARACTERS
    try:
        pieces = [(offset + chunk.start, offset + chunk.end, chunk.text)
                  for offset, chunk in compare.chunks_of(method, "big.md", text, 64, 8)]
    finally:
        compare.PART_CHARACTERS = before
    assert all(text[start:end] == piece for start, end, piece in pieces)
    assert [(start, end) for start, end, _ in pieces] == whole  # rag6 starts again at a top-level heading anyway


def test_a_retriever_is_handed_each_document_or_each_part_of_a_big_one_read_when_asked(tmp_path, monkeypatch):
    monkeypatch.setattr(compare, "PART_CHARACTERS", 400)
    big = "".join(SECTION.format(n=n) for n in range(40))
    for name, text in {"big.md": big, "faq.md": FAQ}.items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    texts = compare.read_documents(tmp_path).texts
    pages = compare.Pages(texts)
    expected = {name if offset == 0 else f"{name}#{number}": part for name in ("big.md", "faq.md")
                for number, (offset, part) in enumerate(compare.parts(texts[name]))}
    assert len(expected) > 3 and dict(pages) == expected
    for page, (name, start, end) in pages.place.items():
        assert pages[page] == texts[name][start:end] and page in pages
    assert "big.md#999" not in pages


def test_a_big_documents_parts_are_placed_back_for_the_retrievers(tmp_path, capsys, monkeypatch, no_peers):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "big.md").write_text("".join(SECTION.format(n=n) for n in range(40)), encoding="utf-8")
    questions = tmp_path / "questions.jsonl"
    questions.write_text('{"question": "When do backups of part 31 run?", "answer": "Backups of part 31 run at 31"}\n'
                         '{"question": "What does part 7 echo?", "answer": "echo 7"}\n', encoding="utf-8")
    monkeypatch.setattr(compare, "PART_CHARACTERS", 400)
    out = tmp_path / "out"
    assert compare.main([str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"), "--out",
                         str(out), "--embedder", "hash", "--methods", "rag6,rag11", "--sizes", "32"]) == 0
    with open(out / "per-question.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.DictReader(file))
    assert [row["document"] for row in rows] == ["big.md", "big.md"]
    assert [row["hybrid search (rag11)"] for row in rows] == ["1", "1"]  # its spans placed back in big.md


def test_a_big_corpus_is_told_what_a_learners_retrievers_will_hold(tmp_path, capsys):
    """A learner's rag10 and rag11 search the lesson's index, the whole corpus in memory: the run says what
    that costs. The reference labs' (labkit.reference.retrievers) keep theirs small: nothing to say."""
    settings = compare.Settings(tmp_path, None, tmp_path, 1000, (256,), (0,), "t", "hash", tmp_path, tmp_path, None)
    texts = {"big.md": "x" * 30_000_000}
    compare._announce(settings, texts, [], ["small to big (rag10)", "hybrid search (rag11)"])
    printed = capsys.readouterr().out
    assert (f"small to big (rag10), hybrid search (rag11) of {tmp_path} index the whole corpus at once: "
            f"about 4.2 GB") in printed
    compare._announce(settings, {"a.md": "x" * 1000}, [], ["small to big (rag10)"])
    assert "index the whole corpus" not in capsys.readouterr().out
    compare._announce(settings._replace(labs=compare.SOLUTIONS), texts, [], ["small to big (rag10)"])
    assert "index the whole corpus" not in capsys.readouterr().out


def test_chunks_are_ranked_a_block_of_vectors_at_a_time_as_top_k_each_ranks_them(tmp_path, monkeypatch):
    from academy_llm import top_k_each

    rng = np.random.default_rng(7)
    matrix = rng.integers(-2, 3, size=(900, 8)).astype(np.float32)  # small integers: many ties
    asked = rng.integers(-2, 3, size=(5, 8)).astype(np.float32)
    monkeypatch.setattr(compare.Vectors, "ROWS", 64)
    vectors = compare.Vectors(tmp_path)
    for first in range(0, len(matrix), 100):
        vectors.append(matrix[first:first + 100])
    for depth in (1, 63, 64, 65, 300, 900):
        assert compare.best_rows(asked, vectors, depth) == [[row for row, _ in best]
                                                            for best in top_k_each(asked, matrix, depth)]
    vectors.close()
    assert list(tmp_path.iterdir()) == []  # its file is gone


def test_the_time_is_estimated_before_the_chunkings_start(docs, questions, tmp_path, capsys, no_peers):
    assert compare.main([str(docs), "--questions", str(questions), "--cache", str(tmp_path / "cache"), "--out",
                         str(tmp_path / "out"), "--embedder", "hash", "--methods", "rag5,rag6,rag11",
                         "--sizes", "32"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"of CPU \(the chunkings [0-9]+ s, the retrievers [0-9]+ s, from each method timed on ", printed)
    assert printed.index("of CPU (the chunkings") < printed.index("questions, hash; chunks of")
    assert "minilm" not in printed and "hybrid search (rag11)" in printed.split("questions, hash; chunks of")[1]
    assert not [name for name in (tmp_path / "cache").iterdir() if name.name.startswith("compare-vectors")]


def test_the_sample_timed_comes_from_the_whole_length_of_one_big_file():
    text = "".join(f"line {n}\n" for n in range(100_000))
    sample = compare._sample({"big.md": text}, 4000)
    assert len(sample) == 8 and sum(map(len, sample.values())) < 5000
    for name, piece in sample.items():
        start = int(name.rsplit(" ", 1)[1])
        assert text[start:start + len(piece)] == piece and (start == 0 or text[start - 1] == "\n")
    assert max(int(name.rsplit(" ", 1)[1]) for name in sample) > len(text) * 3 // 4


def test_wordllama_gives_the_same_vectors_whatever_lines_it_remembers(monkeypatch):
    from labkit import embedders

    texts = [INSTALL, FAQ, OLD_MAC, "# Install\n\nRun the installer.", "   ", ""]
    embedders.forget_lines()
    first = embed(texts, "wordllama")
    monkeypatch.setattr(embedders, "MAX_LINES", 3)  # forgets as it goes
    assert np.array_equal(embed(texts, "wordllama"), first)
    embedders.forget_lines()
    assert np.array_equal(embed(texts[::-1], "wordllama"), first[::-1])


def test_a_big_document_is_not_cut_inside_a_longer_fence_nor_kept_whole_after_one():
    fenced = "````markdown\n```\n\n# not a heading\n````\n\n"  # "```" inside "````" is code, not its end
    text = "".join((fenced if n == 3 else "") + SECTION.format(n=n) for n in range(40))
    cut = list(compare.parts(text, 300))
    assert len(cut) > 10 and "".join(part for _, part in cut) == text
    assert all(offset == 0 or part.startswith("# Part ") for offset, part in cut)
    assert max(len(part) for _, part in cut) <= 300  # the fence closed at "````": the headings after it count


BM25_TEXTS = [
    "Set storage.max_conns to 40; storage.max_conns caps the pool.", "", "   ", "ORB-4024 ORB-4024 orb 4024",
    "Backups run nightly.\nBackups keep seven days, and backups are small.", "--no-pager __init__ a_b-c.d", "É é ÉTÉ",
    "The pool: max conns, storage, pool, pool.", "one", "one two one two three",
]


@pytest.mark.parametrize("texts", [BM25_TEXTS, BM25_TEXTS[::-1], [], [""], ["", "word"], BM25_TEXTS * 3])
def test_compares_lean_bm25_is_the_lessons_bm25_index_exactly(texts):
    """packed_bm25 (what compare runs for the reference rag11) gives the Words of the lesson's bm25_index
    packed: the same terms in the same order, rows and weights equal to the last bit."""
    from labkit.lessons import rag11 as lesson11
    from labkit.reference.bm25 import packed_bm25

    lab = load_lab("rag11", ROOT / "solutions")
    lean = packed_bm25(iter(texts), lab.search_terms, lab.bm25_weight, lab.K1, lab.B)
    given = lesson11.pack(lab.bm25_index([lab.search_terms(text) for text in texts]), len(texts))
    assert list(lean.terms.items()) == list(given.terms.items()) and lean.n_documents == given.n_documents
    assert lean.rows.dtype == given.rows.dtype and lean.weights.dtype == given.weights.dtype
    assert lean.rows.tolist() == given.rows.tolist() and lean.weights.tolist() == given.weights.tolist()
    asked = ("storage.max_conns pool", "backups", "ORB-4024", "nothing here", "one two")
    only = {term for question in asked for term in lab.search_terms(question)}
    named = packed_bm25(iter(texts), lab.search_terms, lab.bm25_weight, lab.K1, lab.B, only)
    assert set(named.terms) == only & set(given.terms)
    for question in asked:
        terms = lab.search_terms(question)
        assert lesson11.word_scores(lean, terms).tolist() == lesson11.word_scores(given, terms).tolist()
        assert lesson11.word_scores(named, terms).tolist() == lesson11.word_scores(given, terms).tolist()


@pytest.mark.parametrize("embedder", ["hash", "wordllama"])  # wordllama: parents pooled from their units
@pytest.mark.parametrize("lab_name", ["rag10", "rag11"])
def test_compares_reference_retrievers_find_what_the_labs_own_search_finds(tmp_path, monkeypatch, lab_name, embedder):
    """compare's rag10 and rag11 (an index built a page at a time, its vectors read from disk a block at a
    time, rag11's BM25 by packed_bm25) hand over the spans the reference lab's own search does, question
    by question, and rank as many units."""
    from labkit.reference import retrievers

    monkeypatch.setattr(compare.Vectors, "ROWS", 7)  # many blocks, each question scored across them
    monkeypatch.setattr(retrievers, "QUESTION_BLOCK", 2)  # and the questions in blocks too
    pages = {"guide/install.md": INSTALL, "faq.md": FAQ, "notes.txt": OLD_MAC, "empty.md": "",
             "heading.md": "# Only a heading\n", "big.md": "".join(SECTION.format(n=n) for n in range(12))}
    asked = ["Which Python?", "Which port?", "When do backups of part 7 run?", "ORBIT_PORT", "pip install --upgrade"]
    lab = load_lab(lab_name, ROOT / "solutions")
    method = compare.reference_retriever(lab_name, lab, "docs", embedder, tmp_path)
    index = lab.build_index(pages, "docs", embedder) if lab_name == "rag10" else lab.build_hybrid(pages, "docs",
                                                                                                    embedder)
    try:
        assert method.search(pages, asked, 300) == lab.search(pages, asked, 300, title="docs", embedder=embedder)
        assert method.search(pages, asked[:2], 1000) == lab.search(pages, asked[:2], 1000, title="docs",
                                                                   embedder=embedder)
        assert method.units(pages) == len(index.units)
    finally:
        method.release()


def test_a_student_handout_leaves_compares_reference_code_out():
    from make_handout import REFERENCE_FOLDERS

    assert "labkit/reference" in REFERENCE_FOLDERS
    assert "labkit.reference" in tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
