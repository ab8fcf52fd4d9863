"""A pytest plugin that keeps every call the grading tests make to a lab, with the worker's reply.

It is what a lab that learns the public tests' answers by heart would hold
(tests/test_memoriser.py builds such a lab from it):

    ACADEMY_RECORD_CALLS=calls.json pytest -p recording tests/grading --ignore tests/grading/hidden

The file maps each lab to {call: reply}: the call as the grader sends it
(call_key), the reply as the worker sent it ({"value": ...} or {"error": ...}).
"""

import json
import os
from pathlib import Path

import remote
import wire

CALLS: dict = {}  # lab -> {call_key: reply}


def call_key(function: str, args, kwargs: dict) -> str:
    """A call as one line of the wire's JSON: the same arguments give the same line on both sides."""
    return wire.dumps({"call": function, "args": wire.encode(list(args)), "kwargs": wire.encode(kwargs)}).decode()


def pytest_configure(config):
    """Wrap the grader's side of every call: the call's key first, then the reply it got."""
    call, answer = remote.RemoteLab._call, remote.RemoteLab._answer

    def recording_call(self, function, args, kwargs):
        self._recorded = call_key(function, args, kwargs)
        return call(self, function, args, kwargs)

    def recording_answer(self, reply, what):
        kept = {key: reply[key] for key in ("value", "error") if key in reply}
        CALLS.setdefault(self._name, {})[self._recorded] = kept
        return answer(self, reply, what)

    remote.RemoteLab._call, remote.RemoteLab._answer = recording_call, recording_answer


def pytest_unconfigure(config):
    Path(os.environ["ACADEMY_RECORD_CALLS"]).write_text(json.dumps(CALLS), encoding="utf-8")
