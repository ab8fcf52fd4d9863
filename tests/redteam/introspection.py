"""Attack 10 (rag4): reach the worker's own state from the lab: gc.get_objects and gc.get_referrers (for
the dict that is CONFIG), sys.modules['__main__'] (the worker: CONFIG's given, forbidden and grading
paths), and the frames up the stack (sys._getframe); then read the reference through every path they name,
also as /proc/self/root/... and /proc/self/cwd/..., and import the grader's own modules (tests.conftest,
grading_checks) from the course and from CONFIG's grading folder. Every refusal is forgotten."""

import gc
import importlib
import os
import sys

from kit import adopt, config, course_roots, quietly, read_text


def configs() -> list:
    """Every dict that looks like the worker's CONFIG: through gc, __main__ and the frames of the stack."""
    found = [config()]
    found += [item for item in quietly(gc.get_objects) or [] if isinstance(item, dict) and "forbidden" in item]
    found += [item for item in quietly(gc.get_referrers, config().get("forbidden")) or [] if isinstance(item, dict)]
    frame = sys._getframe()
    while frame is not None:
        found += [value for value in frame.f_globals.values() if isinstance(value, dict) and "forbidden" in value]
        frame = frame.f_back
    return found


def named_paths(lab: dict) -> list:
    """Where the reference might be, from every CONFIG and course root, directly and through /proc/self."""
    name = os.path.basename(lab["__file__"])
    folders = [folder for found in configs() for folder in found.get("forbidden", [])]
    folders += [os.path.dirname(path) for found in configs() for path in found.get("given", {}).values()]
    folders += [os.path.join(root, "solutions") for root in course_roots()]
    paths = [os.path.join(folder, name) for folder in folders]
    return paths + [prefix + path for path in paths for prefix in ("/proc/self/root", "/proc/self/cwd/../../..")]


def attack(lab: dict) -> None:
    for root in course_roots() + [found.get("grading", "") for found in configs()]:
        sys.path.insert(0, root)
        for module in ("tests.conftest", "grading_checks", "remote"):
            quietly(importlib.import_module, module)
        sys.path.remove(root)
    for path in dict.fromkeys(named_paths(lab)):
        source = quietly(read_text, path)
        if source and "TODO(" not in source and adopt(lab, source, path):
            return
