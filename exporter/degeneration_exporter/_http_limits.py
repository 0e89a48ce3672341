"""Limits every HTTP server of the daemon applies before a route runs: connections, head size, deadline.

Why one module for both servers (the main one in `web/server.py`, an `http_push` source's own port):
a torture run found the same holes in each — a 5-deep listen backlog (3.7 % resets at 200 clients),
a thread per connection without bound, 99 headers of 60 KB accepted, and a per-recv timeout that a
client sending one byte a second never trips. `http.server` is kept (no new dependency); this adds:

* `LimitedServer`: at most `max_connections` connections served at once (the accept thread waits
  `SLOT_WAIT_S` for a slot, then answers 503 and closes without reading anything), a listen
  backlog of `LISTEN_BACKLOG`, and a deadline per request, enforced by one reaper thread that
  shuts the socket down when it passes (a blocked `recv` returns, the handler thread ends).
* `LimitedHandler`: the request line plus headers are at most `MAX_HEAD_BYTES` and
  `MAX_HEADER_COUNT` (431 beyond), unexpected errors are logged at debug, not printed.
* `declared_length`: the one parser of `Content-Length` (`"²".isdigit()` is true, int("²") fails).

Nothing here imports the package: both `sources/` and `web/` use it (tests/test_layers.py).
"""

from __future__ import annotations

import contextlib
import http.client
import io
import logging
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = [
    "DISCARD_BODY_BYTES",
    "LISTEN_BACKLOG",
    "MAX_CONNECTIONS",
    "MAX_HEADER_COUNT",
    "MAX_HEAD_BYTES",
    "REQUEST_DEADLINE_S",
    "LimitedHandler",
    "LimitedServer",
    "declared_length",
]

log = logging.getLogger(__name__)

LISTEN_BACKLOG = 128
"""Pending connections the kernel queues (socketserver's default is 5)."""
MAX_CONNECTIONS = 64
"""Connections served at once (one thread each); more get 503 from the accept thread."""
SLOT_WAIT_S = 0.05
"""How long the accept thread waits for a free slot before the 503 (short requests free one fast)."""
MAX_HEAD_BYTES = 64 * 1024
"""Request line plus every header line, in bytes."""
MAX_HEADER_COUNT = 64
DISCARD_BODY_BYTES = 64 * 1024
"""A refused request's body up to this size is read and dropped (its client then sees the answer and
the connection stays usable); a bigger one is left unread and the connection closed."""
REQUEST_DEADLINE_S = 30.0
"""Whole-request deadline: from the first byte of the request line to the last byte of the answer
(for a kept-alive connection, the wait for the next request counts too)."""

_BUSY = (
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n"
    b"Content-Length: 9\r\nRetry-After: 1\r\nConnection: close\r\n\r\ntoo busy\n"
)


def declared_length(value: str | None) -> int | None:
    """A Content-Length header's value in bytes, or None unless it is 1 to 19 plain ASCII digits."""
    if value is None:
        return None
    value = value.strip()
    if not value or len(value) > 19 or not value.isascii() or not value.isdigit():
        return None
    return int(value)


class _Deadlines:
    """One reaper thread for a server: shuts down sockets whose request deadline has passed."""

    def __init__(self) -> None:
        self._armed: dict[int, tuple[socket.socket, float]] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.expired = 0

    def arm(self, sock: socket.socket, seconds: float) -> None:
        with self._lock:
            self._armed[id(sock)] = (sock, time.monotonic() + seconds)
            if self._thread is None:
                self._thread = threading.Thread(target=self._reap, name="http-deadlines", daemon=True)
                self._thread.start()

    def disarm(self, sock: socket.socket) -> None:
        with self._lock:
            self._armed.pop(id(sock), None)

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def _reap(self) -> None:
        while not self._stop.wait(0.25):
            now = time.monotonic()
            with self._lock:
                late = [key for key, (_, deadline) in self._armed.items() if deadline <= now]
                socks = [self._armed.pop(key)[0] for key in late]
            for sock in socks:
                self.expired += 1
                # the base method: SSLSocket.shutdown would also drop its TLS state under the reader;
                # OSError: already closed by its own thread
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)


class LimitedServer(ThreadingHTTPServer):
    """`ThreadingHTTPServer` with bounded connections, a deep backlog and per-request deadlines."""

    request_queue_size = LISTEN_BACKLOG
    daemon_threads = True
    busy_answer: bytes | None = _BUSY
    """Written to a connection refused for lack of slots; None on TLS (no handshake is made for it)."""

    def __init__(
        self,
        address: tuple[str, int],
        handler: type[BaseHTTPRequestHandler],
        *,
        max_connections: int = MAX_CONNECTIONS,
        request_deadline_s: float = REQUEST_DEADLINE_S,
    ) -> None:
        self.max_connections = max_connections
        self.request_deadline_s = request_deadline_s
        self.deadlines = _Deadlines()
        self.refused_busy = 0
        self._slots = threading.BoundedSemaphore(max_connections)
        super().__init__(address, handler)

    def process_request(self, request: Any, client_address: Any) -> None:
        if not self._slots.acquire(timeout=SLOT_WAIT_S):
            self.refused_busy += 1
            self._refuse(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request: Any, client_address: Any) -> None:
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def _refuse(self, request: socket.socket) -> None:
        try:
            if self.busy_answer is not None:
                request.settimeout(0.1)
                request.sendall(self.busy_answer)
        except OSError:
            pass
        finally:
            self.shutdown_request(request)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A broken client is not news: debug log, never a traceback on stderr."""
        log.debug("HTTP connection from %s failed", client_address, exc_info=True)

    def server_close(self) -> None:
        super().server_close()
        self.deadlines.close()


class _HeadBudget:
    """The handler's `rfile`, counting bytes read by `readline` (the request head) against a budget."""

    def __init__(self, raw: io.BufferedIOBase, budget: int) -> None:
        self._raw = raw
        self._budget = budget
        self.remaining = budget

    def reset(self) -> None:
        self.remaining = self._budget

    def readline(self, size: int = -1) -> bytes:
        cap = self.remaining + 1 if size < 0 else min(size, self.remaining + 1)
        line = self._raw.readline(cap)
        self.remaining -= len(line)
        if self.remaining < 0:
            raise http.client.LineTooLong(f"request head over {self._budget} bytes")
        return line

    def read(self, size: int = -1) -> bytes:
        return self._raw.read(size)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


class LimitedHandler(BaseHTTPRequestHandler):
    """Applies the head limits and arms the server's deadline around each request."""

    server: LimitedServer
    timeout = REQUEST_DEADLINE_S  # per recv; the deadline bounds the whole request

    def setup(self) -> None:
        super().setup()
        self._head = _HeadBudget(self.rfile, MAX_HEAD_BYTES)
        self.rfile = self._head  # type: ignore[assignment]

    def handle_one_request(self) -> None:
        self._head.reset()
        self.server.deadlines.arm(self.connection, self.server.request_deadline_s)
        try:
            super().handle_one_request()
        except http.client.LineTooLong:
            self.close_connection = True
            self.send_error(431, "Request Header Fields Too Large")
        except (OSError, ValueError):
            self.close_connection = True  # deadline reached (socket shut down) or the client went away
        finally:
            self.server.deadlines.disarm(self.connection)

    def skip_body(self) -> None:
        """Before a refusal: drop a small declared body, else mark the connection to be closed.

        Why: closing a socket with unread bytes makes the kernel send a reset, and the client may lose
        the answer; reading an unauthenticated 16 MiB body to avoid that is what bug 4 was about.
        """
        length = declared_length(self.headers.get("Content-Length")) if self.headers else None
        if (
            self.headers.get("Transfer-Encoding") is None
            and length is not None
            and length <= DISCARD_BODY_BYTES
        ):
            if length:
                self.rfile.read(length)
            return
        if (
            self.headers.get("Content-Length") is not None
            or self.headers.get("Transfer-Encoding") is not None
        ):
            self.close_connection = True

    def parse_request(self) -> bool:
        if not super().parse_request():
            return False
        if len(self.headers) > MAX_HEADER_COUNT:
            self.close_connection = True
            self.send_error(431, f"more than {MAX_HEADER_COUNT} headers")
            return False
        return True

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("http " + format, *args)
