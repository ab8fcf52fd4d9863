"""A lab's one dial: a setting the student changes and reruns, and what recall does at each value.

The lab cuts every page of the corpus once for each value of its dial (with the student's own
chunker) and hands the chunks here. Each value gets its recall@k over the corpus's test questions
with a 95% interval, and the tokens a reader of its top k chunks reads; neighbouring values are
compared question by question (the interval of the per-question differences), and the sentences printed say only what
those intervals show. A number that decides a verdict is printed with the digits it needs: an
interval whose low end is 0.001 is not printed as [+0.00, ...] beside the word "more".
"""

from __future__ import annotations

import textwrap

from labkit.retrieval import Recall, recall_of_chunks
from labkit.uncertainty import NOT_SHOWN, paired_difference


def say(sentence: str) -> None:
    """Print a sentence the data supports, wrapped under its table."""
    print(textwrap.fill(sentence, width=96, initial_indent="   ", subsequent_indent="   "))


def dial_report(setting: str, chunks_by_value: dict, k: int = 5) -> dict[object, Recall]:
    """Print recall@k with its interval for each value of the dial ({value: {doc_id: chunks}}),
    the tokens a reader reads, each step to the next value question by question, and the
    sentence those intervals support. Returns {value: Recall}."""
    results = {value: recall_of_chunks(chunks, k) for value, chunks in chunks_by_value.items()}
    first = next(iter(results.values()))
    print(f"   recall@{k}: the share of each answer that one of the top {k} chunks holds whole, over "
          f"{len(first.scores)} test questions; [low, high]: a 95% interval (mean ± 1.96 standard errors)")
    print(f"   {setting:>22} {'chunks':>7} {f'recall@{k} [95%]':>20} {'tokens read':>12}")
    for value, recall in results.items():
        chunks = sum(len(page) for page in chunks_by_value[value].values())
        read = sum(recall.read) / len(recall.read)
        print(f"   {value!s:>22} {chunks:>7} {recall.interval().plain():>20} {read:>12.0f}")
    steps = list(zip(results, list(results)[1:]))
    verdicts = []
    for low, high in steps:
        difference = paired_difference(results[low].scores, results[high].scores)
        verdicts.append(difference.verdict())
        print(f"   {low} -> {high}: recall@{k} {difference}, {difference.verdict()}")
    if not steps:
        return results
    if len(set(verdicts)) == 1 and verdicts[0] != NOT_SHOWN:
        found = (f"each step up the {setting} dial finds {verdicts[0]} answers whole in the top {k}, "
                 "every interval leaving 0 out")
    elif set(verdicts) == {NOT_SHOWN}:
        found = f"no step up the {setting} dial shows a difference in recall@{k}: every interval holds 0"
    else:
        found = (f"the steps up the {setting} dial find: "
                 + "; ".join(f"{low} -> {high} {verdict}" for (low, high), verdict in zip(steps, verdicts))
                 + f" (\"{NOT_SHOWN}\": the interval holds 0)")
    (low, first), (high, last) = list(results.items())[0], list(results.items())[-1]
    say(f"On these questions, {found}. A reader of the top {k} reads {sum(first.read) / len(first.read):.0f} "
        f"tokens a question at {low} and {sum(last.read) / len(last.read):.0f} at {high}.")
    return results
