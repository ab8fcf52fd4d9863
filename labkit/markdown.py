"""Reading Markdown for rag6: given code, which a student reads but does not write.

rag6 teaches chunking by structure. To know the structure it must read
Markdown's blocks (headings, fences, tables, lists, quotes, HTML, paragraphs),
and CommonMark's rules for those are long and not what the lab is about. So
this module holds them:

- lines with exact offsets (split_lines), and the front matter (front_matter);
- a block scanner (Scanner) that follows CommonMark, with GitHub's tables,
  closely enough for real documentation. The grading tests compare the code
  blocks and tables it finds with those of a real parser, markdown-it-py
  (tests/markdown_oracle.py);
- regions: the spans of code blocks, fenced or indented, and tables that no
  chunk may cut (Region);
- the tricky documents rag6 checks itself on (TRICKY_MARKDOWN), and the check
  (check_markdown_chunks), which finds what must stay whole with its own code;
- every_line_cases: the student's rules asked about every line of those
  documents, each answer judged by what markdown-it-py reads there, written
  down in datasets/tricky-markdown-readings.jsonl (the parser itself is the
  grader's, tests/markdown_oracle.py).

Four rules are the student's: rag6 writes fence_opening, closes_fence,
atx_heading and is_table_start, and hands them to the scanner as a
Recognisers record, so the blocks found are read with the student's rules:

    blocks = Scanner(Recognisers(fence_opening, closes_fence, atx_heading, is_table_start)).scan(lines)

CommonMark everywhere, MDX included: a line indented 4 columns (under a blank
line, not under a paragraph's line) opens indented code, at the top or in a
list item or quote (counted from the item's content or after the `>`), and it
is kept whole as a fence is. MDX has no indented code, but an indented block
of JSX kept whole costs a chunker nothing. Lazy lines follow what is open
inside the container, at any depth (ContainerText); `- - -` under a list item
is a thematic break; link reference definitions are no paragraph, so an
underline under nothing else makes no setext heading.

Speed: rag6 must keep up with tiktoken, so the scanner does little per line.
It reads a line's text, not a Line (a LineView holds a page's lines as two
lists, made in C); it asks a rule only about a line the rule could be true of
(the fence rules about a line whose first character after its indent is a
backtick or a tilde, atx_heading a #, is_table_start a line holding a |);
and it reads the commonest blocks (a blank line, a paragraph of one line, a
heading, a fence, a list of simple items) without the general machinery, to
the same blocks. A list or quote is read item by item, and its lines scanned
again, only if something in it may need it (a fence, a |, a line indented
where code could start); and scanned again only if it holds a block to keep
whole.
"""

from __future__ import annotations

import bisect
import itertools
import json
import operator
import re
from array import array
from dataclasses import dataclass, field
from functools import partial
from typing import Callable, NamedTuple

from academy_llm import DATASETS, check_chunking
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
        yield tuple.__new__(Line, (match.start(), match.end(), match.group().rstrip("\r\n")))


def split_lines(text, start=0):
    """All the lines of `text` from offset `start` on, as iter_lines gives them, but faster.

    The splitting is done in C (str.split, or str.splitlines when there is a
    CR), and the Lines are made in C too (tuple.__new__ over zipped fields): no
    Python call per line.
    """
    texts, offsets = texts_and_offsets(text, start)
    return list(map(tuple.__new__, itertools.repeat(Line), zip(offsets, offsets[1:], texts)))


def texts_and_offsets(text, start=0):
    """([each line's text], array('q') of each line's start, then the end of the last) from offset `start` on.

    The offsets are an array of machine integers, not a list of Python ints:
    8 bytes a line instead of about 40. Where `text` has no "\r" it is split
    whole and the lines before `start` dropped, so no copy of the text from
    `start` on is made: a page with front matter is read without doubling it.
    str.splitlines also splits at characters Markdown reads as text (a form
    feed, U+2028...): when it made more pieces than the text has line ends,
    iter_lines reads the text instead.
    """
    if text.find("\r", start) < 0:  # \n line ends only, each one character
        texts = text.split("\n")
        del texts[: text.count("\n", 0, start)]  # the lines that end before `start`
        texts[0] = texts[0][start - text.rfind("\n", 0, start) - 1 :]  # its line from `start` on: all of it, mostly
        if not texts[-1]:
            texts.pop()  # after the last line end: no line
        offsets = array("q", itertools.accumulate(map(operator.add, map(len, texts), itertools.repeat(1)),
                                                  initial=start))
        offsets[-1] = min(offsets[-1], len(text))  # the last line may have no line end
        return texts, offsets
    body = text[start:]
    pieces = body.splitlines(keepends=True)
    line_ends = body.count("\n") + body.count("\r") - body.count("\r\n")
    if len(pieces) > line_ends + (not body.endswith(("\n", "\r"))):
        lines = list(iter_lines(body))
        return [line.text for line in lines], array("q", [line.start + start for line in lines] + [len(text)])
    return [piece.rstrip("\r\n") for piece in pieces], array("q", itertools.accumulate(map(len, pieces), initial=start))


class LineView:
    """The lines of a text as split_lines gives them, kept as texts_and_offsets gives them: lines[i]
    makes its Line when asked. The scanner reads the texts; a Line for each line is not needed."""

    __slots__ = ("texts", "offsets")

    def __init__(self, texts, offsets):
        self.texts = texts
        self.offsets = offsets

    def __len__(self):
        return len(self.texts)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self.texts)))]
        if i < 0:
            i += len(self.texts)
        return tuple.__new__(Line, (self.offsets[i], self.offsets[i + 1], self.texts[i]))  # IndexError past the end


def line_view(text, start=0):
    """The LineView of `text` from offset `start` on."""
    return LineView(*texts_and_offsets(text, start))


def is_blank(text):
    """True for a line of nothing but spaces and tabs (CommonMark's blank line: a form feed is text)."""
    return not text.strip(" \t")


def indent_of(text):
    """Columns of leading whitespace, a tab reaching the next multiple of 4."""
    spaces = len(text) - len(text.lstrip(" "))
    if text[spaces : spaces + 1] != "\t":
        return spaces  # no tab: a column a space
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
    """`text` without its first `columns` columns of indentation, a tab reaching the next multiple of 4.

    A line with a tab has its tabs made spaces first, so that a tab which
    reaches past `columns` leaves the rest of its width as indentation: a
    container's line is read from its own first column, where the page's tab
    stops no longer fall. (A page's line starts at column 0; a line inside a
    container has no tab left.)
    """
    if "\t" in text:
        text = text.expandtabs(4)
    if text.startswith(" " * columns):
        return text[columns:]
    return text.lstrip(" ")  # fewer columns than that: all of them


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


CELL_BORDER = re.compile(r"(?<!\\)\|")  # an unescaped pipe
DELIMITER_ROW = re.compile(r"\|?[ \t]*:?-+:?[ \t]*(?:\|[ \t]*:?-+:?[ \t]*)*\|?")  # cells between pipes


def table_cells(text):
    """The cells of a table row: split on unescaped |, without an empty first or last cell."""
    text = text.strip()
    cells = CELL_BORDER.split(text) if "\\" in text else text.split("|")  # no backslash: no escaped pipe
    if cells and cells[0].strip() == "":
        cells = cells[1:]
    if cells and cells[-1].strip() == "":
        cells = cells[:-1]
    return cells


def is_delimiter_row(text):
    """True for a table's delimiter row: cells like ---, :--, --: or :-: ."""
    stripped = text.strip()
    if not stripped or stripped[:2] in ("- ", "-\t") or indent_of(text) >= 4:  # "- -" is a list item
        return False
    return stripped == "|" or DELIMITER_ROW.fullmatch(stripped) is not None


# ---- blocks ---------------------------------------------------------------------------

THEMATIC_BREAK = re.compile(r"^ {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")
SETEXT_UNDERLINE = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
LIST_ITEM = re.compile(r"^( {0,3})([-+*]|\d{1,9}[.)])([ \t]+|$)")
QUOTE_MARKER = re.compile(r" {0,3}>")
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
BLANK_ENDS = "a blank line"  # how HTML blocks 6 and 7 end (html_ending)
MAX_NESTING = 24  # containers deeper than this are read as plain text
# The scanner asks a rule only about a line it could be true of, a cheap test in C first:
FENCE_LIKE = re.compile(r"[ \t]*[`~]")  # fence_opening, closes_fence: a backtick or tilde first
HEADING_LIKE = re.compile(r"[ \t]*#")  # atx_heading: a # first (is_table_start: a | in the line)
PROTECTED = ("code", "table")  # the kinds of block no chunk may cut: fenced and indented code, tables
# What Scanner.simple_list_end reads of a list's lines, to leave any that may hold indented code to read_list:
CONTAINER_MARKS = re.compile(r"(?:(?:[-+*]|\d{1,9}[.)])(?: +|$)|>| +)*")  # the list markers and >s opening a line
WIDE_MARKER = re.compile(r"(?:(?:^|[ >])(?:[-+*]|\d{1,9}[.)])|>) {5,}\S")  # a nested item or quote's line,
# opening with indented code (5 columns after its marker, the first of which is the marker's)
LAZY = "lazy"  # the text a container keeps for a lazy line (ContainerText): a paragraph's line, however it reads

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
    """A span no chunk may cut: a fenced or indented code block or a table, perhaps inside a list or quote."""

    start: int
    end: int  # just after its last line's ending
    kind: str  # "code" or "table"


class ListItem(NamedTuple):
    """What a list item's first line says about the item."""

    content_column: int  # where its content starts: later lines indented this far belong to it
    ordered: bool  # 1. or 1) rather than -, + or *
    number: int | None  # an ordered item's number
    has_content: bool  # anything after the marker (an empty item cannot interrupt a paragraph)
    marker_end: int  # where the spaces after the marker end


class Block(NamedTuple):
    kind: str  # heading, code (fenced or indented), table, list, quote, html, rule, paragraph
    first: int  # index of its first line
    last: int  # index just after its last line
    level: int = 0  # heading level
    title: str = ""  # heading title
    nested: list | tuple = ()  # the Regions of code blocks and tables inside it


def list_item(text):
    """The ListItem a line opens, or None.

    Its content starts after the marker and the spaces after it (a tab
    reaching the next multiple of 4), unless there are 5 columns of them or
    more, or nothing after them: then one column after the marker, and an
    item opening with 5 spaces opens with indented code.
    """
    match = LIST_ITEM.match(text)
    if not match:
        return None
    indent, marker, spaces = match.groups()
    start = len(indent) + len(marker)  # where the marker ends, a column too: only spaces before it
    width = len(spaces) if "\t" not in spaces else len((text[:start] + spaces).expandtabs(4)) - start
    has_content = bool(text[match.end():].strip(" \t"))  # as in is_blank: a form feed is content
    if not (has_content and 1 <= width <= 4):
        width = 1
    ordered = marker[0].isdigit()
    return tuple.__new__(ListItem, (start + width, ordered, int(marker[:-1]) if ordered else None,
                                    has_content, match.end()))


def item_content(text, item):
    """The content of a list item's first line `text`, its ListItem `item`: from its content column
    on, tabs made spaces (so an item opening with indented code keeps 4 spaces of them)."""
    if not item.has_content:
        return ""
    return (text.expandtabs(4) if "\t" in text else text)[item.content_column:]


def quote_content(text):
    """The content of a quote's line: after its `>` and the space after it, if any. A tab there
    gives that space one column of its width, the rest staying indentation, as CommonMark reads it."""
    after = text.index(">") + 1  # a column too: only spaces before it
    rest = text[after:]
    if "\t" in rest:
        rest = (" " * after + rest).expandtabs(4)[after:]
    return rest[1:] if rest[:1] == " " else rest


def may_nest(texts):
    """False if no line could hold a fence or a table (no ```, ~~~ or |)."""
    inside = "\n".join(texts)
    return "|" in inside or "```" in inside or "~~~" in inside


def continues_text(content):
    """True if `content`, a line of a list's content, is text that a line indented under it may
    continue (a paragraph's line): a letter or digit first, once the list markers and >s that open
    it are read. None, for a blank line, is not."""
    return content is not None and content[CONTAINER_MARKS.match(content).end():][:1].isalnum()


# ---- link reference definitions, which are no paragraph --------------------------

ESCAPABLE = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")  # ASCII punctuation: what a backslash escapes


def definition_lines(texts):
    """How many of the first lines of a paragraph, `texts`, are link reference definitions.

    `[label]: destination "title"` defines a link and shows nothing: CommonMark
    takes such definitions off the start of a paragraph, and a paragraph of
    nothing else is no paragraph, so a setext underline under it is none. A
    definition may run over several lines (its label, destination and title
    each on its own), and ends at the end of a line.
    """
    text = "\n".join(line.lstrip(" \t") for line in texts) + "\n"  # a paragraph's lines, indent aside
    position = count = 0
    while text.startswith("[", position):
        end = definition_end(text, position)
        if end is None:
            break
        count += text.count("\n", position, end)
        position = end
    return count


def definition_end(text, start):
    """Where the link reference definition at text[start] (a `[`) ends, after its line end; None if
    none is there. `text` is a paragraph's lines, each ending in a line end."""
    position = start + 1
    while position < len(text) and text[position] != "]":  # the label: no [ unless escaped
        if text[position] == "[":
            return None
        position += 2 if text[position] == "\\" and text[position + 1: position + 2] in ESCAPABLE else 1
    label = text[start + 1: position]
    if position >= len(text) or len(label) > 999 or not label.strip() or text[position + 1: position + 2] != ":":
        return None
    position = skip_spaces(text, position + 2)
    if text.startswith("<", position):  # <a destination>: no line end, no < or > unless escaped
        position += 1
        while position < len(text) and text[position] not in "<>\n":
            position += 2 if text[position] == "\\" and text[position + 1: position + 2] in ESCAPABLE else 1
        if not text.startswith(">", position):
            return None
        position += 1
    else:  # a destination without spaces or control characters, its parentheses balanced
        first, depth = position, 0
        while position < len(text) and text[position] > " " and text[position] != "\x7f":
            char = text[position]
            if char == "\\" and text[position + 1: position + 2] in ESCAPABLE:
                position += 2
                continue
            if char == ")" and not depth:
                break
            depth += (char == "(") - (char == ")")
            position += 1
        if position == first or depth:
            return None
    destination_end = position
    position = skip_spaces(text, position)
    if position > destination_end and text[position: position + 1] in ("\"", "'", "("):  # a title
        end = title_end(text, position)
        end = line_end_after(text, end) if end is not None else None
        if end is not None:
            return end
    return line_end_after(text, destination_end)  # without a title: what followed was no title


def title_end(text, start):
    """The offset after the link title opening at text[start] ("...", '...' or (...)), or None."""
    closing = ")" if text[start] == "(" else text[start]
    position = start + 1
    while position < len(text) and text[position] != closing:
        if closing == ")" and text[position] == "(":
            return None
        position += 2 if text[position] == "\\" and text[position + 1: position + 2] in ESCAPABLE else 1
    return position + 1 if position < len(text) else None


def skip_spaces(text, position):
    """Past the spaces and tabs at `position`, and at most one line end among them."""
    while text[position: position + 1] in (" ", "\t"):
        position += 1
    if text.startswith("\n", position):
        position += 1
        while text[position: position + 1] in (" ", "\t"):
            position += 1
    return position


def line_end_after(text, position):
    """The offset after the line end that ends text[position:] if only spaces and tabs come first, else None."""
    while text[position: position + 1] in (" ", "\t"):
        position += 1
    return position + 1 if text.startswith("\n", position) else None


# ---- the scanner ------------------------------------------------------------------------


def html_ending(text, in_paragraph):
    """How an HTML block starting with the line `text` ends: the pattern its last line holds, or
    BLANK_ENDS (a blank line ends it); None if no HTML block starts there (under a paragraph's
    line, if `in_paragraph`: a lone tag, HTML block 7, starts none there)."""
    for start, end in HTML_ENDS:
        if start.match(text):
            return end
    if HTML_BLOCK_TAG.match(text) or (not in_paragraph and HTML_LONE_TAG.match(text)):
        return BLANK_ENDS
    return None


class ContainerText:
    """The lines of a list item or quote, read as they come: to know if a lazy line may follow,
    and if any of them must stay whole.

    CommonMark allows a line without the container's indent or `>` (a lazy
    line) only as the continuation of a paragraph: the block open at the end
    of the container's lines must be a paragraph, not a fence, indented code,
    a table or HTML (nor a heading or a rule, which close at once), and inside
    a container nested in this one, the innermost (a lazy line continues the
    paragraph of a quote in a list item). So each line is read as the scanner
    reads it, with Scanner.line_kind, and a container nested in this one by a
    ContainerText of its own. The outermost keeps the lines, each without the
    container's prefix, for the scanner to scan again; a lazy line is kept as
    LAZY, a line the scanner reads as the paragraph's, as it is (the line
    itself might read as an underline or a table's delimiter row).
    """

    __slots__ = ("scanner", "depth", "column", "root", "lines", "open", "fence", "html_end", "child", "paragraph",
                 "protected")

    def __init__(self, scanner, depth, column=None, root=None):
        self.scanner = scanner
        self.depth = depth  # how deep its lines are scanned (a container deeper than MAX_NESTING is text)
        self.column = column  # a list item's content column; None for a quote
        self.root = root or self  # the outermost ContainerText, which keeps the lines
        self.lines = []  # the outermost's Lines, each without the container's prefix
        self.open = None  # the block open at this level: PARAGRAPH, TABLE, "code" (fenced), "indented_code", "html"
        self.fence = None  # (char, length) of the fence open
        self.html_end = None  # how the HTML block open ends (html_ending)
        self.child = None  # a container open inside this one
        self.paragraph = []  # the lines of the paragraph open
        self.protected = False  # (the outermost's) a fence, indented code or table somewhere inside

    def innermost(self):
        inner = self
        while inner.child is not None:
            inner = inner.child
        return inner

    @property
    def in_paragraph(self):
        """True if a lazy line may come next: the innermost block open is a paragraph."""
        return self.innermost().open == PARAGRAPH

    @property
    def in_fence(self):
        """True if the innermost block open is a fence (an unclosed fence runs over blank lines)."""
        return self.innermost().open == "code"

    def add(self, start, end, text):
        """The next line of the outermost container, from `start` to `end`, `text` without its prefix."""
        self.lines.append(tuple.__new__(Line, (start, end, text)))
        self.feed(text)

    def add_lazy(self, start, end):
        """A lazy line: it continues the innermost paragraph (in_paragraph was True)."""
        self.lines.append(tuple.__new__(Line, (start, end, LAZY)))
        self.innermost().paragraph.append(LAZY)

    def feed(self, text):
        """Read the line `text` of this container's content."""
        child = self.child
        if child is not None:
            if child.takes(text):
                return
            self.child = None
        if not text.strip(" \t"):  # blank: it ends a paragraph, a table, HTML 6 and 7
            if self.open in (PARAGRAPH, TABLE) or self.open == "html" and self.html_end is BLANK_ENDS:
                self.open = None
            return
        kind = self.continued(text)
        if kind is not None:
            self.start(kind, text)

    def takes(self, text):
        """True if the line `text` of the container around this one is this one's (then read)."""
        if self.column is None:  # a quote: a > first
            if QUOTE_MARKER.match(text):
                self.feed(quote_content(text))
                return True
        elif not text.strip(" \t"):
            self.feed("")
            return True
        elif indent_of(text) >= self.column:  # an item: indented to its content
            self.feed(strip_columns(text, self.column))
            return True
        if text.strip(" \t") and self.in_paragraph and self.scanner.is_lazy(text):
            self.innermost().paragraph.append(LAZY)
            return True
        return False

    def continued(self, text):
        """None if the non-blank line `text` continues the block open, else the kind of block it starts."""
        scanner = self.scanner
        open_ = self.open
        if open_ == "code":
            if FENCE_LIKE.match(text) and scanner.recognise.closes_fence(text, *self.fence):
                self.open = None
            return None
        if open_ == "html":
            if self.html_end is not BLANK_ENDS and self.html_end.search(text):
                self.open = None
            return None
        if open_ == PARAGRAPH:
            last = self.paragraph[-1]
            if "|" in last and scanner.recognise.is_table_start(
                    [tuple.__new__(Line, (0, 0, last)), tuple.__new__(Line, (0, 0, text))], 0):
                self.open = TABLE  # the paragraph's last line was a table's header row
                self.root.protected = True
                return None
            if not text[:1].isalpha():  # a letter first: no underline, nor a block the paragraph gives way to
                if SETEXT_UNDERLINE.match(text) and not self.only_definitions():
                    self.open = None  # a setext heading
                    return None
                kind = scanner.line_kind(text, PARAGRAPH)
                if kind is not None:
                    return kind
            self.paragraph.append(text)
            return None
        if open_ == TABLE:
            return None if text[:1] == "|" or text[:1].isalpha() else scanner.line_kind(text, TABLE)
        if open_ == "indented_code" and indent_of(text) >= 4:
            return None
        return scanner.line_kind(text, TOP)

    def only_definitions(self):
        """True if the paragraph open is nothing but link reference definitions (then no paragraph)."""
        paragraph = self.paragraph
        return paragraph[0].lstrip(" ")[:1] == "[" and definition_lines(paragraph) == len(paragraph)

    def start(self, kind, text):
        """Open the block of `kind` that the line `text` starts."""
        self.open = None
        if kind in ("quote", "list") and self.depth < MAX_NESTING:
            if kind == "quote":
                self.child = ContainerText(self.scanner, self.depth + 1, None, self.root)
                self.child.feed(quote_content(text))
            else:
                item = self.scanner.item_of(text)
                self.child = ContainerText(self.scanner, self.depth + 1, item.content_column, self.root)
                self.child.feed(item_content(text, item))
        elif kind in ("code", "indented_code", "table"):
            self.open = kind
            self.fence = self.scanner.fence
            self.root.protected = True
        elif kind == "html":
            self.html_end = html_ending(text, False)
            if self.html_end is BLANK_ENDS or not self.html_end.search(text):
                self.open = "html"
        elif kind not in ("heading", "rule"):  # a paragraph (or a container too deep to read)
            self.open = PARAGRAPH
            self.paragraph = [text]


class Scanner:
    """Markdown's blocks, found line by line with the student's Recognisers."""

    def __init__(self, recognise: Recognisers):
        self.recognise = recognise
        self.read = {kind: reader.__get__(self) for kind, reader in READERS.items()}
        self.fence = self.heading = None  # what block_start found, for read_code and read_heading
        self.item = (None, None)  # (text, list_item(text)) of the last line asked, see item_of()
        self.texts = []  # the texts of the lines being scanned (scan sets them)
        self.blocks = []  # the blocks scan has found so far in those lines

    def block_start(self, lines, i, where=TOP):
        """The kind of block that starts at lines[i], or None if the line continues the one open.

        One set of rules answers three questions: which block starts here
        (where=TOP); does the line interrupt the paragraph above it
        (PARAGRAPH: an indented line, a lone HTML tag, an empty list item or one
        numbered other than 1 do not); does it end the table above it (TABLE: a
        line starting with a letter or a pipe is another row). The first
        character after the indent says which rules to try: most lines start
        with a letter, and only a table or a paragraph can.
        """
        text = self.texts[i]
        first = text[:1]
        if first in (" ", "\t", ""):
            if is_blank(text):
                return "blank"
            if indent_of(text) >= 4:
                return None if where == PARAGRAPH else "indented_code"
            first = text.lstrip(" ")[:1]
        if first.isalpha() or first == "|":
            return self.table_or_text(lines, i, where)
        if first in "`~":
            self.fence = self.recognise.fence_opening(text)
            if self.fence:
                return "code"
        if first == "#":
            self.heading = self.recognise.atx_heading(text)
            if self.heading:
                return "heading"
        if first in "*-_" and THEMATIC_BREAK.match(text):  # before lists: "- - -" is a break, not an item
            return "rule"
        if first == ">":
            return "quote"
        item = self.item_of(text) if first in "-+*" or first.isdecimal() else None
        if item and (where != PARAGRAPH or item.has_content and (not item.ordered or item.number == 1)):
            return "list"
        if first == "<" and html_ending(text, where != TOP) is not None:  # read_html finds where it ends
            return "html"
        return self.table_or_text(lines, i, where)

    def item_of(self, text):
        """list_item(text), remembered: a list's lines are asked about by block_start, read_list
        and read_item in turn."""
        if self.item[0] is not text:
            self.item = (text, list_item(text))
        return self.item[1]

    def table_or_text(self, lines, i, where):
        """What a line no other block claims starts: a table, else a paragraph (at the top only)."""
        if where == TABLE:
            return None
        if "|" in self.texts[i] and self.recognise.is_table_start(lines, i):
            return "table"
        return "paragraph" if where == TOP else None

    def line_kind(self, text, where):
        """block_start for the line `text` alone, with no line after it: a container's lines are read
        as they come (ContainerText), before the next one is known."""
        outer = self.texts
        self.texts = [text]
        kind = self.block_start([tuple.__new__(Line, (0, len(text), text))], 0, where)
        self.texts = outer
        return kind

    def is_lazy(self, text):
        """True if the line `text`, outside a container's indent or `>`, would continue the paragraph
        open inside it: a line that starts no block there (a list item, any, ends the container)."""
        return not self.item_of(text) and self.line_kind(text, PARAGRAPH) is None

    def next_item(self, text):
        """The ListItem of the line `text` if it opens another item of a list, else None: `- - -` is
        a thematic break, not an item."""
        item = self.item_of(text)
        if item and text[item.marker_end:item.marker_end + 1] in ("-", "*") and THEMATIC_BREAK.match(text):
            return None
        return item

    def scan(self, lines, depth=0):
        """The blocks of `lines`, in order. Blank lines belong to no block (they join the one before).

        `lines` is a list of Lines, or a LineView, whose texts are read without making its Lines.
        """
        outer = self.texts, self.blocks  # a container's lines are scanned inside the scan of the lines around it
        self.texts = texts = lines.texts if isinstance(lines, LineView) else [line.text for line in lines]
        self.blocks = blocks = []
        i = 0
        n = len(lines)
        while i < n:  # the commonest lines first: blank, a paragraph of one line, a heading, a fence
            text = texts[i]
            first = text[:1]
            if first in ("", " ", "\t") and not text.strip(" \t"):  # blank (is_blank, inline)
                i += 1
            elif first.isalpha() and "|" not in text:  # a paragraph (block_start would say so)
                if i + 1 == n or not texts[i + 1].strip(" \t"):  # of one line
                    blocks.append(tuple.__new__(Block, ("paragraph", i, i + 1, 0, "", ())))  # Block(...), faster
                else:
                    blocks.append(self.read_paragraph(lines, i, depth))
                i = blocks[-1].last
            elif first == "#" and (heading := self.recognise.atx_heading(text)):
                blocks.append(tuple.__new__(Block, ("heading", i, i + 1, heading[0], heading[1], ())))
                i += 1
            elif first in ("`", "~") and (fence := self.recognise.fence_opening(text)):
                blocks.append(self.code_block(lines, i, fence))
                i = blocks[-1].last
            else:
                blocks.append(self.read[self.block_start(lines, i)](lines, i, depth))
                i = blocks[-1].last
        self.texts, self.blocks = outer
        return blocks

    # Each read_<kind> reads the block of that kind starting at lines[i].

    def read_paragraph(self, lines, i, depth):
        """A paragraph, or a setext heading: a line of `===` or `---` under it makes it one.

        The underline is tested first, because `---` under text is an
        underline, not a thematic break. Link reference definitions opening the
        paragraph are no part of it (definition_lines): a heading's title is the
        text after them, and under nothing but definitions, no heading.
        """
        texts = self.texts
        j = i + 1
        n = len(lines)
        while j < n:
            text = texts[j]
            if not text.strip(" \t"):  # blank
                break
            if text[:1].isalpha():  # no underline; it interrupts the paragraph only as a table
                if "|" in text and self.recognise.is_table_start(lines, j):
                    break
                j += 1
                continue
            underline = SETEXT_UNDERLINE.match(text)
            if underline:
                definitions = definition_lines(texts[i:j]) if texts[i].lstrip(" ")[:1] == "[" else 0
                if definitions < j - i:
                    if definitions:  # the definitions, a block of their own before the heading
                        self.blocks.append(Block("paragraph", i, i + definitions))
                    title = " ".join(text.strip() for text in texts[i + definitions:j])
                    level = 1 if underline.group(1)[0] == "=" else 2
                    return Block("heading", i + definitions, j + 1, level=level, title=title)
            if self.block_start(lines, j, PARAGRAPH) is not None:
                break
            j += 1
        return tuple.__new__(Block, ("paragraph", i, j, 0, "", ()))

    def read_table(self, lines, i, depth):
        texts = self.texts
        j = i + 2  # the header row and the delimiter row
        n = len(lines)
        while j < n:
            first = texts[j][:1]
            if not (first == "|" or first.isalpha()) and self.block_start(lines, j, TABLE) is not None:
                break
            j += 1
        return tuple.__new__(Block, ("table", i, j, 0, "", ()))

    def read_code(self, lines, i, depth):
        return self.code_block(lines, i, self.fence)

    def code_block(self, lines, i, fence):
        """A fenced block opened by `fence`, to its closing fence; one never closed runs to the end."""
        closes_fence, fence_like = self.recognise.closes_fence, FENCE_LIKE.match
        texts = self.texts
        end = len(lines)
        for j in range(i + 1, end):
            if fence_like(texts[j]) and closes_fence(texts[j], *fence):
                end = j + 1
                break
        return tuple.__new__(Block, ("code", i, end, 0, "", ()))

    def read_heading(self, lines, i, depth):
        level, title = self.heading
        return Block("heading", i, i + 1, level=level, title=title)

    def read_rule(self, lines, i, depth):
        return Block("rule", i, i + 1)

    def read_indented_code(self, lines, i, depth):
        """Indented code: lines indented 4 columns or more, and the blank lines between them (not the
        blank lines after). A "code" block, kept whole as a fence is."""
        texts = self.texts
        j = i + 1
        while j < len(lines) and (is_blank(texts[j]) or indent_of(texts[j]) >= 4):
            j += 1
        while is_blank(texts[j - 1]):
            j -= 1
        return Block("code", i, j)

    def read_html(self, lines, i, depth):
        """An HTML block (block_start found that one starts here): to the line holding the pattern
        that ends it, or to the blank line after it (html_ending)."""
        texts = self.texts
        end = html_ending(texts[i], False)
        n = len(lines)
        if end is BLANK_ENDS:
            j = i + 1
            while j < n and not is_blank(texts[j]):
                j += 1
            return Block("html", i, j)
        j = i
        while j < n and not end.search(texts[j]):
            j += 1
        return Block("html", i, min(j + 1, n))

    def read_quote(self, lines, i, depth):
        """A block quote: its lines, without the > prefix, are scanned again for what they nest."""
        inner = ContainerText(self, depth + 1)
        texts = self.texts
        offsets = lines.offsets if isinstance(lines, LineView) else None
        j = i
        n = len(lines)
        while j < n:
            text = texts[j]
            if QUOTE_MARKER.match(text):
                start, end = (offsets[j], offsets[j + 1]) if offsets else lines[j][:2]
                inner.add(start, end, quote_content(text))
            elif text.strip(" \t") and inner.in_paragraph and self.is_lazy(text):
                start, end = (offsets[j], offsets[j + 1]) if offsets else lines[j][:2]
                inner.add_lazy(start, end)
            else:
                break
            j += 1
        return Block("quote", i, j, nested=self.nested_regions(inner, depth))

    def read_list(self, lines, i, depth):
        """A list: each item's content lines are scanned again for what they nest."""
        end = self.simple_list_end(lines, i)
        if end is not None and not may_nest(self.texts[i:end]):
            return tuple.__new__(Block, ("list", i, end, 0, "", ()))
        texts = self.texts
        items = []
        j = i
        n = len(lines)
        while j < n:
            inner, j = self.read_item(lines, j, depth)
            items.append(inner)
            if j < n and not self.next_item(texts[j]):
                break
        # Trailing blank lines belong after the list, unless a fence is still open at the end of the
        # last item: an unclosed fence runs to the end of its item, blank lines and all.
        last = inner.lines
        while not inner.in_fence and last[-1].text == "" and is_blank(texts[j - 1]):
            last.pop()
            j -= 1
        return Block("list", i, j, nested=[region for inner in items for region in self.nested_regions(inner, depth)])

    def simple_list_end(self, lines, i):
        """Where a list ends, as read_list would find, if it is simple, as most are: items and
        the lines indented under them, with no fence, no lazy line and no indented code. Else None.

        Indented code is 4 columns deeper than its item's content, and cannot
        continue a paragraph: a line indented that far under a blank line, or
        under a line that is not text (continues_text), or an item with 5
        spaces or more after its marker, may open some, and is left to
        read_list to read item by item.
        """
        texts = self.texts
        column = 0  # the content column of the item being read
        end = i  # after its last line
        previous = None  # the content of the line before; None after a blank line
        for j in range(i, len(lines)):
            text = texts[j]
            if not text.strip(" \t"):  # blank
                previous = None
                continue
            if column and indent_of(text) >= column:  # the item goes on
                content = strip_columns(text, column)
                if content[:4] == "    " and not continues_text(previous):
                    return None
            elif item := self.item_of(text):  # the next item
                column = item.content_column
                content = text[column:] if "\t" not in text else item_content(text, item)  # item_content, inline
                if content[:1] in ("-", "*") and THEMATIC_BREAK.match(text):  # "- - -": a rule, ending the list
                    return end
                if content[:1] == " " and item.has_content:  # 5 spaces after the marker: it opens with code
                    return None
            else:
                return None if j == end else end  # a lazy line, or after a blank line: the list's end
            if FENCE_LIKE.match(content) and self.recognise.fence_opening(content):
                return None
            if "     " in content and WIDE_MARKER.search(content.lstrip(" ")):  # code in a nested item or quote
                return None
            previous = content
            end = j + 1
        return end

    def read_item(self, lines, i, depth):
        """(the ContainerText of the list item starting at lines[i], the index after it)."""
        inner = ContainerText(self, depth + 1)  # each item is a container of its own
        texts = self.texts
        offsets = lines.offsets if isinstance(lines, LineView) else None
        first = lines[i]
        item = self.item_of(first.text)
        column = item.content_column
        inner.add(first.start, first.end, item_content(first.text, item))
        j = i + 1
        n = len(lines)
        while j < n:
            text = texts[j]
            start, end = (offsets[j], offsets[j + 1]) if offsets else lines[j][:2]
            if not text.strip(" \t"):  # blank
                inner.add(start, end, "")
            elif indent_of(text) >= column:
                inner.add(start, end, strip_columns(text, column))
            elif inner.in_paragraph and self.is_lazy(text):
                inner.add_lazy(start, end)
            else:
                break
            j += 1
        return inner, j

    def nested_regions(self, inner, depth):
        """The Regions of the code blocks and tables inside a container's lines (a ContainerText)."""
        if depth >= MAX_NESTING or not inner.protected:
            return []
        lines = inner.lines
        regions = []
        for block in self.scan(lines, depth + 1):
            if block.kind in PROTECTED:
                regions.append(Region(lines[block.first].start, lines[block.last - 1].end, block.kind))
            regions += block.nested
        return regions


READERS = {kind: getattr(Scanner, f"read_{kind}") for kind in  # what Scanner.scan calls for each kind
           ("paragraph", "table", "code", "heading", "rule", "indented_code", "html", "quote", "list")}


# ---- regions ---------------------------------------------------------------------------


def protected_regions(lines, blocks):
    """The sorted, disjoint Regions of the code blocks and tables among `blocks` and nested in them."""
    if isinstance(lines, LineView):
        offsets = lines.offsets  # line k runs from offsets[k] to offsets[k + 1]
        regions = [tuple.__new__(Region, (offsets[b.first], offsets[b.last], b.kind))
                   for b in blocks if b.kind in PROTECTED]
    else:
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


KEEP_LIST_ITEM = re.compile(r" {0,3}(?:[-+*]|\d{1,9}[.)])(?:[ \t]|$)")  # a list item's first line
KEEP_RULE = re.compile(r" {0,3}(?:(?:\*[ \t]*){3,}|(?:-[ \t]*){3,}|(?:_[ \t]*){3,})$")  # a thematic break
KEEP_HEADING = re.compile(r" {0,3}#{1,6}(?:[ \t]|$)")  # an ATX heading
KEEP_RAW_HTML = [  # HTML that a blank line does not end: (its first line, its last line)
    (re.compile(r" {0,3}<!--"), re.compile(r"-->")),
    (re.compile(r" {0,3}<(?:pre|script|style|textarea)(?:[ \t>]|$)", re.I),
     re.compile(r"</(?:pre|script|style|textarea)>", re.I)),
]
KEEP_LINE = re.compile(r"[^\n]*\n|[^\n]+$")  # a line of a text with LF line ends, its end included


def regions_to_keep_whole(text):
    """(start, end) of a page's fenced blocks, tables and indented code, found with patterns and a
    line-by-line reading of their own.

    This is deliberately separate code from the Scanner, so that the check
    below is not the chunker grading its own homework. It handles top-level
    fences, tables and indented code, with any line ends, which is what the
    lab's pages hold; the tricky documents name their nested ones.
    """
    found = regions_by_kind(text)
    return sorted(found["code"] + found["table"])


def regions_by_kind(text):
    """{"code": [(start, end)], "table": [(start, end)]}: what regions_to_keep_whole finds, by kind
    (fenced and indented code, tables), for reports that count each kind apart."""
    text = text.replace("\r\n", " \n").replace("\r", "\n")  # LF ends, every character in place
    fences = [m.span() for m in FENCE_BLOCK.finditer(text)]
    tables = []
    for match in TABLE_BLOCK.finditer(text):
        if not any(start <= match.start() < end for start, end in fences):
            tables.append(match.span())
    return {"code": sorted(fences + indented_code_spans(text, fences + tables)), "table": tables}


def indented_code_spans(text, skipped):
    """(start, end) of the top-level indented code blocks of `text` (LF line ends), outside the
    `skipped` spans (its fences and tables) and any front matter.

    Indented code is a run of lines indented 4 columns or more, blank lines
    among them, under a blank line, a heading, a rule, a fence, a table or
    nothing: a line indented under a paragraph's line only continues it. It ends at its last indented line. A
    list's lines are passed over, blank lines and all (an indented line there
    belongs to an item), and so is HTML that a blank line does not end.
    """
    spans, code = [], None  # code: (start, end) of the block being read
    before = "start"  # the line before: start, blank, text, or closed (a heading, rule, fence or table)
    in_list = False
    html_end = None  # what ends the HTML block being passed over
    position = front_matter(text)[1]
    for match in KEEP_LINE.finditer(text, position):
        start, position = match.span()
        body = match.group().rstrip("\n")
        if any(s <= start < e for s, e in skipped):  # a fence or table, which a line cannot continue
            spans += [code] if code is not None else []
            in_list = in_list and not (before == "blank" and not body[:1].isspace())
            code, before = None, "closed"
            continue
        blank = not body.strip(" \t")
        indented = not blank and len(body.expandtabs(4)) - len(body.expandtabs(4).lstrip(" ")) >= 4
        if html_end is not None:
            if html_end.search(body):
                html_end = None
            continue
        if code is not None and (blank or indented):
            if indented:
                code = (code[0], position)
            continue
        if code is not None:
            spans.append(code)
            code = None
        if indented and before != "text" and not in_list:
            code = (start, position)
            continue
        if not blank and not indented:
            if KEEP_LIST_ITEM.match(body) and not KEEP_RULE.match(body):
                in_list = True
            elif before == "blank" and not body[:1].isspace():  # after a blank line, unindented: out of it
                in_list = False
        for opening, end in KEEP_RAW_HTML:
            if not blank and (html := opening.match(body)) and not end.search(body, html.end()):
                html_end = end
        before = "blank" if blank else "closed" if KEEP_HEADING.match(body) or KEEP_RULE.match(body) else "text"
    return spans + ([code] if code is not None else [])


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


def _read_tricky_markdown() -> tuple[TrickyMarkdown, ...]:
    """The tricky documents, one JSON object a line in datasets/tricky-markdown.jsonl: data, so
    adding a case touches no code (keys: what, text, and optionally keep_whole and paths)."""
    documents = []
    with open(DATASETS / "tricky-markdown.jsonl", encoding="utf-8") as file:
        for line in file:
            record = json.loads(line)
            paths = {text: tuple(path) for text, path in record.get("paths", {}).items()}
            documents.append(TrickyMarkdown(record["what"], record["text"], tuple(record.get("keep_whole", ())), paths))
    return tuple(documents)


TRICKY_MARKDOWN = _read_tricky_markdown()
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


# ---- the student's rules on every line of the tricky documents -----------------
# The scanner asks a rule only about the lines it could be true of (a # first, say), so a
# rule can be wrong on every other line and still chunk well. These cases ask each rule
# about every line of every tricky document, and judge it by what a real parser
# (markdown-it-py, CommonMark with GitHub's tables) reads in that line on its own: readings
# written down by tools/make_markdown_readings.py, since the parser is the grader's judge and
# no code a lab can call answers a rule. The grading tests ask about other lines.

READINGS_FILE = DATASETS / "tricky-markdown-readings.jsonl"


def _expects(expected, as_truth: bool = False) -> Callable:
    """A judge: the rule's answer is `expected`, the parser's (any falsy value for no, if `as_truth`)."""

    def judge(result, *args):
        got = bool(result) if as_truth else (tuple(result) if isinstance(result, list) else result)
        if got != expected:
            raise ValueError(f"returned {result!r}, where a CommonMark parser reads {expected!r}")

    return judge


def every_line_cases(rules: Recognisers) -> list[Case]:
    """Cases for the student's four rules on every distinct line of the tricky documents
    (closes_fence after a backtick and after a tilde fence), shortest line first."""
    documents = {document.what: split_lines(document.text) for document in TRICKY_MARKDOWN}
    cases = []
    with open(READINGS_FILE, encoding="utf-8") as file:
        for record in map(json.loads, file):
            lines, number, rule = documents[record["what"]], record["line"], record["rule"]
            expected = tuple(record["expected"]) if isinstance(record["expected"], list) else record["expected"]
            args = (lines, number) if rule == "is_table_start" else (lines[number].text, *record["args"])
            judge = _expects(expected, as_truth=isinstance(expected, bool))
            cases.append(Case(f"line {number + 1} of {record['what']}", getattr(rules, rule), args, judge))
    return sorted(cases, key=_line_length)


def _line_length(case: Case) -> int:
    """The length of the line a case asks about: (text, ...) or (lines, i)."""
    first = case.args[0]
    return len(first) if isinstance(first, str) else len(first[case.args[1]].text)
