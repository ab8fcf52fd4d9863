"""Regions a Markdown chunker must keep whole, as a real Markdown parser sees them.

markdown-it-py (CommonMark with GitHub tables) parses the text; every `fence`
and `table` token, at any depth (inside lists and quotes too), gives a range
of lines. A chunk boundary strictly inside such a range cuts it. This is
independent of the course's own line scanner, which it judges.
"""

import re

from markdown_it import MarkdownIt

_parser = MarkdownIt("commonmark").enable("table")
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


def protected_regions(text):
    """[(kind, start, end)] of fenced code and tables; `end` excludes the last line break."""
    lines = [
        (match.start(), match.start() + len(match.group().rstrip("\r\n")))
        for match in re.finditer(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
    ]
    regions = []
    for token in _parser.parse(without_front_matter(text)):
        if token.type in ("fence", "table_open") and token.map:
            first, last = token.map[0], min(token.map[1], len(lines))
            if first < last:
                regions.append((token.type, lines[first][0], lines[last - 1][1]))
    return regions


def cuts(text, chunks):
    """(kind, start, end, position) for every chunk boundary strictly inside a protected region."""
    found = []
    for kind, start, end in protected_regions(text):
        for chunk in chunks:
            for position in (chunk.start, chunk.end):
                if start < position < end:
                    found.append((kind, start, end, position))
    return found
