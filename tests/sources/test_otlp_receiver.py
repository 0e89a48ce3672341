"""The `otlp` source on real sockets: real OTLP from the opentelemetry-sdk exporters, JSON posts, failures.

The SDK's OTLPLogExporter / OTLPSpanExporter (opentelemetry-exporter-otlp-proto-http) send the
completions the way opentelemetry-util-genai records them (`_inference_invocation._maybe_create_event`:
a `gen_ai.client.inference.operation.details` event with structured `gen_ai.output.messages`;
`_invocation.get_content_attributes(for_span=True)`: the same messages as a JSON string on the span),
to a receiver on 127.0.0.1 and to a real daemon whose /metrics is scraped.
"""

from __future__ import annotations

import gzip
import json
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from degeneration_exporter.errors import RecordError
from degeneration_exporter.formats._genai import split_otlp_request
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.record import FinishReason, Record
from degeneration_exporter.sources.otlp_receiver import OtlpReceiverConfig, OtlpReceiverSource
from google.rpc import status_pb2  # type: ignore[import-untyped]  # googleapis-common-protos: no stubs
from opentelemetry._logs import LogRecord
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from pydantic import SecretStr

from tests.daemon_harness import DaemonProcess, free_port, total

LOOP = "Let me verify the total once more. " * 20
RESOURCE = Resource.create({"service.name": "chat-app"})


def receiver(**options: Any) -> OtlpReceiverSource:
    config = OtlpReceiverConfig(listen_port=0, **options)
    source = OtlpReceiverSource(config, split_otlp_request)
    source.start()
    return source


@pytest.fixture
def source() -> Iterator[OtlpReceiverSource]:
    pushed = receiver(max_body_bytes=64 * 1024)
    yield pushed
    pushed.close()


def base_url(source: OtlpReceiverSource) -> str:
    assert source.address is not None
    host, port = source.address
    return f"http://{host}:{port}"


def queued_records(source: OtlpReceiverSource, count: int) -> list[Record]:
    """Parse the next `count` queued lines as the pipeline does (format otlp_json)."""
    parser = LineParser("otlp_json")
    lines = source.lines()
    out: list[Record] = []
    for _ in range(count):
        items = parser.parse_items(next(lines).data)
        out.extend(item for item in items if isinstance(item, Record))
    return out


def operation_details(text: str, reason: str = "length", model: str = "Qwen/Qwen3-8B") -> LogRecord:
    """The event as util-genai emits it with content capture on (EVENT_ONLY or SPAN_AND_EVENT)."""
    return LogRecord(
        event_name="gen_ai.client.inference.operation.details",
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": model,
            "gen_ai.request.max_tokens": 256,
            "gen_ai.response.finish_reasons": [reason],
            "gen_ai.response.id": "chatcmpl-1",
            "gen_ai.usage.output_tokens": 256,
            "gen_ai.output.messages": [
                {"role": "assistant", "parts": [{"type": "text", "content": text}], "finish_reason": reason}
            ],
        },
    )


def send_logs(endpoint: str, records: list[LogRecord], **exporter: Any) -> None:
    provider = LoggerProvider(resource=RESOURCE)
    provider.add_log_record_processor(
        SimpleLogRecordProcessor(OTLPLogExporter(endpoint=endpoint, **exporter))
    )
    logger = provider.get_logger("opentelemetry.util.genai")
    for record in records:
        logger.emit(record)
    provider.shutdown()  # flushes: SimpleLogRecordProcessor has exported every record by now


def send_span(endpoint: str, messages: list[dict[str, Any]], **attributes: Any) -> None:
    provider = TracerProvider(resource=RESOURCE)
    provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=endpoint)))
    with provider.get_tracer("opentelemetry.util.genai").start_as_current_span("chat gpt-4o-mini") as span:
        span.set_attribute("gen_ai.output.messages", json.dumps(messages))
        for key, value in attributes.items():
            span.set_attribute(key.replace("__", "."), value)
    provider.shutdown()


def test_sdk_log_exporter_protobuf_gzip_event_becomes_one_record(source: OtlpReceiverSource) -> None:
    plain = LogRecord(body="request served")  # ordinary app logs are accepted and dropped
    send_logs(f"{base_url(source)}/v1/logs", [operation_details(LOOP), plain], compression=Compression.Gzip)
    (record,) = queued_records(source, 1)
    assert record.text == LOOP
    assert record.finish_reason is FinishReason.LENGTH
    assert (record.model, record.output_tokens, record.max_tokens) == ("Qwen/Qwen3-8B", 256, 256)
    assert record.identity == {"response_id": "chatcmpl-1"}
    assert source.stats.lines_read == 1


def test_sdk_span_exporter_output_messages_attribute_per_choice(source: OtlpReceiverSource) -> None:
    messages = [
        {"role": "assistant", "parts": [{"type": "text", "content": "Paris."}], "finish_reason": "stop"},
        {"role": "assistant", "parts": [{"type": "text", "content": "Lyon."}], "finish_reason": "length"},
    ]
    send_span(f"{base_url(source)}/v1/traces", messages, gen_ai__response__model="gpt-4o-mini-2024")
    records = queued_records(source, 1)
    assert [r.text for r in records] == ["Paris.", "Lyon."]
    assert [r.finish_reason for r in records] == [FinishReason.STOP, FinishReason.LENGTH]
    assert {r.model for r in records} == {"gpt-4o-mini-2024"}
    trace_id = records[0].identity["trace_id"]
    assert isinstance(trace_id, str) and len(trace_id) == 32 and int(trace_id, 16)  # hex, as OTLP/JSON


def test_the_same_messages_on_a_span_and_its_event_count_once(source: OtlpReceiverSource) -> None:
    """util-genai SPAN_AND_EVENT: the span attribute and the event (with the span's context) are one."""
    message = {"role": "assistant", "parts": [{"type": "text", "content": LOOP}], "finish_reason": "length"}
    tracer_provider = TracerProvider(resource=RESOURCE)
    tracer_provider.add_span_processor(
        SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{base_url(source)}/v1/traces"))
    )
    logger_provider = LoggerProvider(resource=RESOURCE)
    exporter = OTLPLogExporter(endpoint=f"{base_url(source)}/v1/logs")
    logger_provider.add_log_record_processor(SimpleLogRecordProcessor(exporter))
    logger = logger_provider.get_logger("opentelemetry.util.genai")
    tracer = tracer_provider.get_tracer("opentelemetry.util.genai")
    with tracer.start_as_current_span("chat Qwen/Qwen3-8B") as span:
        span.set_attribute("gen_ai.output.messages", json.dumps([message]))
        logger.emit(operation_details(LOOP))  # inside the span: the event carries its trace and span id
    with tracer.start_as_current_span("chat again"):
        logger.emit(operation_details("Another call."))  # another span: not the same messages
    tracer_provider.shutdown()
    logger_provider.shutdown()
    records = queued_records(source, 2)
    assert sorted(r.text for r in records) == sorted([LOOP, "Another call."])
    assert source.stats.lines_read == 2  # the span's copy of the first call was dropped


def _json_logs(*records: dict[str, Any]) -> bytes:
    return orjson.dumps({"resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": list(records)}]}]})


CHOICE = {
    "eventName": "gen_ai.choice",
    "body": {
        "kvlistValue": {
            "values": [
                {"key": "index", "value": {"intValue": "0"}},
                {"key": "finish_reason", "value": {"stringValue": "stop"}},
                {
                    "key": "message",
                    "value": {
                        "kvlistValue": {"values": [{"key": "content", "value": {"stringValue": "Hi!"}}]}
                    },
                },
            ]
        }
    },
}
BAD = {
    "eventName": "gen_ai.client.inference.operation.details",
    "attributes": [{"key": "gen_ai.output.messages", "value": {"stringValue": "[{truncated"}}],
}


def test_json_post_answers_json_with_partial_success_and_queues_the_good_records(
    source: OtlpReceiverSource,
) -> None:
    reply = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=_json_logs(CHOICE, BAD, CHOICE),
        headers={"Content-Type": "application/json"},
    )
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json"
    partial = reply.json()["partialSuccess"]
    assert partial["rejectedLogRecords"] == "1"
    assert "gen_ai.output.messages" in partial["errorMessage"]
    assert [r.text for r in queued_records(source, 2)] == ["Hi!", "Hi!"]
    assert source.stats.rejected["missing_field"] == 1
    clean = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=_json_logs(CHOICE),
        headers={"Content-Type": "application/json"},
    )
    assert clean.status_code == 200 and clean.json() == {}  # full success: an empty response


def test_protobuf_partial_success_is_an_export_logs_service_response(source: OtlpReceiverSource) -> None:
    from google.protobuf import json_format

    request = json_format.ParseDict(orjson.loads(_json_logs(BAD, CHOICE)), ExportLogsServiceRequest())
    reply = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=gzip.compress(request.SerializeToString()),
        headers={"Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"},
    )
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/x-protobuf"
    answer = ExportLogsServiceResponse.FromString(reply.content)
    assert answer.partial_success.rejected_log_records == 1
    assert [r.text for r in queued_records(source, 1)] == ["Hi!"]


def test_malformed_bodies_are_400_with_a_status_in_the_request_encoding(source: OtlpReceiverSource) -> None:
    garbage = httpx.post(
        f"{base_url(source)}/v1/traces",
        content=b"\xff\xff\xff",
        headers={"Content-Type": "application/x-protobuf"},
    )
    assert garbage.status_code == 400
    status = status_pb2.Status.FromString(garbage.content)
    assert status.code == 3 and "ExportTraceServiceRequest" in status.message
    not_json = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=b'{"resourceLogs": [',
        headers={"Content-Type": "application/json"},
    )
    assert not_json.status_code == 400 and not_json.json()["code"] == 3
    bad_gzip = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=b"not gzip",
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert bad_gzip.status_code == 400
    other_type = httpx.post(
        f"{base_url(source)}/v1/logs", content=b"x", headers={"Content-Type": "text/plain"}
    )
    assert other_type.status_code == 415
    assert source.stats.rejected["invalid_json"] == 3
    assert source.stats.lines_read == 0


def _raw_request(source: OtlpReceiverSource, headers: str) -> bytes:
    """Send only the request head (no body) and read the answer: it must come without the body."""
    assert source.address is not None
    with socket.create_connection(source.address, timeout=5) as sock:
        sock.sendall(f"POST /v1/logs HTTP/1.1\r\nHost: x\r\n{headers}\r\n".encode())
        return sock.recv(65536)


def test_wrong_token_is_401_before_the_body_is_read() -> None:
    source = receiver(bearer_token=SecretStr("s3cret"))
    try:
        head = _raw_request(source, "Content-Type: application/x-protobuf\r\nContent-Length: 1000000\r\n")
        assert head.startswith(b"HTTP/1.0 401") or head.startswith(b"HTTP/1.1 401"), head
        assert b"WWW-Authenticate: Bearer" in head
        send_logs(
            f"{base_url(source)}/v1/logs",
            [operation_details("accepted")],
            headers={"Authorization": "Bearer s3cret"},
        )
        assert [r.text for r in queued_records(source, 1)] == ["accepted"]
    finally:
        source.close()


def test_sdk_exporter_with_a_wrong_token_gets_nothing_queued() -> None:
    source = receiver(bearer_token=SecretStr("s3cret"))
    try:
        send_logs(
            f"{base_url(source)}/v1/logs",
            [operation_details("refused")],
            headers={"Authorization": "Bearer no"},
        )
        send_logs(f"{base_url(source)}/v1/logs", [operation_details("refused")])  # no token at all
        assert source.stats.lines_read == 0
        assert source.stats.rejected == {}  # refused at the door: no body was read, nothing was counted
    finally:
        source.close()


def test_oversize_is_413_before_the_body_is_read_and_a_gzip_bomb_is_413(source: OtlpReceiverSource) -> None:
    head = _raw_request(source, "Content-Type: application/json\r\nContent-Length: 10000000\r\n")
    assert b" 413 " in head.split(b"\r\n", 1)[0]
    bomb = gzip.compress(b" " * (1024 * 1024))  # about 1 KiB that inflates to 1 MiB > max_body_bytes
    assert len(bomb) < 64 * 1024
    reply = httpx.post(
        f"{base_url(source)}/v1/logs",
        content=bomb,
        headers={"Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert reply.status_code == 413
    assert source.stats.rejected["too_long"] == 2


def test_get_is_405_and_other_paths_404(source: OtlpReceiverSource) -> None:
    assert httpx.get(f"{base_url(source)}/v1/logs").status_code == 405
    assert httpx.post(f"{base_url(source)}/v1/metrics", content=b"{}").status_code == 404


# -- a real daemon ----------------------------------------------------------------------------------


def _config(tmp_path: Path, source: dict[str, Any]) -> Path:
    path = tmp_path / "config.yaml"
    path.write_text(json.dumps({"sources": [source], "state": {"directory": str(tmp_path / "state")}}))
    return path


def test_daemon_counts_completions_sent_by_sdk_exporters_on_its_own_port(tmp_path: Path) -> None:
    port = free_port()
    config = _config(tmp_path, {"type": "otlp", "name": "genai", "listen_port": port})
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        endpoint = f"http://127.0.0.1:{port}"
        send_logs(
            f"{endpoint}/v1/logs",
            [operation_details(LOOP), operation_details("Fine.", reason="stop")],
            compression=Compression.Gzip,
        )
        send_span(
            f"{endpoint}/v1/traces",
            [
                {
                    "role": "assistant",
                    "parts": [{"type": "text", "content": "Paris."}],
                    "finish_reason": "stop",
                }
            ],
            gen_ai__request__model="gpt-4o-mini",
        )
        samples = daemon.wait_for_total("degeneration_responses_total", 3, source="genai")
        assert total(samples, "degeneration_responses_total", source="genai", finish_reason="length") == 1
        assert total(samples, "degeneration_responses_total", model_name="gpt-4o-mini") == 1
        assert total(samples, "degeneration_responses_flagged_total", source="genai", kind="repetition") == 1
        assert total(samples, "degeneration_lines_read_total", source="genai") == 3


def test_daemon_mounts_v1_logs_and_v1_traces_on_the_main_port(tmp_path: Path) -> None:
    config = _config(tmp_path, {"type": "otlp", "name": "genai", "listen_host": None})
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        send_logs(f"{daemon.url}/v1/logs", [operation_details(LOOP)])
        reply = httpx.post(
            f"{daemon.url}/v1/logs", content=_json_logs(BAD), headers={"Content-Type": "application/json"}
        )
        assert reply.json()["partialSuccess"]["rejectedLogRecords"] == "1"
        samples = daemon.wait_for_total("degeneration_responses_total", 1, source="genai")
        assert (
            total(samples, "degeneration_lines_rejected_total", source="genai", reason="missing_field") == 1
        )


def test_check_config_refuses_an_otlp_source_off_loopback_without_a_token(tmp_path: Path) -> None:
    config = _config(tmp_path, {"type": "otlp", "name": "genai", "listen_host": "0.0.0.0"})
    done = subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "check-config", "--config", str(config)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "otlp source 'genai' listens on 0.0.0.0: bearer_token required" in done.stderr
    other_format = _config(tmp_path, {"type": "otlp", "format": "openai_chat"})
    done = subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "check-config", "--config", str(other_format)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and "sources.0.format" in done.stderr


def test_a_failing_split_is_answered_500_and_the_server_keeps_serving() -> None:
    calls: list[int] = []

    def split_failing_once(request: Mapping[str, Any]) -> Iterator[tuple[bytes, str | None] | RecordError]:
        calls.append(1)
        if len(calls) == 1:
            raise RuntimeError("a bug in the GenAI decoding")
        return split_otlp_request(request)

    source = OtlpReceiverSource(OtlpReceiverConfig(listen_port=0), split_failing_once)
    source.start()
    try:

        def post() -> httpx.Response:
            body, headers = _json_logs(CHOICE), {"Content-Type": "application/json"}
            return httpx.post(f"{base_url(source)}/v1/logs", content=body, headers=headers)

        failed = post()
        assert failed.status_code == 500 and failed.json()["code"] == 13
        assert source.stats.rejected["internal"] == 1
        assert post().status_code == 200
        assert [r.text for r in queued_records(source, 1)] == ["Hi!"]
    finally:
        source.close()
