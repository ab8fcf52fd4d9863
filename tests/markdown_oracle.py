"""Regions a Markdown chunker must keep whole, as a real Markdown parser sees them.

markdown-it-py (CommonMark with GitHub tables) parses the text; every `fence`
and `table` token, at any depth (inside lists and quotes too), gives a range
of lines. A chunk boundary strictly inside such a range cuts it. This is
independent of the course's own line scanner, which it judges.

Indented code blocks (CommonMark's `code_block` tokens) are reported apart,
by indented_code_regions and indented_code_cuts, so that a report can count
them on their own (rag5 cuts them, and knows nothing of Markdown); the grading
checks ask for both, since rag6 keeps indented code whole as it keeps fences.
"""

import functools
import re

from markdown_it import MarkdownIt

# Block structure only: every reading here takes a block token's lines or an inline token's raw `content`,
# which the block parser sets; parsing inline markup into children would double the time for nothing.
_parser = MarkdownIt("commonmark").enable("table").disable("inline")
FRONT_MATTER = re.compile(
    r"\A\ufeff*---[^\S\r\n]*(?:\r\n|\r|\n)(?:.*?(?:\r\n|\r|\n))??(?:---|\.\.\.)[^\S\r\n]*(?:\r\n|\r|\n|\Z)", re.S
)


def without_front_matter(text):
    """`text` with a leading front-matter block blanked out, line for line.

    Front matter is metadata, not CommonMark (a parser would read its `---`
    as a rule and anything inside as Markdown); blanking keeps line numbers.
    A byte order mark may come first, as editors on Windows write it, and a
    `---` line may end in any whitespace, as the course's front matter reads it.
    """
    match = FRONT_MATTER.match(text)
    if not match:
        return text
    blanked = re.sub(r"[^\r\n]", " ", match.group())
    return blanked + text[match.end():]


@functools.lru_cache(maxsize=4)
def _parsed(text):
    """(lines, tokens) of `text`: each line's (start, end without its line break), and the
    parser's tokens of the text with its front matter blanked. Kept for the last few texts,
    since a text is often judged for several chunkings in a row."""
    lines = tuple(
        (match.start(), match.start() + len(match.group().rstrip("\r\n")))
        for match in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    )
    return lines, tuple(_parser.parse(without_front_matter(text)))


def _regions(text, types):
    """[(token type, start, end)] of the tokens of `types`, each over its lines; `end` excludes the last line break."""
    lines, tokens = _parsed(text)
    regions = []
    for token in tokens:
        if token.type in types and token.map:
            first, last = token.map[0], min(token.map[1], len(lines))
            if first < last:
                regions.append((token.type, lines[first][0], lines[last - 1][1]))
    return regions


def protected_regions(text):
    """[(kind, start, end)] of fenced code and tables; `end` excludes the last line break."""
    return _regions(text, ("fence", "table_open"))


def indented_code_regions(text):
    """[("code_block", start, end)] of CommonMark's indented code blocks, at any depth (in
    lists and quotes too), as protected_regions gives fences; `end` excludes the last line
    break. Blank lines after a block are not part of it, as the parser's line map says."""
    return _regions(text, ("code_block",))


def _cuts(regions, chunks):
    found = []
    for kind, start, end in regions:
        for chunk in chunks:
            for position in (chunk.start, chunk.end):
                if start < position < end:
                    found.append((kind, start, end, position))
    return found


def cuts(text, chunks):
    """(kind, start, end, position) for every chunk boundary strictly inside a protected region."""
    return _cuts(protected_regions(text), chunks)


def indented_code_cuts(text, chunks):
    """(kind, start, end, position) for every chunk boundary strictly inside an indented code block."""
    return _cuts(indented_code_regions(text), chunks)


def parse(text):
    """The parser's tokens of `text`, as it is: what a judge of one line's reading asks for."""
    return _parser.parse(text)


WHOLE = {"fence": "code", "code_block": "code", "table_open": "table"}


def whole_blocks(text):
    """[(kind, start, end)] of the blocks a chunker keeps whole even over budget: "code" for a
    fence or an indented code block, "table", at any depth, and "front_matter" for a leading
    front-matter block; `end` excludes the last line break."""
    blocks = [(WHOLE[kind], start, end) for kind, start, end in _regions(text, tuple(WHOLE))]
    match = FRONT_MATTER.match(text)
    if match:
        blocks.insert(0, ("front_matter", 0, len(match.group().rstrip("\r\n"))))
    return blocks


BLOCK_TOKENS = ("fence", "code_block", "html_block", "hr")  # blocks with no closing token


def top_blocks(text):
    """[(kind, start, end)] of the page's blocks at the top level (not inside a list or quote: a
    list or quote is one block), in order: the token's type without "_open" ("paragraph",
    "heading", "bullet_list", "fence", "table", ...), and "front_matter" for a leading front-matter
    block; `end` excludes the last line break, and blank lines between blocks belong to none."""
    lines, tokens = _parsed(text)
    blocks = []
    match = FRONT_MATTER.match(text)
    if match:
        blocks.append(("front_matter", 0, len(match.group().rstrip("\r\n"))))
    for token in tokens:
        if token.level != 0 or not token.map or not (token.type.endswith("_open") or token.type in BLOCK_TOKENS):
            continue
        first, last = token.map[0], min(token.map[1], len(lines))
        if first < last:
            blocks.append((token.type.removesuffix("_open"), lines[first][0], lines[last - 1][1]))
    return blocks


def headings(text):
    """[(start, end, path)] of the headings that open sections: ATX and setext, at the top level
    (not in lists or quotes), each with the heading path of titles it opens, as enter_section
    makes it (a heading closes the open ones of its level or deeper). A setext title's lines
    are joined by a space; `end` excludes the last line break."""
    lines, tokens = _parsed(text)
    found, path = [], ()
    for opening, inline in zip(tokens, tokens[1:]):
        if opening.type != "heading_open" or opening.level != 0 or not opening.map:
            continue
        level, first, last = int(opening.tag[1]), opening.map[0], min(opening.map[1], len(lines))
        title = " ".join(line.strip() for line in inline.content.splitlines())
        path = tuple(entry for entry in path if entry[0] < level) + ((level, title),)
        found.append((lines[first][0], lines[last - 1][1], tuple(title for _, title in path)))
    return found


# ---- the parser's reading of one line, the judge of rag6's four rules ------------
# The rules' answers come from here, the grader's side, never from code a lab's worker
# holds: the lab checks itself against readings written down once
# (datasets/tricky-markdown-readings.jsonl, by readings() below), and the grading tests ask
# about other lines.


def heading(text):
    """(level, title) if the line `text` alone is an ATX heading to the parser, else None."""
    tokens = _parser.parse(text + "\n")
    if tokens and tokens[0].type == "heading_open" and tokens[0].markup.startswith("#"):
        return int(tokens[0].tag[1]), tokens[1].content
    return None


def fence(text):
    """(char, length) if the line `text` alone opens a fence to the parser, else None."""
    tokens = _parser.parse(text + "\n")
    if tokens and tokens[0].type == "fence":
        return tokens[0].markup[0], len(tokens[0].markup)
    return None


def closes(text, char, length):
    """True if the line `text` right after an opening fence of `length` times `char` closes it:
    the parser's fence then holds nothing."""
    tokens = _parser.parse(f"{char * length}\n{text}\nafter\n")
    return tokens[0].type == "fence" and tokens[0].content == ""


def table_start(text, next_text):
    """True if the lines `text` and `next_text` alone are a table's header and delimiter rows."""
    if next_text is None:
        return False
    tokens = _parser.parse(f"{text}\n{next_text}\n")
    return bool(tokens) and tokens[0].type == "table_open"


CLOSING_FENCES = (("`", 3), ("~", 4))  # the fences closes_fence is asked about, after each line


def readings(documents):
    """What the parser reads in every distinct line of `documents` (TrickyMarkdown), as records
    {"what", "line" (from 0), "rule", "args" (after the line's text), "expected"}: each rule once a
    line (is_table_start once a pair of lines), in the documents' order."""
    from labkit.markdown import split_lines

    records, lines_seen, pairs_seen = [], set(), set()
    for document in documents:
        lines = [line.text for line in split_lines(document.text)]
        for number, text in enumerate(lines):
            following = lines[number + 1] if number + 1 < len(lines) else None

            def record(rule, expected, args=()):
                records.append({"what": document.what, "line": number, "rule": rule, "args": list(args),
                                "expected": list(expected) if isinstance(expected, tuple) else expected})

            if (text, following) not in pairs_seen:
                pairs_seen.add((text, following))
                record("is_table_start", table_start(text, following))
            if text not in lines_seen:
                lines_seen.add(text)
                record("atx_heading", heading(text))
                record("fence_opening", fence(text))
                for char, length in CLOSING_FENCES:
                    record("closes_fence", closes(text, char, length), (char, length))
    return records
