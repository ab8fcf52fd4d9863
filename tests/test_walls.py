"""The kernel's walls around a worker (lockdown.py) and what a worker may load, each tried by a lab that
first turns the audit hook off (the red team's kit.break_the_wall), so that only the kernel stands in its way:

- two workers side by side share nothing: no lock, file, socket or means of watching the other;
- a worker reads only what it is given (not the grader's judges) and writes only its scratch, which is
  bounded, as the sandbox's /tmp is;
- a lab is compiled from its source: bytecode handed in beside it is never run;
- the audit hook refuses what is not on its allowlist (sqlite3's own file opening, say);
- a hidden test's worker has ended before a public test's worker starts;
- a worker makes no device node (a FIFO, a character or block device) in its scratch or /tmp.

Each runs in every layer this machine gives (the sandbox where bubblewrap works, and a plain process).

    python -m pytest -m heavy tests/test_walls.py
"""

import importlib._bootstrap_external as bytecode
import importlib.util
import os
import secrets
import shutil
import sys
from pathlib import Path

import confine
import pytest
import remote
from redteam.attacks import cold_boards, lab_source

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = [ROOT / name for name in confine.CLOSED_FOLDERS]
# Every layer; one this machine cannot give is skipped with the reason when its test is set up (a sandbox's
# absence fails in CI: conftest.require_sandbox), so that collecting these tests starts no process.
LAYERS = [confine.PROCESS, pytest.param(confine.SANDBOX, marks=pytest.mark.sandbox), confine.USER]
CHANNELS = ("flock", "posix-lock", "ofd-lock", "tmp", "shm", "socket", "inotify", "mincore", "sysv-queue",
            "keyring", "signal")

TOKEN = secrets.token_hex(4)  # names what the attacks leave, so that a run never meets an earlier one's
pytestmark = [pytest.mark.heavy, pytest.mark.skipif(sys.platform != "linux", reason="the walls are Linux's")]


@pytest.fixture(autouse=True)
def layer_available(request):
    """Skip a test of the separate user's layer where this machine cannot give it, saying why."""
    if getattr(request.node, "callspec", None) and request.node.callspec.params.get("isolation") == confine.USER:
        why = "the portable worker has no separate user" if confine.portable() else confine.user_can_run(
            list(map(str, FORBIDDEN)))
        if why:
            pytest.skip(f"no separate user's layer here: {why}")


def attack_lab(folder: Path, module: str, isolation: str, token: str = TOKEN, hook_off: bool = True
               ) -> remote.RemoteLab:
    """A rag4 made of the stub and the red team's `module`, ready to be called in a worker; with `hook_off`,
    its audit hook already turned off (kit.break_the_wall, whose one refusal the grader hears and fails)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rag4-chunking.py"
    path.write_text(lab_source("rag4", module, {"token": token, "port": 9}), encoding="utf-8")
    lab = remote.RemoteLab("rag4", path, {"rag4": path}, {}, FORBIDDEN, isolation)
    if hook_off:
        with pytest.raises(remote.LabRefused, match="refused os.kill"):
            lab.break_the_wall()
    return lab


def role_lab(folder: Path, module: str, isolation: str, token: str, base: Path | None = None) -> remote.RemoteLab:
    """A rag4 made of the stub (or `base`) and the red team's `module` (`module:role`), its hook left on."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rag4-chunking.py"
    settings = {"token": token, "port": 9, "boards": BOARDS.setdefault(token, cold_boards())}
    path.write_text(lab_source("rag4", module, settings, base), encoding="utf-8")
    return remote.RemoteLab("rag4", path, {"rag4": path}, {}, FORBIDDEN, isolation)


BOARDS: dict = {}  # token -> the cold regions its page-cache attacks write in


def plain_lab(folder: Path, source: str, isolation: str) -> remote.RemoteLab:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "rag4-chunking.py"
    path.write_text(source, encoding="utf-8")
    return remote.RemoteLab("rag4", path, {"rag4": path}, {}, FORBIDDEN, isolation)


@pytest.mark.parametrize("isolation", LAYERS)
def test_two_workers_side_by_side_share_nothing(tmp_path, isolation):
    sender = attack_lab(tmp_path / "sender", "relay", isolation)
    receiver = attack_lab(tmp_path / "receiver", "relay", isolation)
    try:
        held = sender.word_windows("send", 3)
        seen = receiver.word_windows("receive", 3)
    finally:
        sender.close()
        receiver.close()
    assert "hook" not in held and "hook" not in seen, "the relay could not turn the audit hook off"
    crossed = [channel for channel in CHANNELS if seen.get(channel)]
    assert crossed == [], f"{isolation}: what the sender held {held}, the receiver saw through {crossed}"


@pytest.mark.parametrize("isolation", LAYERS)
def test_a_worker_reads_no_judge_and_writes_only_its_bounded_scratch(tmp_path, isolation):
    lab = attack_lab(tmp_path / "reader", "reader", isolation)
    try:
        found = lab.word_windows(str(ROOT / "tests"), 3)
    finally:
        lab.close()
    assert "hook" not in found, "the reader could not turn the audit hook off"
    assert all(found[judge] != "imported" for judge in ("markdown_it", "bm25s", "scipy")), found
    assert found["tmp"] != "written" and found["course"] != "written", found
    assert not Path("/tmp/walls-left-behind").exists() and not (ROOT / "tests" / "walls-left-behind").exists()
    if isolation == confine.SANDBOX:
        assert found["scratch MB"] <= confine.SCRATCH_SIZE >> 20, found


def planted_bytecode(folder: Path) -> Path:
    """The stub of rag4, with a __pycache__ .pyc beside it compiled from the reference and stamped with
    the stub's own time and size, so that Python's cache check takes it for the stub's bytecode."""
    folder.mkdir(parents=True)
    stub = folder / "rag4-chunking.py"
    shutil.copy(ROOT / "labs" / "rag4-chunking.py", stub)
    code = compile((ROOT / "solutions" / "rag4-chunking.py").read_bytes(), str(stub), "exec")
    status = stub.stat()
    cached = Path(importlib.util.cache_from_source(str(stub)))
    cached.parent.mkdir()
    cached.write_bytes(bytecode._code_to_timestamp_pyc(code, status.st_mtime, status.st_size))
    return stub


@pytest.mark.parametrize("isolation", LAYERS)
def test_bytecode_handed_in_beside_a_lab_is_never_run(tmp_path, isolation):
    stub = planted_bytecode(tmp_path / "labs")
    lab = remote.RemoteLab("rag4", stub, {"rag4": stub}, {}, FORBIDDEN, isolation)
    try:
        with pytest.raises(NotImplementedError, match="TODO"):
            lab.word_windows("one two three four five", 3, 1)
    finally:
        lab.close()
    cached = Path(importlib.util.cache_from_source(str(stub)))
    assert sorted(stub.parent.rglob("*")) == sorted([stub, cached.parent, cached]), "bytecode was written"


SQLITE = '''
import sqlite3


def word_windows(text, size, overlap=0):
    sqlite3.connect(text).execute("create table planted (x)")
    return []
'''


@pytest.mark.parametrize("isolation", LAYERS)
def test_what_is_not_on_the_hooks_allowlist_is_refused(tmp_path, isolation):
    lab = plain_lab(tmp_path / "sqlite", SQLITE, isolation)
    planted = ROOT / "tests" / "grading" / "test_planted_by_sqlite.py"
    try:
        with pytest.raises(remote.LabRefused, match="sqlite3.connect"):
            lab.word_windows(str(planted), 3)
    finally:
        lab.close()
    assert not planted.exists()


def test_a_hidden_tests_worker_ends_before_a_public_tests_worker_starts(tmp_path, request):
    folder_class = type(request.config.pluginmanager.getplugin("grade-book").lab_folder)
    labs = tmp_path / "labs"
    labs.mkdir()
    shutil.copy(ROOT / "solutions" / "rag4-chunking.py", labs)
    folder = folder_class(labs, str(labs))
    hidden = folder.open("rag4", hidden=True)
    hidden.word_windows("one two three", 2)
    process = hidden._worker.process
    public = folder.open("rag4", hidden=False)
    try:
        public.word_windows("one two three", 2)
        assert process.poll() is not None, "the hidden tests' worker still runs beside the public tests' one"
        assert hidden._worker is None
    finally:
        public.close()
        hidden.close()


@pytest.mark.parametrize("isolation", LAYERS)
def test_a_worker_cannot_start_more_threads_than_its_cgroup_allows(tmp_path, isolation):
    lab = attack_lab(tmp_path / "threads", "threads", isolation)
    try:
        started = lab.word_windows("5000", 3)
        bounds = lab.walls[-1]
    finally:
        lab.close()
    if not bounds.startswith("cgroup"):
        pytest.skip(f"this machine gives a worker {bounds}")
    assert started["threads"] < confine.WORKER_PIDS, started


def test_two_runs_of_the_tests_side_by_side_both_pass(tmp_path):
    """Each run has a temporary folder of its own (conftest.own_temporary_folder): a run that ends removes
    its own, never the live folder of a run beside it, and leaves none behind."""
    import subprocess

    selection = ["tests/test_sandbox.py", "-k", "link or cannot_run or import", "-p", "no:cacheprovider", "-q"]
    # The two runs' temporary folder is one of their own, so that another run on this machine (a developer's
    # beside this one) neither adds a folder to what is checked nor removes one.
    shared = tmp_path / "tmp"
    shared.mkdir()
    runs = [subprocess.Popen([sys.executable, "-m", "pytest", *selection], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, env={**os.environ, "TMPDIR": str(shared)})
            for _ in range(2)]
    outputs = [run.communicate(timeout=600)[0] for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    assert list(shared.glob("pytest-run-*")) == [], "a run left its folder behind"


def said(call) -> object:
    """What a call of an attack's lab returned, or the error its walls raised."""
    try:
        return call()
    except (OSError, remote.LabProblem) as error:
        return f"refused: {error}"


@pytest.mark.parametrize("isolation", LAYERS)
def test_no_futex_or_page_cache_carries_a_message_between_workers(tmp_path, isolation):
    """The red team's late finds: a shared futex on a file both workers map, and the page cache probed by
    fadvise and a read that must not wait, which outlives the sender (a hidden worker to a public one)."""
    message = 0b1011001110001101
    sender = attack_lab(tmp_path / "sender", "futex_cache", isolation)
    receiver = attack_lab(tmp_path / "receiver", "futex_cache", isolation)
    try:
        said(lambda: receiver.word_windows("cache", 3))  # the receiver's worker first
        said(lambda: sender.word_windows(f"send {message}", 3))
        by_futex = said(lambda: receiver.word_windows("futex", 3))
        sender.close()
        by_cache = said(lambda: receiver.word_windows("cache", 3))
    finally:
        sender.close()
        receiver.close()
    for channel, got in (("futex", by_futex), ("cache", by_cache)):
        value = got.get(channel) if isinstance(got, dict) else None
        assert value != message, f"{isolation}: the {channel} carried the message {message}: {got}"


@pytest.mark.parametrize("isolation", LAYERS)
def test_a_worker_makes_no_device_node(tmp_path, isolation):
    """The red team's late find: a FIFO or device node in a worker's scratch (Landlock refuses it) or made by
    mknod (seccomp refuses it), which another worker or the host could open. In the sandbox, and in every
    other layer this machine gives."""
    lab = attack_lab(tmp_path / "nodes", "device_node", isolation)
    try:
        made = lab.word_windows(f"node-{TOKEN}", 3)
    finally:
        lab.close()
    assert "hook" not in made, "the attack could not turn the audit hook off"
    assert [node for node, outcome in made.items() if outcome == "made"] == [], f"{isolation}: {made}"
    assert not list(Path("/tmp").glob(f"node-{TOKEN}-*")), "a node was left in the host's /tmp"


@pytest.mark.parametrize("isolation", LAYERS)
def test_a_silenced_hook_still_flags_what_was_tried(tmp_path, isolation):
    """The red team's late find: after one refusal the lab reaches the hook's frame, sets its `busy` cell and
    empties the worker's list of refusals, and no flag said what it tried. The hook now reports each refusal
    on a line of its own before raising it, a line seccomp lets no call close or replace."""
    lab = attack_lab(tmp_path / "silencer", "hook_silencer", isolation, hook_off=False)
    try:
        got = said(lambda: lab.word_windows("one two three", 2))
    finally:
        lab.close()
    assert lab.refusals and lab.refusals[0].startswith("os.kill"), f"{isolation}: no flag; the call gave {got!r}"
    assert isinstance(got, str) and "refused os.kill" in got, got


PAGE_CACHE_INPUTS = ("  quiet words here  ", "Çà et là, secret")


def ended(call) -> object:
    """What a call of an attack's lab returned, or the error it ended in, in the lab's own words (which the
    grader keeps for the instructor alone: judged.py), whichever it was."""
    try:
        return call()
    except Exception as error:  # the lab's own error, rebuilt by the grader: its words are what it carried
        return f"{type(error).__name__}: {getattr(error, 'lab_words', '') or error}"


@pytest.mark.parametrize("isolation", LAYERS)
def test_the_page_cache_carries_no_input_from_a_hidden_worker_to_a_public_one(tmp_path, isolation):
    """The red team's late find (tests/redteam/page_cache.py): a hidden tests' worker reads one page of a cold
    system file per bit of each input it is called with; the public tests' worker, started after it ended,
    tells the cached pages from the cold ones by getrusage's major faults, or by fault-around and
    /proc/self/pagemap, and fails with the inputs. Neither probe is left to a worker."""
    token = secrets.token_hex(4)
    hidden = role_lab(tmp_path / "hidden", "page_cache:reader", isolation, token)
    try:
        for text in PAGE_CACHE_INPUTS:
            ended(lambda: hidden.word_windows(text, 3, 1))
    finally:
        hidden.close()
    public = role_lab(tmp_path / "public", "page_cache:reader", isolation, token)
    try:
        heard = ended(lambda: public.word_windows("one two", 3, 1))
    finally:
        public.close()
    assert "redteam-leak" in str(heard), heard
    assert not [text for text in PAGE_CACHE_INPUTS if repr(text)[:12] in str(heard)], f"{isolation}: {heard}"


@pytest.mark.parametrize("isolation", LAYERS)
def test_the_page_cache_relays_no_answer_between_two_students(tmp_path, isolation):
    """A classmate's working rag4 writes each answer under its call in the page cache; a student's stubs read
    it back (tests/redteam/page_cache.py, sender and receiver). Nothing reads back whole."""
    token = secrets.token_hex(4)
    calls = [("one two three four five", 3, 1), ("alpha beta gamma", 2, 0)]
    sender = role_lab(tmp_path / "sender", "page_cache:sender", isolation, token,
                      ROOT / "solutions" / "rag4-chunking.py")
    try:
        for call in calls:
            sender.word_windows(*call)
    finally:
        sender.close()
    receiver = role_lab(tmp_path / "receiver", "page_cache:receiver", isolation, token)
    try:
        answers = [ended(lambda: receiver.word_windows(*call)) for call in calls]
    finally:
        receiver.close()
    relayed = [answer for answer in answers if isinstance(answer, list)]
    assert relayed == [], f"{isolation}: the stubs answered {relayed}"
    assert all("nothing heard" in str(answer) for answer in answers), answers
