"""Attack 9 (rag4): record every input the lab is called with (the first eight of each function: the
hidden tests run first, their examples before their properties) in every place it can keep them: module
state, an attribute of academy_llm, the environment, a file in its scratch, /tmp, /dev/shm, $HOME and
beside its file; read back every copy at each call, and fail with the inputs recorded so far, so a public
test's message shows the student a hidden test's input."""

import json
import os

import academy_llm

from kit import TOKEN, fail_with, leave, pick_up, quietly, window

FILE = f"redteam-{TOKEN}-recorded.json"
KEPT = 8  # inputs kept per function


def attack(lab: dict) -> None:
    recorded = getattr(academy_llm, "redteam_recorded", None) or {}
    academy_llm.redteam_recorded = recorded
    calls = [0]

    def message(function, args):
        for data in pick_up(lab, FILE) + [os.environ.get("REDTEAM_RECORDED", "{}").encode()]:
            for key, inputs in (quietly(json.loads, data) or {}).items():
                kept = recorded.setdefault(key, [])
                kept += [item for item in inputs if item not in kept][: KEPT - len(kept)]
        mine = recorded.setdefault(function, [])
        shown = f"{function}{args!r}"[:150]
        if len(mine) < KEPT and shown not in mine:
            mine.append(shown)
            os.environ["REDTEAM_RECORDED"] = json.dumps(recorded)
            leave(lab, FILE, os.environ["REDTEAM_RECORDED"].encode())
        calls[0] += 1
        return "redteam-leak: " + window([item for inputs in recorded.values() for item in inputs], calls[0])

    fail_with(lab, message)
