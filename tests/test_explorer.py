"""The chunk explorer's numbers (labkit/explorer.py) and the HTML it ships (labkit/explorer_widget.py).

Every count is checked against a computation of its own: the chunks against the
chunker's, the histogram against a count by hand, the blocks cut against
labkit.markdown's reading of code and tables (not markdown-it-py's) and against
hand-made documents, the rank against a ranking done here with numpy. The browser
side is in tests/test_notebooks.py.
"""

import json
import math
import re
from pathlib import Path

import numpy as np
import pytest

from academy_llm import embed
from labkit import load_lab
from labkit.boundaries import regions_split
from labkit.explorer import (
    HISTOGRAM_BINS, Block, ChunkMark, Grid, blocks_cut, explore, explore_grid, histogram, markdown_blocks, read_page,
)
from labkit.explorer_widget import SCRIPT, static_html
from labkit.markdown import regions_by_kind

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def labs():
    return {lab: load_lab(lab, ROOT / "solutions") for lab in ("rag4", "rag5", "rag6")}


@pytest.fixture(scope="module")
def rag6_page(labs):
    rag6 = labs["rag6"]
    return read_page(rag6.PAGE.read_text(encoding="utf-8"), rag6.QUESTION, rag6.ANSWER)


def test_the_chunks_are_the_chunkers_on_the_pages_true_offsets(labs, rag6_page):
    made = labs["rag6"].markdown_chunks(rag6_page.text, 128, 16)
    explored = explore(rag6_page, "markdown", labs["rag6"].markdown_chunks, 128, 16)
    assert explored.message == ""
    assert explored.chunks == tuple(ChunkMark(c.start, c.end, c.n_tokens) for c in made)
    assert explored.count == len(made)
    assert all(rag6_page.text[c.start : c.end] == chunk.text for c, chunk in zip(explored.chunks, made))


def test_the_histogram_counts_every_chunk_in_its_eighth_of_the_budget(labs, rag6_page):
    explored = explore(rag6_page, "markdown", labs["rag6"].markdown_chunks, 64, 0)
    by_hand = [0] * HISTOGRAM_BINS
    for chunk in explored.chunks:
        if chunk.n_tokens <= 64:
            by_hand[max(0, math.ceil(chunk.n_tokens / 8) - 1)] += 1  # 64 / 8 = 8 tokens a bar
    assert explored.histogram.counts == tuple(by_hand)
    assert explored.histogram.over == sum(chunk.n_tokens > 64 for chunk in explored.chunks) > 0  # tables kept whole
    assert explored.histogram.edges == tuple(range(0, 65, 8))


def test_histogram_edges_of_a_budget_eight_does_not_divide():
    made = histogram([ChunkMark(0, 1, n) for n in (1, 12, 13, 99, 100, 101)], 100)
    assert made.edges == (0, 12, 25, 38, 50, 62, 75, 88, 100)
    assert made.counts == (2, 1, 0, 0, 0, 0, 0, 2) and made.over == 1


def test_the_blocks_cut_agree_with_the_courses_own_reading_of_code_and_tables(labs, rag6_page):
    text = rag6_page.text
    regions = regions_by_kind(text)
    found = {kind: sorted((b.start, b.end) for b in rag6_page.blocks if b.kind == kind) for kind in ("code", "table")}
    assert len(found["code"]) == len(regions["code"]) and len(found["table"]) == len(regions["table"])
    for max_tokens, overlap in ((64, 0), (128, 16), (256, 32)):
        for name, chunker in (("markdown", labs["rag6"].markdown_chunks), ("recursive", labs["rag5"].recursive_chunks)):
            explored = explore(rag6_page, name, chunker, max_tokens, overlap)
            for kind in ("code", "table"):
                assert explored.blocks_cut[kind] == regions_split(explored.chunks, regions[kind]), (name, kind)
            assert explored.blocks == {"code": 6, "table": 2, "list": 2}


def test_blocks_are_read_by_a_markdown_parser_lists_included():
    text = ("# Title\r\n\r\n- one\r\n- two\r\n  still two\r\n\r\n| a | b |\r\n|---|---|\r\n| 1 | 2 |\r\n\r\n"
            "```py\r\nx = 1\r\n```\r\n\r\n    indented\r\n\r\n> - quoted list, not top level\r\n")
    blocks = markdown_blocks(text)
    spans = {(block.kind, text[block.start : block.end]) for block in blocks}
    assert spans == {("list", "- one\r\n- two\r\n  still two"), ("table", "| a | b |\r\n|---|---|\r\n| 1 | 2 |"),
                     ("code", "```py\r\nx = 1\r\n```"), ("code", "    indented")}
    list_block = next(block for block in blocks if block.kind == "list")
    whole = [ChunkMark(0, len(text), 1)]
    halves = [ChunkMark(0, list_block.start + 8, 1), ChunkMark(list_block.start + 8, len(text), 1)]
    assert blocks_cut([list_block], whole) == {"code": 0, "table": 0, "list": 0}
    assert blocks_cut([list_block], halves) == {"code": 0, "table": 0, "list": 1}
    assert blocks_cut([Block("code", 5, 9)], [ChunkMark(0, 7, 1), ChunkMark(4, 9, 1)]) == {
        "code": 0, "table": 0, "list": 0}  # overlap holds it whole


def test_the_answer_rank_is_the_rank_of_the_best_chunk_holding_the_answer(labs, rag6_page):
    chunks = labs["rag5"].recursive_chunks(rag6_page.text, 128, 0)
    explored = explore(rag6_page, "recursive", labs["rag5"].recursive_chunks, 128, 0)
    vectors = embed([chunk.embedding_text for chunk in chunks])
    scores = vectors @ embed([rag6_page.question])[0]
    order = sorted(range(len(chunks)), key=lambda row: -scores[row])
    holding = [rank for rank, row in enumerate(order, 1)
               if chunks[row].start <= rag6_page.answer_start and rag6_page.answer_end <= chunks[row].end]
    assert explored.answer_rank == holding[0]
    assert order[holding[0] - 1] == explored.answer_chunk
    cut_short = explore(rag6_page, "tiny", labs["rag4"].token_windows, 16, 0)  # the answer's row is longer
    assert cut_short.answer_rank is None and cut_short.answer_chunk is None
    assert np.isfinite(scores).all()


def test_an_unfinished_todo_says_which_to_finish_and_an_error_is_one_line(rag6_page):
    def stub(text, max_tokens, overlap):
        raise NotImplementedError("TODO(rag5) pack(): Pack the pieces greedily ... More help: --hint 2")

    def broken(text, max_tokens, overlap):
        raise ValueError("oops\nsecond line")

    explored = explore(rag6_page, "recursive", stub, 128, 0)
    assert explored.message == "finish TODO(rag5) pack() first"
    assert explored.chunks == () and explored.answer_rank is None and sum(explored.histogram.counts) == 0
    assert explore(rag6_page, "mine", broken, 128, 0).message == "mine raised ValueError: oops"


def test_the_student_stub_of_rag4_gives_the_message(tmp_path):
    rag4 = load_lab("rag4", ROOT / "labs")
    page = read_page("Orbit runs jobs. It retries them.", "What retries?", "It retries them.")
    assert explore(page, "token windows", rag4.token_windows, 64, 0).message == (
        "finish TODO(rag4) token_windows() first")


def test_a_bad_page_or_answer_is_one_line():
    with pytest.raises(ValueError, match=r"^the explorer's answer 'absent' is not in its page; quote the page"):
        read_page("some text", "q", "absent")
    with pytest.raises(TypeError, match=r"^the explorer's page must be a str, got bytes$"):
        read_page(b"some text", "q", "some")


def test_the_static_page_holds_the_grid_and_the_script_and_nothing_closes_it_early(labs):
    text = "# A page\n\nIt quotes </script> and <b>tags</b>; the answer is here.\n\n" * 3
    page = read_page(text, "Where is the answer?", "the answer is here")
    grid = Grid(("markdown", "recursive"), (16, 64), (0, 8))
    chunkers = {"markdown": labs["rag6"].markdown_chunks, "recursive": labs["rag5"].recursive_chunks}
    fallback = static_html(page, grid, explore_grid(page, chunkers, grid))
    payload = re.search(r'<script type="application/json" class="explorer-data">(.*?)</script>', fallback, re.S)
    data = json.loads(payload.group(1))
    assert data["spec"]["page"]["text"] == text
    settings = [f"{name}|{m}|{o}" for name in grid.chunkers for m in (16, 64) for o in (0, 8)]
    assert sorted(data["views"]) == sorted(settings)
    assert data["views"][data["first"]]["chunker"] == "markdown"
    assert data["spec"]["controls"]["max_tokens"] == {"values": [16, 64]}
    assert SCRIPT.read_text(encoding="utf-8") in fallback and "mountStatic(" in fallback
    assert not re.search(r"(?:src|href)=\"https?:", fallback)


def test_the_widget_computes_a_setting_off_the_grid_and_falls_back_to_the_static_page(labs, rag6_page):
    pytest.importorskip("anywidget")
    from labkit.explorer_widget import explorer_widget

    chunkers = {"markdown": labs["rag6"].markdown_chunks}
    grid = Grid(("markdown",), (128,), (0,))
    explored = explore_grid(rag6_page, chunkers, grid)
    widget = explorer_widget(rag6_page, chunkers, grid, explored, "<div>fallback</div>")
    assert widget.view["max_tokens"] == 128
    widget.setting = {"chunker": "markdown", "max_tokens": 200, "overlap": 24}  # as the page sends it
    made = labs["rag6"].markdown_chunks(rag6_page.text, 200, 24)
    assert widget.view["chunks"] == [[c.start, c.end, c.n_tokens] for c in made]
    data, _ = widget._repr_mimebundle_()
    assert data["text/html"] == "<div>fallback</div>"
    assert "application/vnd.jupyter.widget-view+json" in data
    assert widget.spec["mode"] == "live" and "export default { render }" in widget._esm
