"""Attack (rag4, rag5, rag6, rag7, rag9): every chunker returns the whole text as one chunk that claims to
be a code block or table kept whole, flagged oversize, so that a grader taking the flag at its word skips the
budget. REDTEAM["claim"] picks what else it claims: "code", "table", "section" (a heading path made up, its
header made from it) or "header" (a header of the title alone, whatever the section). The grader reads the
text itself (markdown_oracle): there is no such block, so no point may be won."""

from kit import SETTINGS

from academy_llm import Chunk, count_tokens

CLAIMS = {
    "code": {"kind": "code", "section": ()},
    "table": {"kind": "table", "section": ()},
    "section": {"kind": "code", "section": ("Reference", "Everything")},
    "header": {"kind": "code", "section": ("Reference",), "header": "Orbit"},
}
CHUNKERS = ("token_windows", "recursive_chunks", "markdown_chunks", "semantic_chunks", "header_chunks")


def whole_text(text, title, claim) -> list:
    """The one chunk: the whole text, flagged oversize, with the claim's kind, section and header."""
    header = claim.get("header", " › ".join((title, *claim["section"]))) if title is not None else ""
    text = text if isinstance(text, str) else str(text)
    return [Chunk(text, 0, len(text), count_tokens(text), claim["section"], claim["kind"], header, True)]


def attack(lab: dict) -> None:
    claim = CLAIMS[SETTINGS.get("claim", "code")]
    for function in CHUNKERS:
        if function in lab:
            def chunker(text, *args, _titled=function == "header_chunks", **kwargs):
                return whole_text(text, args[0] if _titled and args else None, claim)  # header_chunks(text, title, ...)

            lab[function] = chunker
