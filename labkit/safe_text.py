"""Text a person reads: every byte the grader and a lab's own check print, log or report passes through here.

A student's code controls some of the text that reaches a report or a lab's FAIL line (an
exception's message, a value's repr, a file name). Printed as it is, a control or format
character can move a terminal's cursor, retitle its window, write to its clipboard, or reorder
what a line seems to say (bidi controls). So every such character becomes a visible escape
(`\\x1b`, `\\u202e`), and the text is bounded.

It lives in labkit because a lab prints its own failures too and labkit cannot import the
grader; the grader's tools/grading/safe_text.py is this same function.
"""

import unicodedata

# Line ends stay readable where a caller allows several lines; everything else of Cc and Cf goes.
UNSEEN_CATEGORIES = ("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp")
ELLIPSIS = " …"


def escaped_char(char: str) -> str:
    """One character as the escape Python would write for it: visible, never acted on."""
    code = ord(char)
    if code <= 0xFF:
        return f"\\x{code:02x}"
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


def safe_text(text: object, limit: int = 300, *, lines: bool = False) -> str:
    """`text` made safe to print: controls and format characters escaped, at most `limit` characters.

    With `lines=True`, newlines are kept (a log line per line); otherwise a newline is escaped
    too, so one value stays one line. The bound counts the escaped text, so no input can make
    the result longer than `limit` plus the ellipsis that says it was cut.
    """
    text = str(text)
    if len(text) <= limit and all(line.isprintable() for line in (text.split("\n") if lines else [text])):
        return text  # nothing to escape (isprintable is False for every unseen category), quickly
    out = []
    size = 0
    for char in text:
        if lines and char == "\n":
            piece = char
        elif unicodedata.category(char) in UNSEEN_CATEGORIES:
            piece = escaped_char(char)
        else:
            piece = char
        if size + len(piece) > limit:
            return "".join(out) + ELLIPSIS
        out.append(piece)
        size += len(piece)
    return "".join(out)
