"""OTLP sink: the catalog's instruments pushed over OTLP/HTTP through the OpenTelemetry SDK.

Why: sites that run an OpenTelemetry Collector rather than scrape want a push path with OTel names
and GenAI attribute names (ecosystem.md §3.4, §7.1): `gen_ai.request.model` and
`gen_ai.response.model` for the model, `degeneration.finish_reason`, `degeneration.flag.kind`,
`degeneration.source`; resource `service.name=degeneration-exporter` unless `OTEL_SERVICE_NAME` or
`OTEL_RESOURCE_ATTRIBUTES` say otherwise. Every setting left unset here falls back to the standard
`OTEL_*` variable the SDK reads (`OTEL_EXPORTER_OTLP_[METRICS_]ENDPOINT`, `..._HEADERS`, `..._TIMEOUT`,
`OTEL_METRIC_EXPORT_INTERVAL`, `OTEL_EXPORTER_OTLP_METRICS_TEMPORALITY_PREFERENCE`).

Per-response histograms are SDK instruments fed by `emit`; per-response counters are summed in the
sink and observed at export time (cheaper than the SDK's per-call attribute handling), as are the
rollout gauges, source self-metrics and label overflows. All come from the same `Measurer` the
Prometheus sink uses, so both paths count the same things. Histograms use
base-2 exponential aggregation by default (Prometheus ingests them as native histograms), or the
catalog's explicit buckets. OpenTelemetry is the optional extra `otlp` and is imported only when
an `OtlpSink` is built; export failures are logged and retried by the SDK's exporter, counted in
`OtlpSink.exports` (exposed as `degeneration_otlp_export_failures_total` by both sinks), and never
fatal.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Collection, Iterable
from datetime import timedelta
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field, model_validator

from .. import __version__
from .. import catalog as c
from ..classification.labels import LabelLimits
from ..classification.result import Classification
from ..errors import ConfigError
from ..sources.base import SourceStats
from .measurements import Measurement, Measurer
from .rollout_steps import DEFAULT_STEP_IDLE_TIMEOUT, STEP_IDLE_TIMEOUT_HELP, check_step_idle_timeout

if TYPE_CHECKING:
    from opentelemetry.metrics import CallbackOptions, Histogram, Observation
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricsData

__all__ = ["INSTALL_HINT", "SERVICE_NAME", "ExportOutcomes", "OtlpSink", "OtlpSinkConfig"]

SERVICE_NAME = "degeneration-exporter"
INSTALL_HINT = (
    "the otlp sink needs OpenTelemetry: pip install 'degeneration-exporter[otlp]' "
    "(opentelemetry-sdk and opentelemetry-exporter-otlp-proto-http)"
)
_SIGNAL_PATH = "/v1/metrics"


class OtlpSinkConfig(BaseModel, frozen=True, extra="forbid"):
    """`sinks.otlp`: where and how often to push; unset fields defer to the standard `OTEL_*` env vars."""

    enabled: bool = Field(False, description="Push metrics over OTLP/HTTP (needs the 'otlp' extra).")
    endpoint: str | None = Field(
        None,
        description="Collector base URL such as http://otel-collector:4318 (/v1/metrics is appended); "
        "unset: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT, OTEL_EXPORTER_OTLP_ENDPOINT, else http://localhost:4318.",
    )
    interval: timedelta | None = Field(
        None, description="Time between exports; unset: OTEL_METRIC_EXPORT_INTERVAL, else 60 s."
    )
    timeout: timedelta | None = Field(
        None, description="Timeout of one export request; unset: OTEL_EXPORTER_OTLP_TIMEOUT, else 10 s."
    )
    headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers; empty: OTEL_EXPORTER_OTLP_HEADERS."
    )
    histogram_aggregation: Literal["exponential", "explicit"] = Field(
        "exponential",
        description="exponential: base-2 exponential histograms; explicit: the catalog's bucket bounds.",
    )
    limits: LabelLimits = Field(
        default_factory=LabelLimits, description="Caps on data-derived attribute values."
    )
    step_idle_timeout: timedelta | None = Field(DEFAULT_STEP_IDLE_TIMEOUT, description=STEP_IDLE_TIMEOUT_HELP)

    @model_validator(mode="after")
    def _check_step_idle_timeout(self) -> OtlpSinkConfig:
        check_step_idle_timeout(
            self.step_idle_timeout, self.limits.run_ttl, explicit="step_idle_timeout" in self.model_fields_set
        )
        return self

    def metrics_endpoint(self) -> str | None:
        """The full OTLP/HTTP metrics URL, or None to let the SDK read the environment."""
        if self.endpoint is None:
            return None
        base = self.endpoint.rstrip("/")
        return base if base.endswith(_SIGNAL_PATH) else base + _SIGNAL_PATH


def _attribute_plan(spec: c.MetricSpec) -> tuple[tuple[int, str], ...]:
    """(label index, attribute name) pairs: how a measurement's labels become OTel attributes."""
    return tuple(
        (index, attribute)
        for index, label in enumerate(spec.labels)
        for attribute in c.LABEL_ATTRIBUTES[label]
    )


_PLANS = {spec.name: _attribute_plan(spec) for spec in c.CATALOG}


def attributes_of(metric: str, labels: tuple[str, ...]) -> dict[str, str]:
    """The OTel attributes of a catalog metric's label values (GenAI names where they exist)."""
    return {attribute: labels[index] for index, attribute in _PLANS[metric]}


class ExportOutcomes:
    """Counts of OTLP exports by outcome; a failed export is logged by the SDK and counted here."""

    def __init__(self) -> None:
        self.succeeded = 0
        self.failed = 0
        self.last_succeeded: bool | None = None

    def record(self, ok: bool) -> None:
        self.last_succeeded = ok
        if ok:
            self.succeeded += 1
        else:
            self.failed += 1


def _counting_exporter(inner: MetricExporter, outcomes: ExportOutcomes) -> MetricExporter:
    """Wrap `inner` so every export's outcome lands in `outcomes` (SinkError semantics: counted)."""
    from opentelemetry.sdk.metrics.export import MetricExporter, MetricExportResult

    class CountingExporter(MetricExporter):
        def __init__(self) -> None:
            super().__init__(inner._preferred_temporality, inner._preferred_aggregation)

        def export(
            self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any
        ) -> MetricExportResult:
            result = inner.export(metrics_data, timeout_millis=timeout_millis, **kwargs)
            outcomes.record(result is MetricExportResult.SUCCESS)
            return result

        def force_flush(self, timeout_millis: float = 10_000) -> bool:
            return inner.force_flush(timeout_millis)

        def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
            inner.shutdown(timeout_millis=timeout_millis, **kwargs)

    return CountingExporter()


class OtlpSink:
    """Feeds the catalog's instruments to an OTel `MeterProvider` that pushes OTLP/HTTP periodically."""

    def __init__(
        self,
        config: OtlpSinkConfig | None = None,
        *,
        leak_tokens: Collection[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        try:  # the optional extra `otlp`, imported only when a sink is built
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
            from opentelemetry.sdk.metrics import Histogram as SdkHistogram
            from opentelemetry.sdk.metrics import MeterProvider
            from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
            from opentelemetry.sdk.metrics.view import (
                Aggregation,
                ExplicitBucketHistogramAggregation,
                ExponentialBucketHistogramAggregation,
                View,
            )
            from opentelemetry.sdk.resources import Resource
        except ImportError as exc:
            raise ConfigError(INSTALL_HINT, field="sinks.otlp.enabled") from exc

        self.config = config or OtlpSinkConfig()
        self._measurer = Measurer(
            self.config.limits,
            leak_tokens=leak_tokens,
            clock=clock,
            step_idle_timeout=self.config.step_idle_timeout,
        )
        self._closed = False

        resource = Resource.create({})
        if str(resource.attributes.get("service.name", "")).startswith("unknown_service"):
            resource = resource.merge(Resource({"service.name": SERVICE_NAME}))
        resource = resource.merge(Resource({"service.version": __version__}))

        views: list[View] = []
        preferred: dict[type, Aggregation] | None = None
        if self.config.histogram_aggregation == "explicit":
            views = [
                View(
                    instrument_name=spec.otel_name,
                    aggregation=ExplicitBucketHistogramAggregation(boundaries=spec.buckets),
                )
                for spec in c.CATALOG
                if spec.type == "histogram"
            ]
        else:
            preferred = {SdkHistogram: ExponentialBucketHistogramAggregation()}
        timeout = self.config.timeout.total_seconds() if self.config.timeout is not None else None
        exporter = OTLPMetricExporter(
            endpoint=self.config.metrics_endpoint(),
            headers=self.config.headers or None,
            timeout=timeout,
            preferred_aggregation=preferred,
        )
        interval = self.config.interval.total_seconds() * 1000 if self.config.interval is not None else None
        self.exports = ExportOutcomes()
        self._measurer.register_otlp_failures(lambda: self.exports.failed)
        reader = PeriodicExportingMetricReader(
            _counting_exporter(exporter, self.exports), export_interval_millis=interval
        )
        self._provider: MeterProvider = MeterProvider(metric_readers=[reader], resource=resource, views=views)
        meter = self._provider.get_meter("degeneration_exporter", __version__)

        # Response counters are summed here and observed at export time: the SDK's per-call
        # attribute handling cost more than everything else per response (bench/bench_sinks.py).
        self._totals: dict[str, dict[tuple[str, ...], float]] = {}
        self._totals_lock = threading.Lock()
        self._pulled: dict[str, list[Measurement]] | None = None  # this collection's `pull()`, by name
        self._pulled_names: set[str] = set()
        self._pulled_lock = threading.Lock()
        self._attributes: dict[tuple[str, tuple[str, ...]], dict[str, str]] = {}  # bounded like labels
        self._histograms: dict[str, Histogram] = {}
        for spec in c.CATALOG:
            if spec.origin == "response" and spec.type == "histogram":
                self._histograms[spec.name] = meter.create_histogram(spec.otel_name, spec.unit, spec.help)
                continue
            if spec.origin == "response":
                self._totals[spec.name] = {}
                callback = self._totals_callback(spec.name)
            else:
                callback = self._pull_callback(spec.name)
            if spec.type == "counter":
                meter.create_observable_counter(spec.otel_name, [callback], spec.unit, spec.help)
            else:
                meter.create_observable_gauge(spec.otel_name, [callback], spec.unit, spec.help)

    def _attributes_for(self, metric: str, labels: tuple[str, ...]) -> dict[str, str]:
        key = (metric, labels)
        attributes = self._attributes.get(key)
        if attributes is None:
            attributes = self._attributes[key] = attributes_of(metric, labels)
        return attributes

    def _totals_callback(self, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        from opentelemetry.metrics import Observation

        totals = self._totals[name]

        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            self._expire_models()
            with self._totals_lock:
                items = list(totals.items())
            return [Observation(value, self._attributes_for(name, labels)) for labels, value in items]

        return observe

    def _pull_callback(self, name: str) -> Callable[[CallbackOptions], Iterable[Observation]]:
        from opentelemetry.metrics import Observation

        def observe(_options: CallbackOptions) -> Iterable[Observation]:
            return [Observation(m.value, attributes_of(name, m.labels)) for m in self._pull_for(name)]

        return observe

    def _pull_for(self, name: str) -> list[Measurement]:
        """This collection's scrape-time measurements of `name`: one `Measurer.pull()` per collection.

        Why: about twenty instruments read the same pull (rollout gauges, source stats, overflows);
        pulling once per instrument took every source's lock twenty times per export, and mixed
        readings from different instants. The SDK calls each callback once per collection, so a
        name asked for again means a new collection has begun: the pull is then taken afresh.
        """
        with self._pulled_lock:
            if self._pulled is None or name in self._pulled_names:
                self._pulled = {}
                for m in self._measurer.pull():
                    self._pulled.setdefault(m.metric.name, []).append(m)
                self._pulled_names.clear()
            self._pulled_names.add(name)
            return self._pulled.get(name, [])

    def _expire_models(self) -> None:
        """Drop the summed counters of model names idle past the TTL (the SDK cannot forget a
        histogram's attribute set, so those keep their last state; their label slot is freed)."""
        dropped = set(self._measurer.expire_models())
        if not dropped:
            return
        with self._totals_lock:
            for totals in self._totals.values():
                for labels in [k for k in totals if (k[0], k[1]) in dropped]:
                    del totals[labels]
        for key in [k for k in list(self._attributes) if (k[1][0], k[1][1]) in dropped]:
            self._attributes.pop(key, None)

    def emit(self, source: str, result: Classification) -> None:
        """Count one classified response from `source`."""
        self._expire_models()
        for m in self._measurer.measure(source, result):
            totals = self._totals.get(m.metric.name)
            if totals is None:
                self._histograms[m.metric.name].record(m.value, self._attributes_for(m.metric.name, m.labels))
                continue
            with self._totals_lock:
                totals[m.labels] = totals.get(m.labels, 0.0) + m.value

    def register_source_stats(self, name: str, stats: SourceStats) -> None:
        """Export `stats` as the self-metrics of source `name`, read at every export."""
        self._measurer.register_source_stats(name, stats)

    def flush(self, timeout: timedelta = timedelta(seconds=30)) -> bool:
        """Complete open rollout steps and export now; True when that export succeeded in time."""
        self._measurer.steps.flush()
        done = self._provider.force_flush(timeout_millis=timeout.total_seconds() * 1000)
        return done and self.exports.last_succeeded is True

    def close(self) -> None:
        """Complete open rollout steps, export a last time and stop the export thread; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._measurer.steps.flush()
        self._provider.shutdown()
