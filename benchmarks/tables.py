"""Printing results: Markdown tables (readable in a terminal, pasted into the README as they are) and notes."""


def table(headers, rows):
    """A Markdown table with every column padded to its widest cell; numbers right-aligned."""
    cells = [[str(cell) for cell in row] for row in [headers] + rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    numeric = [all(looks_numeric(row[i]) for row in cells[1:]) for i in range(len(headers))]

    def line(row):
        padded = [cell.rjust(w) if right else cell.ljust(w) for cell, w, right in zip(row, widths, numeric)]
        return "| " + " | ".join(padded) + " |"

    rule = "|" + "|".join("-" * (w + 1) + ":" if right else "-" * (w + 2) for w, right in zip(widths, numeric)) + "|"
    return "\n".join([line(cells[0]), rule] + [line(row) for row in cells[1:]])


def looks_numeric(cell):
    """True for cells such as 74.5, +3.2, 0.81x or 'n/a' (a number that could not be had)."""
    stripped = cell.rstrip("x%").lstrip("+-")
    return cell == "n/a" or stripped.replace(".", "", 1).isdigit()


def signed(points):
    """A difference in points, with its sign: +3.4, -1.0, +0.0."""
    return f"{points:+.1f}"


def print_wrong_starts(results):
    """Say which libraries reported chunk offsets that were wrong (their chunks were found again)."""
    for r in results:
        if r.wrong_starts:
            print(f"({r.contender.name}: {r.wrong_starts} of its {r.chunks} reported start offsets were wrong;"
                  " its chunks were found again in the text, in order)")
