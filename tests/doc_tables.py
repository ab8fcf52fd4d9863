"""Tables the docs promise and tests hold them to: | what happens | `what is printed` |."""

import re


def code_table(section: str) -> dict[str, str]:
    """{left cell: the code in the right cell} for every two-column row of `section` whose
    right cell is code (one or more backticks, as Markdown allows)."""
    rows = {}
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        code = re.fullmatch(r"(`+) ?(.*?) ?\1", cells[-1]) if len(cells) == 2 else None
        if code:
            rows[cells[0]] = code.group(2)
    return rows
