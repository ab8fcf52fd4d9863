"""Fair under every seed: each hidden property passes for correct code, whatever the grading seed.

The hidden properties draw their examples from the grading seed
(grading_checks.grading_seed(): $ACADEMY_GRADING_SEED, else
tests/grading/hidden/seed.txt, applied by `@check.hidden_seed`), which an
instructor changes between terms. A correct lab must earn every point under any
seed, so each hidden property runs here under SEEDS for the reference and for
the course's independent implementations (tests/independent/). Grading a folder
per seed would take hours: the labs are loaded in this process
(labkit.load_lab) and each property is called directly, its seed set as
hidden_seed sets it (hypothesis.seed). Hypothesis draws each example once, and
its body runs for every implementation in turn on the same values (what a body
draws from st.data() too), since drawing costs as much as judging. The other
hidden cases are fixed, the same under every seed, and graded as usual.

    python -m pytest -m slow tests/test_seeds.py
"""

import importlib.util
from pathlib import Path

import grading_checks as check
import pytest
import wire
from hypothesis import seed

from labkit import load_lab

ROOT = Path(__file__).resolve().parent.parent
HIDDEN = ROOT / "tests" / "grading" / "hidden"
FOLDERS = [ROOT / "solutions"] + sorted(path for path in (ROOT / "tests" / "independent").iterdir() if path.is_dir())
SEEDS = [check.grading_seed(), *range(1, 50)]  # this term's seed and 49 others

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]  # some six minutes: a developer's run, beside -m heavy


def hidden_module(path: Path):
    spec = importlib.util.spec_from_file_location(f"seeded_{path.stem}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def seeded_properties():
    """(lab, test function, its parameters) for every hidden property drawn from the grading seed, one
    entry per case of a parametrized one."""
    found = []
    for path in sorted(HIDDEN.glob("test_*_hidden.py")):
        module = hidden_module(path)
        lab = module.pytestmark.args[0]
        for name, test in vars(module).items():
            if name.startswith("test_") and hasattr(test, "_hypothesis_internal_use_seed"):
                found += [(lab, test, params) for params in cases(test)]
    return found


def cases(test) -> list:
    """The keyword arguments of each case of `test`'s parametrize marks ([{}] if it has none)."""
    found = [{}]
    for mark in getattr(test, "pytestmark", []):
        if mark.name == "parametrize":
            names = [part.strip() for part in mark.args[0].split(",")]
            values = [getattr(value, "values", (value,)) for value in mark.args[1]]
            found = [{**case, **dict(zip(names, value))} for case in found for value in values]
    return found


PROPERTIES = seeded_properties()


class Replay:
    """st.data() for a later implementation: the values the first one drew, in the same order."""

    def __init__(self, values):
        self.values = iter(values)

    def draw(self, strategy, label=None):
        return next(self.values)


class Record:
    """st.data() for the first implementation: draws as hypothesis's own does, and keeps each value."""

    def __init__(self, data):
        self.data, self.values = data, []

    def draw(self, strategy, label=None):
        value = self.data.draw(strategy, label)
        self.values.append(value)
        return value


class InProcess:
    """A loaded lab called as its worker calls it: the arguments cross as the wire carries them, so that
    a wire.New (rag5's TokenIndex of a text) is made with the lab's own class."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        function = getattr(self.module, name)
        if not callable(function):
            return function

        def call(*args, **kwargs):
            classes = vars(self.module)
            return function(*wire.decode(wire.encode(list(args)), classes),
                            **wire.decode(wire.encode(kwargs), classes))
        return call


def for_each(body, lab, modules):
    """A property body that runs `body` once per (name, module) of `modules`, on the same values."""
    def each(**values):
        data = values.get("data")
        record = Record(data) if callable(getattr(data, "draw", None)) else None  # st.data(), not a value
        for number, (name, module) in enumerate(modules):
            drawn = {} if record is None else {"data": Replay(record.values) if number else record}
            try:
                body(**{**values, **drawn, lab: module})
            except AssertionError as error:
                raise AssertionError(f"{name}: {error}") from None
    return each


@pytest.mark.parametrize("lab, test, params", PROPERTIES,
                         ids=[f"{test.__name__}{''.join(f'[{v}]' for v in params.values())}"
                              for _, test, params in PROPERTIES])
def test_every_hidden_property_passes_under_every_seed(lab, test, params):
    modules = [(folder.name, InProcess(load_lab(lab, folder))) for folder in FOLDERS]
    body = test.hypothesis.inner_test
    test.hypothesis.inner_test = for_each(body, lab, modules)  # hypothesis's hook for the body it runs
    failed = []
    try:
        for value in SEEDS:
            try:
                seed(value)(test)(**{lab: None}, **params)
            except Exception as error:  # an AssertionError, or hypothesis's report of several
                failed.append(f"seed {value}: {str(error).splitlines()[0][:300]}")
    finally:
        test.hypothesis.inner_test = body
    assert not failed, f"{len(failed)} of {len(SEEDS)} seeds fail:\n" + "\n".join(failed[:5])
