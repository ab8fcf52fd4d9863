"""Attack (rag4): with the audit hook off (kit.break_the_wall), start as many threads as the kernel lets it,
each with the least stack, and say how many it got. test_walls.py checks that a worker's cgroup stops it
near confine.WORKER_PIDS, where the grader may make one."""

import threading
import time

from kit import break_the_wall


def word_windows(text, size, overlap=0):
    if not break_the_wall():
        return {"hook": "not broken"}
    threading.stack_size(32 << 10)
    started = 0
    try:
        for _ in range(int(text)):
            threading.Thread(target=time.sleep, args=(30,), daemon=True).start()
            started += 1
    except RuntimeError:
        pass
    return {"threads": started}


def attack(lab: dict) -> None:
    lab["word_windows"] = word_windows
