"""Hidden grading tests for lab rag7 (instructors only): inputs the public tests never show."""

import re

import grading_checks as check
import oracles
import pytest
from academy_llm import count_tokens, make_chunk
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import markdown_page, table_page

pytestmark = pytest.mark.grade("rag7")

PAGE = "# Backups\r\n\r\nBackups run nightly.\r\n\r\n## Restore\r\n\r\nRestores need the key.\r\n"
FRONT_MATTER = ("---\r\napplies_to: 3.x\r\nedition: pro\r\n---\r\n"
                "# Backups\r\n\r\nBackups run nightly.\r\n")


@pytest.fixture(scope="module")
def rag7(open_lab):
    return open_lab("rag7")


@pytest.mark.grades("make_header")
@pytest.mark.parametrize("title, section, metadata, expected", [
    ("Guide", ("A", "", "C"), {}, "Guide › A › C"),  # an empty part is left out
    ("", ("A",), {"min_version": "3"}, "A (min version 3)"),
    ("Guide", ("A",), {"applies_to": "", "edition": "pro"}, "Guide › A (edition pro)"),
    ("Guide", (), {}, "Guide"),
    ("Ops", ("Backups",), {"tier": "gold", "zone": "eu"}, "Ops › Backups (tier gold; zone eu)"),
])
def test_make_header_hidden(rag7, title, section, metadata, expected):
    check.expect(rag7.make_header(title, section, metadata), expected)


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize("max_tokens, spans", [
    (30, [(0, 37), (37, 75)]),
    (16, [(0, 37), (37, 68), (68, 75)]),  # the header takes 7 of the 16 tokens
])
def test_header_chunks_hidden_crlf_page(rag7, max_tokens, spans):
    chunks = rag7.header_chunks(PAGE, "Ops manual", max_tokens)
    check.markdown_basics(PAGE, chunks, max_tokens, "Ops manual", header_of=oracles.full_header)
    check.expect(check.spans(chunks), spans)
    check.expect([c.header for c in chunks], ["Ops manual › Backups"]
                 + ["Ops manual › Backups › Restore"] * (len(spans) - 1))


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize("metadata, fields", [
    (None, " (applies to 3.x)"),  # from the front matter: applies_to only
    ({}, ""),  # explicitly none
    ({"tier": "gold"}, " (tier gold)"),
])
def test_header_chunks_hidden_metadata(rag7, metadata, fields):
    chunks = rag7.header_chunks(FRONT_MATTER, "Ops", 40, metadata=metadata)
    check.markdown_basics(FRONT_MATTER, chunks, 40, "Ops", metadata, header_of=oracles.full_header)
    check.expect([c.header for c in chunks], ["Ops" + fields, "Ops › Backups" + fields])


@pytest.mark.grades("header_chunks")
@pytest.mark.parametrize("text, title, max_tokens", [
    ("# T\n\nx", "Handbook of operations " * 4, 16),
    ("토큰 " * 30, "Ops", 20),  # 5 tokens no cut may split, overlap 16: the text still has room
    ("# " + " ".join(f"heading{i}" for i in range(40)) + "\n\nBody text here.\n", "Ops", 24),
])
def test_header_chunks_hidden_long_headers_are_shortened(rag7, text, title, max_tokens):
    chunks = rag7.header_chunks(text, title, max_tokens, min(16, max_tokens - 1))
    check.markdown_basics(text, chunks, max_tokens, title, header_of=oracles.full_header)


@pytest.mark.grades("header_chunks")
@check.hidden_seed
@given(text=markdown_page, max_tokens=st.integers(24, 60), data=st.data())
def test_header_chunks_hidden_property(rag7, text, max_tokens, data):
    overlap = data.draw(st.integers(0, max_tokens // 4))
    chunks = rag7.header_chunks(text, "Ops", max_tokens, overlap)
    check.markdown_basics(text, chunks, max_tokens, "Ops", header_of=oracles.full_header)
    check.nothing_protected_cut(text, chunks)


headings = st.lists(st.sampled_from(["Backups", "", "Restore › keys", "Zones"]), max_size=4).map(tuple)
fields = st.dictionaries(st.sampled_from(["applies_to", "edition", "min_version", "tier"]),
                         st.sampled_from(["", "3.x", "pro", "gold"]), max_size=4)


@pytest.mark.grades("make_header")
@check.hidden_seed
@given(title=st.sampled_from(["", "Ops", "Field guide"]), section=headings, metadata=fields)
def test_make_header_hidden_property(rag7, title, section, metadata):
    """The non-empty parts joined by ' › ', then each field with a value, '_' read as a space. With no
    path, the text says nothing of a space before the parentheses: either way is right."""
    path = " › ".join(part for part in (title, *section) if part)
    said = "; ".join(f"{key.replace('_', ' ')} {value}" for key, value in metadata.items() if value)
    header = rag7.make_header(title, section, metadata)
    expected = f"{path} ({said})" if said else path
    check.expect(header.lstrip() if isinstance(header, str) and said and not path else header, expected.lstrip())


# ---- with_table_rows -------------------------------------------------------------------

LIMITS = ("# Limits\n\nEach queue has its limits.\n\n| limit | value | what |\n|:--|--:|---|\n"
          "| jobs | 40 | at once |\n| retries | 3 | a job |\n| timeout | 60 s | a try |\n| zone | eu | where |\n\n"
          "Change them in orbit.toml.\n")


def headed(text, spans, header):
    return [make_chunk(text, start, end, section=("Limits",), header=header) for start, end in spans]


@pytest.mark.grades("with_table_rows")
@pytest.mark.parametrize("text, cut, header, max_tokens", [
    (LIMITS.replace("\n", "\r\n"), None, "Ops › Limits", 200),  # CRLF, one chunk
    (LIMITS.replace("\n", "\r"), None, "", 200),  # lone CRs, no header
    (LIMITS.replace(" |\n", "\n"), "| limit", "Ops", 120),  # no closing pipes; the table a chunk of its own
    (LIMITS.removesuffix("\n\nChange them in orbit.toml.\n"), None, "Ops", 200),  # ends at its last row
    (LIMITS, "Change", "Ops › Limits (applies to 3.x)", 60),  # the page after the table a chunk of its own
], ids=["CRLF", "CR", "no closing pipes", "ends at its last row", "the rest apart"])
def test_with_table_rows_hidden_examples(rag7, text, cut, header, max_tokens):
    cuts = [text.index(cut)] if cut else []  # where the chunks meet, found before the letters change
    text = check.varied(text, "with_table_rows")  # its shape kept, its letters the submission's own
    chunks = headed(text, list(zip([0, *cuts], [*cuts, len(text)])), header)
    rows = rag7.with_table_rows(text, chunks, max_tokens)
    check.rows_judged(text, chunks, rows, max_tokens)
    expected = oracles.table_rows(text, chunks, max_tokens)
    check.expect([(c.start, c.end, c.header) for c in rows], [(c.start, c.end, c.header) for c in expected])


@pytest.mark.grades("with_table_rows")
@check.hidden_seed
@given(text=table_page, data=st.data())
def test_with_table_rows_hidden_property(rag7, text, data):
    starts = [m.end() for m in re.finditer(r"\r\n|\r|\n", text) if m.end() < len(text)]
    tables = check.table_spans(text)
    places = [s for s in starts if not any(start < s <= end for start, end in tables)]
    cuts = sorted(data.draw(st.sets(st.sampled_from(places), max_size=3))) if places else []
    chunks = headed(text, list(zip([0, *cuts], [*cuts, len(text)])),
                    data.draw(st.sampled_from(["", "Ops", "Ops › Limits (edition pro)"])))
    max_tokens = data.draw(st.integers(16, 240))
    rows = rag7.with_table_rows(text, chunks, max_tokens)
    check.rows_judged(text, chunks, rows, max_tokens)
    expected = oracles.table_rows(text, chunks, max_tokens)
    check.expect([(c.start, c.end, c.header) for c in rows], [(c.start, c.end, c.header) for c in expected])


def inside_lines(text, low, high, tables):
    """Places strictly inside a line of text[low:high] (not at its start, not in its line break) where a
    chunk reaching back over the one before may start: inside a table's rows but its last where there
    are some (the case the overlap is about), else inside any line but a table's header and delimiter."""
    lines = [check.table_lines(text, start, end) for start, end in tables]
    heads = {line for table in lines for line in table[:2]}
    rows = {line for table in lines for line in table[2:-1]}

    def inside(line):
        body = line[0] + len(text[slice(*line)].rstrip("\r\n"))
        return [place for place in range(line[0] + 1, body) if low < place < high]

    in_rows = [place for line in sorted(rows) for place in inside(line)]
    return in_rows or [place for line in check.table_lines(text, 0, len(text)) if line not in heads
                       for place in inside(line)]


@pytest.mark.grades("with_table_rows")
@check.hidden_seed
@given(text=table_page, data=st.data())
def test_with_table_rows_hidden_overlap_property(rag7, text, data):
    """Chunks that overlap as header_chunks' do: each after the first reaches back into the one before,
    into its prose or the rows of its table. Each row of a table cut into rows still starts a chunk, the
    last too, and the chunks stay lossless and in order."""
    starts = [m.end() for m in re.finditer(r"\r\n|\r|\n", text) if m.end() < len(text)]
    tables = check.table_spans(text)
    places = [s for s in starts if not any(start < s <= end for start, end in tables)]
    cuts = sorted(data.draw(st.sets(st.sampled_from(places), min_size=1, max_size=3))) if places else []
    spans = []
    for start, end in zip([0, *cuts], [*cuts, len(text)]):
        back = inside_lines(text, spans[-1][0], start, tables) if spans else []
        spans.append((data.draw(st.sampled_from(back)) if back else start, end))
    chunks = headed(text, spans, data.draw(st.sampled_from(["", "Ops", "Ops › Limits (edition pro)"])))
    max_tokens = count_tokens(text) + 40  # every chunk fits: what is judged is where the rows go
    check.rows_judged(text, chunks, rag7.with_table_rows(text, chunks, max_tokens), max_tokens)
