"""Given code that does a lab's own TODOs, out of the lab's reach while those TODOs are judged.

A lab stands on given code, and some of it does what the lab's TODOs ask: rag6 imports labkit's
Markdown scanner (CommonMark's reading of blocks, which rag6's grader judges read_blocks by) and
the course's robust chunker (a Markdown chunker that keeps blocks whole, as markdown_chunks must),
because the lab shows them beside the student's and later labs stand on them. A read_blocks that
calls the scanner, a markdown_chunks that calls the robust chunker, a verify that asks labkit where
the fences are: each would earn its points with nothing written.

So while a lab is judged, the given functions that do its TODOs' work raise instead (GivenAnswer,
naming the function): in the grader's worker for the whole run (tools/grading/worker.py seals them
before the lab is loaded, and refuses, with a flag, any reading of their modules' files after,
which a reload or an executed copy of the module would need), and in the lab's own last check while
it runs the public tests
(labkit/public_tests.py), so that the lab's check and the grader decide alike. The lab's own
report, which shows the given code beside the student's, runs unsealed. ANSWERS lists them by lab;
tests/test_sealed.py grades a lab whose TODOs call them and checks it earns nothing for them.
"""

from __future__ import annotations

import importlib
import importlib.util

# lab -> {module: names of its functions (Class.method for a method) that do a TODO of the lab}
ANSWERS = {
    "rag6": {
        "labkit.markdown": ("Scanner.scan", "regions_to_keep_whole", "regions_by_kind"),
        "labkit.markdown_chunking": (
            "scan_blocks", "read_document", "sections_of", "fold_tiny_parents", "pieces_of", "seam_pieces",
            "glue_headings", "repack_exactly", "pack_exactly", "section_chunks", "RobustMarkdown.read_document",
            "RobustMarkdown.chunk_section", "RobustMarkdown.section_chunks", "RobustMarkdown.markdown_chunks"),
        "labkit.lessons.rag6": ("count_cuts", "parser_regions"),
    },
}


class GivenAnswer(Exception):
    """A lab called, while it was judged, given code that does the work of one of its TODOs."""


def stand_in(lab: str, where: str):
    """What `where` is while `lab` is judged: a function that refuses, saying what to write instead."""
    def sealed(*args, **kwargs):
        raise GivenAnswer(f"{where} is given code that does the work of a TODO of {lab}; while {lab} is "
                          f"judged it cannot be called: your own functions must do that work")
    sealed.__qualname__ = sealed.__name__ = where.rsplit(".", 1)[-1]
    return sealed


def seal(lab: str, namespace: dict | None = None):
    """Replace the given functions that do `lab`'s TODOs by stand-ins that refuse, in their modules and
    (where the lab already took them by name) in `namespace`; return a function that puts them back."""
    undo = []
    for module_name, names in ANSWERS.get(lab, {}).items():
        module = importlib.import_module(module_name)
        for name in names:
            owner_name, _, attribute = name.rpartition(".")
            owner = getattr(module, owner_name) if owner_name else module
            original = vars(owner)[attribute]
            undo.append((owner, attribute, original))
            setattr(owner, attribute, stand_in(lab, f"{module_name}.{name}"))
            for key, value in list((namespace or {}).items()):
                if value is original or getattr(value, "__func__", None) is original:
                    undo.append((namespace, key, value))
                    namespace[key] = stand_in(lab, f"{module_name}.{name}")

    def restore() -> None:
        for owner, attribute, original in reversed(undo):
            if isinstance(owner, dict):
                owner[attribute] = original
            else:
                setattr(owner, attribute, original)

    return restore


def files(lab: str) -> list[str]:
    """The source and bytecode files of the modules sealed for `lab`: read again (a reload, a copy
    executed), they would give the lab back what seal() took; the grader's worker refuses them."""
    found = []
    for module_name in ANSWERS.get(lab, {}):
        source = importlib.import_module(module_name).__file__
        found += [source, importlib.util.cache_from_source(source)]
    return found
