"""Each grading test in a process of its own, so a student's code can only fail its own tests.

A lab under grading may loop forever, call sys.exit() or os._exit(), print
megabytes, or rebind names in academy_llm. Run in the grader's own process,
the first two would stop the whole run and the last would poison every test
after it. So each test that carries the grade marker runs in a forked child:

- the child runs the test's set-up, call and tear-down as pytest would, and
  sends each phase's report back through a pipe as soon as it is made;
- the parent waits at most the test's time limit (pytest-timeout's setting:
  `timeout` in pyproject.toml, or --timeout), then kills the child and all it
  started; pytest-timeout itself stays out of the parent, where its alarm
  would interrupt the waiting instead of the test;
- a phase whose child dies, exits or runs out of time gets a failed report
  with a one-line reason, and the run goes on with the next test;
- a set-up that runs out of time is not tried again for the rest of its
  file, which would cost a time limit per test (a lab that loops when it is
  imported): those tests fail at once with the same reason, as pytest does
  for a module fixture that failed.

Where there is no fork (Windows), or under --pdb (a debugger needs the test in
the terminal's own process), grading tests run in-process like any other.
"""

import gc
import inspect
import json
import os
import select
import signal
import time
from pathlib import Path

import pytest
from _pytest.runner import runtestprotocol  # how pytest runs one test; the child runs it unchanged

import academy_llm

TIME_LIMIT = pytest.StashKey[float]()
CAPTURED_OUTPUT_LIMIT = 4_000  # characters of a test's printed output kept in its report


def isolated(item) -> bool:
    """True if `item` is a grading test that this platform and run can isolate."""
    return (
        item.get_closest_marker("grade") is not None
        and hasattr(os, "fork")
        and not item.config.getoption("usepdb")
    )


# ---- the time limit: pytest-timeout's setting, enforced from the parent ----


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_set_timer(item, settings):
    """Keep an isolated test's time limit for the parent to enforce, instead of an alarm."""
    if isolated(item):
        item.stash[TIME_LIMIT] = settings.timeout
        return True
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_timeout_cancel_timer(item):
    """No alarm was set for an isolated test: nothing to cancel."""
    return True if isolated(item) else None


# ---- running a test in a child ---------------------------------------------


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item, nextitem):
    """Run a grading test in a forked child and log its reports here, in the parent."""
    if not isolated(item):
        return None
    warm_up()
    item.ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=item.location)
    for report in run_in_child(item):
        item.ihook.pytest_runtest_logreport(report=report)
    item.ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=item.location)
    return True


_warmed_up = False


def warm_up() -> None:
    """Load, once and before the first fork, what the children would each load again.

    That is the tokenizer, the embedding model, the reference labs that a
    graded lab imports to build on (trusted code; a student's lab runs only in
    children), and inspect's map of source files to modules, which pytest
    builds to show a failing test's code. A failure here is left for each test
    to report.
    """
    global _warmed_up
    if _warmed_up:
        return
    _warmed_up = True
    try:
        academy_llm.tokenizer()
        academy_llm.embed([], "wordllama")  # loads the model; no text, so no tokenizer threads yet
        reference = os.environ.get("ACADEMY_EARLIER_LABS")
        if reference:
            for path in sorted(Path(reference).glob("rag*-*.py")):
                academy_llm.load_lab(path.name.split("-")[0], reference)
        inspect.getmodule(warm_up.__code__)  # a code object: maps every loaded module's file
    except Exception:  # the same error will fail the tests that meet it, each in its own words
        pass


_hung_setups: dict[str, str] = {}  # test file -> why its set-up never finished


def run_in_child(item) -> list:
    """The reports of `item`, run in a forked child; a failed one for a phase the child did not finish."""
    test_file = item.nodeid.split("::")[0]
    if test_file in _hung_setups:
        return [failed_report(item, "setup", f"not run: {_hung_setups[test_file]} in an earlier test of this file")]
    read_end, write_end = os.pipe()
    gc.freeze()  # the child's garbage collector will leave the parent's objects (and pages) alone
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        child(item, write_end)  # never returns
    gc.unfreeze()
    os.close(write_end)
    own_process_group(pid)
    time_limit = item.stash.get(TIME_LIMIT, None)
    data, finished = b"", False
    try:
        data, finished = read_until_closed(read_end, time_limit)
    finally:  # out of time, or interrupted by Ctrl-C: stop the child and all it started
        os.close(read_end)
        if not finished:
            kill_group(pid)
        _, status = os.waitpid(pid, 0)
    config = item.config
    whole_lines = data.split(b"\n")[:-1]  # a child stopped while writing leaves half a line
    reports = [
        config.hook.pytest_report_from_serializable(config=config, data=json.loads(line))
        for line in whole_lines
    ]
    phase = unfinished_phase(reports)
    if phase is None:  # every report arrived: what the child did after that does not matter
        return reports
    if not finished:
        reason = f"timed out after {time_limit:g} s during {phase} (an endless loop?); the test was stopped"
        if phase == "setup":
            _hung_setups[test_file] = f"the set-up timed out after {time_limit:g} s"
    else:
        discard_leftover_output(item)
        reason = why_it_ended(status)
    return reports + [failed_report(item, phase, reason)]


def unfinished_phase(reports) -> str | None:
    """The phase a child was in when its reports stopped, or None if it sent them all."""
    if not reports:
        return "setup"
    last = reports[-1]
    if last.when == "teardown":
        return None
    return "call" if last.when == "setup" and last.passed else "teardown"


_sink = None  # in a child: where each report goes the moment it is made


def child(item, pipe: int) -> None:
    """In the child: run the test as pytest would, its reports streaming to `pipe`, then end at once.

    os._exit skips the parent's exit handlers and the output the parent had
    buffered but not yet written, which would otherwise be written twice.
    """
    global _sink
    status = 1
    try:
        own_process_group(0)
        _sink = os.fdopen(pipe, "w", encoding="ascii")
        runtestprotocol(item, log=False, nextitem=None)
        _sink.close()
        status = 0
    finally:
        os._exit(status)


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    """In a child, send each report (as the other hooks have left it) to the parent at once."""
    report = yield
    if _sink is not None:
        data = item.config.hook.pytest_report_to_serializable(config=item.config, report=report)
        _sink.write(json.dumps(data) + "\n")
        _sink.flush()
    return report


def own_process_group(pid: int) -> None:
    """Put the child in a process group of its own, so one signal can stop all it starts.

    Parent and child both ask, so the group exists whichever of them runs first.
    """
    try:
        os.setpgid(pid, 0)
    except OSError:  # the child has already done it, or has already ended
        pass


def read_until_closed(fd: int, seconds) -> tuple[bytes, bool]:
    """(all that arrived on pipe `fd`, whether its writer closed it before `seconds` ran out).

    The child closes the pipe by ending, however it ends, so no polling is needed.
    """
    deadline = None if not seconds else time.monotonic() + seconds
    parts = []
    while True:
        wait = None if deadline is None else max(0.0, deadline - time.monotonic())
        ready, _, _ = select.select([fd], [], [], wait)
        if not ready:
            return b"".join(parts), False
        part = os.read(fd, 1 << 16)
        if not part:
            return b"".join(parts), True
        parts.append(part)


def kill_group(pid: int) -> None:
    """Kill the child and everything it started."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:  # the group is gone: the child had ended already
        pass


def why_it_ended(status: int) -> str:
    """One line on how a child ended without sending its reports."""
    if os.WIFSIGNALED(status):
        name = signal.Signals(os.WTERMSIG(status)).name
        return f"the test process was killed by {name} before the test finished (a crash, or out of memory?)"
    code = os.WEXITSTATUS(status)
    return f"the test process ended with exit status {code} before the test finished (did the lab call os._exit?)"


def failed_report(item, phase: str, reason: str):
    """A failed report for a phase that the child did not finish, saying why in one line."""
    return pytest.TestReport(
        nodeid=item.nodeid,
        location=item.location,
        keywords={name: 1 for name in item.keywords},
        outcome="failed",
        longrepr=reason,
        when=phase,
        grade_message=reason,
    )


def discard_leftover_output(item) -> None:
    """Drop what a child printed before it died, so it is not shown as the next test's output.

    The capture files are shared with the child; one that ends abruptly leaves
    its output there instead of in its report.
    """
    capture = item.config.pluginmanager.getplugin("capturemanager")
    if capture is not None and capture.is_globally_capturing():
        capture.read_global_capture()


# ---- what a lab may have done to the grader's process -----------------------

HELPER = {name: value for name, value in vars(academy_llm).items() if not name.startswith("_")}


def changed_helper_names() -> list[str]:
    """Public names of academy_llm that a lab has rebound, added or deleted since grading began.

    The grading tests check chunks with academy_llm's functions: a lab that
    replaces count_tokens would change what they measure.
    """
    now = {name: value for name, value in vars(academy_llm).items() if not name.startswith("_")}
    return sorted(name for name in HELPER.keys() | now.keys() if HELPER.get(name) is not now.get(name))


def restore_helper(names) -> None:
    """Put academy_llm's `names` back as grading found them.

    In a child this hardly matters, as the child ends next; in a run without
    fork it keeps the tests that come after from failing for the same change.
    """
    for name in names:
        if name in HELPER:
            setattr(academy_llm, name, HELPER[name])
        else:
            delattr(academy_llm, name)


def trim_captured_output(report) -> None:
    """Cut each section of captured output to its first CAPTURED_OUTPUT_LIMIT characters."""
    trimmed = []
    for title, content in report.sections:
        if len(content) > CAPTURED_OUTPUT_LIMIT:
            cut = len(content) - CAPTURED_OUTPUT_LIMIT
            content = content[:CAPTURED_OUTPUT_LIMIT] + f"\n[{cut} more characters not shown]\n"
        trimmed.append((title, content))
    report.sections = trimmed
