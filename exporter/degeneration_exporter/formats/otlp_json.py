"""OTLP/JSON requests (`otlp_json`): the lines the OpenTelemetry Collector's file exporter writes.

Why a format: apps instrumented with the OpenTelemetry GenAI instrumentations export their
completions as logs or spans; a Collector with the `file` exporter (`format: json`, the default)
writes one ExportLogsServiceRequest / ExportTraceServiceRequest per line
(collector-contrib exporter/fileexporter: `exportMessageAsLine`, pdata `JSONMarshaler`), so `scan`
and file_tail read what the `type: otlp` receiver would have been sent. One line holds many log
records and spans: it yields one Record per completion in them (formats/_genai.py), and none for
lines of other telemetry (metrics, plain logs). A malformed completion rejects its line, naming
the attribute's JSON path.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from ..record import Record
from ._genai import is_otlp_request, records_from_request

__all__ = ["is_otlp_json", "parse_otlp_json"]


def is_otlp_json(obj: Mapping[str, Any]) -> bool:
    """A `resourceLogs`, `resourceSpans` or `resourceMetrics` list at the top: no other format has one."""
    return is_otlp_request(obj)


def parse_otlp_json(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Every completion of the request's log records and spans, in order."""
    return records_from_request(obj)
