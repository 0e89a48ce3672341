"""OpenTelemetry GenAI completions in OTLP/JSON -> Records; shared by `otlp_json` and the OTLP receiver.

Why one module: the Collector's file exporter (format `otlp_json`) and the `type: otlp` receiver carry
the same ExportLogsServiceRequest / ExportTraceServiceRequest, so one walk over
`resourceLogs[].scopeLogs[].logRecords[]` / `resourceSpans[].scopeSpans[].spans[]` and one reading
of the GenAI attributes serve both. The receiver (a source, which must not know formats) is handed
`split_otlp_request` by the daemon: one single-record request line per completion-carrying item,
so a malformed item is rejected alone and reported in the OTLP partial success, with the key that
lets it drop the same messages arriving on the other signal.

What carries a completion (docs/otlp.md cites the upstream code):
- the `gen_ai.output.messages` attribute, on a span (a JSON string, as
  opentelemetry-util-genai `_invocation.get_content_attributes(for_span=True)` writes it), on the
  `gen_ai.client.inference.operation.details` event (structured), or on a span event;
  each message `{role, parts: [{type: text|reasoning, content}], finish_reason}` is one Record;
- the older `gen_ai.choice` event: body `{index, finish_reason, message: {role, content}}`
  (openai-v2, vertexai) or `{index, content: {parts: [{text}]}, finish_reason}` (google-genai).
`gen_ai.assistant.message` events are chat *history* sent with a request (semconv
events-deprecated.yaml), not completions, so they are not read (counting them would count each
earlier turn again). Spans without output messages yield nothing: their completions, when
captured, arrive as the log events above, which would otherwise be counted twice.
Metadata comes from the item's (and for span events the span's) attributes:
`gen_ai.response.finish_reasons`, `gen_ai.response.model` / `gen_ai.request.model`,
`gen_ai.usage.output_tokens`, `gen_ai.request.max_tokens`; `gen_ai.response.id`, trace and span id
become identity (reports only, never labels).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

import orjson

from ..errors import MissingField, RecordError
from ..record import Record, parse_finish_reason
from ._fields import join
from ._openai import message_text

__all__ = [
    "OtlpItem",
    "carries_completion",
    "is_otlp_request",
    "message_key",
    "otlp_items",
    "records_from_item",
    "records_from_request",
    "split_otlp_request",
]

OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
CHOICE_EVENT: Final = "gen_ai.choice"

Signal = Literal["logs", "traces"]

# (signal, resource list, scope list, item list): lowerCamelCase as OTLP/JSON and the Collector write
# them; the proto field names (snake_case) are accepted too, as protojson readers do.
_LAYOUT: Final[tuple[tuple[Signal, str, str, str], ...]] = (
    ("logs", "resourceLogs", "scopeLogs", "logRecords"),
    ("traces", "resourceSpans", "scopeSpans", "spans"),
)
_SNAKE: Final = {
    "resourceLogs": "resource_logs",
    "scopeLogs": "scope_logs",
    "logRecords": "log_records",
    "resourceSpans": "resource_spans",
    "scopeSpans": "scope_spans",
    "resourceMetrics": "resource_metrics",
    "eventName": "event_name",
    "traceId": "trace_id",
    "spanId": "span_id",
    "stringValue": "string_value",
    "intValue": "int_value",
    "doubleValue": "double_value",
    "boolValue": "bool_value",
    "arrayValue": "array_value",
    "kvlistValue": "kvlist_value",
    "bytesValue": "bytes_value",
}
_CAMEL: Final = {snake: camel for camel, snake in _SNAKE.items()}


def _get(obj: Mapping[str, Any], key: str) -> Any:
    value = obj.get(key)
    if value is None and key in _SNAKE:
        value = obj.get(_SNAKE[key])
    return value


def is_otlp_request(obj: Mapping[str, Any]) -> bool:
    """An Export{Logs,Trace,Metrics}ServiceRequest as JSON (metrics lines are read as holding nothing)."""
    return any(
        isinstance(_get(obj, key), list) for key in ("resourceLogs", "resourceSpans", "resourceMetrics")
    )


@dataclass(frozen=True, slots=True)
class OtlpItem:
    """One log record or span with the resource and scope it was sent under; `path` is its JSON path."""

    signal: Signal
    resource: Mapping[str, Any]
    scope: Mapping[str, Any]
    item: Mapping[str, Any]
    path: str

    def envelope(self) -> dict[str, Any]:
        """A request of the same signal holding only this item (what the receiver queues as one line)."""
        _, resources, scopes, items = next(layout for layout in _LAYOUT if layout[0] == self.signal)
        scope_entry = {"scope": self.scope, items: [self.item]}
        return {resources: [{"resource": self.resource, scopes: [scope_entry]}]}


def otlp_items(obj: Mapping[str, Any]) -> Iterator[OtlpItem]:
    """Every log record and span of a request, in order; entries that are not objects are skipped."""
    for signal, resources_key, scopes_key, items_key in _LAYOUT:
        resources = _get(obj, resources_key)
        for r, resource_entry in enumerate(resources if isinstance(resources, list) else ()):
            if not isinstance(resource_entry, Mapping):
                continue
            resource = resource_entry.get("resource")
            scopes = _get(resource_entry, scopes_key)
            for s, scope_entry in enumerate(scopes if isinstance(scopes, list) else ()):
                if not isinstance(scope_entry, Mapping):
                    continue
                scope = scope_entry.get("scope")
                items = _get(scope_entry, items_key)
                for i, item in enumerate(items if isinstance(items, list) else ()):
                    if isinstance(item, Mapping):
                        path = f"{resources_key}.{r}.{scopes_key}.{s}.{items_key}.{i}"
                        yield OtlpItem(
                            signal,
                            resource if isinstance(resource, Mapping) else {},
                            scope if isinstance(scope, Mapping) else {},
                            item,
                            path,
                        )


def any_value(value: Any) -> Any:
    """An OTLP AnyValue (`{"stringValue": ...}`, `{"kvlistValue": {"values": [...]}}`, ...) as plain JSON.

    `intValue` may be a JSON string (int64 in protobuf JSON) or a number; bytes stay base64 text.
    """
    if not isinstance(value, Mapping):
        return None
    for key, raw in value.items():
        kind = _CAMEL.get(key, key)
        if kind in ("stringValue", "boolValue", "doubleValue", "bytesValue"):
            return raw
        if kind == "intValue":
            try:
                return int(raw)
            except (TypeError, ValueError):
                return None
        if kind == "arrayValue":
            values = raw.get("values") if isinstance(raw, Mapping) else None
            return [any_value(v) for v in values] if isinstance(values, list) else []
        if kind == "kvlistValue":
            values = raw.get("values") if isinstance(raw, Mapping) else None
            return attributes(values)
    return None


def attributes(pairs: Any) -> dict[str, Any]:
    """A `[{key, value: AnyValue}]` list as a dict (later duplicates win, as in the SDKs)."""
    out: dict[str, Any] = {}
    for pair in pairs if isinstance(pairs, list) else ():
        if isinstance(pair, Mapping) and isinstance(pair.get("key"), str):
            out[pair["key"]] = any_value(pair.get("value"))
    return out


def _event_name(item: Mapping[str, Any], attrs: Mapping[str, Any]) -> str | None:
    """LogRecord.event_name (OTLP 1.5+), else the older `event.name` attribute; span events: `name`."""
    name = _get(item, "eventName") or item.get("name") or attrs.get("event.name")
    return name if isinstance(name, str) else None


def _span_events(item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    events = item.get("events")
    return [e for e in events if isinstance(e, Mapping)] if isinstance(events, list) else []


def carries_completion(entry: OtlpItem) -> bool:
    """Does this log record or span hold completion content (see the module docstring)?"""
    attrs = attributes(entry.item.get("attributes"))
    if OUTPUT_MESSAGES in attrs:
        return True
    if entry.signal == "logs":
        return _event_name(entry.item, attrs) == CHOICE_EVENT
    return any(OUTPUT_MESSAGES in attributes(e.get("attributes")) for e in _span_events(entry.item))


def records_from_item(entry: OtlpItem) -> list[Record]:
    """The completions of one log record or span; `MissingField` names the malformed attribute or body."""
    attrs = attributes(entry.item.get("attributes"))
    identity = _identity(entry.item, attrs)
    if OUTPUT_MESSAGES in attrs:
        where = join(entry.path, f"attributes.{OUTPUT_MESSAGES}")
        return _records_from_messages(attrs[OUTPUT_MESSAGES], attrs, identity, where)
    if entry.signal == "logs":
        if _event_name(entry.item, attrs) == CHOICE_EVENT:
            return [_record_from_choice(any_value(entry.item.get("body")), attrs, identity, entry.path)]
        return []
    out: list[Record] = []
    for e, event in enumerate(_span_events(entry.item)):
        event_attrs = attributes(event.get("attributes"))
        if OUTPUT_MESSAGES in event_attrs:
            merged = {**attrs, **event_attrs}
            where = join(entry.path, f"events.{e}.attributes.{OUTPUT_MESSAGES}")
            out.extend(_records_from_messages(event_attrs[OUTPUT_MESSAGES], merged, identity, where))
    return out


def records_from_request(obj: Mapping[str, Any]) -> Iterator[Record]:
    """Every completion of a whole request (one Collector file-exporter line)."""
    for entry in otlp_items(obj):
        yield from records_from_item(entry)


def split_otlp_request(obj: Mapping[str, Any]) -> Iterator[tuple[bytes, str | None] | RecordError]:
    """For the receiver: per completion-carrying item, (its one-item request as an `otlp_json` line,
    its `message_key`), or the error that rejects it. Items without completions are not yielded."""
    for entry in otlp_items(obj):
        if not carries_completion(entry):
            continue
        try:
            records_from_item(entry)
        except RecordError as exc:
            yield exc
            continue
        yield orjson.dumps(entry.envelope()), message_key(entry)


def message_key(entry: OtlpItem) -> str | None:
    """`trace_id/span_id` of an item carrying `gen_ai.output.messages`, else None.

    Why: with content on spans and events both (util-genai `SPAN_AND_EVENT`), the same messages
    arrive once as a span attribute and once on the `gen_ai.client.inference.operation.details`
    event, which carries the span's context; the receiver counts the first one of the two signals.
    """
    if entry.signal == "logs" and OUTPUT_MESSAGES not in attributes(entry.item.get("attributes")):
        return None  # a gen_ai.choice event: older instrumentations put no messages on the span
    trace_id, span_id = _get(entry.item, "traceId"), _get(entry.item, "spanId")
    if isinstance(trace_id, str) and isinstance(span_id, str) and trace_id.strip("0") and span_id.strip("0"):
        return f"{trace_id}/{span_id}"
    return None


# -- reading the content ---------------------------------------------------------------------------


def _identity(item: Mapping[str, Any], attrs: Mapping[str, Any]) -> dict[str, object]:
    identity: dict[str, object] = {}
    response_id = attrs.get("gen_ai.response.id")
    if isinstance(response_id, str) and response_id:
        identity["response_id"] = response_id
    for key, name in (("traceId", "trace_id"), ("spanId", "span_id")):
        value = _get(item, key)
        if isinstance(value, str) and value:
            identity[name] = value
    return identity


def _int_attr(attrs: Mapping[str, Any], key: str) -> int | None:
    value = attrs.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str_attr(attrs: Mapping[str, Any], key: str) -> str | None:
    value = attrs.get(key)
    return value if isinstance(value, str) and value else None


def _finish_reasons(attrs: Mapping[str, Any]) -> list[str]:
    reasons = attrs.get("gen_ai.response.finish_reasons")
    if isinstance(reasons, str):  # some instrumentations set a single string
        return [reasons]
    return [r for r in reasons if isinstance(r, str)] if isinstance(reasons, list) else []


def _records_from_messages(
    value: Any, attrs: Mapping[str, Any], identity: Mapping[str, object], where: str
) -> list[Record]:
    """`gen_ai.output.messages`: structured, or a JSON string (span attributes may only be strings)."""
    if isinstance(value, str):
        try:
            value = orjson.loads(value)
        except orjson.JSONDecodeError:
            raise MissingField(where, f"field {where!r} is not a JSON list of output messages") from None
    if not isinstance(value, list) or not all(isinstance(m, Mapping) for m in value):
        raise MissingField(where, f"field {where!r} is not a list of output messages")
    reasons = _finish_reasons(attrs)
    out = []
    for i, message in enumerate(value):
        text, reasoning = _parts_text(message, join(where, str(i)))
        reason: object = message.get("finish_reason")
        if not reason:
            reason = reasons[i] if len(reasons) == len(value) else (reasons[0] if len(reasons) == 1 else None)
        ident = dict(identity) if len(value) == 1 else {**identity, "choice_index": i}
        out.append(_record(text, reasoning, reason, attrs, ident, single=len(value) == 1))
    return out


def _parts_text(message: Mapping[str, Any], where: str) -> tuple[str, str]:
    """(text, reasoning) of one output message: `text` and `reasoning` parts; other parts (tool calls,
    blobs) carry no prose. A message with a plain `content` string (pre-parts shape) is read too."""
    parts = message.get("parts")
    if parts is None:
        content = message.get("content")
        if isinstance(content, str):
            return content, ""
        raise MissingField(join(where, "parts"))
    if not isinstance(parts, list):
        raise MissingField(join(where, "parts"))
    texts: list[str] = []
    thoughts: list[str] = []
    for part in parts:
        if not isinstance(part, Mapping):
            continue
        content = part.get("content")
        if not isinstance(content, str):
            continue
        if part.get("type") == "text":
            texts.append(content)
        elif part.get("type") == "reasoning":
            thoughts.append(content)
    return "".join(texts), "".join(thoughts)


def _record_from_choice(
    body: Any, attrs: Mapping[str, Any], identity: Mapping[str, object], where: str
) -> Record:
    """A `gen_ai.choice` event body; content absent (capture off) gives an empty text, still counted."""
    if not isinstance(body, Mapping):
        raise MissingField(join(where, "body"))
    ident = dict(identity)
    index = body.get("index")
    if isinstance(index, int) and not isinstance(index, bool) and index > 0:
        ident["choice_index"] = index
    message = body.get("message")
    content = message.get("content") if isinstance(message, Mapping) else body.get("content")
    text, reasoning = _choice_content(content)
    return _record(text, reasoning, body.get("finish_reason"), attrs, ident, single=True)


def _choice_content(content: Any) -> tuple[str, str]:
    """A string, a list of `{text}` parts (vertexai), or `{parts: [{text, thought?}]}` (google-genai)."""
    if isinstance(content, Mapping):
        content = content.get("parts")
    if isinstance(content, list):
        thoughts = [p for p in content if isinstance(p, Mapping) and p.get("thought") is True]
        visible = [p for p in content if not (isinstance(p, Mapping) and p.get("thought") is True)]
        return message_text(visible), message_text(thoughts)
    return message_text(content), ""


def _record(
    text: str,
    reasoning: str,
    reason: object,
    attrs: Mapping[str, Any],
    identity: Mapping[str, object],
    *,
    single: bool,
) -> Record:
    """`gen_ai.usage.output_tokens` counts every choice together, so it is kept for a single one only."""
    return Record(
        text=text,
        reasoning=reasoning,
        finish_reason=parse_finish_reason(reason),
        model=_str_attr(attrs, "gen_ai.response.model") or _str_attr(attrs, "gen_ai.request.model"),
        output_tokens=_int_attr(attrs, "gen_ai.usage.output_tokens") if single else None,
        max_tokens=_int_attr(attrs, "gen_ai.request.max_tokens"),
        identity=identity,
    )
