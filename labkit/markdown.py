"""Reading Markdown for rag6: given code, which a student reads but does not write.

rag6 teaches chunking by structure. To know the structure it must read
Markdown's blocks (headings, fences, tables, lists, quotes, HTML, paragraphs),
and CommonMark's rules for those are long and not what the lab is about. So
this module holds them:

- lines with exact offsets (split_lines), and the front matter (front_matter);
- a block scanner (Scanner) that follows CommonMark, with GitHub's tables,
  closely enough for real documentation. The grading tests compare the fences
  and tables it finds with those of a real parser, markdown-it-py
  (tests/markdown_oracle.py);
- regions: the spans of fences and tables that no chunk may cut (Region);
- the tricky documents rag6 checks itself on (TRICKY_MARKDOWN), and the check
  (check_markdown_chunks), which finds what must stay whole with its own code.

Four rules are the student's: rag6 writes fence_opening, closes_fence,
atx_heading and is_table_start, and hands them to the scanner as a
Recognisers record, so the blocks found are read with the student's rules:

    blocks = Scanner(Recognisers(fence_opening, closes_fence, atx_heading, is_table_start)).scan(lines)
"""

from __future__ import annotations

import bisect
import itertools
import re
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, NamedTuple

from academy_llm import check_chunking
from labkit.cases import Case, tricky_cases

# ---- lines with exact offsets -------------------------------------------------


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

    str.splitlines does the splitting in C, and the Lines are made in C too
    (tuple.__new__ over zipped fields): no Python call per line. splitlines
    also splits at characters Markdown reads as text (a form feed, U+2028...):
    when it made more pieces than the text has line ends, iter_lines reads it.
    """
    body = text[start:]
    pieces = body.splitlines(keepends=True)
    line_ends = body.count("\n") + body.count("\r") - body.count("\r\n")
    if len(pieces) > line_ends + (not body.endswith(("\n", "\r"))):
        return [Line(line.start + start, line.end + start, line.text) for line in iter_lines(body)]
    offsets = list(itertools.accumulate(map(len, pieces), initial=start))
    texts = [piece.rstrip("\r\n") for piece in pieces]
    return list(map(tuple.__new__, itertools.repeat(Line), zip(offsets, offsets[1:], texts)))


def is_blank(text):
    """True for a line of nothing but spaces and tabs (CommonMark's blank line: a form feed is text)."""
    return not text.strip(" \t")


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


def strip_columns(text, columns):
    """`text` without its first `columns` columns of indentation."""
    position = column = 0
    while position < len(text) and column < columns and text[position] in " \t":
        column += 4 - column % 4 if text[position] == "\t" else 1
        position += 1
    return text[position:]


# ---- front matter -------------------------------------------------------------

BLANK_LINES = re.compile(r"(?:[ \t]*(?:\r\n|\r|\n))*")


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


def body_start_of(text):
    """Where the body starts: after any front matter and the blank lines right after it.

    The body then starts at the first character of a line, a clean cut (see
    rag5), so its first section is counted from the index, not encoded again.
    """
    end = front_matter(text)[1]
    return BLANK_LINES.match(text, end).end() if end else 0


# ---- table rows, which rag6's is_table_start reads ------------------------------


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
    inner = [cell.strip() for cell in stripped.split("|")]
    for number, cell in enumerate(inner):
        if not cell and number not in (0, len(inner) - 1):
            return False
        if cell and not re.fullmatch(r":?-+:?", cell):
            return False
    return True


# ---- blocks ---------------------------------------------------------------------------

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
PROTECTED = ("code", "table")  # the kinds of block no chunk may cut

# Where a line is read, which decides what it can start (see Scanner.block_start).
TOP = "top"  # between blocks: any block may start
PARAGRAPH = "paragraph"  # under a paragraph's line: only a block that interrupts it
TABLE = "table"  # under a table's row: any block but another row ends the table


class Recognisers(NamedTuple):
    """The rules rag6's student writes, handed to the scanner."""

    fence_opening: Callable  # text -> (char, length) of a fence it opens, or None
    closes_fence: Callable  # (text, char, length) -> True if it closes that fence
    atx_heading: Callable  # text -> (level, title) of a `#` heading, or None
    is_table_start: Callable  # (lines, i) -> True if lines[i] is a table's header row


class Region(NamedTuple):
    """A span no chunk may cut: a fenced block or a table, perhaps inside a list or quote."""

    start: int
    end: int  # just after its last line's ending
    kind: str  # "code" or "table"


class ListItem(NamedTuple):
    """What a list item's first line says about the item."""

    content_column: int  # where its content starts: later lines indented this far belong to it
    ordered: bool  # 1. or 1) rather than -, + or *
    number: int | None  # an ordered item's number
    has_content: bool  # anything after the marker (an empty item cannot interrupt a paragraph)


@dataclass
class Block:
    kind: str  # heading, code, table, list, quote, html, rule, indented_code, paragraph
    first: int  # index of its first line
    last: int  # index just after its last line
    level: int = 0  # heading level
    title: str = ""  # heading title
    nested: list = field(default_factory=list)  # the Regions of fences and tables inside it


def list_item(text):
    """The ListItem a line opens, or None."""
    match = LIST_ITEM.match(text)
    if not match:
        return None
    indent, marker, spaces = match.groups()
    content = text[match.end():].strip(" \t")  # as in is_blank: a form feed is content
    width = len(spaces) if 1 <= len(spaces) <= 4 and content else 1
    ordered = marker[0].isdigit()
    return ListItem(len(indent) + len(marker) + width, ordered, int(marker[:-1]) if ordered else None,
                    bool(content))


class ContainerText:
    """The lines of a list item or quote, read as they come, to know if a lazy line may follow.

    CommonMark allows a line without the container's indent or `>` only as the
    continuation of a paragraph: not after a blank line or a heading, and not
    inside a fence that is still open.
    """

    def __init__(self, recognise):
        self.recognise = recognise
        self.lines = []
        self.fence = None  # (char, length) of a fence still open
        self.in_paragraph = False

    def add(self, start, end, text):
        self.lines.append(Line(start, end, text))
        if self.fence is not None:
            if self.recognise.closes_fence(text, *self.fence):
                self.fence = None
            self.in_paragraph = False
            return
        self.fence = self.recognise.fence_opening(text)
        self.in_paragraph = not is_blank(text) and not (self.fence or self.recognise.atx_heading(text))


class Scanner:
    """Markdown's blocks, found line by line with the student's Recognisers."""

    def __init__(self, recognise: Recognisers):
        self.recognise = recognise

    def block_start(self, lines, i, where=TOP):
        """The kind of block that starts at lines[i], or None if the line continues the one open.

        One set of rules answers three questions: which block starts here
        (where=TOP); does the line interrupt the paragraph above it
        (PARAGRAPH: an indented line, a lone HTML tag, an empty list item or one
        numbered other than 1 do not); does it end the table above it (TABLE: a
        line starting with a letter or a pipe is another row). Cheapest tests
        first: most lines start with a letter, and only a table or a paragraph can.
        """
        text = lines[i].text
        first = text[:1]
        if first in (" ", "\t", ""):
            if is_blank(text):
                return "blank"
            if indent_of(text) >= 4:
                return None if where == PARAGRAPH else "indented_code"
            first = text.lstrip(" ")[:1]
        if first.isalpha() or (first == "|" and where == TABLE):
            return self.table_or_text(lines, i, where)
        if self.recognise.fence_opening(text):
            return "code"
        if self.recognise.atx_heading(text):
            return "heading"
        if THEMATIC_BREAK.match(text):  # before lists: "- - -" is a break, not an item
            return "rule"
        if QUOTE_PREFIX.match(text):
            return "quote"
        item = list_item(text)
        if item and (where != PARAGRAPH or item.has_content and (not item.ordered or item.number == 1)):
            return "list"
        if first == "<" and self.html_block_end(lines, i, where != TOP) is not None:
            return "html"
        return self.table_or_text(lines, i, where)

    def table_or_text(self, lines, i, where):
        """What a line no other block claims starts: a table, else a paragraph (at the top only)."""
        if where == TABLE:
            return None
        if self.recognise.is_table_start(lines, i):
            return "table"
        return "paragraph" if where == TOP else None

    def scan(self, lines, depth=0):
        """The blocks of `lines`, in order. Blank lines belong to no block (they join the one before)."""
        blocks = []
        i = 0
        while i < len(lines):
            kind = self.block_start(lines, i)
            if kind == "blank":
                i += 1
                continue
            blocks.append(getattr(self, f"read_{kind}")(lines, i, depth))
            i = blocks[-1].last
        return blocks

    # Each read_<kind> reads the block of that kind starting at lines[i].

    def read_paragraph(self, lines, i, depth):
        """A paragraph, or a setext heading: a line of `===` or `---` under it makes it one.

        The underline is tested first, because `---` under text is an
        underline, not a thematic break.
        """
        j = i + 1
        while j < len(lines):
            underline = SETEXT_UNDERLINE.match(lines[j].text)
            if underline:
                title = " ".join(line.text.strip() for line in lines[i:j])
                return Block("heading", i, j + 1, level=1 if underline.group(1)[0] == "=" else 2, title=title)
            if self.block_start(lines, j, PARAGRAPH) is not None:
                break
            j += 1
        return Block("paragraph", i, j)

    def read_table(self, lines, i, depth):
        j = i + 2  # the header row and the delimiter row
        while j < len(lines) and self.block_start(lines, j, TABLE) is None:
            j += 1
        return Block("table", i, j)

    def read_code(self, lines, i, depth):
        """A fenced block, to its closing fence; one never closed runs to the end."""
        fence = self.recognise.fence_opening(lines[i].text)
        j = i + 1
        while j < len(lines) and not self.recognise.closes_fence(lines[j].text, *fence):
            j += 1
        return Block("code", i, min(j + 1, len(lines)))

    def read_heading(self, lines, i, depth):
        level, title = self.recognise.atx_heading(lines[i].text)
        return Block("heading", i, i + 1, level=level, title=title)

    def read_rule(self, lines, i, depth):
        return Block("rule", i, i + 1)

    def read_indented_code(self, lines, i, depth):
        j = i + 1
        while j < len(lines) and (is_blank(lines[j].text) or indent_of(lines[j].text) >= 4):
            j += 1
        while is_blank(lines[j - 1].text):
            j -= 1
        return Block("indented_code", i, j)

    def read_html(self, lines, i, depth):
        return Block("html", i, self.html_block_end(lines, i, in_paragraph=False))

    def html_block_end(self, lines, i, in_paragraph):
        """Index after the HTML block starting at lines[i], or None if none starts there."""
        text = lines[i].text
        for start, end in HTML_ENDS:
            if start.match(text):
                j = i
                while j < len(lines) and not end.search(lines[j].text):
                    j += 1
                return min(j + 1, len(lines))
        if HTML_BLOCK_TAG.match(text) or (not in_paragraph and HTML_LONE_TAG.match(text)):
            j = i + 1
            while j < len(lines) and not is_blank(lines[j].text):
                j += 1
            return j
        return None

    def read_quote(self, lines, i, depth):
        """A block quote: its lines, without the > prefix, are scanned again for what they nest."""
        inner = ContainerText(self.recognise)
        j = i
        while j < len(lines):
            line = lines[j]
            prefix = QUOTE_PREFIX.match(line.text)
            if prefix:
                inner.add(line.start, line.end, line.text[prefix.end():])
            elif not is_blank(line.text) and inner.in_paragraph and self.block_start(lines, j, PARAGRAPH) is None:
                inner.add(line.start, line.end, line.text)
            else:
                break
            j += 1
        return Block("quote", i, j, nested=self.nested_regions(inner.lines, depth))

    def read_list(self, lines, i, depth):
        """A list: each item's content lines are scanned again for what they nest."""
        items = []
        j = i
        while j < len(lines):
            inner, j = self.read_item(lines, j)
            items.append(inner.lines)
            if j < len(lines) and not list_item(lines[j].text):
                break
        # Trailing blank lines belong after the list, unless the last item's fence is
        # still open: an unclosed fence runs to the end of its item, blank lines and all.
        while inner.fence is None and items[-1][-1].text == "" and is_blank(lines[j - 1].text):
            items[-1].pop()
            j -= 1
        return Block("list", i, j, nested=[region for item in items for region in self.nested_regions(item, depth)])

    def read_item(self, lines, i):
        """(the ContainerText of the list item starting at lines[i], the index after it)."""
        inner = ContainerText(self.recognise)  # each item is a container of its own
        column = list_item(lines[i].text).content_column
        marker_end = LIST_ITEM.match(lines[i].text).end()
        inner.add(lines[i].start, lines[i].end, lines[i].text[marker_end:])
        j = i + 1
        while j < len(lines):
            line = lines[j]
            if is_blank(line.text):
                inner.add(line.start, line.end, "")
            elif indent_of(line.text) >= column:
                inner.add(line.start, line.end, strip_columns(line.text, column))
            elif (inner.in_paragraph and self.block_start(lines, j, PARAGRAPH) is None
                  and not list_item(line.text)):
                inner.add(line.start, line.end, line.text)
            else:
                break
            j += 1
        return inner, j

    def nested_regions(self, inner_lines, depth):
        """The Regions of the fences and tables inside a container's lines."""
        if depth >= MAX_NESTING:
            return []
        regions = []
        for block in self.scan(inner_lines, depth + 1):
            if block.kind in PROTECTED:
                regions.append(Region(inner_lines[block.first].start, inner_lines[block.last - 1].end, block.kind))
            regions += block.nested
        return regions


# ---- regions ---------------------------------------------------------------------------


def protected_regions(lines, blocks):
    """The sorted, disjoint Regions of the fences and tables among `blocks` and nested in them."""
    regions = [Region(lines[b.first].start, lines[b.last - 1].end, b.kind) for b in blocks if b.kind in PROTECTED]
    return merge_regions(regions + [region for b in blocks for region in b.nested])


def merge_regions(regions):
    """Sorted, disjoint Regions covering the same characters."""
    merged = []
    for region in sorted(regions):
        if merged and region.start < merged[-1].end:
            merged[-1] = merged[-1]._replace(end=max(merged[-1].end, region.end))
        else:
            merged.append(region)
    return merged


def inside(position, regions):
    """The region of the sorted, disjoint `regions` strictly around `position`, or None."""
    number = bisect.bisect_right(regions, (position, float("inf"), "")) - 1
    if number >= 0 and regions[number].start < position < regions[number].end:
        return regions[number]
    return None


def regions_within(regions, start, end):
    """The regions of the sorted, disjoint `regions` that lie inside [start, end)."""
    first = last = bisect.bisect_left(regions, (start, 0, ""))
    while last < len(regions) and regions[last].end <= end:
        last += 1
    return regions[first:last]


# ---- the tricky documents rag6 checks itself on ------------------------------------------

FENCE_BLOCK = re.compile(
    r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(?:.*?\n)?? {0,3}\1[`~]*[ \t]*(?:\n|\Z)|^ {0,3}(`{3,}|~{3,}).*\Z", re.M | re.S)
TABLE_BLOCK = re.compile(
    r"^[^\n]*\|[^\n]*\n {0,3}\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-*:?[ \t]*)*\|?[ \t]*\n"
    r"(?:[^\n]*\S[^\n]*(?:\n|\Z))*", re.M)


def regions_to_keep_whole(text):
    """(start, end) of a page's fenced blocks and tables, found with whole-text patterns.

    This is deliberately separate code from the Scanner, so that the check
    below is not the chunker grading its own homework. It handles top-level
    fences and tables, with any line ends, which is what the lab's pages hold;
    the tricky documents name their nested ones.
    """
    text = text.replace("\r\n", " \n").replace("\r", "\n")  # LF ends, every character in place
    fences = [m.span() for m in FENCE_BLOCK.finditer(text)]
    tables = []
    for match in TABLE_BLOCK.finditer(text):
        if not any(start <= match.start() < end for start, end in fences):
            tables.append(match.span())
    return sorted(fences + tables)


def cut_regions(chunks, regions):
    """The (start, end) regions that some chunk starts or ends strictly inside."""
    return [(s, e) for s, e in regions for c in chunks if s < c.start < e or s < c.end < e]


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
    for start, end in cut_regions(chunks, regions_to_keep_whole(text) + named)[:1]:
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


def markdown_cases(chunker):
    """Cases for a Markdown chunker: the course's tricky texts, and each tricky document with
    each line end, at each setting; smallest text first."""
    cases = tricky_cases(chunker, check_markdown_chunks, MARKDOWN_SETTINGS)
    cases += [
        Case(document.what, chunker, (document.text,),
             partial(check_markdown_chunks, keep_whole=document.keep_whole, paths=document.paths),
             dict(setting))
        for document in with_every_line_end(TRICKY_MARKDOWN)
        for setting in MARKDOWN_SETTINGS
    ]
    return sorted(cases, key=lambda case: len(case.args[0]))
