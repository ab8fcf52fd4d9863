# %% [markdown]
# # rag6: Markdown-aware chunking
#
# Documentation is not a stream of sentences. It has **structure**: sections
# under headings, code blocks, tables, lists. rag5's splitter sees only seams
# of whitespace, so it will happily cut a table between two rows or a code
# block between two lines, and a chunk that starts halfway down a table has
# lost the header row that says what its numbers mean.
#
# This lab chunks structure first, size second:
#
# 1. read the **front matter** (the `---` block at the top) as metadata;
# 2. find the **blocks**: headings, fenced code, tables, lists, quotes, HTML,
#    paragraphs;
# 3. group blocks into **sections**, each with its heading path, such as
#    `("Install", "On Linux")`;
# 4. pack each section's blocks up to the budget with rag5's machinery, never
#    cutting inside a fenced block or a table. One that alone is over budget
#    becomes its own chunk, flagged `oversize`.
#
# You write the pieces that recognise Markdown (`fence_opening`,
# `closes_fence`, `atx_heading`, `is_table_start`), the heading path
# (`enter_section`), and the packing of a section (`chunk_section`).

# %%
import bisect
import re
import statistics
from dataclasses import dataclass, field, replace
from functools import partial
from typing import NamedTuple

from academy_llm import (
    DATASETS,
    check_chunking,
    check_text_and_window,
    corpus_pages,
    embed,
    is_clean_cut,
    make_chunk,
    top_k,
)
from labkit import (
    Case,
    Invariants,
    load_lab,
    plot_chunk_sizes,
    run_lab,
    show_figure,
    tricky_cases,
    view_chunks,
)

rag5 = load_lab("rag5")  # TokenIndex, split_at_seams, pack, mend

# %% [markdown]
# ## 1. Lines with exact offsets
#
# Markdown is defined line by line, so we read the text as lines. Each line
# keeps its offsets in the document and its line ending (`\n`, `\r\n` or a
# lone `\r`), so that every block we find is still an exact slice.


# %%
class Line(NamedTuple):
    start: int  # offset of the line's first character
    end: int  # offset just after its line ending
    text: str  # the line without its ending (and, inside a container, without its prefix)


LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")


def iter_lines(text):
    """The lines of `text` one by one, each with its offsets; line endings stay in the offsets."""
    for match in LINE.finditer(text):
        yield Line(match.start(), match.end(), match.group().rstrip("\r\n"))


def split_lines(text, start=0):
    """All the lines of `text` from offset `start` on, as iter_lines gives them, but faster.

    str.splitlines does the splitting in C. It also splits at characters that
    Markdown reads as text (a form feed, U+2028, ...): a piece that does not
    end with \\n or \\r is joined to the next one.
    """
    lines = []
    line_start = position = start
    for piece in text[start:].splitlines(keepends=True):
        position += len(piece)
        if piece.endswith(("\n", "\r")):
            lines.append(Line(line_start, position, text[line_start:position].rstrip("\r\n")))
            line_start = position
    if line_start < len(text):
        lines.append(Line(line_start, len(text), text[line_start:]))
    return lines


def is_blank(line):
    """True for a line of nothing but spaces and tabs (CommonMark's blank line: a form feed is text)."""
    return line.text.strip(" \t") == ""


def indent_of(text):
    """Columns of leading whitespace, a tab reaching the next multiple of 4."""
    column = 0
    for char in text:
        if char == " ":
            column += 1
        elif char == "\t":
            column += 4 - column % 4
        else:
            break
    return column


# %% [markdown]
# ## 2. Front matter
#
# Many documentation sites start each page with a YAML block between two
# `---` lines: `id`, `title`, `applies_to`... It is metadata, not prose. We
# read its `key: value` lines into a dict and keep the block as one chunk of
# its own (kind `"front_matter"`), so nothing is lost and offsets still point
# into the whole file.


# %%
def front_matter(text):
    """(metadata, end offset) of a leading `---` block, or ({}, 0) if there is none."""
    lines = iter_lines(text)  # one at a time: only the first few are read
    first = next(lines, None)
    if first is None or first.text.lstrip("\ufeff").rstrip() != "---":
        return {}, 0
    metadata = {}
    for line in lines:
        if line.text.rstrip() in ("---", "..."):
            return metadata, line.end
        key, colon, value = line.text.partition(":")
        if colon and key.strip() and not key.startswith((" ", "\t", "-")):
            metadata[key.strip()] = value.strip().strip("\"'")
    return {}, 0  # never closed: not front matter, just text


# %% [markdown]
# ## 3. Recognising blocks
#
# CommonMark's rules, in the small:
#
# - A **fence** opens with 3 or more backticks or tildes (up to 3 spaces of
#   indent). It closes at a line of the *same* character, at least as long,
#   with nothing after it but spaces. So a ```` block can hold ``` lines,
#   and a `#` line inside a fence is code, not a heading. A fence that is
#   never closed runs to the end of the document.
# - An **ATX heading** is 1-6 `#` then a space (or nothing): `## Install`.
#   Optional closing `#`s are not part of the title.
# - A **table** (GitHub's flavour) is a header row with a `|`, followed by a
#   delimiter row such as `|---|:--:|` or `--- | ---`, with as many cells.
#   Leading and trailing pipes are optional.


# %%
FENCE_OPENING = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")  # groups: the fence, the rest of the line
FENCE_CLOSING = re.compile(r"^ {0,3}(`+|~+)[ \t]*$")  # group: the fence
ATX_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+|$)(.*)$")  # groups: the #s, the rest of the line
CLOSING_HASHES = re.compile(r"(?:^|[ \t]+)#+[ \t]*$")


def fence_opening(text):
    """(char, length) if `text` opens a fenced code block, else None."""
    # TODO(rag6): Tell whether a line opens a fenced code block, and with which character and how
    #   long a fence: that decides which line closes the block, and everything up to it
    #   is code that no chunk may cut and no heading rule may read.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) fence_opening(): Tell whether a line opens a fenced code block, and with "
        "which character and how long a fence: that decides which line closes the block, and "
        "everything up to it is code that no chunk may cut and no heading rule may read. More "
        "help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook."
    )


def closes_fence(text, char, length):
    """True if `text` closes a fence opened with `length` times `char`."""
    # TODO(rag6): Tell whether a line closes the fenced block opened with `length` times `char`, so
    #   that the block ends where CommonMark says and a shorter or different fence inside
    #   it stays code.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) closes_fence(): Tell whether a line closes the fenced block opened with "
        "`length` times `char`, so that the block ends where CommonMark says and a shorter or "
        "different fence inside it stays code. More help: python labs/rag6-markdown-chunking.py "
        "--hint 2, or show_hint(2) in a notebook."
    )


def atx_heading(text):
    """(level, title) if `text` is an ATX heading such as '## Install ##', else None."""
    # TODO(rag6): Recognise a `#` heading and give its level and title: headings open the sections,
    #   and their titles become each chunk's heading path.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) atx_heading(): Recognise a `#` heading and give its level and title: "
        "headings open the sections, and their titles become each chunk's heading path. More "
        "help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook."
    )


def table_cells(text):
    """The cells of a table row: split on unescaped |, without an empty first or last cell."""
    cells = re.split(r"(?<!\\)\|", text.strip())
    if cells and cells[0].strip() == "":
        cells = cells[1:]
    if cells and cells[-1].strip() == "":
        cells = cells[:-1]
    return cells


def is_delimiter_row(text):
    """True for a table's delimiter row: cells like ---, :--, --: or :-: ."""
    stripped = text.strip()
    if not stripped or indent_of(text) >= 4 or stripped[0] not in "|-:":
        return False
    if re.match(r"^-[ \t]", stripped) or not re.fullmatch(r"[|\-: \t]+", stripped):
        return False
    cells = stripped.split("|")
    inner = [cell.strip() for cell in cells]
    for number, cell in enumerate(inner):
        if not cell and number not in (0, len(inner) - 1):
            return False
        if cell and not re.fullmatch(r":?-+:?", cell):
            return False
    return True


def is_table_start(lines, i):
    """True if lines[i] is a table's header row (lines[i + 1] being its delimiter row)."""
    # TODO(rag6): Tell whether line i starts a GitHub table, so that the chunker keeps the table
    #   whole with its header row, which names the columns every row's values depend on.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) is_table_start(): Tell whether line i starts a GitHub table, so that the "
        "chunker keeps the table whole with its header row, which names the columns every row's "
        "values depend on. More help: python labs/rag6-markdown-chunking.py --hint 2, or "
        "show_hint(2) in a notebook."
    )


# %% [markdown]
# The rest of the block rules are given: thematic breaks, setext headings
# (`Title` over `===` or `---`), lists and block quotes (which can hold fences
# and tables of their own), HTML blocks, indented code and paragraphs. They
# follow CommonMark closely enough for real documentation; the tests compare
# the protected regions with those of a real Markdown parser.

# %%
THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
LIST_ITEM = re.compile(r"^( {0,3})([-+*]|\d{1,9}[.)])([ \t]+|$)")
QUOTE_PREFIX = re.compile(r"^ {0,3}> ?")
HTML_ENDS = [  # CommonMark's HTML blocks 1-5: (start, end) patterns
    (re.compile(r"^ {0,3}<(?:script|pre|style|textarea)(?:[ \t>]|$)", re.I),
     re.compile(r"</(?:script|pre|style|textarea)>", re.I)),
    (re.compile(r"^ {0,3}<!--"), re.compile(r"-->")),
    (re.compile(r"^ {0,3}<\?"), re.compile(r"\?>")),
    (re.compile(r"^ {0,3}<![A-Za-z]"), re.compile(r">")),
    (re.compile(r"^ {0,3}<!\[CDATA\["), re.compile(r"\]\]>")),
]
HTML_BLOCK_TAG = re.compile(  # HTML block 6: ends at a blank line
    r"^ {0,3}</?(?:address|article|aside|base|basefont|blockquote|body|caption|center|col|"
    r"colgroup|dd|details|dialog|dir|div|dl|dt|fieldset|figcaption|figure|footer|form|frame|"
    r"frameset|h[1-6]|head|header|hr|html|iframe|legend|li|link|main|menu|menuitem|nav|"
    r"noframes|ol|optgroup|option|p|param|search|section|summary|table|tbody|td|tfoot|th|"
    r"thead|title|tr|track|ul)(?:[ \t]|/?>|$)", re.I)
HTML_LONE_TAG = re.compile(  # HTML block 7: a lone open or close tag; cannot interrupt a paragraph
    r"^ {0,3}(?:<[A-Za-z][A-Za-z0-9-]*(?:\s+[A-Za-z_:][\w.:-]*(?:\s*=\s*(?:[^\s\"'=<>`]+|'[^']*'|"
    r"\"[^\"]*\"))?)*\s*/?>|</[A-Za-z][A-Za-z0-9-]*\s*>)[ \t]*$")
MAX_NESTING = 24  # containers deeper than this are read as plain text


@dataclass
class Block:
    kind: str  # heading, code, table, list, quote, html, rule, indented_code, paragraph
    first: int  # index of its first line
    last: int  # index just after its last line
    level: int = 0  # heading level
    title: str = ""  # heading title
    nested: list = field(default_factory=list)  # (start, end, kind) of fences/tables inside


def first_character(text):
    """The line's first character after its leading spaces ("" for a blank line).

    It rules most block kinds out at a glance: no block but a paragraph or a
    table starts with a letter, and only HTML starts with "<".
    """
    return text.lstrip(" ")[:1]


def html_block_end(lines, i, in_paragraph):
    """Index after the HTML block starting at lines[i], or None if none starts there."""
    if first_character(lines[i].text) != "<":
        return None
    for start, end in HTML_ENDS:
        if start.match(lines[i].text):
            j = i
            while j < len(lines) and not end.search(lines[j].text):
                j += 1
            return min(j + 1, len(lines))
    if HTML_BLOCK_TAG.match(lines[i].text) or (not in_paragraph and HTML_LONE_TAG.match(lines[i].text)):
        j = i + 1
        while j < len(lines) and not is_blank(lines[j]):
            j += 1
        return j
    return None


def list_item(text):
    """(content column, is_ordered, first number or None, has content) for a list item line."""
    match = LIST_ITEM.match(text)
    if not match:
        return None
    indent, marker, spaces = match.groups()
    content = text[match.end():].strip(" \t")  # as in is_blank: a form feed is content
    width = len(spaces) if 1 <= len(spaces) <= 4 and content else 1
    ordered = marker[0].isdigit()
    return len(indent) + len(marker) + width, ordered, int(marker[:-1]) if ordered else None, bool(content)


def interrupts_paragraph(lines, i):
    """True if lines[i] starts a block that can end a paragraph."""
    text = lines[i].text
    if is_blank(lines[i]) or indent_of(text) >= 4:
        return is_blank(lines[i])
    if first_character(text).isalpha():
        return is_table_start(lines, i)
    if fence_opening(text) or atx_heading(text) or QUOTE_PREFIX.match(text) or THEMATIC_BREAK.match(text):
        return True
    if html_block_end(lines, i, in_paragraph=True) is not None or is_table_start(lines, i):
        return True
    item = list_item(text)
    return bool(item) and item[3] and (not item[1] or item[2] == 1)


def ends_table(lines, i):
    """True if lines[i] ends a table: blank, indented code, or the start of another block."""
    text = lines[i].text
    if is_blank(lines[i]) or indent_of(text) >= 4:
        return True
    if first_character(text).isalpha() or first_character(text) == "|":  # another row
        return False
    return bool(
        fence_opening(text) or atx_heading(text) or QUOTE_PREFIX.match(text)
        or THEMATIC_BREAK.match(text) or list_item(text)
        or html_block_end(lines, i, in_paragraph=True) is not None
    )


def strip_columns(text, columns):
    """`text` without its first `columns` columns of indentation."""
    position = column = 0
    while position < len(text) and column < columns and text[position] in " \t":
        column += 4 - column % 4 if text[position] == "\t" else 1
        position += 1
    return text[position:]


class ContainerText:
    """The lines of a list item or quote, read as they come, to know if a lazy line may follow.

    CommonMark allows a line without the container's indent or `>` only as the
    continuation of a paragraph: not after a blank line or a heading, and not
    inside a fence that is still open.
    """

    def __init__(self):
        self.lines = []
        self.fence = None
        self.in_paragraph = False

    def add(self, line):
        self.lines.append(line)
        text = line.text
        if self.fence is not None:
            if closes_fence(text, *self.fence):
                self.fence = None
            self.in_paragraph = False
            return
        self.fence = fence_opening(text)
        self.in_paragraph = not is_blank(line) and not (self.fence or atx_heading(text))

    def takes_lazy_line(self):
        return self.in_paragraph


def list_end(lines, i):
    """(index after the list starting at lines[i], the content lines of each of its items)."""
    items = []
    j = i
    while j < len(lines):
        item = list_item(lines[j].text)
        if item is None:
            break
        inner = ContainerText()  # each item is a container of its own
        items.append(inner.lines)
        column = item[0]
        marker_end = LIST_ITEM.match(lines[j].text).end()
        inner.add(Line(lines[j].start, lines[j].end, lines[j].text[marker_end:]))
        j += 1
        while j < len(lines):
            line = lines[j]
            if is_blank(line):
                inner.add(Line(line.start, line.end, ""))
            elif indent_of(line.text) >= column:
                inner.add(Line(line.start, line.end, strip_columns(line.text, column)))
            elif inner.takes_lazy_line() and not interrupts_paragraph(lines, j) and not list_item(line.text):
                inner.add(Line(line.start, line.end, line.text))
            else:
                break
            j += 1
        if j < len(lines) and not list_item(lines[j].text):
            break
    # Trailing blank lines belong after the list, unless the last item's fence is
    # still open: an unclosed fence runs to the end of its item, blank lines and all.
    while inner.fence is None and items[-1][-1].text == "" and is_blank(lines[j - 1]):
        items[-1].pop()
        j -= 1
    return j, items


def quote_end(lines, i):
    """(index after the block quote starting at lines[i], its lines without the > prefix)."""
    inner = ContainerText()
    j = i
    while j < len(lines):
        prefix = QUOTE_PREFIX.match(lines[j].text)
        if prefix:
            inner.add(Line(lines[j].start, lines[j].end, lines[j].text[prefix.end():]))
        elif not is_blank(lines[j]) and inner.takes_lazy_line() and not interrupts_paragraph(lines, j):
            inner.add(Line(lines[j].start, lines[j].end, lines[j].text))
        else:
            break
        j += 1
    return j, inner.lines


def scan_blocks(lines, depth=0):
    """The blocks of `lines`, in order. Blank lines belong to no block (they join the one before)."""
    blocks = []
    i = 0
    while i < len(lines):
        line = lines[i]
        text = line.text
        if is_blank(line):
            i += 1
            continue
        if indent_of(text) >= 4:
            j = i + 1
            while j < len(lines) and (is_blank(lines[j]) or indent_of(lines[j].text) >= 4):
                j += 1
            while is_blank(lines[j - 1]):
                j -= 1
            blocks.append(Block("indented_code", i, j))
            i = j
            continue
        if first_character(text).isalpha():  # no other block starts with a letter
            blocks.append(table_or_paragraph(lines, i))
            i = blocks[-1].last
            continue
        fence = fence_opening(text)
        if fence:
            j = i + 1
            while j < len(lines) and not closes_fence(lines[j].text, *fence):
                j += 1
            blocks.append(Block("code", i, min(j + 1, len(lines))))  # unclosed: to the end
            i = min(j + 1, len(lines))
            continue
        heading = atx_heading(text)
        if heading:
            blocks.append(Block("heading", i, i + 1, level=heading[0], title=heading[1]))
            i += 1
            continue
        if THEMATIC_BREAK.match(text):  # before lists: "- - -" is a break, not an item
            blocks.append(Block("rule", i, i + 1))
            i += 1
            continue
        if QUOTE_PREFIX.match(text):
            j, inner = quote_end(lines, i)
            blocks.append(Block("quote", i, j, nested=nested_regions(inner, depth)))
            i = j
            continue
        if list_item(text):
            j, items = list_end(lines, i)
            nested = [region for item in items for region in nested_regions(item, depth)]
            blocks.append(Block("list", i, j, nested=nested))
            i = j
            continue
        html_end = html_block_end(lines, i, in_paragraph=False)
        if html_end is not None:
            blocks.append(Block("html", i, html_end))
            i = html_end
            continue
        blocks.append(table_or_paragraph(lines, i))
        i = blocks[-1].last
    return blocks


def table_or_paragraph(lines, i):
    """The table, paragraph or setext heading starting at lines[i]: what is left when no other block starts."""
    if is_table_start(lines, i):
        j = i + 2
        while j < len(lines) and not ends_table(lines, j):
            j += 1
        return Block("table", i, j)
    end, level = paragraph_end(lines, i)
    if level:
        title = " ".join(line.text.strip() for line in lines[i : end - 1])
        return Block("heading", i, end, level=level, title=title)
    return Block("paragraph", i, end)


def paragraph_end(lines, i):
    """(index after the paragraph starting at lines[i], its setext heading level or 0).

    A paragraph runs until a blank line or a block that interrupts it. A line of
    `===` or `---` under it makes it a setext heading; that test comes first,
    because `---` under text is an underline, not a thematic break.
    """
    j = i + 1
    while j < len(lines):
        underline = SETEXT_UNDERLINE.match(lines[j].text)
        if underline:
            return j + 1, 1 if underline.group(1)[0] == "=" else 2
        if interrupts_paragraph(lines, j):
            break
        j += 1
    return j, 0


def nested_regions(inner_lines, depth):
    """(start, end, kind) of the fences and tables inside a container's lines."""
    if depth >= MAX_NESTING:
        return []
    regions = []
    for block in scan_blocks(inner_lines, depth + 1):
        if block.kind in ("code", "table"):
            regions.append((inner_lines[block.first].start, inner_lines[block.last - 1].end, block.kind))
        regions += block.nested
    return regions


# %% [markdown]
# ## 4. Sections and heading paths
#
# Each heading opens a section. Its **heading path** is the chain of headings
# above it: under `# Install`, `## On Linux` has the path
# `("Install", "On Linux")`; a later `## On macOS` replaces `On Linux`, and a
# later `# Upgrade` starts afresh. The path says what a chunk is *about*,
# even when its text never says it (rag7 puts it to work).


# %%
def enter_section(path, level, title):
    """The heading path after a heading of `level` (1-6) titled `title`.

    `path` holds (level, title) pairs from the outermost heading in.
    """
    # TODO(rag6): Give the heading path after a new heading, so that every chunk knows which chain
    #   of headings it sits under, even when its own text never names them.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) enter_section(): Give the heading path after a new heading, so that every "
        "chunk knows which chain of headings it sits under, even when its own text never names "
        "them. More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a "
        "notebook."
    )


@dataclass
class Section:
    path: tuple  # ((level, title), ...)
    start: int  # offset of its first character (its heading, if it has one)
    end: int  # offset after its last character
    blocks: list  # [(kind, start, end, tokens)] in order, tiling [start, end)


def sections_of(text, body_start, lines, blocks, index):
    """Group the blocks into sections; block spans run to the next block's start."""
    spans = []
    for number, block in enumerate(blocks):
        start = body_start if number == 0 else lines[block.first].start
        end = lines[blocks[number + 1].first].start if number + 1 < len(blocks) else len(text)
        spans.append((start, end))
    sizes = index.estimates(spans)  # every block's tokens, in one call
    sections = []
    path = ()
    for block, (start, end), tokens in zip(blocks, spans, sizes):
        if block.kind == "heading" or not sections:
            if block.kind == "heading":
                path = enter_section(path, block.level, block.title)
            sections.append(Section(path, start, end, []))
        sections[-1].blocks.append((block.kind, start, end, tokens))
        sections[-1].end = end
    return sections


def body_tokens(section):
    """Tokens of a section's text without its heading lines."""
    return sum(tokens for kind, _, _, tokens in section.blocks if kind != "heading")


def fold_tiny_parents(sections, tiny_tokens):
    """Merge a section with almost no body into the next one when that one is its child.

    "## General" with one line above "### Linux" would otherwise be a chunk of
    its own, too small to be worth retrieving; folded, its words go with its child.
    """
    folded = []
    for section in sections:
        previous = folded[-1] if folded else None
        if (
            previous is not None
            and body_tokens(previous) < tiny_tokens
            and len(section.path) > len(previous.path)
            and section.path[: len(previous.path)] == previous.path
        ):
            folded[-1] = Section(section.path, previous.start, section.end, previous.blocks + section.blocks)
        else:
            folded.append(section)
    return folded


# %% [markdown]
# ## 5. Packing a section without cutting what must stay whole
#
# Within a section, each block is a piece if it fits the budget. A paragraph,
# list or quote that is too big is split at rag5's seams, but never at a seam
# inside a fence or table nested in it. A fenced block or table that is too
# big stays whole: it becomes its own chunk, flagged `oversize`. (Cutting a
# table between rows would keep the budget, but every chunk after the first
# would lose the header row that names its columns. rag7 shows how to cut a
# table into rows that keep them, and measures what that wins and costs.)
#
# A heading never ends a chunk: it is glued to the piece after it. Then the
# pieces are packed greedily, as in rag5, and each chunk's count read from the index.

# %%
PROTECTED = ("code", "table")


def merge_regions(regions):
    """Sorted, disjoint (start, end, kind) regions covering the same characters."""
    merged = []
    for start, end, kind in sorted(regions):
        if merged and start < merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], end), merged[-1][2])
        else:
            merged.append((start, end, kind))
    return merged


def inside(position, regions):
    """The region of the sorted, disjoint `regions` strictly around `position`, or None."""
    number = bisect.bisect_right(regions, (position, float("inf"), "")) - 1
    if number >= 0 and regions[number][0] < position < regions[number][1]:
        return regions[number]
    return None


def regions_within(regions, start, end):
    """The regions that lie inside [start, end)."""
    found = []
    number = bisect.bisect_left(regions, (start, 0, ""))
    while number < len(regions) and regions[number][1] <= end:  # sorted and disjoint
        found.append(regions[number])
        number += 1
    return found


def pieces_of(text, section, budget, index, regions):
    """(start, end, whole, tokens) pieces tiling a section; `whole` pieces must not be cut."""
    pieces = []
    for kind, start, end, tokens in section.blocks:
        if kind in PROTECTED or tokens <= budget:
            pieces.append((start, end, kind in PROTECTED, tokens))
            continue
        # Too big: split at seams, but keep each fence or table nested in it whole.
        cursor = start
        for region_start, region_end, _ in regions_within(regions, start, end):
            if cursor < region_start:
                pieces += cuttable(rag5.split_at_seams(text, cursor, region_start, budget, index), index)
            pieces.append((region_start, region_end, True, index.estimate(region_start, region_end)))
            cursor = region_end
        if cursor < end:
            pieces += cuttable(rag5.split_at_seams(text, cursor, end, budget, index), index)
    headings = {(start, end) for kind, start, end, _ in section.blocks if kind == "heading"}
    glued = []
    waiting = None  # (start, tokens) of headings waiting to be glued to the piece after them
    for number, (start, end, whole, tokens) in enumerate(pieces):
        is_heading = (start, end) in headings
        if waiting is not None:
            start, tokens = waiting[0], waiting[1] + tokens
            waiting = None
        if is_heading and number + 1 < len(pieces):
            waiting = (start, tokens)
        else:
            glued.append((start, end, whole, tokens))
    return glued


def cuttable(spans, index):
    """(start, end, False, tokens) pieces for spans that may be cut."""
    return [(start, end, False, tokens) for (start, end), tokens in zip(spans, index.estimates(spans))]


def chunk_section(text, section, max_tokens, index, regions):
    """(start, end, tokens) chunks of one section, within max_tokens unless one whole piece."""
    # TODO(rag6): Pack one section into chunks within max_tokens, each with its exact token count,
    #   without ever cutting a fenced block or a table: one that alone is over budget
    #   stays a chunk of its own (the caller flags it oversize).
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) chunk_section(): Pack one section into chunks within max_tokens, each with "
        "its exact token count, without ever cutting a fenced block or a table: one that alone "
        "is over budget stays a chunk of its own (the caller flags it oversize). More help: "
        "python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook."
    )


def pack_exactly(spans, max_tokens, index):
    """Greedy packing with an exact count at every step (only to mend a rare miss)."""
    chunks = []
    for start, end in spans:
        if chunks and index.count(chunks[-1][0], end) <= max_tokens:
            chunks[-1] = (chunks[-1][0], end)
        else:
            chunks.append((start, end))
    return chunks


def mend_around(text, start, end, max_tokens, regions, index):
    """rag5.mend for text[start:end], with each fence or table nested in it kept as one piece.

    A list that holds a fence, glued to the heading above it, can come out a
    token or two over budget; mending it word by word must not cut the fence.
    """
    spans = []
    cursor = start
    for region_start, region_end, _ in regions_within(regions, start, end):
        if cursor < region_start:
            spans += rag5.mend(text, cursor, region_start, max_tokens)
        spans.append((region_start, region_end))
        cursor = region_end
    if cursor < end:
        spans += rag5.mend(text, cursor, end, max_tokens)
    return pack_exactly(spans, max_tokens, index)


# %% [markdown]
# ## 6. Overlap that never starts inside a protected block
#
# As in rag5, overlap reaches back into the previous chunk (of the same
# section) by up to `overlap` tokens and starts at a word. If that point falls
# inside a fence or table, it moves forward to the block's end: overlap may
# repeat a whole table but never half of one. An oversize chunk gets none.


# %%
def reach_back(text, start, floor, overlap, index, regions):
    """Where a chunk starting at `start` begins once it reaches back `overlap` tokens."""
    position = int(index.starts.searchsorted(start))
    reach = max(int(index.starts[max(position - overlap, 0)]), floor)
    return next_cut(text, reach, start, regions)


def next_cut(text, position, limit, regions):
    """The first clean cut (a word's space, a line's start) at or after `position`,
    up to `limit`, outside every protected region."""
    while position < limit:
        region = inside(position, regions)
        if region:
            position = region[1]
            continue
        if is_clean_cut(text, position):
            return position
        position += 1
    return limit


BLANK_LINES = re.compile(r"(?:[ \t]*(?:\r\n|\r|\n))*")


def read_blocks(text):
    """(offset where the body starts after any front matter, its lines, its blocks).

    Blank lines right after the front matter go with it: the body then starts
    at the first character of a line, a clean cut (see rag5), and the first
    section's count is read from the index instead of encoded again.
    """
    _, body_start = front_matter(text)
    if body_start:
        body_start = BLANK_LINES.match(text, body_start).end()
    body_lines = split_lines(text, body_start)
    return body_start, body_lines, scan_blocks(body_lines)


@dataclass
class Document:
    """A Markdown text read once: where its body starts, its sections and protected regions."""

    index: object  # rag5.TokenIndex of the whole text
    body_start: int
    sections: list
    regions: list  # sorted, disjoint (start, end, kind) of fences and tables


def read_document(text, budget):
    """Tokenize and scan `text` once; fold tiny parents against `budget`."""
    index = rag5.TokenIndex(text)
    body_start, body_lines, blocks = read_blocks(text)
    regions = merge_regions(
        [(body_lines[b.first].start, body_lines[b.last - 1].end, b.kind) for b in blocks if b.kind in PROTECTED]
        + [region for b in blocks for region in b.nested]
    )
    if not blocks:  # nothing but blank lines after any front matter
        blank = ("blank", body_start, len(text), index.estimate(body_start, len(text)))
        sections = [Section((), body_start, len(text), [blank])] if body_start < len(text) else []
    else:
        sections = fold_tiny_parents(sections_of(text, body_start, body_lines, blocks, index), budget // 8)
    return Document(index, body_start, sections, regions)


def front_matter_chunk(text, body_start, max_tokens):
    """The front matter as one chunk, never cut (flagged oversize if it is over budget)."""
    chunk = make_chunk(text, 0, body_start, kind="front_matter")
    return replace(chunk, oversize=chunk.n_tokens > max_tokens)


def markdown_chunks(text, max_tokens, overlap=0):
    """Chunks of a Markdown document: sections first, then size; fences and tables never cut."""
    # TODO(rag6): Refuse bad arguments before any work, with the same errors as every chunker in
    #   the course, so that a caller's mistake is named at once and alike everywhere; an
    #   empty text has no chunks.
    #   More help: python labs/rag6-markdown-chunking.py --hint 2, or show_hint(2) in a notebook.
    raise NotImplementedError(
        "TODO(rag6) markdown_chunks(): Refuse bad arguments before any work, with the same "
        "errors as every chunker in the course, so that a caller's mistake is named at once and "
        "alike everywhere; an empty text has no chunks. More help: python labs/rag6-markdown-"
        "chunking.py --hint 2, or show_hint(2) in a notebook."
    )
    document = read_document(text, rag5.packing_budget(max_tokens, overlap))
    chunks = [front_matter_chunk(text, document.body_start, max_tokens)] if document.body_start else []
    for section in document.sections:
        chunks += section_chunks(text, section, max_tokens, overlap, document.index, document.regions)
    return chunks


def kind_of(section, block_starts, start, end):
    """"code" or "table" if the blocks in [start, end), headings aside, are all of that kind; else "text".

    `block_starts` lists where the section's blocks start: two binary searches
    find the blocks, so a section of a thousand blocks is not read per chunk.
    """
    first = max(bisect.bisect_right(block_starts, start) - 1, 0)  # the block holding `start`
    last = bisect.bisect_left(block_starts, end)  # after the last block starting before `end`
    kinds = {kind for kind, _, _, _ in section.blocks[first:last]} - {"heading"}
    return kinds.pop() if len(kinds) == 1 and kinds <= set(PROTECTED) else "text"


def section_chunks(text, section, max_tokens, overlap, index, regions):
    """The Chunks of one section: packed, overlapped within the section, oversize flagged."""
    titles = tuple(title for _, title in section.path)
    packed = chunk_section(text, section, rag5.packing_budget(max_tokens, overlap), index, regions)
    block_starts = [block_start for _, block_start, _, _ in section.blocks]
    chunks = []
    for number, (start, end, n_tokens) in enumerate(packed):
        kind = kind_of(section, block_starts, start, end)
        if n_tokens > max_tokens:  # one whole fence or table, perhaps with its heading glued before it
            held = regions_within(regions, start, end)
            whole_kind = held[0][2] if held else kind
            chunks.append(make_chunk(text, start, end, n_tokens, section=titles, kind=whole_kind, oversize=True))
            continue
        if overlap and number > 0:
            reach = reach_back(text, start, packed[number - 1][0], overlap, index, regions)
            chunk = make_chunk(text, reach, end, index.count(reach, end), section=titles, kind=kind)
        else:
            reach, chunk = start, make_chunk(text, start, end, n_tokens, section=titles, kind=kind)
        while chunk.n_tokens > max_tokens:  # the overlap gives back words until it fits
            reach = next_cut(text, reach + 1, start, regions)
            chunk = make_chunk(text, reach, end, index.count(reach, end), section=titles, kind=kind)
        chunks.append(chunk)
    return chunks


# %% [markdown]
# ## 7. Try it on a real page
#
# Structure first changes the sizes of chunks: a short section makes a short
# chunk, and a table or code block too big for the budget stays whole, past
# it. A plot of the chunk sizes over the whole corpus shows both (a PNG file
# beside your run, or inline in a notebook). Then `view_chunks` shows chunks
# on the page itself, each labelled with its heading path: look at the table
# kept whole and flagged oversize.

# %%
PAGE = DATASETS / "orbit-docs" / "storage-backends.md"
ANSWER = "| `storage.postgres_max_idle_conns` | `5` | idle sessions kept open between bursts |"
QUESTION = "What is the default value of storage.postgres_max_idle_conns?"
MAX_TOKENS = 256
OVERLAP = 32

FENCE_BLOCK = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(?:.*?\n)?? {0,3}\1[`~]*[ \t]*(?:\n|\Z)|^ {0,3}(`{3,}|~{3,}).*\Z", re.M | re.S)
TABLE_BLOCK = re.compile(r"^[^\n]*\|[^\n]*\n {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-*:?[ \t]*)*\|?[ \t]*\n(?:[^\n]*\S[^\n]*(?:\n|\Z))*", re.M)


def regions_to_keep_whole(text):
    """Fenced blocks and tables of a page, found with whole-text patterns.

    This is deliberately separate code from the chunker's line scanner, so that
    the check below is not the chunker grading its own homework. It handles
    top-level fences and tables, with any line ends, which is what the lab's
    pages hold; the tricky documents of section 8 name their nested ones.
    """
    text = text.replace("\r\n", " \n").replace("\r", "\n")  # LF ends, every character in place
    fences = [m.span() for m in FENCE_BLOCK.finditer(text)]
    tables = []
    for match in TABLE_BLOCK.finditer(text):
        if not any(start <= match.start() < end for start, end in fences):
            tables.append(match.span())
    return sorted(fences + tables)


def cut_regions(text, chunks, regions):
    """The regions that some chunk starts or ends strictly inside."""
    return [(s, e) for s, e in regions for c in chunks if s < c.start < e or s < c.end < e]


def step_front_matter(page):
    metadata, end = front_matter(page)
    print(f"\n1. Front matter: {end} characters, read as metadata: {metadata}")


def step_blocks(page):
    """What blocks does the page hold?"""
    counts = {}
    for block in read_blocks(page)[2]:
        counts[block.kind] = counts.get(block.kind, 0) + 1
    print("2. Blocks: " + ", ".join(f"{count} {kind}" for kind, count in counts.items()))


def step_compare(page, regions):
    """rag5 against rag6 at the same budget: protected blocks cut, sections mixed."""
    print(f"\n3. {PAGE.name}, chunks of at most {MAX_TOKENS} tokens; "
          f"{len(regions)} fenced blocks and tables")
    print(f"   {'chunker':<12} {'chunks':>6} {'blocks cut':>11} {'oversize':>9}")
    results = {}
    for name, chunks in (
        ("markdown", markdown_chunks(page, MAX_TOKENS, OVERLAP)),
        ("recursive", rag5.recursive_chunks(page, MAX_TOKENS, OVERLAP)),
    ):
        cut = len(set(cut_regions(page, chunks, regions)))
        oversize = sum(c.oversize for c in chunks)
        print(f"   {name:<12} {len(chunks):>6} {cut:>11} {oversize:>9}")
        results[name] = chunks
    return results["markdown"]


def step_sizes():
    """Plot how many tokens the chunks hold, markdown against recursive, over the whole corpus."""
    pages = corpus_pages()
    sizes = {
        "markdown": [c.n_tokens for page in pages.values() for c in markdown_chunks(page, MAX_TOKENS, OVERLAP)],
        "recursive": [c.n_tokens for page in pages.values() for c in rag5.recursive_chunks(page, MAX_TOKENS, OVERLAP)],
    }
    print(f"\n4. Chunk sizes over the whole corpus ({len(pages)} pages)")
    for name, counts in sizes.items():
        oversize = sum(count > MAX_TOKENS for count in counts)
        print(f"   {name:<10} {len(counts):>4} chunks, median {statistics.median(counts):.0f} tokens, "
              f"{oversize} over the budget")
    title = f"rag6: chunk sizes on the Orbit docs, budget {MAX_TOKENS} tokens"
    show_figure(plot_chunk_sizes(sizes, MAX_TOKENS, title), "rag6-chunk-sizes.png")


def step_sections(page, chunks):
    """Show the first chunks after the front matter on the page, with their heading paths."""
    print("\n5. Markdown chunks on the page, each labelled with its heading path:")
    view_chunks(page, chunks, first=1, limit=3)


def rank_of_answer(chunks, answer_start, answer_end):
    """Rank (1 = best) of the first chunk holding the whole answer, or 'none holds it'."""
    vectors = embed([chunk.embedding_text for chunk in chunks])
    ranked = top_k(embed([QUESTION])[0], vectors, len(chunks))
    for place, (row, _) in enumerate(ranked, 1):
        if chunks[row].start <= answer_start and answer_end <= chunks[row].end:
            return place
    return "none holds it"


# %% [markdown]
# ## 8. Tricky Markdown
#
# The page above uses a few of Markdown's forms. The lab ends by chunking
# small documents that use the others: tilde fences and fences of four
# backticks, fences and tables inside lists and quotes, tables without outer
# pipes, setext headings, front matter, a fence never closed. Each is tried
# with `\n`, `\r\n` and lone `\r` line ends, at budgets from 4 tokens up, with
# and without overlap, together with the course's `TRICKY_TEXTS`. Each
# document names, by hand, the blocks that must stay whole and the heading
# path some of its lines must carry: the checks never ask your code. The
# first input that goes wrong is shown with the call that reproduces it.


# %%
@dataclass(frozen=True)
class TrickyMarkdown:
    """A small document, written with \\n line ends, and what chunking it must respect."""

    what: str
    text: str
    keep_whole: tuple = ()  # pieces of the text no chunk may start or end inside
    paths: dict = field(default_factory=dict)  # {a line: the path of chunks holding some of it}


TRICKY_MARKDOWN = (
    TrickyMarkdown(
        "a fence opening a list item, under a heading", "# Title\n- ```\n# Title",
        keep_whole=("- ```",),
    ),
    TrickyMarkdown(
        "a table inside a quote", "> | key | default |\n> |-----|---------|\n> | port | 7401 |\n",
        keep_whole=("> | key | default |\n> |-----|---------|\n> | port | 7401 |",),
    ),
    TrickyMarkdown(
        "front matter", '---\ntitle: Install\napplies_to: "2.x"\n---\n\n# Install\n\nUse apt.\n',
        keep_whole=('---\ntitle: Install\napplies_to: "2.x"\n---',),
        paths={"Use apt.": ("Install",)},
    ),
    TrickyMarkdown(
        "a fence never closed", "# Title\n\nIntro.\n\n```sh\nnever closed\n# not a heading\n",
        keep_whole=("```sh\nnever closed\n# not a heading",), paths={"never closed": ("Title",)},
    ),
    TrickyMarkdown(
        "a fence inside a quote", "> Note:\n> ```\n> quoted code\n> more code\n> ```\n\nAfter.\n",
        keep_whole=("> ```\n> quoted code\n> more code\n> ```",),
    ),
    TrickyMarkdown(
        "setext headings",
        "Install Orbit\n=============\n\nRun it.\n\nOn Linux\n--------\n\nUse apt.\n",
        paths={"Use apt.": ("Install Orbit", "On Linux")},
    ),
    TrickyMarkdown(
        "a tilde fence holding a # line",
        "# Tildes\n\n~~~toml\n# a comment, not a heading\nkey = 1\n~~~\n\nAfter.\n",
        keep_whole=("~~~toml\n# a comment, not a heading\nkey = 1\n~~~",),
        paths={"After.": ("Tildes",)},
    ),
    TrickyMarkdown(
        "a backtick fence holding tilde lines",
        "# Mixed\n\n```\n~~~\ninside the fence\n~~~\n```\n\nAfter.\n",
        keep_whole=("```\n~~~\ninside the fence\n~~~\n```",), paths={"After.": ("Mixed",)},
    ),
    TrickyMarkdown(
        "a fence of four backticks holding one of three",
        "# Fences\n\n````markdown\n```python\nprint(1)\n```\n````\n\nAfter.\n",
        keep_whole=("````markdown\n```python\nprint(1)\n```\n````",),
        paths={"After.": ("Fences",)},
    ),
    TrickyMarkdown(
        "a table without outer pipes",
        "# Ports\n\nport | use\n--- | ---\n7401 | stream\n7402 | api\n\nAfter.\n",
        keep_whole=("port | use\n--- | ---\n7401 | stream\n7402 | api",),
        paths={"After.": ("Ports",)},
    ),
    TrickyMarkdown(
        "a table inside a list item",
        "- Ports:\n\n  | port | use |\n  |------|-----|\n  | 7401 | stream |\n  | 7402 | api |\n\n"
        "- Done.\n",
        keep_whole=("  | port | use |\n  |------|-----|\n  | 7401 | stream |\n  | 7402 | api |",),
    ),
    TrickyMarkdown(
        "a fence inside a list item",
        "# Steps\n\n- Install it.\n- Run this:\n\n  ```sh\n  orbit init --data /var/lib/orbit\n"
        "  orbit start\n  ```\n\n- Logs.\n",
        keep_whole=("```sh\n  orbit init --data /var/lib/orbit\n  orbit start\n  ```",),
        paths={"Logs.": ("Steps",)},
    ),
    TrickyMarkdown(
        "closing #s, and paths popped by siblings and parents",
        "# Install #\n\nIntro.\n\n## On Linux ##\n\nUse apt.\n\n## On macOS\n\nUse brew.\n\n"
        "# Upgrade\n\nUpgrade.\n",
        paths={"Use apt.": ("Install", "On Linux"), "Use brew.": ("Install", "On macOS"),
               "Upgrade.": ("Upgrade",)},
    ),
)
LINE_ENDS = {"LF": "\n", "CRLF": "\r\n", "CR": "\r"}
MARKDOWN_SETTINGS = (  # 4 tokens hold any character
    dict(max_tokens=4, overlap=0), dict(max_tokens=8, overlap=0),
    dict(max_tokens=16, overlap=4), dict(max_tokens=400, overlap=0),
)


def check_markdown_chunks(chunks, text, max_tokens, overlap, keep_whole=(), paths=None):
    """Raise ValueError unless `chunks` chunk the Markdown `text` as promised: lossless, in
    budget but for a whole fence, table or front matter; nothing in `keep_whole` (or that
    regions_to_keep_whole finds) cut; each line of `paths` only in chunks with that path."""
    check_chunking(text, chunks, max_tokens)
    for number, chunk in enumerate(chunks, 1):
        if chunk.oversize and chunk.kind not in (*PROTECTED, "front_matter"):
            raise ValueError(f"chunk {number} is flagged oversize, but its kind is {chunk.kind!r}")
    named = [(text.index(piece), text.index(piece) + len(piece)) for piece in keep_whole]
    for start, end in cut_regions(text, chunks, regions_to_keep_whole(text) + named)[:1]:
        raise ValueError(f"a chunk starts or ends inside [{start}, {end}) "
                         f"{text[start:end][:30]!r}, which must stay whole")
    for line, path in (paths or {}).items():
        start = text.index(line)
        for chunk in chunks:
            holds_some = chunk.start < start + len(line) and start < chunk.end
            if holds_some and chunk.section != path:
                raise ValueError(f"the chunk holding {line!r} has the path {chunk.section}, "
                                 f"not {path}")


def with_every_line_end(documents):
    """Each document as written (LF), with CRLF and with lone CR line ends, its pieces too."""
    return [
        TrickyMarkdown(f"{document.what} ({name})", document.text.replace("\n", line_end),
                       tuple(piece.replace("\n", line_end) for piece in document.keep_whole),
                       document.paths)
        for document in documents
        for name, line_end in LINE_ENDS.items()
    ]


def markdown_cases():
    """Cases for markdown_chunks: the tricky texts, and each tricky document with each line
    end, at each setting; smallest text first."""
    cases = tricky_cases(markdown_chunks, check_markdown_chunks, MARKDOWN_SETTINGS)
    cases += [
        Case(document.what, markdown_chunks, (document.text,),
             partial(check_markdown_chunks, keep_whole=document.keep_whole, paths=document.paths),
             dict(setting))
        for document in with_every_line_end(TRICKY_MARKDOWN)
        for setting in MARKDOWN_SETTINGS
    ]
    return sorted(cases, key=lambda case: len(case.args[0]))


def main():
    page = PAGE.read_text(encoding="utf-8")
    answer_start = page.index(ANSWER)  # the lab's own label, not a chunk offset
    answer_end = answer_start + len(ANSWER)
    regions = regions_to_keep_whole(page)

    step_front_matter(page)
    step_blocks(page)
    chunks = step_compare(page, regions)
    step_sizes()
    step_sections(page, chunks)

    print(f"\n6. Retrieval: {QUESTION!r}")
    for name, chunker in (("markdown", markdown_chunks), ("recursive", rag5.recursive_chunks)):
        ranked = rank_of_answer(chunker(page, MAX_TOKENS, OVERLAP), answer_start, answer_end)
        print(f"   {name:<10} rank of the first chunk holding the whole answer: {ranked}")
    vectors = embed([chunk.embedding_text for chunk in chunks])
    top = chunks[top_k(embed([QUESTION])[0], vectors, 1)[0][0]]

    print("\nInvariants")
    checks = Invariants("rag6")
    checks.check_chunks(  # the budget check skips the chunks flagged oversize
        "nothing lost, every chunk an exact slice within budget", [(page, chunks)], MAX_TOKENS
    )
    oversize = [c for c in chunks if c.oversize]
    checks.check(
        "only a fenced block or table alone is oversize",
        all(c.kind in PROTECTED for c in oversize),
        f"{len(oversize)} oversize chunk(s)",
    )
    cut = cut_regions(page, chunks, regions)
    checks.check("no fenced block or table is cut (checked by separate code)", not cut, f"{len(cut)} cut")
    checks.check(
        "the top result holds the answer",
        top.start <= answer_start and answer_end <= top.end,
        f"answer at [{answer_start}, {answer_end})",
    )
    checks.check_cases(
        "tricky Markdown: lossless, in budget, fences and tables whole, heading paths right",
        markdown_cases(),
    )
    return checks.verdict()


# %% [markdown]
# ## Hints
#
# Each TODO above shows its first hint: what the function must achieve, and
# why. The next levels are kept here for when you are stuck: the approach, then
# a sketch close to code. Ask for them one at a time rather than reading on.
# `python labs/rag6-markdown-chunking.py --hint 2` runs the lab and shows hint
# 2 for the TODO where it stops; `--hint 3` shows the next level, and `--hint 2
# fence_opening` one function's. In a notebook, run the cells above, then
# `show_hint(2)` or `show_hint(2, "fence_opening")`.

# %%
from labkit import show_hint  # in a notebook: show_hint(2)

HINTS = {
    "fence_opening": {
        1: (
            "Tell whether a line opens a fenced code block, and with which character and how long "
            "a fence: that decides which line closes the block, and everything up to it is code "
            "that no chunk may cut and no heading rule may read."
        ),
        2: (
            "Use the given FENCE_OPENING pattern: three or more backticks or tildes after at most "
            "three spaces, then the rest of the line (the info string, such as a language name). "
            "One CommonMark rule to watch: after a backtick fence, the info string may not hold a "
            "backtick (that line is inline code, not a fence); tildes have no such rule. Anything "
            "else opens nothing: return None."
        ),
        3: (
            "Match FENCE_OPENING. A backtick fence may not have a backtick in the rest of the "
            "line (its \"info string\"). Return (fence[0], len(fence))."
        ),
    },
    "closes_fence": {
        1: (
            "Tell whether a line closes the fenced block opened with `length` times `char`, so "
            "that the block ends where CommonMark says and a shorter or different fence inside it "
            "stays code."
        ),
        2: (
            "Use the given FENCE_CLOSING pattern: a fence with nothing after it but spaces. It "
            "closes the block only if it is made of the same character as the opening fence and "
            "is at least as long; a longer one closes too. Any other line leaves the block open."
        ),
        3: "Match FENCE_CLOSING: its fence must be the same char, at least `length` long.",
    },
    "atx_heading": {
        1: (
            "Recognise a `#` heading and give its level and title: headings open the sections, "
            "and their titles become each chunk's heading path."
        ),
        2: (
            "Use the given ATX_HEADING pattern: one to six #s, then a space or the end of the "
            "line (#tag is not a heading). The level is the number of #s. A heading may end with "
            "a closing run of #s that is not part of its title: remove it with the given "
            "CLOSING_HASHES (it needs a space before it, or to be all the title has), then strip "
            "the spaces around the title."
        ),
        3: (
            "Match ATX_HEADING; the level is the number of #s. Drop a closing run of #s "
            "(CLOSING_HASHES: it needs a space before it, or to be all there is), then strip."
        ),
    },
    "is_table_start": {
        1: (
            "Tell whether line i starts a GitHub table, so that the chunker keeps the table whole "
            "with its header row, which names the columns every row's values depend on."
        ),
        2: (
            "A table is a header row followed by a delimiter row. Check, cheapest first: there is "
            "a next line; line i holds a pipe and is not indented four columns or more (that "
            "would be indented code); the next line is a delimiter row (the given "
            "is_delimiter_row); and both rows have as many cells, counted with the given "
            "table_cells, which ignores outer pipes."
        ),
        3: (
            "Needs a next line; lines[i].text must contain \"|\" and not be indented 4 or more; "
            "lines[i + 1].text must pass is_delimiter_row; and the header must have as many "
            "table_cells as the delimiter row has."
        ),
    },
    "enter_section": {
        1: (
            "Give the heading path after a new heading, so that every chunk knows which chain of "
            "headings it sits under, even when its own text never names them."
        ),
        2: (
            "A heading closes every open heading of its own level or deeper and stays under the "
            "ones above it: a new level-2 heading replaces the previous one and anything under "
            "it, and stays under the current level-1 heading. So keep, in order, the entries of "
            "the path whose level is smaller than the new one's, and add the new heading at the "
            "end. Return a tuple: paths are compared and stored in chunks, so they must not "
            "change."
        ),
        3: (
            "Keep the entries of `path` whose level is smaller than `level`, then append (level, "
            "title). Return a tuple."
        ),
    },
    "chunk_section": {
        1: (
            "Pack one section into chunks within max_tokens, each with its exact token count, "
            "without ever cutting a fenced block or a table: one that alone is over budget stays "
            "a chunk of its own (the caller flags it oversize)."
        ),
        2: (
            "The given pieces_of does the cutting: it splits big paragraphs at rag5's seams "
            "around any nested fence or table and glues each heading to what follows. Pack those "
            "pieces with rag5's pack, sized by their own token counts, then count each packed "
            "chunk exactly with the index. Nearly all fit. A chunk over budget is re-packed from "
            "its pieces with exact counts (pack_exactly); a single piece still over budget stays "
            "whole if it must not be cut, and is otherwise split word by word with mend_around, "
            "which keeps nested fences and tables whole. Return (start, end, tokens) for each "
            "chunk."
        ),
        3: (
            "Pack the pieces_of(...) spans with rag5.pack (their sizes: the pieces' tokens) and "
            "count each packed chunk with index.count. A chunk over budget that holds several "
            "pieces is re-packed piece by piece with pack_exactly; a single piece over budget is "
            "kept whole if it must not be cut, else split with mend_around(...): rag5.mend, but "
            "never inside a nested fence or table."
        ),
    },
    "markdown_chunks": {
        1: (
            "Refuse bad arguments before any work, with the same errors as every chunker in the "
            "course, so that a caller's mistake is named at once and alike everywhere; an empty "
            "text has no chunks."
        ),
        2: (
            "The course's shared check of the text and the window does the refusing (pass the "
            "names that make its messages speak of max_tokens and tokens); then an empty text "
            "returns an empty list. Reading the document, its sections and their chunks is given "
            "after this part."
        ),
        3: (
            "Reject bad parameters with check_text_and_window(text, max_tokens, overlap, "
            "\"max_tokens\", \"tokens\"); an empty text has no chunks. The rest is given below."
        ),
    },
}


# %%
if __name__ == "__main__":
    run_lab(main)
