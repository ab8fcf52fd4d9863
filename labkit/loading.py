"""Loading a lab as a module: its file has a hyphen in its name, so `import` cannot reach it."""

from __future__ import annotations

import importlib.abc
import importlib.util
import json
import sys
import zlib
from pathlib import Path


loaded_labs: dict[Path, object] = {}


def lab_file(name: str, folder) -> Path:
    """The file of lab `name` ("rag4") in `folder`: folder/rag4-chunking.py, or
    in a folder of notebooks (and no script), folder/rag4-chunking.ipynb."""
    for pattern in (f"{name}-*.py", f"{name}-*.ipynb"):
        matches = sorted(Path(folder).glob(pattern))
        if len(matches) == 1:
            return matches[0]
        if matches:
            found = ", ".join(m.name for m in matches)
            raise FileNotFoundError(f"expected one {pattern} in {folder}, found {found}")
    raise FileNotFoundError(f"expected one {name}-*.py (or {name}-*.ipynb) in {folder}, found none")


def load_lab(name: str, folder=None):
    """Import lab `name` ("rag4") as a module, without running its demo.

    Lab files have hyphens in their names, so `import` cannot reach them.
    By default the lab comes from the folder of the file that calls this
    (labs/ for a student, solutions/ for the reference). A notebook has no
    file of its own, so there it is the current folder, which Jupyter sets to
    the notebook's: notebooks/labs/rag5-....ipynb imports the rag4 notebook
    beside it, so the work saved there is what rag5 builds on. (The grader
    chooses the earlier labs itself: tests/worker.py.)
    """
    if folder is None:
        caller = sys._getframe(1).f_globals.get("__file__")
        folder = Path(caller).parent if caller else Path.cwd()
    path = lab_file(name, folder).resolve()
    if path not in loaded_labs:
        module_name = f"lab_{name}_{zlib.crc32(str(path).encode()):08x}"
        if path.suffix == ".ipynb":
            spec = importlib.util.spec_from_loader(module_name, NotebookLoader(path), origin=str(path))
        else:
            spec = importlib.util.spec_from_file_location(module_name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[module_name] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[module_name]
            raise
        loaded_labs[path] = module
    return loaded_labs[path]


class NotebookLoader(importlib.abc.Loader):
    """Imports the code cells of a notebook as a module: how load_lab reads an .ipynb lab."""

    def __init__(self, path: Path):
        self.path = path

    def create_module(self, spec):
        return None  # the usual empty module

    def exec_module(self, module) -> None:
        """Run the code cells in order, each compiled on its own and read as IPython reads it.

        Compiling cell by cell lets an error name a line of its cell; IPython's
        reading turns a `%magic` into a call, so the code runs as it does in
        the notebook. __file__ is the notebook, so a lab it loads in turn is
        looked for beside it. The last cell's `if __name__ == "__main__":` is
        false here, as for an imported script.
        """
        from IPython.core.inputtransformer2 import TransformerManager

        module.__file__ = str(self.path)
        with open(self.path, encoding="utf-8") as file:
            cells = json.load(file)["cells"]
        reader = TransformerManager()
        for cell in cells:
            if cell["cell_type"] == "code":
                source = reader.transform_cell("".join(cell["source"]))
                exec(compile(source, str(self.path), "exec"), module.__dict__)
