"""What the red team's labs share. attacks.py pastes this file into every attack lab, after the stub and
before the attack's own module (dropping that module's `from kit import` lines), so all of it runs in the
worker, as the lab. Nothing here is meant to be imported.

It finds what a lab can find from inside its worker: the course's folders, the worker's CONFIG, the
worker's list of refusals (which the lab can empty; the grader has heard of each already, on the hook's
refusal line), and the reference
labs a later lab's worker loads. It turns reference code into the lab's own functions, and the lab's
failure messages into a way out for what it learned: a public test's message is shown to the student.
"""

import glob
import marshal
import os
import re
import sys
import types

SETTINGS = globals().get("REDTEAM", {})  # the harness's, written above this file: its token, its listener's port
TOKEN = SETTINGS.get("token", "none")
MARK = f"redteam-survivor-{TOKEN}"  # in the argv of every process an attack starts, so the harness can find it


# ---- the worker, seen from the lab ---------------------------------------------------


def worker_module():
    """The worker's module (__main__): its CONFIG, its `refused` list, its functions, in the lab's process."""
    return sys.modules.get("__main__")


def config() -> dict:
    return getattr(worker_module(), "CONFIG", None) or {}


def hush() -> None:
    """Forget what the wall refused so far, in the worker's list (the grader once learned of a refusal only
    from it; the hook now tells it first, on a line of its own)."""
    refused = getattr(worker_module(), "refused", None)
    if isinstance(refused, list):
        refused.clear()


def quietly(function, *args, **kwargs):
    """function(*args, **kwargs), or None if it raised; whatever the wall refused meanwhile is forgotten."""
    try:
        return function(*args, **kwargs)
    except Exception:
        return None
    finally:
        hush()


def succeeds(function, *args, **kwargs) -> bool:
    """True if function(*args, **kwargs) raised nothing; whatever the wall refused meanwhile is forgotten."""
    try:
        function(*args, **kwargs)
        return True
    except Exception:
        return False
    finally:
        hush()


def read_text(path: str) -> str:
    with open(path, encoding="utf-8", errors="replace") as file:
        return file.read()


def read_bytes(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


def write_bytes(path: str, data: bytes) -> None:
    with open(path, "wb") as file:
        file.write(data)


def lab_name(lab: dict) -> str:
    """"rag4", from the lab's file name."""
    return os.path.basename(lab["__file__"]).split("-")[0]


# ---- the course ------------------------------------------------------------------------


def roots_in(text: str) -> list:
    """Every folder named in `text`, or holding one named there, that looks like the course's root (it holds
    academy_llm.py)."""
    roots = []
    for path in set(re.findall(r"/[\w.@+-]+(?:/[\w.@+-]+)*", text)):
        while len(path) > 1:
            if path not in roots and os.path.isfile(os.path.join(path, "academy_llm.py")):
                roots.append(path)
            path = os.path.dirname(path)
    return roots


def shown_roots() -> list:
    """Every course root the worker shows: in its argv and CONFIG, the files of its modules, its environment
    (PWD, OLDPWD, ...), and site-packages' .pth files (an editable install names the course)."""
    pth = glob.glob(os.path.join(sys.prefix, "lib", "python*", "site-packages", "*.pth"))
    shown = [sys.argv, config(), dict(os.environ), [quietly(read_text, path) for path in pth],
             [getattr(module, "__file__", None) for module in list(sys.modules.values())]]
    return roots_in(repr(shown))


def course_roots() -> list:
    """The root of the course this worker runs (its academy_llm is the one the worker imported); any other
    checkout is the other-clones attack's."""
    running = getattr(sys.modules.get("academy_llm"), "__file__", None) or ""
    return [root for root in shown_roots()
            if quietly(os.path.samefile, os.path.join(root, "academy_llm.py"), running)]


def reference(lab: dict):
    """(source, path) of the course's reference for this lab, read from the course's solutions/; None if it
    cannot be read."""
    name = os.path.basename(lab["__file__"])
    for root in course_roots():
        path = os.path.join(root, "solutions", name)
        source = quietly(read_text, path)
        if source and "TODO(" not in source:
            return source, path
    return None


def adopt(lab: dict, source: str, origin: str) -> bool:
    """Run `source`, a reference lab, as a module of its own and put its functions and classes in place of the
    lab's: the grader then calls the reference. True if anything was taken."""
    module = types.ModuleType(f"redteam_{TOKEN}")
    module.__file__ = origin
    try:
        exec(compile(source, "<redteam>", "exec"), vars(module))
    except Exception:
        return False
    finally:
        hush()
    taken = {key: value for key, value in vars(module).items()
             if getattr(value, "__module__", None) == module.__name__}
    lab.update(taken)
    return bool(taken)


# ---- the wall ----------------------------------------------------------------------------


def frames(error: BaseException):
    """Every frame `error` passed through on its way up, innermost last."""
    trace = error.__traceback__
    while trace is not None:
        yield trace.tb_frame
        trace = trace.tb_next


def break_the_wall() -> bool:
    """Attack 1: turn the audit hook off from inside. Provoke one refusal (a signal 0 to itself, harmless
    where it is allowed), find the hook's frame in the PermissionError's traceback, set the hook's `busy`
    flag for good (while it is set the hook lets everything through) and forget the refusal. True if
    nothing is refused any more, or nothing was."""
    try:
        os.kill(os.getpid(), 0)
        return True
    except PermissionError as refusal:
        for frame in frames(refusal):
            busy = frame.f_locals.get("busy")
            if isinstance(busy, list):
                busy[0] = True
            elif isinstance(busy, bool):
                frame.f_locals["busy"] = True  # a plain flag in a cell: written through from Python 3.13 on
    hush()
    return succeeds(os.kill, os.getpid(), 0)


def call_home(note: str) -> bool:
    """Connect to the harness's listener on this machine's loopback and say `note`; True if it got there
    (no lab may: a sandbox's loopback is its own)."""
    import socket

    try:
        with socket.create_connection(("127.0.0.1", SETTINGS.get("port", 9)), timeout=2) as line:
            line.sendall(f"{TOKEN} {note}\n".encode())
        return True
    except Exception:
        return False
    finally:
        hush()


# ---- carrying code and data from one worker to another ------------------------------------------


def code_of(module) -> dict:
    """A loaded lab's own functions (code, defaults, keyword defaults) and plain values, as marshal carries them."""
    carried = {"functions": {}, "values": {}}
    for key, value in vars(module).items():
        if isinstance(value, types.FunctionType) and value.__module__ == module.__name__:
            kind, item = "functions", (value.__code__, value.__defaults__, value.__kwdefaults__)
        elif key.startswith("__") or isinstance(value, (types.ModuleType, type, types.FunctionType)):
            continue
        else:
            kind, item = "values", value
        if quietly(marshal.dumps, item) is not None:
            carried[kind][key] = item
    return carried


def given_labs() -> dict:
    """{lab: code_of(module)} for every lab the worker loaded before this one: for rag10, the reference rag4
    to rag9 the grader gives it."""
    import labkit.loading

    own = os.path.realpath(globals()["__file__"])
    return {os.path.basename(str(path)).split("-")[0]: code_of(module)
            for path, module in list(labkit.loading.loaded_labs.items()) if os.path.realpath(str(path)) != own}


def adopt_code(lab: dict, carried: dict) -> bool:
    """code_of's functions rebuilt as the lab's own, with the lab's imports and the carried values as globals."""
    namespace = dict(lab, **carried["values"])
    functions = {}
    for key, (code, defaults, keyword_defaults) in carried["functions"].items():
        functions[key] = types.FunctionType(code, namespace, key, defaults)
        functions[key].__kwdefaults__ = keyword_defaults
    namespace.update(functions)
    lab.update(functions)
    return bool(functions)


def places(lab: dict) -> list:
    """Every folder a lab might write in and another worker read from: its scratch (its working folder), the
    temporary folders, shared memory, the home folder, and its own folder beside its file."""
    found = [os.getcwd(), config().get("scratch"), os.environ.get("TMPDIR"), "/tmp", "/dev/shm",
             os.path.expanduser("~"), os.path.dirname(lab["__file__"])]
    return list(dict.fromkeys(folder for folder in found if folder))


def leave(lab: dict, name: str, data: bytes) -> None:
    """Write `data` as `name` in every place that takes it (the wall's refusals forgotten)."""
    for folder in places(lab):
        quietly(write_bytes, os.path.join(folder, name), data)


def pick_up(lab: dict, name: str) -> list:
    """Every copy of `name` the lab can read: in its places and in any other worker's scratch folder."""
    paths = [os.path.join(folder, name) for folder in places(lab)]
    paths += glob.glob(f"/tmp/grading-*/{name}") + glob.glob(f"/tmp/*/{name}")
    return [data for data in (quietly(read_bytes, path) for path in dict.fromkeys(paths)) if data]


# ---- failure messages as a way out ------------------------------------------------------------------


def stubs(lab: dict) -> list:
    """The lab's unfinished functions: those whose code raises its TODO."""
    marker = f"TODO({lab_name(lab)})"
    return [key for key, value in list(lab.items())
            if isinstance(value, types.FunctionType) and value.__module__ == lab["__name__"]
            and any(isinstance(constant, str) and constant.startswith(marker) for constant in value.__code__.co_consts)]


def fail_with(lab: dict, message) -> None:
    """Make every unfinished function raise NotImplementedError(message(function, args)), never an error a
    test asks for, so that it earns nothing; a public test's failure message reaches the student."""
    for key in stubs(lab):
        def failing(*args, _function=key, **kwargs):
            raise NotImplementedError(message(_function, args))

        lab[key] = failing


def window(items: list, start: int, width: int = 190) -> str:
    """items from `start` on (round the end), joined by ' | ', as many as fit in `width` characters."""
    shown = []
    for step in range(len(items)):
        item = items[(start + step) % len(items)]
        if sum(len(part) + 3 for part in shown) + len(item) > width:
            break
        shown.append(item)
    return " | ".join(shown) or (items[start % len(items)][:width] if items else "")
