"""Markdown of any size for compare's time and memory: the real-Markdown corpus, copied and varied.

    python benchmarks/varied_corpus.py 30 /tmp/md30 --one-file   # one 30 MB file
    python benchmarks/varied_corpus.py 100 /tmp/md100            # 100 MB in files of the corpus's sizes

Copy k of the corpus (k > 0) has its lower-case vowels rotated k places (k % 5, at least 1) and its
digits k % 10 places (3 for a multiple of 10): every copy's chunks are new texts to the embedding cache
and to the embedder, as a larger corpus's would be, while the Markdown's structure (headings, fences,
tables, lists, links, front matter) stays as it was. The answers of the corpus's questions are found in
copy 0 only, once. Nothing made here is kept in the repository.
"""

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from real_markdown import corpus_files, read_text  # noqa: E402

VOWELS, DIGITS = "aeiou", "0123456789"


def varied(text: str, copy: int) -> str:
    """Copy `copy` of a text: the original for 0, its vowels and digits rotated for the others."""
    if copy == 0:
        return text
    vowels, digits = copy % 5 or 1, copy % 10 or 3
    return text.translate(str.maketrans(VOWELS + DIGITS, VOWELS[vowels:] + VOWELS[:vowels]
                                        + DIGITS[digits:] + DIGITS[:digits]))


def write(megabytes: int, folder: Path, one_file: bool) -> tuple:
    """Write about `megabytes` MB (UTF-8) of varied copies into `folder`; (bytes, copies begun)."""
    texts = [read_text(path) for path in corpus_files()]
    folder.mkdir(parents=True, exist_ok=True)
    written, copy, pieces = 0, 0, []
    while written < megabytes * 1_000_000:
        for number, text in enumerate(texts):
            piece = varied(text, copy)
            if one_file:
                pieces.append(piece if piece.endswith("\n") else piece + "\n")
            else:
                (folder / f"copy{copy:02d}-{number:03d}.md").write_text(piece, encoding="utf-8", newline="")
            written += len(piece.encode("utf-8"))
            if written >= megabytes * 1_000_000:
                break
        copy += 1
    if one_file:
        (folder / "big.md").write_text("\n".join(pieces), encoding="utf-8", newline="")
    return written, copy


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("megabytes", type=int)
    parser.add_argument("folder", type=Path)
    parser.add_argument("--one-file", action="store_true", help="one file, the copies one after another")
    arguments = parser.parse_args()
    size, copies = write(arguments.megabytes, arguments.folder, arguments.one_file)
    print(f"{arguments.folder}: {size / 1e6:.1f} MB, {copies} copies of the corpus begun")
