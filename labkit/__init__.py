"""labkit: what runs, checks and shows a lab. Nothing in it teaches chunking.

A lab imports the names below from `labkit`; the modules hold one idea each:

- loading.py   load_lab: a lab's file imported as a module (its name has a hyphen)
- running.py   run_lab: exit codes, the TODO where a lab stops, show_hint
- hints.py     the three levels of a TODO's hint (--hint N on the command line)
- cases.py     Invariants, the checks a lab ends with; Case, tricky inputs to call;
               answer_span, where a lab's answer lies in its document
- view.py      show_chunks (a table) and view_chunks (chunks marked on their text)
- plots.py     plot_chunk_sizes and show_figure (a PNG file, or inline in a notebook)
- notebook.py  whether a lab runs in Jupyter, and what a notebook shows on failure
- embedders.py the wordllama and hash embedders behind academy_llm.embed
- openai_embedder.py  the openai embedder behind academy_llm.embed: the client, its sqlite
                      cache, the cost estimate and ACADEMY_MAX_COST (imports openai only to send)
- token_index.py  rag5's given speed machinery: TokenIndex (one tokenization, counts of any
               slice) and LineSeam (a line-break seam found fast)
- seams.py     rag5's given ground: SEAMS (coarsest first), packing_budget, next_clean_cut, and
               exact_fitting (mend, fit_over_budget: the rare chunk over budget, mended exactly)
- markdown.py  Markdown read as CommonMark has it: lines, front matter, the block scanner,
               regions, the tricky documents (rag6's student writes a reader of their own)
- public_tests.py  a lab's public grading tests, run in its own process as its last check
- safe_text.py safe_text: a text student code controls made safe to print (controls and
               format characters escaped, bounded); the grader prints through it too
- markdown_chunking.py  the course's chunker for real Markdown (RobustMarkdown: the scanner
               with CommonMark's rules, sections, pieces, overlap and kinds), beside rag6's own
- uncertainty.py  how sure a mean, or a difference of two methods' scores on the same
               questions, is: the normal approximation (rag8's bootstrap is the student's)
- compare.py   `chunking-labs compare DOCS --questions QUESTIONS`: rag8's harness on a
               learner's own documents; cli.py, the `chunking-labs` command that runs it
- start.py     `chunking-labs start DIR`: a student's copy of the labs from the installed course
- lessons/     one module a lab (lessons/rag4.py): what its lesson stands on and need not show, its
               page and answer, what its demonstration prints, the checks it ends with;
               lessons/dial.py, the report of a lab's one dial (recall with its interval a value)
"""

from labkit.cases import (
    TRICKY_TEXTS, WIDE_PIECE_SETTINGS, WIDE_PIECE_TEXTS, Case, Invariants, TrickyText, answer_span, returns,
    tricky_cases,
)
from labkit.hints import lab_hints
from labkit.loading import load_lab
from labkit.plots import plot_chunk_sizes, show_figure
from labkit.running import run_lab, show_hint
from labkit.view import show_chunks, view_chunks

__all__ = [
    "TRICKY_TEXTS", "WIDE_PIECE_SETTINGS", "WIDE_PIECE_TEXTS", "Case", "Invariants", "TrickyText", "answer_span",
    "returns", "tricky_cases", "load_lab", "plot_chunk_sizes", "show_figure", "run_lab", "show_hint", "show_chunks",
    "view_chunks", "lab_hints",
]
