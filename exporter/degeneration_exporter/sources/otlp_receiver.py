"""`OtlpReceiverSource` (`type: otlp`): OTLP/HTTP `POST /v1/logs` and `/v1/traces`, protobuf or JSON.

Why a push source of its own: apps already instrumented with the OpenTelemetry GenAI
instrumentations (or a Collector's `otlphttp` exporter) can send their completions here unchanged.
It is the `http_push` source with another protocol: the same listener options, bearer token (one
check, `http_push.BearerToken`, before any byte of the body is read), body limit and queue.
A request is decoded here (gzip bounded by `max_body_bytes` after inflating too; protobuf through
the opentelemetry-proto classes of the `otlp` extra, converted to OTLP/JSON with hex ids), then
handed to `split`, which the daemon takes from formats/_genai.py (a source knows no formats): one
queued line per completion-carrying log record or span, in `otlp_json`. Items the split rejects
are counted and answered as the OTLP partial success; other telemetry is accepted and dropped, and
so are messages already queued from the other signal (the same span's attribute and event).
Answers follow the OTLP/HTTP spec: the Export*ServiceResponse, or a `google.rpc.Status`, in the
request's own encoding.
"""

from __future__ import annotations

import base64
import binascii
import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

import orjson
from pydantic import Field

from .._http_limits import LimitedHandler, declared_length
from ..errors import RecordError
from .base import Line, SourceStats
from .http_push import BearerToken, HttpPushConfig, HttpPushSource, PushEndpoint, Reply
from .line_queue import LineQueue

__all__ = ["LOGS_PATH", "TRACES_PATH", "OtlpEndpoint", "OtlpReceiverConfig", "OtlpReceiverSource", "Split"]

log = logging.getLogger(__name__)

LOGS_PATH = "/v1/logs"
TRACES_PATH = "/v1/traces"
ORIGIN = "otlp"
PROTOBUF = "application/x-protobuf"
JSON = "application/json"

Split = Callable[[Mapping[str, Any]], Iterable[tuple[bytes, str | None] | RecordError]]
"""An OTLP/JSON request -> per completion-carrying item, (its one-item request line, the key of its
messages when they may also come on the other signal) or why it is rejected."""

WARN_EVERY_S = 10.0
"""At most one log line about rejected completions in this many seconds (the counters see them all)."""
SEEN_KEYS = 10_000
"""Message keys remembered per signal for dropping the other signal's copy (bounded memory)."""

Signal = Literal["logs", "traces"]
_SIGNALS: dict[str, Signal] = {LOGS_PATH: "logs", TRACES_PATH: "traces"}

# google.rpc.Code per HTTP status (OTLP/HTTP: failures carry a Status message)
_RPC_CODES = {400: 3, 401: 16, 405: 12, 411: 3, 413: 8, 415: 3, 500: 13, 503: 14}
_HEADERS: dict[int, dict[str, str]] = {401: {"WWW-Authenticate": "Bearer"}, 503: {"Retry-After": "1"}}


class OtlpReceiverConfig(HttpPushConfig):
    """Options of the `otlp` source: those of `http_push`, with the OTLP/HTTP port and paths."""

    type: Literal["otlp"] = Field(  # type: ignore[assignment]  # the discriminator value of this subclass
        "otlp", description="Source kind (the `sources:` discriminator)."
    )
    name: str = Field("otlp", min_length=1, description="Source name; becomes the `source` label value.")
    listen_host: str | None = Field(
        "127.0.0.1",
        description="Address of this source's own server; None mounts `/v1/logs` and `/v1/traces` on the "
        "daemon's main server.",
    )
    listen_port: int = Field(
        4318, ge=0, le=65535, description="Port of the own server (4318 is OTLP/HTTP's; 0: any free port)."
    )


class OtlpEndpoint:
    """The OTLP/HTTP logic, independent of any server: checks, inflates, decodes, splits, enqueues."""

    paths = frozenset(_SIGNALS)

    def __init__(self, config: HttpPushConfig, lines: LineQueue, stats: SourceStats, split: Split) -> None:
        self.config = config
        self._queue = lines
        self._stats = stats
        self._split = split
        self._seen = _SeenMessages(SEEN_KEYS)
        self.auth = BearerToken.of(config)
        self.draining = threading.Event()
        self._numbering = threading.Lock()
        self._line_no = 0
        self._next_warning = 0.0

    def preflight(self, method: str, headers: Mapping[str, str]) -> Reply | None:
        """Method, auth, declared length and encoding, before the body is read; None when it may be read."""
        encoding = _encoding(headers)
        if method != "POST":
            return _status(405, "use POST with an OTLP request", encoding)
        if self.draining.is_set():
            return _status(503, "shutting down; push to another replica or retry", encoding)
        refused = self.auth.refusal(headers)
        if refused is not None:
            message = orjson.loads(refused.body).get("message", "refused")
            return _status(refused.status, str(message), encoding)
        header = _header(headers, "Content-Length")
        if header is None:
            return _status(411, "Content-Length is required", encoding)
        length = declared_length(header)
        if length is None:
            return _status(400, "Content-Length must be a decimal number of bytes", encoding)
        if length > self.config.max_body_bytes:
            return self._too_large(encoding or JSON)
        if encoding is None:
            return _status(415, f"Content-Type must be {PROTOBUF} or {JSON}", JSON)
        if _header(headers, "Content-Encoding") not in (None, "", "identity", "gzip"):
            return _status(415, "Content-Encoding must be gzip or none", encoding)
        return None

    def handle(self, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Decode one request, queue its completions all or none, answer with the (partial) success."""
        signal = _SIGNALS[path]
        encoding = _encoding(headers) or JSON
        if len(body) > self.config.max_body_bytes:
            return self._too_large(encoding)
        if _header(headers, "Content-Encoding") == "gzip":
            try:
                body = _gunzip(body, self.config.max_body_bytes)
            except _TooLarge:
                return self._too_large(encoding)
            except zlib.error as exc:
                return self._malformed(f"bad gzip body: {exc}", encoding)
        try:
            request = _decode(signal, body, encoding)
        except _Unsupported as exc:
            return _status(415, str(exc), encoding)
        except ValueError as exc:
            return self._malformed(str(exc), encoding)
        lines: list[bytes] = []
        keys: list[str] = []
        rejected: list[RecordError] = []
        for item in self._split(request):
            if isinstance(item, RecordError):
                rejected.append(item)
            elif not self._seen.came_on_other_signal(signal, item[1]):
                lines.append(item[0])
                keys.extend([item[1]] if item[1] is not None else [])
        if len(lines) > self._queue.max_lines:
            return _status(413, f"{len(lines)} completions exceed queue_max_lines", encoding)
        with self._numbering:
            first = self._line_no + 1
            self._line_no += len(lines)
        queued = [Line(data, ORIGIN, first + i, None) for i, data in enumerate(lines)]
        if not self._queue.put_all(queued, self.config.enqueue_timeout.total_seconds()):
            return _status(503, "queue full; retry later", encoding)
        self._seen.remember(signal, keys)
        with self._stats.lock:
            self._stats.lines_read += len(lines)
            self._stats.bytes_read += len(body)
            for error in rejected:
                self._stats.rejected[error.reason] += 1
        if rejected and time.monotonic() >= self._next_warning:  # counted always, logged every 10 s
            self._next_warning = time.monotonic() + WARN_EVERY_S
            log.warning(
                "%s: %d rejected: %s", path, len(rejected), rejected[0], extra={"source": self.config.name}
            )
        return _success(signal, rejected, encoding)

    def respond(self, method: str, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """Preflight and handle in one call, for a server that has already read the (bounded) body."""
        return self.preflight(method, headers) or self._guarded(path, headers, body)

    def _guarded(self, path: str, headers: Mapping[str, str], body: bytes) -> Reply:
        """`handle`, with a bug in decoding answered 500 (counted `internal`) instead of a dropped socket."""
        try:
            return self.handle(path, headers, body)
        except Exception:
            log.exception("%s: request failed", path, extra={"source": self.config.name})
            self._count_rejected("internal")
            return _status(500, "internal error; see the exporter's log", _encoding(headers))

    def serve(self, handler: BaseHTTPRequestHandler) -> None:
        """Answer one request on any `http.server` handler (the source's own server)."""
        headers = {key: value for key, value in handler.headers.items()}
        reply = self.preflight(handler.command, headers)
        if reply is None:
            body = handler.rfile.read(declared_length(_header(headers, "Content-Length")) or 0)
            reply = self._guarded(handler.path.split("?", 1)[0], headers, body)
        elif isinstance(handler, LimitedHandler):
            handler.skip_body()  # a small body is dropped, a big one left unread (connection closed)
        else:
            handler.close_connection = True  # the unread body must not be taken for the next request
        handler.send_response(reply.status)
        for key, value in reply.headers.items():
            handler.send_header(key, value)
        handler.send_header("Content-Length", str(len(reply.body)))
        handler.end_headers()
        handler.wfile.write(reply.body)

    def _too_large(self, encoding: str) -> Reply:
        self._count_rejected("too_long")
        return _status(413, f"body exceeds max_body_bytes={self.config.max_body_bytes}", encoding)

    def _malformed(self, message: str, encoding: str) -> Reply:
        self._count_rejected("invalid_json")
        return _status(400, message, encoding)

    def _count_rejected(self, reason: str) -> None:
        with self._stats.lock:
            self._stats.rejected[reason] += 1


class OtlpReceiverSource(HttpPushSource):
    """OTLP pushes as `otlp_json` lines; `lines()` runs until `close()`; nothing to commit."""

    def __init__(self, config: HttpPushConfig, split: Split, *, mounted_on_host: str | None = None) -> None:
        """`split`: formats/_genai.py's `split_otlp_request` (given by the daemon); `mounted_on_host`: the
        main server's host when the paths are mounted there. ConfigError: no token off loopback."""
        self._split = split
        super().__init__(config, mounted_on_host=mounted_on_host)

    def _make_endpoint(self) -> PushEndpoint:
        return OtlpEndpoint(self.config, self._queue, self.stats, self._split)


class _SeenMessages:
    """The message keys queued per signal, the last `limit` of each; a key queued from one signal drops
    the same messages arriving on the other (content on spans and on events, docs/otlp.md). Two
    copies arriving at the very same moment may both count: a rare double, never a loss."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._lock = threading.Lock()
        self._keys: dict[Signal, OrderedDict[str, None]] = {"logs": OrderedDict(), "traces": OrderedDict()}

    def came_on_other_signal(self, signal: Signal, key: str | None) -> bool:
        if key is None:
            return False
        other: Signal = "traces" if signal == "logs" else "logs"
        with self._lock:
            return key in self._keys[other]

    def remember(self, signal: Signal, keys: list[str]) -> None:
        with self._lock:
            seen = self._keys[signal]
            for key in keys:
                seen[key] = None
                seen.move_to_end(key)
            while len(seen) > self._limit:
                seen.popitem(last=False)


# -- wire encoding ---------------------------------------------------------------------------------


class _TooLarge(Exception):
    """The inflated body would exceed max_body_bytes."""


class _Unsupported(ValueError):
    """A protobuf request without the protobuf classes installed (the `otlp` extra)."""


def _header(headers: Mapping[str, str], name: str) -> str | None:
    lowered = name.lower()
    return next((value for key, value in headers.items() if key.lower() == lowered), None)


def _encoding(headers: Mapping[str, str]) -> str | None:
    """PROTOBUF or JSON from Content-Type (parameters ignored), or None for anything else."""
    kind = (_header(headers, "Content-Type") or "").split(";", 1)[0].strip().lower()
    return kind if kind in (PROTOBUF, JSON) else None


def _gunzip(body: bytes, limit: int) -> bytes:
    """Inflate at most `limit` bytes: a small bomb must not become a large allocation."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    out = inflater.decompress(body, limit + 1)
    if len(out) > limit or inflater.unconsumed_tail:
        raise _TooLarge
    if not inflater.eof:
        raise zlib.error("truncated gzip stream")
    return out


def _proto_classes(signal: Signal) -> tuple[Any, Any]:
    """(request, response) message classes; `_Unsupported` when the `otlp` extra is missing."""
    try:
        if signal == "logs":
            from opentelemetry.proto.collector.logs.v1 import logs_service_pb2 as logs

            return logs.ExportLogsServiceRequest, logs.ExportLogsServiceResponse
        from opentelemetry.proto.collector.trace.v1 import trace_service_pb2 as trace

        return trace.ExportTraceServiceRequest, trace.ExportTraceServiceResponse
    except ImportError as exc:
        raise _Unsupported(f"protobuf requests need the otlp extra ({exc.name} missing); send JSON") from exc


def _decode(signal: Signal, body: bytes, encoding: str) -> Mapping[str, Any]:
    """The request as OTLP/JSON; ValueError says why it is malformed."""
    if encoding == JSON:
        try:
            obj = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"not JSON: {exc}") from exc
        if not isinstance(obj, dict):
            raise ValueError("the request is not a JSON object")
        return obj
    from google.protobuf import json_format
    from google.protobuf.message import DecodeError

    request_class, _ = _proto_classes(signal)
    message = request_class()
    try:
        message.ParseFromString(body)
    except DecodeError as exc:
        raise ValueError(
            f"not an Export{'Logs' if signal == 'logs' else 'Trace'}ServiceRequest: {exc}"
        ) from exc
    obj = json_format.MessageToDict(message, use_integers_for_enums=True)
    _hex_ids(obj)
    return obj


_ID_KEYS = ("traceId", "spanId", "parentSpanId")


def _hex_ids(obj: dict[str, Any]) -> None:
    """protobuf JSON writes bytes as base64; OTLP/JSON (and the Collector's files) write ids as hex."""
    for resources, scopes, items in (
        ("resourceLogs", "scopeLogs", "logRecords"),
        ("resourceSpans", "scopeSpans", "spans"),
    ):
        for resource in obj.get(resources, ()):
            for scope in resource.get(scopes, ()):
                for item in scope.get(items, ()):
                    for key in _ID_KEYS:
                        if key in item:
                            try:
                                item[key] = base64.b64decode(item[key]).hex()
                            except (binascii.Error, TypeError):
                                del item[key]


def _success(signal: Signal, rejected: list[RecordError], encoding: str) -> Reply:
    """Export*ServiceResponse; `partial_success` only when something was rejected (OTLP: else empty)."""
    field = "rejected_log_records" if signal == "logs" else "rejected_spans"
    message = ""
    if rejected:
        more = f" (and {len(rejected) - 1} more)" if len(rejected) > 1 else ""
        message = f"{rejected[0]}{more}"
    if encoding == JSON:
        camel = "rejectedLogRecords" if signal == "logs" else "rejectedSpans"
        body = {"partialSuccess": {camel: str(len(rejected)), "errorMessage": message}} if rejected else {}
        return Reply(200, orjson.dumps(body), {"Content-Type": JSON})
    _, response_class = _proto_classes(signal)
    response = response_class()
    if rejected:
        setattr(response.partial_success, field, len(rejected))
        response.partial_success.error_message = message
    return Reply(200, response.SerializeToString(), {"Content-Type": PROTOBUF})


def _status(status: int, message: str, encoding: str | None) -> Reply:
    """A failure as `google.rpc.Status` in the request's encoding (JSON when it has none we know)."""
    headers = {**_HEADERS.get(status, {})}
    code = _RPC_CODES.get(status, 2)
    if encoding == PROTOBUF:
        try:
            from google.rpc import status_pb2  # type: ignore[import-untyped]  # googleapis-common-protos: no stubs
        except ImportError:
            pass
        else:
            body = status_pb2.Status(code=code, message=message).SerializeToString()
            return Reply(status, body, {**headers, "Content-Type": PROTOBUF})
    return Reply(status, orjson.dumps({"code": code, "message": message}), {**headers, "Content-Type": JSON})
