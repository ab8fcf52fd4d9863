"""The course's own tests are hermetic: they pass on a fresh machine, with or without bubblewrap,
and collecting them starts nothing.

What needs bubblewrap is marked `sandbox` (conftest.require_sandbox): without it, the test is skipped
with the reason; where the CI variable is set (.ci/run, which installs bubblewrap), it fails instead.
A machine without bubblewrap is made here by a PATH that leads to every program but `bwrap`.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import confine
import pytest

ROOT = Path(__file__).resolve().parent.parent
# A refused class: grade_class's end-to-end check that needs the sandbox and runs no grader.
NEEDS_THE_SANDBOX = "tests/test_gradebook.py::test_a_class_of_refused_names_writes_rows_a_reader_can_trust"
# Programs that libraries the tests import run once as they are imported (trio looks for libpthread
# with ldconfig, jupytext asks pandoc its version): a look, not the tests' work.
IMPORT_PROBES = {"ldconfig", "pandoc"}
# Runs pytest in this process with an audit hook that writes down every program it starts.
WATCHED = """
import json, os, sys
started = []
def watch(event, args):
    if event == "subprocess.Popen" or event.startswith(("os.exec", "os.posix_spawn", "os.system", "os.fork")):
        started.append(os.path.basename(str(args[0])) if args and event != "os.fork" else event)
sys.addaudithook(watch)
import pytest
code = pytest.main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"exit": int(code), "started": started}, out)
"""


def path_without_bwrap(folder: Path) -> str:
    """A PATH that finds every program of this one but bubblewrap: links to each, in `folder`."""
    folder.mkdir(exist_ok=True)
    for directory in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isdir(directory):
            continue
        for name in os.listdir(directory):
            link = folder / name
            if name != "bwrap" and not link.exists() and not link.is_symlink():
                link.symlink_to(Path(directory) / name)
    return str(folder)


def pytest_run(*arguments: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """A fresh pytest run of `arguments`, in `env` as given (the whole environment), else this one's;
    in one process (`-n 0`): a test is skipped or failed in whichever process runs it, and two more
    processes, each collecting, would only add to the run's time."""
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "0", *arguments], cwd=ROOT,
                          capture_output=True, text=True, timeout=600, env=os.environ if env is None else env)


def without_ci() -> dict:
    return {key: value for key, value in os.environ.items() if key != "CI"}


def test_without_bwrap_the_sandbox_is_said_to_be_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_without_bwrap(tmp_path / "bin"))
    assert confine.bwrap_works.__wrapped__().startswith("bubblewrap is not installed (Debian/Ubuntu: apt-get")


def test_a_test_that_needs_the_sandbox_skips_without_it_and_fails_in_ci(request, monkeypatch):
    [conftest] = [plugin for plugin in request.config.pluginmanager.get_plugins()
                  if getattr(plugin, "__file__", "") == str(ROOT / "tests" / "conftest.py")]
    conftest.require_sandbox("")  # a sandbox here: nothing happens
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="needs bubblewrap's sandbox: bubblewrap is not installed"):
        conftest.require_sandbox("bubblewrap is not installed")
    monkeypatch.setenv("CI", "1")
    with pytest.raises(pytest.fail.Exception, match="in CI this test must run"):
        conftest.require_sandbox("bubblewrap is not installed")


@pytest.mark.heavy  # two fresh pytest runs
def test_on_a_machine_without_bwrap_the_test_skips_with_the_reason_and_fails_in_ci(tmp_path):
    path = path_without_bwrap(tmp_path / "bin")
    skipped = pytest_run("-rs", NEEDS_THE_SANDBOX, env={**without_ci(), "PATH": path})
    assert skipped.returncode == 0 and "1 skipped" in skipped.stdout, skipped.stdout[-3000:]
    assert "needs bubblewrap's sandbox: bubblewrap is not installed" in skipped.stdout
    failed = pytest_run(NEEDS_THE_SANDBOX, env={**os.environ, "PATH": path, "CI": "1"})
    assert failed.returncode == 1 and "1 error" in failed.stdout, failed.stdout[-3000:]  # failed at set-up
    assert ".ci/run installs bubblewrap, so in CI this test must run" in failed.stdout


@pytest.mark.heavy  # collects every test of every tier in a fresh pytest
@pytest.mark.timeout(600)  # some 20 s on two cores; before, the work it started took minutes
def test_collecting_the_tests_starts_nothing(tmp_path):
    """`pytest --collect-only` reads the tests: no lab, notebook, grader or study starts (they start
    only once tests run: conftest.pytest_runtestloop), and no sandbox is looked for."""
    record = tmp_path / "started.json"
    done = subprocess.run([sys.executable, "-c", WATCHED, str(record), "--collect-only", "-q", "-p",
                           "no:cacheprovider", "-m", ""], cwd=ROOT, capture_output=True, text=True, timeout=600)
    found = json.loads(record.read_text())
    assert found["exit"] == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert set(found["started"]) <= IMPORT_PROBES, found["started"]
    assert "lab folder:" not in done.stdout, "a run that collects has no grades to show"
