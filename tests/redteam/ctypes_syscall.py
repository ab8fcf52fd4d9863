"""Attack 15 (rag4): call the kernel directly through ctypes (libc's syscall(SYS_openat, ...), then
read(2)), so no Python audit event names the file: through a fresh CDLL, and through ctypes.pythonapi,
the handle the worker's own `import ctypes` made before the wall went up."""

import ctypes
import os

from kit import adopt, course_roots, quietly

SYS_OPENAT, AT_FDCWD = 257, -100  # x86-64 Linux


def read_by_syscall(libc, path: str) -> str:
    fd = libc.syscall(SYS_OPENAT, AT_FDCWD, path.encode(), os.O_RDONLY)
    if fd < 0:
        raise OSError(ctypes.get_errno(), path)
    with os.fdopen(fd, encoding="utf-8") as file:
        return file.read()


def attack(lab: dict) -> None:
    handles = [handle for handle in (quietly(ctypes.CDLL, None, use_errno=True), ctypes.pythonapi) if handle]
    for handle in handles:
        for root in course_roots():
            path = os.path.join(root, "solutions", os.path.basename(lab["__file__"]))
            source = quietly(read_by_syscall, handle, path)
            if source and "TODO(" not in source and adopt(lab, source, path):
                return
