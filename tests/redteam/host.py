"""Attack 8 (rag4): the environment and the host. Read ACADEMY_GRADING_SEED from the environment and the
course's .pytest_cache/ and .hypothesis/ (a plain `pytest` run caches every test's id, the hidden ones'
included); raise its own priority (os.nice(-5)) and its CPU limit; pin itself to one core; look at its
capabilities and network interfaces; call the harness's loopback listener; probe kill(-1) with signal 0
(a real kill(-1) would end every process of the machine's user) and kill the grader (os.getppid()).
Every failure message then says what it reached and what it learned."""

import glob
import os
import re
import resource
import signal
import socket

from kit import call_home, course_roots, fail_with, quietly, read_text, succeeds, window


def course_caches() -> tuple:
    """(hidden tests' ids in the course's pytest and hypothesis caches, whether any cache could be read)."""
    paths = []
    for root in course_roots():
        paths += glob.glob(os.path.join(root, ".pytest_cache", "v", "cache", "*"))[:20]
        paths += [path for path in glob.glob(os.path.join(root, ".hypothesis", "**", "*"), recursive=True)
                  if os.path.isfile(path)][:50]
    texts = [text for text in (quietly(read_text, path) for path in paths) if text]
    ids = [found for text in texts for found in re.findall(r"_hidden[a-z_]*\[([^\[\]\"]{3,60})\]", text)]
    return list(dict.fromkeys(ids)), bool(texts)


def capabilities() -> int:
    """The lab's effective capabilities (root's are all of them, unless a sandbox drops them)."""
    found = re.search(r"^CapEff:\s*([0-9a-f]+)$", quietly(read_text, "/proc/self/status") or "", re.M)
    return int(found.group(1), 16) if found else 0


def probes() -> list:
    """What this lab reached of the host, by name."""
    reached = []
    if quietly(os.nice, -5) is not None:
        reached.append("priority")
    succeeds(os.sched_setaffinity, 0, {0})  # its own cores: allowed anywhere, it costs only its own time
    if succeeds(resource.setrlimit, resource.RLIMIT_CPU, (resource.RLIM_INFINITY,) * 2):
        reached.append("cpu-limit")
    if capabilities():
        reached.append(f"capabilities {capabilities():x}")
    interfaces = [name for _, name in quietly(socket.if_nameindex) or [] if name != "lo"]
    if interfaces:
        reached.append(f"network {','.join(interfaces)}")
    if call_home("host"):
        reached.append("loopback")
    if succeeds(os.kill, -1, 0):
        reached.append("every-process")
    if os.getppid() > 1 and succeeds(os.kill, os.getppid(), signal.SIGKILL):
        reached.append("grader-killed")
    return reached


def attack(lab: dict) -> None:
    leaked = [f"seed {os.environ['ACADEMY_GRADING_SEED']}"] if "ACADEMY_GRADING_SEED" in os.environ else []
    ids, cached = course_caches()
    reached = probes() + (["course-caches"] if cached else [])
    leaked += ids
    calls = [0]

    def message(function, args):
        calls[0] += 1
        notes = f"redteam-reached: {', '.join(reached)}; " if reached else ""
        return notes + "redteam-leak: " + window(leaked or ["nothing"], calls[0], 120)

    fail_with(lab, message)
