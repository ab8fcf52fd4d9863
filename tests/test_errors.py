"""The README's table of errors, checked: each situation, brought about for real, gives its message.

The table lives under "## When something goes wrong". Each row names what
happened and the error a user then sees; `…` in a message stands for text
that varies (a path, a digest). A row without a way to bring it about here,
or a way without a row, fails the first test: the table and the code must
tell the same story.
"""

import re
from functools import partial
from pathlib import Path

import pytest

import academy_llm
from labkit import load_lab
from doc_tables import code_table

README = Path(__file__).resolve().parent.parent / "README.md"
SECTION = "## When something goes wrong"
TITLE = "Orbit docs"


def readme_errors() -> dict[str, str]:
    """{what happened: the error message} from the README's table."""
    text = README.read_text(encoding="utf-8")
    if SECTION not in text:
        return {}
    return code_table(text.split(SECTION, 1)[1].split("\n## ", 1)[0])


def message_pattern(message: str) -> re.Pattern:
    """The message as a pattern in which each `…` matches any text."""
    return re.compile(".+?".join(re.escape(part) for part in message.split("…")))


# ---- bringing each error about -----------------------------------------------

CHUNKERS = {
    "token_windows": lambda labs, text, *window: labs["rag4"].token_windows(text, *window),
    "word_windows": lambda labs, text, *window: labs["rag4"].word_windows(text, *window),
    "recursive_chunks": lambda labs, text, *window: labs["rag5"].recursive_chunks(text, *window),
    "markdown_chunks": lambda labs, text, *window: labs["rag6"].markdown_chunks(text, *window),
    "header_chunks": lambda labs, text, *window: labs["rag7"].header_chunks(text, TITLE, *window),
}
WITH_A_TOKEN_BUDGET = ("token_windows", "recursive_chunks", "markdown_chunks", "header_chunks")

# What happened: (the chunkers to call, the arguments after the lab modules).
CHUNKER_ERRORS = {
    "`max_tokens` is 0 or negative": (WITH_A_TOKEN_BUDGET, ("text", 0)),
    "`word_windows` gets a `size` of 0": (("word_windows",), ("text", 0)),
    "`overlap` is negative": (WITH_A_TOKEN_BUDGET, ("text", 64, -1)),
    "`overlap` is not smaller than `max_tokens`": (WITH_A_TOKEN_BUDGET, ("text", 64, 64)),
    "`max_tokens` is not a whole number": (WITH_A_TOKEN_BUDGET, ("text", 2.5)),
    "the text is bytes": (WITH_A_TOKEN_BUDGET, (b"text", 64)),
    "the text is not a string at all": (WITH_A_TOKEN_BUDGET, (None, 64)),
    "the budget is below what a piece that cannot be cut needs (a character of 4 tokens, or characters no "
    "token start divides)": (WITH_A_TOKEN_BUDGET, ("토큰 text", 4)),
}


def other_errors(labs, tmp_path, monkeypatch) -> dict:
    """What happened: the call that raises it, for the other errors."""
    assets = tmp_path / "assets"
    assets.mkdir()
    damaged = assets / "cl100k_base.tiktoken"
    damaged.write_bytes(academy_llm.TOKENIZER_FILE.read_bytes()[:-10])

    def embedder_from_the_environment():
        monkeypatch.setenv("ACADEMY_EMBEDDER", "bert")
        academy_llm.embed(["text"])

    def openai_embedder(texts, **environment):
        """The openai embedder, with OpenAI's own server and a cache in tmp_path: nothing here is sent."""
        for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ACADEMY_OPENAI_MODEL", "ACADEMY_OPENAI_DIMENSIONS",
                     "ACADEMY_MAX_COST"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("ACADEMY_CACHE_DIR", str(tmp_path / "cache"))
        for name, value in environment.items():
            monkeypatch.setenv(name, value)
        academy_llm.embed(texts, "openai")

    def damaged_cache():
        (tmp_path / "cache").mkdir(exist_ok=True)
        (tmp_path / "cache" / "embeddings.sqlite").write_bytes(b"not a database" * 500)
        openai_embedder(["text"], OPENAI_API_KEY="sk-test")

    return {
        "rag7: the title is not a string": lambda: labs["rag7"].header_chunks("text", None, 64),
        "an unknown embedder, as an argument": lambda: academy_llm.embed(["text"], "bert"),
        "an unknown embedder, in `ACADEMY_EMBEDDER`": embedder_from_the_environment,
        "the tokenizer file is missing": lambda: academy_llm.read_bpe_ranks(tmp_path / "no" / "assets" / damaged.name),
        "the tokenizer file is damaged (its sha256 differs)": lambda: academy_llm.read_bpe_ranks(damaged),
        "openai: `OPENAI_API_KEY` is not set": lambda: openai_embedder(["text"]),
        "openai: the texts would cost more than `ACADEMY_MAX_COST`":
            lambda: openai_embedder(["text"] * 3, OPENAI_API_KEY="sk-test", ACADEMY_MAX_COST="0.00000001"),
        "openai: a text over the model's 8,191 tokens":
            lambda: openai_embedder([" ".join(["word"] * 9000)], OPENAI_API_KEY="sk-test"),
        "openai: the cache file is damaged": damaged_cache,
    }


@pytest.fixture(scope="module")
def labs(lab_dir):
    return {lab: load_lab(lab, lab_dir) for lab in ("rag4", "rag5", "rag6", "rag7")}


@pytest.fixture
def attempts(labs, tmp_path, monkeypatch):
    """{what happened: [calls that must each raise its error]}."""
    found = {
        situation: [partial(CHUNKERS[name], labs, *arguments) for name in names]
        for situation, (names, arguments) in CHUNKER_ERRORS.items()
    }
    for situation, call in other_errors(labs, tmp_path, monkeypatch).items():
        found[situation] = [call]
    return found


def test_the_table_and_the_tests_name_the_same_errors(attempts):
    table = readme_errors()
    assert len(table) >= 10
    assert sorted(table) == sorted(attempts)


@pytest.mark.parametrize("situation, message", sorted(readme_errors().items()))
def test_each_error_gives_the_message_in_the_table(attempts, situation, message):
    for call in attempts[situation]:
        with pytest.raises(Exception) as raised:
            call()
        seen = f"{type(raised.value).__name__}: {raised.value}"
        assert message_pattern(message).fullmatch(seen), f"the README says {message!r}, the code says {seen!r}"
