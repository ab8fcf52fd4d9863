"""Loading a lab as a module: its file has a hyphen in its name, so `import` cannot reach it."""

from __future__ import annotations

import importlib.util
import sys
import tokenize
import zlib
from pathlib import Path

loaded_labs: dict[Path, object] = {}


def lab_file(name: str, folder) -> Path:
    """The script of lab `name` ("rag4") in `folder`: folder/rag4-chunking.py."""
    matches = sorted(Path(folder).glob(f"{name}-*.py"))
    if len(matches) != 1:
        found = ", ".join(m.name for m in matches) or "none"
        raise FileNotFoundError(f"expected one {name}-*.py in {folder}, found {found}")
    return matches[0]


def lab_folder(caller_file: str | None) -> Path:
    """Where load_lab looks: beside the lab that calls it.

    A notebook has no file of its own; it stands for the script it is paired
    with (tools/make_notebooks.py). Jupyter runs notebooks/labs/rag5-....ipynb
    in notebooks/labs, so its labs are the scripts in labs/, where saving the
    rag4 notebook put the student's work.
    """
    if caller_file:
        return Path(caller_file).parent
    here = Path.cwd()
    return here.parent.parent / here.name if here.parent.name == "notebooks" else here


def load_lab(name: str, folder=None):
    """Import lab `name` ("rag4") as a module, without running its demo.

    By default the lab comes from lab_folder: labs/ for a student, solutions/
    for the reference. (The grader chooses the earlier labs itself: tools/grading/worker.py.)
    """
    if folder is None:
        folder = lab_folder(sys._getframe(1).f_globals.get("__file__"))
    path = lab_file(name, folder).resolve()
    if path not in loaded_labs:
        check_encoding(path)
        module_name = f"lab_{name}_{zlib.crc32(str(path).encode()):08x}"
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


def check_encoding(path: Path) -> None:
    """SyntaxError, as `python lab.py` raises it, for a lab file that is not valid in its encoding.

    An import compiles the file's bytes, and that lets an invalid byte in a
    comment through, where running the file stops at once: a lab must load
    only where it runs.
    """
    data = Path(path).read_bytes()
    try:
        encoding, _ = tokenize.detect_encoding(iter(data.splitlines(keepends=True)).__next__)
    except SyntaxError:  # a bad byte in the first two lines, where a declaration could be
        encoding = "utf-8"
    try:
        data.decode(encoding)
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise SyntaxError(f"Non-{encoding.upper()} byte {data[error.start:error.start + 1]!r} in {path.name} "
                          f"on line {line}: save the file as {encoding.upper()}") from None
