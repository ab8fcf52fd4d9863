"""The chunk explorer in a notebook: an anywidget in a live kernel, a page of its own without one.

show_explorer(page, chunkers, question, answer) draws labkit/explorer.js with the
numbers of labkit/explorer.py. The same output carries both forms:

- the widget (application/vnd.jupyter.widget-view+json): in JupyterLab, a control
  moved asks this kernel for that setting's chunks, any value of the sliders' ranges;
- its text/html fallback: the same front end inlined with a grid of settings
  computed ahead (GRID_MAX_TOKENS x GRID_OVERLAPS for every chunker), which is
  what a notebook exported to HTML shows, with working controls that move over
  the grid and no kernel, widget manager or network behind them. nbconvert shows
  the fallback when the notebook holds no widget state: export with
  `--ExecutePreprocessor.store_widget_state=False` when it also runs the notebook.

Without anywidget installed, the fallback alone is shown, controls and all.
"""

from __future__ import annotations

import html
import json
import uuid
from pathlib import Path
from typing import Callable

from labkit.explorer import Grid, Page, explore, explore_grid, page_json, read_page, setting_key
from labkit.view import HTML_STYLES

SCRIPT = Path(__file__).with_name("explorer.js")
GRID_MAX_TOKENS = (64, 128, 256, 512)
GRID_OVERLAPS = (0, 16, 32)
LIVE_MAX_TOKENS = {"min": 16, "max": 1024, "step": 16}  # a live kernel computes any of these
LIVE_OVERLAPS = {"min": 0, "max": 128, "step": 8}
FIRST_MAX_TOKENS = 128
STYLES = {**HTML_STYLES, "text": HTML_STYLES["text"] + ";flex:1 1 auto;max-height:520px;overflow:auto;margin:0"}


def show_explorer(text: str, chunkers: dict[str, Callable], question: str, answer: str) -> None:
    """Display an explorer of `chunkers` ({name: chunker(text, max_tokens, overlap)}) on `text`,
    the rank of the chunk holding `answer` (a quote of the page) judged for `question`."""
    from IPython.display import HTML, display

    page, grid, explored = precomputed(text, chunkers, question, answer)
    fallback = static_html(page, grid, explored)
    try:
        widget = explorer_widget(page, chunkers, grid, explored, fallback)
    except ImportError:  # no anywidget: the page's own controls, over the grid
        display(HTML(fallback))
        return
    display(widget)


def precomputed(text: str, chunkers: dict[str, Callable], question: str, answer: str) -> tuple[Page, Grid, dict]:
    """(page, grid, {setting_key: Exploration}): the page read once and every setting of the grid
    (GRID_MAX_TOKENS x GRID_OVERLAPS for each chunker) computed ahead, as both forms start from."""
    page = read_page(text, question, answer)
    grid = Grid(tuple(chunkers), GRID_MAX_TOKENS, GRID_OVERLAPS)
    return page, grid, explore_grid(page, chunkers, grid)


def first_setting(grid: Grid) -> dict:
    """Where the explorer opens: the first chunker, FIRST_MAX_TOKENS if the grid has it, no overlap."""
    max_tokens = FIRST_MAX_TOKENS if FIRST_MAX_TOKENS in grid.max_tokens else grid.max_tokens[0]
    return {"chunker": grid.chunkers[0], "max_tokens": max_tokens, "overlap": grid.overlaps[0]}


def spec_json(page: Page, grid: Grid, live: bool) -> dict:
    """What the front end draws with: the page, the chunkers, the controls' values, the styles."""
    controls = ({"max_tokens": LIVE_MAX_TOKENS, "overlap": LIVE_OVERLAPS} if live else
                {"max_tokens": {"values": list(grid.max_tokens)}, "overlap": {"values": list(grid.overlaps)}})
    return {"page": page_json(page), "chunkers": list(grid.chunkers), "controls": controls,
            "styles": STYLES, "mode": "live" if live else "static"}


def static_html(page: Page, grid: Grid, explored: dict) -> str:
    """The explorer as one HTML fragment that runs on its own: the grid's JSON, then the script.

    The JSON sits in a script element of its own type (never run), with "</" written
    as "<\\/" so no text of the page can close it early.
    """
    payload = static_payload(page, grid, explored)
    element_id = f"chunk-explorer-{uuid.uuid4().hex[:12]}"
    mount = f'mountStatic(document.getElementById("{element_id}"));'
    return (
        f'<div class="chunk-explorer" id="{element_id}">'
        f'<div class="explorer-host">{html.escape("The explorer needs JavaScript to draw its chunks.")}</div>'
        f'<script type="application/json" class="explorer-data">{payload}</script>'
        f"<script>(function () {{\n{SCRIPT.read_text(encoding='utf-8')}\n{mount}\n}})();</script></div>"
    )


def static_payload(page: Page, grid: Grid, explored: dict) -> str:
    """The static page's JSON: the spec, the setting it opens at and every setting's view."""
    setting = first_setting(grid)
    data = {"spec": spec_json(page, grid, live=False), "setting": setting,
            "first": setting_key(setting["chunker"], setting["max_tokens"], setting["overlap"]),
            "views": {key: exploration.as_json() for key, exploration in explored.items()}}
    return json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("</", "<\\/")


def explorer_widget(page: Page, chunkers: dict[str, Callable], grid: Grid, explored: dict, fallback: str):
    """The anywidget over `grid` (its chunkers, where it opens), its text/html the fallback; an
    ImportError without anywidget."""
    import anywidget
    import traitlets

    class ChunkExplorer(anywidget.AnyWidget):
        """explorer.js as the widget's module; "setting" from the page, "view" computed here."""

        _esm = SCRIPT.read_text(encoding="utf-8") + "\nexport default { render };\n"
        spec = traitlets.Dict().tag(sync=True)
        setting = traitlets.Dict().tag(sync=True)
        view = traitlets.Dict().tag(sync=True)

        @traitlets.observe("setting")
        def _recompute(self, change):
            """Any setting the sliders reach: from the grid when it has it, else computed now."""
            chosen = change["new"]
            key = setting_key(chosen["chunker"], chosen["max_tokens"], chosen["overlap"])
            if key not in explored:
                explored[key] = explore(page, chosen["chunker"], chunkers[chosen["chunker"]],
                                        int(chosen["max_tokens"]), int(chosen["overlap"]))
            self.view = explored[key].as_json()

        def _repr_mimebundle_(self, **kwargs):
            data, metadata = super()._repr_mimebundle_(**kwargs)
            return {**data, "text/html": fallback}, metadata

    widget = ChunkExplorer(spec=spec_json(page, grid, live=True))
    widget.setting = first_setting(grid)  # computes the first view
    return widget
