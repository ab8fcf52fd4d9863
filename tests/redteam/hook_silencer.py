"""Attack (rag4): silence the audit hook so that no flag says what was tried. First cut whatever line the
grader might hear a refusal on (each descriptor the worker holds past its pipes, closed or replaced by
/dev/null), then turn the hook off (kit.break_the_wall: one refusal, the hook's `busy` cell set through the
traceback, `__main__.refused` emptied), then read the course's solutions/ and take the reference's
functions. The kernel still refuses the reading; what must hold is that the grader heard the first refusal,
so the lab is flagged and earns nothing."""

import os

from kit import adopt, break_the_wall, quietly, reference


def cut_the_lines(keep: set) -> list:
    """Put /dev/null in place of every descriptor above the standard three but the worker's pipes (`keep`);
    those it could."""
    cut = []
    null = quietly(os.open, os.devnull, os.O_WRONLY)
    for fd in range(3, 256):
        if fd == null or fd in keep or quietly(os.fstat, fd) is None:
            continue
        if null is not None and quietly(os.dup2, null, fd) is not None:
            cut.append(fd)
    return cut


def attack(lab: dict) -> None:
    worker = __import__("__main__")
    keep = {getattr(worker, "REQUESTS", None) and worker.REQUESTS.fileno(), getattr(worker, "REPLIES", None)}
    line = getattr(worker, "CONFIG", {}).get("refusal_fd")
    if line is not None and line not in keep:
        quietly(os.close, line)
    lab["redteam_cut"] = cut_the_lines(keep)
    if not break_the_wall():
        return
    found = reference(lab)
    if found:
        adopt(lab, *found)
