"""Prometheus sink: catalog metrics in a registry of its own, scraped as the classic text format.

Why this shape: client_python's pattern (style.md §1) — per-response counters and histograms are
library instruments fed by `emit`; rollout gauges, self-metrics and label overflows are read at
scrape time by a custom collector (as `gc_collector.py` does), so idle runs vanish on expiry and
source counters cost nothing per line. Model names idle past `limits.model_name_ttl` are expired at
every emit and scrape, and all their series removed. The sink never touches the global default registry.

`_created` series: prometheus-client only has a process-global switch for them
(`PROMETHEUS_DISABLE_CREATED_SERIES=True` read at import, or `disable_created_metrics()`), so the
instruments live in a private registry that is exposed through a view dropping `_created` samples;
the effect is per registry and independent of the environment (ecosystem.md §2.3, §7.1).

Default port 10142: the "Default port allocations" wiki of prometheus/prometheus has filled
9100-9999 and hands out new exporter ports sequentially from 10001 (10047 and 10049 were taken by
2026-08, per projects citing the wiki; the page itself was not readable from here), and
/etc/services reserves 10050-10051 (Zabbix) and 10080-10083 (Amanda). 10142 lies past that
frontier and clear of both; register it on the wiki before announcing a release.

Exemplars and OpenMetrics: `scrape(accept, accept_encoding)` negotiates like client_python's own
handler (prometheus_client 0.26.0, exposition.py `_bake_output`: `choose_encoder` on Accept, gzip
when `gzip_accepted`), so a Prometheus asking for OpenMetrics gets exemplars and anyone else the
classic text format. Flagged-response counters and the loop-onset histogram carry an exemplar
`{sample_id="<16 hex>"}` (sinks/samples.py `sample_id`, the id the samples store uses), which
Grafana's exemplar view links to `/samples/<id>` (docs/samples.md). Exemplars are not labels:
Prometheus keeps only the latest per series, so the id adds no cardinality.

Sample lines (one per family, see docs/metrics.md for all):
    degeneration_responses_total{finish_reason="length",model_name="qwen3-8b",source="vllm-prod"} 1024.0
    degeneration_rollout_repetition_frac{run="grpo-7b",source="rl"} 0.03
"""

from __future__ import annotations

import contextlib
import gzip
import time
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import timedelta

from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
from prometheus_client.exposition import choose_encoder, gzip_accepted
from prometheus_client.gc_collector import GCCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from pydantic import BaseModel, Field, field_validator, model_validator

from .. import catalog as c
from ..classification.labels import LabelLimits
from ..classification.result import Classification
from ..sources.base import SourceStats
from .measurements import Measurement, Measurer
from .rollout_steps import DEFAULT_STEP_IDLE_TIMEOUT, STEP_IDLE_TIMEOUT_HELP, check_step_idle_timeout
from .samples import sample_id

__all__ = ["DEFAULT_PORT", "EXEMPLAR_LABEL", "EXEMPLAR_METRICS", "PrometheusSink", "PrometheusSinkConfig"]

DEFAULT_PORT = 10142
EXEMPLAR_LABEL = "sample_id"
EXEMPLAR_METRICS = frozenset({"degeneration_responses_flagged_total", "degeneration_loop_onset_ratio"})
"""Series whose samples carry the flagged response's id as an exemplar."""

_Recorder = Callable[[float, "dict[str, str] | None"], None]


class PrometheusSinkConfig(BaseModel, frozen=True, extra="forbid"):
    """`sinks.prometheus`: the scrape endpoint and the label bounds of its series."""

    enabled: bool = Field(True, description="Serve /metrics for Prometheus to scrape.")
    listen: str = Field(f"0.0.0.0:{DEFAULT_PORT}", description="host:port the /metrics endpoint listens on.")
    limits: LabelLimits = Field(default_factory=LabelLimits, description="Caps on data-derived label values.")
    process_metrics: bool = Field(
        True, description="Also expose the standard process_* and python_* metrics of the daemon."
    )
    step_idle_timeout: timedelta | None = Field(DEFAULT_STEP_IDLE_TIMEOUT, description=STEP_IDLE_TIMEOUT_HELP)

    @field_validator("listen")
    @classmethod
    def _check_listen(cls, value: str) -> str:
        _host, sep, port = value.rpartition(":")
        if not sep or not port.isdigit() or not 0 < int(port) < 65536:
            raise ValueError("listen must be host:port with a port in 1..65535, e.g. 0.0.0.0:10142")
        return value

    @model_validator(mode="after")
    def _check_step_idle_timeout(self) -> PrometheusSinkConfig:
        check_step_idle_timeout(
            self.step_idle_timeout, self.limits.run_ttl, explicit="step_idle_timeout" in self.model_fields_set
        )
        return self

    @property
    def host(self) -> str:
        """The host part of `listen` (brackets of an IPv6 literal removed)."""
        return self.listen.rpartition(":")[0].strip("[]")

    @property
    def port(self) -> int:
        """The port part of `listen`."""
        return int(self.listen.rpartition(":")[2])


class _WithoutCreated:
    """A collector view of a registry that drops the `_created` samples of counters and histograms.

    `before` runs first at every collection (the sink expires idle model names there).
    """

    def __init__(self, inner: CollectorRegistry, before: Callable[[], None]) -> None:
        self._inner = inner
        self._before = before

    def collect(self) -> Iterator[Metric]:
        self._before()
        for metric in self._inner.collect():
            created = metric.name + "_created"
            metric.samples = [s for s in metric.samples if s.name != created]
            yield metric


def _families(measurements: Iterable[Measurement]) -> Iterator[Metric]:
    """Group scrape-time measurements into families (counters without `_created`)."""
    grouped: dict[str, tuple[c.MetricSpec, list[Measurement]]] = {}
    for m in measurements:
        grouped.setdefault(m.metric.name, (m.metric, []))[1].append(m)
    for spec, items in grouped.values():
        family: CounterMetricFamily | GaugeMetricFamily
        if spec.type == "counter":
            family = CounterMetricFamily(spec.name, spec.help, labels=spec.labels)
        else:
            family = GaugeMetricFamily(spec.name, spec.help, labels=spec.labels)
        for m in items:
            family.add_metric(list(m.labels), m.value)
        yield family


class _ScrapeTimeCollector:
    """Rollout gauges, source self-metrics, label overflows and build_info, read at scrape time."""

    def __init__(self, sink: PrometheusSink) -> None:
        self._sink = sink

    def collect(self) -> Iterator[Metric]:
        yield from _families(self._sink.scrape_time_measurements())


class PrometheusSink:
    """Counts classified responses into catalog metrics in its own `CollectorRegistry`.

    `exemplars`: attach sample ids to flagged counters and the onset histogram (OpenMetrics only).
    `registry` is what an HTTP handler serves (`prometheus_client.make_wsgi_app(sink.registry)` or
    `start_http_server(port, addr, registry=sink.registry)`); `exposition()` renders it directly.
    """

    def __init__(
        self,
        config: PrometheusSinkConfig | None = None,
        *,
        registry: CollectorRegistry | None = None,
        leak_tokens: Collection[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        exemplars: bool = True,
    ) -> None:
        self.config = config or PrometheusSinkConfig()
        self._exemplars = exemplars  # off when no samples store holds what the ids would point to
        self.registry = registry if registry is not None else CollectorRegistry()
        self._measurer = Measurer(
            self.config.limits,
            leak_tokens=leak_tokens,
            clock=clock,
            step_idle_timeout=self.config.step_idle_timeout,
        )
        self._instruments = CollectorRegistry()
        self._counters: dict[str, Counter] = {}
        self._histograms: dict[str, Histogram] = {}
        # (metric, label values) -> the child's inc/observe: skips labels() lookups per response;
        # bounded because every label value is.
        self._record: dict[tuple[str, tuple[str, ...]], _Recorder] = {}
        for spec in c.CATALOG:
            if spec.origin != "response":
                continue
            if spec.type == "counter":
                self._counters[spec.name] = Counter(
                    spec.name, spec.help, spec.labels, registry=self._instruments
                )
            elif spec.type == "histogram":
                self._histograms[spec.name] = Histogram(
                    spec.name, spec.help, spec.labels, registry=self._instruments, buckets=spec.buckets
                )
        self.registry.register(_WithoutCreated(self._instruments, self._expire_models))
        self.registry.register(_ScrapeTimeCollector(self))
        if self.config.process_metrics:
            ProcessCollector(registry=self.registry)
            PlatformCollector(registry=self.registry)
            GCCollector(registry=self.registry)

    def emit(self, source: str, result: Classification) -> None:
        """Count one classified response from `source`."""
        self._expire_models()  # before binding, so a slot freed by an idle model can be taken
        exemplar = {EXEMPLAR_LABEL: sample_id(source, result)} if result.flags and self._exemplars else None
        for m in self._measurer.measure(source, result):
            key = (m.metric.name, m.labels)
            record = self._record.get(key)
            if record is None:
                record = self._record[key] = self._recorder(m)
            record(m.value, exemplar if m.value and m.metric.name in EXEMPLAR_METRICS else None)

    def _expire_models(self) -> None:
        """Remove every series of model names idle past `limits.model_name_ttl`."""
        dropped = set(self._measurer.expire_models())
        if not dropped:
            return
        for key in list(self._record):
            name, labels = key
            if (labels[0], labels[1]) not in dropped:  # response metrics start (source, model_name)
                continue
            self._record.pop(key, None)
            instrument: Counter | Histogram = self._counters.get(name) or self._histograms[name]
            with contextlib.suppress(KeyError):
                instrument.remove(*labels)

    def _recorder(self, m: Measurement) -> _Recorder:
        counter = self._counters.get(m.metric.name)
        if counter is not None:
            return counter.labels(*m.labels).inc
        return self._histograms[m.metric.name].labels(*m.labels).observe

    def register_source_stats(self, name: str, stats: SourceStats) -> None:
        """Expose `stats` as the self-metrics of source `name`, read at every scrape."""
        self._measurer.register_source_stats(name, stats)

    def register_otlp_failures(self, read: Callable[[], int]) -> None:
        """Expose the OTLP sink's failed exports (`OtlpSink.exports.failed`) at every scrape.

        Why here too: a push path that silently fails is only noticed from the pull side.
        """
        self._measurer.register_otlp_failures(read)

    def scrape_time_measurements(self) -> list[Measurement]:
        """Everything read at scrape time: rollout gauges, self-metrics, overflows, build_info."""
        return self._measurer.pull()

    def flush(self) -> None:
        """Complete every open rollout step now, so its gauges appear (end of input); while the
        daemon runs, `step_idle_timeout` completes quiet steps at emit and scrape time."""
        self._measurer.steps.flush()

    def exposition(self) -> bytes:
        """The registry in the classic Prometheus text format (0.0.4), without exemplars."""
        return generate_latest(self.registry)

    def scrape(self, accept: str | None, accept_encoding: str | None) -> tuple[bytes, dict[str, str]]:
        """What /metrics answers: body and headers (Content-Type, and Content-Encoding when gzipped).

        OpenMetrics (with exemplars) when `accept` asks for it, else the classic text format.
        """
        encoder, content_type = choose_encoder(accept or "")
        body = encoder(self.registry)
        headers = {"Content-Type": content_type}
        if gzip_accepted(accept_encoding or ""):
            body = gzip.compress(body, compresslevel=6)
            headers["Content-Encoding"] = "gzip"
        return body, headers

    def close(self) -> None:
        """Complete open rollout steps; the registry stays readable for a last scrape."""
        self.flush()
