"""Mistakes students really make, each a small change to one student-written function.

A mutation takes the reference solution of a lab (solutions/), finds `old`
(exactly once, inside the answer region of `function`) and writes `new`
instead: the lab as a student who made that one mistake would hand it in. A
`given` mutation changes the given code of `function` instead: the grader grades
the whole file a student hands in, so a mistake there must cost points too.
tests/test_mutations.py runs every such lab as a student does and grades it,
to see whether the lab's own checks and the grader each notice the mistake.

The study runs in the deeper tier (`pytest -m heavy`): it runs a lab and a
grader per mistake, more than the default run's share of the two cores.
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutation:
    lab: str  # "rag5"
    function: str  # the student-written function the mistake is in
    mistake: str  # what the student got wrong, as a teacher would say it
    old: str  # text of the reference, found exactly once in the lab's solution file
    new: str  # what the student wrote instead
    given: bool = False  # the mistake is in given code of `function`: a student may change any line of a lab

    @property
    def name(self) -> str:
        return f"{self.lab}.{self.function}: {self.mistake}"


MUTATIONS = [
    # ---- rag4: word_windows, token_windows
    Mutation(
        "rag4", "word_windows", "windows step by size, ignoring the overlap",
        "for first in range(0, len(words), size - overlap):",
        "for first in range(0, len(words), size):",
    ),
    Mutation(
        "rag4", "word_windows", "keeps making windows after the one that holds the last word",
        "        if last == len(words) - 1:\n            break\n",
        "",
    ),
    Mutation(
        "rag4", "token_windows", "never drops the last token while the window is over budget",
        "        while count_tokens(text[starts[first] : ends[last]]) > max_tokens:\n"
        "            if last == first:\n"
        "                piece = text[starts[first] : ends[first]]\n"
        "                raise ValueError(\n"
        '                    f"{piece!r} at offset {starts[first]} needs '
        '{count_tokens(piece)} tokens "\n'
        '                    f"and cannot be cut: no token starts inside it; use max_tokens >= '
        '{count_tokens(piece)}"\n'
        "                )\n"
        "            last -= 1\n",
        "",
    ),
    Mutation(
        "rag4", "token_windows", "the next window starts a token late: overlap - 1, a gap at 0",
        "first = max(last + 1 - overlap, first + 1)",
        "first = max(last + 2 - overlap, first + 1)",
    ),
    Mutation(
        "rag4", "token_windows", "the next window starts a token early: overlap + 1, shared at 0",
        "first = max(last + 1 - overlap, first + 1)",
        "first = max(last - overlap, first + 1)",
    ),
    # ---- rag5: split_at_seams, pack, add_overlap
    Mutation(
        "rag5", "add_overlap",
        "seeks a word start up to the chunk's end, and no case for overlap 0",
        "    if overlap == 0:\n"
        "        return chunks\n"
        "    result = [chunks[0]]\n"
        "    for (previous_start, _), (start, end) in zip(chunks, chunks[1:]):\n"
        "        position = int(index.starts.searchsorted(start))\n"
        "        reach = max(int(index.starts[max(position - overlap, 0)]), previous_start)\n"
        "        result.append((next_clean_cut(text, reach, start), end))\n",
        "    result = [chunks[0]]\n"
        "    for (previous_start, _), (start, end) in zip(chunks, chunks[1:]):\n"
        "        position = int(index.starts.searchsorted(start))\n"
        "        reach = max(int(index.starts[max(position - overlap, 0)]), previous_start)\n"
        "        result.append((next_clean_cut(text, reach, end), end))\n",
    ),
    Mutation(
        "rag5", "add_overlap", "overlap counted in characters, not tokens",
        "reach = max(int(index.starts[max(position - overlap, 0)]), previous_start)",
        "reach = max(start - overlap, previous_start)",
    ),
    Mutation(
        "rag5", "pack", "the running total is never increased: merges past the budget",
        "            total += tokens\n",
        "",
    ),
    Mutation(
        "rag5", "pack", "never merges: one chunk per span",
        "            chunks[-1] = (chunks[-1][0], span_end)",
        "            chunks.append((span_start, span_end))",
    ),
    Mutation(
        "rag5", "split_at_seams", "token windows of a seamless run are not shifted by its start",
        "return [(start + w.start, start + w.end) for w in windows]",
        "return [(w.start, w.end) for w in windows]",
    ),
    # ---- rag6: read_blocks, pack_blocks, markdown_chunks, verify
    Mutation(
        "rag6", "read_blocks", "a shorter fence closes the block",
        'close = re.compile(r" {0,3}" + re.escape(fence[1][0]) + "{" + str(len(fence[1])) + r",}[ \\t]*$")',
        'close = re.compile(r" {0,3}" + re.escape(fence[1][0]) + r"{3,}[ \\t]*$")',
    ),
    Mutation(
        "rag6", "read_blocks", "a fence of the other character closes the block",
        'close = re.compile(r" {0,3}" + re.escape(fence[1][0]) + "{" + str(len(fence[1])) + r",}[ \\t]*$")',
        'close = re.compile(r" {0,3}[`~]{" + str(len(fence[1])) + r",}[ \\t]*$")',
    ),
    Mutation(
        "rag6", "read_blocks", "closing #s are kept in the title",
        'title = re.sub(r"(^|[ \\t]+)#+[ \\t]*$", "", line[heading.end():]).strip()',
        "title = line[heading.end():].strip()",
    ),
    Mutation(
        "rag6", "read_blocks", "a #tag is read as a heading: no space needed after the #s",
        "fence, heading = FENCE.match(line), HEADING.match(line)",
        'fence, heading = FENCE.match(line), re.match(r" {0,3}(#{1,6})", line)',
    ),
    Mutation(
        "rag6", "read_blocks", "any line with a pipe starts a table, delimiter row or not",
        '            if "|" in line and i + 1 < len(lines) and is_delimiter_row(lines[i + 1].text):',
        '            if "|" in line:',
    ),
    Mutation(
        "rag6", "read_blocks", "indented code keeps the blank lines after it",
        "            while blank[j]:\n                j -= 1\n",
        "",
    ),
    Mutation(
        "rag6", "read_blocks", "a heading right under a paragraph's line is read as part of it",
        "        return bool(FENCE.match(following) or HEADING.match(following) or (kind != \"quote\"",
        "        return bool(FENCE.match(following) or (kind != \"quote\"",
    ),
    Mutation(
        "rag6", "read_blocks", "a list ends at its first blank line",
        "                while kind == \"list\" and k < len(lines) and blank[k]:\n                    k += 1\n",
        "",
    ),
    Mutation(
        "rag6", "read_blocks", "a fence inside a list item stays in the list, as CommonMark reads it",
        "return bool(NESTED_FENCE.match(following) or HEADING.match(following)",
        "return bool(HEADING.match(following)",
    ),
    Mutation(
        "rag6", "read_blocks", "a fence never closed is one line long",
        "if close.match(lines[k].text)), len(lines) - 1)",
        "if close.match(lines[k].text)), i)",
    ),
    Mutation(
        "rag6", "pack_blocks", "the heading path is never popped",
        "path = tuple(entry for entry in path if entry[0] < block.level) + ((block.level, block.title),)",
        "path = path + ((block.level, block.title),)",
    ),
    Mutation(
        "rag6", "pack_blocks", "a sibling heading is kept beside the one it replaces (<=, not <)",
        "path = tuple(entry for entry in path if entry[0] < block.level) + ((block.level, block.title),)",
        "path = tuple(entry for entry in path if entry[0] <= block.level) + ((block.level, block.title),)",
    ),
    Mutation(
        "rag6", "pack_blocks", "a table over budget is cut at seams like a paragraph",
        'if block.kind in ("code", "table") and tokens > max_tokens:',
        'if block.kind == "code" and tokens > max_tokens:',
    ),
    Mutation(
        "rag6", "pack_blocks", "a heading joins the chunk before it",
        "if last and not last.oversize and last.section == section and block.kind != \"heading\":",
        "if last and not last.oversize and last.section in (section, section[:-1]):",
    ),
    Mutation(
        "rag6", "pack_blocks", "counts the chunk as the sum of its pieces, a token apart",
        "joined = index.count(last.start, piece_end)",
        "joined = last.n_tokens + index.count(piece_start, piece_end) + 1",
    ),
    Mutation(
        "rag6", "pack_blocks", "a code block or table over budget stands alone, but is not flagged oversize",
        "kind=block.kind, oversize=True))",
        "kind=block.kind))",
    ),
    Mutation(
        "rag6", "markdown_chunks", "reads the front matter as Markdown too",
        "\n    blocks = read_blocks(text, body)",
        "\n    blocks = read_blocks(text)",
    ),
    Mutation(
        "rag6", "markdown_chunks", "the front matter is packed with the body",
        "\n    chunks = [front_matter_chunk(text, body, max_tokens, index)] if body else []",
        "\n    chunks, body = [], 0",
    ),
    Mutation(
        "rag6", "verify", "a table's rows after its delimiter row are not checked",
        "            while j + 1 < len(lines) and lines[j + 1].text.strip():\n                j += 1\n",
        "            j += 1\n",
    ),
    Mutation(
        "rag6", "verify", "any fence line closes the fence",
        'not re.fullmatch(r" {0,3}" + re.escape(char) * length + r"+[ \\t]*", lines[j].text)',
        'not re.fullmatch(r" {0,3}(`{3,}|~{3,})[ \\t]*", lines[j].text)',
    ),
    Mutation(
        "rag6", "verify", "a chunk starting where a fence starts is taken for a cut (<=)",
        "                if start < position < end:\n",
        "                if start <= position < end:\n",
    ),
    Mutation(
        "rag6", "verify", "a fence never closed is not checked",
        '            last = lines[min(j, len(lines) - 1)]\n'
        '            regions.append(("fence", lines[i].start, last.start + len(last.text)))',
        '            if j < len(lines):\n'
        '                regions.append(("fence", lines[i].start, lines[j].start + len(lines[j].text)))',
    ),
    # ---- rag7: make_header, header_chunks, section_with_header, row_chunks, with_table_rows
    Mutation(
        "rag7", "section_with_header", "keeps the heading path the section's text alone gives, not the page's",
        "        chunks = [replace(c, start=start + c.start, end=start + c.end, section=section, header=header)",
        "        chunks = [replace(c, start=start + c.start, end=start + c.end, header=header)",
    ),
    Mutation(
        "rag7", "section_with_header", "gives the chunks no header",
        "        chunks = [replace(c, start=start + c.start, end=start + c.end, section=section, header=header)",
        "        chunks = [replace(c, start=start + c.start, end=start + c.end, section=section)",
    ),
    Mutation(
        "rag7", "section_with_header", "leaves the chunks at the section's offsets, not the page's",
        "        chunks = [replace(c, start=start + c.start, end=start + c.end, section=section, header=header)",
        "        chunks = [replace(c, section=section, header=header)",
    ),
    Mutation(
        "rag7", "section_with_header", "ignores overlap",
        "                  for c in rag6.robust_markdown_chunks(text[start:end], room, min(overlap, room - 1))]",
        "                  for c in rag6.robust_markdown_chunks(text[start:end], room)]",
    ),
    Mutation(
        "rag7", "section_with_header", "chunks the whole page for every section",
        "                  for c in rag6.robust_markdown_chunks(text[start:end], room, min(overlap, room - 1))]",
        "                  for c in rag6.robust_markdown_chunks(text, room, min(overlap, room - 1))]",
    ),
    Mutation(
        "rag7", "header_chunks", "never shortens a long header",
        "        header = fit_header(make_header(title, section, metadata), limit)",
        "        header = make_header(title, section, metadata)",
    ),
    Mutation(
        "rag7", "header_chunks", "gives every chunk the header of the page's first section",
        "        header = fit_header(make_header(title, section, metadata), limit)",
        "        header = fit_header(make_header(title, page[0].section, metadata), limit)",
    ),
    Mutation(
        "rag7", "header_chunks", "leaves the front matter's fields out of the header",
        "        metadata = {key: fields[key] for key in HEADER_FIELDS if key in fields}",
        "        metadata = {}",
    ),
    Mutation(
        "rag7", "header_chunks", "lets the header take half the budget whatever the text needs",
        "    limit = min(max_tokens // 2, max_tokens - min(max_tokens, least_budget(text)))",
        "    limit = max_tokens // 2",
    ),
    Mutation(
        "rag7", "row_chunks", "puts the column names in a row's header without the chunk's header",
        '    header = "\\n".join(part for part in (chunk.header, lines[0].text.strip()) if part)',
        "    header = lines[0].text.strip()",
    ),
    Mutation(
        "rag7", "row_chunks", "takes the delimiter row for the column names",
        '    header = "\\n".join(part for part in (chunk.header, lines[0].text.strip()) if part)',
        '    header = "\\n".join(part for part in (chunk.header, lines[1].text.strip()) if part)',
    ),
    Mutation(
        "rag7", "row_chunks", "gives the delimiter row a chunk of its own",
        "    ends = [chunk.start + line.end for line in lines[2:]]",
        "    ends = [chunk.start + line.end for line in lines[1:]]",
    ),
    Mutation(
        "rag7", "row_chunks", "the last row's chunk ends with the table, losing what follows it",
        "    ends[-1] = chunk.end\n",
        "",
    ),
    Mutation(
        "rag7", "row_chunks", "rows at the chunk's offsets, not the page's",
        "    ends = [chunk.start + line.end for line in lines[2:]]",
        "    ends = [line.end for line in lines[2:]]",
    ),
    Mutation(
        "rag7", "row_chunks", "does not check a row and its header against the budget",
        "        if count_tokens(row.embedding_text) > max_tokens:\n            return None\n",
        "",
    ),
    Mutation(
        "rag7", "row_chunks", "cuts a chunk holding two tables by its first",
        "    if len(tables) != 1:",
        "    if not tables:",
    ),
    Mutation(
        "rag7", "with_table_rows", "keeps the rows of a table an overlap repeats twice",
        "        if result and pieces[0].start <= result[-1].start:",
        "        if False:",
    ),
    Mutation(
        "rag7", "with_table_rows", "drops the row that starts where the chunk it replaces starts",
        "            pieces = [piece for piece in pieces if piece.start >= last.start] or [",
        "            pieces = [piece for piece in pieces if piece.start > last.start] or [",
    ),
    Mutation(
        "rag7", "with_table_rows", "a chunk reaching back into a table's rows replaces the last row's chunk whole",
        "            pieces = [piece for piece in pieces if piece.start >= last.start] or [",
        "            pieces = [piece for piece in pieces if piece.start >= last.start] or pieces or [",
    ),
    Mutation(
        "rag7", "make_header", "empty parts are not left out",
        '    path = " › ".join(part for part in (title, *section) if part)',
        '    path = " › ".join((title, *section))',
    ),
    Mutation(
        "rag7", "make_header", "field names keep their underscores",
        "    fields = \"; \".join(f\"{key.replace('_', ' ')} {value}\"",
        '    fields = "; ".join(f"{key} {value}"',
    ),
    # ---- rag8: the metrics
    Mutation(
        "rag8", "recall_at_k", "a hit that overlaps part of the answer counts as holding it",
        "found = sum(1 for span in gold if any(holds(hit, span) for hit in hits[:k]))",
        "found = sum(1 for span in gold if any(\n"
        "        hit[0] == span[0] and hit[1] < span[2] and span[1] < hit[2]\n"
        "        for hit in hits[:k]))",
    ),
    Mutation(
        "rag8", "recall_at_k", "counts the hits that hold an answer, not the answers held",
        "found = sum(1 for span in gold if any(holds(hit, span) for hit in hits[:k]))",
        "found = sum(1 for hit in hits[:k] if any(holds(hit, span) for span in gold))",
    ),
    Mutation(
        "rag8", "mrr_at_k", "ranks counted from 0",
        "for rank, hit in enumerate(hits[:k], 1):",
        "for rank, hit in enumerate(hits[:k]):",
    ),
    Mutation(
        "rag8", "mrr_at_k", "looks past the first k hits",
        "for rank, hit in enumerate(hits[:k], 1):",
        "for rank, hit in enumerate(hits, 1):",
    ),
    Mutation(
        "rag8", "coverage_at_k", "overlapping hits count their shared characters twice",
        "return shared_characters(merged(hits[:k]), answer) / characters(answer)",
        "return shared_characters(hits[:k], answer) / characters(answer)",
    ),
    Mutation(
        "rag8", "precision_and_iou", "overlapping hits count their shared characters twice",
        "retrieved = merged(hits[:k])",
        "retrieved = hits[:k]",
    ),
    # ---- rag8: the paired bootstrap
    Mutation(
        "rag8", "paired_bootstrap", "resamples the two methods apart (unpaired), not question by question",
        "    means = differences[picks].mean(axis=1)\n",
        "    means = (np.array(b, dtype=float)[picks].mean(axis=1)\n"
        "             - np.array(a, dtype=float)[rng.integers(0, len(differences), size=picks.shape)].mean(axis=1))\n",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "takes the 5% and 95% quantiles for a 95% interval",
        "    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])",
        "    low, high = np.quantile(means, [1 - level, level])",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "the interval of method b's mean, not of the difference",
        "    means = differences[picks].mean(axis=1)\n",
        "    means = np.array(b, dtype=float)[picks].mean(axis=1)\n",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "a normal approximation, the mean plus or minus z standard errors",
        "    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])\n",
        "    from statistics import NormalDist\n"
        "    spread = NormalDist().inv_cdf((1 + level) / 2) * means.std()\n"
        "    low, high = differences.mean() - spread, differences.mean() + spread\n",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "an unseeded generator: another interval on every call",
        "    rng = np.random.default_rng(seed)",
        "    rng = np.random.default_rng()",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "the difference taken the other way, a - b",
        "    differences = np.array(b, dtype=float) - np.array(a, dtype=float)",
        "    differences = np.array(a, dtype=float) - np.array(b, dtype=float)",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "ignores level: always the 95% interval",
        "    low, high = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])",
        "    low, high = np.quantile(means, [0.025, 0.975])",
    ),
    Mutation(
        "rag8", "paired_bootstrap", "draws the questions without replacement (each once: no spread)",
        "    picks = rng.integers(0, len(differences), size=(resamples, len(differences)))\n",
        "    picks = np.array([rng.permutation(len(differences)) for _ in range(resamples)])\n",
    ),
    # ---- rag9: window_texts, neighbour_distances, breakpoints, best_cuts
    Mutation(
        "rag9", "window_texts", "a window ends where its last sentence starts",
        "spans[min(i + window, last)][1]",
        "spans[min(i + window, last)][0]",
    ),
    Mutation(
        "rag9", "neighbour_distances", "similarity instead of distance",
        "return [1.0 - float(vectors[i] @ vectors[i + 1]) for i in range(len(vectors) - 1)]",
        "return [float(vectors[i] @ vectors[i + 1]) for i in range(len(vectors) - 1)]",
    ),
    Mutation(
        "rag9", "breakpoints", "cuts where the distance equals the threshold too (>=, not >)",
        "if distance > threshold]",
        "if distance >= threshold]",
    ),
    Mutation(
        "rag9", "breakpoints", "cuts before sentence i, not i + 1",
        "return [i + 1 for i, distance in enumerate(distances) if distance > threshold]",
        "return [i for i, distance in enumerate(distances) if distance > threshold]",
    ),
    Mutation(
        "rag9", "best_cuts", "ignores the sentence limit",
        "for i in range(j - 1, max(j - max_sentences, 0) - 1, -1):",
        "for i in range(j - 1, -1, -1):",
    ),
    Mutation(
        "rag9", "best_cuts", "ignores the token budget",
        "            if tokens > max_tokens and i < j - 1:\n                break\n",
        "",
    ),
    # ---- rag10: parent_index, best_parents, assemble
    Mutation(
        "rag10", "parent_index", "takes the first parent the unit touches, not the one it shares most with",
        "while j < len(parents) and parents[j][0] < end:",
        "while j < len(parents) and parents[j][0] < end and best is None:",
    ),
    Mutation(
        "rag10", "parent_index", "a tie goes to the later parent (>=, not >)",
        "            if shared > most:",
        "            if shared >= most:",
    ),
    Mutation(
        "rag10", "best_parents", "keeps every unit's parent, the same parent again and again",
        "if parent is not None and parent not in taken:",
        "if parent is not None:",
    ),
    Mutation(
        "rag10", "best_parents", "tests a parent's truth, so parent 0 is never taken",
        "if parent is not None and parent not in taken:",
        "if parent and parent not in taken:",
    ),
    Mutation(
        "rag10", "assemble", "drops a parent too big for what is left instead of reading a window of it",
        "            span = window_around(text, parent, unit, room)\n",
        "            span = None\n",
    ),
    Mutation(
        "rag10", "assemble", "stops at the first unit too big for what is left",
        "            if span is None:\n                continue\n",
        "            if span is None:\n                break\n",
    ),
    Mutation(
        "rag10", "assemble", "ignores span_tokens: a big table spends the whole budget",
        "text, room = pages[doc_id], min(left, span_tokens)",
        "text, room = pages[doc_id], left",
    ),
    Mutation(
        "rag10", "small_to_big", "ranks the units worst first (argsort of the scores, not of their negation)",
        "    ranked = np.argsort(-np.asarray(scores, dtype=float), kind=\"stable\")[:depth]",
        "    ranked = np.argsort(np.asarray(scores, dtype=float), kind=\"stable\")[:depth]",
    ),
    Mutation(
        "rag10", "small_to_big", "breaks a tie to the higher row (the ascending sort reversed)",
        "    ranked = np.argsort(-np.asarray(scores, dtype=float), kind=\"stable\")[:depth]",
        "    ranked = np.argsort(np.asarray(scores, dtype=float), kind=\"stable\")[::-1][:depth]",
    ),
    Mutation(
        "rag10", "small_to_big", "reads every unit's parent, not only the depth best units'",
        "    ranked = np.argsort(-np.asarray(scores, dtype=float), kind=\"stable\")[:depth]",
        "    ranked = np.argsort(-np.asarray(scores, dtype=float), kind=\"stable\")",
    ),
    Mutation(
        "rag10", "small_to_big", "hands the matched unit over as its own parent: small to small",
        "        candidates.append((doc_id, (start, end), tuple(units[unit][1:])))",
        "        candidates.append((doc_id, tuple(units[unit][1:]), tuple(units[unit][1:])))",
    ),
    # ---- mistakes the labs' own checks once missed (issue 22), and more of their kinds
    Mutation(
        "rag5", "split_at_seams", "cuts where a seam's match starts, not where it ends",
        "cuts = [m.end() for m in pattern.finditer(text, start, end) if start < m.end() < end]",
        "cuts = [m.start() for m in pattern.finditer(text, start, end) if start < m.start() < end]",
    ),
    Mutation(
        "rag5", "split_at_seams", "keeps a piece over budget as it is instead of splitting it finer",
        "            spans += split_at_seams(text, piece_start, piece_end, max_tokens, index, level + 1)",
        "            spans.append((piece_start, piece_end))",
    ),
    Mutation(
        "rag8", "coverage_at_k", "counts a character two overlapping hits share twice, capped at 1",
        "    return shared_characters(merged(hits[:k]), answer) / characters(answer)",
        "    return min(1.0, sum(shared_characters([hit], answer) for hit in hits[:k]) / characters(answer))",
    ),
    Mutation(
        "rag4", "token_windows", "ignores overlap: each window starts where the last one ended",
        "        first = max(last + 1 - overlap, first + 1)",
        "        first = last + 1",
    ),
    Mutation(
        "rag7", "make_header", "joins the heading path with slashes",
        '    path = " › ".join(part for part in (title, *section) if part)',
        '    path = " / ".join(part for part in (title, *section) if part)',
    ),
    Mutation(
        "rag7", "make_header", "leaves the metadata out",
        '    return f"{path} ({fields})" if fields else path',
        "    return path",
    ),
    Mutation(
        "rag8", "precision_and_iou", "IoU over the retrieved characters only (that is precision)",
        "shared / (retrieved_size + characters(answer) - shared)",
        "shared / retrieved_size",
    ),
    Mutation(
        "rag9", "semantic_chunks", "accepts any method and falls through to the global split",
        "    if method not in (\"breakpoints\", \"global\"):\n"
        "        raise ValueError(f\"method must be 'breakpoints' or 'global', got {method!r}\")\n",
        "",
    ),
    Mutation(
        "rag9", "semantic_chunks", "packs across the cuts: a group goes on filling the chunk before it",
        "    packed = []\n    for first, last in zip([0, *cuts], [*cuts, len(spans)]):"
        "  # the sentences of one group, between two cuts\n"
        "        total = None  # the tokens of the group's last chunk; None: the group has none yet\n",
        "    packed, total = [], None\n    for first, last in zip([0, *cuts], [*cuts, len(spans)]):"
        "  # the sentences of one group, between two cuts\n",
    ),
    Mutation(
        "rag9", "semantic_chunks", "the running total never grows: a sentence joins while it alone fits",
        "                packed[-1] = (packed[-1][0], end)\n                total += size\n",
        "                packed[-1] = (packed[-1][0], end)\n",
    ),
    Mutation(
        "rag9", "semantic_chunks", "a sentence that joins a chunk extends it to its start, not its end",
        "                packed[-1] = (packed[-1][0], end)\n",
        "                packed[-1] = (packed[-1][0], start)\n",
    ),
    Mutation(
        "rag9", "semantic_chunks", "the global split scores the windows, not the sentences alone",
        "        vectors = embed([text[start:end] for start, end in spans], embedder)",
        "        vectors = embed(window_texts(text, spans, window), embedder)",
    ),
    Mutation(
        "rag9", "window_texts", "a window looks only forward, never back",
        "    return [text[spans[max(i - window, 0)][0] : spans[min(i + window, last)][1]] for i in range(len(spans))]",
        "    return [text[spans[i][0] : spans[min(i + window, last)][1]] for i in range(len(spans))]",
    ),
    Mutation(
        "rag10", "parent_index", "starts the walk at the parent after the one the unit begins inside",
        "        j = max(bisect.bisect_right(starts, start) - 1, 0)",
        "        j = max(bisect.bisect_left(starts, start), 0)",
    ),
    Mutation(
        "rag5", "add_overlap", "reaches back overlap characters, not tokens",
        "        reach = max(int(index.starts[max(position - overlap, 0)]), previous_start)",
        "        reach = max(start - overlap, previous_start)",
    ),
    Mutation(
        "rag5", "add_overlap", "the overlap starts at a token, not moved on to a word start",
        "        result.append((next_clean_cut(text, reach, start), end))",
        "        result.append((reach, end))",
    ),
    Mutation(
        "rag4", "word_windows", "words found as runs of \\w: the punctuation between them is in no window",
        r'    words = [(match.start(), match.end()) for match in re.finditer(r"\S+", text)]',
        r'    words = [(match.start(), match.end()) for match in re.finditer(r"\w+", text)]',
    ),
    Mutation(
        "rag5", "recursive_chunks", "packs at max_tokens - overlap, not the given packing_budget: no room for 5 tokens",
        "    budget = packing_budget(max_tokens, overlap, index)\n",
        "    budget = max_tokens - overlap\n",
    ),
    # ---- rag11: search_terms, bm25_weight, bm25_index, reciprocal_rank_fusion, convex_fusion, read_parents
    Mutation(
        "rag11", "search_terms", "an identifier gives its whole only, not its parts",
        "        if not whole.isalnum():  # a compound: its words after it\n"
        "            terms += [part.lower() for part in WORD.findall(whole)]\n",
        "",
    ),
    Mutation(
        "rag11", "search_terms", "parts split at \\w: an underscore stays inside a part",
        "terms += [part.lower() for part in WORD.findall(whole)]",
        'terms += [part.lower() for part in re.findall(r"\\w+", whole)]',
    ),
    Mutation(
        "rag11", "bm25_weight", "the idf without its 1 +: negative for a term in most documents",
        "    idf = math.log(1 + (n_documents - df + 0.5) / (df + 0.5))",
        "    idf = math.log((n_documents - df + 0.5) / (df + 0.5))",
    ),
    Mutation(
        "rag11", "bm25_weight", "no length normalisation: a long parent counts as a short row",
        "    return idf * tf / (tf + k1 * (1 - b + b * length / mean_length))",
        "    return idf * tf / (tf + k1)",
    ),
    Mutation(
        "rag11", "bm25_weight", "tf not saturated: the tenth occurrence counts as much as the first",
        "    return idf * tf / (tf + k1 * (1 - b + b * length / mean_length))",
        "    return idf * tf / (k1 * (1 - b + b * length / mean_length))",
    ),
    Mutation(
        "rag11", "bm25_index", "df counts occurrences, not documents",
        "    df = Counter(term for tally in counts for term in tally)",
        "    df = Counter(term for terms in documents for term in terms)",
    ),
    Mutation(
        "rag11", "bm25_index", "a document's length counts each term once, repeats left out",
        "weight = bm25_weight(tf, df[term], len(documents), len(terms), mean, k1, b)",
        "weight = bm25_weight(tf, df[term], len(documents), len(tally), mean, k1, b)",
    ),
    Mutation(
        "rag11", "reciprocal_rank_fusion", "ranks counted from 0",
        "        for rank, item in enumerate(ranking, 1):",
        "        for rank, item in enumerate(ranking):",
    ),
    Mutation(
        "rag11", "reciprocal_rank_fusion", "keeps an item's best rank instead of summing over the rankings",
        "            scores[item] = scores.get(item, 0) + Fraction(1, k + rank)",
        "            scores[item] = max(scores.get(item, 0), Fraction(1, k + rank))",
    ),
    Mutation(
        "rag11", "reciprocal_rank_fusion", "ties broken by the items' own order, not the order first met",
        "    return sorted(scores, key=lambda item: -scores[item])",
        "    return sorted(scores, key=lambda item: (-scores[item], item))",
    ),
    Mutation(
        "rag11", "convex_fusion", "fuses the raw scores, unnormalised: BM25 drowns the cosines",
        "    return (alpha * scaled(meaning_scores) + (1 - alpha) * scaled(word_scores)).tolist()",
        "    return [alpha * m + (1 - alpha) * w for w, m in zip(word_scores, meaning_scores)]",
    ),
    Mutation(
        "rag11", "convex_fusion", "divides by a range of 0 when all scores are equal",
        "        if scores.size == 0 or scores.max() == scores.min():",
        "        if scores.size == 0:",
    ),
    Mutation(
        "rag11", "read_parents", "reads a parent once per unit of it, not once",
        "        if parent is None or parent in taken:",
        "        if parent is None:",
    ),
    Mutation(
        "rag11", "read_parents", "a parent whose best unit is too big is read again at a later unit of its own",
        "            if span is None:\n                continue",
        "            if span is None:\n                taken.discard(parent)\n                continue",
    ),
    Mutation(
        "rag11", "read_parents", "hands over the units, not their parents",
        "        doc_id, start, end = parents[parent]",
        "        doc_id, start, end = units[row]",
    ),
    Mutation(
        "rag11", "read_parents", "drops a parent too big for what is left instead of reading a window of it",
        "            span = window_around(text, (start, end), tuple(units[row][1:]), room)",
        "            span = None",
    ),
    Mutation(
        "rag11", "read_parents", "stops at the first unit too big for what is left",
        "            if span is None:\n                continue\n",
        "            if span is None:\n                break\n",
    ),
]
