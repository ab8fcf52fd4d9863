"""Attack (rag6): the TODOs answered by given code the lab imports. read_blocks returns the blocks of labkit's
CommonMark scanner (scan_blocks, which the lab imports for rag7 and rag10), markdown_chunks the course's robust
chunker (RobustMarkdown, which the lab runs beside the student's), verify asks labkit where the fences and
tables are (regions_by_kind). Nothing is written but the calls; pack_blocks stays a stub. Appended to rag6's
stub, after its functions, so these are the ones the grader calls (tests/test_sealed.py).

Unsealed, it earns 5.40 / 10 (read_blocks 3 of 3, markdown_chunks 2 of 2, verify 0.4 of 2), the hidden
tests included: they judge read_blocks by CommonMark's reading and markdown_chunks by what any good chunker
keeps, and the given code is both."""

ANSWERED = ("read_blocks", "markdown_chunks", "verify")  # the TODOs the given code does; pack_blocks stays a stub

SOURCE = '''

# %%
def read_blocks(text, start=0):
    lines = split_lines(text, start)
    kinds = ("heading", "code", "table", "list", "quote")
    return [Block(block.kind if block.kind in kinds else "paragraph", lines[block.first].start,
                  lines[block.last - 1].end, block.level, block.title) for block in scan_blocks(lines)]


def markdown_chunks(text, max_tokens, overlap=0):
    return robust.markdown_chunks(text, max_tokens, overlap)


def verify(text, chunks):
    from labkit.markdown import regions_by_kind

    regions = [region for found in regions_by_kind(text).values() for region in found]
    for chunk in chunks:
        for start, end in regions:
            if start < chunk.start < end or start < chunk.end < end:
                raise ValueError(f"a chunk cuts [{start}, {end})")
'''

# Then the seal undone: the sealed modules executed again from their files, which gives back their functions
# (markdown_chunks' 2 points and verify's 0.4, unflagged, were the files readable); the worker refuses the
# reading, and flags it.
RELOADED = '''

# %%
def _unsealed():
    import importlib

    import labkit.markdown
    import labkit.markdown_chunking

    importlib.reload(labkit.markdown)
    return importlib.reload(labkit.markdown_chunking)


def markdown_chunks(text, max_tokens, overlap=0):
    return _unsealed().RobustMarkdown(rag5).markdown_chunks(text, max_tokens, overlap)
'''
