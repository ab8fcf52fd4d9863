"""The grader's side of the wall: a student's lab as an object whose functions run elsewhere.

    rag4 = RemoteLab("rag4", Path("labs/rag4-chunking.py"), ...)
    chunks = rag4.token_windows(text, 16, 4)   # runs in the lab's worker; chunks are data

A grading test calls a lab's functions as if the lab were imported, but the
lab runs in a worker process (worker.py) and only plain data comes back
(wire.py): the test, pytest, hypothesis and academy_llm that judge it stay
out of the student's reach. Each call is bounded by the current test's time
limit, and the worker is stopped whenever the grader stops.

What a call can end in, each as one line that names the call:
- the value, rebuilt with the grader's own classes;
- the lab's exception, rebuilt as the same builtin type (a lab's own
  ValueError subclass arrives as ValueError), so `pytest.raises` works;
- LabTimeout: the call ran past the test's time limit; the worker is
  stopped, and later calls of the same function fail at once with the same
  reason rather than wait out the limit again;
- LabCrashed: the worker ended during the call (os._exit, a crash, out of
  memory); the next call starts a new one;
- LabRefused: the lab tried what the wall refuses (reading the reference,
  writing outside its scratch folder, starting a process, a socket...);
- LabUnavailable: the lab cannot be loaded at all (a syntax error, an
  import that fails or never ends); every call fails at once with the reason.
"""

import ast
import atexit
import builtins
import functools
import json
import os
import queue
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import confine
import judged
import numpy as np
import wire
from safe_text import safe_text

import academy_llm

GRADING = Path(__file__).resolve().parent  # the grader's machinery: this folder
WORKER = GRADING / "worker.py"
WORKER_FILES = ("worker.py", "wire.py", "lockdown.py")  # the worker's own code, all it runs of the grader's
STARTUP_LIMIT = 120.0  # seconds for a worker to load what it trusts (not the lab), on a busy machine
LAB_LOAD_FLOOR = 10.0  # seconds at least for importing the lab itself
CPU_SECONDS = 900  # a worker's own backstop: its whole life's CPU time
FILE_SIZE_LIMIT = 64 << 20  # bytes: the largest file a worker may write (its scratch, its log)
MEMORY_LIMIT = 4 << 30  # bytes of address space a worker may use: a memory bomb gets MemoryError
REPLY_LIMIT = 32 << 20  # bytes: the largest reply the grader reads from a worker (see wire.loads)
TEST_LIMITS = 3  # a whole test may take this many time limits, however many calls it makes
REFUSAL_TEXT = 300  # characters of a refusal the grader keeps
SENT_KEPT = 10_000  # texts sent in one test that its messages may quote
REFUSAL_LINE_LOST = 75  # a worker's exit status when its hook could not report a refusal (worker.py)


class LabProblem(Exception):
    """A call of a lab's function that ended in something other than a value or the lab's error."""


class LabTimeout(LabProblem):
    """The call ran past the test's time limit."""


class LabCrashed(LabProblem):
    """The worker process ended during the call."""


class LabRefused(LabProblem):
    """The lab tried something the wall refuses."""


class LabUnavailable(LabProblem):
    """The lab cannot be loaded, so none of its functions can be called."""


class LabError(LabProblem):
    """The lab raised something that is not an ordinary exception (sys.exit, a KeyboardInterrupt...)."""


class LabBadValue(LabProblem):
    """The lab returned a value that cannot be judged (a broken Chunk, nested too deep...)."""


# ---- the current test's clock ----------------------------------------------------


class Clock:
    """The time limit of the test being run.

    A single call may take the whole `limit`: one that runs past it is stuck
    (an endless loop?) and its function is not run again. The test as a
    whole may take TEST_LIMITS times as long, for a property that calls the
    lab hundreds of times (more while hypothesis shrinks a failure): past
    that, the test stops, but no function is blamed for it.
    """

    limit: float = 60.0
    deadline: float | None = None  # when the whole test must end
    excused: float = 0.0  # seconds spent starting workers: the grader's cost, not the lab's
    sent: list = []  # every text the grader sent a lab in this test: what its messages may quote (judged.py)

    @classmethod
    def start(cls, limit: float) -> None:
        cls.limit, cls.excused, cls.sent = limit, 0.0, []
        cls.deadline = time.monotonic() + TEST_LIMITS * limit

    @classmethod
    def excuse(cls, seconds: float) -> None:
        """Give the test back `seconds` (a worker's start-up) that its code did not use."""
        cls.excused += seconds
        if cls.deadline is not None:
            cls.deadline += seconds

    @classmethod
    def stop(cls) -> None:
        cls.deadline = None

    @classmethod
    def left(cls) -> float:
        """What the test has left, in seconds."""
        if cls.deadline is None:
            return TEST_LIMITS * cls.limit
        return max(0.0, cls.deadline - time.monotonic())

    @classmethod
    def for_a_call(cls) -> float:
        """How long the next call may take: the limit, or what the test has left if less."""
        return min(cls.limit, cls.left())


# ---- describing a call in one line ---------------------------------------------


def short(value, width: int = 24) -> str:
    """A value as a reader recognises it, in a few characters."""
    if isinstance(value, (str, bytes)):
        return repr(value) if len(value) <= width else repr(value[:width])[:-1] + "…'"
    if isinstance(value, academy_llm.Chunk):
        return f"Chunk[{value.start}, {value.end})"
    if isinstance(value, wire.New):  # the lab's own object, made in its worker: TokenIndex(…)
        return f"{value.name}({', '.join(short(arg, 12) for arg in value.args)})"
    if isinstance(value, np.ndarray):
        return f"array(shape {'x'.join(map(str, value.shape))})"
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        opening, closing = ("[", "]") if isinstance(value, list) else ("(", ")")
        if len(value) > 3:
            return f"{opening}{short(value[0], 12)}, … {len(value)} items{closing}"
        return opening + ", ".join(short(item, 12) for item in value) + closing
    text = wire.short_repr(value, 40)
    return text


def describe(name: str, args: tuple, kwargs: dict) -> str:
    """'token_windows('hello world hello world…', 10, 0)': the call, shortened."""
    parts = [short(arg) for arg in args] + [f"{key}={short(value)}" for key, value in kwargs.items()]
    return f"{name}({', '.join(parts)})"


# ---- the worker process -----------------------------------------------------------

_live: set = set()  # every worker still running, stopped when the grader ends
_base: list = []  # this grader's private folder of worker homes, made on first use


def worker_base() -> Path:
    """The folder holding every worker's home: private to the grader, removed when it ends."""
    if not _base:
        _base.append(confine.scratch_root())
    return _base[0]


def worker_environment(scratch: str) -> dict:
    """The whole environment a worker starts with: nothing of the grader's (no grading seed)."""
    kept = {key: value for key, value in os.environ.items()
            if key in ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "SYSTEMROOT", "WINDIR", "PYTHONHASHSEED")}
    return kept | {"HOME": scratch, "TMPDIR": scratch, "TEMP": scratch, "TMP": scratch,
                   "MPLCONFIGDIR": scratch, "MPLBACKEND": "Agg", "OPENBLAS_NUM_THREADS": "1",
                   "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
                   "ACADEMY_COURSE_VECTORS": "0"}  # never the reference's chunks' vectors (labkit/minilm.py)


def readable_for(config: dict) -> tuple:
    """What a worker reads: the course's helper, its own code, the labs it is given, the student's folder."""
    course = Path(config["course"])
    labkit = sorted((course / "labkit").glob("*.py"))  # its source, never a cached .pyc; none answers a TODO
    lessons = course / "labkit" / "lessons"  # a folder: its listing is read when the first lesson is imported
    helper = [course / "academy_llm.py", *labkit, lessons, course / "datasets", course / "assets",
              course / "labs" / "hints"]  # the hints every student has: a lab loads its own
    code = [GRADING / name for name in WORKER_FILES]
    return tuple(map(str, [*helper, *code, *config["given"].values(), config["lab_dir"]]))


def copies_for_the_user(config: dict, home: Path) -> dict:
    """The config of a worker run as the separate user, on copies it may read of what it needs.

    The originals sit in folders closed to that user (tools/, solutions/, the
    class's staged folders); the copies are root's, readable, and the worker's alone.
    """
    code, given, lab = home / "code", home / "given", home / "lab"
    for folder in (code, given, lab):
        folder.mkdir()
    for name in WORKER_FILES:
        shutil.copy(GRADING / name, code / name)
    config = dict(config, grading=str(code), lab_dir=str(lab), file=str(lab / Path(config["file"]).name),
                  given={name: str(shutil.copy(path, given)) for name, path in config["given"].items()},
                  files={name: str(shutil.copy(path, lab)) for name, path in config["files"].items()})
    if not Path(config["file"]).exists():
        shutil.copy(config["original_file"], config["file"])
    for path in [home, *home.rglob("*")]:
        path.chmod(0o711 if path == home else 0o755 if path.is_dir() else 0o644)
    return config


class Replies:
    """The worker's replies, a line each, read by a thread of the grader's.

    A thread, since select() cannot wait on a pipe everywhere (Windows). It
    stops reading at a line over REPLY_LIMIT, and holds at most two lines
    unread, so a worker that floods its pipe only fills it and waits.
    """

    def __init__(self, stream):
        self.lines: queue.Queue = queue.Queue(maxsize=2)
        threading.Thread(target=self._read, args=(stream,), daemon=True).start()

    def _read(self, stream) -> None:
        buffer, scanned = bytearray(), 0
        while True:
            try:
                part = stream.read1(1 << 20)
            except (OSError, ValueError):
                part = b""
            if not part:
                self.lines.put(EOFError())
                return
            buffer += part
            while (end := buffer.find(b"\n", scanned)) >= 0:
                self.lines.put(bytes(buffer[:end]))
                del buffer[:end + 1]
                scanned = 0
            scanned = len(buffer)
            if len(buffer) > REPLY_LIMIT:
                self.lines.put(wire.WireError(f"the lab's reply is over {REPLY_LIMIT >> 20} MB"))
                return

    def next(self, seconds: float) -> bytes | None:
        """The next line; None if `seconds` ran out first. EOFError if the worker ended."""
        try:
            line = self.lines.get(timeout=max(0.0, seconds))
        except queue.Empty:
            return None
        if isinstance(line, Exception):
            self.lines.put(line)  # every later read ends the same way
            raise line
        return line


class Worker:
    """One running worker: its confined process, its pipes, its private home and scratch folder."""

    def __init__(self, config: dict, isolation: str):
        self.isolation = isolation
        self.mounted = False  # a tmpfs on the scratch folder (the separate user's, where root may mount)
        self.home = Path(tempfile.mkdtemp(prefix=f"{config['lab']}-", dir=worker_base()))
        self.scratch = self.home / "scratch"
        self.scratch.mkdir(mode=0o700)
        # The refusal line: the worker's audit hook writes each refusal here before raising it (worker.py).
        self.refusal_line, refusal_end = os.pipe() if not confine.portable() else (None, None)
        config = dict(config, scratch=str(self.scratch), grader_pid=os.getpid(), cpu_seconds=CPU_SECONDS,
                      portable=confine.portable(), sandboxed=isolation == confine.SANDBOX, refusal_fd=refusal_end)
        if isolation == confine.USER:
            config = copies_for_the_user(dict(config, original_file=config["file"]), self.home)
            self.mounted = confine.share_with_user(self.scratch)
        if isolation == confine.SANDBOX:  # the sandbox's own first process is the worker's parent
            config = dict(config, grader_pid=None)
        config = dict(config, readable=confine.worker_reads(readable_for(config)),
                      hidden=list(confine.hidden_paths()))
        environment = worker_environment(str(self.scratch))
        argv = [sys.executable, "-E", "-s", "-B", str(Path(config["grading"]) / "worker.py"), json.dumps(config)]
        if isolation == confine.SANDBOX:
            empty = self.home / "empty"
            empty.mkdir()
            argv = confine.sandbox_command(argv, readable_for(config), str(self.scratch), environment, str(empty))
        options = {}
        self.cgroup = confine.Cgroup(f"chunking-{os.getpid()}-{self.home.name}") if not confine.portable() else None
        if not confine.portable():
            user = confine.worker_user() if isolation == confine.USER else None
            options = {"start_new_session": True, "preexec_fn": functools.partial(set_limits, self.cgroup, user),
                       "pass_fds": (refusal_end,)}
        self.log = open(self.home / "worker.log", "wb")
        try:
            self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log,
                                            env=environment, cwd=self.scratch, **options)
        finally:
            if refusal_end is not None:
                os.close(refusal_end)
        if self.refusal_line is not None:
            os.set_blocking(self.refusal_line, False)
        self.heard = b""  # what the refusal line holds past its last full line
        self.replies = Replies(self.process.stdout)
        _live.add(self)

    def bounds(self) -> str:
        """The kernel's bounds on this worker's processes and memory, in a few words for the report."""
        if self.cgroup is None or not self.cgroup.folders:
            return self.cgroup.why if self.cgroup else "no cgroup (portable)"
        return f"cgroup: {confine.WORKER_PIDS} tasks, {confine.WORKER_MEMORY >> 30} GB"

    def send(self, message: dict) -> None:
        try:
            self.process.stdin.write(wire.dumps(message))
            self.process.stdin.flush()
        except (BrokenPipeError, OSError, ValueError):
            pass  # the worker has ended; reading its reply will say how

    def receive(self, seconds: float) -> dict | None:
        """The worker's next message; None if `seconds` ran out first. EOFError if it ended."""
        line = self.replies.next(seconds)
        return None if line is None else wire.reply(line)

    def reported(self) -> list[str]:
        """The refusals the worker's hook has reported since the last look, each in the grader's escaped text.

        The hook writes a refusal before it raises it, so every refusal of a call is here once its reply is.
        """
        if self.refusal_line is None:
            return []
        while True:
            try:
                part = os.read(self.refusal_line, 1 << 16)
            except (BlockingIOError, OSError):
                break
            if not part:
                break
            self.heard = (self.heard + part)[-(1 << 20):]
        *lines, self.heard = self.heard.split(b"\n")
        return [safe_text(unquoted(line.decode("ascii", "replace"))) for line in lines if line.strip()]

    def how_it_ended(self) -> str:
        """One line on how the worker ended, after it has."""
        try:
            status = self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.stop()
            status = self.process.returncode
        if status is not None and status < 0:
            name = signal.Signals(-status).name
            why = {"SIGXCPU": f" (its CPU-time limit of {CPU_SECONDS} s)",
                   "SIGXFSZ": f" (a file over {FILE_SIZE_LIMIT >> 20} MB)",
                   "SIGKILL": " (out of memory?)", "SIGSEGV": " (a crash)"}.get(name, "")
            return f"the lab's process was killed by {name}{why}"
        if self.isolation == confine.SANDBOX and status is not None and status > 128:  # bwrap passes signals on
            return f"the lab's process was killed by signal {status - 128}"
        if status == REFUSAL_LINE_LOST:
            return "the lab's process ended: it kept the grader from hearing of a refusal"
        hint = " (did the lab call os._exit?)" if status not in (0, None) else ""
        return f"the lab's process ended with exit status {status}{hint}"

    def stop(self) -> None:
        """Kill the worker and everything it started, and remove its home."""
        try:
            if confine.portable():
                self.process.kill()
            else:  # its session; in the sandbox, its PID namespace dies with its first process
                os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError, OSError):
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        for stream in (self.process.stdin, self.process.stdout):
            try:
                stream.close()
            except OSError:
                pass
        if self.refusal_line is not None:
            os.close(self.refusal_line)
            self.refusal_line = None
        self.log.close()
        if self.cgroup is not None:
            self.cgroup.remove()
        if self.mounted:
            confine.unmount(self.scratch)
        shutil.rmtree(self.home, ignore_errors=True)
        _live.discard(self)


def refusal_reason(what: str, refused: str) -> str:
    return (f"{what}: the grader refused {judged.refusal(refused)}; a lab may read only its own files and write "
            f"only in its scratch folder")


def unquoted(text: str) -> str:
    """A refusal as the hook wrote it (ascii() of its text), read back without running anything."""
    try:
        value = ast.literal_eval(text[:4 * REFUSAL_TEXT])
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    return value if isinstance(value, str) else text


def set_limits(cgroup, user) -> None:
    """In the worker, before it starts: its own cgroup (confine.Cgroup), the separate user if it runs as
    one (after the cgroup, which only root may enter), no file past FILE_SIZE_LIMIT, no memory past
    MEMORY_LIMIT, and, not run as root, no more than its share of processes."""
    import resource

    cgroup.enter()
    if user is not None:
        os.setgroups([])
        os.setgid(user[1])
        os.setuid(user[0])
    resource.setrlimit(resource.RLIMIT_FSIZE, (FILE_SIZE_LIMIT, FILE_SIZE_LIMIT))
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    if os.getuid() != 0:
        resource.setrlimit(resource.RLIMIT_NPROC, (confine.USER_PROCESSES, confine.USER_PROCESSES))


@atexit.register
def stop_all() -> None:
    """Stop every worker still running (the workers also die with the grader on their own)."""
    for worker in list(_live):
        worker.stop()
    if _base:
        shutil.rmtree(_base.pop(), ignore_errors=True)


# ---- a lab, seen from the grader --------------------------------------------------


class RemoteLab:
    """Lab `name` in file `path`: every attribute is one of its functions, run in its worker.

    `files` maps every lab name to the student's file (the earlier labs a lab
    builds on, in a student's own repository); `given` maps earlier labs to
    reference files the worker loads instead, before the lab's code runs;
    `forbidden` lists the folders the lab may not read; `isolation` is the
    wall its workers run behind (confine.py).
    """

    def __init__(self, name: str, path: Path, files: dict, given: dict, forbidden: list, isolation: str,
                 before_start=None):
        self._before_start = before_start  # called before any worker of this lab starts
        self._config = {
            "lab": name, "file": str(path), "lab_dir": str(path.parent),
            "files": {lab: str(file) for lab, file in files.items()},
            "given": {lab: str(file) for lab, file in given.items()},
            "forbidden": [str(folder) for folder in forbidden],
            "course": str(Path(academy_llm.__file__).resolve().parent), "grading": str(GRADING),
        }
        self._isolation = isolation
        self._name = name
        self._worker = None
        self._spare = None  # a worker started ahead of the first call (prestart)
        self._hung: dict[str, str] = {}  # function -> why it is not run again
        self._unavailable = None  # why the lab cannot be loaded, once known
        self.last_call = ""  # the call a failing test met last, for its one-line reason
        self.refusals: list[str] = []  # everything the wall refused, for the lab's report
        self.walls: list[str] = []  # the kernel's walls its last worker put up (lockdown.py)

    def __repr__(self):
        return f"<{self._name} lab, run in a worker>"

    def __getattr__(self, function: str):
        if function.startswith("_"):
            raise AttributeError(function)

        def call(*args, **kwargs):
            return self._call(function, args, kwargs)

        call.__name__ = function
        return call

    def _call(self, function: str, args: tuple, kwargs: dict):
        what = describe(function, args, kwargs)
        self.last_call = what
        if len(Clock.sent) < SENT_KEPT:
            Clock.sent += judged.sent_texts((args, kwargs), [])
        if self._unavailable:
            hung = "timed out" in self._unavailable
            raise LabUnavailable(f"{what} not run: {self._unavailable}" if hung else self._unavailable)
        if function in self._hung:
            raise LabTimeout(f"{what} not run: {self._hung[function]}")
        worker = self._start()
        worker.send({"call": function, "args": wire.encode(list(args)),
                     "kwargs": wire.encode(kwargs)})
        reply = self._wait(worker, Clock.for_a_call(), what, function)
        return self._answer(reply, what)

    def prestart(self) -> None:
        """Start a worker now, to load in the background while other tests run: most of a
        worker's cost is its start-up (about a second), and the grader runs two per lab."""
        if self._worker is None and self._spare is None and not self._unavailable:
            self._spare = self._new_worker()

    def _new_worker(self) -> Worker:
        if self._before_start is not None:
            self._before_start()
        return Worker(self._config, self._isolation)

    def _start(self) -> Worker:
        """The running worker, started (and the lab loaded) if there is none."""
        if self._worker is not None:
            return self._worker
        started = time.monotonic()
        worker, self._spare = self._spare or self._new_worker(), None
        try:
            ready = worker.receive(STARTUP_LIMIT)
            if ready is None or ready.get("ready") != "trusted":
                raise LabUnavailable(self._startup_failure(worker, ready))
            self.walls = [*ready["walls"], worker.bounds()]
            Clock.excuse(time.monotonic() - started)
            self._worker = worker
            reply = self._wait(worker, max(Clock.for_a_call(), LAB_LOAD_FLOOR), f"importing {self._name}",
                               None)
        except EOFError:
            raise LabUnavailable(self._startup_failure(worker, None)) from None
        except LabProblem as problem:
            self._unavailable = self._unavailable or str(problem)
            self._stop()
            raise LabUnavailable(self._unavailable) from None
        refused = self._note_refusals(reply)
        if refused:  # an attempt is enough, even one the lab caught
            self._unavailable = one_line(f"importing {self._name}: the grader refused {judged.refusal(refused[0])}")
        elif "error" in reply:
            self._unavailable = one_line(f"the lab cannot be imported: {self._import_error(reply['error'])}")
        if self._unavailable:
            self._stop()
            raise LabUnavailable(self._unavailable)
        return worker

    def _files(self) -> tuple:
        """The names of the lab files the grader knows: where a lab's error may be said to be raised."""
        return tuple({Path(path).name for path in [self._config["file"], *self._config["files"].values()]})

    def _import_error(self, error: dict) -> str:
        """Why the lab cannot be imported, in the grader's words: a syntax error as the grader's own compiler
        reads the file (it runs nothing), any other error by its builtin kind and place."""
        if error.get("builtin") == "SyntaxError":
            found = syntax_error(Path(self._config["file"]))
            if found:
                return found
        return judged.lab_error(error, None, self._name, self._files()).replace("raised", "it raised", 1)

    def _startup_failure(self, worker: Worker, message) -> str:
        """Why a worker never got ready; the grader's own fault, so its log is kept in the reason."""
        worker.stop()
        return f"the grader could not start a worker for {self._name}: {message or 'no answer'}"

    def _wait(self, worker: Worker, seconds: float, what: str, function) -> dict:
        """The worker's reply within `seconds`, or the LabProblem that took its place."""
        try:
            reply = worker.receive(seconds)
        except EOFError:
            reason = f"{what}: {worker.how_it_ended()}"
            heard = self._heard(worker)
            self._stop()
            if heard:  # the hook reported a refusal, then the worker ended
                raise LabRefused(refusal_reason(what, heard[0])) from None
            raise LabCrashed(reason) from None
        except wire.WireError as error:
            self._heard(worker)
            self._stop()
            raise LabBadValue(f"{what}: {error}") from None
        if reply is not None:  # the refusals the hook reported, which the lab cannot take back
            reply["refused"] = list(dict.fromkeys([*self._heard(worker), *reply.get("refused", [])]))
        if reply is None:
            self._heard(worker)
            self._stop()
            if function is None:  # the lab's own import never ended
                self._unavailable = f"{what} timed out after {round(seconds):g} s (an endless loop?)"
                raise LabUnavailable(self._unavailable)
            if seconds < Clock.limit:  # the test, not this call, ran out of time
                raise LabTimeout(f"{what} not finished when the test ran out of its "
                                 f"{TEST_LIMITS * Clock.limit:g} s")
            reason = f"{what} timed out after {Clock.limit:g} s (an endless loop?)"
            self._hung[function] = f"it timed out in an earlier call: {reason}"
            raise LabTimeout(reason)
        return reply

    def _answer(self, reply: dict, what: str):
        """The call's value, or the exception that stands for how it ended."""
        refused = self._note_refusals(reply)
        if refused:
            raise LabRefused(refusal_reason(what, refused[0]))
        if "error" in reply:
            raise rebuilt_error(reply["error"], what, self._name, what.partition("(")[0], self._files())
        try:
            return wire.decode(reply.get("value"))
        except wire.WireError as error:  # a worker that sends what no worker sends is not trusted again
            self._stop()
            raise LabBadValue(f"{what}: {error}") from None

    def _note_refusals(self, reply: dict) -> list:
        refused = [safe_text(item) for item in reply.get("refused", [])]
        self.refusals += [item for item in refused if item not in self.refusals]
        return refused

    def _heard(self, worker: Worker) -> list:
        """What the worker's hook reported on its refusal line, kept for the lab's flags."""
        heard = worker.reported()
        self.refusals += [item for item in heard if item not in self.refusals]
        return heard

    def _stop(self) -> None:
        if self._worker is not None:
            self._worker.stop()
            self._worker = None

    def close(self) -> None:
        """Stop its workers, the spare too; a later call starts a fresh one."""
        self._stop()
        if self._spare is not None:
            self._spare.stop()
            self._spare = None


def rebuilt_error(error: dict, what: str, lab: str, function: str = "", files: tuple = ()) -> BaseException:
    """The lab's exception as the grader raises it: the same builtin type, with the call attached, and as its
    message the grader's own words (judged.lab_error); the lab's words, escaped, stay in `lab_words`."""
    message = judged.lab_error(error, function, lab, files)
    cls = getattr(builtins, str(error.get("builtin")), None)
    if not (isinstance(cls, type) and issubclass(cls, Exception)) or cls is Exception:
        cls = LabError
    try:
        exception = cls(message)
    except TypeError:  # a builtin whose constructor wants more (UnicodeDecodeError...)
        exception = LabError(message)
    exception.lab_call = what
    exception.lab_words = safe_text(error.get("message", ""), 200)
    return exception


def syntax_error(path: Path) -> str:
    """'SyntaxError: invalid syntax (rag9-semantic-chunking.py, line 1)' if the grader's own compiler finds
    one in the lab file, else ''. Compiling runs nothing, and the file is what the student handed in."""
    try:
        compile(path.read_bytes(), path.name, "exec", dont_inherit=True)
    except SyntaxError as error:
        return safe_text(f"SyntaxError: {error.msg} ({path.name}, line {error.lineno})")
    except (OSError, ValueError, MemoryError, RecursionError):
        return ""
    return ""


def one_line(text: str, limit: int = 300) -> str:
    """`text` on one line, cut to `limit` characters."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
