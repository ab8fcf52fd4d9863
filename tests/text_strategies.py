"""Hypothesis strategies for the texts chunkers meet, shared by the grading tests.

Offset bugs hide in repeated words, CRLF line ends, multi-byte characters and
long runs without spaces, so each strategy mixes those in on purpose.
"""

import re

from hypothesis import strategies as st

# Characters that stress offsets: spaces of every kind, CRLF and lone CR, the
# other characters Python counts as line ends, control characters, emoji with
# joiners and modifiers, combining marks, CJK (some of 4 tokens), right-to-left
# letters and direction marks, a lone surrogate, runs of sentence marks.
TRICKY = [" ", "  ", "\n", "\r\n", "\r", "\t", "\u00a0", "chunk", "word", ".", "#",
          "😀", "👩\u200d👩\u200d👧", "e\u0301", "漢字", "שלום", "𩝕", "\ufeff", "\x00",
          "\x0b", "\x0c", "\x85", "\u2028", "\x1b", "🇫🇷", "👍🏽", "1\ufe0f\u20e3", "𪛖",
          "\u200f", "\u202eابت\u202c", "\ud800", "...", "?!", "-", "|"]

tricky_text = st.lists(st.sampled_from(TRICKY), max_size=80).map("".join)
any_text = st.one_of(
    st.text(max_size=300),
    tricky_text,
    st.text(alphabet="ab", min_size=200, max_size=2000),  # one long run, no spaces
)

# Prose-like text: words, sentence ends, line breaks and blank lines.
prose = st.lists(
    st.one_of(
        st.sampled_from(["Orbit", "runs", "jobs", "satellite", "port", "7401", "chunk", "a",
                         "überall", "漢字"]),
        st.sampled_from([". ", "! ", "? ", "\n", "\n\n", "\r\n\r\n", ", "]),
        st.text(alphabet="abcdefghij", min_size=1, max_size=30),
    ),
    max_size=120,
).map(" ".join)

# Markdown-ish documents: lines drawn from the constructs chunkers get wrong.
MARKDOWN_LINES = [
    "# Title", "## Section", "### Sub", "Setext", "===", "---", "***", "",
    "Some prose with words.", "More prose, a second line.", "```", "```python", "````", "~~~",
    "# comment in code?", "| a | b |", "|---|---|", "| 1 | 2 |", "a | b", "--- | ---",
    "- item", "  continued", "1. step", "   ```", "> quote", "> ```", "<div>", "</div>",
    "<!-- note -->", "    indented code", "\t tab", "漢字 😀 e\u0301",
    "id: page", "title: A page", "...", "\ufeff---", "- - nested item", "> > nested quote",
    "  - sub item", "    - deeper", "1) other step", "- ```", "  | x |", "|:-:|", "~~~~ toml",
    "``` a`b", "###### six", "####### seven", "#no space", "<script>", "</script>", "-->",
    "Ends with dots...", "\x00 nul \x0b vt \x85 nel", "𩝕𪛖 👩\u200d👩\u200d👧",
]
# The judging parser (markdown-it-py) ends a quote nested in a quote at a lazy line indented 4
# columns or more that starts like a block ("    - deeper"), and reads that line as indented
# code; CommonMark (and GitHub) read the quoted paragraph's continuation. Texts with a quote in a
# quote and such a line are left out.
QUOTE_IN_QUOTE = re.compile(r"(?:^|[\r\n]) {0,3}> {0,4}>")
INDENTED_MARK = re.compile(r"(?:^|[\r\n])(?: {4}|\t)[ \t]*[^\s\w]")


def judged_alike(text):
    """False for a text where the judging parser is known to read what CommonMark does not."""
    return not (QUOTE_IN_QUOTE.search(text) and INDENTED_MARK.search(text))


markdown_text = st.tuples(
    st.lists(st.sampled_from(MARKDOWN_LINES), max_size=60),
    st.sampled_from(["\n", "\r\n", "\r"]),
).map(lambda parts: parts[1].join(parts[0])).filter(judged_alike)

# ---- texts with every line-end style -------------------------------------------
# Files come with LF, CRLF or lone CR line ends, and pasted text mixes them; a
# chunker that splits on "\n" alone, or counts "\r\n" as two line ends, gets
# offsets wrong. So lines are drawn first and joined with one style or a mix.

LINE_ENDS = ("\n", "\r\n", "\r")


@st.composite
def with_line_ends(draw, lines):
    """The lines `lines` draws, each ended by LF, CRLF or CR: one style for all, or mixed."""
    parts = draw(lines)
    style = draw(st.sampled_from(LINE_ENDS + ("mixed",)))
    ends = [draw(st.sampled_from(LINE_ENDS)) if style == "mixed" else style for _ in parts]
    if ends and draw(st.booleans()):
        ends[-1] = ""  # the last line without its line end
    return "".join(line + end for line, end in zip(parts, ends))


WORDS = ["Orbit", "runs", "jobs", "satellite", "port", "7401", "chunk", "a", "überall", "漢字",
         "end.", "why?", "now!", "(see", "below).", "v2.6.1,", "https://example.com/a_b"]
prose_line = st.lists(
    st.one_of(st.sampled_from(WORDS), st.text(alphabet="abcdefghij", min_size=1, max_size=24)),
    max_size=18,
).map(" ".join)
tricky_line = st.lists(st.sampled_from(TRICKY), max_size=12).map("".join)
blank_line = st.sampled_from(["", " ", "\t", "  "])

lined_prose = with_line_ends(st.lists(st.one_of(prose_line, blank_line), max_size=24))
lined_text = with_line_ends(st.lists(st.one_of(prose_line, tricky_line, blank_line), max_size=24))



def topic_sentences(words):
    """A topic: 2 to 4 sentences of 3 to 7 of its `words`, each ending in a period, a space
    between (rag9: the only periods end sentences, so a judge can find the sentences)."""
    sentence = st.lists(st.sampled_from(words), min_size=3, max_size=7).map(lambda w: " ".join(w).capitalize() + ".")
    return st.lists(sentence, min_size=2, max_size=4).map(" ".join)


# ---- Markdown pages built from the constructs rag6 claims to read ------------
# Random lines (markdown_text) rarely make a table or a fence inside a list, so
# pages are also built block by block: ATX and setext headings, fences of
# backticks and tildes of every length (some never closed), indented code (with
# spaces or tabs, after a blank line, and an indented line that only continues
# a paragraph), tables with and without outer pipes, lists and quotes holding
# any of these, lazy lines after what a list item or quote holds (a paragraph's
# continuation, or the container's end), rules (`- - -` after a list item is a
# rule to CommonMark), HTML, link reference definitions, front matter. A real
# Markdown parser (markdown_oracle) then says what must stay whole.
#
# Tables in containers have pipes: a pipeless header row after a list marker is
# a table to the judging parser but a paragraph to GitHub. And they end with a
# blank line: an unindented line under one is a lazy line to CommonMark, which
# GitHub's tables do not define.

TITLES = ["Install", "On Linux", "Ports", "C# notes", "Upgrade 2.x", "漢字 😀", "FAQ"]
SENTENCES = ["Orbit runs jobs on satellites.", "The server decides what runs.",
             "Satellites dial out on port 7401.", "Certificates last 90 days, then renew.",
             "See the table below for the defaults.", "überall gleich, 漢字 too."]
CODE_LINES = ["orbit job list", "# not a heading", "| not | a table |", "|---|---|",
              "- not an item", "", "    indented in code", "> not a quote", "``", "~~",
              "````` longer info"]
INDENTED_CODE = [
    ["    indented code", "    more code"],
    ["    $ orbit start", "    started on port 7401", "", "    $ orbit stop"],  # a shell session, a blank line inside
    ["\tcode after a tab", "\t\tdeeper, with two", "  \tthree columns and a tab: still 4"],
    ["      six spaces", "    # not a heading", "    | not | a table |", "    ```"],
]
LAZY_LINES = ["a lazy line, unindented", "===", "| a | lazy |", "    indented, lazy or code"]
DEFINITIONS = [["[orbit]: https://example.com/orbit"],
               ["[docs]: /docs \"The docs\"", "[api]:", "  /api 'API'"]]


@st.composite
def fence(draw, may_stay_open=True):
    """A fence of 3 to 5 backticks or tildes, indented up to 3, holding lines that close it not."""
    char = draw(st.sampled_from("`~"))
    length = draw(st.integers(3, 5))
    infos = ["", "python", " toml", "bash x=1"] + (["a`b~"] if char == "~" else [])
    info = draw(st.sampled_from(infos))
    body = draw(st.lists(st.one_of(st.sampled_from(CODE_LINES),
                                   st.just(char * (length - 1)),  # too short to close it
                                   st.just("```" if char == "~" else "~~~")),  # the other kind
                         max_size=5))
    closing = [] if may_stay_open and draw(st.booleans()) and draw(st.booleans()) else [
        " " * draw(st.integers(0, 3)) + char * (length + draw(st.integers(0, 2)))
        + draw(st.sampled_from(["", "  "]))]
    return [" " * draw(st.integers(0, 3)) + char * length + info] + body + closing


@st.composite
def table(draw, in_container=False):
    """A table of 1 to 3 columns, its rows of fewer or more cells than the header."""
    columns = draw(st.integers(1, 3))
    pipes = draw(st.sampled_from(["outer", "leading"] + ([] if in_container else ["none"])))

    def row(cells):
        inner = " | ".join(cells)
        if pipes == "outer" or (pipes == "none" and columns == 1):  # one column needs a pipe
            return f"| {inner} |"
        return f"| {inner}" if pipes == "leading" else inner

    header = row(draw(st.lists(st.sampled_from(["key", "default", "a", "b", "漢字"]),
                               min_size=columns, max_size=columns)))
    delimiter = row(draw(st.lists(st.sampled_from(["---", ":--", "--:", ":-:", "-"]),
                                  min_size=columns, max_size=columns)))
    cells = st.lists(st.sampled_from(["1", "`5`", "port 7401", "a \\| b", "", "x"]),
                     min_size=max(1, columns - 1), max_size=columns + 1)
    rows = draw(st.lists(cells.map(row), max_size=4))
    return [header, delimiter] + rows + ([""] if in_container else [])


@st.composite
def list_block(draw, depth):
    """A list of 1 to 3 items, each holding a block whose lines line up with its first (an item
    opening with indented code takes 5 spaces after its marker), perhaps a lazy line after it."""
    marker = draw(st.sampled_from(["-", "*", "+", "1.", "2)"]))
    pad = " " * (len(marker) + 1)
    lines = []
    for _ in range(draw(st.integers(1, 3))):
        content = draw(block(depth + 1))
        lines += [f"{marker} {content[0]}" if content[0][:1] == " " else f"{marker} {content[0].lstrip(' ')}"]
        lines += [pad + line if line else "" for line in content[1:]]
        if draw(st.integers(0, 3)) == 0:
            lines.append(draw(st.sampled_from(LAZY_LINES)))
        if draw(st.booleans()):
            lines.append("")
    return lines


@st.composite
def quote_block(draw, depth):
    """A block quote holding a block, its blank lines with or without the ">", perhaps a lazy line after it."""
    inner = draw(block(depth + 1))
    lines = [("> " + line) if line else draw(st.sampled_from([">", ""])) for line in inner]
    return lines + ([draw(st.sampled_from(LAZY_LINES))] if draw(st.integers(0, 3)) == 0 else [])


@st.composite
def block(draw, depth=0):
    """One Markdown block, as lines without line ends; lists and quotes nest up to depth 2."""
    kinds = ["atx", "paragraph", "fence", "table", "setext", "html", "indented", "rule", "definitions"]
    kinds += ["list", "quote"] if depth < 2 else []
    kind = draw(st.sampled_from(kinds))
    if kind == "atx":
        level = draw(st.integers(1, 7))
        closing = draw(st.sampled_from(["", " #", " ###"]))
        return [f"{'#' * level} {draw(st.sampled_from(TITLES))}{closing}"]
    if kind == "setext":
        return [draw(st.sampled_from(TITLES)), draw(st.sampled_from(["===", "---", "=", "-----"]))]
    if kind == "paragraph":
        lines = draw(st.lists(st.sampled_from(SENTENCES), min_size=1, max_size=3))
        if draw(st.integers(0, 3)) == 0:
            lines.append("    an indented line continues the paragraph")  # not code
        return lines
    if kind == "fence":
        return draw(fence())
    if kind == "table":
        return draw(table(in_container=depth > 0))
    if kind == "html":
        return draw(st.sampled_from([["<div>", "text in html", "</div>"], ["<!-- note", "-->"]]))
    if kind == "indented":
        return draw(st.sampled_from(INDENTED_CODE))
    if kind == "rule":
        return [draw(st.sampled_from(["***", "___", "-----", "- - -", "* * *"]))]
    if kind == "definitions":  # no paragraph: a setext underline under them is none
        # Alone, they end with a blank line: the judging parser reads an indented line right under
        # them as code, where CommonMark (and GitHub) read the continuation of their paragraph.
        return draw(st.sampled_from(DEFINITIONS)) + draw(st.sampled_from([[""], ["---"], ["==="], ["Ports", "---"]]))
    return draw(list_block(depth) if kind == "list" else quote_block(depth))


FRONT_MATTER = [["---", "id: page", "title: A page", "applies_to: 2.x", "---"],
                ["\ufeff---", "title: Windows", "..."], ["---", "edition: pro", "---", ""]]


@st.composite
def markdown_lines(draw):
    """The lines of a Markdown page: perhaps front matter, then blocks, mostly blank-separated."""
    lines = list(draw(st.sampled_from(FRONT_MATTER))) if draw(st.integers(0, 3)) == 0 else []
    for part in draw(st.lists(block(), max_size=8)):
        lines += part + ([""] if draw(st.integers(0, 3)) else [])
    return lines


markdown_page = with_line_ends(markdown_lines())

# ---- prose whose every seam is a clean cut ---------------------------------------
# Words of a token or two, one space apart, on lines that start with a word and
# no blank line (a blank line's two line breaks are one token, which a cut
# between them splits): every place a recursive splitter cuts is then a clean
# cut (academy_llm.is_clean_cut), tokens add up exactly over pieces, and a judge
# can say what greedy packing and word-start overlap must give.

SHORT_WORDS = ["Orbit", "runs", "jobs", "on", "the", "server", "port", "7401", "now.", "fast!",
               "why?", "(see", "it).", "satellites", "a", "überall"]
clean_line = st.lists(st.sampled_from(SHORT_WORDS), min_size=1, max_size=14).map(" ".join)
clean_prose = with_line_ends(st.lists(clean_line, max_size=20))

# ---- pages with one plain table (rag7's chunk per row) ------------------------------
# A heading, a paragraph, a table of 2 or 3 columns (as many header cells as delimiter cells, rows
# of plain cells, outer or leading pipes), a blank line and a closing paragraph: a table that a
# real parser and a reader of lines agree on, with any line ends.

CELLS = ["40", "`5`", "retries", "60 s", "port 7401", "überall", "on", "x"]


@st.composite
def table_lines(draw):
    """A heading, a paragraph, a plain table of 0 to 5 rows, then a paragraph."""
    columns = draw(st.integers(2, 3))
    outer = draw(st.booleans())

    def row(cells):
        return f"| {' | '.join(cells)} |" if outer else f"| {' | '.join(cells)}"

    header = row(draw(st.lists(st.sampled_from(["limit", "value", "what", "key"]), min_size=columns,
                               max_size=columns)))
    rows = draw(st.lists(st.lists(st.sampled_from(CELLS), min_size=columns, max_size=columns).map(row),
                         max_size=5))
    return (["# Limits", "", draw(st.sampled_from(["Each queue has its limits.", "Read at start."])), "",
             header, row(["---"] * columns), *rows, ""] + draw(st.sampled_from([[], ["Change them in orbit.toml."]])))


table_page = with_line_ends(table_lines())

# ---- rag6: the Markdown of the course's pages, which its student's reader covers ------------------
# ATX headings, fences of backticks or tildes (a # line or a shorter fence inside), tables with and
# without outer pipes, lists with one marker each, quotes, indented code, paragraphs, front matter:
# blocks between blank lines, LF or CRLF line ends.

lab_words = st.lists(st.sampled_from(["orbit", "runs", "jobs", "on", "satellites", "port", "7401", "the", "server",
                                      "`key`", "**bold**", "x", "a|b"]), min_size=1, max_size=6).map(" ".join)
lab_heading = st.builds(lambda level, title, closing: f"{'#' * level} {title}{' ' + '#' * closing if closing else ''}",
                        st.integers(1, 6), lab_words, st.integers(0, 2))
lab_paragraph = st.lists(lab_words, min_size=1, max_size=3).map("\n".join)


@st.composite
def lab_fence(draw):
    """A fence of 3-5 backticks or tildes, closed or not, holding words, headings, a shorter fence, a row."""
    char, length = draw(st.sampled_from("`~")), draw(st.integers(3, 5))
    other = "~" if char == "`" else "`"  # a fence of the other character, however long, closes nothing
    body = draw(st.lists(st.one_of(lab_words, lab_heading, st.just(char * (length - 1)), st.just(other * (length + 1)),
                                   st.just("| a | b |")), max_size=4))
    closing = [char * (length + draw(st.integers(0, 1)))] if draw(st.booleans()) else []
    return "\n".join([char * length + draw(st.sampled_from(["", "sh", " yaml"])), *body, *closing])


@st.composite
def lab_table(draw):
    """A table of 1-3 columns, with or without outer pipes, and up to 4 rows."""
    cells = draw(st.integers(1, 3))
    pipes = draw(st.booleans())

    def row(items):
        inner = " | ".join(items)
        return f"| {inner} |" if pipes or cells == 1 else inner

    rows = draw(st.lists(st.lists(lab_words, min_size=cells, max_size=cells), max_size=4))
    return "\n".join([row([f"h{n}" for n in range(cells)]), row(["---"] * cells), *map(row, rows)])


@st.composite
def lab_list(draw):
    """A list of one marker (another marker starts another list), items with a line under them or not."""
    marker = draw(st.sampled_from(["- ", "* ", "1. "]))
    items = draw(st.lists(st.tuples(lab_words, st.one_of(st.just(""), lab_words)), min_size=1, max_size=3))
    return "\n".join(marker + first + (f"\n{' ' * len(marker)}{more}" if more else "") for first, more in items)


lab_quote = st.lists(lab_words, min_size=1, max_size=3).map(lambda lines: "\n".join("> " + line for line in lines))
lab_indented = st.lists(lab_words, min_size=1, max_size=3).map(lambda lines: "\n".join("    " + line for line in lines))
lab_block = st.one_of(lab_heading, lab_paragraph, lab_fence(), lab_table(), lab_list(), lab_quote, lab_indented)
LAB_FRONT_MATTER = "---\ntitle: Orbit\napplies_to: 2.x\n---\n\n"


@st.composite
def lab_markdown(draw):
    """A page of the Markdown the course's pages use: blocks between blank lines; an unclosed fence ends it."""
    kept = []
    for part in draw(st.lists(lab_block, min_size=1, max_size=7)):
        if kept and all(item.startswith(("- ", "* ", "1. ")) for item in (kept[-1], part)):
            continue  # two lists in a row: with other markers, CommonMark makes two of them
        kept.append(part)
        if part.startswith(("```", "~~~")) and (len(part.splitlines()) == 1 or part.splitlines()[-1][:3]
                                                 not in ("```", "~~~")):
            break  # a fence never closed runs to the end
    page = draw(st.sampled_from(["", LAB_FRONT_MATTER])) + "\n\n".join(kept) + draw(st.sampled_from(["", "\n", "\n\n"]))
    return page.replace("\n", draw(st.sampled_from(["\n", "\r\n"])))
