"""The red team's students: one per attack, each handing in the course's stubs with attack code after them.

An attack's lab file is the stub from labs/ (which, honestly, earns nothing), a line `REDTEAM = {...}`
(the harness's token and loopback port), kit.py (what the attacks share), the attack's module from this
folder (its `from kit import` lines dropped: they are there for the linter) and `attack(globals())`. So any
point such a lab earns, its attack won. A few attacks are submissions rather than code: links and a zip.
"""

import re
import shutil
import zipfile
from pathlib import Path
from typing import Callable, NamedTuple

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
SOLUTIONS = ROOT / "solutions"
LINK = 0o120777 << 16  # a zip member's external attributes that make it a symbolic link


class Attack(NamedTuple):
    """A student of the red team: what it tries, in one line, and the labs it hands in."""

    student: str
    what: str
    labs: tuple  # (lab, module of this folder whose attack() runs in that lab, or None when `submit` makes it)
    submit: Callable | None = None  # submit(class_folder, student): a submission that is not lab files
    accomplice: bool = False  # hands in the reference with the attack after it: the classmate a cheat needs


def lab_file(lab: str) -> str:
    """"rag4-chunking.py": the lab's file name, as labs/ has it."""
    return next((ROOT / "labs").glob(f"{lab}-*.py")).name


def lab_source(lab: str, module: str, settings: dict, base: Path | None = None) -> str:
    """The stub of `lab` (or the lab file `base`) with the kit and the attack `module` after it, ready to hand
    in. `module:role` hands the attack a role (settings["role"]), for attacks that come in parts."""
    module, _, role = module.partition(":")
    settings = dict(settings, role=role) if role else settings
    parts = [(base or ROOT / "labs" / lab_file(lab)).read_text(encoding="utf-8"), f"REDTEAM = {settings!r}"]
    for name in ("kit", module):
        source = (HERE / f"{name}.py").read_text(encoding="utf-8")
        parts.append(re.sub(r"^from kit import .*\n", "", source, flags=re.M))
    return "\n\n".join(parts + ["attack(globals())\n"])


BOARD_FILES = ("/usr/lib/*/libLLVM*.so*", "/usr/lib/*/*.a", "/usr/lib/*/libicudata.so*", "/usr/lib/*/*.so*")


def cold_regions(pages: int, taken: set) -> list:
    """[[file, first page, count], ...]: runs of pages, each 16-aligned, a multiple of 16 long and none of them
    in the page cache now, in big system files every worker may read, `pages` in all: where the page-cache
    attacks (page_cache.py) write, on a machine where such pages are cold. Found on the host, with mincore,
    by the harness; [] if there are not enough. `taken` (file, page) are left to other boards, and grow."""
    import ctypes
    import glob
    import mmap
    import os

    libc = ctypes.CDLL(None, use_errno=True)
    files = sorted({os.path.realpath(path) for pattern in BOARD_FILES for path in glob.glob(pattern)
                    if os.path.isfile(path)}, key=os.path.getsize, reverse=True)
    found, wanted = [], pages
    for path in files[:20]:
        size = os.path.getsize(path) // mmap.PAGESIZE
        with open(path, "rb") as file:
            area = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_COPY)
        resident = (ctypes.c_ubyte * size)()
        failed = libc.mincore(ctypes.c_void_p(ctypes.addressof(ctypes.c_char.from_buffer(area))),
                              ctypes.c_size_t(size * mmap.PAGESIZE), resident)
        area.close()
        if failed:
            return []
        cold = [not resident[page] & 1 and (path, page) not in taken for page in range(size)]
        for first in range(16, size - 16, 16):
            if wanted > 0 and all(cold[first:first + 16]):
                if found and found[-1][0] == path and found[-1][1] + found[-1][2] == first:
                    found[-1][2] += 16
                else:
                    found.append([path, first, 16])
                wanted -= 16
        if wanted <= 0:
            break
    if wanted > 0:
        return []
    taken.update((path, first + page) for path, first, count in found for page in range(count))
    return found


BOARD_PAGES = {"reader": 3200, "relay": 6848}  # at least page_cache.pages_for of each board's bits


def cold_boards() -> dict:
    """{board: its cold regions}: for each of page_cache.py's boards, none overlapping."""
    found, taken = {}, set()
    for name, pages in BOARD_PAGES.items():
        regions = cold_regions(pages, taken)
        if regions:
            found[name] = regions
    return found


def link_file(folder: Path, student: str) -> None:
    (folder / student).mkdir()
    (folder / student / lab_file("rag4")).symlink_to(SOLUTIONS / lab_file("rag4"))


def link_folder(folder: Path, student: str) -> None:
    (folder / student).symlink_to(SOLUTIONS, target_is_directory=True)


def link_zip(folder: Path, student: str, notes: bool = True) -> None:
    """A zip whose rag4 is a link to the reference; with `notes`, a plain file beside it."""
    with zipfile.ZipFile(folder / f"{student}.zip", "w") as archive:
        if notes:
            archive.writestr("labs/notes.txt", "my labs\n")
        member = zipfile.ZipInfo(f"labs/{lab_file('rag4')}")
        member.external_attr = LINK
        archive.writestr(member, str(SOLUTIONS / lab_file("rag4")))


HONEST = ("a-honest", "z-honest")  # hand in correct code: the first graded beside the saboteur, the other after it
# Correct code written apart from the reference (tests/independent/): the first honest student hands in all of
# these labs, the class form's one whole grading of correct code (tests/test_independent.py grades the other
# folder in the folder form); the second the reference's rag4 alone, the lab the saboteur writes its stub over.
WRITTEN_APART = ROOT / "tests" / "independent" / "functional"


def honest_files(student: str) -> list[Path]:
    """The lab files `student` hands in."""
    if student == HONEST[0]:
        return sorted(WRITTEN_APART.glob("rag*-*.py"))
    return [SOLUTIONS / lab_file("rag4")]
SABOTEUR = Attack("a-saboteur", "writes the stub over its classmates' staged and submitted lab files",
                  (("rag4", "saboteur"),))
ATTACKS = (
    Attack("hook-breaker", "turns the audit hook off from inside, then loads solutions/", (("rag4", "hook_breaker"),)),
    Attack("daemon", "leaves a process of its own session that rewrites the gradebook after grade_class returns",
           (("rag4", "daemon"),)),
    Attack("traveller", "carries the reference rag4 given to its rag10's worker to its rag4, in files",
           (("rag10", "traveller"), ("rag4", "traveller"))),
    Attack("leftovers", "uses a copy of the reference that earlier test runs left in /tmp", (("rag4", "leftovers"),)),
    Attack("proc-reader", "reads the grader's memory and environment through /proc, shows what is hidden",
           (("rag4", "proc_reader"),)),
    Attack("forger", "forges replies in the worker's pipes: a 1.2 GB dtype, deep nesting, a false count, out of step",
           (("rag4", "forger"),)),
    Attack("host", "reads the seed and the course's caches; raises its priority and limits; signals; calls loopback",
           (("rag4", "host"),)),
    Attack("recorder", "records the hidden tests' inputs wherever it can and shows them in public failures",
           (("rag4", "recorder"),)),
    Attack("introspection", "reaches CONFIG by gc, __main__ and frames; reads and imports what it names",
           (("rag4", "introspection"),)),
    Attack("link-file", "hands in a symbolic link to the course's solutions file as its rag4", (("rag4", None),),
           link_file),
    Attack("link-folder", "hands in a student folder that is a symbolic link to the course's solutions/",
           (("rag4", None), ("rag10", None)), link_folder),
    Attack("link-zip", "hands in a zip whose rag4 is a symbolic link to the course's solutions file",
           (("rag4", None),), link_zip),
    Attack("scratch-link", "links its scratch folder to the solutions file and imports through the link",
           (("rag4", "scratch_link"),)),
    Attack("shm-fifo", "carries its rag10's given reference rag4 to its rag4 by shared memory and a FIFO",
           (("rag10", "shm_fifo"), ("rag4", "shm_fifo"))),
    Attack("dir-fd", "opens solutions/ relative to the course's folder or an open one (dir_fd), past the wall",
           (("rag4", "dir_fd"),)),
    Attack("remount", "writes beside its own lab file, remounting a read-only bind writable if need be",
           (("rag4", "remount"),)),
    Attack("ctypes", "opens the solutions file by a raw syscall through ctypes", (("rag4", "ctypes_syscall"),)),
    Attack("other-clones", "reads the reference from another checkout of the course on the same machine",
           (("rag4", "other_clones"),)),
    Attack("escape-printer", "answers with terminal escapes, OSC 0 and 52, bidi controls, NUL and 100,000 "
           "characters, to forge a grade on the grader's terminal", (("rag4", "escape_printer"),)),
    Attack("hook-silencer", "cuts every line the grader might hear on, then silences the audit hook, then reads "
           "solutions/", (("rag4", "hook_silencer"),)),
    Attack("page-cache-reader", "its hidden tests' worker writes their inputs in the page cache of a cold system "
           "file; its public tests' worker reads them back (major faults, pagemap) and fails with them",
           (("rag4", "page_cache:reader"),)),
    Attack("relay-a-sender", "a classmate's working rag4 that writes each answer in the page cache",
           (("rag4", "page_cache:sender"),), accomplice=True),
    Attack("relay-b-receiver", "stubs that read the classmate's answers back from the page cache",
           (("rag4", "page_cache:receiver"),)),
)


def write_class(folder: Path, attacks, honest, settings: dict) -> None:
    """The submissions: a folder of the reference per honest student, and each attack's own."""
    folder.mkdir(parents=True)
    for student in honest:
        (folder / student).mkdir()
        for path in honest_files(student):
            shutil.copy(path, folder / student)
    for attack in attacks:
        if attack.submit:
            attack.submit(folder, attack.student)
            continue
        (folder / attack.student).mkdir()
        for lab, module in attack.labs:
            base = SOLUTIONS / lab_file(lab) if attack.accomplice else None
            (folder / attack.student / lab_file(lab)).write_text(lab_source(lab, module, settings, base),
                                                                 encoding="utf-8")
