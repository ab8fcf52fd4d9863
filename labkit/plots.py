"""Plots: a PNG file beside a script's run, a picture in a notebook."""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path

import numpy as np

from labkit.notebook import in_notebook


# --------------------------------------------------------------------------
# Plots: a PNG file beside a script's run, a picture in a notebook
# --------------------------------------------------------------------------
# matplotlib draws with its Agg backend, which needs no screen. These helpers
# never import pyplot, so no window can open and no figure outlives its plot,
# in a script, in a notebook, or on a machine with no display at all.
#
# A plot says what it shows: plot_chunk_sizes records a digest of its inputs
# on the figure (`png_source`), and figure_png writes it into the PNG as a
# text chunk. A copy of a plot (the course's README shows one) is then
# checked against a fresh run by comparing digests, not pixels.

PNG_SOURCE_KEY = "Source"  # the PNG text chunk that holds a plot's digest


def plot_chunk_sizes(sizes: dict, max_tokens: int, title: str):
    """Histograms of chunk sizes in tokens, one row per strategy, the budget a dashed line.

    `sizes` maps a strategy's name to the token counts of its chunks. Rows
    share their x axis, so strategies compare at a glance: windows pile up at
    the budget, seams spread below it, an oversize block stands past the line.
    The axis stops at twice the budget; a bigger chunk (a huge table) is drawn
    in the last bar and counted in its row's title, so a few giants do not
    squeeze everything else into a corner.
    """
    from matplotlib.figure import Figure

    largest = max([max_tokens] + [max(counts) for counts in sizes.values() if counts])
    axis_end = min(largest, 2 * max_tokens)
    # Bar edges sit half a token past whole numbers, so a chunk of exactly
    # max_tokens is drawn left of the budget line, where it belongs.
    bins = np.arange(0, axis_end + max_tokens / 16, max_tokens / 16) + 0.5
    figure = Figure(figsize=(7, 1.0 + 1.5 * len(sizes)), layout="constrained")
    rows = figure.subplots(len(sizes), 1, sharex=True, squeeze=False)[:, 0]
    for number, (name, counts) in enumerate(sizes.items()):
        row = rows[number]
        row.hist(np.minimum(counts, axis_end), bins=bins, color=f"C{number}")
        row.axvline(max_tokens, color="black", linestyle="--", linewidth=1)
        row.set_title(size_summary(name, counts, axis_end), loc="left", fontsize=10)
        row.set_ylabel("chunks")
    rows[-1].set_xlabel(f"tokens per chunk (dashed line: the budget, {max_tokens})")
    figure.suptitle(title)
    figure.png_source = chunk_sizes_source(sizes, max_tokens, title)
    return figure


def chunk_sizes_source(sizes: dict, max_tokens: int, title: str) -> str:
    """'chunk-sizes sha256:...': a digest of all a size plot shows, the same on every machine.

    The rows keep their order (it is the plot's), and counts are plain ints,
    so numpy's integers and Python's give the same digest.
    """
    shown = {
        "sizes": [[name, [int(count) for count in counts]] for name, counts in sizes.items()],
        "max_tokens": int(max_tokens),
        "title": title,
    }
    digest = hashlib.sha256(json.dumps(shown).encode("utf-8")).hexdigest()
    return f"chunk-sizes sha256:{digest}"


def size_summary(name: str, counts, axis_end: int) -> str:
    """'recursive: 1108 chunks, median 109 tokens', and how many lie past the axis."""
    if not counts:
        return f"{name}: no chunks"
    summary = f"{name}: {len(counts)} chunks, median {np.median(counts):.0f} tokens"
    beyond = [count for count in counts if count > axis_end]
    if beyond:
        summary += f"; {len(beyond)} over {axis_end} (up to {max(beyond)}) in the last bar"
    return summary


def figure_png(figure, dpi: int = 110) -> bytes:
    """The figure as PNG bytes. A figure made without pyplot is saved by Agg, matplotlib's PNG painter.

    A figure that records what it shows (`png_source`) carries it in the PNG's text chunks.
    """
    source = getattr(figure, "png_source", None)
    metadata = {PNG_SOURCE_KEY: source} if source else None
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, metadata=metadata)
    return buffer.getvalue()


def show_figure(figure, filename: str) -> None:
    """Show a figure inline in a notebook; from a script, save it as `filename` in the current folder."""
    png = figure_png(figure)
    if in_notebook():
        from IPython.display import Image, display

        display(Image(data=png, format="png"))
        return
    path = Path(filename).resolve()
    path.write_bytes(png)
    print(f"   plot saved to {path}")
