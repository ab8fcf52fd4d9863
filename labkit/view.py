"""Seeing chunks: as a table, or marked on the text they come from."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from html import escape

from labkit.notebook import in_notebook


# --------------------------------------------------------------------------
# Seeing chunks: as a table, or marked on the text they come from
# --------------------------------------------------------------------------
# show_chunks lists chunks, one line each. view_chunks shows them where they
# are: the document's own text, cut where the chunks cut it. Every mark is
# placed by a chunk's start and end, its true offsets, never by adding up
# lengths or searching for its text, so a chunker that reports a wrong offset
# is seen to. Chunks alternate between two background colours, text that two
# chunks share gets a third, and each chunk opens with a label: its number,
# span and token count (and its header, heading path or flags if it has any).
#
# The view takes the form its output can show:
# - in a notebook, HTML;
# - in a terminal, ANSI colours;
# - anywhere else (a file, a pipe), or when NO_COLOR is set (no-color.org),
#   plain text: labels in {braces}, shared text in «guillemets», and {/#n}
#   where chunk n ends with no chunk after it. A view cut short by its limit
#   ends with {/#n · the view stops; ...} instead: what follows is in chunks
#   the view leaves out, not in none.

# Light backgrounds that dark text reads well on, the same in HTML and in a
# 256-colour terminal: blue and peach alternate, green is text two chunks share.
CHUNK_COLOURS = {"odd": "#afd7ff", "even": "#ffd7af", "overlap": "#afd7af"}
ANSI_COLOURS = {"odd": 153, "even": 223, "overlap": 151}  # xterm's numbers for the same colours
ANSI_LABEL_STYLE = "1;97;48;5;238"  # bold white on dark grey
TEXT_KEY = "({#n ...} opens chunk n; «...» is in two chunks; {/#n}: chunk n ends, what follows is in none)"
ANSI_KEY = (
    "(blue: chunks #1, #3, ...; peach: chunks #2, #4, ...; green, underlined: in two chunks; "
    "no colour: in no chunk)"
)


def chunk_notes(chunk) -> list[str]:
    """What a chunk carries besides its span: its header or heading path, its kind, oversize."""
    if not (chunk.header or chunk.section or chunk.oversize):
        return []
    place = f"header: {chunk.header}" if chunk.header else " › ".join(chunk.section)
    notes = [place, chunk.kind] + (["oversize"] if chunk.oversize else [])
    return [note for note in notes if note]


def show_chunks(chunks, width: int = 60, limit: int = 12) -> None:
    """Print chunks as a table: number, span, tokens, overlap with the previous one, text.

    The overlap column counts the characters a chunk shares with the one before
    it, taken from the true offsets; the shared text is shown in «guillemets».
    A chunk with a header or a heading path (or flagged oversize) gets a second
    line saying so. To see chunks on their text, use view_chunks.
    """
    print(f"  {'#':>3}  {'span':<16} {'tokens':>6} {'overlap':>8}  text")
    previous_end = None
    for number, chunk in enumerate(chunks[:limit], 1):
        shared = 0 if previous_end is None else max(0, min(previous_end, chunk.end) - chunk.start)
        shown = chunk.text.replace("\r", " ").replace("\n", " ")
        if shared:
            shown = f"«{shown[:shared]}»{shown[shared:]}"
        if len(shown) > width:
            shown = shown[: width - 3] + "..."
        span = f"[{chunk.start}, {chunk.end})"
        print(f"  {number:>3}  {span:<16} {chunk.n_tokens:>6} {shared or '-':>8}  {shown}")
        notes = chunk_notes(chunk)
        if notes:
            print(f"  {'':>3}  {'':<16} {'':>6} {'':>8}  ({', '.join(notes)})")
        previous_end = chunk.end
    if len(chunks) > limit:
        print(f"  ... {len(chunks) - limit} more chunks")


@dataclass(frozen=True)
class ViewPiece:
    """A stretch [start, end) of the source held by the same chunks (their numbers)."""

    start: int
    end: int
    holders: tuple[int, ...]

    @property
    def role(self) -> str:
        """How it is coloured: "gap" (in no chunk), "overlap" (in two or more), else "odd" or "even"."""
        if not self.holders:
            return "gap"
        if len(self.holders) > 1:
            return "overlap"
        return "odd" if self.holders[0] % 2 else "even"


def view_pieces(numbered) -> list[ViewPiece]:
    """Cut the text the chunks span at every chunk start and end; each piece knows its holders.

    `numbered` is a list of (number, chunk). Between two neighbouring cuts the
    same chunks hold every character, so one colour fits a whole piece.
    """
    cuts = sorted({chunk.start for _, chunk in numbered} | {chunk.end for _, chunk in numbered})
    pieces = []
    for start, end in zip(cuts, cuts[1:]):
        holders = tuple(number for number, chunk in numbered if chunk.start <= start and end <= chunk.end)
        pieces.append(ViewPiece(start, end, holders))
    return pieces


def view_marks(numbered, cut_short: bool = False) -> list[tuple[str, object]]:
    """The view in reading order, as ("end", number), ("label", number) and ("text", piece).

    At each cut come first the ends of chunks that stop with no chunk going
    on after them, then the labels of the chunks that start there, then the
    text up to the next cut. Each renderer only decides how a mark looks.
    In a view `cut_short` (chunks after it are left out), the ends at its last
    cut are ("stop", number): the text after them may well be in a chunk the
    view does not show, so no mark may say it is in none.
    """
    pieces = {piece.start: piece for piece in view_pieces(numbered)}
    cuts = sorted({chunk.start for _, chunk in numbered} | {chunk.end for _, chunk in numbered})
    marks = []
    for cut in cuts:
        if not any(chunk.start <= cut < chunk.end for _, chunk in numbered):
            ending = "stop" if cut_short and cut == cuts[-1] else "end"
            ending_here = [number for number, chunk in numbered if chunk.start < chunk.end == cut]
            marks += [(ending, number) for number in ending_here]
        marks += [("label", number) for number, chunk in numbered if chunk.start == cut]
        if cut in pieces:
            marks.append(("text", pieces[cut]))
    return marks


def chunk_label(number: int, chunk, source: str) -> str:
    """'#3 [412, 980) 128 tokens', then the chunk's notes, and a warning if its text is not the source's."""
    notes = chunk_notes(chunk)
    if source[chunk.start : chunk.end] != chunk.text:
        notes.append("its text differs from the source at this span")
    tokens = "1 token" if chunk.n_tokens == 1 else f"{chunk.n_tokens} tokens"
    return " · ".join([f"#{number} [{chunk.start}, {chunk.end}) {tokens}"] + notes)


def view_caption(source: str, chunks, first: int, shown) -> str:
    """'chunks 2-4 of 14, characters [412, 2210) of 45120', or why there is nothing to show."""
    if not shown:
        return f"no chunk to show ({len(chunks)} in all)"
    numbers = f"chunk {first + 1}" if len(shown) == 1 else f"chunks {first + 1}-{first + len(shown)}"
    start = min(chunk.start for chunk in shown)
    end = max(chunk.end for chunk in shown)
    return f"{numbers} of {len(chunks)}, characters [{start}, {end}) of {len(source)}"


def use_colour(stream) -> bool:
    """ANSI colours only for a terminal, and never when NO_COLOR is set (to anything but "")."""
    if os.environ.get("NO_COLOR"):
        return False
    return stream.isatty()


def view_chunks(source: str, chunks, first: int = 0, limit: int = 4) -> None:
    """Show chunks[first:first + limit] on `source`, the text they were cut from.

    In a notebook as HTML; in a terminal with ANSI colours; elsewhere, or with
    NO_COLOR set, as plain text with bracket markers.
    """
    if in_notebook():
        from IPython.display import HTML, display

        display(HTML(chunks_as_html(source, chunks, first, limit)))
    else:
        print(chunks_as_text(source, chunks, first, limit, colour=use_colour(sys.stdout)))


def chunks_as_text(source: str, chunks, first: int = 0, limit: int = 4, colour: bool = False) -> str:
    """The view for a terminal (`colour`: ANSI colours) or for plain text (bracket markers)."""
    shown = chunks[first : first + limit]
    numbered = list(enumerate(shown, first + 1))
    by_number = dict(numbered)
    left_out = len(chunks) - first - len(shown)  # chunks after the view
    out = [view_caption(source, chunks, first, shown), "\n", ANSI_KEY if colour else TEXT_KEY, "\n"]
    for mark, value in view_marks(numbered, cut_short=left_out > 0):
        if mark == "label":
            label = chunk_label(value, by_number[value], source)
            out.append(_ansi(f" {label} ", ANSI_LABEL_STYLE) if colour else f"{{{label}}}")
        elif mark == "end" and not colour:
            out.append(f"{{/#{value}}}")
        elif mark == "stop" and not colour:
            more = "1 more chunk" if left_out == 1 else f"{left_out} more chunks"
            out.append(f"{{/#{value} · the view stops; {more} not shown}}")
        elif mark == "text":
            out.append(_text_piece(source[value.start : value.end], value.role, colour))
    return "".join(out)


def _text_piece(text: str, role: str, colour: bool) -> str:
    """One piece of the text view: coloured by its role, or with shared text in «guillemets»."""
    if not colour:
        return f"«{text}»" if role == "overlap" else text
    if role == "gap":
        return text
    underline = "4;" if role == "overlap" else ""
    return _ansi(text, f"30;{underline}48;5;{ANSI_COLOURS[role]}")


def _ansi(text: str, style: str) -> str:
    """`text` in an ANSI style, closed at each line break so the colour stops with the text."""
    lines = []
    for line in text.split("\n"):
        lines.append(f"\x1b[{style}m{line}\x1b[0m" if line else "")
    return "\n".join(lines)


_HTML_PIECE_STYLES = {
    "odd": f"background:{CHUNK_COLOURS['odd']};color:#1a1a1a",
    "even": f"background:{CHUNK_COLOURS['even']};color:#1a1a1a",
    "overlap": f"background:{CHUNK_COLOURS['overlap']};color:#1a1a1a;text-decoration:underline",
    "gap": "",
}
# Lines wrap at spaces, as a reader expects (JupyterLab's own outputs may break inside words).
_HTML_TEXT_STYLE = "white-space:pre-wrap;word-break:normal;overflow-wrap:break-word;line-height:1.6;margin:4px 0"
_HTML_LABEL_STYLE = (
    "background:#3a3a3a;color:#ffffff;border-radius:4px;padding:0 5px;margin-right:3px;"
    "font-family:sans-serif;font-size:78%;white-space:nowrap"
)
# The same looks for labkit/explorer.js, which draws chunks in the browser: a style per piece role,
# the label's and the text's.
HTML_STYLES = {**_HTML_PIECE_STYLES, "label": _HTML_LABEL_STYLE, "text": _HTML_TEXT_STYLE}


def chunks_as_html(source: str, chunks, first: int = 0, limit: int = 4) -> str:
    """The view as one HTML fragment, styled inline.

    Inline styles look the same in JupyterLab, in a notebook exported by
    nbconvert and in a browser, with no style sheet to load. Classes and
    data- attributes (chunk numbers, true offsets) let a test find each part.
    """
    shown = chunks[first : first + limit]
    numbered = list(enumerate(shown, first + 1))
    by_number = dict(numbered)
    parts = []
    for mark, value in view_marks(numbered):
        if mark == "label":
            label = escape(chunk_label(value, by_number[value], source))
            parts.append(
                f'<span class="chunk-label" data-chunk="{value}" style="{_HTML_LABEL_STYLE}">{label}</span>'
            )
        elif mark == "text":
            holders = " ".join(str(number) for number in value.holders)
            parts.append(
                f'<span class="chunk-piece chunk-{value.role}" data-chunks="{holders}" '
                f'data-start="{value.start}" data-end="{value.end}" '
                f'style="{_HTML_PIECE_STYLES[value.role]}">{escape(source[value.start : value.end])}</span>'
            )
    caption = escape(view_caption(source, chunks, first, shown))
    return (
        f'<div class="chunk-view" data-chunks="{len(shown)}">'
        f'<div class="chunk-view-caption" style="font-family:sans-serif;font-size:90%">{caption}</div>'
        f'<pre class="chunk-view-text" style="{_HTML_TEXT_STYLE}">'
        f'{"".join(parts)}</pre>{_html_key()}</div>'
    )


def _html_key() -> str:
    """A line of colour swatches saying what each colour means."""
    meanings = (
        ("odd", "chunks #1, #3, ..."),
        ("even", "chunks #2, #4, ..."),
        ("overlap", "in two chunks"),
        ("gap", "in no chunk"),
    )
    swatches = "".join(
        f'<span style="{_HTML_PIECE_STYLES[role]};border:1px solid #999;padding:0 6px;margin:0 4px 0 10px">'
        f"&nbsp;</span>{meaning}"
        for role, meaning in meanings
    )
    return f'<div class="chunk-view-key" style="font-family:sans-serif;font-size:80%">{swatches}</div>'
