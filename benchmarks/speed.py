"""Speed: MB of text chunked per second, and how time grows with the input.

MB/s is the UTF-8 bytes of the input over the best of several runs, all in
this process, on the same input. A run's seconds are this process's CPU
time: the machine the README's numbers come from is shared, and wall-clock
time there measures the neighbours too. Every chunker here works on one
thread, so on an idle machine the two clocks agree. The runs are taken in
rounds, every chunker once per round, so that a change in the machine's load
touches all of them alike; before each run the library's memo caches are
emptied and garbage is collected, so no run is helped by the one before. tiktoken encoding the same
text is timed the same way: a chunker that counts tokens has to tokenize the
text at least once, so that is the floor of its cost.
"""

from __future__ import annotations

import gc
import math
import random
import re
import time
from functools import partial

from academy_llm import token_positions, tokenizer

from chunkers import CONTENDERS, COURSE, MARKDOWN, PEERS, RECURSIVE, taking_part
from tables import table

FLOOR = "tiktoken encode (floor)"
SHARE_OF_TIKTOKEN = (0.75, 0.6)  # the least share of tiktoken's speed for rag5, then rag6
REAL_MARKDOWN_SHARE = 0.7  # the least share of tiktoken's speed for rag6 on real Markdown, no overlap
REAL_MARKDOWN = "real Markdown "  # how the real-Markdown columns begin (speed_table: name, size/overlap)
COMPILED = "chonkie recursive"  # a recursive splitter in compiled code, which rag6 must keep up with
GROWTH = (1, 4, 16)  # copies of the corpus, as one document
GROWTH_RUNS = 3  # the time of a size is the best of 3 runs, even in a quick run: one run is noise
TOLERANCE = 1.25  # "linear": time per MB at the largest size within 25% of the smallest
WORD = re.compile(r"[A-Za-z]{4,}")


def megabytes(documents):
    return sum(len(text.encode("utf-8")) for _, text in documents) / 1e6


def repeated_corpus(pages, copies):
    """The corpus `copies` times as one document, each copy with its words renamed (renamed_copies)."""
    return "".join(renamed_copies(pages, copies))


def renamed_copies(pages, copies):
    """The corpus `copies` times, as a list of texts, each copy with its words renamed.

    Identical copies would flatter the libraries that memoize token counts
    (semchunk and chonkie do): every piece of a later copy would be a cache
    hit. So in copy n each word of four or more letters becomes another word of
    the corpus of the same length, by a shuffle seeded with n. The text stays
    made of real words, and Markdown's syntax, which is punctuation, stays as
    it is. The first copy is renamed too, so the text is made the same way at
    every size (renamed words take about 5% more tokens per byte).
    """
    text = "".join(pages)
    by_length = {}
    for word in sorted(set(WORD.findall(text))):
        by_length.setdefault(len(word), []).append(word)
    parts = []
    for number in range(1, copies + 1):
        shuffle = random.Random(number).shuffle
        renamed = {}
        for words in by_length.values():
            others = list(words)
            shuffle(others)
            renamed.update(zip(words, others))
        parts.append(WORD.sub(lambda match: renamed[match.group()], text))
    return parts


def chunk_all(contender, documents, size, overlap):
    for title, text in documents:
        contender.run(text, size, overlap, title)


def race(entries, runs):
    """{name: best CPU seconds} of entries {name: (work, forget)}: one warm-up call each, then `runs` rounds.

    Each round starts with the course tokenizer's memo of recent texts emptied (token_positions keeps
    the last few), so that no run is timed on a text an earlier run tokenized.
    """
    for work, _ in entries.values():
        work()
    best = dict.fromkeys(entries, math.inf)
    for _ in range(runs):
        for name, (work, forget) in entries.items():
            forget()
            token_positions.cache_clear()
            gc.collect()
            began = time.process_time()
            work()
            best[name] = min(best[name], time.process_time() - began)
    return best


def entries_for(documents, size, overlap):
    """{name: (work, forget)} for race(): tiktoken and every chunker that can run with `overlap`, on [(title, text)]."""
    encoding = tokenizer()
    entries = {FLOOR: (lambda: [encoding.encode_ordinary(text) for _, text in documents], lambda: None)}
    for contender in taking_part(overlap):
        entries[contender.name] = (partial(chunk_all, contender, documents, size, overlap), contender.forget)
    return entries


def speeds_on(documents, size, overlap, runs):
    """{name: MB/s} of tiktoken and of every chunker that can run with `overlap`, on [(title, text)]."""
    return {name: megabytes(documents) / seconds
            for name, seconds in race(entries_for(documents, size, overlap), runs).items()}


def speed_table(datasets, runs):
    """MB/s of every chunker on each dataset [(name, size, [(title, text)])], overlap 0 and an eighth.

    Each document is chunked on its own, as a product would. Returns {column: {chunker: MB/s}}.
    """
    speeds = {}
    for name, size, documents in datasets:
        for overlap in (0, size // 8):
            speeds[f"{name} {size}/{overlap}"] = speeds_on(documents, size, overlap, runs)
    print(f"\n### Speed: MB/s (by CPU time), best of {runs} runs\n")
    names = [FLOOR] + [c.name for c in CONTENDERS]
    print(table(["chunker"] + list(speeds), [
        [name] + [f"{column[name]:.2f}" if name in column else "n/a" for column in speeds.values()] for name in names
    ]))
    print("\nThe course's speed as a multiple of each peer's and of tiktoken's (columns as above, / between them):\n")
    others = [p.name for p in PEERS] + [FLOOR]
    print(table(["course chunker"] + others, [
        [ours.name] + [" / ".join(f"{c[ours.name] / c[other]:.2f}" for c in speeds.values() if other in c)
                       for other in others]
        for ours in COURSE
    ]))
    return speeds


def growth_table(pages, size, runs, steps=GROWTH):
    """MB/s with documents of each size in `steps` (copies of the corpus); returns {chunker: time ratio}.

    Every run chunks the same text, `steps[-1]` renamed copies of the corpus,
    cut into documents of `copies` copies each: 16 documents of 1x, 4 of 4x,
    1 of 16x. Only the size of the documents changes, so a linear chunker
    takes the same time at every size. (Timing a 1x text against a 16x text
    instead would compare runs of 60 ms with runs of a second, and on a shared
    machine the best of a few short runs is luckier than the best of long ones.)
    Every size runs in every round, as every chunker does in speed_table, so
    that a neighbour busy only while one size ran does not make it look slow.
    The ratio returned is the time at the largest size, scaled as if the
    input had grown from the smallest: `steps[-1] // steps[0]` when linear.
    """
    copies_of_corpus = renamed_copies(pages, steps[-1])
    inputs = [[("Orbit docs", "".join(copies_of_corpus[first : first + copies]))
               for first in range(0, steps[-1], copies)] for copies in steps]
    entries = {(step, name): work for step, documents in enumerate(inputs)
               for name, work in entries_for(documents, size, 0).items()}
    seconds = race(entries, runs)  # every size in every round: a change in load touches all sizes alike
    speeds = [{name: megabytes(documents) / seconds[step, name] for (at, name) in entries if at == step}
              for step, documents in enumerate(inputs)]
    factor = steps[-1] // steps[0]
    growth = {name: factor * speeds[0][name] / speeds[-1][name] for name in speeds[0]}
    print(f"\n### Growth with input size: {steps[-1]} copies of the Orbit corpus (words renamed in each copy)"
          f" chunked as documents of {', '.join(f'{c}x' for c in steps)} copies, {size}/0, best of {runs}\n")
    megabytes_of_corpus = megabytes(inputs[-1]) / steps[-1]
    headers = ["chunker"] + [f"MB/s, documents of {copies}x ({copies * megabytes_of_corpus:.1f} MB)"
                             for copies in steps]
    print(table(headers + [f"time {steps[-1]}x / {steps[0]}x"], [
        [name] + [f"{speed[name]:.2f}" for speed in speeds] + [f"{growth[name]:.1f}"] for name in speeds[0]
    ]))
    print(f"(the last column is the time for a {steps[-1]}x document over the time for a {steps[0]}x one:"
          f" {factor} when the time grows linearly)")
    return growth


def print_targets(speeds, growth, steps=GROWTH):
    """The speed targets of the recursive and Markdown chunkers, with the numbers that decide them."""
    column = next(iter(speeds))  # Markdown (the Orbit docs) with no overlap: every peer takes part
    mb_s = speeds[column]
    factor = steps[-1] // steps[0]
    pure = [p.name for p in PEERS if p.pure_python]
    fastest = max(pure, key=mb_s.get)
    print(f"\nSpeed targets, on {column}:")
    for ours, share in zip((RECURSIVE, MARKDOWN), SHARE_OF_TIKTOKEN):
        mine = mb_s[ours.name]
        checks = [
            (f"at least {share} of tiktoken's speed: {mine:.2f} of {mb_s[FLOOR]:.2f} MB/s "
             f"({mine / mb_s[FLOOR]:.2f})", mine >= share * mb_s[FLOOR]),
            (f"faster than every pure-Python peer (the fastest, {fastest}: {mb_s[fastest]:.2f} MB/s)",
             all(mine > mb_s[name] for name in pure)),
            (f"linear: time grows {growth[ours.name]:.1f}x for {factor}x the text",
             growth[ours.name] <= TOLERANCE * factor),
        ]
        if ours is MARKDOWN and COMPILED in mb_s:  # Markdown-aware, and still as fast as a compiled splitter
            checks.append((f"at least as fast as {COMPILED}: {mb_s[COMPILED]:.2f} MB/s", mine >= mb_s[COMPILED]))
        if ours is MARKDOWN:
            checks += real_markdown_checks(speeds)
        for text, ok in checks:
            print(f"- {ours.name}, {text}: {'met' if ok else 'NOT met'}")


def real_markdown_checks(speeds):
    """rag6's target on what people write: its share of tiktoken's speed on the real-Markdown column
    without overlap, as (text, met) for print_targets; none if the run had no such column."""
    column = next((name for name in speeds if name.startswith(REAL_MARKDOWN) and name.endswith("/0")), None)
    if column is None:
        return []
    mb_s = speeds[column]
    mine, floor = mb_s[MARKDOWN.name], mb_s[FLOOR]
    return [(f"at least {REAL_MARKDOWN_SHARE} of tiktoken's speed on {column}: {mine:.2f} of {floor:.2f} MB/s "
             f"({mine / floor:.2f})", mine >= REAL_MARKDOWN_SHARE * floor)]
