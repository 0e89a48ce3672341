"""`HttpPushSource`: `POST /ingest` with a JSONL body, for producers that cannot write files.

Why the endpoint is separate from the server: the daemon can mount the same `/ingest` in its main
HTTP server (one port to expose) by calling `IngestEndpoint.serve(handler)`, or the source listens on
its own port. A body is accepted whole or not at all: over `max_body_bytes` is 413, a line that is not
a JSON object is 400 naming the first such line, a full queue is 503 with Retry-After (nothing is
half-queued, so a client retry never duplicates). Off loopback a bearer token is required, checked
before any byte of the body is read. `BearerToken` is the one token check of every push route
(`/ingest` here, the OTLP receiver's routes too), so a fix to it covers them all.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Literal, Protocol

import orjson
from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from .._http_limits import LimitedHandler, LimitedServer, declared_length
from ..errors import ConfigError
from .base import Line, Position, SourceStats
from .file_tail.config import MAX_LINE_BYTES, MAX_QUEUE_LINES
from .file_tail.reader import SKIPPED, LineSplitter
from .line_queue import WAKE_SECONDS, LineQueue

__all__ = [
    "BearerToken",
    "HttpPushConfig",
    "HttpPushSource",
    "IngestEndpoint",
    "PushEndpoint",
    "Reply",
    "is_loopback",
    "require_token_off_loopback",
]

log = logging.getLogger(__name__)

ORIGIN = "http"
INGEST_PATH = "/ingest"


class HttpPushConfig(BaseModel):
    """Options of the `http_push` source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["http_push"] = Field("http_push", description="Source kind (the `sources:` discriminator).")
    name: str = Field("http", min_length=1, description="Source name; becomes the `source` label value.")
    listen_host: str | None = Field(
        "127.0.0.1",
        description="Address of this source's own server; None mounts `/ingest` on the daemon's main server.",
    )
    listen_port: int = Field(9478, ge=0, le=65535, description="Port of the own server (0: any free port).")
    bearer_token: SecretStr | None = Field(
        None, description="Token clients send as `Authorization: Bearer ...`; required off loopback."
    )
    bearer_token_file: Path | None = Field(
        None, description="File holding the token (a mounted secret); used when `bearer_token` is unset."
    )
    max_body_bytes: int = Field(
        16 * 1024 * 1024, gt=0, le=MAX_LINE_BYTES, description="Larger request bodies get 413."
    )
    queue_max_lines: int = Field(
        10_000,
        gt=0,
        le=MAX_QUEUE_LINES,
        description="Lines buffered for the pipeline; a body that does not fit waits, then 503.",
    )
    enqueue_timeout: timedelta = Field(
        timedelta(seconds=5),
        ge=timedelta(0),
        le=timedelta(minutes=5),
        description="How long a request waits for queue room before answering 503.",
    )
    drain_timeout: timedelta = Field(
        timedelta(seconds=10),
        ge=timedelta(0),
        le=timedelta(minutes=5),
        description="On a graceful stop, how long accepted lines still queued may take to be classified "
        "(new pushes get 503 meanwhile); lines left after it are logged as lost.",
    )

    @field_validator("bearer_token")
    @classmethod
    def _token_not_blank(cls, value: SecretStr | None) -> SecretStr | None:
        # compare_digest(b"", b"") is true: an empty token would let anyone in
        if value is not None and not value.get_secret_value().strip():
            raise ValueError("must not be empty or whitespace (an empty token would authenticate anyone)")
        return value


def require_token_off_loopback(config: HttpPushConfig, mounted_on_host: str | None = None) -> None:
    """Raise ConfigError when this source would listen off loopback without a bearer token, or when
    its `bearer_token_file` cannot be read or holds nothing but whitespace.

    Called by the source at start and by config validation, so `check-config` refuses what `run` refuses.
    """
    for host in (config.listen_host, mounted_on_host):
        if host is not None and not is_loopback(host) and not _has_token(config):
            raise ConfigError(
                f"{config.type} source {config.name!r} listens on {host}: bearer_token required off loopback",
                field=f"sources.{config.name}.bearer_token",
            )
    BearerToken.of(config)


class BearerToken:
    """The one bearer-token check of every push route: `refusal(headers)` before any body byte is read.

    Why a class of its own: `/ingest` (own port or mounted), and the OTLP receiver's `/v1/logs` and
    `/v1/traces`, must refuse the same requests the same way. An empty or whitespace token is a
    ConfigError (exit 2) at start; a `bearer_token_file` is re-read when it changes (a rotated
    Kubernetes secret), and if it then holds no token every push is refused (503) and logged,
    never accepted. No token configured at all (loopback only) lets every request through.
    """

    def __init__(self, token: SecretStr | None, token_file: Path | None, *, field: str) -> None:
        """`field`: the dotted config path named in errors (`sources.NAME.bearer_token_file`)."""
        self._field = field
        self._file = token_file if token is None else None
        self._lock = threading.Lock()
        self._stamp: tuple[int, int, int] | None = None
        self._token: bytes | None = None
        if token is not None:
            self._token = token.get_secret_value().strip().encode()
            if not self._token:
                raise ConfigError(f"{field}: bearer_token must not be empty or whitespace", field=field)
        elif self._file is not None:
            self._token = self._read_file()

    @classmethod
    def of(cls, config: HttpPushConfig) -> BearerToken:
        """The check configured by an http_push source (ConfigError naming the field)."""
        name = "bearer_token" if config.bearer_token is not None else "bearer_token_file"
        return cls(config.bearer_token, config.bearer_token_file, field=f"sources.{config.name}.{name}")

    @property
    def required(self) -> bool:
        return self._token is not None or self._file is not None

    def refusal(self, headers: Mapping[str, str]) -> Reply | None:
        """None when the request may go on; else the 401 (wrong/missing token) or 503 (no token now)."""
        expected = self._current()
        if not self.required:
            return None
        if expected is None:
            return _reply(503, "the server's bearer token file is empty or unreadable; refusing pushes")
        given = _header(headers, "Authorization") or ""
        scheme, _, token = given.partition(" ")
        if scheme.lower() != "bearer" or not hmac.compare_digest(token.strip().encode(), expected):
            return _reply(401, "missing or wrong bearer token")
        return None

    def _current(self) -> bytes | None:
        """The token now: a changed file (inode, size, mtime) is re-read and re-checked."""
        if self._file is None:
            return self._token
        with self._lock:
            try:
                st = os.stat(self._file)
                stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
            except OSError:
                stamp = None
            if stamp != self._stamp or stamp is None:
                try:
                    self._token = self._read_file()
                except ConfigError as exc:
                    if self._token is not None:
                        log.error("%s; refusing every push until it holds a token", exc)
                    self._token, self._stamp = None, None
                    return None
            return self._token

    def _read_file(self) -> bytes:
        assert self._file is not None
        try:
            st = os.stat(self._file)
            token = self._file.read_text().strip().encode()
        except (OSError, UnicodeDecodeError) as exc:
            message = f"{self._field}: cannot read bearer_token_file: {exc}"
            raise ConfigError(message, field=self._field) from exc
        if not token:
            raise ConfigError(
                f"{self._field}: {self._file} holds no token (empty or whitespace only)", field=self._field
            )
        self._stamp = (st.st_ino, st.st_size, st.st_mtime_ns)
        return token


def is_loopback(host: str) -> bool:
    """True for `localhost` and loopback IPs; any other name or address is treated as exposed."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True, slots=True)
class Reply:
    """An HTTP answer: status, JSON body and extra headers."""

    status: int
    body: bytes
    headers: Mapping[str, str] = field(default_factory=dict)


_STATUS_HEADERS: dict[int, dict[str, str]] = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}


def _reply(status: int, message: str, **extra: object) -> Reply:
    body = orjson.dumps({"status": status, "message": message, **extra})
    return Reply(status, body, _STATUS_HEADERS.get(status, {}))


class PushEndpoint(Protocol):
    """What a push source's own server serves: its paths, and one request on an `http.server` handler.

    `draining` is set by `HttpPushSource.drain()`: from then on new pushes get 503.
    """

    paths: frozenset[str]
    draining: threading.Event

    def serve(self, handler: BaseHTTPRequestHandler) -> None: ...


class IngestEndpoint:
    """The `/ingest` logic, independent of any server: checks, splits, validates, enqueues."""

    paths = frozenset({INGEST_PATH})

    def __init__(self, config: HttpPushConfig, lines: LineQueue, stats: SourceStats) -> None:
        self.config = config
        self._queue = lines
        self._stats = stats
        self.auth = BearerToken.of(config)
        self.draining = threading.Event()
        self._numbering = threading.Lock()
        self._line_no = 0

    def preflight(self, method: str, headers: Mapping[str, str]) -> Reply | None:
        """Method, auth and declared length, before the body is read; None when it may be read."""
        if method != "POST":
            return _reply(405, "use POST with a JSONL body")
        if self.draining.is_set():
            return _reply(503, "shutting down; push to another replica or retry")
        refused = self.auth.refusal(headers)
        if refused is not None:
            return refused
        header = _header(headers, "Content-Length")
        if header is None:
            return _reply(411, "Content-Length is required")
        length = declared_length(header)
        if length is None:  # `str.isdigit` accepts "²", which int() refuses
            return _reply(400, "Content-Length must be a decimal number of bytes")
        if length > self.config.max_body_bytes:
            return self._too_large()
        return None

    def handle(self, headers: Mapping[str, str], body: bytes) -> Reply:
        """Validate every line (a JSON object each, checked with orjson), then enqueue all or none."""
        if len(body) > self.config.max_body_bytes:
            return self._too_large()
        splitter = LineSplitter(self.config.max_body_bytes)
        pieces = splitter.feed(body)
        last = splitter.take_partial()
        if last is not None:
            pieces.append(last)
        records: list[bytes] = []
        for number, (data, _end) in enumerate(pieces, start=1):
            if data is SKIPPED or not _is_json_object(data):
                self._count_rejected("invalid_json")
                return _reply(400, f"line {number} is not a JSON object", line=number)
            records.append(data)
        if len(records) > self._queue.max_lines:
            return _reply(413, f"{len(records)} lines exceed queue_max_lines={self._queue.max_lines}")
        with self._numbering:
            first = self._line_no + 1
            self._line_no += len(records)
        lines = [Line(data, ORIGIN, first + i, None) for i, data in enumerate(records)]
        if self.draining.is_set():  # checked again: the drain may have begun while the body was read
            return _reply(503, "shutting down; push to another replica or retry")
        if not self._queue.put_all(lines, self.config.enqueue_timeout.total_seconds()):
            return _reply(503, "queue full; retry later")
        with self._stats.lock:
            self._stats.lines_read += len(records)
            self._stats.bytes_read += len(body)
        return Reply(200, orjson.dumps({"accepted": len(records)}))

    def respond(self, method: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Preflight and handle in one call, for a server that has already read the (bounded) body."""
        return self.preflight(method, headers) or self.handle(headers, body)

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer one request on any `http.server` handler (own server or the daemon's main one)."""
        headers = {key: value for key, value in handler.headers.items()}
        reply = self.preflight(handler.command, headers)
        if reply is None:
            body = handler.rfile.read(declared_length(_header(headers, "Content-Length")) or 0)
            reply = self.handle(headers, body)
        elif isinstance(handler, LimitedHandler):
            handler.skip_body()  # a small body is dropped, a big one left unread (connection closed)
        else:
            handler.close_connection = True  # the unread body must not be taken for the next request
        handler.send_response(reply.status)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(reply.body)))
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(reply.body)

    def _too_large(self) -> Reply:
        self._count_rejected("too_long")
        return _reply(413, f"body exceeds max_body_bytes={self.config.max_body_bytes}")

    def _count_rejected(self, reason: str) -> None:
        with self._stats.lock:
            self._stats.rejected[reason] += 1


class HttpPushSource:
    """Lines pushed over HTTP; `lines()` runs until `close()`; nothing to commit (position None)."""

    def __init__(self, config: HttpPushConfig, *, mounted_on_host: str | None = None) -> None:
        """`mounted_on_host`: the main server's listen host when `/ingest` is mounted there.

        Raises ConfigError when a non-loopback listener would run without a bearer token.
        """
        require_token_off_loopback(config, mounted_on_host)
        self.config = config
        self.name = config.name
        self.stats = SourceStats()
        self._queue = LineQueue(config.queue_max_lines, self.stats)
        self.endpoint: PushEndpoint = self._make_endpoint()
        self._server: LimitedServer | None = None
        self._thread: threading.Thread | None = None

    def _make_endpoint(self) -> PushEndpoint:
        """The request logic this source serves (a subclass serves another protocol on the same server)."""
        return IngestEndpoint(self.config, self._queue, self.stats)

    @property
    def address(self) -> tuple[str, int] | None:
        """(host, port) of the own server once started (the real port when 0 was asked)."""
        if self._server is None:
            return None
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    def bind(self) -> None:
        """Create the own server's listening socket now (no-op when mounted or bound).

        Why apart from `start()`: the daemon binds every port before it prints "serving", so a busy
        port is a ConfigError naming `listen_port` (exit 2), not a thread that dies after start.
        """
        if self.config.listen_host is None or self._server is not None:
            return
        try:
            self._server = LimitedServer((self.config.listen_host, self.config.listen_port), _handler(self))
        except OSError as exc:
            where = f"{self.config.listen_host}:{self.config.listen_port}"
            field = f"sources.{self.name}.listen_port"
            raise ConfigError(
                f"{field}: cannot listen on {where}: {exc.strerror or exc}", field=field
            ) from exc

    def start(self) -> None:
        """Bind if needed and serve in a thread (no-op when mounted or already started)."""
        if self.config.listen_host is None or self._thread is not None:
            return
        self.bind()
        assert self._server is not None
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(WAKE_SECONDS,), name=f"http_push[{self.name}]"
        )
        self._thread.daemon = True
        self._thread.start()

    def lines(self) -> Iterator[Line]:
        """Yield pushed lines until `close()`; starts the own server on first call."""
        self.start()
        yield from self._queue.lines()

    def commit(self, position: Position) -> None:
        """Nothing to record: pushed lines are acknowledged when queued (docs/tailing.md)."""

    def drain(self, timeout: float | None = None) -> int:
        """Graceful stop, first half: refuse new pushes (503), wait until every accepted line was
        handled by the pipeline or `timeout` (default `drain_timeout`) passed; returns lines left.

        Why: a 200 promised the lines would be counted; the runner's stop would otherwise drop what
        is still queued. Call before `close()`, while the pipeline still consumes. What is left is
        logged (there is nowhere to put it back).
        """
        self.endpoint.draining.set()
        wait = self.config.drain_timeout.total_seconds() if timeout is None else timeout
        deadline = time.monotonic() + wait
        while not self._queue.settled() and time.monotonic() < deadline:
            time.sleep(0.01)
        left = self._queue.pending()
        if left:
            log.error(
                "http_push source %s: %d accepted lines not classified within drain_timeout %.1f s; "
                "they are lost",
                self.name,
                left,
                wait,
                extra={"source": self.name},
            )
        return left

    def close(self) -> None:
        """Stop the own server and end `lines()`; idempotent."""
        self._queue.close()
        if self._server is not None:
            if (
                self._thread is not None
            ):  # shutdown() waits for serve_forever, which a bound-only server never ran
                self._server.shutdown()
            self._server.server_close()
            self._server = None
        if self._thread is not None:
            self._thread.join()
            self._thread = None


def _handler(source: HttpPushSource) -> type[BaseHTTPRequestHandler]:
    """The own server's handler: the endpoint's paths only, every method answered by the endpoint."""
    endpoint = source.endpoint

    class _Handler(LimitedHandler):
        def do_POST(self) -> None:
            if self.path.split("?", 1)[0] not in endpoint.paths:
                self.close_connection = True
                self.send_error(404)
                return
            endpoint.serve(self)

        # other methods get the endpoint's 405 (as when mounted), not http.server's 501
        do_GET = do_PUT = do_PATCH = do_DELETE = do_POST

    return _Handler


def _is_json_object(data: bytes) -> bool:
    try:
        return isinstance(orjson.loads(data), dict)
    except orjson.JSONDecodeError:
        return False


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    for key, value in headers.items():
        if key.lower() == lowered:
            return value
    return None


def _has_token(config: HttpPushConfig) -> bool:
    return config.bearer_token is not None or config.bearer_token_file is not None
