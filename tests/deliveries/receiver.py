"""A real HTTP server on 127.0.0.1 that deliveries are sent to, answering by path:

/ok → 200, /redirect → 302 to ``redirect_to``, /404, /410, /500 → those codes,
/429 → 429 with ``Retry-After: 2``, /big → 10 MB, /google/... and /tiktok/... → their answers,
/hang → no answer until the test ends;
anything else → 200. Every request is recorded (with its arrival time).

And a canary: a TCP port that must see no connection.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass(frozen=True, slots=True)
class Received:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic()


class Receiver:
    def __init__(self) -> None:
        self.requests: list[Received] = []
        self.redirect_to = "http://127.0.0.1:9/"
        self._release = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._answer()

            def do_POST(self) -> None:
                self._answer()

            def _answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                receiver.requests.append(
                    Received(
                        self.command,
                        parts.path,
                        parse_qs(parts.query),
                        {k.lower(): v for k, v in self.headers.items()},
                        body,
                        time.monotonic(),
                    )
                )
                kind = parts.path.strip("/").split("/")[0]
                if kind == "hang":
                    receiver._release.wait(30)
                    self.close_connection = True  # hang up: the client is not left waiting
                    return
                headers: list[tuple[str, str]] = []
                code = int(kind) if kind.isdigit() else 200
                if kind == "redirect":
                    code = 302
                    headers.append(("location", receiver.redirect_to))
                if code == 429:
                    headers.append(("retry-after", "2"))
                payload = b"answer " + str(code).encode()
                if kind == "big":
                    payload = b"x" * 10_000_000
                if kind == "google":
                    payload = receiver.google(parts.path, body)
                if kind == "tiktok":  # TikTok's answer to an event it took
                    payload = b'{"code": 0, "message": "OK", "data": {}}'
                self.send_response(code)
                for name, value in headers:
                    self.send_header(name, value)
                self.send_header("content-length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port: int = self._server.server_address[1]
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @staticmethod
    def google(path: str, body: bytes) -> bytes:
        """Google's OAuth refresh and click-conversion upload, as their answers look; a gclid
        "unknown" is refused inside a 200 answer, as Google does."""
        if path.endswith("/token"):
            return b'{"access_token": "ya29.fresh-token", "expires_in": 3599}'
        if b'"gclid":"unknown"' in body:
            return b'{"partialFailureError": {"code": 3, "message": "The click is not found."}}'
        return b'{"results": [{"gclid": "ok"}]}'

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Received]:
        return [r for r in self.requests if r.path == path]

    def close(self) -> None:
        self._release.set()
        self._server.shutdown()
        self._server.server_close()


class Canary:
    """A listening port that counts the connections it is offered."""

    def __init__(self, host: str = "127.0.0.1") -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self._socket = socket.socket(family, socket.SOCK_STREAM)
        self._socket.bind((host, 0))
        self._socket.listen(16)
        self._socket.settimeout(0.1)
        self.port: int = self._socket.getsockname()[1]
        self.connections = 0
        self._closed = False
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed:
            try:
                conn, _ = self._socket.accept()
            except (TimeoutError, OSError):
                continue
            self.connections += 1
            conn.close()

    def close(self) -> None:
        self._closed = True
        self._thread.join()
        self._socket.close()
