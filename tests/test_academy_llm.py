"""The shared helper: offline tokenizer, embeddings, Chunk and the shared checks."""

import os
import subprocess
import sys
import unittest.mock
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from text_strategies import any_text, markdown_text, prose

import academy_llm
import labkit
import labkit.embedders
from academy_llm import (
    Chunk,
    check_budget,
    check_lossless,
    cosine,
    count_tokens,
    embed,
    encode,
    find_lost_text,
    is_clean_cut,
    make_chunk,
    token_positions,
    token_starts,
    top_k,
)

# The embedders that run here; "openai" is tested against a local server in test_openai_embedder.py.
OFFLINE_EMBEDDERS = [name for name in academy_llm.EMBEDDERS if name != "openai"]


def test_tokenizer_is_cl100k_base():
    # Known cl100k_base ids; special-token text is encoded as plain text.
    assert encode("hello world") == [15339, 1917]
    assert count_tokens("<|endoftext|>") == 7


def test_tokenizer_loads_without_network_and_leaves_tiktoken_cache_alone(tmp_path):
    script = (
        "import socket\n"
        "def refuse(*a, **k): raise OSError('network disabled by the test')\n"
        "socket.socket.connect = refuse; socket.create_connection = refuse\n"
        "import os, academy_llm\n"
        "assert academy_llm.count_tokens('hello world') == 2\n"
        "assert academy_llm.embed(['offline'], 'wordllama').shape == (1, 256)\n"
        "print(os.environ.get('TIKTOKEN_CACHE_DIR'))\n"
    )
    env = {**os.environ, "TIKTOKEN_CACHE_DIR": str(tmp_path / "users-own-cache")}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(tmp_path / "users-own-cache")
    assert list(tmp_path.iterdir()) == []  # nothing written to the user's cache


@pytest.mark.parametrize(
    "text", ["hello world", "a😀b", "👩\u200d👩\u200d👧 família 漢字 𩝕", "x" * 50, "\r\n\r\n", ""]
)
def test_token_starts_are_cuts_between_characters(text):
    starts = token_starts(text)
    assert starts == sorted(set(starts))
    assert (starts[:1] == [0]) == bool(text)
    pieces = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    assert "".join(pieces) == text
    assert sum(count_tokens(p) for p in pieces) >= len(pieces)


def tokens_between(text, start, end):
    """Tokens of the whole text from start to end, read from token_positions (as chunkers do)."""
    starts, numbers = token_positions(text)
    return int(numbers[np.searchsorted(starts, end)] - numbers[np.searchsorted(starts, start)])


@given(text=st.one_of(any_text, prose, markdown_text), data=st.data())
def test_a_slice_between_clean_cuts_tokenizes_as_inside_the_whole(text, data):
    # The claim rag5's TokenIndex rests on, checked against the tokenizer itself.
    cuts = [position for position in range(len(text) + 1) if is_clean_cut(text, position)]
    start = data.draw(st.sampled_from(cuts))
    end = data.draw(st.sampled_from([cut for cut in cuts if cut >= start]))
    assert tokens_between(text, start, end) == count_tokens(text[start:end])


KOREAN = st.lists(st.sampled_from(["토큰", " ", "한국어", "𩝕", "a"])).map("".join)


@given(text=st.one_of(any_text, prose, markdown_text, KOREAN))
def test_min_budget_is_the_widest_piece_no_cut_may_split(text):
    # TokenIndex.min_budget against every piece between two token starts, each counted alone.
    from labkit.token_index import TokenIndex

    starts = token_starts(text)
    pieces = [text[a:b] for a, b in zip(starts, starts[1:] + [len(text)])]
    assert TokenIndex(text).min_budget == max(map(count_tokens, pieces), default=0)


@given(text=st.one_of(any_text, prose, markdown_text, KOREAN))
def test_token_positions_read_a_piece_at_a_time_are_the_whole_texts(text):
    # A long text is tokenized in pieces cut at clean cuts (so that no copy of it is held
    # whole); here pieces of a few characters, against the text tokenized in one piece.
    whole = academy_llm._token_positions(text)
    with unittest.mock.patch.object(academy_llm, "PIECE", 3):
        pieces = academy_llm._token_positions(text)
    assert all(np.array_equal(a, b) and a.dtype == b.dtype == np.int64 for a, b in zip(whole, pieces))


def test_token_positions_skip_tokens_inside_a_character():
    # '𩝕' is four tokens, a byte each, three of them starting inside it: one start, four tokens counted.
    starts, numbers = token_positions("a𩝕 b")
    assert starts.tolist() == [0, 1, 2] and numbers.tolist() == [0, 1, 5, 6]


def test_min_budget_of_korean_is_more_than_a_character_needs():
    from labkit.token_index import TokenIndex

    assert TokenIndex("토큰").min_budget == 5 and token_starts("토큰") == [0]


@pytest.mark.parametrize(
    "text, position, clean",
    [("Hello world", 5, True), ("Hello world", 6, False), ("end.\n\nNext", 6, True),
     ("end.\n\nNext", 4, False), ("a\n  b", 2, False), ("a\r\nb", 2, False), ("ab", 0, True), ("ab", 2, True)],
)
def test_clean_cuts_by_example(text, position, clean):
    assert is_clean_cut(text, position) == clean


def test_embed_shapes_unit_rows_and_zero_rows():
    for model in OFFLINE_EMBEDDERS:
        vectors = embed(["install on linux", "", "   "], model)
        assert vectors.dtype == np.float32 and vectors.shape[0] == 3
        assert np.isclose(np.linalg.norm(vectors[0]), 1.0, atol=1e-5)
        assert not vectors[1].any() and not vectors[2].any()
        assert embed([], model).shape[0] == 0


def test_wordllama_is_semantic_and_hash_is_lexical():
    texts = ["install the server", "set up the service", "bake a cake"]
    semantic = embed(texts, "wordllama")
    lexical = embed(texts, "hash")
    assert cosine(semantic[0], semantic[1]) > cosine(semantic[0], semantic[2])
    assert cosine(lexical[0], lexical[1]) > 0  # they share "the"
    assert cosine(lexical[1], lexical[2]) == 0  # no word in common


def test_embedder_chosen_by_argument_or_environment(monkeypatch):
    monkeypatch.delenv("ACADEMY_EMBEDDER", raising=False)
    assert academy_llm.embedder_name() == academy_llm.DEFAULT_EMBEDDER == "minilm"  # contextual by default
    assert embed(["x"], "wordllama").shape == (1, 256)  # the fast static model, by name
    monkeypatch.setenv("ACADEMY_EMBEDDER", "hash")
    assert embed(["x"]).shape == (1, labkit.embedders.HASH_DIMENSIONS)
    with pytest.raises(ValueError, match="unknown embedder 'bert'.*wordllama, hash, openai, minilm"):
        embed(["x"], "bert")


def printed_under_each_hash_seed(arguments) -> dict[str, str]:
    """{seed: what `python *arguments` prints} for two PYTHONHASHSEED values, run side by side."""
    runs = {
        seed: subprocess.Popen(
            [sys.executable, *arguments], env={**os.environ, "PYTHONHASHSEED": seed},
            stdout=subprocess.PIPE, text=True,
        )
        for seed in ("0", "12345")
    }
    printed = {seed: run.communicate(timeout=120)[0] for seed, run in runs.items()}
    assert all(run.returncode == 0 for run in runs.values())
    return printed


@pytest.mark.heavy  # runs the labs under two hash seeds: the deeper tier
def test_embeddings_do_not_depend_on_the_hash_seed():
    script = "import academy_llm; print(academy_llm.embed(['Orbit drains satellites'], '{}').sum())"
    for model in OFFLINE_EMBEDDERS:
        assert len(set(printed_under_each_hash_seed(["-c", script.format(model)]).values())) == 1


@pytest.mark.heavy  # runs the labs under two hash seeds: the deeper tier
def test_chunks_and_scores_do_not_depend_on_the_hash_seed(lab_dir):
    """Every chunker on the corpus and the adversarial texts, and retrieval scores with both embedders."""
    fingerprint = Path(__file__).parent / "fingerprint.py"
    printed = printed_under_each_hash_seed([str(fingerprint), str(lab_dir)])
    first, second = (output.splitlines() for output in printed.values())
    assert len(first) == 7 and first == second, [(a, b) for a, b in zip(first, second) if a != b]


def test_cosine_and_top_k_break_ties_by_order():
    matrix = np.array([[1, 0], [0, 1], [1, 0]], dtype=np.float32)
    assert top_k(np.array([1, 0]), matrix, 2) == [(0, 1.0), (2, 1.0)]
    assert cosine([0, 0], [1, 0]) == 0.0


def test_chunk_must_fit_its_span_and_header_is_kept_apart():
    with pytest.raises(ValueError, match="make_chunk"):
        Chunk(text="abc", start=0, end=2, n_tokens=1)
    chunk = make_chunk("Install it. Then run it.", 12, 24, header="Docs › Run", section=("Run",))
    assert chunk.text == "Then run it." and chunk.n_tokens == count_tokens("Then run it.")
    assert chunk.embedding_text == "Docs › Run\nThen run it."


def test_shared_checks_name_the_first_problem():
    source = "chunk chunk chunk"
    good = [make_chunk(source, 0, 11), make_chunk(source, 6, 17)]
    check_lossless(source, good)
    wrong_offset = [Chunk("chunk", 0, 5, 1), Chunk("chunk", 0, 5, 1)]  # str.find's mistake
    with pytest.raises(ValueError, match=r"characters \[5, 17\)"):
        check_lossless(source, wrong_offset)
    with pytest.raises(ValueError, match="chunk 1 claims"):
        check_lossless(source, [Chunk("chunk!", 0, 6, 1)])
    with pytest.raises(ValueError, match="starts or ends before"):
        check_lossless(source, list(reversed(good)))
    assert find_lost_text("a  b", [make_chunk("a  b", 0, 1), make_chunk("a  b", 3, 4)], True) is None
    with pytest.raises(ValueError, match="chunk 1 .* over the budget of 1"):
        check_budget(good, 1)


def test_check_text_and_window_messages_say_what_to_change():
    check = academy_llm.check_text_and_window
    with pytest.raises(ValueError, match="use overlap <= 9"):
        check("t", 10, 10)
    with pytest.raises(TypeError, match="decode"):
        check(b"t", 10, 1)
    with pytest.raises(ValueError, match="positive"):
        check("t", 0, 0)


def test_load_lab_imports_without_running_the_demo(tmp_path):
    (tmp_path / "rag1-demo.py").write_text("X = 1\nif __name__ == '__main__':\n    raise SystemExit(3)\n")
    assert labkit.load_lab("rag1", tmp_path).X == 1
    with pytest.raises(FileNotFoundError, match="rag2-\\*.py"):
        labkit.load_lab("rag2", tmp_path)


def test_embed_of_one_string_is_one_vector():
    for model in OFFLINE_EMBEDDERS:
        vector = academy_llm.embed("Satellites dial out on port 7401.", model)
        rows = academy_llm.embed(["Satellites dial out on port 7401."], model)
        assert vector.shape == rows.shape[1:] and np.array_equal(vector, rows[0])
