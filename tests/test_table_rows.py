"""rag7's option of a chunk per table row (given code, used by rag8 and the benchmark)."""

import pytest

from academy_llm import check_lossless, corpus_pages, count_tokens
from labkit import load_lab

DOC = (
    "# Limits\n\n"
    "Each limit can be raised in the config.\n\n"
    "## Defaults\n\n"
    "| Key | Default |\n"
    "|-----|---------|\n"
    "| `max_jobs` | `64` |\n"
    "| `max_idle_conns` | `5` |\n"
    "| `timeout` | `30s` |\n\n"
)


@pytest.fixture(scope="module")
def rag7(lab_dir):
    return load_lab("rag7", lab_dir)


def test_a_table_becomes_a_chunk_per_row_with_its_column_names(rag7):
    chunks = rag7.header_chunks(DOC, "Docs", 200)
    rows = rag7.with_table_rows(DOC, chunks, 200)
    check_lossless(DOC, rows)
    assert len(rows) == len(chunks) + 2
    first, *others = rows[-3:]
    assert "| Key | Default |" in first.text and first.text.rstrip().endswith("| `max_jobs` | `64` |")
    assert first.header == "Docs › Limits › Defaults"  # its text holds the column names already
    assert [c.text.strip() for c in others] == ["| `max_idle_conns` | `5` |", "| `timeout` | `30s` |"]
    assert all(c.header == "Docs › Limits › Defaults\n| Key | Default |" and c.kind == "table" for c in others)


def test_a_chunk_with_two_tables_stays_whole(rag7):
    doc = DOC + "| A | B |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n"
    chunks = rag7.header_chunks(doc, "Docs", 200)
    assert rag7.with_table_rows(doc, chunks, 200) == chunks


@pytest.mark.parametrize("max_tokens, overlap", [(128, 16), (256, 32)])
def test_every_page_stays_lossless_and_within_budget(rag7, max_tokens, overlap):
    for page in corpus_pages().values():
        chunks = rag7.with_table_rows(page, rag7.header_chunks(page, "Orbit docs", max_tokens, overlap), max_tokens)
        check_lossless(page, chunks)
        assert all(c.oversize or count_tokens(c.embedding_text) <= max_tokens for c in chunks)
        assert all(c.n_tokens == count_tokens(c.text) for c in chunks)


def test_a_table_shown_in_a_code_block_is_not_cut(rag7):
    doc = "# Tables\n\nWrite one like this:\n\n```markdown\n" + DOC.split("## Defaults\n\n")[1] + "```\n"
    chunks = rag7.header_chunks(doc, "Docs", 200)
    assert rag7.with_table_rows(doc, chunks, 200) == chunks


@pytest.mark.parametrize("text, max_tokens, overlap", [
    ("a|b\n-|-\n1|2\n3|4\n\nMore words. \n", 32, 16),  # the overlap repeats the whole table
    (DOC + "Then more words follow the table, and more. " * 6, 48, 24),
])
def test_a_table_an_overlap_repeats_is_cut_into_rows_once(rag7, text, max_tokens, overlap):
    rows = rag7.with_table_rows(text, rag7.header_chunks(text, "T", max_tokens, overlap), max_tokens)
    check_lossless(text, rows)
    starts = [c.start for c in rows]
    assert starts == sorted(starts), f"chunks out of order: {[(c.start, c.end) for c in rows]}"
    row_spans = [(c.start, c.end) for c in rows if c.kind == "table" and "\n" in c.header]
    assert len({start for start, _ in row_spans}) == len(row_spans), f"a row cut twice: {row_spans}"
