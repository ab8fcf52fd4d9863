"""Attack (rag4, two workers at once): a sender and a receiver, graded side by side, look for any object both
can reach. The sender turns the audit hook off (kit.break_the_wall), then holds each channel open: a lock,
a lease-free read lock and an open-file lock on a file every worker reads, files in /tmp and /dev/shm, an
abstract Unix socket. The receiver, hook off too, says which it can see, and which of the kernel's means of
watching others it could use at all (inotify, mincore, System V queues, keys, signals to another process).
test_walls.py drives the two through remote.RemoteLab; each channel seen is a bit that crossed."""

import ctypes
import fcntl
import mmap
import os
import socket
import struct

from kit import TOKEN, break_the_wall, quietly, succeeds

SHARED = os.path.realpath(ctypes.__file__)  # a file of the Python installation: every worker reads it
NAMES = {"tmp": f"/tmp/relay-{TOKEN}", "shm": f"relay-{TOKEN}", "socket": f"\0relay-{TOKEN}"}
held: list = []  # what the sender keeps open while its worker lives


def record_lock(kind: int, command: int, fd: int):
    """fcntl's struct flock for the whole file: a request (F_SETLK), or the query of one (F_GETLK)."""
    return fcntl.fcntl(fd, command, struct.pack("hhqqi", kind, 0, 0, 0, 0))


def send() -> dict:
    """Hold every channel; {channel: True if it could be held}."""
    done = {}
    fd = quietly(os.open, SHARED, os.O_RDONLY)
    if fd is not None:
        held.append(fd)
        done["flock"] = succeeds(fcntl.flock, fd, fcntl.LOCK_SH)
        done["posix-lock"] = succeeds(record_lock, fcntl.F_RDLCK, fcntl.F_SETLK, fd)
        ofd = quietly(os.open, SHARED, os.O_RDONLY)
        if ofd is not None:
            held.append(ofd)
            done["ofd-lock"] = succeeds(record_lock, fcntl.F_RDLCK, 37, ofd)  # F_OFD_SETLK
    done["tmp"] = succeeds(lambda: open(NAMES["tmp"], "w").write("1"))
    try:
        import _posixshmem

        done["shm"] = quietly(_posixshmem.shm_open, "/" + NAMES["shm"], os.O_CREAT | os.O_RDWR, 0o644) is not None
    except ImportError:
        done["shm"] = False
    server = quietly(socket.socket, socket.AF_UNIX, socket.SOCK_STREAM)
    done["socket"] = server is not None and succeeds(server.bind, NAMES["socket"]) and succeeds(server.listen)
    held.append(server)
    return done


def syscall_works(number_x86_64: int, *args) -> bool:
    """True if the raw system call returns without an error (x86_64 numbers: the test's machine)."""
    libc = quietly(ctypes.CDLL, None, use_errno=True)
    return libc is not None and quietly(libc.syscall, number_x86_64, *args) not in (None, -1)


def held_by_another(function, *args) -> bool:
    """True if function(*args) failed because someone else holds the lock (not because it was refused)."""
    try:
        function(*args)
        return False
    except BlockingIOError:
        return True
    except OSError:
        return False


def receive() -> dict:
    """{channel: True if the sender's side of it is seen, or the means of watching works}."""
    seen = {}
    fd = quietly(os.open, SHARED, os.O_RDONLY)
    if fd is not None:
        seen["flock"] = held_by_another(fcntl.flock, fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        query = quietly(record_lock, fcntl.F_WRLCK, fcntl.F_GETLK, fd)
        seen["posix-lock"] = query is not None and struct.unpack("hhqqi", query)[0] != fcntl.F_UNLCK
        query = quietly(record_lock, fcntl.F_WRLCK, 36, fd)  # F_OFD_GETLK
        seen["ofd-lock"] = query is not None and struct.unpack("hhqqi", query)[0] != fcntl.F_UNLCK
        os.close(fd)
    seen["tmp"] = os.path.exists(NAMES["tmp"])
    seen["shm"] = os.path.exists("/dev/shm/" + NAMES["shm"])
    client = quietly(socket.socket, socket.AF_UNIX, socket.SOCK_STREAM)
    seen["socket"] = client is not None and succeeds(client.connect, NAMES["socket"])
    seen["inotify"] = syscall_works(294, 0)  # inotify_init1
    page = mmap.mmap(-1, mmap.PAGESIZE)
    address = ctypes.addressof(ctypes.c_char.from_buffer(page))
    seen["mincore"] = syscall_works(27, ctypes.c_void_p(address), mmap.PAGESIZE, ctypes.create_string_buffer(1))
    seen["sysv-queue"] = syscall_works(68, 0x52454C41, 0o1666)  # msgget(key, IPC_CREAT | 0666)
    seen["keyring"] = syscall_works(250, 0, -3, 0)  # keyctl(KEYCTL_GET_KEYRING_ID, KEY_SPEC_USER_KEYRING)
    seen["signal"] = os.getpid() != 1 and succeeds(os.kill, 1, 0)
    return seen


def word_windows(text, size, overlap=0):
    if not break_the_wall():
        return {"hook": "not broken"}
    return send() if text == "send" else receive()


def attack(lab: dict) -> None:
    lab["word_windows"] = word_windows
