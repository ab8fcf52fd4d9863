"""Given code that does a lab's TODOs earns nothing (labkit/sealed.py), and the lab's own check says so too.

rag6 imports labkit's CommonMark scanner and the course's robust chunker (it shows them beside the student's;
rag7 and rag10 stand on them). A rag6 whose TODOs call them (tests/redteam/given_code.py) earns 5.40 / 10 unsealed.
A realistic mistake the lab's own check catches, a reader that keeps a fence inside a list item in the list (as
CommonMark does, so the grader's parser agrees with it), must lose points too: the hidden tests read such a fence
as the lab's rule says, and cut such lists small.
"""

import importlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from labkit import sealed
from redteam import given_code

ROOT = Path(__file__).resolve().parent.parent

RAG6 = ["tests/grading/test_rag6.py", "tests/grading/hidden/test_rag6_hidden.py"]
FORGOTTEN_RULE = "NESTED_FENCE.match(following) or "  # the reference's rule for a fence in a list item


def test_every_sealed_name_is_there_and_comes_back():
    """A renamed given function would silently stop being sealed: each name must exist, and seal() undoes."""
    for lab, modules in sealed.ANSWERS.items():
        originals = {}
        for module_name, names in modules.items():
            module = importlib.import_module(module_name)
            for name in names:
                owner, _, attribute = name.rpartition(".")
                originals[module_name, name] = vars(getattr(module, owner) if owner else module)[attribute]
        namespace = {"taken": next(iter(originals.values()))}
        restore = sealed.seal(lab, namespace)
        with pytest.raises(sealed.GivenAnswer, match=lab):
            namespace["taken"]()
        restore()
        assert namespace["taken"] is next(iter(originals.values()))
        for (module_name, name), original in originals.items():
            owner, _, attribute = name.rpartition(".")
            module = importlib.import_module(module_name)
            assert vars(getattr(module, owner) if owner else module)[attribute] is original, name


def graded_rag6(lab_dir: Path, report: Path) -> tuple[dict, list]:
    """rag6's functions and their points, as the grader's pytest form gives them, hidden tests and all, and
    the report's flags."""
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *RAG6,
                           "--lab-dir", str(lab_dir), "--grade-json", str(report)],
                          cwd=ROOT, capture_output=True, text=True, env=dict(os.environ), timeout=900)
    assert done.returncode in (0, 1) and report.is_file(), done.stdout[-3000:] + done.stderr[-3000:]
    rag6 = json.loads(report.read_text(encoding="utf-8"))["labs"]["rag6"]
    return {name: found["earned"] for name, found in rag6["functions"].items()}, rag6["flags"]


def lab_folder(folder: Path, rag6_source: str) -> Path:
    folder.mkdir()
    for lab in ("rag4", "rag5"):
        shutil.copy(next((ROOT / "solutions").glob(f"{lab}-*.py")), folder)
    (folder / "rag6-markdown-chunking.py").write_text(rag6_source, encoding="utf-8")
    return folder


@pytest.mark.heavy  # grades rag6 three times, hidden tests and all
@pytest.mark.timeout(900)
def test_given_code_and_a_forgotten_rule_earn_nothing_for_what_they_skip(tmp_path):
    stub = (ROOT / "labs" / "rag6-markdown-chunking.py").read_text(encoding="utf-8")
    calling = lab_folder(tmp_path / "given", stub + given_code.SOURCE)
    earned, _ = graded_rag6(calling, tmp_path / "given.json")
    assert all(earned[name] == 0 for name in given_code.ANSWERED), earned

    reloading = lab_folder(tmp_path / "reloaded", stub + given_code.SOURCE + given_code.RELOADED)
    earned, flags = graded_rag6(reloading, tmp_path / "reloaded.json")
    assert all(earned[name] == 0 for name in given_code.ANSWERED), earned
    assert any("labkit/markdown.py" in flag and "sealed" in flag for flag in flags), flags

    reference = (ROOT / "solutions" / "rag6-markdown-chunking.py").read_text(encoding="utf-8")
    assert FORGOTTEN_RULE in reference
    forgetting = lab_folder(tmp_path / "forgot", reference.replace(FORGOTTEN_RULE, ""))
    earned, _ = graded_rag6(forgetting, tmp_path / "forgot.json")
    assert earned["read_blocks"] < 3 and earned["markdown_chunks"] < 2, earned


@pytest.mark.heavy  # loads rag6 and runs its public tests in this process, as the lab's last check does
@pytest.mark.timeout(300)
def test_the_lab_s_own_check_refuses_the_given_code_too(tmp_path):
    from labkit.loading import load_lab
    from labkit.public_tests import run_public_tests

    reference = (ROOT / "solutions" / "rag6-markdown-chunking.py").read_text(encoding="utf-8")
    folder = lab_folder(tmp_path / "labs", reference + given_code.SOURCE)
    namespace = vars(load_lab("rag6", folder))
    _, failures = run_public_tests("rag6", namespace)
    failed = {failure.call.function for failure in failures}
    assert set(given_code.ANSWERED) <= failed, failed
    assert any("GivenAnswer" in failure.reason for failure in failures)
    assert namespace["scan_blocks"].__module__ == "labkit.markdown_chunking"  # put back after the check


def test_no_worker_reads_the_peers_the_benchmarks_measure():
    """Another library's chunker (a recursive splitter, a semantic chunker) does rag5's or rag9's TODOs; where
    the benchmarks' peers are installed, a worker must not import them, as it must not import the judges."""
    sys.path.insert(0, str(ROOT / "tools" / "grading"))
    import confine
    from labkit.compare import PEER_PACKAGES

    assert set(PEER_PACKAGES) <= set(confine.HIDDEN_PACKAGES)
