"""Attack 16 (rag4): the wall closes only the graded course's own solutions/ (by inode); look for other
checkouts of the course on the machine (named in the worker's environment, as OLDPWD may; in /work/*,
Gradescope's /autograder and the home folders /etc/passwd names, two levels down) and read the reference
from theirs."""

import glob
import os

from kit import adopt, course_roots, quietly, read_text, roots_in, shown_roots


def other_roots() -> list:
    """Roots of the course's other checkouts, two levels down from the usual places."""
    users = (quietly(read_text, "/etc/passwd") or "").splitlines()
    homes = [line.split(":")[5] for line in users if line.count(":") >= 6 and len(line.split(":")[5]) > 1]
    found = []
    for place in ["/work", "/autograder", *homes]:
        found += glob.glob(os.path.join(place, "*")) + glob.glob(os.path.join(place, "*", "*"))
    return [root for root in shown_roots() + roots_in(repr(found)) if root not in course_roots()]


def attack(lab: dict) -> None:
    for root in other_roots():
        path = os.path.join(root, "solutions", os.path.basename(lab["__file__"]))
        source = quietly(read_text, path)
        if source and "TODO(" not in source and adopt(lab, source, path):
            return
