"""A real OTLP/HTTP metrics receiver on 127.0.0.1, for tests (tooling.md §5).

Why not a mock: the sink must speak the wire protocol a Collector accepts, so the test decodes
exactly what was POSTed, with the protobuf classes of opentelemetry-proto.
"""

from __future__ import annotations

import gzip
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from google.protobuf import json_format
from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.common.v1.common_pb2 import KeyValue


def _attributes(pairs: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in pairs:
        assert isinstance(kv, KeyValue)
        kind = kv.value.WhichOneof("value")
        out[kv.key] = getattr(kv.value, kind) if kind else None
    return out


@dataclass
class Point:
    """One received data point, flattened: metric name, kind, attributes and the value(s)."""

    metric: str
    kind: str
    unit: str
    attributes: dict[str, Any]
    value: float | None = None
    count: int | None = None
    sum: float | None = None
    bounds: tuple[float, ...] = ()
    bucket_counts: tuple[int, ...] = ()


@dataclass
class OtlpReceiver:
    """Collects every ExportMetricsServiceRequest POSTed to /v1/metrics."""

    requests: list[ExportMetricsServiceRequest] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    port: int = 0

    def resource_attributes(self) -> dict[str, Any]:
        with self.lock:
            out: dict[str, Any] = {}
            for req in self.requests:
                for rm in req.resource_metrics:
                    out.update(_attributes(rm.resource.attributes))
            return out

    def points(self) -> list[Point]:
        """Every data point of the most recent export (cumulative temporality: the totals)."""
        with self.lock:
            if not self.requests:
                return []
            req = self.requests[-1]
        return list(_flatten(req))

    def wait_for_export(self, count: int = 1, deadline_s: float = 10.0) -> None:
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            with self.lock:
                if len(self.requests) >= count:
                    return
            time.sleep(0.02)
        raise AssertionError(f"no OTLP export received within {deadline_s} s")


def _flatten(req: ExportMetricsServiceRequest) -> Iterator[Point]:
    for rm in req.resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                kind = metric.WhichOneof("data")
                if kind is None:
                    continue
                data = getattr(metric, kind)
                for dp in data.data_points:
                    attrs = _attributes(dp.attributes)
                    if kind in ("sum", "gauge"):
                        value = dp.as_double if dp.WhichOneof("value") == "as_double" else float(dp.as_int)
                        yield Point(metric.name, kind, metric.unit, attrs, value=value)
                    elif kind == "histogram":
                        yield Point(
                            metric.name,
                            kind,
                            metric.unit,
                            attrs,
                            count=dp.count,
                            sum=dp.sum,
                            bounds=tuple(dp.explicit_bounds),
                            bucket_counts=tuple(dp.bucket_counts),
                        )
                    else:  # exponential_histogram
                        yield Point(metric.name, kind, metric.unit, attrs, count=dp.count, sum=dp.sum)


def start_receiver() -> tuple[OtlpReceiver, ThreadingHTTPServer]:
    """Start a receiver on an ephemeral 127.0.0.1 port; the caller shuts the server down."""
    receiver = OtlpReceiver()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            if self.headers.get("Content-Encoding") == "gzip":
                body = gzip.decompress(body)
            req = ExportMetricsServiceRequest()
            if self.headers.get("Content-Type", "").startswith("application/json"):
                json_format.Parse(body.decode(), req)
            else:
                req.ParseFromString(body)
            with receiver.lock:
                receiver.requests.append(req)
                receiver.paths.append(self.path)
            payload = ExportMetricsServiceResponse().SerializeToString()
            self.send_response(200)
            self.send_header("Content-Type", "application/x-protobuf")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    receiver.port = server.server_address[1]
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    return receiver, server
