"""Write datasets/tricky-markdown-readings.jsonl: what a CommonMark parser reads in each line.

rag6 ends by asking the student's four rules (atx_heading, fence_opening,
closes_fence, is_table_start) about every line of its tricky documents. The
answers it compares with are markdown-it-py's (tests/markdown_oracle.py), but
the parser is the grader's judge and stays with the grader: a lab's worker can
call nothing that answers a rule. So the answers are written down here, once,
one JSON record a line, for the lab to read (labkit.markdown.every_line_cases);
the grading tests ask about other lines (tests/test_reach.py checks that).

    python tools/make_markdown_readings.py           # rewrite the file
    python tools/make_markdown_readings.py --check   # exit 1 if it is stale; write nothing
"""

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from labkit.markdown import READINGS_FILE, TRICKY_MARKDOWN  # noqa: E402
from markdown_oracle import readings  # noqa: E402


def current_text() -> str:
    """The file's text as the parser reads the tricky documents today."""
    return "".join(json.dumps(record, ensure_ascii=False) + "\n" for record in readings(TRICKY_MARKDOWN))


def main(argv: list) -> int:
    text = current_text()
    if "--check" in argv:
        stale = not READINGS_FILE.is_file() or READINGS_FILE.read_text(encoding="utf-8") != text
        print(f"{READINGS_FILE.relative_to(ROOT)} is {'stale' if stale else 'up to date'}")
        return int(stale)
    READINGS_FILE.write_text(text, encoding="utf-8")
    print(f"wrote {READINGS_FILE.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
