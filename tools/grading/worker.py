"""The worker: where a student's lab runs while it is graded, walled off from the judge.

The grader starts one worker per lab (remote.py), behind the operating
system's wall (confine.py: a bubblewrap sandbox where it can), and sends it
calls on its standard input; the worker runs the lab's function and sends
back plain data (wire.py) on what was its standard output. Nothing it does
can change a verdict, since every check runs in the grader's process.

Before the lab's code runs, the worker
- loads what it trusts: the tokenizer, the embedding model, and the earlier
  labs the grader gives it (the reference ones, when the course has them);
- moves its pipes off file descriptors 0 and 1, so that what native code
  prints goes to its log, not into a reply;
- arms its backstops where the platform has them: it dies with the grader
  (a parent-death signal), it has a CPU-time limit it cannot raise, and it
  is the only process of its group;
- compiles every module from its source from now on (source_only_imports);
- puts up the kernel's walls on itself on Linux (lockdown.py: Landlock holds
  it to reading what it was given and writing its scratch; seccomp refuses
  new processes, locks, watches, IPC and sockets), which nothing in this
  process can take down;
- installs an audit hook (sys.addaudithook; it cannot be removed) that
  refuses, for the rest of the worker's life, every event not on its
  allowlist, and of those it allows, reading the course's reference, tests,
  tools and history (checked by inode, so no path, link or `..` gets round
  it) and writing anywhere but a scratch folder.
A refusal is reported to the grader before it is raised, on a line of its
own (a pipe the grader reads, which seccomp lets no call close or replace),
then raises PermissionError in the lab; the grader fails the test and says
why, even if the lab caught the error, and even if the lab then silences the
hook (whose state it can reach: the flag already says what was tried).
The hook is the inner layer, and a courtesy: code in this interpreter can
reach whatever it holds. What holds are the kernel's walls and the wall
around the process.

    python worker.py CONFIG_JSON      (started by remote.py, never by hand)
"""

import importlib.machinery
import io
import json
import os
import signal
import sys
import traceback
from pathlib import Path

CONFIG = json.loads(sys.argv[1])
sys.path[:0] = [CONFIG["course"], CONFIG["grading"]]  # academy_llm, labkit and wire: the grader's own copies

import academy_llm  # noqa: E402
import labkit  # noqa: E402
import labkit.loading  # noqa: E402
import labkit.sealed  # noqa: E402
import lockdown  # noqa: E402
import wire  # noqa: E402

# The grader's folder leaves the path, the script's own entry too: an import a lab makes later
# must not look there (and, in tools/, be refused as a read of the course's tools).
sys.path[:] = [entry for entry in sys.path if os.path.abspath(entry or ".") != CONFIG["grading"]]
sys.path_importer_cache.pop(CONFIG["grading"], None)

OUTPUT_LIMIT = 4_000  # characters of what the lab prints per call that travel back
REFUSAL_TEXT = 300  # characters of a refusal on the grader's refusal line
REFUSAL_LINE_LOST = 75  # the exit status of a worker that could not report a refusal
REQUESTS = os.fdopen(os.dup(0), "rb", buffering=0)  # the pipes, moved off 0 and 1 (see main)
REPLIES = os.dup(1)
refused: list[str] = []  # what the audit hook refused since the last reply


def send(message: dict) -> None:
    """Write one reply, all of it, to the grader."""
    data = wire.dumps(message)
    while data:
        data = data[os.write(REPLIES, data):]


def read_request() -> dict | None:
    """The next call from the grader, or None when it has closed the pipe."""
    line = bytearray()
    while not line.endswith(b"\n"):
        part = REQUESTS.read(1 << 16)
        if not part:
            return None
        line += part
    return wire.loads(bytes(line))


# ---- backstops ----------------------------------------------------------------


def quiet_standard_streams() -> None:
    """Point descriptors 0 and 1 away from the pipes: native code that prints writes to the log."""
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)


def die_with_the_grader() -> None:
    """Ask Linux to kill this process when the grader ends, however it ends.

    In the sandbox, bubblewrap does it (--die-with-parent), and this process's
    parent is the sandbox's own first process, so there is nothing to compare.
    """
    if CONFIG["grader_pid"] is None:
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # not Linux: the grader's own watch still stops us
        pass
    if os.getppid() != CONFIG["grader_pid"]:  # the grader ended before the signal was set
        os._exit(70)


def limit_cpu_time(seconds: int) -> None:
    """A CPU-time limit the lab cannot raise (the audit hook refuses setrlimit), where there is one."""
    if CONFIG["portable"]:
        return
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (seconds, seconds))


# ---- what the worker trusts, loaded before the lab ------------------------------


def load_trusted() -> dict:
    """Warm the helper and load the earlier labs the grader gives; {name: module}.

    The wordllama model loads when a lab first embeds. Outside the sandbox its
    package is imported now, before the wall: importing it opens a socket (a
    probe for IPv6), which the hook refuses there. In the sandbox a socket
    reaches nothing (its network namespace is empty), so it is not refused,
    and a lab that never embeds never pays the half second.
    """
    academy_llm.tokenizer()
    academy_llm.embed(["warm"], "hash")
    if not CONFIG["sandboxed"]:
        import wordllama  # noqa: F401

    given = {}
    for name, path in CONFIG["given"].items():
        given[name] = labkit.load_lab(name, os.path.dirname(path))
    return given


def redirect_load_lab(given: dict) -> None:
    """Earlier labs come from the grader's list: the given ones, else the student's own files.

    A later lab calls load_lab("rag4"); here that is the reference rag4 the
    grader gave, or (in a student's own repository) the student's rag4 from
    the exact file the grader chose, never a stray copy beside it.
    """
    load = labkit.load_lab
    files = CONFIG["files"]

    def load_lab(name, folder=None):
        if folder is not None:
            return load(name, folder)
        if name in given:
            return given[name]
        if name in files:
            return load_file(name, files[name])
        raise FileNotFoundError(
            f"{CONFIG['lab']} builds on your {name}, but there is no {name} lab file in "
            f"{CONFIG['lab_dir']}; add it (it can be unfinished)"
        )

    labkit.load_lab = load_lab


def load_file(name: str, path: str):
    """Import exactly the lab file at `path`, once: a stray copy beside it is never read."""
    resolved = Path(path).resolve()
    return labkit.loading.loaded_labs.get(resolved) or load_exact(name, resolved)


def load_exact(name: str, resolved):
    """Import the file `resolved` as lab `name` (load_lab's own search would balk at a stray copy)."""
    import importlib.util

    labkit.loading.check_encoding(resolved)
    module_name = f"lab_{name}_graded"
    spec = importlib.util.spec_from_file_location(module_name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)
    labkit.loading.loaded_labs[resolved] = module
    return module


# ---- source only ------------------------------------------------------------------


def source_only_imports(lab_dir: str) -> None:
    """From now on, every module is compiled from its source text: no bytecode is read, none written.

    A .pyc beside a lab (in __pycache__, or on its own in the lab's folder)
    could hold other code than the source the grader reads and the similarity
    check compares. Python looks for cached bytecode under sys.pycache_prefix
    when it is set: under /dev/null, where nothing can ever exist. The finder
    for each folder knows no sourceless loader, and in the student's folder
    neither native modules nor zip files are imported, only .py files.
    """
    from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, ExtensionFileLoader, FileFinder
    from importlib.machinery import SourceFileLoader

    sys.dont_write_bytecode = True
    sys.pycache_prefix = "/dev/null/no-bytecode"
    student = os.path.normpath(lab_dir) + os.sep
    everywhere = ((ExtensionFileLoader, EXTENSION_SUFFIXES), (SourceFileLoader, SOURCE_SUFFIXES))

    def finder(path: str):
        if not os.path.isdir(path or "."):
            raise ImportError("only folders", path=path)
        inside = (os.path.normpath(os.path.abspath(path or ".")) + os.sep).startswith(student)
        return FileFinder(path, *(everywhere[1:] if inside else everywhere))

    def no_zip_in_the_lab(path: str):
        if (os.path.normpath(os.path.abspath(path or ".")) + os.sep).startswith(student):
            raise ImportError("no zip imports from the student's folder", path=path)
        return zipimporter(path)

    from zipimport import zipimporter

    sys.path_hooks[:] = [no_zip_in_the_lab, finder]
    sys.path_importer_cache.clear()


# ---- the wall ------------------------------------------------------------------------


def install_audit_hook(forbidden_roots: list[str], scratch: str, sealed_files: tuple = ()) -> None:
    """Refuse, from now on, what a lab must never do (see the module's docstring).

    Everything the hook uses is captured here, as C functions and frozen
    sets, so a lab that rebinds os.stat or os.path cannot steer it.
    """
    posix = __import__(os.name)  # posix, or nt on Windows: the C functions under os

    stat, lstat, getcwd, getpid = posix.stat, posix.lstat, posix.getcwd, posix.getpid
    normpath = os.path.normpath
    # The lab's own folder is always open to it (when the reference itself is graded, too);
    # the worker's own code is no secret (the handout ships it), and tracebacks read it.
    allowed = set(inodes_under([CONFIG["lab_dir"]])) | {key_of_file(p) for p in (__file__, wire.__file__,
                                                                       lockdown.__file__)}
    forbidden = frozenset(inodes_under(forbidden_roots)) - allowed
    sealed = frozenset(inodes_under(sealed_files)) - allowed  # the modules of given code sealed for this lab
    lab_dir = os.path.normpath(CONFIG["lab_dir"]) + os.sep
    # By name too: in the sandbox these folders do not exist, and an attempt is still worth a flag.
    closed_names = tuple(os.path.normpath(root) + os.sep for root in forbidden_roots)
    scratch_inode = (stat(scratch).st_dev, stat(scratch).st_ino)
    root_inode = (stat("/").st_dev, stat("/").st_ino)
    own_proc = f"/proc/{getpid()}/"
    # Deny by default: an event on neither list is refused. These are what a lab's own Python raises while it
    # runs (importing, compiling, introspecting its own frames, starting threads, sleeping, setting its
    # environment); what touches a path is checked below.
    allowed_events = frozenset({
        "import", "exec", "compile", "builtins.id", "builtins.input", "builtins.input/result",
        "object.__getattr__", "object.__setattr__", "object.__delattr__", "sys._getframe",
        "sys._getframemodulename", "sys.excepthook", "sys.unraisablehook", "sys.addaudithook",
        "_thread.start_new_thread", "time.sleep", "os.putenv", "os.unsetenv", "os.chdir",
        "code.__new__", "function.__new__", "array.__new__", "marshal.loads", "marshal.dumps",
        "pickle.find_class", "mmap.__new__", "tempfile.mkstemp", "tempfile.mkdtemp",
        "cpython._PySys_ClearAuditHooks", "cpython.PyInterpreterState_Clear",
    })
    sandbox_events = ("socket.",)  # a socket in the sandbox reaches nothing (wordllama's import probes one)
    path_events = {  # event -> positions of its path arguments, and whether it writes
        "open": ((0,), None), "os.listdir": ((0,), False), "os.scandir": ((0,), False),
        "glob.glob": ((0,), False), "os.remove": ((0,), True), "os.rmdir": ((0,), True),
        "os.mkdir": ((0,), True), "os.rename": ((0, 1), True), "os.link": ((0, 1), True),
        "os.symlink": ((0, 1), True), "os.chmod": ((0,), True), "os.chown": ((0,), True),
        "os.utime": ((0,), True), "os.truncate": ((0,), True), "shutil.rmtree": ((0,), True),
        "shutil.copyfile": ((1,), True), "shutil.move": ((1,), True), "os.chflags": ((0,), True),
        "os.setxattr": ((0,), True),
        "os.removexattr": ((0,), True), "pathlib.Path.glob": ((0,), False), "pathlib.Path.rglob": ((0,), False),
        "glob.glob/2": ((0,), False), "shutil.copymode": ((1,), True), "shutil.copystat": ((1,), True),
        "shutil.copytree": ((1,), True), "shutil.chown": ((0,), True), "shutil.unpack_archive": ((1,), True),
        "shutil.make_archive": ((0,), True)
    }
    native_suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    busy = [False]  # the hook's own calls raise events too
    line, write, escape, end = CONFIG.get("refusal_fd"), posix.write, ascii, posix._exit
    kept = refused  # this list, whatever the lab later binds to the name

    def key_of(path: str, follow: bool = True):
        try:
            info = stat(path) if follow else lstat(path)
        except (OSError, ValueError, TypeError):
            return None
        return (info.st_dev, info.st_ino)

    def inside_scratch(path: str) -> bool:
        """True if `path`, a file that may not exist yet, sits in the scratch folder (no link)."""
        if path == "/dev/null":
            return True
        if not path.startswith("/"):
            path = getcwd() + "/" + path
        link = key_of(path, follow=False)
        if link is not None and key_of(path) != link:  # a symbolic link: never written through
            return False
        folder = path.rstrip("/").rpartition("/")[0] or "/"
        for _ in range(256):
            here = key_of(folder)
            if here is None or here == root_inode:
                return False
            if here == scratch_inode:
                return True
            folder += "/.."
        return False

    def report(what: str) -> None:
        """Tell the grader of a refusal before the lab can act on it, first of all; a worker that cannot, ends."""
        if line is not None:
            data = (escape(what)[:REFUSAL_TEXT] + "\n").encode("ascii")
            try:
                written = write(line, data)
            except OSError:
                written = -1
            if written != len(data):
                end(REFUSAL_LINE_LOST)
        kept.append(what)

    def refuse(what: str) -> None:
        report(what)
        raise PermissionError(f"the grader refused {what} while a lab runs")

    def check_path(event: str, path, writes: bool) -> None:
        if isinstance(path, int) or path is None:
            return  # an open file descriptor, checked when it was opened
        if isinstance(path, bytes):
            path = path.decode("utf-8", "surrogateescape")
        path = str(path)
        plain = normpath(path if path.startswith("/") else getcwd() + "/" + path)
        if plain.startswith("/proc/") and plain[6:7].isdigit() and not (plain + "/").startswith(own_proc):
            refuse(f"{event} {path!r} (another process)")
        if writes and not inside_scratch(path):
            refuse(f"{event} {path!r} for writing (a lab may write only in its scratch folder)")
        named = (plain + os.sep).startswith(closed_names) and not (plain + os.sep).startswith(lab_dir)
        if named or key_of(path) in forbidden:
            refuse(f"{event} {path!r} (closed to labs: the course's reference, tests, history, other work)")
        if key_of(path) in sealed:
            refuse(f"{event} {path!r} (given code that does this lab's TODOs, sealed while it is judged)")
        if writes and path.endswith(native_suffixes):
            refuse(f"{event} {path!r} (native code would get round the wall)")

    def hook(event: str, args: tuple) -> None:
        if busy[0]:
            return
        rule = path_events.get(event)
        if rule is None:
            if event in allowed_events or (CONFIG["sandboxed"] and event.startswith(sandbox_events)):
                return
            busy[0] = True
            try:
                report(f"{event}")
            finally:
                busy[0] = False
            raise PermissionError(f"the grader refused {event} while a lab runs")
        positions, writes = rule
        busy[0] = True
        try:
            if writes is None:  # open(path, mode, flags)
                mode, flags = (args[1] if len(args) > 1 else "r"), (args[2] if len(args) > 2 else 0)
                writes = any(c in str(mode or "") for c in "wax+") or bool(flags & 0o3 or flags & 0o100)
            for position in positions:
                if position < len(args):
                    check_path(event, args[position], writes)
        finally:
            busy[0] = False

    sys.addaudithook(hook)


def key_of_file(path: str) -> tuple:
    info = os.stat(path)
    return (info.st_dev, info.st_ino)


def inodes_under(roots: list[str]):
    """(device, inode) of every file and folder under `roots`, read before the wall goes up."""
    for root in roots:
        if not os.path.exists(root):
            continue
        info = os.stat(root)
        yield (info.st_dev, info.st_ino)
        for folder, dirs, files in os.walk(root):
            for name in dirs + files:
                try:
                    info = os.stat(os.path.join(folder, name))
                except OSError:
                    continue
                yield (info.st_dev, info.st_ino)


# ---- serving calls ---------------------------------------------------------------


class Bounded(io.TextIOBase):
    """A text stream that keeps the first OUTPUT_LIMIT characters written to it and counts the rest."""

    def __init__(self):
        self.kept, self.dropped = [], 0
        self.size = 0

    def writable(self):
        return True

    def write(self, text):
        text = str(text)
        room = OUTPUT_LIMIT - self.size
        if room > 0:
            self.kept.append(text[:room])
            self.size += min(room, len(text))
        self.dropped += max(0, len(text) - max(room, 0))
        return len(text)

    def text(self) -> str:
        more = f"\n[{self.dropped} more characters not shown]" if self.dropped else ""
        return "".join(self.kept) + more


def error_message(error: BaseException) -> dict:
    """A lab's exception as data: its type, its builtin bases, its message, where it was raised."""
    kind = type(error)
    builtin = next(c.__name__ for c in kind.__mro__ if c.__module__ == "builtins")
    where = ""
    frames = traceback.StackSummary.extract(traceback.walk_tb(error.__traceback__), lookup_lines=False)
    for frame in reversed(frames):  # the innermost line of the student's own code
        if os.path.dirname(frame.filename) == CONFIG["lab_dir"]:
            where = f"{os.path.basename(frame.filename)}:{frame.lineno} in {frame.name}"
            break
    try:
        message = str(error)
    except Exception:
        message = "<the error's message could not be read>"
    if isinstance(error, SystemExit):
        message = f"the lab called sys.exit({error.code!r}); a lab's functions return, they never exit"
    return {"type": kind.__name__, "builtin": builtin, "message": message[:2000], "where": where}


def run(function, args, kwargs) -> dict:
    """Call `function` with the lab's output caught; the reply to send."""
    out = Bounded()
    sys.stdout = sys.stderr = out
    try:
        value = function(*args, **kwargs)
        reply = {"value": wire.encode(value)}
    except BaseException as error:  # noqa: BLE001  (a lab may raise anything, even SystemExit)
        reply = {"error": error_message(error)}
    finally:
        sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    reply["output"] = out.text()
    return reply


def serve(module) -> None:
    """Answer calls until the grader closes the pipe."""
    classes = vars(module)
    while True:
        request = read_request()
        if request is None:
            return
        name = request["call"]
        function = getattr(module, name, None)
        if not callable(function):
            reply = {"error": {"type": "AttributeError", "builtin": "AttributeError", "where": "",
                               "message": f"the lab has no function {name}()"}, "output": ""}
        else:
            try:
                args = wire.decode(request["args"], classes)
                kwargs = wire.decode(request["kwargs"], classes)
            except wire.WireError as error:
                reply = {"error": {"type": "WireError", "builtin": "Exception",
                                   "message": str(error), "where": ""}, "output": ""}
            else:
                reply = run(function, args, kwargs)
        reply["refused"] = refused[:]
        refused.clear()
        try:
            send(reply)
        except wire.WireError as error:  # the lab's value could not be written as data
            send({"error": {"type": "WireError", "builtin": "Exception", "message": str(error),
                            "where": ""}, "output": "", "refused": []})


def guard_the_refusal_line() -> None:
    """The refusal line never blocks the hook: a lab that fills it ends its own worker (REFUSAL_LINE_LOST)."""
    if CONFIG.get("refusal_fd") is not None:
        os.set_blocking(CONFIG["refusal_fd"], False)
        os.set_inheritable(CONFIG["refusal_fd"], False)


def main() -> None:
    source_only_imports(CONFIG["lab_dir"])
    quiet_standard_streams()
    if not CONFIG["portable"]:
        die_with_the_grader()
    limit_cpu_time(CONFIG["cpu_seconds"])
    given = load_trusted()
    redirect_load_lab(given)
    labkit.sealed.seal(CONFIG["lab"])  # the given code that does this lab's TODOs refuses (labkit/sealed.py)
    os.chdir(CONFIG["scratch"])
    guard_the_refusal_line()
    walls = [] if CONFIG["portable"] else lockdown.put_up(CONFIG["readable"], [CONFIG["scratch"], "/dev/null"],
                                                          CONFIG["hidden"], CONFIG.get("refusal_fd"))
    install_audit_hook(CONFIG["forbidden"], CONFIG["scratch"], tuple(labkit.sealed.files(CONFIG["lab"])))
    send({"ready": "trusted", "walls": walls})
    loaded = run(lambda: load_file(CONFIG["lab"], CONFIG["file"]), (), {})
    if "error" in loaded:
        loaded["refused"] = refused[:]
        send(loaded)
        return
    module = load_file(CONFIG["lab"], CONFIG["file"])
    send({"ready": "lab", "output": loaded["output"], "refused": refused[:]})
    refused.clear()
    serve(module)


if __name__ == "__main__":
    main()
