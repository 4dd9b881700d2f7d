"""A small OpenAI-compatible chat server on loopback that answers from a script.

Each entry of `script` is either a reply string (200 with that content), a tool call
`{"tool": NAME, "arguments": {...}}` (200 with that call; streamed as the API streams one: the name,
then the arguments in pieces), or an (HTTP status, headers) pair to fail that request with, e.g.
(429, {"Retry-After": "0"}) or (500, {}).
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class ScriptedOpenAIServer:
    def __init__(self, script: list[Any]):
        self.script = list(script)
        self.requests: list[dict[str, Any]] = []
        self.request_times: list[float] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                server.request_times.append(time.monotonic())
                entry = server.script.pop(0) if server.script else (503, {})
                if isinstance(entry, tuple):
                    status, headers = entry
                    payload = json.dumps({"error": {"message": f"scripted failure {status}", "type": "test"}})
                    self._send(status, payload, headers, "application/json")
                    return
                if isinstance(entry, dict):
                    self._call(body, entry["tool"], json.dumps(entry["arguments"]))
                elif body.get("stream"):
                    self._stream(body, entry)
                else:
                    self._send(200, json.dumps(_completion(body, entry)), {}, "application/json")

            def _call(self, body: dict[str, Any], name: str, arguments: str) -> None:
                if not body.get("stream"):
                    reply = _completion(body, "")
                    reply["choices"][0]["message"] = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [_tool_call(name, arguments)],
                    }
                    reply["choices"][0]["finish_reason"] = "tool_calls"
                    self._send(200, json.dumps(reply), {}, "application/json")
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                pieces = [arguments[i : i + 7] for i in range(0, len(arguments), 7)]
                deltas = [{"tool_calls": [{**_tool_call(name, ""), "index": 0}]}]
                deltas += [{"tool_calls": [{"index": 0, "function": {"arguments": piece}}]} for piece in pieces]
                for delta in deltas:
                    self._chunk(body, delta, None)
                self._chunk(body, {}, "tool_calls", usage=_usage(body, arguments))
                self.wfile.write(b"data: [DONE]\n\n")
                self.wfile.flush()

            def _chunk(self, body: dict[str, Any], delta: dict, finish: str | None, usage: dict | None = None) -> None:
                chunk: dict[str, Any] = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
                }
                if usage is not None:
                    chunk["usage"] = usage
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())

            def _send(self, status: int, payload: str, headers: dict[str, str], kind: str) -> None:
                data = payload.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                for key, value in headers.items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)

            def _stream(self, body: dict[str, Any], text: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                words = [w + " " for w in text.split(" ")]
                words[-1] = words[-1][:-1]
                for word in words:
                    chunk = {
                        "id": "chatcmpl-test",
                        "object": "chat.completion.chunk",
                        "created": int(time.time()),
                        "model": body.get("model", "test"),
                        "choices": [{"index": 0, "delta": {"content": word}, "finish_reason": None}],
                    }
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                final = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "test"),
                    "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
                    "usage": _usage(body, text),
                }
                self.wfile.write(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n".encode())
                self.wfile.flush()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"

    def __enter__(self) -> ScriptedOpenAIServer:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def _usage(body: dict[str, Any], text: str) -> dict[str, int]:
    prompt = sum(len(str(m.get("content", ""))) for m in body.get("messages", [])) // 4 + 1
    completion = len(text) // 4 + 1
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _completion(body: dict[str, Any], text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": body.get("model", "test"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
        "usage": _usage(body, text),
    }


def _tool_call(name: str, arguments: str) -> dict[str, Any]:
    return {"id": "call_test", "type": "function", "function": {"name": name, "arguments": arguments}}
