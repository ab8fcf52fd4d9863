"""Seeing chunks and plots: the chunk view in its three forms, and the size plot."""

import os
import pty
import subprocess
import sys

import numpy as np
import pytest

import labkit
import labkit.plots
import labkit.view
from academy_llm import Chunk, make_chunk
from labkit.view import chunks_as_html, chunks_as_text, use_colour

SOURCE = "chunk chunk chunk"
OVERLAPPING = [make_chunk(SOURCE, 0, 11), make_chunk(SOURCE, 6, 17)]  # they share the middle "chunk"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def body(view: str) -> str:
    """The view without its caption and key lines."""
    return view.split("\n", 2)[2]


def test_plain_view_places_every_mark_by_the_true_offsets():
    tokens = [chunk.n_tokens for chunk in OVERLAPPING]
    assert body(chunks_as_text(SOURCE, OVERLAPPING)) == (
        f"{{#1 [0, 11) {tokens[0]} tokens}}chunk {{#2 [6, 17) {tokens[1]} tokens}}«chunk» chunk{{/#2}}"
    )


def test_plain_view_shows_text_in_no_chunk_after_an_end_mark():
    source = "one two  three"
    chunks = [make_chunk(source, 0, 7), make_chunk(source, 9, 14)]
    assert body(chunks_as_text(source, chunks)) == "{#1 [0, 7) 2 tokens}one two{/#1}  {#2 [9, 14) 1 token}three{/#2}"


def test_a_view_cut_short_says_it_stops_and_not_that_no_chunk_follows():
    source = "one two three"
    chunks = [make_chunk(source, 0, 7), make_chunk(source, 3, 13)]  # chunk 2 holds " two three"
    assert body(chunks_as_text(source, chunks, limit=1)) == (
        "{#1 [0, 7) 2 tokens}one two{/#1 · the view stops; 1 more chunk not shown}"
    )
    assert body(chunks_as_text(source, chunks)).endswith("» three{/#2}"), "the last chunk ends"
    words = [make_chunk(source, 0, 3), make_chunk(source, 3, 7), make_chunk(source, 7, 13)]
    view = body(chunks_as_text(source, words, limit=1))
    assert view.endswith("{/#1 · the view stops; 2 more chunks not shown}")


def test_the_view_shows_the_source_and_warns_when_a_chunk_misreports_its_text():
    wrong = Chunk(text="b", start=0, end=1, n_tokens=1)  # claims "b" where the source has "a"
    view = chunks_as_text("a b a", [wrong])
    assert "{#1 [0, 1) 1 token · its text differs from the source at this span}a{/#1}" in view


def test_labels_carry_headers_heading_paths_and_flags():
    chunk = make_chunk("| a |\n|---|\n", 0, 12, section=("Install", "Linux"), kind="table", oversize=True)
    assert "· Install › Linux · table · oversize}" in chunks_as_text("| a |\n|---|\n", [chunk])
    headed = make_chunk("text", 0, 4, header="Docs › Install")
    assert "· header: Docs › Install ·" in chunks_as_text("text", [headed])


def test_the_caption_numbers_chunks_as_in_the_whole_list():
    source = "a b c d e f"
    chunks = [make_chunk(source, n, n + 1) for n in range(0, 11, 2)]
    view = chunks_as_text(source, chunks, first=2, limit=2)
    assert view.startswith("chunks 3-4 of 6, characters [4, 7) of 11\n")
    assert "{#3 [4, 5)" in view and "{#4 [6, 7)" in view and "{#5" not in view


def test_ansi_view_colours_chunks_alternately_and_overlap_apart():
    source = "first\nchunk chunk chunk"
    view = chunks_as_text(source, [make_chunk(source, 0, 17), make_chunk(source, 12, 23)], colour=True)
    odd, even, overlap = (labkit.view.ANSI_COLOURS[role] for role in ("odd", "even", "overlap"))
    assert f"\x1b[30;48;5;{odd}mfirst\x1b[0m\n" in view  # closed before the line break
    assert f"\x1b[30;4;48;5;{overlap}mchunk\x1b[0m" in view
    assert f"\x1b[30;48;5;{even}m chunk\x1b[0m" in view
    assert "«" not in view and "{/#" not in view


def test_html_view_escapes_text_and_keeps_true_offsets():
    source = "<b>bold</b> & more"
    chunks = [make_chunk(source, 0, 11), make_chunk(source, 8, 18)]
    html = chunks_as_html(source, chunks)
    assert "&lt;b&gt;bold" in html and "<b>" not in html
    assert html.count('class="chunk-label"') == 2
    assert 'data-chunks="1 2" data-start="8" data-end="11"' in html
    assert f"background:{labkit.view.CHUNK_COLOURS['overlap']}" in html


def test_colour_only_for_a_terminal_without_no_color(monkeypatch):
    class Terminal:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_colour(Terminal())
    assert not use_colour(open(os.devnull, "w"))
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_colour(Terminal())


VIEW_IN_A_SCRIPT = (
    "from academy_llm import make_chunk\nfrom labkit import view_chunks\n"
    "text = 'chunk chunk chunk'\n"
    "view_chunks(text, [make_chunk(text, 0, 11), make_chunk(text, 6, 17)])\n"
)


def run_in_a_terminal(env: dict) -> str:
    """What VIEW_IN_A_SCRIPT prints to a real (pseudo-)terminal."""
    leader, follower = pty.openpty()
    subprocess.run([sys.executable, "-c", VIEW_IN_A_SCRIPT], stdout=follower, env=env, timeout=60, check=True)
    os.close(follower)
    printed = b""
    while True:
        try:
            data = os.read(leader, 4096)
        except OSError:  # the terminal is closed and drained
            break
        if not data:
            break
        printed += data
    os.close(leader)
    return printed.decode("utf-8")


@pytest.mark.parametrize("no_color, coloured", [(None, True), ("1", False)])
def test_view_chunks_in_a_terminal_is_coloured_unless_no_color(no_color, coloured):
    env = {name: value for name, value in os.environ.items() if name != "NO_COLOR"}
    if no_color:
        env["NO_COLOR"] = no_color
    printed = run_in_a_terminal(env)
    assert ("\x1b[30;4;48;5;" in printed) == coloured
    assert ("«chunk»" in printed) != coloured


def test_view_chunks_into_a_pipe_is_plain_text():
    result = subprocess.run([sys.executable, "-c", VIEW_IN_A_SCRIPT], capture_output=True, text=True, check=True)
    assert "«chunk»" in result.stdout and "\x1b[" not in result.stdout


def test_size_plot_has_a_row_per_strategy_and_counts_the_giants():
    figure = labkit.plot_chunk_sizes({"windows": [128] * 5, "markdown": [40, 90, 300, 900]}, 128, "sizes")
    titles = [axes.get_title(loc="left") for axes in figure.axes]
    assert titles == [
        "windows: 5 chunks, median 128 tokens",
        "markdown: 4 chunks, median 195 tokens; 2 over 256 (up to 900) in the last bar",
    ]
    assert labkit.plots.figure_png(figure).startswith(PNG_SIGNATURE)


def test_a_size_plot_carries_a_digest_of_what_it_shows_in_its_png():
    """A copy of the plot (docs/chunk-sizes.png) is checked by this digest, not by its pixels."""
    sizes = {"windows": [128] * 5, "markdown": [40, 90, 300]}
    source = labkit.plot_chunk_sizes(sizes, 128, "sizes").png_source
    assert source.startswith("chunk-sizes sha256:")
    same = {"windows": [np.int64(128)] * 5, "markdown": [40, 90, 300]}
    assert labkit.plots.chunk_sizes_source(same, 128, "sizes") == source  # numpy's ints or Python's
    for other in (({**sizes, "markdown": [40, 90, 301]}, 128, "sizes"), (sizes, 64, "sizes"),
                  (sizes, 128, "other"), (dict(reversed(sizes.items())), 128, "sizes")):
        assert labkit.plots.chunk_sizes_source(*other) != source
    png = labkit.plots.figure_png(labkit.plot_chunk_sizes(sizes, 128, "sizes"))
    assert f"{labkit.plots.PNG_SOURCE_KEY}\0{source}".encode() in png  # a tEXt chunk's key, text


def test_a_script_saves_its_plot_in_the_current_folder_without_pyplot(tmp_path):
    script = (
        "import sys, labkit\n"
        "figure = labkit.plot_chunk_sizes({'recursive': [10, 20, 30]}, 32, 'sizes')\n"
        "labkit.show_figure(figure, 'rag0-sizes.png')\n"
        "assert 'matplotlib.pyplot' not in sys.modules\n"
    )
    env = {name: value for name, value in os.environ.items() if name not in ("DISPLAY", "MPLBACKEND")}
    result = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert f"plot saved to {tmp_path / 'rag0-sizes.png'}" in result.stdout
    assert (tmp_path / "rag0-sizes.png").read_bytes().startswith(PNG_SIGNATURE)
