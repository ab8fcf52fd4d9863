"""Text a person reads, on the grader's side: every terminal line, log, CSV, JSON and Gradescope row.

The one implementation is labkit/safe_text.py (a lab's own check prints through it too, and
labkit cannot import the grader); this module is the grader's name for it.
"""

from labkit.safe_text import ELLIPSIS, UNSEEN_CATEGORIES, escaped_char, safe_text

__all__ = ["ELLIPSIS", "UNSEEN_CATEGORIES", "escaped_char", "safe_text"]
