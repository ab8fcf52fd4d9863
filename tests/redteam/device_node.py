"""Attack (rag4): with the audit hook off (kit.break_the_wall), make device nodes in the worker's scratch
and in /tmp: a FIFO (mkfifo, and mknod of S_IFIFO), a character device the size of /dev/null's and a
block device, which a later worker or the host could open. test_walls.py checks that none is made."""

import os
import stat

from kit import break_the_wall

NODES = {"mkfifo": None, "fifo": (stat.S_IFIFO, 0), "char": (stat.S_IFCHR, (1, 3)), "block": (stat.S_IFBLK, (7, 0))}


def make(path: str, node) -> str:
    """'made' if the node now exists at `path`, else the error's name."""
    try:
        if node is None:
            os.mkfifo(path, 0o600)
        else:
            kind, device = node
            os.mknod(path, 0o600 | kind, os.makedev(*device) if device else 0)
    except OSError as error:
        return type(error).__name__
    return "made" if os.path.lexists(path) else "not there"


def word_windows(text, size, overlap=0):
    """What came of each node, in the scratch (the worker's folder) and in /tmp; `text` names them."""
    if not break_the_wall():
        return {"hook": "not broken"}
    return {f"{where} {name}": make(os.path.join(folder, f"{text}-{name}"), node)
            for where, folder in (("scratch", "."), ("tmp", "/tmp")) for name, node in NODES.items()}


def attack(lab: dict) -> None:
    lab["word_windows"] = word_windows
