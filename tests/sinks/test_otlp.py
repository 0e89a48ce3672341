"""OtlpSink against a real OTLP/HTTP receiver on 127.0.0.1: values and attribute names as received."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from http.server import ThreadingHTTPServer

import pytest
from degeneration_exporter.catalog import CATALOG
from degeneration_exporter.classification.labels import LabelLimits
from degeneration_exporter.sinks.base import Sink
from degeneration_exporter.sinks.otlp import SERVICE_NAME, OtlpSink, OtlpSinkConfig
from degeneration_exporter.sources.base import SourceStats

from .builders import clean, looping
from .otlp_receiver import OtlpReceiver, Point, start_receiver

_OTEL_ENV = (
    "OTEL_SERVICE_NAME",
    "OTEL_RESOURCE_ATTRIBUTES",
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_EXPORTER_OTLP_HEADERS",
    "OTEL_EXPORTER_OTLP_COMPRESSION",
    "OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE",
    "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION",
    "OTEL_METRIC_EXPORT_INTERVAL",
)


@pytest.fixture(autouse=True)
def clean_otel_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in _OTEL_ENV:
        monkeypatch.delenv(name, raising=False)


@pytest.fixture
def receiver() -> Iterator[OtlpReceiver]:
    rec, server = start_receiver()
    try:
        yield rec
    finally:
        _stop(server)


def _stop(server: ThreadingHTTPServer) -> None:
    server.shutdown()
    server.server_close()


def _config(receiver: OtlpReceiver, **overrides: object) -> OtlpSinkConfig:
    fields: dict[str, object] = {
        "enabled": True,
        "endpoint": f"http://127.0.0.1:{receiver.port}",
        "interval": timedelta(hours=1),  # exports happen only on flush/close in these tests
    }
    fields.update(overrides)
    return OtlpSinkConfig.model_validate(fields)


def _points(receiver: OtlpReceiver, metric: str) -> list[Point]:
    return [p for p in receiver.points() if p.metric == metric]


def _one(receiver: OtlpReceiver, metric: str, **attributes: object) -> Point:
    matches = [p for p in _points(receiver, metric) if attributes.items() <= p.attributes.items()]
    assert len(matches) == 1, (metric, attributes, _points(receiver, metric))
    return matches[0]


def test_pushes_counters_with_genai_attribute_names(receiver: OtlpReceiver) -> None:
    sink: Sink = OtlpSink(_config(receiver), leak_tokens=["<|im_end|>"])
    sink.emit("vllm", clean())
    sink.emit("vllm", looping())
    sink.emit("vllm", looping())
    sink.close()
    receiver.wait_for_export()
    assert receiver.paths[-1] == "/v1/metrics"

    length = _one(receiver, "degeneration.responses", **{"degeneration.finish_reason": "length"})
    assert length.kind == "sum" and length.value == 2 and length.unit == "{response}"
    assert length.attributes == {
        "degeneration.source": "vllm",
        "gen_ai.request.model": "qwen3-8b",
        "gen_ai.response.model": "qwen3-8b",
        "degeneration.finish_reason": "length",
    }
    assert _one(receiver, "degeneration.responses", **{"degeneration.finish_reason": "stop"}).value == 1
    # Zero-initialised combinations are pushed too.
    assert _one(receiver, "degeneration.responses", **{"degeneration.finish_reason": "abort"}).value == 0
    flagged = _one(receiver, "degeneration.responses.flagged", **{"degeneration.flag.kind": "repetition"})
    assert flagged.value == 2
    leaked = _one(receiver, "degeneration.template_leak.tokens", **{"degeneration.token": "<|im_end|>"})
    assert leaked.value == 2
    assert _one(receiver, "degeneration.loop.chars_after_onset").value == 6000
    fired = _one(receiver, "degeneration.detections", **{"degeneration.detector": "relax_compression"})
    assert fired.value == 2


def test_a_stripped_role_token_has_the_same_printable_attribute_as_the_prometheus_label(
    receiver: OtlpReceiver,
) -> None:
    sink: Sink = OtlpSink(_config(receiver), leak_tokens=["<|im_end|>", "\nuser\n"])
    sink.emit("verl", looping(leaks={"\nuser\n": 2}))
    sink.close()
    receiver.wait_for_export()
    leaked = _one(receiver, "degeneration.template_leak.tokens", **{"degeneration.token": "\\nuser\\n"})
    assert leaked.value == 2


def test_resource_names_the_service_unless_the_environment_does(
    receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = OtlpSink(_config(receiver))
    sink.emit("a", clean())
    sink.close()
    receiver.wait_for_export()
    attributes = receiver.resource_attributes()
    assert attributes["service.name"] == SERVICE_NAME
    assert attributes["service.version"]

    monkeypatch.setenv("OTEL_SERVICE_NAME", "rl-cluster-exporter")
    monkeypatch.setenv("OTEL_RESOURCE_ATTRIBUTES", "deployment.environment.name=staging")
    receiver.requests.clear()
    sink = OtlpSink(_config(receiver))
    sink.emit("a", clean())
    sink.close()
    receiver.wait_for_export()
    attributes = receiver.resource_attributes()
    assert attributes["service.name"] == "rl-cluster-exporter"
    assert attributes["deployment.environment.name"] == "staging"


def test_endpoint_comes_from_the_standard_env_var_when_unset(
    receiver: OtlpReceiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", f"http://127.0.0.1:{receiver.port}")
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-tenant=rl")
    sink = OtlpSink(OtlpSinkConfig(enabled=True, interval=timedelta(hours=1)))
    sink.emit("a", clean())
    sink.close()
    receiver.wait_for_export()
    assert receiver.paths[-1] == "/v1/metrics"
    assert _one(receiver, "degeneration.responses", **{"degeneration.finish_reason": "stop"}).value == 1


def test_histograms_use_catalog_buckets_when_explicit(receiver: OtlpReceiver) -> None:
    sink = OtlpSink(_config(receiver, histogram_aggregation="explicit"))
    sink.emit("a", looping())
    sink.emit("a", clean())
    sink.close()
    receiver.wait_for_export()
    budget = _one(receiver, "degeneration.response.token_budget")
    spec = next(s for s in CATALOG if s.otel_name == "degeneration.response.token_budget")
    assert budget.kind == "histogram"
    assert budget.bounds == spec.buckets
    assert budget.count == 2 and budget.sum == pytest.approx(1.1)
    assert budget.bucket_counts[0] == 1  # 0.1 -> le 0.1
    assert budget.bucket_counts[spec.buckets.index(1.0)] == 1


def test_histograms_are_exponential_by_default(receiver: OtlpReceiver) -> None:
    sink = OtlpSink(_config(receiver))
    sink.emit("a", looping())
    sink.close()
    receiver.wait_for_export()
    tokens = _one(receiver, "degeneration.response.tokens")
    assert tokens.kind == "exponential_histogram" and tokens.count == 1 and tokens.sum == 1000


def test_rollout_gauges_and_self_metrics_are_read_at_export_time(receiver: OtlpReceiver) -> None:
    sink = OtlpSink(_config(receiver, limits=LabelLimits(max_model_names=1)))
    stats = SourceStats()
    sink.register_source_stats("rl", stats)
    sink.emit("rl", looping(run="grpo", step=1))
    sink.emit("rl", clean(run="grpo", step=1, model="other-model"))
    with stats.lock:
        stats.lines_read = 2
        stats.rejected["too_long"] += 1
        stats.lag_bytes = 512
    assert sink.flush()
    assert (sink.exports.succeeded, sink.exports.failed) == (1, 0)
    receiver.wait_for_export()
    run = {"degeneration.source": "rl", "degeneration.run": "grpo"}
    assert _one(receiver, "degeneration.rollout.step", **run).value == 1
    assert _one(receiver, "degeneration.rollout.repetition_frac", **run).value == 0.5
    assert _one(receiver, "degeneration.rollout.responses", **run).value == 2
    assert _one(receiver, "degeneration.lines_read", **{"degeneration.source": "rl"}).value == 2
    rejected = _one(receiver, "degeneration.lines_rejected", **{"degeneration.reject_reason": "too_long"})
    assert rejected.kind == "sum" and rejected.value == 1
    assert _one(receiver, "degeneration.source.lag").kind == "gauge"
    overflow = _one(receiver, "degeneration.label.overflow", **{"degeneration.label": "model_name"})
    assert overflow.value == 1
    assert (
        _one(
            receiver,
            "degeneration.responses",
            **{"gen_ai.request.model": "__other__", "degeneration.finish_reason": "stop"},
        ).value
        == 1
    )
    sink.close()


def test_each_export_reads_the_source_stats_afresh(receiver: OtlpReceiver) -> None:
    sink = OtlpSink(_config(receiver))
    stats = SourceStats()
    sink.register_source_stats("rl", stats)
    source = {"degeneration.source": "rl"}
    for export, lines in enumerate((2, 7, 9), start=1):
        with stats.lock:
            stats.lines_read, stats.bytes_read = lines, 10 * lines
        assert sink.flush()
        receiver.wait_for_export(export)
        assert _one(receiver, "degeneration.lines_read", **source).value == lines
        assert _one(receiver, "degeneration.bytes_read", **source).value == 10 * lines
    sink.close()


def test_every_catalog_instrument_reaches_the_receiver(receiver: OtlpReceiver) -> None:
    sink = OtlpSink(_config(receiver), leak_tokens=["<|im_end|>"])
    sink.register_source_stats("rl", SourceStats())
    sink.emit("rl", looping(run="grpo", step=1))
    sink.emit("rl", clean(leaks={"<|x|>": 1}))  # not on the configured list: counted as overflow
    sink.close()
    receiver.wait_for_export()
    assert {p.metric for p in receiver.points()} == {spec.otel_name for spec in CATALOG}


def test_endpoint_path_is_appended_once() -> None:
    assert OtlpSinkConfig(endpoint="http://c:4318/").metrics_endpoint() == "http://c:4318/v1/metrics"
    assert (
        OtlpSinkConfig(endpoint="http://c:4318/v1/metrics").metrics_endpoint() == "http://c:4318/v1/metrics"
    )
    assert OtlpSinkConfig().metrics_endpoint() is None
    assert OtlpSinkConfig().enabled is False


def _unreachable_config() -> OtlpSinkConfig:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return OtlpSinkConfig(
        enabled=True,
        endpoint=f"http://127.0.0.1:{port}",
        interval=timedelta(hours=1),
        timeout=timedelta(milliseconds=300),
    )


def test_an_unreachable_collector_is_never_fatal() -> None:
    sink = OtlpSink(_unreachable_config())
    sink.emit("a", looping())
    assert sink.flush(timeout=timedelta(seconds=2)) is False
    assert sink.exports.failed >= 1 and sink.exports.succeeded == 0
    sink.close()
    sink.close()  # idempotent


def test_export_failures_reach_the_prometheus_sink_as_a_self_metric() -> None:
    from degeneration_exporter.sinks.prometheus import PrometheusSink, PrometheusSinkConfig
    from prometheus_client import CollectorRegistry

    otlp = OtlpSink(_unreachable_config())
    registry = CollectorRegistry()
    prometheus = PrometheusSink(PrometheusSinkConfig(process_metrics=False), registry=registry)
    prometheus.register_otlp_failures(lambda: otlp.exports.failed)
    assert registry.get_sample_value("degeneration_otlp_export_failures_total") == 0
    otlp.emit("a", looping())
    assert otlp.flush(timeout=timedelta(seconds=2)) is False
    assert otlp.flush(timeout=timedelta(seconds=2)) is False
    failed = registry.get_sample_value("degeneration_otlp_export_failures_total")
    assert failed == otlp.exports.failed and failed >= 2
    otlp.close()


def test_idle_model_names_are_dropped_from_the_pushed_counters(receiver: OtlpReceiver) -> None:
    clock = [1000.0]
    limits = LabelLimits(max_model_names=1, model_name_ttl=timedelta(hours=1))
    sink = OtlpSink(_config(receiver, limits=limits), clock=lambda: clock[0])
    sink.emit("a", looping(model="ckpt-100"))
    assert sink.flush()
    responses = "degeneration.responses"
    assert {p.attributes["gen_ai.request.model"] for p in _points(receiver, responses)} == {"ckpt-100"}
    clock[0] += 3601
    sink.emit("a", clean(model="ckpt-200"))  # ckpt-100 expired first: the slot is free, not __other__
    assert sink.flush()
    assert {p.attributes["gen_ai.request.model"] for p in _points(receiver, responses)} == {"ckpt-200"}
    stop = _one(
        receiver, responses, **{"gen_ai.request.model": "ckpt-200", "degeneration.finish_reason": "stop"}
    )
    assert stop.value == 1
    sink.close()


def _exports(receiver: OtlpReceiver) -> int:
    with receiver.lock:
        return len(receiver.requests)


def _next_collection(receiver: OtlpReceiver) -> None:
    """Wait for an export whose collection began after this call (the one in flight may predate it)."""
    receiver.wait_for_export(count=_exports(receiver) + 2)


def test_a_quiet_runs_step_is_exported_after_the_idle_timeout_and_republished_when_reopened(
    receiver: OtlpReceiver,
) -> None:
    clock = [1000.0]
    config = _config(receiver, interval=timedelta(milliseconds=100), step_idle_timeout=timedelta(minutes=2))
    sink = OtlpSink(config, clock=lambda: clock[0])
    run = {"degeneration.source": "rl", "degeneration.run": "grpo"}
    try:
        sink.emit("rl", looping(run="grpo", step=12))
        sink.emit("rl", clean(run="grpo", step=12))
        _next_collection(receiver)
        assert _points(receiver, "degeneration.rollout.step") == []  # still open: nothing exported
        clock[0] += 120  # the run went quiet; periodic exports complete the step, no flush
        _next_collection(receiver)
        assert _one(receiver, "degeneration.rollout.step", **run).value == 12
        assert _one(receiver, "degeneration.rollout.repetition_frac", **run).value == 0.5
        assert _one(receiver, "degeneration.rollout.responses", **run).value == 2
        sink.emit("rl", clean(run="grpo", step=12))  # a late record reopens step 12
        clock[0] += 120
        _next_collection(receiver)
        assert _one(receiver, "degeneration.rollout.responses", **run).value == 3
        assert _one(receiver, "degeneration.rollout.repetition_frac", **run).value == pytest.approx(1 / 3)
    finally:
        sink.close()
