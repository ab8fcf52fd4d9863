"""The judge's own words: what a student is shown of a call that failed, composed by the grader.

A worker is the student's code, and what it sends is the student's to choose: an exception's
message, its type's name, where it says it was raised, a value's repr, the text of a chunk, the
path in a refusal. A lab that learned a hidden test's input (through the page cache, by timing,
from a classmate) would show it to the student through any of them. So a message a student sees
is made here, from what the grader knows:

- the call, as the grader sent it (remote.describe);
- the kind of failure: the builtin exception the lab raised (one of Python's own names), the line
  of the graded file it was raised at, the function, if it is the one called; a TODO only as the
  function the grader knows is still a stub;
- the values, each reduced: a quoted text only if it is part of a text the grader sent in this
  test (or a file that exists on the grader's machine, a path the wall refused; of a file that does
  not, its folder only), a number with at most four significant digits, a long integer not at all;
  all escaped (safe_text) and bounded.

The lab's own words never reach a student; tests/test_walls.py and tests/test_redteam.py check it.
"""

import ast
import builtins
import os
import re

from points import POINTS
from safe_text import safe_text

LIMIT = 300  # characters of a message a student sees
# A text quoted as Python quotes it: from a quote not after a letter to the same quote not before one, or
# to the "…" that says it was cut short.
QUOTED = re.compile(r"""(?<![\w])(['"])((?:\\.|(?!\1)[^\\\n])*?)(\1(?!\w)|…\1?)""")
LONG_FLOAT = re.compile(r"(?<![\w.])(-?\d+\.\d{5,}(?:[eE][-+]?\d+)?)(?![\w.])")
LONG_INT = re.compile(r"(?<![\w.])-?\d{10,}(?![\w.])")
NOT_SHOWN = "<a text of the lab's>"
NAMED = "<a file the lab named>"
WHERE = re.compile(r"(?P<file>[^:/\\]+\.py):(?P<line>\d{1,7})(?: in (?P<name>\S+))?")
TODO = re.compile(r"TODO\((\w+)\) (\w+)\(\)")
EXIT = re.compile(r"the lab called sys\.exit\((-?\d{1,4}|None)\)")
# The audit events the hook refuses that a student may be told by name; any other event is the lab's own
# (sys.audit takes any name) and is shown as such.
KNOWN_EVENTS = frozenset({
    "open", "os.listdir", "os.scandir", "glob.glob", "glob.glob/2", "os.remove", "os.rmdir", "os.mkdir",
    "os.rename", "os.link", "os.symlink", "os.chmod", "os.chown", "os.utime", "os.truncate", "shutil.rmtree",
    "shutil.copyfile", "shutil.move", "os.chflags", "os.setxattr", "os.removexattr", "pathlib.Path.glob",
    "pathlib.Path.rglob", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.chown",
    "shutil.unpack_archive", "shutil.make_archive", "os.kill", "os.killpg", "os.system", "os.exec", "os.fork",
    "os.forkpty", "os.posix_spawn", "os.spawn", "os.startfile", "subprocess.Popen", "socket.socket",
    "socket.connect", "socket.bind", "socket.getaddrinfo", "socket.sendto", "sqlite3.connect",
    "resource.setrlimit", "resource.prlimit", "gc.get_objects", "gc.get_referrers", "gc.get_referents",
    "sys.settrace", "sys.setprofile", "sys._current_frames", "sys.set_asyncgen_hooks_firstiter",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.cdata", "ctypes.addressof", "ctypes.call_function",
    "ctypes.string_at", "ctypes.wstring_at", "ctypes.set_errno", "ctypes.get_errno", "os.add_dll_directory",
    "signal.pthread_kill", "os.setxattr", "os.getxattr", "os.listxattr", "urllib.Request", "webbrowser.open",
    "fcntl.fcntl", "fcntl.flock", "fcntl.lockf", "fcntl.ioctl", "mmap.__new__", "os.mknod", "os.mkfifo",
    "sys.addaudithook", "cpython.run_command", "os.setuid", "os.setgid", "os.chroot", "os.walk",
})


def lab_error(error: dict, function: str | None, lab: str, files: tuple) -> str:
    """What the lab raised, in the grader's words: 'raised ValueError (at rag4-chunking.py:12 in
    token_windows)', 'stops at TODO(rag4) word_windows(): not written yet', ... without the lab's message.

    `function` is the function the grader called (None while the lab is imported) and `files` the names of
    the lab files it knows.
    """
    builtin, message = str(error.get("builtin", "")), str(error.get("message", ""))
    todo = TODO.match(message)
    if todo and builtin == "NotImplementedError":
        return todo_text(todo.group(1), todo.group(2), lab)
    if function and builtin == "AttributeError" and message == f"the lab has no function {function}()":
        return f"raised AttributeError: the lab has no function {function}()"
    kind = builtin if is_builtin_exception(builtin) else "an exception"
    if builtin == "SystemExit":
        code = EXIT.match(message)
        return (f"raised SystemExit: the lab called sys.exit({code.group(1) if code else '…'}); a lab's "
                f"functions return, they never exit{where_text(error, function, files)}")
    return f"raised {kind}{where_text(error, function, files)}"


def todo_text(todo_lab: str, todo_function: str, lab: str) -> str:
    """A stub's TODO, named only if the grader knows it for one: its lab's, or an earlier lab's."""
    if todo_function not in POINTS.get(todo_lab, {}):
        return "stops at a TODO: not written yet"
    mark = f"TODO({todo_lab}) {todo_function}()"
    if todo_lab != lab:
        return f"{lab} builds on your {todo_lab}, which stops at {mark}; finish {todo_lab} first"
    return f"stops at {mark}: not written yet"


def is_builtin_exception(name: str) -> bool:
    value = getattr(builtins, name, None) if name.isidentifier() else None
    return isinstance(value, type) and issubclass(value, BaseException)


def where_text(error: dict, function: str | None, files: tuple) -> str:
    """' (at rag4-chunking.py:12 in token_windows)': a file the grader graded, a line, the called function."""
    found = WHERE.fullmatch(str(error.get("where", "")))
    if not found or found.group("file") not in files:
        return ""
    name = found.group("name")
    called = f" in {name}" if name and name == function else ""
    return f" (at {found.group('file')}:{int(found.group('line'))}{called})"


def refusal(text: str) -> str:
    """A refusal as a student sees it: the event by name if it is one of Python's own, else the lab's own."""
    event, _, rest = text.partition(" ")
    if event not in KNOWN_EVENTS:
        return "an audit event of the lab's own"
    return f"{event} {rest}".strip()


def shown(message: str, sent: list[str]) -> str:
    """`message` (the grader's, with values from the lab in it) as a student may see it.

    A quoted text stays only if it is empty, part of a text the grader sent in this test (`sent`), or
    a path that exists on the grader's machine; a number keeps four significant digits; a long
    integer is not shown. Escaped and bounded.
    """
    def quoted(match: re.Match) -> str:
        text = unquoted(match.group(1), match.group(2))
        if text is not None and (text == "" or any(text in whole for whole in sent) or is_a_path(text)):
            return match.group(0)
        folder = existing_folder(text or "")
        return f"'{folder}/{NAMED}'" if folder else NOT_SHOWN

    message = QUOTED.sub(quoted, str(message))
    message = LONG_FLOAT.sub(lambda match: format(float(match.group(1)), ".4g"), message)
    message = LONG_INT.sub("<a long number>", message)
    return safe_text(" ".join(message.split()), LIMIT)


def unquoted(quote: str, body: str) -> str | None:
    """The text a quoted literal stands for; a literal cut short in an escape loses the escape."""
    for cut in range(0, min(len(body), 10) + 1):
        try:
            value = ast.literal_eval(quote + body[:len(body) - cut] + quote)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        return value if isinstance(value, str) else None
    return None


def is_a_path(text: str) -> bool:
    return text.startswith("/") and len(text) < 4096 and "\0" not in text and os.path.lexists(text)


def existing_folder(text: str) -> str:
    """The folder of a path the lab named, if that folder exists on the grader's machine (the file it named,
    which does not, is the lab's text); '' if it is no such path."""
    folder = os.path.dirname(text)
    return folder if folder != "/" and is_a_path(folder) and os.path.isdir(folder) else ""


def sent_texts(value, found: list, depth: int = 0) -> list:
    """Every text in `value`, a call's arguments as the grader sent them (a Chunk's text, a New's args too)."""
    if depth > 32:
        return found
    if isinstance(value, str):
        found.append(value)
    elif isinstance(value, dict):
        for key, item in value.items():
            sent_texts(key, found, depth + 1)
            sent_texts(item, found, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset)):
        for item in value:
            sent_texts(item, found, depth + 1)
    elif hasattr(value, "__dataclass_fields__"):
        for name in value.__dataclass_fields__:
            sent_texts(getattr(value, name, None), found, depth + 1)
    return found
