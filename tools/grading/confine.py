"""Where a worker runs, and which wall it got: a sandbox, a separate user, or a plain process.

The wall around student code is the operating system's, in layers, the
strongest this machine allows (ACADEMY_ISOLATION=sandbox|user|process asks
for one; asking for one the machine cannot give is an error):

- "sandbox" (Linux with bubblewrap, `bwrap`): new mount, PID, network, IPC,
  UTS and user namespaces; the worker runs as uid 65534 and sees, read-only,
  only the Python installation, the course's helper (academy_llm, labkit,
  datasets, assets), the worker's own two files, the earlier labs it is
  given and the student's lab folder; its one writable folder is its own
  scratch, and /tmp is empty. The judge, the reference, the tests, the other
  students and the other workers do not exist in there. Everything it starts
  lives in its PID namespace and dies with it (--die-with-parent).
- "user" (root, where namespaces are forbidden): the worker runs as the
  dedicated unprivileged user ACADEMY_GRADING_USER (default chunking-worker),
  on copies of what it needs in a folder of its own; the course folder must
  be closed to other users, which is checked, not assumed. The user has a
  process limit; its processes are killed with the worker's session, and
  one that leaves the session is a descendant grade_class kills (it is
  their subreaper).
- "process": a plain child process; only the worker's audit hook (worker.py)
  stands between the lab and the grader. Enough for a student grading their
  own labs; grade_class refuses it for a class unless told --allow-unsandboxed.

Every layer also keeps the audit hook, which refuses and reports attempts
(the report's flags); the layer is what holds when the hook is got round.

ACADEMY_GRADING_PORTABLE=1 runs a worker as it runs where POSIX is missing
(Windows): pipes on stdin/stdout, no preexec_fn, no resource limits, no
process groups. It is how that path is tested on Linux.
"""

import functools
import os
import shutil
import site
import subprocess
import sys
import tempfile
from pathlib import Path

SANDBOX, USER, PROCESS = "sandbox", "user", "process"
# The course's folders no lab may reach while it is graded: the reference, the judge, the tools, the history.
CLOSED_FOLDERS = ("solutions", "notebooks/solutions", "tests", "tools", "benchmarks", ".git", ".hypothesis")
LAYERS = (SANDBOX, USER, PROCESS)
SANDBOX_UID = 65534  # "nobody" inside the sandbox's user namespace
DEFAULT_USER = "chunking-worker"
USER_PROCESSES = 256  # RLIMIT_NPROC (threads count) of the dedicated user: a fork bomb stops here
SYSTEM_TREES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/ssl/certs/ca-certificates.crt")
# The installed packages that would answer a TODO: the grader's judges (markdown-it-py answers rag6's rules,
# bm25s rag11's weights, scipy rag8's bootstrap), another Markdown parser (mistune, which nbconvert brings), and
# the chunkers and BM25s of other libraries: the peers `chunking-labs compare` and the benchmarks measure
# (labkit.compare.PEER_PACKAGES, on a machine where they were installed) and their kin. No worker reads them.
HIDDEN_PACKAGES = ("markdown_it", "mdit_py_plugins", "mistune", "bm25s", "scipy", "langchain_text_splitters",
                   "langchain", "langchain_core", "llama_index", "semchunk", "chonkie", "semantic_text_splitter",
                   "rank_bm25")
DEVICES = ("/dev/null", "/dev/urandom")  # what a worker may open in /dev (it writes only to /dev/null)
TMP_SIZE = 16 << 20  # bytes: the sandbox's /tmp (Landlock keeps writes out of it, where the kernel has it)
SCRATCH_SIZE = 256 << 20  # bytes: the sandbox's scratch folder, a tmpfs that ends with it


class Unavailable(Exception):
    """The isolation asked for cannot be had on this machine; the message says why."""


def portable() -> bool:
    """True where the worker must do without POSIX's extras (Windows, or forced for a test)."""
    return os.name != "posix" or os.environ.get("ACADEMY_GRADING_PORTABLE") == "1"


@functools.cache
def bwrap_works() -> str:
    """'' if a bubblewrap sandbox can be made here, else why not (one line)."""
    if sys.platform != "linux":
        return f"bubblewrap is Linux only (this is {sys.platform})"
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return "bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)"
    probe = [bwrap, *namespace_options(), *system_binds(), "--", "/bin/true"]
    try:
        done = subprocess.run(probe, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError) as error:
        return f"bubblewrap did not run ({error})"
    if done.returncode != 0:
        why = " ".join(done.stderr.split())[:200] or f"exit status {done.returncode}"
        return f"bubblewrap cannot make namespaces here ({why})"
    return ""


@functools.cache
def worker_user() -> tuple[int, int] | str:
    """(uid, gid) of the dedicated worker user, created if need be, or why there is none."""
    if not hasattr(os, "geteuid") or os.geteuid() != 0:
        return "a separate user needs a grader running as root"
    import pwd  # POSIX only, as is a grader running as root

    name = os.environ.get("ACADEMY_GRADING_USER", DEFAULT_USER)
    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                              capture_output=True, text=True)
        if made.returncode != 0:
            return f"the user {name} could not be created: {made.stderr.strip()[:200]}"
        entry = pwd.getpwnam(name)
    if entry.pw_uid == 0:
        return f"the user {name} is root"
    return entry.pw_uid, entry.pw_gid


def user_can_run(closed: list[str]) -> str:
    """'' if the worker user runs Python and cannot reach any of `closed`, else why not."""
    found = worker_user()
    if isinstance(found, str):
        return found
    uid, gid = found
    probe = ("import os, sys\n"
             "reached = [p for p in sys.argv[1:] if os.access(p, os.R_OK) or os.access(p, os.X_OK)]\n"
             "sys.exit(', '.join(reached) or None)")
    try:
        done = subprocess.run([sys.executable, "-I", "-c", probe, *closed], capture_output=True, text=True,
                              user=uid, group=gid, extra_groups=[], timeout=60, cwd="/")
    except (OSError, subprocess.SubprocessError) as error:
        return f"the worker user cannot start Python ({error})"
    if done.returncode != 0:
        reached = done.stderr.strip().splitlines()[-1:] or ["?"]
        return (f"the worker user can reach {reached[0][:200]}; close the course folder to other users "
                f"(chmod o-rwx) or install Python where it can read it")
    return ""


def choose(closed: list[str]) -> str:
    """The isolation workers get here: the one asked for in ACADEMY_ISOLATION, else the strongest.

    `closed` are the folders a worker must not reach (the course's reference,
    tests, tools...), for the separate user's check.
    """
    asked = os.environ.get("ACADEMY_ISOLATION", "").strip().lower()
    if asked and asked not in LAYERS:
        raise Unavailable(f"ACADEMY_ISOLATION={asked!r}: choose among {', '.join(LAYERS)}")
    if asked == PROCESS:
        return PROCESS
    if asked in ("", SANDBOX):
        why = bwrap_works()
        if not why:
            return SANDBOX
        if asked == SANDBOX:
            raise Unavailable(f"ACADEMY_ISOLATION=sandbox, but {why}")
    why = user_can_run(closed) if not portable() else "the portable worker has no separate user"
    if not why:
        return USER
    if asked == USER:
        raise Unavailable(f"ACADEMY_ISOLATION=user, but {why}")
    return PROCESS


def why_not_sandboxed() -> str:
    """Why this machine gives no sandbox, for the message that refuses to grade a class without one."""
    return bwrap_works() or "ACADEMY_ISOLATION asks for less"


# ---- the commands ---------------------------------------------------------------------


def namespace_options() -> list[str]:
    """bubblewrap's walls: every namespace new, an unprivileged uid, nothing outliving the grader."""
    return ["--unshare-all", "--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--hostname", "worker",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL",
            "--proc", "/proc", "--dev", "/dev", "--size", str(TMP_SIZE), "--tmpfs", "/tmp", "--dir", "/var/tmp"]


def system_binds() -> list[str]:
    """The system's programs and libraries, read-only; merged-/usr links stay links."""
    options = []
    for path in SYSTEM_TREES:
        if os.path.islink(path):
            options += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            options += ["--ro-bind", path, path]
    for path in SYSTEM_FILES:
        if os.path.exists(path):
            options += ["--ro-bind", path, path]
    return options


def python_paths() -> list[str]:
    """The Python installation: its prefixes and its site-packages folders, never a project's folder
    (pytest puts the course's own folders on sys.path; they stay outside)."""
    prefixes = {sys.prefix, sys.base_prefix, sys.exec_prefix}
    sites = set(site.getsitepackages()) | {site.getusersitepackages()}
    paths = prefixes | {os.path.dirname(os.path.realpath(sys.executable))}
    paths |= {entry for entry in sys.path if entry in sites and os.path.isdir(entry)}
    return sorted(paths)


def installed_courses() -> list[str]:
    """A wheel of the course installed in this Python (site-packages/labkit/, with its reference labs
    and rag8's resampling in course/): workers import the grader's own copy, first on their path,
    and must not find this one. Not when the grader itself runs from it."""
    here = os.path.realpath(__file__)
    found = []
    for site_folder in python_paths():
        package = os.path.realpath(os.path.join(site_folder, "labkit"))
        if os.path.isdir(os.path.join(package, "course")) and not here.startswith(package + os.sep):
            found.append(package)
    return found


@functools.cache
def hidden_paths() -> tuple:
    """Where HIDDEN_PACKAGES and an installed course are: folders no worker may read."""
    import importlib.util

    found = installed_courses()
    for name in HIDDEN_PACKAGES:
        spec = importlib.util.find_spec(name)
        found += list(spec.submodule_search_locations or []) if spec else []
    return tuple(sorted(set(os.path.realpath(path) for path in found)))


def worker_reads(readable: tuple) -> list:
    """Everything a worker may read: the system's libraries, the Python installation (less the
    hidden packages), and `readable` (the course's helper, its code, the labs). Landlock holds it to
    this list in every layer (lockdown.py); the sandbox shows it nothing else.

    Not even its own /proc: pagemap says which pages of a mapped file are present, and fault-around
    maps every cached page near one that is read, so it tells a cached page from a cold one without
    reading it; status, statm and smaps count those pages, stat and sched the faults and waits that
    reading a cold page costs. The page cache is every worker's, and outlives each."""
    system = [path for path in SYSTEM_TREES + SYSTEM_FILES if os.path.exists(path)]
    return sorted(set(system) | set(python_paths()) | set(readable) | set(DEVICES))


def sandbox_command(argv: list[str], readable: tuple, scratch: str, environment: dict, empty: str) -> list[str]:
    """`argv` inside a fresh bubblewrap sandbox that reads only `readable` and writes only `scratch`,
    a tmpfs of its own; the hidden packages are covered by `empty`, an empty folder."""
    options = [shutil.which("bwrap"), *namespace_options(), *system_binds()]
    for path in sorted(set(python_paths()) | set(readable)):
        if os.path.exists(path):
            options += ["--ro-bind", path, path]
    for path in hidden_paths():
        options += ["--ro-bind", empty, path]
    options += ["--size", str(SCRATCH_SIZE), "--tmpfs", scratch, "--remount-ro", "/", "--chdir", scratch,
                "--clearenv"]
    for key, value in sorted(environment.items()):
        options += ["--setenv", key, value]
    return [*options, "--", *argv]


def share_with_user(scratch) -> bool:
    """Hand the scratch folder to the worker user, and nothing else: a tmpfs of SCRATCH_SIZE mounted
    there where the grader may mount one (True), else the folder itself, bounded only per file."""
    uid, gid = worker_user()
    options = f"size={SCRATCH_SIZE},mode=0700,uid={uid},gid={gid},nosuid,nodev,noexec"
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(scratch)],
                             capture_output=True).returncode == 0 if shutil.which("mount") else False
    os.chown(scratch, uid, gid)
    os.chmod(scratch, 0o700)
    return mounted


def unmount(folder) -> None:
    """Undo share_with_user's mount (lazily: nothing in it outlives the worker anyway)."""
    subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def scratch_root() -> Path:
    """A private folder for this grader's workers: only root (and the grader) can list it."""
    root = Path(tempfile.mkdtemp(prefix="grading-"))
    root.chmod(0o711)  # the worker user may pass through to its own scratch, not list the others
    return root


# ---- the kernel's own bounds on one worker: a cgroup ------------------------------------

WORKER_PIDS = 64  # processes and threads of one worker, bubblewrap's own among them
WORKER_MEMORY = 5 << 30  # bytes: the worker's memory, its tmpfs files and page cache included
LIMITS = {"pids": ("pids.max", WORKER_PIDS), "memory": ("memory.limit_in_bytes", WORKER_MEMORY)}  # cgroup v1
LIMITS_V2 = {"pids": ("pids.max", WORKER_PIDS), "memory": ("memory.max", WORKER_MEMORY)}
CGROUPS = Path("/sys/fs/cgroup")


def own_cgroups() -> dict:
    """{controller: this process's cgroup folder} for the pids and memory controllers, or {} if there are
    none it may write. Version 1 mounts each controller apart; version 2 has one tree, where a folder may
    hold a child's controllers only if the grader may enable them there."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return {}
    found = {}
    for line in lines:
        _, controllers, path = line.split(":", 2)
        for controller in set(controllers.split(",")) & set(LIMITS):
            folder = CGROUPS / controller / path.lstrip("/")
            if os.access(folder, os.W_OK):
                found[controller] = folder
        if controllers == "" and (CGROUPS / "cgroup.controllers").exists() and not found:
            folder = CGROUPS / path.lstrip("/")
            try:
                (folder / "cgroup.subtree_control").write_text("+pids +memory")
            except OSError:
                continue
            found = {"v2": folder}
    return found


class Cgroup:
    """A worker's own cgroup: at most WORKER_PIDS processes and threads, WORKER_MEMORY of memory.

    The grader makes one per worker where it may (as root, with the cgroup
    folders writable), puts the worker in it before the worker runs a line
    (`enter`, in the child), and at the end kills whatever is left in it and
    removes it. Elsewhere `folders` is empty and `why` says so.
    """

    def __init__(self, name: str):
        self.folders, self.why = [], ""
        found = own_cgroups() if hasattr(os, "geteuid") and os.geteuid() == 0 else {}
        if not found:
            self.why = "no cgroup (the grader is not root, or may not write the cgroup folders)"
            return
        limits = LIMITS_V2 if "v2" in found else LIMITS
        sweep_stale_cgroups()
        try:
            for controller, parent in found.items():
                folder = parent / name
                folder.mkdir()
                self.folders.append(folder)
                for key, (file, value) in limits.items():
                    if (folder / file).exists():
                        (folder / file).write_text(str(value))
        except OSError as error:
            self.remove()
            self.folders, self.why = [], f"no cgroup ({error.strerror or error})"

    def enter(self) -> None:
        """In the worker's child process, before it runs anything: move it into every folder."""
        for folder in self.folders:
            (folder / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        """Kill every process still in the cgroup, then remove its folders."""
        for folder in self.folders:
            empty_and_remove(folder)


def empty_and_remove(folder: Path) -> None:
    """Kill every process in the cgroup `folder` until none is left, then remove it."""
    import signal
    import time

    for _ in range(50):
        try:
            pids = (folder / "cgroup.procs").read_text().split()
        except OSError:
            return
        for pid in pids:
            try:
                os.kill(int(pid), signal.SIGKILL)
            except OSError:
                pass
        try:
            folder.rmdir()
            return
        except OSError:
            time.sleep(0.02)


def remove_cgroups_of(grader: int) -> None:
    """Kill what is left in the cgroups of a grader's workers (named by its pid, remote.Worker), and
    remove them: a grader killed outright never removed its own."""
    for parent in own_cgroups().values():
        for folder in parent.glob(f"chunking-{grader}-*"):
            empty_and_remove(folder)


@functools.cache
def sweep_stale_cgroups() -> None:
    """Once per grader: remove the cgroups of graders that are gone (killed before they removed them)."""
    for parent in own_cgroups().values():
        for folder in parent.glob("chunking-*-*"):
            grader = folder.name.split("-")[1]
            if grader.isdigit() and not os.path.exists(f"/proc/{grader}"):
                empty_and_remove(folder)
