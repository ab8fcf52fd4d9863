"""The wall around a worker, seen from inside and from the grader: what a lab can see, and what
the grader accepts from it. The red-team suite (test_redteam.py) attacks it whole; these are quick."""

import os
from pathlib import Path

import confine
import pytest
import remote
import wire

ROOT = Path(__file__).resolve().parent.parent
FORBIDDEN = [ROOT / name for name in confine.CLOSED_FOLDERS]

LOOKER = '''
import os


def word_windows(text, size, overlap=0):
    """What this worker can see and who it is, as data."""
    seen = {}
    for path in ("/work", "/tmp", "/proc/1/cmdline", "/etc/passwd", "/root", *text.split("|")):
        seen[path] = os.path.exists(path)
    try:
        pids = sorted(name for name in os.listdir("/proc") if name.isdigit())
    except PermissionError:  # Landlock: a worker reads its own /proc only
        pids = "not listed"
    return {"seen": seen, "uid": os.getuid(), "environment": sorted(os.environ), "pids": pids, "cwd": os.getcwd()}
'''


def open_looker(tmp_path: Path, isolation: str) -> remote.RemoteLab:
    (tmp_path / "rag4-chunking.py").write_text(LOOKER)
    given = {"rag4": ROOT / "solutions" / "rag4-chunking.py"}
    return remote.RemoteLab("rag9", tmp_path / "rag4-chunking.py", {}, given, FORBIDDEN, isolation)


@pytest.mark.sandbox
def test_the_sandbox_holds_only_what_a_lab_needs(tmp_path, monkeypatch):
    monkeypatch.setenv("ACADEMY_GRADING_SEED", "424242")
    lab = open_looker(tmp_path, confine.SANDBOX)
    # solutions/ and tools/ exist inside only to hold the given rag4 and the worker's own two files.
    closed = [str(ROOT / name) for name in ("tests", "benchmarks", ".git", "solutions/rag5-recursive-chunking.py",
                                            "tools/grading/grade_class.py", "notebooks", "labs/rag4-chunking.py",
                                            "README.md")]
    given = str(ROOT / "solutions" / "rag4-chunking.py")
    needed = [str(ROOT / "academy_llm.py"), str(ROOT / "datasets"), str(ROOT / "tools/grading/worker.py")]
    try:
        seen = lab.word_windows("|".join(closed + [given, *needed]), 3)
        home = lab._worker.home
    finally:
        lab._stop()
    assert [path for path in closed if seen["seen"][path]] == [], "the sandbox shows what it must not"
    assert all(seen["seen"][path] for path in [given, *needed]), seen["seen"]
    assert seen["uid"] == confine.SANDBOX_UID
    assert seen["pids"] in (["1", "2"], "not listed"), "the worker sees processes beside its own sandbox"
    assert "ACADEMY_GRADING_SEED" not in seen["environment"]
    assert not home.exists(), "a stopped worker's home is removed"


def test_a_plain_process_gets_a_clean_environment_and_the_portable_pipes(tmp_path, monkeypatch):
    """The path a student on Windows takes, forced on Linux: stdin/stdout pipes, no POSIX extras."""
    monkeypatch.setenv("ACADEMY_GRADING_SEED", "424242")
    monkeypatch.setenv("ACADEMY_GRADING_PORTABLE", "1")
    lab = open_looker(tmp_path, confine.PROCESS)
    try:
        seen = lab.word_windows("", 3)
        again = lab.word_windows("", 3)
    finally:
        lab._stop()
    assert "ACADEMY_GRADING_SEED" not in seen["environment"] and again == seen
    assert seen["cwd"].startswith(str(remote.worker_base()))


def test_the_reference_grades_in_portable_mode(monkeypatch):
    monkeypatch.setenv("ACADEMY_GRADING_PORTABLE", "1")
    path = ROOT / "solutions" / "rag4-chunking.py"
    lab = remote.RemoteLab("rag4", path, {"rag4": path}, {}, FORBIDDEN, confine.PROCESS)
    try:
        chunks = lab.token_windows("one two three four five six seven", 3, 1)
    finally:
        lab._stop()
    assert [chunk.n_tokens for chunk in chunks] == [3, 3, 3]


# ---- what the grader accepts ------------------------------------------------------------


@pytest.mark.parametrize("value, why", [
    ({"$": "ndarray", "dtype": "S1000000000", "shape": [3], "items": ["a", "b", "c"]}, "only plain numbers"),
    ({"$": "ndarray", "dtype": "float64", "shape": [10 ** 9], "items": [1.0]}, "do not fill its shape"),
    ({"$": "ndarray", "dtype": "float64", "shape": [-1], "items": [1.0]}, "short list of sizes"),
    ({"$": "ndarray", "dtype": "O", "shape": [1], "items": [1]}, "only plain numbers"),
    ({"$": "ndarray", "dtype": "int64", "shape": [2], "items": [1, "x"]}, "not numbers"),
    ({"$": "tuple"}, "malformed"),
    ({"$": "dict", "items": [[1]]}, "malformed"),
    ({"$": "bytes", "hex": 5}, "malformed"),
    ({"$": "what"}, "unknown value tag"),
])
def test_a_forged_value_is_refused_before_anything_is_allocated(value, why):
    with pytest.raises(wire.WireError, match=why):
        wire.decode(value)


def test_a_dataclass_from_the_lab_reads_its_fields_as_attributes():
    """A lab's dataclass (rag8's paired_bootstrap returns labkit.uncertainty.Interval) arrives as a
    Record, whose fields a grading test reads as attributes, as it reads a namedtuple's."""
    from labkit.uncertainty import Interval

    record = wire.decode(wire.encode(Interval(0.1, 0.0, 0.2, 0.95)))
    assert (record.name, record.estimate, record.low, record.high, record.level) == ("Interval", 0.1, 0.0, 0.2, 0.95)
    with pytest.raises(AttributeError):
        record.missing


def test_a_reply_of_too_many_containers_or_too_deep_is_refused():
    with pytest.raises(wire.WireError, match="lists and objects"):
        wire.loads(b'{"value": [' + b"[]," * (wire.MAX_CONTAINERS + 1) + b"[]]}")
    with pytest.raises(wire.WireError, match="nested more than"):
        wire.decode(wire.loads(b'{"v":' + b"[" * 100 + b"]" * 100 + b"}")["v"])


def test_a_reply_must_have_a_workers_shape():
    with pytest.raises(wire.WireError, match="unknown fields"):
        wire.reply(b'{"value": 1, "grade": 10}')
    with pytest.raises(wire.WireError, match="refusals are not a list"):
        wire.reply(b'{"value": 1, "refused": 3}')
    message = wire.reply(b'{"error": {"type": 1, "message": ["x"]}, "refused": [1, 2]}')
    assert message["error"] == {"type": "1", "builtin": "", "message": "['x']", "where": ""}
    assert message["refused"] == ["1", "2"]


def test_a_flood_is_cut_at_the_reply_limit(monkeypatch):
    monkeypatch.setattr(remote, "REPLY_LIMIT", 1 << 16)
    read, write = os.pipe()
    replies = remote.Replies(os.fdopen(read, "rb"))
    with os.fdopen(write, "wb") as stream:
        try:
            stream.write(b"x" * (1 << 18))
        except BrokenPipeError:  # the grader stopped reading: the worker's write fails, as it should
            pass
    with pytest.raises(wire.WireError, match="over 0 MB"):
        replies.next(10)


# ---- links ----------------------------------------------------------------------------


def test_a_lab_file_that_is_a_link_is_graded_as_missing(tmp_path):
    from conftest import find_lab_file, reached_through_a_link

    (tmp_path / "rag4-chunking.py").symlink_to(ROOT / "solutions" / "rag4-chunking.py")
    path, _, reason = find_lab_file("rag4", tmp_path)
    assert path is None and "is a link" in reason
    (tmp_path / "real").mkdir()
    (tmp_path / "via").symlink_to(tmp_path / "real")
    assert "through a link" in reached_through_a_link(str(tmp_path / "via"))
    assert reached_through_a_link(str(tmp_path / "real")) == ""


def test_a_lab_that_python_cannot_run_is_not_imported_either(tmp_path):
    """A byte that is not UTF-8, in a comment: `python lab.py` refuses the file, so the loader does."""
    import labkit.loading

    lab = tmp_path / "rag4-chunking.py"
    lab.write_bytes(b"x = 1\n# caf\xe9\n")
    with pytest.raises(SyntaxError, match="Non-UTF-8 byte .* on line 2"):
        labkit.loading.check_encoding(lab)


def test_a_lab_may_import_a_module_when_it_runs(tmp_path):
    """A first import inside a lab's function reads only the Python installation, never the grader's folder."""
    (tmp_path / "rag4-chunking.py").write_text(
        "def word_windows(text, size, overlap=0):\n    import colorsys, fractions\n"
        "    return [str(fractions.Fraction(1, 3)), colorsys.rgb_to_hsv(1, 0, 0)[0]]\n")
    lab = remote.RemoteLab("rag4", tmp_path / "rag4-chunking.py", {}, {}, FORBIDDEN, confine.choose([]))
    try:
        assert lab.word_windows("", 1) == ["1/3", 0.0]
    finally:
        lab._stop()
    assert lab.refusals == []
