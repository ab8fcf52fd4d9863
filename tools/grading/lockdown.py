"""What a worker asks the Linux kernel to hold it to, before a student's lab runs.

Two walls the worker puts up on itself (worker.py), in every layer
(sandbox, separate user, plain process) on Linux. Once up, no code in the
process can take them down, not even code that gets round the audit hook:

- Landlock (files): the worker may read only what it was given (the Python
  installation, the course's helper, its own code, the earlier labs, the
  student's folder) and write only in its scratch folder. The grader's
  judges (HIDDEN_PACKAGES) are not readable, though they sit in the same
  site-packages. TCP is closed, and signals and abstract Unix sockets reach
  no process outside the worker.
- seccomp (system calls): the calls that would let two workers share
  something, or a worker outgrow its limits, fail with EPERM. No new
  process or program; no file locks, leases or watches (a lock on a file
  every worker reads is a channel between them); no page-cache probes
  (mincore, cachestat, fadvise, readahead, a read that must not wait,
  madvise's cold and pageout, getrusage's major faults, sysinfo, the NUMA
  queries of a page); no futex but a private one; no device nodes; no
  System V or POSIX IPC, keyrings or sockets; no namespaces, mounts,
  tracing, io_uring, BPF, new limits or priorities; signals only to itself;
  the audit hook's refusal line (worker.py) never closed or replaced.
  Threads may still be started (the kernel's pids limit bounds them,
  confine.py).

Both are plain system calls made with ctypes, so the worker needs no
package for them. Where the kernel lacks one (Landlock came in Linux 5.13),
`put_up` says so, and the report names the walls each worker got.
"""

import ctypes
import errno
import os
import platform
import struct
import sys

# ---- Landlock ------------------------------------------------------------------------

LANDLOCK_CREATE_RULESET, LANDLOCK_ADD_RULE, LANDLOCK_RESTRICT_SELF = 444, 445, 446  # every architecture
PR_SET_NO_NEW_PRIVS = 38
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
MAKE_CHAR, MAKE_BLOCK = 1 << 6, 1 << 11
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV  # the rights a rule on a file may hold
READ = READ_FILE | READ_DIR


def landlock_rights(abi: int) -> int:
    """Every file-system right the kernel's Landlock ABI knows: all are denied unless a rule grants them."""
    rights = (1 << 13) - 1  # ABI 1: execute ... make_sym
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def _libc():
    return ctypes.CDLL(None, use_errno=True)


def _fail(what: str):
    code = ctypes.get_errno()
    raise OSError(code, f"{what}: {os.strerror(code)}")


def landlock_abi() -> int:
    """The kernel's Landlock ABI version, 0 where it has none."""
    version = _libc().syscall(LANDLOCK_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(1))
    return max(version, 0)


def grant(libc, ruleset: int, path: str, rights: int, hidden: tuple) -> None:
    """Let the worker use `rights` on `path` and what lies beneath it, except the `hidden` paths.

    A Landlock rule covers a whole tree, so a tree holding a hidden path is
    granted its listing only, and each of its entries is granted in turn.
    """
    path = os.path.realpath(path)  # a link (a venv's lib64) would carry a rule to the tree it points at
    if not os.path.exists(path):
        return
    inside = [item for item in hidden if item == path or item.startswith(path.rstrip("/") + "/")]
    if path in inside:
        return
    if inside and os.path.isdir(path):
        add_rule(libc, ruleset, path, rights & READ_DIR)
        for name in sorted(os.listdir(path)):
            grant(libc, ruleset, os.path.join(path, name), rights, tuple(inside))
        return
    add_rule(libc, ruleset, path, rights if os.path.isdir(path) else rights & FILE_RIGHTS)


def add_rule(libc, ruleset: int, path: str, rights: int) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rule = struct.pack("=Qi", rights, fd)  # struct landlock_path_beneath_attr, packed
        if libc.syscall(LANDLOCK_ADD_RULE, ruleset, 1, rule, 0) != 0:
            _fail(f"Landlock rule for {path}")
    finally:
        os.close(fd)


def landlock(readable: list, writable: list, hidden: list) -> str:
    """Restrict this process to reading `readable` and writing `writable`; its name for the report."""
    libc = _libc()
    abi = landlock_abi()
    if abi < 1:
        raise OSError(errno.ENOSYS, "the kernel has no Landlock")
    handled = landlock_rights(abi)
    fields = [handled]
    if abi >= 4:
        fields.append(0b11)  # TCP bind and connect, neither granted
    if abi >= 6:
        fields.append(0b11)  # abstract Unix sockets and signals: only within the worker
    attr = struct.pack(f"={len(fields)}Q", *fields)
    ruleset = libc.syscall(LANDLOCK_CREATE_RULESET, attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        _fail("Landlock ruleset")
    try:
        hidden = tuple(os.path.realpath(path) for path in hidden)
        for path in readable:
            grant(libc, ruleset, path, READ, hidden)
        for path in writable:  # everything but device nodes: a root worker's /dev/mem in its scratch
            grant(libc, ruleset, path, handled & ~(MAKE_CHAR | MAKE_BLOCK), ())
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            _fail("no_new_privs")
        if libc.syscall(LANDLOCK_RESTRICT_SELF, ruleset, 0) != 0:
            _fail("Landlock")
    finally:
        os.close(ruleset)
    return f"landlock {abi}"


# ---- seccomp -------------------------------------------------------------------------

ALLOW, KILL = 0x7FFF0000, 0x80000000
LD, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06  # BPF_LD|W|ABS, BPF_JMP|JEQ|K, JGE, JSET, BPF_RET|K
CLONE_THREAD = 0x00010000
# F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE, F_GETLEASE, F_NOTIFY
LOCK_COMMANDS = (5, 6, 7, 36, 37, 38, 1024, 1025, 1026)

# (audit arch, seccomp's own call number, x32's bit or 0, {name: number}), from the kernel's tables
ARCHITECTURES = {
    "x86_64": (0xC000003E, 317, 0x40000000, {
        "fork": 57, "vfork": 58, "execve": 59, "execveat": 322, "clone": 56, "clone3": 435, "flock": 73,
        "fcntl": 72, "inotify_init": 253, "inotify_init1": 294, "inotify_add_watch": 254, "fanotify_init": 300,
        "fanotify_mark": 301, "mincore": 27, "cachestat": 451, "shmget": 29, "shmat": 30, "shmctl": 31,
        "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220, "msgget": 68, "msgsnd": 69,
        "msgrcv": 70, "msgctl": 71, "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242,
        "mq_timedreceive": 243, "mq_notify": 244, "mq_getsetattr": 245, "socket": 41, "add_key": 248,
        "request_key": 249, "keyctl": 250, "unshare": 272, "setns": 308, "mount": 165, "umount2": 166,
        "pivot_root": 155, "chroot": 161, "mount_setattr": 442, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "ptrace": 101, "process_vm_readv": 310,
        "process_vm_writev": 311, "kcmp": 312, "perf_event_open": 298, "bpf": 321, "userfaultfd": 323,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "pidfd_open": 434,
        "pidfd_getfd": 438, "pidfd_send_signal": 424, "process_madvise": 440, "kill": 62, "tkill": 200,
        "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297, "setrlimit": 160, "prlimit64": 302,
        "name_to_handle_at": 303, "open_by_handle_at": 304, "acct": 163, "swapon": 167, "swapoff": 168,
        "reboot": 169, "kexec_load": 246, "kexec_file_load": 320, "init_module": 175, "finit_module": 313,
        "delete_module": 176, "iopl": 172, "ioperm": 173, "quotactl": 179, "syslog": 103, "setuid": 105,
        "setgid": 106, "setreuid": 113, "setregid": 114, "setresuid": 117, "setresgid": 119, "setgroups": 116,
        "setfsuid": 122, "setfsgid": 123, "capset": 126, "personality": 135, "lookup_dcookie": 212,
        "vhangup": 153, "settimeofday": 164, "clock_settime": 227, "adjtimex": 159, "clock_adjtime": 305,
        "sethostname": 170, "setdomainname": 171, "mknod": 133, "mknodat": 259, "futex": 202,
        "futex_waitv": 449, "futex_wake": 454, "futex_wait": 455, "futex_requeue": 456, "fadvise64": 221,
        "readahead": 187, "preadv2": 327, "pwritev2": 328, "setpriority": 141, "sched_setscheduler": 144,
        "sched_setparam": 142, "sched_setattr": 314, "ioprio_set": 251, "getrusage": 98, "sysinfo": 99,
        "move_pages": 279, "migrate_pages": 256, "get_mempolicy": 239, "madvise": 28, "close": 3, "dup2": 33,
        "dup3": 292, "close_range": 436}),
    "aarch64": (0xC00000B7, 277, 0, {
        "execve": 221, "execveat": 281, "clone": 220, "clone3": 435, "flock": 32, "fcntl": 25,
        "inotify_init1": 26, "inotify_add_watch": 27, "fanotify_init": 262, "fanotify_mark": 263,
        "mincore": 232, "cachestat": 451, "shmget": 194, "shmat": 196, "shmctl": 195, "shmdt": 197,
        "semget": 190, "semop": 193, "semctl": 191, "semtimedop": 192, "msgget": 186, "msgsnd": 189,
        "msgrcv": 188, "msgctl": 187, "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182,
        "mq_timedreceive": 183, "mq_notify": 184, "mq_getsetattr": 185, "socket": 198, "add_key": 217,
        "request_key": 218, "keyctl": 219, "unshare": 97, "setns": 268, "mount": 40, "umount2": 39,
        "pivot_root": 41, "chroot": 51, "mount_setattr": 442, "open_tree": 428, "move_mount": 429,
        "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "ptrace": 117, "process_vm_readv": 270,
        "process_vm_writev": 271, "kcmp": 272, "perf_event_open": 241, "bpf": 280, "userfaultfd": 282,
        "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "pidfd_open": 434,
        "pidfd_getfd": 438, "pidfd_send_signal": 424, "process_madvise": 440, "kill": 129, "tkill": 130,
        "tgkill": 131, "rt_sigqueueinfo": 138, "rt_tgsigqueueinfo": 240, "setrlimit": 164, "prlimit64": 261,
        "name_to_handle_at": 264, "open_by_handle_at": 265, "acct": 89, "swapon": 224, "swapoff": 225,
        "reboot": 142, "kexec_load": 104, "kexec_file_load": 294, "init_module": 105, "finit_module": 273,
        "delete_module": 106, "quotactl": 60, "syslog": 116, "setuid": 146, "setgid": 144, "setreuid": 145,
        "setregid": 143, "setresuid": 147, "setresgid": 149, "setgroups": 159, "setfsuid": 151,
        "setfsgid": 152, "capset": 91, "personality": 92, "lookup_dcookie": 18, "vhangup": 58,
        "settimeofday": 170, "clock_settime": 112, "adjtimex": 171, "clock_adjtime": 266, "sethostname": 161,
        "setdomainname": 162, "mknodat": 33, "futex": 98, "futex_waitv": 449, "futex_wake": 454, "futex_wait": 455,
        "futex_requeue": 456, "fadvise64": 223, "readahead": 213, "preadv2": 286, "pwritev2": 287,
        "setpriority": 140, "sched_setscheduler": 119, "sched_setparam": 118, "sched_setattr": 274,
        "ioprio_set": 30, "getrusage": 165, "sysinfo": 179, "move_pages": 239, "migrate_pages": 238,
        "get_mempolicy": 236, "madvise": 233, "close": 57, "dup3": 24, "close_range": 436}),
}
# Calls judged by an argument: a thread may be started, a descriptor's flags read and set, a signal sent
# to itself, a limit read, memory advised (but not to leave the page cache), any descriptor closed or
# replaced but the grader's refusal line.
BY_ARGUMENT = ("clone", "clone3", "fcntl", "kill", "tgkill", "rt_sigqueueinfo", "rt_tgsigqueueinfo", "prlimit64",
               "futex", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue", "madvise", "close", "dup2",
               "dup3", "close_range")
FUTEX_PRIVATE = 128  # FUTEX_PRIVATE_FLAG: a futex of this process's memory alone, as the C library's locks are
JGT = 0x25  # BPF_JMP|JGT|K
# madvise's MADV_COLD and MADV_PAGEOUT push a file's pages out of the page cache: a bit another worker reads.
PAGE_CACHE_ADVICE = (20, 21)


def instruction(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def argument(index: int, high: bool = False) -> bytes:
    """Load the low (or high) 32 bits of the call's argument `index` (struct seccomp_data)."""
    return instruction(LD, 16 + 8 * index + (4 if high else 0))


def refused(code: int = errno.EPERM) -> bytes:
    return instruction(RET, 0x00050000 | code)  # SECCOMP_RET_ERRNO


def judged_by_argument(name: str, own_pid: int, guarded: int | None) -> list:
    """The instructions after `name`'s number matched; each path ends in a return.

    `guarded` is the descriptor of the grader's refusal line (worker.py), which no call may close or
    replace; None where the worker has none.
    """
    allow = instruction(RET, ALLOW)
    if name in ("close", "dup2", "dup3", "close_range"):
        if guarded is None:
            return [allow]
        if name == "close_range":  # close_range(first, last): refused if first <= guarded <= last
            return [argument(0), instruction(JGT, guarded, 2, 0), argument(1), instruction(JGE, guarded, 1, 0),
                    allow, refused()]
        return [argument(0 if name == "close" else 1), instruction(JEQ, guarded, 0, 1), refused(), allow]
    if name == "madvise":
        checks = [step for advice in PAGE_CACHE_ADVICE for step in (instruction(JEQ, advice, 0, 1), refused())]
        return [argument(2), *checks, allow]
    if name == "clone":  # a thread shares this process's memory; anything else is a new process
        return [argument(0), instruction(JSET, CLONE_THREAD, 0, 1), allow, refused()]
    if name in ("clone3", "futex_waitv", "futex_wake", "futex_wait", "futex_requeue"):
        return [refused(errno.ENOSYS)]  # flags a filter cannot read, or calls the C library does without
    if name == "futex":  # a shared futex, on a file two workers map, would signal from one to the other
        return [argument(1), instruction(JSET, FUTEX_PRIVATE, 0, 1), allow, refused()]
    if name == "fcntl":
        checks = [step for command in LOCK_COMMANDS for step in (instruction(JEQ, command, 0, 1), refused())]
        return [argument(1), *checks, allow]
    if name == "prlimit64":  # reading a limit passes no new one
        return [argument(2), instruction(JEQ, 0, 0, 3), argument(2, high=True), instruction(JEQ, 0, 0, 1),
                allow, refused()]
    return [argument(0), instruction(JEQ, own_pid, 0, 1), allow, refused()]  # signals: to itself only


def seccomp_program(machine: str, own_pid: int, guarded: int | None = None) -> bytes:
    """The filter, as classic BPF: a foreign architecture is killed, the calls above refused, the rest allowed."""
    audit_arch, _, x32, numbers = ARCHITECTURES[machine]
    program = [instruction(LD, 4), instruction(JEQ, audit_arch, 1, 0), instruction(RET, KILL), instruction(LD, 0)]
    if x32:
        program += [instruction(JGE, x32, 0, 1), refused()]
    for name, number in numbers.items():
        body = judged_by_argument(name, own_pid, guarded) if name in BY_ARGUMENT else [refused()]
        program += [instruction(JEQ, number, 0, len(body)), *body]
    program.append(instruction(RET, ALLOW))
    return b"".join(program)


def seccomp(guarded: int | None = None) -> str:
    """Install the filter on every thread of this process; its name for the report."""
    machine = platform.machine()
    if machine not in ARCHITECTURES:
        raise OSError(errno.ENOSYS, f"no seccomp filter for {machine}")
    program = seccomp_program(machine, os.getpid(), guarded)
    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = struct.pack("@HP", len(program) // 8, ctypes.addressof(buffer))  # struct sock_fprog
    libc = _libc()
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        _fail("no_new_privs")
    set_mode_filter, tsync = 1, 1
    if libc.syscall(ARCHITECTURES[machine][1], set_mode_filter, tsync, fprog) != 0:
        _fail("seccomp")
    return "seccomp"


def threads() -> int:
    """How many threads this process has: Landlock holds the calling thread and those it starts."""
    return len(os.listdir("/proc/self/task"))


def put_up(readable: list, writable: list, hidden: list, guarded: int | None = None) -> list:
    """Both walls, where this kernel has them: the names of those put up, and why any is missing.

    Landlock holds only the thread that asks and the threads it starts later,
    so a worker with another thread running is refused outright.
    """
    if sys.platform != "linux":
        return []
    if threads() != 1:
        raise RuntimeError(f"the worker has {threads()} threads when its walls go up; it must have one")
    walls = []
    for name, wall in (("landlock", lambda: landlock(readable, writable, hidden)),
                       ("seccomp", lambda: seccomp(guarded))):
        try:
            walls.append(wall())
        except OSError as error:
            walls.append(f"no {name} ({error.strerror or error})")
    return walls
