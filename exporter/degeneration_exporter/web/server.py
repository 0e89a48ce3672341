"""The daemon's one HTTP server: `/metrics`, `/`, `/healthz` and (with an http_push source) `/ingest`.

Why one server and a route table: Prometheus exporters expose one port, and auth/TLS from the web
config must cover every endpoint the same way; routes are plain callables so this module knows no
metrics, sources or HTML. `/healthz` stays open (no auth) so liveness probes need no secret; it
reveals nothing but "ok". TLS handshakes run in the request thread, never in the accept loop, so
one slow client cannot stall scrapes.
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .basic_auth import BasicAuth

__all__ = ["OPEN_PATHS", "Request", "Response", "Route", "WebServer"]

log = logging.getLogger(__name__)

OPEN_PATHS = frozenset({"/healthz"})
_SOCKET_TIMEOUT_S = 30.0
_CHALLENGE = 'Basic realm="degeneration-exporter"'


@dataclass(frozen=True, slots=True)
class Request:
    """What a route sees: method, path, query string, headers and the (bounded) body."""

    method: str
    path: str
    query: str
    headers: Message
    body: bytes
    client: str


@dataclass(frozen=True, slots=True)
class Response:
    """What a route returns."""

    status: int
    body: bytes
    content_type: str = "text/plain; charset=utf-8"
    headers: Mapping[str, str] = field(default_factory=dict)


Route = Callable[[Request], Response]


class WebServer:
    """Serves `routes` (keyed by (method, path)) on `listen`, with optional TLS and basic auth.

    `max_body_bytes` bounds request bodies (413 beyond it). `start()` runs the server in a daemon
    thread; `address` gives the bound (host, port), useful with port 0.
    """

    def __init__(
        self,
        listen: tuple[str, int],
        routes: Mapping[tuple[str, str], Route],
        *,
        auth: BasicAuth | None = None,
        ssl_context: ssl.SSLContext | None = None,
        max_body_bytes: int = 16 * 1024 * 1024,
    ) -> None:
        host, _ = listen
        handler = _make_handler(dict(routes), auth, max_body_bytes)
        server_cls: type[ThreadingHTTPServer] = (
            _TlsThreadingServer if ssl_context is not None else ThreadingHTTPServer
        )
        if ":" in host:
            ipv6 = {"address_family": socket.AF_INET6}
            server_cls = type(f"IPv6{server_cls.__name__}", (server_cls,), ipv6)
        self._server = server_cls(listen, handler)
        self._server.daemon_threads = True
        if isinstance(self._server, _TlsThreadingServer):
            self._server.ssl_context = ssl_context
        self._thread: threading.Thread | None = None

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._server.serve_forever, name="web", daemon=True)
        self._thread.start()
        log.info("web server listening", extra={"address": "{}:{}".format(*self.address)})

    def stop(self) -> None:
        """Stop accepting, close the socket; idempotent."""
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join()
            self._thread = None
        self._server.server_close()


class _TlsThreadingServer(ThreadingHTTPServer):
    ssl_context: ssl.SSLContext | None = None

    def finish_request(self, request: Any, client_address: Any) -> None:
        assert self.ssl_context is not None
        request.settimeout(_SOCKET_TIMEOUT_S)
        try:
            tls_request = self.ssl_context.wrap_socket(request, server_side=True)
        except (ssl.SSLError, OSError) as exc:
            log.debug("TLS handshake failed", extra={"client": client_address[0], "error": str(exc)})
            return
        try:
            super().finish_request(tls_request, client_address)
        finally:
            tls_request.close()


def _prefix_route(routes: dict[tuple[str, str], Route], method: str, path: str) -> Route | None:
    """A key ending in "/" (e.g. "/samples/") also serves every path one segment below it ("/" does not)."""
    head, _sep, rest = path.rpartition("/")
    if not head or not rest:
        return None
    return routes.get((method, head + "/"))


def _make_handler(
    routes: dict[tuple[str, str], Route], auth: BasicAuth | None, max_body_bytes: int
) -> type[BaseHTTPRequestHandler]:
    known_paths = {path for _, path in routes}

    class _Handler(BaseHTTPRequestHandler):
        server_version = "degeneration-exporter"
        protocol_version = "HTTP/1.1"
        timeout = _SOCKET_TIMEOUT_S

        def do_GET(self) -> None:
            self._dispatch()

        def do_HEAD(self) -> None:
            self._dispatch()

        def do_POST(self) -> None:
            self._dispatch()

        def _dispatch(self) -> None:
            url = urlsplit(self.path)
            if (
                auth is not None
                and url.path not in OPEN_PATHS
                and not auth.is_authorized(self.headers.get("Authorization"))
            ):
                self._send(Response(401, b"Unauthorized\n", headers={"WWW-Authenticate": _CHALLENGE}))
                return
            method = "GET" if self.command == "HEAD" else self.command
            route = routes.get((method, url.path)) or _prefix_route(routes, method, url.path)
            if route is None:
                status = 405 if url.path in known_paths else 404
                self._send(Response(status, b"Method Not Allowed\n" if status == 405 else b"Not Found\n"))
                return
            body = self._read_body()
            if body is None:
                return
            request = Request(self.command, url.path, url.query, self.headers, body, self.client_address[0])
            try:
                response = route(request)
            except Exception:  # a broken route must not kill the server thread or leave the client hanging
                log.exception("route failed", extra={"path": url.path})
                response = Response(500, b"Internal Server Error\n")
            self._send(response)

        def _read_body(self) -> bytes | None:
            length_header = self.headers.get("Content-Length")
            if length_header is None:
                return b""
            try:
                length = int(length_header)
            except ValueError:
                self._send(Response(400, b"bad Content-Length\n"))
                return None
            if length > max_body_bytes:
                self.close_connection = True
                self._send(Response(413, b"body too large\n"))
                return None
            return self.rfile.read(length) if length > 0 else b""

        def _send(self, response: Response) -> None:
            self.send_response(response.status)
            self.send_header("Content-Type", response.content_type)
            self.send_header("Content-Length", str(len(response.body)))
            for name, value in response.headers.items():
                self.send_header(name, value)
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)

        def log_message(self, format: str, *args: Any) -> None:
            log.debug("http " + format, *args)

    return _Handler
