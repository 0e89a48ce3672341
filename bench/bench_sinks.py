"""Cost of counting one classified response in each sink, as a ratio to parsing its JSON line.

Why this baseline: the pipeline decodes every line with orjson anyway, so "a sink costs N JSON
parses of a 2 KB line" says whether the sinks matter next to the work already done, on any machine.
Run: `.venv/bin/python bench/bench_sinks.py`; copy the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from datetime import timedelta

import orjson
from degeneration_exporter.classification.result import Classification, FlagKind, LoopSpan
from degeneration_exporter.detectors.base import Finding
from degeneration_exporter.record import FinishReason
from degeneration_exporter.sinks.measurements import Measurer
from degeneration_exporter.sinks.otlp import OtlpSink, OtlpSinkConfig
from degeneration_exporter.sinks.prometheus import PrometheusSink
from degeneration_exporter.sinks.samples import SampleStore, sample_id
from prometheus_client import CollectorRegistry

ROUNDS = 20_000

_LINE = orjson.dumps(
    {
        "id": "chatcmpl-1",
        "model": "qwen3-8b",
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "finish_reason": "length",
                "message": {"role": "assistant", "content": "all work and no play " * 90},
            }
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 1000, "total_tokens": 1120},
    }
)


def _results() -> list[Classification]:
    looping = Classification(
        flags=frozenset({FlagKind.REPETITION, FlagKind.CEILING, FlagKind.CEILING_WHILE_REPEATING}),
        finish_reason=FinishReason.LENGTH,
        findings=(Finding("compression", "repetition", True), Finding("tail_period", "repetition", True)),
        loop=LoopSpan("content", 500, 21, "all work and no play", 1400, 1400, 0.26, 700),
        leaks={"<|im_end|>": 1},
        text_chars=1900,
        reasoning_chars=0,
        repetition_score=0.74,
        output_tokens=1000,
        max_tokens=1000,
        model="qwen3-8b",
        run="grpo",
        step=0,
        text="all work and no play " * 90,  # the looping reply: the sample id hashes it
    )
    clean = Classification(
        flags=frozenset(),
        finish_reason=FinishReason.STOP,
        findings=(Finding("compression", "repetition", False),),
        loop=None,
        leaks={},
        text_chars=1200,
        reasoning_chars=300,
        repetition_score=0.02,
        output_tokens=400,
        max_tokens=1000,
        model="qwen3-8b",
        run="grpo",
        step=0,
    )
    return [looping if i % 10 == 0 else clean for i in range(ROUNDS)]


def _per_call_us(fn: Callable[[int], object]) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        for i in range(ROUNDS):
            fn(i)
        best = min(best, time.perf_counter() - start)
    return best / ROUNDS * 1e6


def main() -> None:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args()
    results = _results()
    measurer = Measurer()
    prom = PrometheusSink(registry=CollectorRegistry(), leak_tokens=["<|im_end|>"])
    # Port 9 (discard) on loopback: the 1 h interval means nothing is sent during the run.
    otlp = OtlpSink(OtlpSinkConfig(enabled=True, endpoint="http://127.0.0.1:9", interval=timedelta(hours=1)))
    # a new source name per call: every flagged response is a new sample, so the queues evict
    store, kept = SampleStore(50), SampleStore(50, retain_text=True)
    baseline = _per_call_us(lambda i: orjson.loads(_LINE))
    rows = [
        ("orjson.loads of a 2 KB line (baseline)", baseline),
        ("Measurer.measure", _per_call_us(lambda i: measurer.measure("src", results[i]))),
        ("PrometheusSink.emit", _per_call_us(lambda i: prom.emit("src", results[i]))),
        ("OtlpSink.emit", _per_call_us(lambda i: otlp.emit("src", results[i]))),
        (
            "sample_id of the flagged 1.9 KB reply (exemplar id)",
            _per_call_us(lambda i: sample_id("s", results[0])),
        ),
        ("SampleStore.emit (no text kept)", _per_call_us(lambda i: store.emit(f"s{i}", results[i]))),
        ("SampleStore.emit (retain_text)", _per_call_us(lambda i: kept.emit(f"s{i}", results[i]))),
    ]
    start = time.perf_counter()
    for _ in range(20):
        prom.exposition()
    scrape_ms = (time.perf_counter() - start) / 20 * 1e3
    start = time.perf_counter()
    for _ in range(20):
        om_body, _headers = prom.scrape("application/openmetrics-text; version=1.0.0", None)
    om_ms = (time.perf_counter() - start) / 20 * 1e3
    print("| operation | µs per response | ratio to baseline |")
    print("|---|---|---|")
    for name, us in rows:
        print(f"| {name} | {us:.2f} | {us / baseline:.1f}x |")
    print(f"\nPrometheusSink.exposition(): {scrape_ms:.2f} ms per scrape ({len(prom.exposition())} bytes)")
    print(f"OpenMetrics with exemplars: {om_ms:.2f} ms per scrape ({len(om_body)} bytes)")
    otlp._provider.shutdown(timeout_millis=100)


if __name__ == "__main__":
    main()
