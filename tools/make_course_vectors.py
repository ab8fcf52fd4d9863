"""Write embeddings/all-MiniLM-L6-v2.orbit.npz: the minilm vectors of every text the reference labs embed.

Each reference lab runs as a student runs it, with ACADEMY_EMBEDDER=minilm, and every text it
embedded is kept with its vector; the questions of both splits too. The labs run in two
processes, each lab after another in its process, so that a text two labs of one group embed
(rag10's units, which rag11 ranks again) is embedded once. A student whose chunks match the
reference's then embeds nothing new, and a lab stays within its CPU budget. The solution notebooks of
the labs with a chunk explorer (rag4-rag7) run too, in a Jupyter kernel: the explorer ranks the chunks of
every setting it offers, texts a script never embeds, and a notebook opens it without embedding them.
Run it after changing what a lab or an explorer embeds:

    python tools/make_course_vectors.py          # the labs' new texts only: minutes (4 min of CPU
                                                 # for 7,808 new texts beside 31,443 kept, 2026-12-05)
    python tools/make_course_vectors.py --full   # every text again, after changing the model: about 25 minutes

By default the labs read the file as it is, so a text it already holds is looked up, and only new
texts are embedded; the file written holds what the labs embed now, so a text no lab embeds any
more is dropped. --full embeds every text again, as a new model needs. Either way the user's
embedding cache is left out (the labs run with a cache folder of their own): every vector written
comes from the model or from the file itself.

The file holds keys (sha256 of each text, its first 16 bytes; the texts themselves are not kept)
and float16 vectors, a cosine of 0.99999 or more with the float32 ones.
"""

import atexit
import os
import runpy
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


# Two processes, and the explorers' notebooks in a third (quick: their labs' texts are looked up).
GROUPS = (("rag4", "rag5", "rag6", "rag7", "rag10", "rag11"), ("questions", "rag8", "rag9"), ("explorers",))


EXPLORERS = ("rag4", "rag5", "rag6", "rag7")  # the solution notebooks whose explorer is run in a kernel


def write_vectors(out: str) -> None:
    """Write every vector this process embedded or looked up (minilm keeps them) to `out`."""
    from labkit import minilm

    save({minilm.text_key(text): vector for text, vector in minilm._vectors.items()}, out)


def record_explorers(out: str) -> None:
    """Run the solution notebooks of EXPLORERS, each in a kernel of its own started in a copy of the
    course, with a last cell that writes what the kernel embedded; `out` gets them all."""
    import shutil

    import nbformat
    from nbclient import NotebookClient

    parts = []
    for lab in EXPLORERS:
        copy = Path(tempfile.mkdtemp(prefix=f"{lab}-", dir=".")).resolve()  # in the run's folder, removed with it
        for name in ("notebooks", "labs", "solutions"):  # a notebook loads the earlier labs' scripts
            shutil.copytree(ROOT / name, copy / name)
        (path,) = (copy / "notebooks" / "solutions").glob(f"{lab}-*.ipynb")
        notebook = nbformat.read(path, as_version=4)
        parts.append(str(copy / "vectors.npz"))
        notebook.cells.append(nbformat.v4.new_code_cell(
            f"import runpy\nrunpy.run_path({str(Path(__file__).resolve())!r}, run_name='kernel')"
            f"['write_vectors']({parts[-1]!r})"))
        NotebookClient(notebook, timeout=600, resources={"metadata": {"path": str(path.parent)}}).execute()
    save(merged(parts), out)


def merged(parts: list) -> dict[bytes, np.ndarray]:
    """{key: vector} of the files `parts`, written by write_vectors or save."""
    kept = {}
    for part in parts:
        with np.load(part) as data:
            kept.update(zip(map(bytes, data["keys"]), data["vectors"]))
    return kept


def save(kept: dict[bytes, np.ndarray], file) -> None:
    """Write {key: vector} to `file` (a path or an open file), its keys sorted, its vectors float16."""
    from labkit import minilm

    keys = sorted(kept)
    np.savez(file, keys=np.array([np.frombuffer(key, np.uint8) for key in keys]).reshape(-1, minilm.KEY_BYTES),
             vectors=np.array([kept[key] for key in keys], np.float16).reshape(-1, minilm.DIMENSIONS))


def record(labs: list[str], out: str) -> None:
    """Run the labs here, one after another, then write every vector this process computed."""
    if labs == ["explorers"]:
        record_explorers(out)
        return
    atexit.register(write_vectors, out)
    for lab in labs:
        if lab == "questions":
            import academy_llm
            academy_llm.embed([q["question"] for q in academy_llm.corpus_questions()], "minilm")
            continue
        sys.argv = [str(next((ROOT / "solutions").glob(f"{lab}-*.py")))]
        try:
            runpy.run_path(sys.argv[0], run_name="__main__")
        except SystemExit:  # a lab's own check may stop it: the vectors it computed are kept all the same
            pass


def shipped() -> dict[bytes, np.ndarray]:
    """The file as it is now, {key: vector} (empty where there is no file)."""
    from labkit import minilm

    return merged([minilm.COURSE_VECTORS]) if minilm.COURSE_VECTORS.is_file() else {}


def main(full: bool) -> None:
    before = {} if full else shipped()
    failed = []
    with tempfile.TemporaryDirectory() as folder:
        environment = dict(os.environ, ACADEMY_EMBEDDER="minilm", ACADEMY_COURSE_VECTORS="0" if full else "1",
                           ACADEMY_CACHE_DIR=str(Path(folder) / "cache"), MPLBACKEND="Agg")
        parts = [str(Path(folder) / f"{n}.npz") for n in range(len(GROUPS))]

        def run(n: int) -> None:
            done = subprocess.run([sys.executable, __file__, "--record", parts[n], *GROUPS[n]], env=environment,
                                  cwd=folder, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            print(f"{', '.join(GROUPS[n])}: exit {done.returncode}", done.stderr.strip().splitlines()[-1:],
                  flush=True)
            if done.returncode:
                failed.append(n)

        with ThreadPoolExecutor(len(GROUPS)) as pool:
            list(pool.map(run, range(len(GROUPS))))
        kept = merged([part for part in parts if Path(part).is_file()])  # a group that failed may have written none
    dropped = before.keys() - kept.keys()
    if failed:  # a lab that stopped early did not embed all it embeds: what it did not reach is kept
        kept = before | kept
        print("a group of labs stopped on an error (above): nothing is dropped from the file this time")
    out = ROOT / "embeddings" / "all-MiniLM-L6-v2.orbit.npz"
    out.parent.mkdir(exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=out.parent, suffix=".npz", delete=False) as file:  # whole, or not at all
        save(kept, file)
    os.replace(file.name, out)
    print(f"{out.relative_to(ROOT)}: {len(kept):,} texts, {out.stat().st_size / 1e6:.1f} MB")
    if not full:
        print(f"  {len(before.keys() & kept.keys()):,} kept from the file, {len(kept.keys() - before.keys()):,} "
              f"embedded now, {0 if failed else len(dropped):,} dropped (no lab embeds them any more)")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--record"]:
        record(sys.argv[3:], sys.argv[2])
    elif sys.argv[1:] in ([], ["--full"]):
        main(full=sys.argv[1:] == ["--full"])
    else:
        raise SystemExit("usage: python tools/make_course_vectors.py [--full]")
