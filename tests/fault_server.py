"""An OpenAI-compatible chat server on loopback that injects faults, one scripted entry per request.

Each entry of `script` is a reply string (200 with that content, streamed when the request asks for a
stream) or a `Fault`: an HTTP status with headers (429 with `Retry-After`, 5xx), a context-length error in
a provider's wording, a slow stream, a stream cut half-way, garbage JSON, an empty body, or a reply after a
delay. When the script runs out, `default` answers (a 503 unless told otherwise).

Everything is bounded, so a test that forgets the server cannot hang: it listens on 127.0.0.1 only, on
an ephemeral port; it answers at most `max_requests` requests (503 after that); every streaming loop
writes a bounded number of chunks; and it shuts itself down after `lifetime` seconds.
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.openai_server import _completion, _usage

# Provider wordings that LiteLLM's exception mapping turns into ContextWindowExceededError
# (litellm/litellm_core_utils/exception_mapping_utils.py, `is_error_str_context_window_exceeded`).
CONTEXT_WORDINGS = {
    "openai": "This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens.",
    "llamacpp": "the request exceeds the available context size, try increasing it",
    "anthropic": "prompt is too long: 210000 tokens > 200000 maximum",
    "code": '{"code": "context_length_exceeded"}',
}
MAX_CHUNKS = 200  # no stream writes more pieces than this


@dataclass
class Fault:
    """One injected behaviour. Build with the class methods."""

    kind: str
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    text: str = ""
    delay: float = 0.0
    body: str = ""

    @classmethod
    def http(cls, status: int, retry_after: str | None = None) -> Fault:
        return cls("status", status=status, headers={"Retry-After": retry_after} if retry_after is not None else {})

    @classmethod
    def context_length(cls, wording: str = "openai") -> Fault:
        message = CONTEXT_WORDINGS[wording]
        return cls("status", status=400, body=json.dumps({"error": {"message": message, "type": "invalid_request"}}))

    @classmethod
    def bad_request(cls, message: str = "invalid value for temperature") -> Fault:
        return cls("status", status=400, body=json.dumps({"error": {"message": message, "type": "invalid_request"}}))

    @classmethod
    def slow(cls, text: str, delay: float) -> Fault:
        """A stream (or a reply) that waits `delay` seconds before each piece."""
        return cls("slow", text=text, delay=delay)

    @classmethod
    def delayed(cls, text: str, delay: float) -> Fault:
        """A normal reply after `delay` seconds (a server that takes time to think)."""
        return cls("delayed", text=text, delay=delay)

    @classmethod
    def cut(cls, text: str) -> Fault:
        """A stream that stops half-way, the connection closed without `[DONE]`."""
        return cls("cut", text=text)

    @classmethod
    def garbage(cls) -> Fault:
        return cls("raw", body='{"choices": [{"message": ', headers={"Content-Type": "application/json"})

    @classmethod
    def empty(cls) -> Fault:
        return cls("raw", body="", headers={"Content-Type": "application/json"})


Entry = str | Fault
Responder = Callable[[dict[str, Any]], Entry]


class FaultServer:
    def __init__(
        self,
        script: list[Entry] | Responder,
        *,
        default: Entry | None = None,
        max_requests: int = 100,
        lifetime: float = 60.0,
    ):
        self.script = script if callable(script) else list(script)
        self.default = default if default is not None else Fault.http(503)
        self.max_requests = max_requests
        self.lifetime = lifetime
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    body = {}
                entry = server._next(body)
                # A client that gave up on us (a timeout) hears nothing more.
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self._answer(body, entry)

            def _answer(self, body: dict[str, Any], entry: Entry) -> None:
                if isinstance(entry, str):
                    entry = Fault("reply", text=entry)
                if entry.kind == "status":
                    payload = entry.body or json.dumps({"error": {"message": f"injected {entry.status}", "type": "x"}})
                    self._send(entry.status, payload, entry.headers)
                elif entry.kind == "raw":
                    self._send(200, entry.body, entry.headers, close=True)
                elif body.get("stream"):
                    delay = entry.delay if entry.kind == "slow" else 0.0
                    if entry.kind == "delayed":
                        server._sleep(entry.delay)
                    self._stream(body, entry.text, delay, cut=entry.kind == "cut")
                else:
                    if entry.kind in ("slow", "delayed"):
                        server._sleep(entry.delay)
                    self._send(200, json.dumps(_completion(body, entry.text)), {})

            def _send(self, status: int, payload: str, headers: dict[str, str], close: bool = False) -> None:
                data = payload.encode()
                self.send_response(status)
                if "Content-Type" not in headers:
                    self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                if close:
                    self.send_header("Connection", "close")
                    self.close_connection = True
                self.end_headers()
                self.wfile.write(data)
                self.wfile.flush()

            def _stream(self, body: dict[str, Any], text: str, delay: float, cut: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.close_connection = True
                self.end_headers()
                words = [w + " " for w in text.split(" ")]
                words[-1] = words[-1][:-1]
                if cut:
                    words = words[: max(1, len(words) // 2)]
                for word in words[:MAX_CHUNKS]:
                    if delay and not server._sleep(delay):
                        return
                    self.wfile.write(f"data: {json.dumps(_chunk(body, {'content': word}))}\n\n".encode())
                    self.wfile.flush()
                if cut:
                    return  # the connection closes with no finish reason and no [DONE]
                final = _chunk(body, {}, finish="stop")
                final["usage"] = _usage(body, text)
                self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._watchdog = threading.Timer(lifetime, self.stop)
        self._watchdog.daemon = True

    def _next(self, body: dict[str, Any]) -> Entry:
        with self._lock:
            self.requests.append(body)
            self.request_times.append(time.monotonic())
            if len(self.requests) > self.max_requests:
                return Fault.http(503)
            if callable(self.script):
                return self.script(body)
            return self.script.pop(0) if self.script else self.default

    def _sleep(self, seconds: float) -> bool:
        """Wait, but not past the server's end; False once it is stopping."""
        return not self._stopped.wait(min(seconds, self.lifetime))

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    @property
    def port(self) -> int:
        return self.httpd.server_address[1]

    def start(self) -> FaultServer:
        self.thread.start()
        self._watchdog.start()
        return self

    def stop(self) -> None:
        if self._stopped.is_set():
            return
        self._stopped.set()
        self._watchdog.cancel()
        self.httpd.shutdown()
        self.httpd.server_close()

    def __enter__(self) -> FaultServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _chunk(body: dict[str, Any], delta: dict[str, str], finish: str | None = None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fault",
        "object": "chat.completion.chunk",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
