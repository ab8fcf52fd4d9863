"""Texts built to break chunkers: odd characters, odd line ends, and inputs of pathological size.

Each is made by code, never stored: a 5 MB line belongs in a generator, not in
the repository. `Fixture.build(size)` makes the text; `full` is the size the
text is meant to have, and `small` (when set) a smaller size of the same shape
for the default test run, because the full one takes seconds per chunker.
"""

import base64
import random
from dataclasses import dataclass
from typing import Callable


@dataclass(frozen=True)
class Fixture:
    name: str
    build: Callable[[int], str]
    full: int = 1
    small: int | None = None  # None: the full size is quick enough for every run


def _repeat(text: str) -> Callable[[int], str]:
    """A builder that repeats `text` `size` times."""
    return lambda size: text * size


MARKDOWN = (
    "# Install Orbit\n"
    "\n"
    "Run the installer. Then start the server.\n"
    "\n"
    "## On Linux\n"
    "\n"
    "```bash\n"
    "sudo apt install orbit\n"
    "```\n"
    "\n"
    "| key | default |\n"
    "|---|---|\n"
    "| port | 7401 |\n"
    "\n"
    "- one item\n"
    "  - a nested item\n"
    "> a quote\n"
)

CONTROL_CHARACTERS = "".join(chr(code) for code in (*range(0x00, 0x20), 0x7F, 0x85, 0x2028, 0x2029))


def long_line(size: int) -> str:
    """One line of `size` characters and no space, like a base64 data URL or minified code."""
    noise = base64.b64encode(random.Random(6).randbytes(size * 3 // 4 + 3)).decode("ascii")
    return "data:application/octet-stream;base64," + noise[:size]


def nested_list_on_one_line(size: int) -> str:
    """`size` list items, each inside the one before: `- - - ... - deepest`."""
    return "- " * size + "deepest\n\nAfter the list.\n"


def nested_list_staircase(size: int) -> str:
    """`size` list items, each one level deeper than the last, back to the top every 100."""
    return "".join("  " * (number % 100) + f"- item {number}\n" for number in range(size))


def unterminated_fence(size: int) -> str:
    """A fence that never closes (it runs to the end), `size` lines of code, a shorter fence inside."""
    return "# Script\n\n````python\n" + "print('run')\n" * size + "```\nstill code\n"


def long_table(size: int) -> str:
    """A table of `size` rows under one header."""
    rows = "".join(f"| key.number_{number} | {number * 7} | the {number}th setting |\n" for number in range(size))
    return "Settings:\n\n| key | default | meaning |\n|---|--:|:-:|\n" + rows + "\nAfter the table.\n"


def headings_only(size: int) -> str:
    """`size` headings and nothing else, at every level, ATX and setext."""
    lines = []
    for number in range(size):
        if number % 7 == 6:
            lines.append(f"Setext heading {number}\n---\n")
        else:
            lines.append("#" * (number % 6 + 1) + f" Heading {number}\n")
    return "".join(lines)


FIXTURES = [
    Fixture("empty", _repeat("")),
    Fixture("whitespace only", _repeat(" \t\n\r\n\u00a0\u3000 \n\n   \x0b\x0c")),
    Fixture("byte order mark", lambda size: "\ufeff---\ntitle: BOM\n---\n# Heading\n\nText \ufeff inside.\n"),
    Fixture("only a byte order mark", _repeat("\ufeff")),
    Fixture("CRLF line ends", _repeat(MARKDOWN.replace("\n", "\r\n")), full=20),
    Fixture("lone CR line ends", _repeat(MARKDOWN.replace("\n", "\r")), full=20),
    Fixture("mixed line ends", _repeat("a line\r\nb line\rc line\n\rd line\n\r\n\r\r\n"), full=50),
    Fixture("NUL and control characters", _repeat(f"word{CONTROL_CHARACTERS}word \x00\x00 "), full=50),
    Fixture("emoji with joiners", _repeat("👩\u200d👩\u200d👧\u200d👦🇫🇷👍🏽1\ufe0f\u20e3🏳\ufe0f\u200d🌈 "), full=40),
    Fixture("combining marks", _repeat("e\u0301 Z" + "\u0336\u0338\u0322\u034e\u0344" * 30 + " "), full=20),
    Fixture("CJK and right-to-left text", _repeat(
        "漢字かな交じり文、句読点。مرحبا بالعالم שלום עולם \u200f\u202eעברית\u202c \u2067عربي\u2069 "), full=30),
    Fixture("characters of four tokens", _repeat("𩝕𪛖𫠝𬺰𰀀"), full=60),
    Fixture("lone surrogates", _repeat("ab\ud800cd \udfff\ud83d x "), full=30),
    Fixture("a 5 MB line with no spaces", long_line, full=5_000_000, small=50_000),
    Fixture("a run of a million dots", _repeat("."), full=1_000_000, small=20_000),
    Fixture("10,000 nested list items on one line", nested_list_on_one_line, full=10_000),
    Fixture("10,000 list items in a staircase", nested_list_staircase, full=10_000, small=1_000),
    Fixture("an unterminated fence", unterminated_fence, full=2_000),
    Fixture("a 10,000-row table", long_table, full=10_000, small=500),
    Fixture("a document of headings only", headings_only, full=5_000, small=500),
]
