"""chunking-labs chunk: one chunker's chunks of a learner's documents, as JSON lines a pipeline reads."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from academy_llm import read_page
from labkit import chunk, cli

ROOT = Path(__file__).resolve().parent.parent
GUIDE = "---\ntitle: Guide\n---\n\n# Install\r\n\r\nRun `pip install orbit`.\r\n\r\n## Upgrade\r\n\r\nRun it again.\r\n"


@pytest.fixture
def docs(tmp_path):
    folder = tmp_path / "docs"
    (folder / "guide").mkdir(parents=True)
    (folder / "guide" / "install.md").write_bytes(GUIDE.encode("utf-8"))
    (folder / "notes.txt").write_text("Backups run every night.\n" * 200, encoding="utf-8")
    return folder


@pytest.mark.parametrize("method, headed", [("header + table rows (rag7)", True), ("rag5", False)])
def test_every_chunk_is_an_exact_slice_of_its_document(docs, tmp_path, capsys, method, headed):
    out = tmp_path / "chunks.jsonl"
    assert cli.main(["chunk", str(docs), "--method", method, "--max-tokens", "64", "--overlap", "8",
                     "--out", str(out)]) == 0
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert {line["doc"] for line in lines} == {"guide/install.md", "notes.txt"}
    for line in lines:
        source = read_page(docs / line["doc"])
        assert source[line["start"]:line["end"]] == line["text"] and 0 < line["tokens"] <= 64
        assert isinstance(line["heading_path"], list) and ("header" in line) == headed
    assert ["Install", "Upgrade"] in [line["heading_path"] for line in lines] or not headed
    assert "chunks of 2 documents by " in capsys.readouterr().out


def test_the_readme_loader_reads_the_chunks(docs, tmp_path):
    out = tmp_path / "chunks.jsonl"
    chunk.main([str(docs), "--method", "markdown (rag6)", "--out", str(out)])
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    loader = readme.split("<!-- chunks loader -->\n```python\n", 1)[1].split("```", 1)[0]
    namespace = {"path": str(out)}
    exec(compile(loader.replace('"chunks.jsonl"', "path"), "README loader", "exec"), namespace)
    documents = namespace["documents"]
    assert documents and all(set(document) == {"page_content", "metadata"} for document in documents)
    assert documents[0]["metadata"]["source"] == "guide/install.md"
    assert len(namespace["embedded"]) == len(documents)


def test_a_block_kept_whole_over_the_budget_says_so(tmp_path):
    """rag6 keeps a big table whole: its line says `oversize`, so a pipeline with a hard limit can tell."""
    docs = tmp_path / "docs"
    docs.mkdir()
    table = "| key | value |\n| --- | --- |\n" + "".join(f"| k{n} | a value of row {n} |\n" for n in range(40))
    (docs / "table.md").write_text("# Settings\n\n" + table, encoding="utf-8")
    out = tmp_path / "chunks.jsonl"
    chunk.main([str(docs), "--method", "markdown (rag6)", "--max-tokens", "64", "--overlap", "0", "--out", str(out)])
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [line.get("oversize", False) for line in lines] == [line["tokens"] > 64 for line in lines]
    assert any(line.get("oversize") for line in lines)


@pytest.mark.parametrize("arguments, said", [
    (["--method", "rag7"], "chunk: --method 'rag7' names 2 (markdown + header (rag7); header + table rows (rag7))"),
    (["--method", "bert"], "chunk: --method 'bert' names none; give one of: token windows (rag4);"),
    (["--method", "rag5", "--overlap", "300"], "chunk: --overlap 300: give 0 or more tokens, fewer than"),
    (["--method", "rag5", "--max-tokens", "4"], "chunk: --max-tokens 4: give 16 tokens or more"),
    (["--method", "rag5", "--out", "no/such/folder/chunks.jsonl"], "chunk: --out no/such/folder/chunks.jsonl: "
                                                                   "its folder no/such/folder does not exist"),
])
def test_a_bad_argument_stops_in_one_line_and_writes_nothing(docs, tmp_path, monkeypatch, arguments, said):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as stopped:
        chunk.main([str(docs), *arguments])
    assert str(stopped.value.code).startswith(said) and "\n" not in str(stopped.value.code)
    assert list(tmp_path.glob("chunks.jsonl*")) == []


def test_a_chunker_that_fails_ends_in_one_line_and_leaves_no_file(docs, tmp_path):
    result = subprocess.run([sys.executable, "-m", "labkit.chunk", str(docs), "--method", "rag5", "--labs",
                             str(ROOT / "labs")], capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert result.returncode != 0 and result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("chunk: recursive (rag5) fails on ") and "TODO(rag5)" in result.stderr
    assert list(tmp_path.glob("chunks.jsonl*")) == []


def test_the_copys_readme_says_where_the_solutions_are():
    from academy_llm import COURSE_ROOT
    from labkit import start

    command = [line.strip() for line in start.README.splitlines() if "COURSE_ROOT" in line][0]
    printed = subprocess.run(command.replace("python", sys.executable, 1), shell=True, capture_output=True,
                             text=True, cwd=ROOT, timeout=60).stdout.strip()
    assert Path(printed) == COURSE_ROOT / "solutions" and Path(printed).is_dir()
    assert "chunking-labs chunk " in start.README
