"""The "openai" embedder, offline: the real client against a real HTTP server on 127.0.0.1.

The server (embedding_server.py) speaks POST /v1/embeddings with deterministic vectors,
counts requests, and answers with the faults a test orders: 429 and 500 with Retry-After,
401, 404, a slow answer, a dropped connection, a short answer. Every test has a cache of
its own (ACADEMY_CACHE_DIR in tmp_path). What a text costs is decided from the URL alone,
local or remote, never from the network; and the labs, run with ACADEMY_EMBEDDER=openai,
send every text they embed to the server, with wordllama made unimportable.
"""

import hashlib
import json
import os
import socket
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from embedding_server import EmbeddingServer, vector_of

import academy_llm
from labkit import openai_embedder

TEXTS = ["Satellites dial out on port 7401.", "Install Orbit with apt.", "The ground station drains them."]


def unit(vector):
    return vector / np.linalg.norm(vector)


@pytest.fixture
def server():
    running = EmbeddingServer().start()
    yield running
    running.stop()


@pytest.fixture
def cache_dir(tmp_path):
    return tmp_path / "cache"


@pytest.fixture
def env(server, cache_dir, monkeypatch):
    """The environment of a learner pointing the openai embedder at the test server.

    Set in a copy of os.environ that this process reads and no child inherits: the labs other
    tests run beside this one (started early, in threads) must not run with these settings.
    """
    monkeypatch.setattr(os, "environ", dict(os.environ))
    for name in ("ACADEMY_OPENAI_MODEL", "ACADEMY_OPENAI_DIMENSIONS", "ACADEMY_OPENAI_TIMEOUT", "ACADEMY_MAX_COST"):
        monkeypatch.delenv(name, raising=False)
    values = server.environment(cache_dir)
    for name, value in values.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setattr(openai_embedder, "BACKOFF_SECONDS", 0.01)
    monkeypatch.setattr(openai_embedder, "_sent_dollars", 0.0)
    return values


def expected(texts):
    return np.stack([unit(vector_of(text)) for text in texts])


def test_a_miss_is_sent_then_the_cache_answers_even_with_the_server_gone(server, env):
    rows = academy_llm.embed(TEXTS)
    assert rows.dtype == np.float32 and rows.shape == (3, 16)
    assert np.allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)
    assert np.allclose(rows, expected(TEXTS), atol=1e-6)  # in input order
    assert len(server.requests) == 1
    assert np.array_equal(academy_llm.embed(TEXTS), rows)
    assert len(server.requests) == 1  # the second run sent nothing
    server.stop()
    os.environ.pop("OPENAI_API_KEY")  # a warm cache needs no key either
    assert np.array_equal(academy_llm.embed(list(reversed(TEXTS)), "openai"), rows[::-1])


def test_only_misses_are_sent_and_empty_texts_are_zero_rows(server, env):
    academy_llm.embed(TEXTS[:2])
    rows = academy_llm.embed(TEXTS + ["", "  ", TEXTS[2]])
    assert server.texts_sent == TEXTS  # each text once: the cached ones and the repeat not again
    assert not rows[3].any() and not rows[4].any() and np.array_equal(rows[2], rows[5])
    assert academy_llm.embed("Install Orbit with apt.").shape == (16,)
    assert academy_llm.embed([]).shape[0] == 0


def test_the_cache_key_holds_endpoint_model_and_dimensions(server, env, monkeypatch):
    academy_llm.embed(TEXTS)
    monkeypatch.setenv("ACADEMY_OPENAI_DIMENSIONS", "8")
    assert academy_llm.embed(TEXTS).shape == (3, 8)
    monkeypatch.setenv("ACADEMY_OPENAI_MODEL", "test-model")
    academy_llm.embed(TEXTS)
    assert len(server.requests) == 3 and server.requests[1]["dimensions"] == 8


def test_429_twice_then_success_waits_as_told(server, env):
    server.faults += ["429", "429"]
    started = time.perf_counter()
    rows = academy_llm.embed(TEXTS)
    assert time.perf_counter() - started >= 2 * 0.05  # Retry-After: 0.05, honoured twice
    assert len(server.requests) == 3 and np.allclose(rows, expected(TEXTS), atol=1e-6)


def test_500_and_a_dropped_connection_are_retried(server, env):
    server.faults += ["500", "drop", "500"]
    assert np.allclose(academy_llm.embed(TEXTS), expected(TEXTS), atol=1e-6)
    assert len(server.requests) == 4


def test_a_server_that_keeps_failing_ends_in_one_line(server, env):
    server.always = "500"
    with pytest.raises(openai_embedder.EmbeddingError) as raised:
        academy_llm.embed(TEXTS)
    assert len(server.requests) == openai_embedder.ATTEMPTS
    assert "HTTP 500" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("fault, names", [
    ("401", "set OPENAI_API_KEY"),
    ("404", "set ACADEMY_OPENAI_MODEL"),
    ("slow", "raise ACADEMY_OPENAI_TIMEOUT"),
])
def test_each_refusal_is_one_line_that_says_what_to_change(server, env, monkeypatch, fault, names):
    server.always = fault
    monkeypatch.setenv("ACADEMY_OPENAI_TIMEOUT", "0.2")
    with pytest.raises(openai_embedder.EmbeddingError) as raised:
        academy_llm.embed(TEXTS)
    message = str(raised.value)
    assert names in message and "\n" not in message
    assert len(server.requests) == 1  # none of these is retried


def test_a_refused_connection_and_a_missing_key(server, env, monkeypatch):
    server.stop()
    with pytest.raises(openai_embedder.EmbeddingError, match=r"cannot connect to http://127\.0\.0\.1:\d+/v1 .*"
                       r"start the server, or set OPENAI_BASE_URL"):
        academy_llm.embed(TEXTS)
    monkeypatch.delenv("OPENAI_BASE_URL")
    monkeypatch.delenv("OPENAI_API_KEY")
    with pytest.raises(openai_embedder.EmbeddingError, match="OPENAI_API_KEY is not set"):
        academy_llm.embed(TEXTS)


def test_a_partial_failure_keeps_what_arrived_and_stores_nothing_wrong(server, env, monkeypatch, cache_dir):
    monkeypatch.setattr(openai_embedder, "MAX_INPUTS_PER_REQUEST", 2)
    texts = [f"text number {n}" for n in range(7)]  # requests of 2, 2, 2, 1
    server.faults += [None, "short", "401"]  # the first whole, the second short, the third refused
    with pytest.raises(openai_embedder.EmbeddingError, match="sent 1 vectors for 2 texts"):
        academy_llm.embed(texts)
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as connection:
        assert connection.execute("SELECT count(*) FROM vectors").fetchone()[0] == 2
    with pytest.raises(openai_embedder.EmbeddingError, match="OPENAI_API_KEY"):
        academy_llm.embed(texts)
    server.requests.clear()
    rows = academy_llm.embed(texts)
    assert np.allclose(rows, expected(texts), atol=1e-6)
    assert [len(request["input"]) for request in server.requests] == [2, 2, 1]  # the first two were kept


def test_a_damaged_cache_file_is_one_line_saying_how_to_rebuild_it(server, env, cache_dir):
    academy_llm.embed(TEXTS)
    path = cache_dir / "embeddings.sqlite"
    with sqlite3.connect(path) as connection:  # one vector's bytes changed behind the cache's back
        connection.execute("UPDATE vectors SET vector = zeroblob(64) WHERE key = (SELECT min(key) FROM vectors)")
    with pytest.raises(openai_embedder.CacheError, match=r"is damaged \(the vector stored .* fails its check\); "
                       r"delete it to rebuild it: rm .*embeddings\.sqlite\*"):
        academy_llm.embed(TEXTS)
    for name in os.listdir(cache_dir):
        (cache_dir / name).unlink()
    path.write_bytes(b"this is not an sqlite file, but the first page of something else" * 100)
    with pytest.raises(openai_embedder.CacheError) as raised:
        academy_llm.embed(TEXTS)
    assert "is damaged (file is not a database); delete it to rebuild it" in str(raised.value)
    assert "\n" not in str(raised.value)
    path.unlink()
    assert np.allclose(academy_llm.embed(TEXTS), expected(TEXTS), atol=1e-6)  # rebuilt


def test_cost_is_estimated_for_misses_and_a_dear_run_stops_before_sending(server, env, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL")  # OpenAI's own server: priced, and never reached here
    tokens = sum(academy_llm.count_tokens(text) for text in TEXTS)
    assert academy_llm.embed_cost(TEXTS, model="text-embedding-3-small") == pytest.approx(tokens * 0.02 / 1e6)
    assert academy_llm.embed_cost(TEXTS, model="text-embedding-3-large") == pytest.approx(tokens * 0.13 / 1e6)
    assert academy_llm.embed_cost(TEXTS, model="hash") == 0.0
    monkeypatch.setenv("ACADEMY_MAX_COST", "0.00000001")
    with pytest.raises(openai_embedder.CostLimitError, match=r"would cost about \$0\.0000, over "
                       r"ACADEMY_MAX_COST=\$1e-08; nothing was sent\. To go on, raise it"):
        academy_llm.embed(TEXTS)
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)  # a local server costs nothing
    assert academy_llm.embed_cost(TEXTS) == 0.0
    academy_llm.embed(TEXTS)
    assert len(server.requests) == 1


LOCAL_URLS = [
    "http://localhost:11434/v1", "http://LOCALHOST./v1", "http://embed.localhost:8080/v1", "http://gpu-box.local/v1",
    "http://127.0.0.1:8000/v1", "http://127.8.9.10/v1", "http://[::1]:8080/v1", "http://0.0.0.0:11434/v1",
    "http://10.1.2.3/v1", "http://172.16.0.1/v1", "http://172.31.255.254/v1", "http://192.168.1.20:11434/v1",
    "http://[fd12:3456::1]/v1", "http://169.254.10.20/v1", "http://[fe80::1%25eth0]:8080/v1",
    "http://[::ffff:192.168.0.2]/v1",
]
REMOTE_URLS = [
    "https://api.openai.com/v1", "https://my-resource.openai.azure.com/openai/v1", "https://gateway.example.com/v1",
    "http://203.0.113.7:8080/v1", "http://172.32.0.1/v1", "http://11.0.0.1/v1", "http://[2001:db8::1]/v1",
    "http://127.0.0.1.nip.io/v1", "http://embeddings.internal/v1", "http://local/v1", "http://server.localdomain/v1",
]


@pytest.fixture
def no_name_lookups(monkeypatch):
    """Any resolution of a name, or connection, from this test's thread fails the test: cost is decided
    from the URL alone. (Other threads, such as the ones running other tests' labs, are let through.)"""
    test_thread = threading.current_thread()

    def refused(original):
        def guard(*args, **kwargs):
            if threading.current_thread() is test_thread:
                raise AssertionError(f"looked up or connected: {args[:2]}")
            return original(*args, **kwargs)
        return guard

    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_connection"):
        monkeypatch.setattr(socket, name, refused(getattr(socket, name)))
    monkeypatch.setattr(socket.socket, "connect", refused(socket.socket.connect))


@pytest.mark.parametrize("url", LOCAL_URLS)
def test_a_server_on_the_learners_machine_or_network_costs_nothing(env, monkeypatch, no_name_lookups, url):
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    assert openai_embedder.is_local_url(url)
    assert academy_llm.embed_cost(TEXTS) == 0.0
    assert academy_llm.embed_cost(TEXTS, model="text-embedding-3-large") == 0.0
    assert academy_llm.embed_cost(TEXTS, model="nomic-embed-text") == 0.0


@pytest.mark.parametrize("url", REMOTE_URLS)
def test_any_other_endpoint_is_priced_by_its_model(env, monkeypatch, no_name_lookups, url):
    """Azure, a gateway, a hosted server: OpenAI's models at their list price, any other at the dearest."""
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    tokens = sum(academy_llm.count_tokens(text) for text in TEXTS)
    assert not openai_embedder.is_local_url(url)
    assert academy_llm.embed_cost(TEXTS) == pytest.approx(tokens * 0.02 / 1e6)  # text-embedding-3-small
    assert academy_llm.embed_cost(TEXTS, model="text-embedding-ada-002") == pytest.approx(tokens * 0.10 / 1e6)
    dearest = tokens * 0.13 / 1e6  # text-embedding-3-large's, the dearest known price
    assert academy_llm.embed_cost(TEXTS, model="my-azure-deployment") == pytest.approx(dearest)
    assert academy_llm.embed_cost(TEXTS, model="hash") == 0.0


def test_an_unknown_model_on_a_remote_endpoint_is_stopped_by_the_cost_limit(env, monkeypatch, no_name_lookups):
    monkeypatch.setenv("OPENAI_BASE_URL", "https://my-resource.openai.azure.com/openai/v1")
    monkeypatch.setenv("ACADEMY_OPENAI_MODEL", "my-embedding-deployment")
    monkeypatch.setenv("ACADEMY_MAX_COST", "0.00000001")
    with pytest.raises(openai_embedder.CostLimitError) as raised:  # before any connection (no_name_lookups)
        academy_llm.embed(TEXTS)
    message = str(raised.value)
    assert "with my-embedding-deployment (no price known for it: priced as text-embedding-3-large, the dearest " \
           "known; set ACADEMY_OPENAI_PRICE to its USD per million tokens) would cost about" in message
    assert "nothing was sent" in message and "\n" not in message
    monkeypatch.setenv("ACADEMY_OPENAI_PRICE", "0.02")  # the learner says what the deployment costs
    tokens = sum(academy_llm.count_tokens(text) for text in TEXTS)
    assert academy_llm.embed_cost(TEXTS) == pytest.approx(tokens * 0.02 / 1e6)
    monkeypatch.setenv("ACADEMY_OPENAI_PRICE", "free")
    with pytest.raises(openai_embedder.EmbeddingError, match="ACADEMY_OPENAI_PRICE='free' is not a number"):
        academy_llm.embed_cost(TEXTS)


def test_cost_is_zero_once_cached(server, env, monkeypatch):
    monkeypatch.setattr(openai_embedder.Settings, "price_per_million", property(lambda self: 0.02))
    assert academy_llm.embed_cost(TEXTS, model="openai") > 0
    academy_llm.embed(TEXTS)
    assert academy_llm.embed_cost(TEXTS, model="openai") == 0.0
    assert academy_llm.embed_cost(TEXTS + ["new"], model="openai") > 0


def test_the_run_total_counts_against_the_limit(server, env, monkeypatch):
    monkeypatch.setattr(openai_embedder.Settings, "price_per_million", property(lambda self: 1000.0))
    tokens = academy_llm.count_tokens(TEXTS[0])
    monkeypatch.setenv("ACADEMY_MAX_COST", str(1.5 * tokens * 1000 / 1e6))
    academy_llm.embed(TEXTS[:1])
    with pytest.raises(openai_embedder.CostLimitError, match="already sent"):
        academy_llm.embed(TEXTS[1:2] * 1 + [TEXTS[0] + " again"])
    assert len(server.requests) == 1


def test_an_input_over_the_limit_says_to_chunk_it(server, env):
    long_text = " ".join(["word"] * 9000)
    with pytest.raises(openai_embedder.EmbeddingError, match=r"a text of 9,000 tokens \('word word.*over the limit "
                       r"of 8,191 tokens per input .*chunk it into pieces of at most 8,191 tokens first"):
        academy_llm.embed(TEXTS + [long_text])
    assert server.requests == []


def test_batches_stay_within_the_limits(monkeypatch):
    assert [len(part) for part in openai_embedder.batches([1] * 5000)] == [2048, 2048, 904]
    assert [len(part) for part in openai_embedder.batches([8000] * 80)] == [37, 37, 6]
    assert openai_embedder.batches([]) == []


def test_many_requests_show_a_progress_bar_on_a_terminal(server, env, monkeypatch, capsys):
    monkeypatch.setattr(openai_embedder, "MAX_INPUTS_PER_REQUEST", 1)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    academy_llm.embed(TEXTS)
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "3/3 texts" in captured.err and captured.err.endswith("\n")
    academy_llm.embed(TEXTS + ["one more"])  # a single request: no bar
    assert capsys.readouterr().err == ""


def test_importing_academy_llm_does_not_import_openai():
    script = "import sys, academy_llm; academy_llm.embed(['x'], 'hash'); print('openai' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr


WRITER = """
import sys
from labkit import openai_embedder
openai_embedder.MAX_INPUTS_PER_REQUEST = 3  # many small transactions, interleaved with the other process
import academy_llm
import time
while time.time() < float(sys.argv[2]):  # both open the new cache file at the same moment
    time.sleep(0.001)
texts = [f"shared text {n}" for n in range(40)] + [f"own text {sys.argv[1]} {n}" for n in range(20)]
rows = academy_llm.embed(texts)
print(rows.shape[0])
"""


@pytest.mark.heavy  # two fresh interpreters importing numpy and the embedder: 6 s of the default tier
def test_two_processes_at_once_on_one_cache_lose_nothing(server, env, cache_dir):
    environment = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)}
    start = str(time.time() + 3)  # after both have imported numpy (if one is late, they still overlap)
    runs = [subprocess.Popen([sys.executable, "-c", WRITER, name, start], env=environment, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for name in ("a", "b")]
    outputs = [run.communicate(timeout=60) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    server.stop()  # everything now comes from the cache
    everything = [f"shared text {n}" for n in range(40)] + [f"own text {name} {n}" for name in "ab" for n in range(20)]
    assert np.allclose(academy_llm.embed(everything), expected(everything), atol=1e-6)
    with sqlite3.connect(cache_dir / "embeddings.sqlite") as connection:
        assert connection.execute("SELECT count(*) FROM vectors").fetchone()[0] == 80


# --------------------------------------------------------------------------
# The labs with ACADEMY_EMBEDDER=openai: every text they embed goes to the server
# --------------------------------------------------------------------------
# The lab runs as a student runs it, in a process of its own, with wordllama unimportable
# and every connection refused but to the test server. Each call of academy_llm.embed is
# recorded (the embedder it resolved to, the files of its callers, a digest of each text), so the
# test can say that every text embedded with "openai" reached the server, once, and that
# nothing was embedded with another embedder. The server's vectors are random, so the lab's
# retrieval checks may fail; what is checked is where its embeddings came from.

ROOT = Path(__file__).resolve().parent.parent
LAB_RUN = """
import atexit, hashlib, json, os, runpy, socket, sys
sys.modules["wordllama"] = None  # `import wordllama` fails: no lab may fall back on it
server = ("127.0.0.1", int(os.environ["TEST_SERVER_PORT"]))
connect = socket.socket.connect
def only_the_server(self, address):
    if tuple(address[:2]) != server:
        raise OSError(f"network disabled by the test: {address}")
    return connect(self, address)
socket.socket.connect = only_the_server
import academy_llm
embed, calls = academy_llm.embed, []
def recorded(texts, model=None):
    listed = [texts] if isinstance(texts, str) else list(texts)
    digests = [hashlib.sha256(t.encode("utf-8", "surrogatepass")).hexdigest() for t in listed if t.strip()]
    frame, callers = sys._getframe(1), []
    while frame is not None:
        callers.append(frame.f_code.co_filename)
        frame = frame.f_back
    calls.append((academy_llm.embedder_name(model), callers, digests))
    rows = embed(listed, model)
    return rows[0] if isinstance(texts, str) else rows
academy_llm.embed = recorded
def write_calls():
    with open(os.environ["TEST_EMBED_CALLS"], "w") as file:
        json.dump(calls, file)
atexit.register(write_calls)
sys.argv = sys.argv[1:]
runpy.run_path(sys.argv[0], run_name="__main__")
"""
# The public grading tests a lab runs last check chunking, not retrieval, on random texts: they
# chunk with the lexical "hash" embedder by design (tests/grading/test_rag9.py), and print no score.
PUBLIC_TESTS = str(ROOT / "tests" / "grading")


def digest(text):
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def run_lab_against(server, lab, tmp_path):
    """Run solutions/<lab>-*.py with the openai embedder at `server`; (what it printed, its embed calls).

    The settings go to the lab's process only: this process's environment is left alone, since
    the labs other tests run beside this one (test_labs.py's, started early) inherit it.
    """
    (path,) = (ROOT / "solutions").glob(f"{lab}-*.py")
    calls = tmp_path / "calls.json"
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("ACADEMY_", "OPENAI_"))}
    environment.update(server.environment(tmp_path / "cache"), PYTHONPATH=str(ROOT), TEST_EMBED_CALLS=str(calls),
                       TEST_SERVER_PORT=server.url.split(":")[-1].split("/")[0])
    run = subprocess.run([sys.executable, "-c", LAB_RUN, str(path)], cwd=tmp_path, env=environment,
                         capture_output=True, text=True, timeout=240)
    assert "Traceback" not in run.stderr and run.returncode in (0, 1), run.stdout[-2000:] + run.stderr[-3000:]
    assert f"\n{lab}: " in run.stdout and "PASS  the public grading tests" in run.stdout, run.stdout[-2000:]
    assert f"Embedder: openai, text-embedding-3-small at {server.url}" in run.stdout
    return run.stdout, json.loads(calls.read_text())


def check_every_embedding_went_to_the_server(server, calls):
    others = [(name, callers[:3]) for name, callers, _ in calls if name != "openai"
              if not (name == "hash" and any(caller.startswith(PUBLIC_TESTS) for caller in callers))]
    assert not others, others[:3]
    embedded = {text for name, _, texts in calls if name == "openai" for text in texts}
    sent = [digest(text) for text in server.texts_sent]
    assert embedded and set(sent) == embedded  # every text embedded went to the server, and nothing else did
    assert len(sent) == len(embedded)  # each once: the cache answered every repeat


@pytest.mark.heavy  # a whole lab at the server, as rag9's and rag11's: 10 s of the default tier
@pytest.mark.timeout(300)  # a whole lab, beside the labs other tests run
def test_rag10_with_the_openai_embedder_embeds_everything_at_the_server(server, tmp_path):
    stdout, calls = run_lab_against(server, "rag10", tmp_path)
    check_every_embedding_went_to_the_server(server, calls)
    assert "Embedder: openai, text-embedding-3-small at" in stdout  # named before any step
    assert "rag10: all invariants hold." in stdout, stdout[-2000:]


@pytest.mark.heavy  # 20 to 30 s alone with Chroma's benchmark beside the project, more beside other tests
@pytest.mark.timeout(300)
def test_rag9_with_the_openai_embedder_embeds_everything_at_the_server(server, tmp_path):
    stdout, calls = run_lab_against(server, "rag9", tmp_path)
    check_every_embedding_went_to_the_server(server, calls)
    assert "256-token chunks, openai, text-embedding-3-small at" in stdout  # its table names the embedder


@pytest.mark.heavy  # a whole lab that embeds the corpus at the server, as rag10's test does
@pytest.mark.timeout(300)
def test_rag11_with_the_openai_embedder_embeds_everything_at_the_server(server, tmp_path):
    stdout, calls = run_lab_against(server, "rag11", tmp_path)
    check_every_embedding_went_to_the_server(server, calls)
    assert "Embedder: openai, text-embedding-3-small at" in stdout  # named before any step
    assert "rag11: all invariants hold." in stdout, stdout[-2000:]

