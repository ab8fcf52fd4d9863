"""Write the notebooks (notebooks/) from the lab scripts: one source, two forms.

The lab scripts are written in jupytext's percent format: `# %%` starts a code
cell and `# %% [markdown]` a cell of prose in comments. So the same file runs
with `python` and reads as a notebook. This tool writes that notebook:

    notebooks/solutions/rag4-chunking.ipynb   from solutions/rag4-chunking.py
    notebooks/labs/rag4-chunking.ipynb        from the student version of it,
                                              the text make_labs.py writes to labs/

Each notebook is paired with its script through jupytext: in Jupyter (with
jupytext installed, as requirements.txt does) saving notebooks/labs/rag4-....ipynb
also writes labs/rag4-....py, and opening it reads the code from that script.
So a student's work has one copy, the script, whichever form they work in, and
the grader reads it.

The notebooks are written for clean diffs: no outputs, no execution counts,
cell ids cell-0, cell-1, ... instead of random ones, and the same metadata
every time (the python3 kernel, the pairing, and jupytext's note that the
notebook turns back into exactly its script). A test fails when notebooks/
drifts from the scripts.

Usage:
    python tools/make_notebooks.py          # rewrite notebooks/
    python tools/make_notebooks.py --check  # exit 1 if notebooks/ is not what the scripts give
"""

import importlib.util
import sys
from pathlib import Path

import jupytext
import nbformat

ROOT = Path(__file__).resolve().parent.parent
SOLUTIONS = ROOT / "solutions"
NOTEBOOKS = ROOT / "notebooks"

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
# Tells jupytext to write no metadata back into a script made from the notebook
# (`jupytext --to py:percent`), so that script is the lab file, byte for byte.
JUPYTEXT_METADATA = {"notebook_metadata_filter": "-all", "cell_metadata_filter": "-all"}


def make_labs():
    """tools/make_labs.py as a module: it knows the student version of each solution."""
    spec = importlib.util.spec_from_file_location("make_labs", ROOT / "tools" / "make_labs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def notebook_text(script: str, folder: str) -> str:
    """The .ipynb file, as text, for a lab script in percent format, paired with the
    script of the same name in `folder` ("labs" or "solutions")."""
    notebook = jupytext.reads(script, fmt="py:percent")
    pairing = {"formats": f"notebooks/{folder}//ipynb,{folder}//py:percent"}  # with Jupyter started here
    notebook.metadata = {"jupytext": pairing | JUPYTEXT_METADATA, "kernelspec": dict(KERNELSPEC)}
    for number, cell in enumerate(notebook.cells):
        cell.id = f"cell-{number}"
    nbformat.validate(notebook)
    return nbformat.writes(notebook) + "\n"


def expected_notebooks() -> dict[Path, str]:
    """Every file of notebooks/ as the scripts say it should be."""
    notebooks = {}
    labs = make_labs()
    for solution in sorted(SOLUTIONS.glob("rag*-*.py")):
        script = solution.read_text(encoding="utf-8")
        name = solution.with_suffix(".ipynb").name
        notebooks[NOTEBOOKS / "solutions" / name] = notebook_text(script, "solutions")
        notebooks[NOTEBOOKS / "labs" / name] = notebook_text(labs.student_version(script, solution.name), "labs")
    return notebooks


def stale_notebooks() -> list[str]:
    """Notebooks (relative to notebooks/) that are missing, out of date, or have no script."""
    expected = expected_notebooks()
    stale = [
        path for path, text in expected.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    stale += [path for path in NOTEBOOKS.glob("*/rag*-*.ipynb") if path not in expected]
    return sorted(str(path.relative_to(NOTEBOOKS)) for path in stale)


def main(argv: list[str]) -> int:
    if "--check" in argv:
        return make_labs().report_stale(stale_notebooks(), "notebooks/", "make_notebooks.py", "the lab scripts")
    for path, text in expected_notebooks().items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
