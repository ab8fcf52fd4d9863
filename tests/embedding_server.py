"""A real HTTP server on 127.0.0.1 that speaks the OpenAI embeddings API, with faults to order.

    server = EmbeddingServer().start()          # server.url is http://127.0.0.1:PORT/v1
    server.faults += ["429", "429"]             # the next two requests get a 429, then it answers
    server.stop()

Vectors are deterministic: a text's vector is drawn from a generator seeded with its
sha256, so any process (and the tests) can say what a text's vector must be. Faults
are taken one per request, in order, from `server.faults`; `server.always` applies to
every request once the list is empty. They are:

    "429"    Too Many Requests, with Retry-After: RETRY_AFTER seconds
    "500"    an internal error (also with Retry-After)
    "401"    the key rejected
    "404"    the model unknown
    "slow"   the answer after SLOW_SECONDS
    "drop"   the connection closed with no answer
    "short"  one vector fewer than texts sent

`server.texts_sent` lists every text it was sent, in order, and `server.environment(cache)`
is what a learner sets to use it, so a test can run a whole lab against it and check that
every text the lab embedded was sent here (tests/test_openai_embedder.py, for rag9, rag10 and rag11).

Run as a script it serves until stopped, and prints its URL and the settings to use it:

    python tests/embedding_server.py [--port 8765]
    ACADEMY_EMBEDDER=openai OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=test \
        python solutions/rag9-semantic-chunking.py
"""

from __future__ import annotations

import base64
import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

DIMENSIONS = 16
MODELS = ("text-embedding-3-small", "test-model")
RETRY_AFTER = "0.05"  # seconds; the client may read fractions
SLOW_SECONDS = 1.0


def vector_of(text: str, dimensions: int = DIMENSIONS) -> np.ndarray:
    """The vector the server sends for `text` (not unit length: the client scales it)."""
    seed = int.from_bytes(hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:8], "little")
    return (np.random.default_rng(seed).normal(size=dimensions) * 3).astype(np.float32)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):  # quiet
        pass

    def reply(self, status: int, body: dict, headers: dict | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def error(self, status: int, message: str, code: str, headers: dict | None = None) -> None:
        self.reply(status, {"error": {"message": message, "type": "invalid_request_error", "code": code}}, headers)

    def do_POST(self):
        server = self.server.owner
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        with server.lock:
            server.requests.append(body)
            fault = server.faults.pop(0) if server.faults else server.always
        if self.path.rstrip("/") != "/v1/embeddings":
            return self.error(404, f"no route {self.path}", "not_found")
        if fault == "drop":
            self.close_connection = True
            self.connection.shutdown(2)
            return
        if fault == "slow":
            time.sleep(SLOW_SECONDS)
        if fault in ("429", "500"):
            return self.error(int(fault), "slow down" if fault == "429" else "the server had an error",
                              "rate_limit_exceeded" if fault == "429" else "server_error",
                              {"Retry-After": RETRY_AFTER})
        if fault == "401" or self.headers.get("Authorization") != f"Bearer {server.key}":
            return self.error(401, "Incorrect API key provided: sk-...", "invalid_api_key")
        model = body.get("model")
        if fault == "404" or model not in MODELS:
            return self.error(404, f"The model `{model}` does not exist or you do not have access to it.",
                              "model_not_found")
        texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
        with server.lock:
            server.texts_sent.extend(texts)
        vectors = [vector_of(text, body.get("dimensions") or DIMENSIONS) for text in texts]
        if fault == "short":
            vectors = vectors[:-1]
        as_base64 = body.get("encoding_format") == "base64"
        data = [{"object": "embedding", "index": index,
                 "embedding": base64.b64encode(vector.astype("<f4").tobytes()).decode() if as_base64
                 else vector.tolist()} for index, vector in enumerate(vectors)]
        self.reply(200, {"object": "list", "data": data, "model": model,
                         "usage": {"prompt_tokens": 0, "total_tokens": 0}})


class EmbeddingServer:
    def __init__(self, key: str = "test", port: int = 0):
        self.key, self.lock = key, threading.Lock()
        self.requests, self.texts_sent, self.faults, self.always = [], [], [], None
        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.httpd.owner = self
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def environment(self, cache_dir) -> dict:
        """The settings of a learner pointing the openai embedder at this server, with its cache in `cache_dir`."""
        return {"ACADEMY_EMBEDDER": "openai", "OPENAI_BASE_URL": self.url, "OPENAI_API_KEY": self.key,
                "ACADEMY_CACHE_DIR": str(cache_dir)}

    def start(self) -> EmbeddingServer:
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description="a fake OpenAI embeddings server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--key", default="test")
    arguments = parser.parse_args()
    running = EmbeddingServer(arguments.key, arguments.port).start()
    print(running.url, flush=True)
    settings = {name: value for name, value in running.environment("").items() if name != "ACADEMY_CACHE_DIR"}
    print(" ".join(f"{name}={value}" for name, value in settings.items()), flush=True)
    try:
        running.thread.join()
    except KeyboardInterrupt:
        running.stop()
