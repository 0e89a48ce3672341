"""OTLP input cost: the `otlp` receiver's decode + split and the `otlp_json` parse, as ratios to decodes.

Why: every completion sent over OTLP is decoded by the receiver (JSON, or protobuf converted to
OTLP/JSON), split into one line per completion, and parsed again by the pipeline as `otlp_json`;
the number to watch is that cost over the unavoidable decode of the same bytes, measured in the
same process. No timing asserts live in tests (style.md §10).

Rows, per completion (a `gen_ai.client.inference.operation.details` log record as util-genai
writes it, with a `--chars`-char response), requests of `--records` records:
- receiver, JSON body: `OtlpEndpoint.handle` vs `orjson.loads` of the body;
- receiver, protobuf body: `OtlpEndpoint.handle` vs `ExportLogsServiceRequest.ParseFromString`;
- pipeline: `LineParser("otlp_json").parse_items` of one queued line vs `orjson.loads` of it,
  and next to it `openai_chat` on a chat.completion with the same text (what the same response
  costs in the most common format).

Run: `.venv/bin/python bench/bench_otlp.py [--records 200] [--chars 2000] [--repeat 5]`; copy the
table into docs/benchmarks.md ("OTLP receiver").
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any

import orjson
from degeneration_exporter.formats._genai import split_otlp_request
from degeneration_exporter.formats.lines import LineParser
from degeneration_exporter.sources.base import SourceStats
from degeneration_exporter.sources.line_queue import LineQueue
from degeneration_exporter.sources.otlp_receiver import OtlpEndpoint, OtlpReceiverConfig
from google.protobuf import json_format
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest


def _s(value: str) -> dict[str, str]:
    return {"stringValue": value}


def completion(text: str) -> dict[str, Any]:
    message = {
        "kvlistValue": {
            "values": [
                {"key": "role", "value": _s("assistant")},
                {
                    "key": "parts",
                    "value": {
                        "arrayValue": {
                            "values": [
                                {
                                    "kvlistValue": {
                                        "values": [
                                            {"key": "type", "value": _s("text")},
                                            {"key": "content", "value": _s(text)},
                                        ]
                                    }
                                }
                            ]
                        }
                    },
                },
                {"key": "finish_reason", "value": _s("stop")},
            ]
        }
    }
    return {
        "eventName": "gen_ai.client.inference.operation.details",
        "traceId": "5b8efff798038103d269b633813fc60c",
        "spanId": "eee19b7ec3c1b174",
        "attributes": [
            {"key": "gen_ai.request.model", "value": _s("Qwen/Qwen3-8B")},
            {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "512"}},
            {"key": "gen_ai.output.messages", "value": {"arrayValue": {"values": [message]}}},
        ],
    }


def best_of(repeat: int, loops: int, fn: Callable[[], object]) -> float:
    """Best mean seconds per call over `repeat` runs of `loops` calls."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        for _ in range(loops):
            fn()
        best = min(best, (time.perf_counter() - start) / loops)
    return best


def rows(records: int, chars: int, repeat: int) -> list[tuple[str, float, float]]:
    text = ("The derivative of x squared is two x. " * (chars // 38 + 1))[:chars]
    request = {
        "resourceLogs": [{"resource": {}, "scopeLogs": [{"logRecords": [completion(text)] * records}]}]
    }
    body_json = orjson.dumps(request)
    body_pb = json_format.ParseDict(request, ExportLogsServiceRequest()).SerializeToString()
    config = OtlpReceiverConfig(listen_port=0, queue_max_lines=records * (repeat + 1) * 2)
    out: list[tuple[str, float, float]] = []
    queue = LineQueue(config.queue_max_lines, SourceStats())

    def receive(body: bytes, kind: str) -> Callable[[], object]:
        def once() -> object:
            local = LineQueue(config.queue_max_lines, SourceStats())
            reply = OtlpEndpoint(config, local, SourceStats(), split_otlp_request).handle(
                "/v1/logs", {"Content-Type": kind}, body
            )
            assert reply.status == 200 and reply.body in (b"{}", b""), reply
            return local

        return once

    base = best_of(repeat, 1, lambda: orjson.loads(body_json))
    took = best_of(repeat, 1, receive(body_json, "application/json"))
    out.append(("receiver, JSON body (vs orjson.loads of the body)", took * 1e6 / records, took / base))
    base = best_of(repeat, 1, lambda: ExportLogsServiceRequest.FromString(body_pb))
    took = best_of(repeat, 1, receive(body_pb, "application/x-protobuf"))
    out.append(("receiver, protobuf body (vs ParseFromString)", took * 1e6 / records, took / base))
    OtlpEndpoint(config, queue, SourceStats(), split_otlp_request).handle(
        "/v1/logs", {"Content-Type": "application/json"}, body_json
    )
    line = next(queue.lines()).data
    parser = LineParser("otlp_json")
    base = best_of(repeat, 200, lambda: orjson.loads(line))
    took = best_of(repeat, 200, lambda: parser.parse_items(line))
    out.append(("pipeline, otlp_json line (vs orjson.loads of it)", took * 1e6, took / base))
    chat = orjson.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "Qwen/Qwen3-8B",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
            ],
            "usage": {"completion_tokens": 512},
        }
    )
    chat_parser = LineParser("openai_chat")
    base = best_of(repeat, 200, lambda: orjson.loads(chat))
    took = best_of(repeat, 200, lambda: chat_parser.parse_items(chat))
    out.append(("pipeline, openai_chat line, same text (vs orjson.loads of it)", took * 1e6, took / base))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", type=int, default=200, help="Completions per request.")
    parser.add_argument("--chars", type=int, default=2000, help="Response length in code points.")
    parser.add_argument("--repeat", type=int, default=5, help="Runs per row; the best is kept.")
    args = parser.parse_args()
    print(
        f"OTLP input, {args.records}-record requests, {args.chars}-char responses (best of {args.repeat})\n"
    )
    print("| step | µs/completion | × baseline |")
    print("|---|---:|---:|")
    for name, micros, ratio in rows(args.records, args.chars, args.repeat):
        print(f"| {name} | {micros:.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
