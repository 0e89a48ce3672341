"""The daemon's one HTTP server: `/metrics`, `/`, `/healthz` and (with an http_push source) `/ingest`.

Why one server and a route table: Prometheus exporters expose one port, and auth/TLS from the web
config must cover every endpoint the same way; routes are plain callables so this module knows no
metrics, sources or HTML. `/healthz` stays open (no auth) so liveness probes need no secret; it
reveals nothing but "ok" or "degraded" and source-level problems. TLS handshakes run in the request
thread, never in the accept loop, so one slow client cannot stall scrapes.
Before any body byte is read: basic auth, the route's own `preflight` (a push route's bearer token)
and the declared `Content-Length` against the route's limit; GET routes never read a body at all.
Connections, head size and the whole-request time are bounded by `_http_limits` (docs/security.md).
"""

from __future__ import annotations

import logging
import socket
import ssl
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from email.message import Message
from http.server import BaseHTTPRequestHandler
from typing import Any
from urllib.parse import urlsplit

from .._http_limits import MAX_CONNECTIONS, REQUEST_DEADLINE_S, LimitedHandler, LimitedServer, declared_length
from .basic_auth import BasicAuth

__all__ = ["OPEN_PATHS", "GuardedRoute", "Request", "Response", "Route", "WebServer"]

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

Preflight = Callable[[str, Mapping[str, str]], Response | None]
"""(method, headers) -> a refusal, or None when the body may be read."""


@dataclass(frozen=True, slots=True)
class GuardedRoute:
    """A route that accepts a body: `preflight` (auth, declared length) runs before any body byte
    is read, and `max_body_bytes` bounds it (413 from the declared length, nothing read)."""

    handle: Route
    preflight: Preflight
    max_body_bytes: int

    def __call__(self, request: Request) -> Response:
        return self.handle(request)


class WebServer:
    """Serves `routes` (keyed by (method, path)) on `listen`, with optional TLS and basic auth.

    `max_body_bytes` bounds the body of a POST route that is not a `GuardedRoute` (413 beyond it);
    GET routes never read one. `max_connections` and `request_deadline_s` are `_http_limits`'.
    `start()` runs the server in a daemon thread; `address` gives the bound (host, port).
    """

    def __init__(
        self,
        listen: tuple[str, int],
        routes: Mapping[tuple[str, str], Route],
        *,
        auth: BasicAuth | None = None,
        ssl_context: ssl.SSLContext | None = None,
        max_body_bytes: int = 1024 * 1024,
        max_connections: int = MAX_CONNECTIONS,
        request_deadline_s: float = REQUEST_DEADLINE_S,
        require_client_cert: bool = False,
    ) -> None:
        """`require_client_cert`: mTLS, enforced per request so `/healthz` needs no certificate (the
        context must then verify optionally, as `build_ssl_context` makes it)."""
        host, _ = listen
        handler = _make_handler(
            dict(routes), auth, max_body_bytes, require_client_cert and ssl_context is not None
        )
        server_cls: type[LimitedServer] = _TlsThreadingServer if ssl_context is not None else LimitedServer
        if ":" in host:
            ipv6 = {"address_family": socket.AF_INET6}
            server_cls = type(f"IPv6{server_cls.__name__}", (server_cls,), ipv6)
        self._server = server_cls(
            listen, handler, max_connections=max_connections, request_deadline_s=request_deadline_s
        )
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


class _TlsThreadingServer(LimitedServer):
    ssl_context: ssl.SSLContext | None = None
    busy_answer = None  # a refused connection gets no handshake, so no HTTP answer either

    def finish_request(self, request: Any, client_address: Any) -> None:
        assert self.ssl_context is not None
        request.settimeout(_SOCKET_TIMEOUT_S)
        try:
            tls_request = self.ssl_context.wrap_socket(
                request, server_side=True, do_handshake_on_connect=False
            )
            self.deadlines.arm(tls_request, self.request_deadline_s)  # a handshake a byte a second ends too
            try:
                tls_request.do_handshake()
            finally:
                self.deadlines.disarm(tls_request)
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
    routes: dict[tuple[str, str], Route], auth: BasicAuth | None, max_body_bytes: int, require_cert: bool
) -> type[BaseHTTPRequestHandler]:
    known_paths = {path for _, path in routes}

    class _Handler(LimitedHandler):
        server_version = "degeneration-exporter"
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self._dispatch()

        def do_HEAD(self) -> None:
            self._dispatch()

        def do_POST(self) -> None:
            self._dispatch()

        def _dispatch(self) -> None:
            url = urlsplit(self.path)
            if require_cert and url.path not in OPEN_PATHS and not self._has_client_cert():
                self._refuse(Response(403, b"client certificate required\n"))
                return
            if (
                auth is not None
                and url.path not in OPEN_PATHS
                and not auth.is_authorized(self.headers.get("Authorization"))
            ):
                self._refuse(Response(401, b"Unauthorized\n", headers={"WWW-Authenticate": _CHALLENGE}))
                return
            method = "GET" if self.command == "HEAD" else self.command
            route = routes.get((method, url.path)) or _prefix_route(routes, method, url.path)
            if route is None:
                status = 405 if url.path in known_paths else 404
                self._refuse(Response(status, b"Method Not Allowed\n" if status == 405 else b"Not Found\n"))
                return
            if isinstance(route, GuardedRoute):
                refused = route.preflight(self.command, dict(self.headers.items()))
                if refused is not None:
                    self._refuse(refused)
                    return
            body = self._read_body(route, method)
            if body is None:
                return
            request = Request(self.command, url.path, url.query, self.headers, body, self.client_address[0])
            try:
                response = route(request)
            except Exception:  # a broken route must not kill the server thread or leave the client hanging
                log.exception("route failed", extra={"path": url.path})
                response = Response(500, b"Internal Server Error\n")
            self._send(response)

        def _refuse(self, response: Response) -> None:
            """Answer without reading a big body (the connection then closes; see `skip_body`)."""
            self.skip_body()
            self._send(response)

        def _has_client_cert(self) -> bool:
            connection = self.connection
            return isinstance(connection, ssl.SSLSocket) and bool(connection.getpeercert())

        def _read_body(self, route: Route, method: str) -> bytes | None:
            """The body, read only for POST and only within the route's limit; None when refused."""
            length_header = self.headers.get("Content-Length")
            if self.headers.get("Transfer-Encoding") is not None:
                self.close_connection = True  # chunked bodies are not supported: never parse one as a request
                if method == "POST":
                    self._send(Response(411, b"Content-Length required\n"))
                    return None
            if length_header is None:
                return b""
            length = declared_length(length_header)
            if length is None:
                self.close_connection = True
                self._send(Response(400, b"bad Content-Length\n"))
                return None
            if method != "POST":
                if length:
                    self.close_connection = True  # a GET body is never read
                return b""
            limit = route.max_body_bytes if isinstance(route, GuardedRoute) else max_body_bytes
            if length > limit:
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
            if self.close_connection:
                self.send_header("Connection", "close")
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(response.body)

    return _Handler
