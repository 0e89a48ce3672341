"""Every metric the exporter exposes, once: name, type, help, unit, labels, buckets.

Why one table: the Prometheus sink, the OTLP sink, `metrics list`, docs/metrics.md and the
dashboards all read these entries, so a name is typed exactly once (style.md §5, §12). Names follow
ecosystem.md §7.1 and pass `promtool check metrics` (§2.5): `degeneration_` prefix, counters end in
`_total`, ratios are 0..1, timestamps are `_timestamp_seconds`. Labels are bounded by construction
(StrEnum values) or through `classification/labels.py`; never a path, request id, prompt or text.

`_created` series are not exposed: prometheus-client only offers a process-global switch
(`PROMETHEUS_DISABLE_CREATED_SERIES=True` or `disable_created_metrics()`), so the Prometheus sink
filters them out of its own registry instead (see `sinks/prometheus.py`), whatever the environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = [
    "CATALOG",
    "LABEL_ATTRIBUTES",
    "LABEL_VALUES",
    "METRICS",
    "MetricSpec",
    "MetricType",
    "Origin",
    "format_number",
]

MetricType = Literal["counter", "gauge", "histogram"]
Origin = Literal["response", "rollout", "self"]


def format_number(value: float) -> str:
    """A number as docs show it: integers without a fraction, others as Python writes them."""
    return str(int(value)) if float(value).is_integer() else repr(float(value))


_RATIO_BUCKETS = (0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


@dataclass(frozen=True, slots=True)
class MetricSpec:
    """One metric: its Prometheus name (with `_total` for counters) and its OTel instrument.

    `origin` says who feeds it: `response` per classified response, `rollout` per completed RL
    step, `self` the daemon's own health read at scrape time. `unit` is UCUM, as OTel wants it
    (`{response}`, `By`, `s`, `1`); `example` is the value shown in the sample exposition line.
    """

    name: str
    type: MetricType
    help: str
    unit: str
    labels: tuple[str, ...]
    origin: Origin
    otel_name: str
    buckets: tuple[float, ...] = ()
    example: float = 1.0

    @property
    def sample_line(self) -> str:
        """One exposition line as Prometheus would scrape it (docs; pve-exporter style)."""
        pairs = [f'{label}="{LABEL_VALUES.get(label, "x")}"' for label in self.labels]
        name = self.name
        if self.type == "histogram":
            name = f"{self.name}_bucket"
            bound = self.buckets[len(self.buckets) // 2] if self.buckets else 1.0
            pairs.append(f'le="{format_number(bound)}"')
        body = f"{{{','.join(pairs)}}}" if pairs else ""
        return f"{name}{body} {format_number(self.example)}"


# Example label values for docs, and the OTel attribute each Prometheus label becomes (GenAI
# semantic-convention names where they exist, ecosystem.md §3.4, §7.1).
LABEL_VALUES: dict[str, str] = {
    "source": "vllm-prod",
    "model_name": "qwen3-8b",
    "finish_reason": "length",
    "kind": "repetition",
    "detector": "relax_compression",
    "token": "<|im_end|>",
    "run": "grpo-7b",
    "reason": "invalid_json",
    "label": "model_name",
    "version": "0.1.0",
    "python_version": "3.11.7",
}

LABEL_ATTRIBUTES: dict[str, tuple[str, ...]] = {
    "source": ("degeneration.source",),
    "model_name": ("gen_ai.request.model", "gen_ai.response.model"),
    "finish_reason": ("degeneration.finish_reason",),
    "kind": ("degeneration.flag.kind",),
    "detector": ("degeneration.detector",),
    "token": ("degeneration.token",),
    "run": ("degeneration.run",),
    "reason": ("degeneration.reject_reason",),
    "label": ("degeneration.label",),
    "version": ("service.version",),
    "python_version": ("process.runtime.version",),
}

_SM = ("source", "model_name")
_SR = ("source", "run")
_S = ("source",)


def _response(
    name: str,
    type_: MetricType,
    help_: str,
    unit: str,
    otel: str,
    labels: tuple[str, ...] = _SM,
    buckets: tuple[float, ...] = (),
    example: float = 1.0,
) -> MetricSpec:
    return MetricSpec(f"degeneration_{name}", type_, help_, unit, labels, "response", otel, buckets, example)


def _rollout(name: str, help_: str, unit: str, otel: str, example: float) -> MetricSpec:
    return MetricSpec(f"degeneration_{name}", "gauge", help_, unit, _SR, "rollout", otel, (), example)


def _self(
    name: str,
    type_: MetricType,
    help_: str,
    unit: str,
    otel: str,
    labels: tuple[str, ...] = _S,
    example: float = 1.0,
) -> MetricSpec:
    return MetricSpec(f"degeneration_{name}", type_, help_, unit, labels, "self", otel, (), example)


CATALOG: tuple[MetricSpec, ...] = (
    # Per classified response (denominator first).
    _response(
        "responses_total",
        "counter",
        "Classified responses by normalised finish reason (the denominator of every ratio).",
        "{response}",
        "degeneration.responses",
        ("source", "model_name", "finish_reason"),
        example=1024,
    ),
    _response(
        "responses_flagged_total",
        "counter",
        "Classified responses flagged, by kind (repetition, template_leak, ceiling, "
        "ceiling_while_repeating); a response may carry several kinds.",
        "{response}",
        "degeneration.responses.flagged",
        ("source", "model_name", "kind"),
        example=37,
    ),
    _response(
        "detections_total",
        "counter",
        "Responses on which a detector fired, by detector (one response may fire several).",
        "{response}",
        "degeneration.detections",
        ("source", "model_name", "detector"),
        example=35,
    ),
    _response(
        "template_leak_tokens_total",
        "counter",
        "Chat-template special tokens found in visible response text, by token (configured list, "
        "else other).",
        "{token}",
        "degeneration.template_leak.tokens",
        ("source", "model_name", "token"),
        example=12,
    ),
    _response(
        "loop_chars_after_onset_total",
        "counter",
        "Characters generated after a repetition loop began (the cost of loops).",
        "{char}",
        "degeneration.loop.chars_after_onset",
        example=582113,
    ),
    _response(
        "loop_tokens_after_onset_total",
        "counter",
        "Tokens generated after a repetition loop began, where token counts are known.",
        "{token}",
        "degeneration.loop.tokens_after_onset",
        example=145528,
    ),
    _response(
        "response_tokens",
        "histogram",
        "Output tokens per response, where the record states them.",
        "{token}",
        "degeneration.response.tokens",
        buckets=tuple(float(2**i) for i in range(4, 18)),
        example=812,
    ),
    _response(
        "response_chars",
        "histogram",
        "Characters per response (visible text plus reasoning).",
        "{char}",
        "degeneration.response.chars",
        buckets=tuple(float(2**i) for i in range(6, 21)),
        example=901,
    ),
    _response(
        "response_repetition_ratio",
        "histogram",
        "Repetition score of each response, 0 (none) to 1 (all loop).",
        "1",
        "degeneration.response.repetition",
        buckets=(0.05, *_RATIO_BUCKETS),
        example=1000,
    ),
    _response(
        "loop_onset_ratio",
        "histogram",
        "Where a detected loop began, as a fraction of its channel's length (0 = at the start).",
        "1",
        "degeneration.loop.onset",
        buckets=(0.05, *_RATIO_BUCKETS),
        example=20,
    ),
    _response(
        "response_token_budget_ratio",
        "histogram",
        "Output tokens over max_tokens per response, where both are known (1 = at the ceiling).",
        "1",
        "degeneration.response.token_budget",
        buckets=_RATIO_BUCKETS,
        example=640,
    ),
    # Per completed rollout step (slime/verl/OpenRLHF per-step view).
    _rollout(
        "rollout_repetition_frac",
        "Fraction of responses flagged repetition in the last completed step of a run "
        "(slime rollout/repetition_frac view).",
        "1",
        "degeneration.rollout.repetition_frac",
        0.03,
    ),
    _rollout(
        "rollout_truncated_frac",
        "Fraction of responses that hit the token ceiling in the last completed step of a run "
        "(slime rollout/truncated_ratio view).",
        "1",
        "degeneration.rollout.truncated_frac",
        0.12,
    ),
    _rollout(
        "rollout_template_leak_frac",
        "Fraction of responses leaking chat-template tokens in the last completed step of a run.",
        "1",
        "degeneration.rollout.template_leak_frac",
        0.0,
    ),
    _rollout(
        "rollout_responses",
        "Responses in the last completed step of a run (volume guard for per-step alerts).",
        "{response}",
        "degeneration.rollout.responses",
        512,
    ),
    _rollout(
        "rollout_step",
        "Last completed step of a run (complete once a later step appears, the run is idle for "
        "step_idle_timeout, or on flush).",
        "{step}",
        "degeneration.rollout.step",
        41,
    ),
    # The daemon's own health, read from SourceStats at scrape time.
    _self(
        "lines_read_total",
        "counter",
        "Lines read by a source.",
        "{line}",
        "degeneration.lines_read",
        example=120345,
    ),
    _self(
        "bytes_read_total",
        "counter",
        "Bytes read by a source.",
        "By",
        "degeneration.bytes_read",
        example=9.1e8,
    ),
    _self(
        "lines_rejected_total",
        "counter",
        "Lines skipped as unusable, by reason (the RecordError reason: invalid_json, too_long, ...).",
        "{line}",
        "degeneration.lines_rejected",
        ("source", "reason"),
        3,
    ),
    _self(
        "files_watched",
        "gauge",
        "Files a source currently tails.",
        "{file}",
        "degeneration.files_watched",
        example=8,
    ),
    _self(
        "files_open",
        "gauge",
        "Descriptors a file tail source holds open on its files now (at most files_open_budget in all).",
        "{file}",
        "degeneration.files_open",
        example=8,
    ),
    _self(
        "files_open_budget",
        "gauge",
        "Descriptors all file tails of the process may hold at once: RLIMIT_NOFILE (soft, raised to the "
        "hard limit at start) minus a reserve for the servers and positions files; beyond it files are "
        "read by opening and closing them in turn.",
        "{file}",
        "degeneration.files_open.budget",
        example=832,
    ),
    _self(
        "file_opens_deferred_total",
        "counter",
        "Opens of a tailed file put off to the next poll or glob pass because no descriptor of the "
        "budget could be freed.",
        "{open}",
        "degeneration.file_opens_deferred",
        example=0,
    ),
    _self(
        "file_rotations_total",
        "counter",
        "File rotations a source followed.",
        "{rotation}",
        "degeneration.file_rotations",
        example=2,
    ),
    _self(
        "file_truncations_total",
        "counter",
        "File truncations a source detected (read again from 0).",
        "{truncation}",
        "degeneration.file_truncations",
        example=0,
    ),
    _self(
        "source_lag_bytes",
        "gauge",
        "Bytes written to a source's files but not yet read.",
        "By",
        "degeneration.source.lag",
        example=0,
    ),
    _self(
        "last_record_timestamp_seconds",
        "gauge",
        "Unix time of the last record a source produced.",
        "s",
        "degeneration.last_record.timestamp",
        example=1.7645e9,
    ),
    _self(
        "checkpoint_last_success_timestamp_seconds",
        "gauge",
        "Unix time a source's positions were last saved successfully.",
        "s",
        "degeneration.checkpoint.last_success.timestamp",
        example=1.7645e9,
    ),
    _self(
        "checkpoint_errors_total",
        "counter",
        "Failed attempts to save a source's positions.",
        "{error}",
        "degeneration.checkpoint.errors",
        example=0,
    ),
    _self(
        "source_read_errors_total",
        "counter",
        "Failed opens and reads of a source's files (permission denied, file gone before it was opened); "
        "retried at the next poll or glob pass.",
        "{error}",
        "degeneration.source.read_errors",
        example=0,
    ),
    _self(
        "queue_depth",
        "gauge",
        "Lines read by a source and waiting to be classified (backpressure).",
        "{line}",
        "degeneration.queue.depth",
        example=0,
    ),
    _self(
        "streams_evicted_total",
        "counter",
        "Open streamed responses closed (counted as finish_reason abort) to stay under "
        "sources[].max_open_streams.",
        "{stream}",
        "degeneration.streams.evicted",
        example=0,
    ),
    _self(
        "streams_expired_total",
        "counter",
        "Open streamed responses closed (counted as finish_reason abort) after no chunk for "
        "sources[].stream_idle_timeout, on a timer.",
        "{stream}",
        "degeneration.streams.expired",
        example=0,
    ),
    _self(
        "label_overflow_total",
        "counter",
        "Label values folded into __other__ (or other) because the label's cap was reached.",
        "{value}",
        "degeneration.label.overflow",
        ("source", "label"),
        0,
    ),
    _self(
        "otlp_export_failures_total",
        "counter",
        "OTLP metric exports that failed (collector down, refused or timed out); present only with "
        "sinks.otlp enabled.",
        "{export}",
        "degeneration.otlp.export.failures",
        (),
        0,
    ),
    _self(
        "build_info",
        "gauge",
        "Build information; the value is always 1.",
        "1",
        "degeneration.build.info",
        ("version", "python_version"),
        1,
    ),
)

METRICS: dict[str, MetricSpec] = {spec.name: spec for spec in CATALOG}
