"""FAULT INJECTOR for error-handling tests only: a local HTTP server that speaks the
OpenAI chat-completions protocol and, by script or at a set rate, answers with HTTP 429
(with Retry-After), 500, a timeout (it stalls), a truncated body, or a reply whose content
is not JSON. Its good replies are canned (the JSON the test asks for): it is not a model
and no content test may use it. Real-model tests use the llama.cpp server instead.

Faults only scripted (or named in ``faults``), never among the default random ones:
"drip" (a good reply's bytes one every ``drip_s`` seconds: no read ever times out, only a
deadline on the whole request ends it), "401_echo" and "500_echo" (an error body that
repeats the request's Authorization header and every other header, as a careless server
or proxy does), and "html_echo_200", "html_echo_401", "html_echo_500" (an HTML page with
that status that shows the bearer token in part first, then in full, HTML-escaped and
URL-encoded with lower-case escapes, as an error page of a proxy may).
"""

from __future__ import annotations

import html
import json
import random
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

FAULTS = ("429", "500", "stall", "truncated", "not_json")
SCRIPTED_FAULTS = ("drip", "401_echo", "500_echo", "html_echo_200", "html_echo_401", "html_echo_500")


class FaultInjectingServer:
    """``script``: faults for the first requests, in order ("ok" for a good reply); after
    it, each request is a fault out of ``faults`` with probability ``rate`` (seeded). ``reply(request)`` gives
    the good reply's content. ``fault_for(request)``, when given, names the action for each
    request by its content (None: go on to the script), so concurrent requests meet their
    faults whatever order they arrive in. ``reject_json_schema`` answers HTTP 500 to any request with a
    ``json_schema`` response_format, as llama.cpp's server does."""

    def __init__(
        self,
        reply: Callable[[dict], str],
        script: list[str] | None = None,
        rate: float = 0.0,
        seed: int = 0,
        stall_s: float = 2.0,
        reject_json_schema: bool = False,
        faults: tuple[str, ...] = FAULTS,
        drip_s: float = 0.2,
        fault_for: Callable[[dict], str | None] | None = None,
    ):
        self.reply, self.script, self.rate = reply, list(script or []), rate
        self.random, self.stall_s, self.reject_json_schema = random.Random(seed), stall_s, reject_json_schema
        self.faults, self.drip_s, self.fault_for = faults, drip_s, fault_for
        self._closing = threading.Event()  # a dripping reply stops when the server does
        self.requests: list[dict] = []  # every request body received, in order
        self.headers: list[dict] = []
        self._lock = threading.Lock()
        self._server = _QuietServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FaultInjectingServer:
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._closing.set()
        self._server.shutdown()
        self._server.server_close()

    def _next_action(self, body: dict) -> str:
        with self._lock:
            self.requests.append(body)
            if self.reject_json_schema and body.get("response_format", {}).get("type") == "json_schema":
                return "reject"
            if self.fault_for is not None and (action := self.fault_for(body)) is not None:
                return action
            if self.script:
                return self.script.pop(0)
            return self.random.choice(self.faults) if self.random.random() < self.rate else "ok"

    def _handler(self):
        injector = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if self.path != "/v1/chat/completions":
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                injector.headers.append({k.lower(): v for k, v in self.headers.items()})
                action = injector._next_action(body)
                if action == "stall":
                    time.sleep(injector.stall_s)
                    action = "ok"  # too late: the client has given up
                if action in ("401_echo", "500_echo"):
                    sent = dict(self.headers.items())
                    status = 401 if action == "401_echo" else 500
                    problem = "invalid API key" if status == 401 else "upstream failed"
                    message = f"{problem}; request had Authorization: {self.headers.get('Authorization')}"
                    self._send(status, {"error": {"message": message, "type": "echo", "request_headers": sent}})
                elif action.startswith("html_echo_"):
                    token = (self.headers.get("Authorization") or "").removeprefix("Bearer ")
                    encoded = "".join(f"%{b:02x}" if not chr(b).isalnum() else chr(b) for b in token.encode())
                    page = (f"<html><body><p>token {token[:len(token) * 2 // 3]}</p><p>{html.escape(token)}</p>"
                            f"<a href='/retry?t={encoded}&amp;x=1'>retry</a><pre>{html.escape(repr(dict(self.headers.items())))}</pre></body></html>")
                    data = page.encode()
                    self.send_response(int(action.rsplit("_", 1)[1]))
                    self.send_header("Content-Type", "text/html")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                elif action == "drip":
                    data = json.dumps(_completion(body, injector.reply(body))).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.flush()
                    try:
                        for i in range(len(data)):
                            if injector._closing.wait(injector.drip_s):
                                break
                            self.wfile.write(data[i : i + 1])
                            self.wfile.flush()
                    except OSError:  # the client gave up and closed the connection
                        pass
                    self.close_connection = True
                elif action == "429":
                    self._send(429, {"error": {"message": "rate limited"}}, {"Retry-After": "0.05"})
                elif action in ("500", "reject"):
                    self._send(500, {"error": {"message": "json_schema not supported" if action == "reject" else "boom"}})
                elif action == "truncated":
                    data = json.dumps(_completion(body, injector.reply(body))).encode()
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data[: len(data) // 2])  # then the connection closes
                    self.close_connection = True
                else:
                    content = "Sure! Here it is: {oops" if action == "not_json" else injector.reply(body)
                    self._send(200, _completion(body, content))

            def _send(self, status: int, payload: dict, headers: dict | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

        return Handler


class _QuietServer(ThreadingHTTPServer):
    # server_close() waits for every handler: a request the client gave up on (a timeout on a
    # loaded machine) is still read and recorded before a test counts ``requests``
    daemon_threads = False
    block_on_close = True

    def handle_error(self, request, client_address) -> None:
        pass  # a client that gave up on a stalled reply closes the socket: expected here


def _completion(body: dict, content: str) -> dict:
    return {
        "id": "fault-injector",
        "object": "chat.completion",
        "created": 0,
        "model": body.get("model", "fault-injector"),
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }
