"""The notebooks: made from the lab scripts, in sync, run top to bottom, seen in a browser.

Each notebook runs in a fresh Jupyter kernel (nbclient), started in the
notebook's own folder as Jupyter starts it, with the network switched off. A
solution notebook must pass and show its chunks and plots; a student notebook
must stop at its first TODO with the hint the script prints, and give the
next level of that hint when asked (show_hint). A notebook imports the
earlier labs from the notebooks beside it. Last, a run notebook
and the chunk view are opened in headless Chromium, as a person would see them.
"""

import functools
import importlib.util
import os
import re
import shutil
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import labkit
import live_jupyterlab
import labkit.running
import labkit.view
import pytest
from offline import REFUSE_NETWORK, student_lab_run, vectors_kept
from scratch import temporary_folder

# Jupyter's own modules (jupytext, nbformat, nbclient) are imported in the functions that use them: nbformat
# loads jsonschema's format checkers, seconds of import that a process only collecting this module need not pay.

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"
LABS = [path.stem for path in sorted((ROOT / "solutions").glob("rag*-*.py"),
                                     key=lambda path: int(path.stem.split("-")[0][3:]))]  # rag10 after rag9
GENERATED = sorted(NOTEBOOKS.glob("*/rag*-*.ipynb"))

CELL_SECONDS = 60  # a cell still running after this fails its test
LABS_WITH_A_CHUNK_VIEW = ("rag4", "rag5", "rag6", "rag7")
LABS_WITH_A_SIZE_PLOT = ("rag5", "rag6")


def load_tool(name: str):
    """The module tools/NAME.py (tools/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "tools" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def make_notebooks():
    return load_tool("make_notebooks")


def run_notebook(path: Path):
    """Run a notebook top to bottom: (the notebook with its outputs, the CellExecutionError or None).

    The kernel is this interpreter's ipykernel (a python3 kernel installed
    elsewhere on a developer's machine might lack the course), started in the
    notebook's folder. A first cell, added here only, switches the network off.
    In a student notebook, a cell added before the last one asks for hint 2,
    as a student stuck at the TODO would.
    """
    import nbformat
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_client.manager import AsyncKernelManager
    from jupyter_core.utils import run_sync
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    notebook = nbformat.read(path, as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(REFUSE_NETWORK, id="offline"))
    if path.parent.name == "labs":
        ask = nbformat.v4.new_code_cell("show_hint(2)", id="hint")
        notebook.cells.insert(len(notebook.cells) - 1, ask)
    specs = KernelSpecManager(kernel_dirs=[])  # only the native kernel: sys.executable
    kernel = AsyncKernelManager(kernel_name="python3", kernel_spec_manager=specs)
    client = NotebookClient(  # no widget state saved: nbconvert's page then shows the explorer's own HTML,
        notebook, km=kernel, timeout=CELL_SECONDS, startup_timeout=CELL_SECONDS,  # not a CDN's widget manager
        resources={"metadata": {"path": str(path.parent)}}, store_widget_state=False,
    )
    try:  # an embedding cache of its own, empty at the start (kernel_cache)
        client.execute(env={**os.environ, "ACADEMY_CACHE_DIR": str(kernel_cache(path))})
    except CellExecutionError as error:
        return notebook, error
    finally:
        run_sync(kernel.shutdown_kernel)(now=True)  # a kernel we started is ours to stop
    return notebook, None


def kernel_cache(path: Path) -> Path:
    """The embedding cache folder of the kernel that runs the notebook at `path`: beside it, its own."""
    return path.with_suffix(".cache")


def copy_of_the_course(folder: Path) -> Path:
    """A copy of notebooks/ to run from, so that what a run leaves behind (a lab
    may save a file in its folder) stays out of the repository."""
    for name in ("notebooks", "labs", "solutions"):  # a notebook's earlier labs are its paired scripts
        shutil.copytree(ROOT / name, folder / name)
    return folder / "notebooks"


STARTED: dict = {}  # {"solutions/rag4-chunking": future (notebook, error)}
# Kernels spend most of their time computing, and this machine (like CI's) has two cores: two at a time.
NOTEBOOK_RUNS = ThreadPoolExecutor(max_workers=2)


def start_early(session) -> None:
    """Start, right after collection, the run of every notebook a selected test reads, each once,
    so that the kernels compute beside the tests before this module's. A test waits for its own run."""
    for item in session.items:
        params = item.callspec.params if hasattr(item, "callspec") else {}
        name = params.get("notebook")
        if item.module.__name__ == __name__ and name is not None and name not in STARTED:
            STARTED[name] = NOTEBOOK_RUNS.submit(run_notebook, notebook_copy() / f"{name}.ipynb")


@functools.cache
def notebook_copy() -> Path:
    """The copy of the course the notebooks run in (copy_of_the_course), made at the first call."""
    return copy_of_the_course(temporary_folder("course-"))


@pytest.fixture(scope="module")
def executed():
    """{"solutions/rag4-chunking": future (notebook, error)} for every notebook a selected test runs
    (start_early started them)."""
    yield STARTED
    NOTEBOOK_RUNS.shutdown(wait=True, cancel_futures=True)


def outputs(notebook, key: str) -> list[str]:
    """Every output of the notebook's cells holding `key` ("text", "text/html", "image/png")."""
    found = []
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if key == "text" and "text" in output:
                found.append(output["text"])
            elif key in output.get("data", {}):
                found.append(output["data"][key])
    return found


def test_notebooks_match_the_scripts():
    stale = make_notebooks().stale_notebooks()
    assert not stale, f"notebooks/ is out of date ({stale}); run: python tools/make_notebooks.py"


def test_every_lab_has_a_student_and_a_solution_notebook():
    assert GENERATED == sorted(NOTEBOOKS / kind / f"{lab}.ipynb" for lab in LABS for kind in ("labs", "solutions"))


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_notebooks_are_written_for_clean_diffs(path):
    import nbformat

    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert [cell.id for cell in notebook.cells] == [f"cell-{n}" for n in range(len(notebook.cells))]
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None
    assert notebook.metadata.kernelspec.name == "python3"
    assert set(notebook.metadata) == {"kernelspec", "jupytext"}


@pytest.mark.parametrize("path", GENERATED, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_a_notebook_turns_back_into_its_script(path):
    """One source, two forms: `jupytext --to py:percent` gives back the lab file, byte for byte."""
    import jupytext
    import nbformat

    script = ROOT / path.parent.name / f"{path.stem}.py"
    notebook = nbformat.read(path, as_version=4)
    assert jupytext.writes(notebook, fmt="py:percent") == script.read_text(encoding="utf-8")


# Every lab's script runs in a plain `pytest` (test_labs.py); as notebooks, rag5's solution runs
# there too (it shows a chunk view and a plot, which the browser checks read), and the rag4 and rag5
# students' notebooks, which stop at once (the README quotes rag4's); every notebook runs in the
# deeper tier: a kernel a notebook costs seconds of the plain run's minute.
QUICK = {"solutions": ("rag5-",), "labs": ("rag4-", "rag5-")}


def in_tier(notebook: str):
    """The notebook as a test parameter, marked heavy unless its lab is one of QUICK."""
    kind, lab = notebook.split("/")
    return pytest.param(notebook, marks=[] if lab.startswith(QUICK[kind]) else [pytest.mark.heavy])


@pytest.mark.parametrize("notebook", [in_tier(f"solutions/{lab}") for lab in LABS])
def test_solution_notebook_runs_top_to_bottom(notebook, executed):
    run, error = executed[notebook].result()
    assert error is None, f"{error.ename}: {error.evalue}"
    assert "all invariants hold" in "".join(outputs(run, "text"))
    # bm25s (rag11's public tests) imports tqdm.auto, which warns in a kernel without ipywidgets
    assert "TqdmWarning" not in "".join(outputs(run, "text")), "a progress bar's warning is shown"
    lab = notebook.split("/")[1].split("-")[0]
    if lab in LABS_WITH_A_CHUNK_VIEW:
        assert any('class="chunk-view"' in html for html in outputs(run, "text/html")), "no chunk view"
    if lab in LABS_WITH_A_SIZE_PLOT:
        assert outputs(run, "image/png"), "no plot shown inline"
        assert not list((notebook_copy() / "solutions").glob(f"{lab}-*.png")), "a plot saved, not shown inline"
    # The lab's texts and its explorer's ship in embeddings/: the notebook opens without embedding any.
    kept = vectors_kept(kernel_cache(notebook_copy() / f"{notebook}.ipynb"))
    assert kept == 0, f"{lab}'s notebook embedded {kept} texts embeddings/ lacks: run tools/make_course_vectors.py"


QUOTED_NOTEBOOK = "rag4-chunking"


def readme_notebook_place() -> str:
    """Where the README says rag4's notebook stops, its cell numbered one later here: this
    run adds a first cell (the network switched off), which takes In[1]."""
    make_docs = load_tool("make_docs")
    [block] = [block for block in make_docs.page_blocks(make_docs.README.read_text(encoding="utf-8"))
               if (block.lab, block.name) == ("rag4-stub", "notebook-fill-in")]
    place = block.content.strip("`")
    return re.sub(r"In\[(\d+)\]", lambda number: f"In[{int(number.group(1)) + 1}]", place)


@pytest.mark.parametrize("notebook", [in_tier(f"labs/{lab}") for lab in LABS])
def test_student_notebook_stops_at_its_first_todo_with_the_scripts_hint(notebook, executed):
    script = student_lab_run(ROOT / f"{notebook}.py")
    todo = re.search(r"^TODO\(.*$", script.stderr, re.M)
    assert script.returncode == 1 and todo, script.stderr[-2000:]
    function = re.search(r"\) (\w+)\(\):", todo.group()).group(1)

    run, error = executed[notebook].result()
    assert error is not None, "the student notebook ran to the end"
    assert error.ename == "LabFailed"
    hint, where = error.evalue.splitlines()
    assert hint == todo.group()  # the same TODO, word for word
    assert where.startswith(f"  -> fill in {function}() in cell In[")
    assert where.endswith(", then run that cell and this one again.")
    if notebook == f"labs/{QUOTED_NOTEBOOK}":  # the README quotes where this one says to write
        assert where.startswith(f"  -> fill in {readme_notebook_place()}, "), where
    failed = [cell for cell in run.cells if any(o.output_type == "error" for o in cell.get("outputs", []))]
    assert failed == [run.cells[-1]], "the lab fails in its last cell, where run_lab(main) is"
    assert failed[0].outputs[-1].traceback == [f"LabFailed: {error.evalue}"], "a hint, not a traceback"

    [asked] = [cell for cell in run.cells if cell.get("id") == "hint"]  # show_hint(2), added
    shown = "".join(output.get("text", "") for output in asked.outputs)
    assert todo.group() in shown, "the hint is for the TODO where the lab stops"
    assert f"Hint 2 of 3 for {function}():" in shown and "Still stuck? show_hint(3)" in shown


# --------------------------------------------------------------------------
# A notebook imports the earlier labs beside it
# --------------------------------------------------------------------------


def test_saving_a_student_notebook_in_jupyter_writes_its_lab_script(tmp_path):
    """One copy of the work: Jupyter's jupytext contents manager, started in the course's
    folder, saves the notebook's code into labs/, where the grader reads it."""
    from jupytext.sync_contentsmanager import TextFileContentsManager

    for folder in ("labs", "notebooks/labs"):
        shutil.copytree(ROOT / folder, tmp_path / folder)
    notebook = "notebooks/labs/rag4-chunking.ipynb"
    contents = TextFileContentsManager(root_dir=str(tmp_path))
    model = contents.get(notebook)
    stub, work = "    raise NotImplementedError(", "    return []  # my work\n    raise NotImplementedError("
    cell = next(cell for cell in model["content"].cells if "def word_windows" in cell.source)
    cell.source = cell.source.replace(stub, work, 1)
    contents.save(model, notebook)
    script = (tmp_path / "labs" / "rag4-chunking.py").read_text(encoding="utf-8")
    assert script == (ROOT / "labs" / "rag4-chunking.py").read_text(encoding="utf-8").replace(stub, work, 1)
    again = [cell.source for cell in contents.get(notebook)["content"].cells]
    assert again == [cell.source for cell in model["content"].cells]  # opened again: the same work


def test_a_notebook_loads_the_labs_of_the_scripts_it_is_paired_with(tmp_path, monkeypatch):
    (tmp_path / "notebooks" / "labs").mkdir(parents=True)
    (tmp_path / "labs").mkdir()
    (tmp_path / "labs" / "rag1-demo.py").write_text("X = 1\n")
    monkeypatch.chdir(tmp_path / "notebooks" / "labs")  # where Jupyter runs notebooks/labs/rag2-....ipynb
    assert labkit.loading.lab_folder(None) == tmp_path / "labs"
    assert labkit.loading.lab_folder(str(tmp_path / "labs" / "rag2-next.py")) == tmp_path / "labs"


def test_a_todo_in_a_lab_a_notebook_imported_says_where_and_that_the_kernel_must_restart(tmp_path, monkeypatch):
    (tmp_path / "rag3-todo.py").write_text(
        "import math\n\n\ndef area(r):\n    raise NotImplementedError('TODO(rag3) area(): pi r squared')\n"
    )
    lab = labkit.load_lab("rag3", tmp_path)
    with pytest.raises(NotImplementedError) as error:
        lab.area(1)
    assert labkit.running.todo_advice(error.value) == "rag3-todo.py:5 in area(), then run the lab again"
    monkeypatch.setattr(labkit.running, "in_notebook", lambda: True)  # as in a notebook's kernel
    assert labkit.running.todo_advice(error.value) == (
        "area() in rag3-todo.py:5 (or its notebook), then save it and restart this notebook's kernel"
    )


# --------------------------------------------------------------------------
# As a person sees it: a run notebook and the chunk view, in headless Chromium
# --------------------------------------------------------------------------

TEST_OUTPUT = ROOT / "test-output"  # pages and screenshots to look at after the run; gitignored


def keep(path: Path) -> None:
    """Move a page or screenshot a test made in its own folder into test-output/, whole.

    A page the browser opens is never written in test-output/ itself: two runs
    side by side would write the same file while the other's browser reads it.
    os.replace puts each file there at once, the last run's winning.
    """
    TEST_OUTPUT.mkdir(exist_ok=True)
    os.replace(path, TEST_OUTPUT / path.name)


def shoot(element, folder: Path, name: str) -> None:
    """A screenshot of `element` kept as test-output/`name`."""
    element.screenshot(str(folder / name))
    keep(folder / name)
BROWSER_LAB = "rag5-recursive-chunking"  # shows a chunk view and a plot


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    """Debian's chromium, headless, driven through chromedriver.

    Without them the check is skipped, saying what to install; in CI, where
    .ci/run installs them, it fails instead, so it can never pass unseen.
    """
    docs = load_tool("make_docs")  # the browser is started as the docs' tool starts it
    missing = docs.missing_browser()
    if missing:
        reason = f"the browser check needs {missing}"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; .ci/run installs them, so in CI the check must run")
        pytest.skip(reason)
    driver = docs.chromium(tmp_path_factory.mktemp("chromium-profile"))
    yield driver
    driver.quit()


def notebook_as_html(notebook, name: str) -> str:
    """A run notebook as nbconvert's JupyterLab-style page, without the test's offline cell.

    MathJax and require.js would come from a CDN; the notebooks need neither,
    and the page must not reach for the network, so both are left out.
    """
    import nbformat
    from nbconvert import HTMLExporter

    shown = nbformat.from_dict(notebook)
    shown.cells = [cell for cell in shown.cells if cell.get("id") != "offline"]
    exporter = HTMLExporter(template_name="lab", mathjax_url="", require_js_url="")
    return exporter.from_notebook_node(shown, resources={"metadata": {"name": name}})[0]


def expected_rgb(colour: str) -> str:
    """'#afd7ff' as a browser's computed style says it: 'rgba(175, 215, 255, 1)'."""
    red, green, blue = (int(colour[i : i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red}, {green}, {blue}, 1)"


def check_chunk_view(view, chunks, first_number):
    """The view shows `chunks` numbered from `first_number`, at their true offsets, in their colours."""
    from selenium.webdriver.common.by import By

    assert view.is_displayed() and view.size["height"] > 50
    labels = view.find_elements(By.CSS_SELECTOR, ".chunk-label")
    assert [label.get_attribute("data-chunk") for label in labels] == [
        str(first_number + n) for n in range(len(chunks))
    ]
    for label, chunk in zip(labels, chunks):
        assert f"[{chunk.start}, {chunk.end}) {chunk.n_tokens} tokens" in label.text
    roles = {"odd": 0, "even": 0, "overlap": 0, "gap": 0}
    for piece in view.find_elements(By.CSS_SELECTOR, ".chunk-piece"):
        role = piece.get_attribute("class").split()[1].removeprefix("chunk-")
        roles[role] += 1
        if role != "gap":
            assert piece.value_of_css_property("background-color") == expected_rgb(labkit.view.CHUNK_COLOURS[role])
    assert roles["odd"] and roles["even"] and roles["overlap"], roles


def rag5_overlapped_chunks():
    """The chunks rag5 shows on its page: recursive, with overlap."""
    rag5 = labkit.load_lab("rag5", ROOT / "solutions")
    page = rag5.PAGE.read_text(encoding="utf-8")
    return page, rag5.recursive_chunks(page, rag5.MAX_TOKENS, rag5.OVERLAP)


@pytest.mark.parametrize("notebook", [f"solutions/{BROWSER_LAB}"])
def test_a_run_notebook_in_a_browser_shows_the_chunks_and_the_plot(notebook, browser, executed, tmp_path):
    from selenium.webdriver.common.by import By

    run, error = executed[notebook].result()
    assert error is None
    html_file = tmp_path / f"{BROWSER_LAB}.html"
    html_file.write_text(notebook_as_html(run, BROWSER_LAB), encoding="utf-8")
    page_loads_from_the_web = re.findall(r'<(?:script|link|img)[^>]*(?:src|href)="https?:', html_file.read_text())
    assert not page_loads_from_the_web
    browser.get(html_file.as_uri())

    assert browser.execute_script("return document.readyState") == "complete"
    assert browser.title == BROWSER_LAB
    code_cells = [cell for cell in run.cells if cell.cell_type == "code" and cell.get("id") != "offline"]
    assert len(browser.find_elements(By.CSS_SELECTOR, ".jp-CodeCell")) == len(code_cells)
    views = browser.find_elements(By.CSS_SELECTOR, ".chunk-view")
    assert len(views) == 1
    _, chunks = rag5_overlapped_chunks()
    check_chunk_view(views[0], chunks[:3], first_number=1)  # the lab shows its first three
    shoot(views[0], tmp_path, "chunk-view-in-notebook.png")

    plots = [image for image in browser.find_elements(By.CSS_SELECTOR, ".jp-OutputArea-output img")
             if image.get_attribute("src").startswith("data:image/png")]
    assert len(plots) == 1
    assert browser.execute_script("return arguments[0].naturalWidth", plots[0]) > 300  # decoded, not broken
    shoot(plots[0], tmp_path, "chunk-sizes-in-notebook.png")


def test_the_chunk_view_alone_in_a_browser(browser, tmp_path):
    page, chunks = rag5_overlapped_chunks()
    html_file = tmp_path / "chunk-view.html"
    html_file.write_text(
        '<!DOCTYPE html><html><head><meta charset="utf-8"><title>chunk view</title></head>'
        f'<body style="max-width:1000px;margin:12px">{labkit.view.chunks_as_html(page, chunks, 1, 3)}</body></html>',
        encoding="utf-8",
    )
    browser.get(html_file.as_uri())
    from selenium.webdriver.common.by import By

    view = browser.find_element(By.CSS_SELECTOR, ".chunk-view")
    check_chunk_view(view, chunks[1:4], first_number=2)
    shoot(view, tmp_path, "chunk-view.png")


# --------------------------------------------------------------------------
# The chunk explorer in a notebook exported to HTML: no kernel, its controls still work
# --------------------------------------------------------------------------


def explorer_marks(browser, explorer) -> tuple[list[dict], list[dict]]:
    """(labels, pieces) the explorer draws, each with its data- attributes and text."""
    read = """return Array.from(arguments[0].querySelectorAll(arguments[1])).map(node => ({
        start: Number(node.dataset.start), end: Number(node.dataset.end),
        chunks: node.dataset.chunks || "", chunk: node.dataset.chunk || "", text: node.textContent,
        background: getComputedStyle(node).backgroundColor, role: node.className}));"""
    return (browser.execute_script(read, explorer, ".explorer-label"),
            browser.execute_script(read, explorer, ".explorer-piece"))


def check_explorer(browser, explorer, page: str, chunks) -> None:
    """The explorer shows exactly `chunks`: a label each at its offsets, and pieces that are the
    page's text at their own offsets, tiling the page, each chunk's pieces tiling its span."""
    labels, pieces = explorer_marks(browser, explorer)
    assert [(label["start"], label["end"]) for label in labels] == [(c.start, c.end) for c in chunks]
    for label, chunk in zip(labels, chunks):
        assert label["text"].startswith(f"#{label['chunk']} [{chunk.start}, {chunk.end}) {chunk.n_tokens} token")
    assert [piece["text"] for piece in pieces] == [page[piece["start"] : piece["end"]] for piece in pieces]
    assert pieces[0]["start"] == 0 and pieces[-1]["end"] == len(page)
    assert all(before["end"] == after["start"] for before, after in zip(pieces, pieces[1:]))
    for number, chunk in enumerate(chunks, 1):
        held = [piece for piece in pieces if str(number) in piece["chunks"].split()]
        assert (held[0]["start"], held[-1]["end"]) == (chunk.start, chunk.end), number
        assert all(before["end"] == after["start"] for before, after in zip(held, held[1:]))
    for piece in pieces:
        role = piece["role"].split()[1].removeprefix("explorer-")
        if role != "gap":
            assert piece["background"] == expected_rgb(labkit.view.CHUNK_COLOURS[role]).replace(
                "rgba", "rgb").replace(", 1)", ")")  # getComputedStyle's form: 'rgb(175, 215, 255)'
    explorer_count = explorer.find_element("css selector", ".explorer-count").text
    assert explorer_count == str(len(chunks))


@pytest.mark.parametrize("notebook", [f"solutions/{BROWSER_LAB}"])
def test_the_explorer_in_a_notebook_exported_to_html_moves_with_its_controls(notebook, browser, executed, tmp_path):
    from selenium.webdriver.common.keys import Keys
    from selenium.webdriver.support.ui import Select

    run, error = executed[notebook].result()
    assert error is None
    [bundle] = [output["data"] for cell in run.cells for output in cell.get("outputs", [])
                if "chunk-explorer" in output.get("data", {}).get("text/html", "")]
    assert "application/vnd.jupyter.widget-view+json" in bundle  # the live widget, and its fallback beside it
    assert "widgets" not in run.metadata  # no state saved: the page must not wait for a widget manager
    html_file = tmp_path / f"{BROWSER_LAB}-explorer.html"
    html_file.write_text(notebook_as_html(run, BROWSER_LAB), encoding="utf-8")
    browser.get(html_file.as_uri())
    [explorer] = browser.find_elements("css selector", ".chunk-explorer .explorer-body")
    assert explorer.get_attribute("data-mode") == "static"

    rag5 = labkit.load_lab("rag5", ROOT / "solutions")
    page = rag5.PAGE.read_text(encoding="utf-8")
    check_explorer(browser, explorer, page, rag5.recursive_chunks(page, 128, 0))  # where it opens
    explorer.find_element("css selector", ".explorer-max_tokens").send_keys(Keys.ARROW_RIGHT)  # 128 -> 256
    assert explorer.get_attribute("data-setting") == "recursive|256|0"
    check_explorer(browser, explorer, page, rag5.recursive_chunks(page, 256, 0))
    explorer.find_element("css selector", ".explorer-overlap").send_keys(Keys.ARROW_RIGHT)  # 0 -> 16
    check_explorer(browser, explorer, page, rag5.recursive_chunks(page, 256, 16))
    assert explorer.find_elements("css selector", ".explorer-overlap.explorer-piece"), "no overlap drawn"
    Select(explorer.find_element("css selector", ".explorer-chunker")).select_by_value("token windows (rag4)")
    assert explorer.get_attribute("data-setting") == "token windows (rag4)|256|16"
    check_explorer(browser, explorer, page, rag5.rag4.token_windows(page, 256, 16))
    assert re.fullmatch(r"\d+ of \d+ \(chunk #\d+\)", explorer.find_element("css selector", ".explorer-rank").text)
    shoot(explorer, tmp_path, "explorer-in-notebook.png")


# --------------------------------------------------------------------------
# The chunk explorer live in JupyterLab: a moved control asks the kernel
# --------------------------------------------------------------------------

LAB_SECONDS = 300  # JupyterLab's page, a kernel and the cells up to the explorer, on a loaded 2-core machine
LIVE_SECONDS = 120  # a moved slider's chunks, computed by the kernel and drawn

# What the notebook shows, read from JupyterLab's own objects (window.jupyterapp): whether its
# kernel is idle, the index of the explorer's cell, every error a cell shows, and the explorer
# each output area draws (live: the widget's, static: its HTML fallback).
LAB_STATE = """
const app = window.jupyterapp;  // the notebook's panel: a headless page has no focus, so no currentWidget
const panel = app && Array.from(app.shell.widgets("main")).find(widget => widget.content && widget.sessionContext);
if (!panel || !panel.content || !panel.sessionContext) return {ready: false};
const kernel = panel.sessionContext.session && panel.sessionContext.session.kernel;
const cells = panel.content.widgets;
const errors = [];
cells.forEach((cell, index) => {
  if (!cell.model.outputs) return;
  for (const output of cell.model.outputs.toJSON())
    if (output.output_type === "error") errors.push(`cell ${index}: ${output.ename}: ${output.evalue}`);
});
const modes = Array.from(panel.node.querySelectorAll(".explorer-body")).map(body => body.dataset.mode);
const widgetErrors = Array.from(panel.node.querySelectorAll(".jp-OutputArea-output"))
  .map(node => node.textContent).filter(text => /Error displaying widget|Failed to load model/.test(text));
return {ready: true, kernel: kernel ? kernel.status : "none", errors, modes, widgetErrors,
        explorerCell: cells.findIndex(cell => cell.model.sharedModel.getSource().includes("show_explorer("))};
"""


@pytest.fixture
def jupyterlab(tmp_path):
    """JupyterLab serving a copy of rag5's solution notebook (a first cell switches the
    network off, no jupytext pairing) and the rag4 script it loads; stopped after the
    test, whatever happened, with every process it started."""
    import nbformat

    root = tmp_path / "course"
    (root / "notebooks" / "solutions").mkdir(parents=True)
    (root / "solutions").mkdir()
    shutil.copy(ROOT / "solutions" / "rag4-chunking.py", root / "solutions")  # load_lab("rag4")
    notebook = nbformat.read(NOTEBOOKS / "solutions" / f"{BROWSER_LAB}.ipynb", as_version=4)
    notebook.cells.insert(0, nbformat.v4.new_code_cell(REFUSE_NETWORK, id="offline"))
    del notebook.metadata["jupytext"]  # a save would write a paired script; the test saves nothing
    nbformat.write(notebook, root / "notebooks" / "solutions" / f"{BROWSER_LAB}.ipynb")
    lab = live_jupyterlab.start(root, tmp_path / "jupyter", pythonpath=str(ROOT))
    try:
        yield lab
    finally:
        live_jupyterlab.stop(lab)
        alive = [f"{process.pid} {process.name()}" for process in lab.started.values() if process.is_running()]
        assert lab.process.returncode is not None and not alive, f"outlived the test: {alive}"


def wait_for(browser, seconds: float, ready, what: str, shown=lambda browser: browser.execute_script(LAB_STATE)):
    """ready(browser)'s first true answer within `seconds`, else a failure saying `what` was missing
    and what was `shown` instead."""
    from selenium.common.exceptions import TimeoutException
    from selenium.webdriver.support.ui import WebDriverWait

    try:
        return WebDriverWait(browser, seconds, poll_frequency=0.5).until(ready)
    except TimeoutException:
        pytest.fail(f"{what} within {seconds} s; shown: {shown(browser)}")


def live_explorer(browser):
    """The explorer the widget drew, once the cells up to its own have run; fails on a cell's error."""
    state = browser.execute_script(LAB_STATE)
    assert not state.get("errors") and not state.get("widgetErrors"), state
    if "live" not in state.get("modes", []):
        return None
    return browser.find_element("css selector", '.jp-OutputArea-output .explorer-body[data-mode="live"]')


def explorer_setting(explorer):
    """What the explorer shows and its sliders say, for a failure's message."""
    def shown(browser):
        sliders = {name: explorer.find_element("css selector", f".explorer-{name}").get_attribute("value")
                   for name in ("max_tokens", "overlap")}
        return f"the view of {explorer.get_attribute('data-setting')}, the sliders at {sliders}"
    return shown


@pytest.mark.heavy
@pytest.mark.timeout(live_jupyterlab.START_SECONDS + 2 * LAB_SECONDS + 2 * LIVE_SECONDS + 60)
def test_the_explorer_live_in_jupyterlab_asks_its_kernel_for_any_setting(jupyterlab, browser, tmp_path):
    """In a real JupyterLab, the explorer is the anywidget, not its HTML fallback, and a slider moved to a
    value of no grid is answered by the kernel: the chunks drawn are rag5's own for that setting."""
    from labkit.explorer_widget import GRID_MAX_TOKENS, GRID_OVERLAPS, LIVE_MAX_TOKENS, LIVE_OVERLAPS
    from selenium.webdriver.common.keys import Keys

    browser.get(jupyterlab.url(f"lab/tree/notebooks/solutions/{BROWSER_LAB}.ipynb"))
    state = wait_for(browser, LAB_SECONDS, lambda b: (lambda s: s["ready"] and s["kernel"] == "idle" and s)(
        b.execute_script(LAB_STATE)), "JupyterLab did not open the notebook with an idle kernel")
    assert state["explorerCell"] > 0, "no cell calls show_explorer"
    jupyterlab.follow()
    pythons = {process.cmdline()[0] for process in jupyterlab.started.values() if "ipykernel_launcher" in
               process.cmdline()}
    assert pythons == {sys.executable}, f"the kernel runs on {pythons}, not this interpreter"
    browser.execute_script(  # the cells up to the explorer's, not run_lab(main) after it
        "const app = window.jupyterapp, panel = Array.from(app.shell.widgets('main')).find(w => w.content);"
        "app.shell.activateById(panel.id); panel.content.activeCellIndex = arguments[0];"
        "app.commands.execute('notebook:run-all-above');", state["explorerCell"] + 1)
    explorer = wait_for(browser, LAB_SECONDS, live_explorer,
                        "the notebook showed no live explorer (the anywidget; the HTML fallback does not count)")
    static = browser.find_elements("css selector", '.explorer-body[data-mode="static"]')
    assert not static, "the HTML fallback is drawn beside the widget"

    rag5 = labkit.load_lab("rag5", ROOT / "solutions")
    page = rag5.PAGE.read_text(encoding="utf-8")
    assert explorer.get_attribute("data-setting") == "recursive|128|0"
    check_explorer(browser, explorer, page, rag5.recursive_chunks(page, 128, 0))

    max_tokens = 128 + 4 * LIVE_MAX_TOKENS["step"]  # four steps right: 192, which no grid computed
    overlap = LIVE_OVERLAPS["step"]  # 8
    assert max_tokens not in GRID_MAX_TOKENS and overlap not in GRID_OVERLAPS
    shown = explorer_setting(explorer)
    explorer.find_element("css selector", ".explorer-max_tokens").send_keys(*[Keys.ARROW_RIGHT] * 4)  # by keyboard
    wait_for(browser, LIVE_SECONDS, lambda b: explorer.get_attribute("data-setting") == f"recursive|{max_tokens}|0",
             f"the kernel sent no view for max_tokens={max_tokens}", shown)
    chunks = rag5.recursive_chunks(page, max_tokens, 0)
    assert chunks != rag5.recursive_chunks(page, 128, 0)
    check_explorer(browser, explorer, page, chunks)

    explorer.find_element("css selector", ".explorer-overlap").send_keys(Keys.ARROW_RIGHT)
    wait_for(browser, LIVE_SECONDS,
             lambda b: explorer.get_attribute("data-setting") == f"recursive|{max_tokens}|{overlap}",
             f"the kernel sent no view for overlap={overlap}", shown)
    check_explorer(browser, explorer, page, rag5.recursive_chunks(page, max_tokens, overlap))
    assert explorer.find_elements("css selector", ".explorer-overlap.explorer-piece"), "no overlap drawn"

    loaded = browser.execute_script("return performance.getEntriesByType('resource').map(entry => entry.name)")
    assert all(url.startswith(f"http://127.0.0.1:{jupyterlab.port}/") for url in loaded), "the page reached out"
    shoot(explorer, tmp_path, "explorer-in-jupyterlab.png")
