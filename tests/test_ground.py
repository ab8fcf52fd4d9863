"""The given ground (labkit/ground.py) is what the reference labs make today, and reads back exact."""

import importlib.util
from pathlib import Path

import pytest

from academy_llm import corpus_pages
from labkit import ground

_spec = importlib.util.spec_from_file_location("make_ground", Path(__file__).parent.parent / "tools" / "make_ground.py")
make_ground = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_ground)


@pytest.mark.parametrize("name", sorted(make_ground.MAKERS))
def test_ground_is_current(name):
    def spans(chunks_by_page):
        return {page: [(c.start, c.end, c.header) for c in chunks] for page, chunks in chunks_by_page.items() if chunks}

    assert spans(make_ground.MAKERS[name]()) == spans(ground.chunks(name)), \
        f"datasets/ground/{name}.jsonl is out of date: run python tools/make_ground.py {name}"


def test_ground_reads_back_exact_slices():
    pages = corpus_pages()
    for name in ground.names():
        for page, chunks in ground.chunks(name).items():
            for chunk in chunks:
                assert chunk.text == pages[page][chunk.start:chunk.end]


def test_unknown_ground_is_named_in_one_line():
    with pytest.raises(FileNotFoundError, match="no given ground named 'nothing'"):
        ground.chunks("nothing")


def test_every_shipped_set_has_its_maker():
    assert sorted(ground.names()) == sorted(make_ground.MAKERS), \
        "datasets/ground/ holds a set no maker writes, or a maker's set is missing: run python tools/make_ground.py"
