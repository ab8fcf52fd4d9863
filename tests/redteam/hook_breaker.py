"""Attack 1 (rag4): turn the audit hook off from inside (kit.break_the_wall: the hook's frame, reached
through a refusal's traceback, has its `busy` flag set for good and the refusal forgotten), then read the
course's solutions/ by the paths the worker shows and put the reference's functions in place of the
stubs. With the wall down it also calls the harness's loopback listener."""

from kit import adopt, break_the_wall, call_home, reference


def attack(lab: dict) -> None:
    if not break_the_wall():
        return
    found = reference(lab)
    if found:
        adopt(lab, *found)
    call_home("hook-breaker")
