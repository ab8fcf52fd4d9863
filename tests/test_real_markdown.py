"""The reference chunkers on real-world Markdown (benchmarks/real-markdown, 333 files of 19 projects).

rag6 and rag7 must hold on every file: exact slices in order, nothing lost, within budget,
no fence, table, indented code block or front matter cut, no exception. rag5 reads no
Markdown, so it answers for the structure only. The judge is tests/real_markdown.py, with a
real Markdown parser (markdown-it-py). The default run takes one file of each project at
one setting; `-m heavy` takes every file at four settings, each also with CRLF and lone-CR
line ends, two files at a time.
"""

from concurrent.futures import ProcessPoolExecutor

import pytest
from real_markdown import CORPUS, corpus_files, file_problems

SOLUTIONS = CORPUS.parent.parent / "solutions"


def one_file_a_project():
    firsts = {}
    for path in corpus_files():
        firsts.setdefault(path.relative_to(CORPUS).parts[0], path)
    return sorted(firsts.values())


def test_the_corpus_is_there_with_its_sources():
    assert len(corpus_files()) >= 300
    assert (CORPUS / "SOURCES.json").is_file()


@pytest.mark.parametrize("path", one_file_a_project(), ids=lambda path: path.relative_to(CORPUS).parts[0])
def test_one_file_of_each_project(path):
    problems = file_problems(path, SOLUTIONS, settings=((128, 16),), line_ends=("as stored", "CRLF"))
    assert not problems, "\n".join(problems[:10])


@pytest.mark.heavy
@pytest.mark.timeout(900)
def test_every_file_every_setting_every_line_end():
    files = corpus_files()
    with ProcessPoolExecutor(2) as pool:
        found = [line for lines in pool.map(file_problems, files, [SOLUTIONS] * len(files), chunksize=4)
                 for line in lines]
    assert not found, f"{len(found)} problems; the first:\n" + "\n".join(found[:20])
