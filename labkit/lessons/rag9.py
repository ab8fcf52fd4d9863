"""rag9's given ground: its page, what its demonstration prints (the distances, the page's chunks,
where its front matter went, one question's ranks), the comparison with the earlier labs' chunks over
the corpus, the dial's table, and the checks the lab ends with. A curious student may read it; the
lab is learnt without it.

The earlier labs' chunks are given ground (labkit/ground.py): what the reference rag5 and rag7 cut
of the course's pages, shipped as data, so a student stuck on those labs still runs this one. Every
measure is recall within READ_BUDGET tokens: each question reads its best chunks, best first, until
the next would pass the budget, and scores the share of its answer that one of them holds whole.
Small chunks and big ones are read at the same cost, so a dial that changes their size is fair.

The checks judge the student's chunker from the text and from the student's own pieces, never by a
reference: chunks lossless and in budget, a chunk starting at every breakpoint the student's own
distances give, sentences packed full between them, and the public grading tests. None of them
depends on what one embedder ranks first.
"""

from __future__ import annotations

import numpy as np

from academy_llm import (
    DEFAULT_EMBEDDER, check_chunking, corpus_pages, corpus_questions, describe_embedder, embed, embedder_name, top_k,
    top_k_each,
)
from labkit import ground
from labkit.cases import Case, Invariants, returns, tricky_cases
from labkit.lessons.dial import say
from labkit.lessons.rag8 import within_budget
from labkit.markdown import front_matter
from labkit.plots import show_figure
from labkit.retrieval import KINDS, Recall, answer_shares
from labkit.semantic import pair_scores, scores_with_later, sentence_spans
from labkit.token_index import TokenIndex
from labkit.uncertainty import NOT_SHOWN, claim, paired_difference
from labkit.view import view_chunks

PAGE = "field-notes"  # an operator's essay with no headings: meaning is all there is to go by
QUESTION_ID = "w4-037"  # a dev-split question about the page, with its answer's span
READ_BUDGET = 1000  # tokens a question reads
METHODS = ("breakpoints", "global")
EARLIER = {"rag5 recursive": "rag5-256-no-overlap", "rag7 md + header": "rag7-header-256-no-overlap"}  # given ground
MAX_SENTENCES = 48  # semantic_chunks' default for "global"

# --------------------------------------------------------------------------
# 1. The pieces on cases worked out by hand, in the lab's order
# --------------------------------------------------------------------------

SENTENCES = "Sun. Rain. Snow. Wind."
SENTENCE_SPANS = [(0, 5), (5, 11), (11, 17), (17, 22)]
TWO_TOPICS = np.array([[1.0, 0.0]] * 3 + [[0.0, 1.0]] * 3)  # 6 sentences, the topic changes at 3
SEMANTIC_SETTINGS = (
    dict(max_tokens=8, method="breakpoints"), dict(max_tokens=8, method="global"),
    dict(max_tokens=64, method="breakpoints"), dict(max_tokens=64, method="global"),
)


def with_later_of(vectors, max_sentences):
    """The with_later table best_cuts reads, for `vectors`."""
    return scores_with_later(pair_scores(vectors, max_sentences))


def check_topic_cuts(cuts, with_later, sentence_tokens, max_tokens, max_sentences):
    """Raise ValueError unless `cuts` cut TWO_TOPICS where its topic changes, into chunks of at
    most max_sentences sentences and max_tokens tokens."""
    bounds = [0, *cuts, len(sentence_tokens)]
    if 3 not in cuts or bounds != sorted(set(bounds)):
        raise ValueError(f"returned {cuts}: expected cuts in order, 3 among them (where the topic changes)")
    for first, last in zip(bounds, bounds[1:]):
        tokens = sum(sentence_tokens[first:last])
        if last - first > max_sentences or tokens > max_tokens:
            raise ValueError(f"returned {cuts}: sentences {first} to {last - 1} make a chunk of "
                             f"{last - first} sentences, {tokens} tokens")


def semantic_judge(semantic_chunks):
    """A judge of semantic_chunks' result: lossless, in budget, truly counted, the same again."""

    def judge(chunks, text, max_tokens, method):
        check_chunking(text, chunks, max_tokens)
        if semantic_chunks(text, max_tokens, method) != chunks:
            raise ValueError("a second call gave other chunks: not deterministic")

    return judge


def piece_cases(lab: dict) -> list[Case]:
    """The hand-worked cases, in the order the lab's functions come, then semantic_chunks on the
    course's tricky texts: the lab stops at the first TODO it meets, the first in the file."""
    window_texts, neighbour_distances = lab["window_texts"], lab["neighbour_distances"]
    breakpoints, best_cuts, semantic_chunks = lab["breakpoints"], lab["best_cuts"], lab["semantic_chunks"]
    return [
        Case("one sentence", window_texts, ("Hi.", [(0, 3)], 2), returns(["Hi."])),
        Case("no neighbours", window_texts, (SENTENCES, SENTENCE_SPANS, 0),
             returns(["Sun. ", "Rain. ", "Snow. ", "Wind."])),
        Case("a neighbour on each side, cut at the ends", window_texts, (SENTENCES, SENTENCE_SPANS, 1),
             returns(["Sun. Rain. ", "Sun. Rain. Snow. ", "Rain. Snow. Wind.", "Snow. Wind."])),
        Case("one vector", neighbour_distances, (np.array([[1.0, 0.0]]),), returns([])),
        Case("known cosines", neighbour_distances, (np.array([[0.6, 0.8], [1.0, 0.0], [1.0, 0.0]]),),
             returns([0.4, 0.0])),
        Case("no distances", breakpoints, ([], 90), returns([])),
        Case("distances all equal to the threshold", breakpoints, ([0.3, 0.3, 0.3], 50), returns([])),
        Case("two jumps above the 60th percentile", breakpoints, ([0.1, 0.9, 0.2, 0.1, 0.8, 0.1], 60),
             returns([2, 5])),
        Case("one sentence", best_cuts, (with_later_of(TWO_TOPICS[:1], 4), [5], 100, 4), returns([])),
        Case("two topics", best_cuts, (with_later_of(TWO_TOPICS, 6), [5] * 6, 100, 6), returns([3])),
        Case("two topics, 2 sentences a chunk at most", best_cuts,
             (with_later_of(TWO_TOPICS, 2), [1] * 6, 100, 2), check_topic_cuts),
        Case("two topics, 20 tokens a chunk at most", best_cuts,
             (with_later_of(TWO_TOPICS, 6), [10] * 6, 20, 6), check_topic_cuts),
        Case("an unknown method", semantic_chunks, ("Some text.", 64), returns(None), dict(method="magic"),
             raises=ValueError),
        Case("a budget of no tokens", semantic_chunks, ("Some text.", 0), returns(None), raises=ValueError),
    ] + tricky_cases(semantic_chunks, semantic_judge(semantic_chunks), SEMANTIC_SETTINGS)


def check_pieces(lab: dict) -> bool:
    """Step 1: every piece on its hand-worked cases; False (and why) if one goes wrong. The embedder,
    when it is not the default, is named first: every step cuts and measures with it."""
    if embedder_name() != DEFAULT_EMBEDDER:
        print(f"Embedder: {describe_embedder()} (ACADEMY_EMBEDDER), in every step\n")
    print("1. The pieces, checked on cases worked out by hand and on tricky texts")
    checks = Invariants("rag9")
    if checks.check_cases("window_texts to semantic_chunks agree with the cases", piece_cases(lab)):
        return True
    print("   A wrong piece makes every number after it wrong: fix it, then measure.")
    return checks.verdict()


# --------------------------------------------------------------------------
# 2-3. The page: its distances, its chunks, its front matter, one question
# --------------------------------------------------------------------------


def page_text() -> str:
    return corpus_pages()[PAGE]


def plot_distances(text: str, spans, distances, cuts, percentile) -> None:
    """Plot the distances between neighbouring windows of the page, the threshold and the cuts."""
    from matplotlib.figure import Figure

    threshold = float(np.percentile(distances, percentile))
    figure = Figure(figsize=(8, 3.2), layout="constrained")
    axes = figure.subplots()
    axes.plot(range(1, len(distances) + 1), distances, color="#4c72b0", linewidth=1)
    axes.axhline(threshold, color="#c44e52", linestyle="--", label=f"{percentile}th percentile")
    axes.scatter(cuts, [distances[c - 1] for c in cuts], color="#c44e52", zorder=3, label="cut")
    axes.set_xlabel("sentence boundary")
    axes.set_ylabel("cosine distance")
    axes.set_title(f"{PAGE}: distance between neighbouring sentence windows")
    axes.legend(loc="upper center")
    print(f"\n2. {PAGE}: {len(spans)} sentences, {len(cuts)} breakpoints, where the distance is above "
          f"{threshold:.3f},\n   the {percentile}th percentile of its {len(distances)} distances between neighbouring "
          "windows")
    show_figure(figure, "rag9-distances.png")


def rank_of_answer(chunks, question: dict):
    """Rank (1 = best) of the first chunk holding the question's whole answer, or None."""
    vectors = embed([c.embedding_text for c in chunks])
    for place, (row, _) in enumerate(top_k(embed([question["question"]])[0], vectors, len(chunks)), 1):
        if chunks[row].start <= question["start"] and question["end"] <= chunks[row].end:
            return place
    return None


def show_page(text: str, chunks: dict, max_tokens: int) -> None:
    """Step 3: the page's chunks by breakpoints, where each method put its front matter, and the rank
    each gives one question's answer (one question: a look, not a comparison)."""
    print(f"\n3. {PAGE} in {len(chunks['breakpoints'])} chunks by breakpoints and {len(chunks['global'])} "
          f"by global ({max_tokens} tokens at most); three by breakpoints:")
    view_chunks(text, chunks["breakpoints"], first=1, limit=3)
    say_front_matter(text, chunks)
    question = next(q for q in corpus_questions() if q["id"] == QUESTION_ID)
    print(f"   {question['question']!r}")
    for method, made in chunks.items():
        rank = rank_of_answer(made, question)
        print(f"     {method:<12} rank of the first chunk holding the whole answer: "
              f"{rank if rank else 'none holds it whole'}")
    print("   One question shows how each method ranks it; it does not show which finds more. Step 4\n"
          "   compares them over every test question, with intervals.")


def say_front_matter(text: str, chunks: dict) -> None:
    """How many chunks of each method share the page's front matter: a semantic chunker reads its
    `key: value` lines as sentences, and may cut between them."""
    end = front_matter(text)[1]
    if not end:
        return
    pieces = {method: sum(c.start < end for c in made) for method, made in chunks.items()}
    print(f"   The front matter, characters [0, {end}), is in "
          + ", ".join(f"{count} chunk{'s' * (count != 1)} by {method}" for method, count in pieces.items()) + ".")
    cut_by = [method for method, count in pieces.items() if count > 1]
    if cut_by:
        say(f"Cut apart by {' and '.join(cut_by)}: a semantic chunker reads each `key: value` line as a "
            "sentence and may cut between them; rag6, which reads the Markdown, keeps front matter whole "
            "as one block.")
    else:
        say("Neither method cut it apart here; nothing in them keeps it whole, though: each reads its "
            "`key: value` lines as sentences, where rag6 reads front matter as one block.")


# --------------------------------------------------------------------------
# 4-5. Over the corpus: recall within READ_BUDGET tokens, with intervals
# --------------------------------------------------------------------------


def recall_within(chunks_by_page: dict, budget: int = READ_BUDGET, split: str = "test") -> Recall:
    """Each `split` question's recall when it reads its best chunks, best first, while they fit in
    `budget` tokens: the share of its answer spans one chunk read holds whole. `read`: tokens read."""
    chunks = [(page, chunk) for page, page_chunks in chunks_by_page.items() for chunk in page_chunks]
    questions = corpus_questions(split)
    depth = min(len(chunks), budget)  # a chunk holds a token at least
    ranked = top_k_each(embed([q["question"] for q in questions]), embed([c.embedding_text for _, c in chunks]), depth)
    found, read = [], []
    for top in ranked:
        taken = within_budget([chunks[row] for row, _ in top], [chunks[row][1].n_tokens for row, _ in top], budget)
        found.append([(page, chunk.start, chunk.end) for page, chunk in taken])
        read.append(sum(chunk.n_tokens for _, chunk in taken))
    return Recall(budget, tuple(q["kind"] for q in questions), tuple(answer_shares(questions, found)), tuple(read))


def compare(semantic: dict, max_tokens: int) -> dict:
    """Step 4: recall within READ_BUDGET tokens by kind, the semantic methods ({method: {page:
    chunks}}) beside the earlier labs' chunks at the same budget (given ground); then each semantic
    method minus markdown + header, question by question. Returns {name: Recall}."""
    chunkings = {name: ground.chunks(set_name) for name, set_name in EARLIER.items()}
    chunkings.update(semantic)
    results = {name: recall_within(chunks) for name, chunks in chunkings.items()}
    any_result = next(iter(results.values()))
    kinds = [kind for kind in (*KINDS, "all") if any_result.of(kind)]
    print(f"\n4. Over the corpus ({len(corpus_pages())} pages, {len(any_result.scores)} test questions, "
          f"{max_tokens}-token chunks, {describe_embedder()}): recall within {READ_BUDGET:,} tokens read")
    print("   [low, high]: a 95% interval over the questions (the mean plus or minus 1.96 standard errors);\n"
          "   breakpoints and global: your chunks; the earlier labs': the course's own, given as data (md: Markdown)")
    print(f"   {'kind (questions)':<20}" + "".join(f"{name:>19}" for name in results))
    for kind in kinds:
        print(f"   {f'{kind} ({len(any_result.of(kind))})':<20}"
              + "".join(f"{result.interval(kind).plain():>19}" for result in results.values()))
    print(f"   {'chunks':<20}" + "".join(f"{sum(map(len, c.values())):>19}" for c in chunkings.values()))
    other = "rag7 md + header"
    for ours in semantic:
        differences = {kind: paired_difference(results[other].of(kind), results[ours].of(kind)) for kind in kinds}
        shown = [f"{differences[kind].verdict()} on {kind} ({differences[kind]})" for kind in kinds[:-1]
                 if differences[kind].shown]
        say(f"{claim(differences['all'], ours, other, f'recall within {READ_BUDGET:,} tokens')}, question by "
            "question. By kind, it finds " + ("; ".join(shown) + f"; elsewhere a difference is {NOT_SHOWN}"
                                              if shown else "no difference this data shows on any kind") + ".")
    return results


def check_dial(percentiles) -> None:
    """Refuse a dial that cannot run, before any measuring: each value a number from 0 to 100."""
    if not percentiles or not all(isinstance(p, (int, float)) and not isinstance(p, bool) and 0 <= p <= 100
                                  for p in percentiles):
        raise SystemExit(f"PERCENTILES must be numbers from 0 to 100, at least one; it is {percentiles!r}")


def dial(setting: str, chunks_by_value: dict, max_tokens: int, reference) -> None:
    """Step 5: for each value of the dial ({value: {page: chunks}}), its chunks, their mean tokens and
    recall within READ_BUDGET tokens with its interval; each step to the next value question by
    question; and the sentence those intervals support."""
    print(f"\n5. The dial: breakpoints at each {setting} of {', '.join(map(str, chunks_by_value))}, "
          f"chunks of at most {max_tokens} tokens")
    results = {value: recall_within(chunks) for value, chunks in chunks_by_value.items()}
    first = next(iter(results.values()))
    print(f"   recall within {READ_BUDGET:,} tokens read, {len(first.scores)} test questions; [low, high]: a 95% "
          "interval;\n   each step from one value to the next paired over the same questions")
    print(f"   {setting:>10} {'chunks':>7} {'tokens a chunk':>15} {'recall [95%]':>20}")
    for value, recall in results.items():
        chunks = [c for page in chunks_by_value[value].values() for c in page]
        print(f"   {value!s:>10} {len(chunks):>7} {sum(c.n_tokens for c in chunks) / len(chunks):>15.0f} "
              f"{recall.interval().plain():>20}" + ("   (semantic_chunks' own)" if value == reference else ""))
    values = list(results)
    shown = []
    for low, high in zip(values, values[1:]):
        difference = paired_difference(results[low].scores, results[high].scores)
        print(f"   {low} -> {high}: {difference}, {difference.verdict()}")
        if difference.shown:
            shown.append(f"from {low} to {high} it finds {difference.verdict()} ({difference})")
    if len(values) > 1:
        ends = paired_difference(results[values[0]].scores, results[values[-1]].scores)
        steps = ("; ".join(shown) + f"; elsewhere a step's difference is {NOT_SHOWN}" if shown
                 else "no step from one value to the next shows a difference: every interval holds 0")
        what = f"recall within {READ_BUDGET:,} tokens"
        say(f"{claim(ends, f'{setting} {values[-1]}', f'{setting} {values[0]}', what)}. Step by step, {steps}.")


# --------------------------------------------------------------------------
# The checks the lab ends with: true of correct code, whatever the embedder
# --------------------------------------------------------------------------


def cuts_of_your_breakpoints(lab: dict, text: str, max_tokens: int) -> tuple[list, set]:
    """(the page's sentence spans, the starts of the sentences the student's own breakpoints cut
    before), at semantic_chunks' defaults (a window of 1, the 90th percentile)."""
    spans = sentence_spans(text, max_tokens, TokenIndex(text))
    distances = lab["neighbour_distances"](embed(lab["window_texts"](text, spans, 1)))
    return spans, {spans[cut][0] for cut in lab["breakpoints"](distances, 90)}


def unpacked(chunks, spans, cuts: set, max_tokens: int, index: TokenIndex) -> str:
    """'' if `chunks` start at every cut and are packed full between them: each chunk that starts
    at no cut could not have taken its first sentence into the chunk before. Else what is wrong."""
    starts = {chunk.start for chunk in chunks}
    missing = sorted(cuts - starts)
    if missing:
        return f"no chunk starts at {missing[:5]}, where your breakpoints cut"
    sentence_end = dict(spans)
    for before, after in zip(chunks, chunks[1:]):
        end = sentence_end.get(after.start)
        if after.start not in cuts and end is not None and index.estimate(before.start, end) <= max_tokens:
            return (f"chunks [{before.start}, {before.end}) and [{after.start}, {after.end}) are in one group, and "
                    f"the first sentence of the second fits in the first ({index.estimate(before.start, end)} tokens)")
    return ""


def checks(lab: dict, text: str, page_chunks: dict, semantic: dict, max_tokens: int) -> bool:
    """The checks rag9 ends with, on the functions in `lab` (the lab's globals()): PASS or FAIL each,
    then the public grading tests. True when all pass."""
    semantic_chunks = lab["semantic_chunks"]
    pages = corpus_pages()
    print("\nInvariants")
    invariants = Invariants("rag9")
    pairs = [(pages[page], chunks) for by_page in semantic.values() for page, chunks in by_page.items()]
    invariants.check_chunks("nothing lost, exact slices, every chunk within budget (both methods, all pages)",
                            pairs, max_tokens)
    invariants.check("deterministic", semantic_chunks(text, max_tokens, "global") == page_chunks["global"])
    spans, cuts = cuts_of_your_breakpoints(lab, text, max_tokens)
    problem = unpacked(page_chunks["breakpoints"], spans, cuts, max_tokens, TokenIndex(text))
    invariants.check(f"breakpoints: a chunk starts at each of your {len(cuts)} breakpoints of {PAGE}, sentences "
                     "packed full between them", not problem, problem)
    sentence_starts = {start for start, _ in spans}
    too_long = [c for c in page_chunks["global"] if sum(start in sentence_starts for start, _ in spans
                                                        if c.start <= start < c.end) > MAX_SENTENCES]
    off = [c.start for c in page_chunks["global"] if c.start not in sentence_starts]
    invariants.check(f"global: every chunk of {PAGE} starts at a sentence and holds {MAX_SENTENCES} sentences at most",
                     not too_long and not off, "" if not too_long and not off else
                     f"chunks starting at {off[:5]} inside a sentence; {len(too_long)} over {MAX_SENTENCES} sentences")
    # Last, the public grading tests (tests/grading/test_rag9.py), run on the lab's functions as the
    # grader runs them, same examples and all: when they pass here, they pass there.
    invariants.check_public_tests(lab)
    return invariants.verdict()
