"""From a `Classification` to catalog measurements with bounded label values.

Why one place: the Prometheus and OTLP sinks must count exactly the same things with the same
label values, so both apply the list this module produces and differ only in how they record it
(prometheus-client children; OTel histograms and locally summed counters). It also owns the
label bounds (classification/labels.py), the rollout-step tracker and the self-metrics read from
`SourceStats`, all of which both sinks expose.
"""

from __future__ import annotations

import math
import platform
import time
from collections.abc import Callable, Collection
from datetime import timedelta
from typing import NamedTuple, get_args

from .. import __version__
from .. import catalog as c
from ..classification.labels import BoundedLabel, LabelLimits, leak_token_label, sanitize_label_value
from ..classification.result import Classification, FlagKind
from ..errors import RejectReason
from ..record import FinishReason
from ..sources.base import SourceStats
from .rollout_steps import DEFAULT_STEP_IDLE_TIMEOUT, RolloutSteps, effective_step_idle_timeout

__all__ = [
    "BUILD_INFO",
    "DEFAULT_RUN",
    "LEAK_TOKEN_OTHER",
    "Measurement",
    "Measurer",
    "measure_source_stats",
]

DEFAULT_RUN = "default"
LEAK_TOKEN_OTHER = "other"

_SPEC = c.METRICS


def _spec(name: str) -> c.MetricSpec:
    return _SPEC[f"degeneration_{name}"]


RESPONSES = _spec("responses_total")
FLAGGED = _spec("responses_flagged_total")
DETECTIONS = _spec("detections_total")
LEAK_TOKENS = _spec("template_leak_tokens_total")
LOOP_CHARS = _spec("loop_chars_after_onset_total")
LOOP_TOKENS = _spec("loop_tokens_after_onset_total")
RESPONSE_TOKENS = _spec("response_tokens")
RESPONSE_CHARS = _spec("response_chars")
REPETITION_RATIO = _spec("response_repetition_ratio")
ONSET_RATIO = _spec("loop_onset_ratio")
BUDGET_RATIO = _spec("response_token_budget_ratio")
LINES_REJECTED = _spec("lines_rejected_total")
LABEL_OVERFLOW = _spec("label_overflow_total")
OTLP_FAILURES = _spec("otlp_export_failures_total")
_ROLLOUT = {
    name: _spec(name)
    for name in (
        "rollout_repetition_frac",
        "rollout_truncated_frac",
        "rollout_template_leak_frac",
        "rollout_responses",
        "rollout_step",
    )
}
_REJECT_REASONS: tuple[str, ...] = get_args(RejectReason)


class Measurement(NamedTuple):
    """One value for one catalog metric: add it (counter), observe it (histogram) or set it (gauge).

    `labels` are the values for `metric.labels`, in that order, already bounded.
    """

    metric: c.MetricSpec
    labels: tuple[str, ...]
    value: float


class Measurer:
    """Turns `(source, Classification)` into measurements; keeps label bounds, rollout steps, sources.

    `measure` is called per response (push-time metrics); `pull` at scrape or export time returns
    the rest: rollout gauges, every registered source's self-metrics, label overflows, build_info.

    The first response of a `(source, model_name)` also yields zero-valued measurements for every
    finish_reason and kind, so those series exist before the first hit ("avoid missing metrics",
    ecosystem.md §2.2). `leak_tokens` is the configured token list: other tokens count as `other`;
    a token's label value is `leak_token_label(token)` (newlines escaped as backslash-n).
    `step_idle_timeout` completes a rollout step whose run went quiet (sinks/rollout_steps.py); it
    is shortened to half of `limits.run_ttl` when not shorter, so a run is not forgotten first.
    """

    def __init__(
        self,
        limits: LabelLimits | None = None,
        *,
        leak_tokens: Collection[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        step_idle_timeout: timedelta | None = DEFAULT_STEP_IDLE_TIMEOUT,
    ) -> None:
        limits = limits or LabelLimits()
        width = limits.max_value_length
        self.model_names = BoundedLabel(
            "model_name", limits.max_model_names, ttl=limits.model_name_ttl, max_length=width, clock=clock
        )
        self.runs = BoundedLabel("run", limits.max_runs, ttl=limits.run_ttl, max_length=width, clock=clock)
        self.detectors = BoundedLabel("detector", limits.max_detectors, max_length=width, clock=clock)
        token_cap = len(leak_tokens) if leak_tokens else limits.max_leak_tokens
        self.tokens = BoundedLabel(
            "token",
            max(token_cap, 1),
            allowed={leak_token_label(token) for token in leak_tokens} if leak_tokens else None,
            overflow_value=LEAK_TOKEN_OTHER,
            max_length=width,
            clock=clock,
        )
        self.steps = RolloutSteps(effective_step_idle_timeout(step_idle_timeout, limits.run_ttl), clock=clock)
        self._sources: dict[str, SourceStats] = {}
        self._seen_pairs: set[tuple[str, str]] = set()
        self._otlp_failures: Callable[[], int] | None = None

    def measure(self, source: str, result: Classification) -> list[Measurement]:
        """Everything one response adds to the response metrics; also feeds the rollout steps."""
        model = self.model_names.bound(source, result.model)
        sm = (source, model)
        out: list[Measurement] = []
        if sm not in self._seen_pairs:
            self._seen_pairs.add(sm)
            out.extend(Measurement(RESPONSES, (*sm, reason.value), 0.0) for reason in FinishReason)
            out.extend(Measurement(FLAGGED, (*sm, kind.value), 0.0) for kind in FlagKind)
        out.append(Measurement(RESPONSES, (*sm, result.finish_reason.value), 1.0))
        out.extend(Measurement(FLAGGED, (*sm, kind.value), 1.0) for kind in result.flags)
        fired = dict.fromkeys(f.detector for f in result.findings if f.flagged)  # once per response
        out.extend(Measurement(DETECTIONS, (*sm, self.detectors.bound(source, d)), 1.0) for d in fired)
        out.extend(
            Measurement(LEAK_TOKENS, (*sm, self.tokens.bound(source, leak_token_label(token))), float(count))
            for token, count in result.leaks.items()
            if count > 0
        )
        out.append(Measurement(RESPONSE_CHARS, sm, float(result.text_chars + result.reasoning_chars)))
        out.append(Measurement(REPETITION_RATIO, sm, min(max(result.repetition_score, 0.0), 1.0)))
        if result.output_tokens is not None:
            out.append(Measurement(RESPONSE_TOKENS, sm, float(result.output_tokens)))
            if result.max_tokens:
                out.append(Measurement(BUDGET_RATIO, sm, result.output_tokens / result.max_tokens))
        loop = result.loop
        if loop is not None:
            out.append(Measurement(ONSET_RATIO, sm, loop.onset_fraction))
            out.append(Measurement(LOOP_CHARS, sm, float(loop.chars_after_onset)))
            if loop.tokens_after_onset is not None:
                out.append(Measurement(LOOP_TOKENS, sm, float(loop.tokens_after_onset)))
        if result.step is not None:
            self._observe_step(source, result)
        return [m for m in out if 0.0 <= m.value < math.inf]  # NaN, negative, infinite: bad input, skipped

    def _observe_step(self, source: str, result: Classification) -> None:
        assert result.step is not None
        run = self.runs.bound(source, result.run if result.run is not None else DEFAULT_RUN)
        if run != self.runs.overflow_value:  # folded runs would mix unrelated steps: skip, counted
            self.steps.observe(source, run, result.step, result.flags)

    def expire_models(self) -> list[tuple[str, str]]:
        """Forget model names idle past the TTL; returns the `(source, model_name)` pairs dropped.

        Every response metric is labelled `(source, model_name, ...)`, so the sink removes the
        series that start with a returned pair. Cheap when nothing is due (one clock read).
        """
        dropped = self.model_names.expire()
        for pair in dropped:
            self._seen_pairs.discard(pair)  # a comeback gets its zero-valued series again
        return dropped

    def expire_runs(self) -> None:
        """Forget runs idle past the TTL, removing their rollout series."""
        for source, run in self.runs.expire():
            self.steps.forget(source, run)

    def rollout(self) -> list[Measurement]:
        """Gauges of the last completed step of every live run (expires idle runs, completes idle steps)."""
        self.expire_runs()
        self.steps.complete_idle()
        out: list[Measurement] = []
        for key, summary in self.steps.completed().items():
            out.append(Measurement(_ROLLOUT["rollout_repetition_frac"], key, summary.repetition_frac))
            out.append(Measurement(_ROLLOUT["rollout_truncated_frac"], key, summary.truncated_frac))
            out.append(Measurement(_ROLLOUT["rollout_template_leak_frac"], key, summary.template_leak_frac))
            out.append(Measurement(_ROLLOUT["rollout_responses"], key, float(summary.responses)))
            out.append(Measurement(_ROLLOUT["rollout_step"], key, float(summary.step)))
        return out

    def register_source_stats(self, name: str, stats: SourceStats) -> None:
        """Read `stats` as the self-metrics of source `name` at every `pull`."""
        self._sources[name] = stats

    def register_otlp_failures(self, read: Callable[[], int]) -> None:
        """Expose `read()` (the OTLP sink's failed exports) as `otlp_export_failures_total`."""
        self._otlp_failures = read

    def pull(self) -> list[Measurement]:
        """Everything read at scrape/export time (expires idle runs and completes idle steps first)."""
        out = self.rollout()
        for name, stats in list(self._sources.items()):
            out.extend(measure_source_stats(name, stats))
        out.extend(self.overflows())
        if self._otlp_failures is not None:
            out.append(Measurement(OTLP_FAILURES, (), float(self._otlp_failures())))
        out.append(BUILD_INFO)
        return out

    def overflows(self) -> list[Measurement]:
        """`label_overflow_total{source, label}` from every bounded label."""
        return [
            Measurement(LABEL_OVERFLOW, (source, bounded.name), float(count))
            for bounded in (self.model_names, self.runs, self.detectors, self.tokens)
            for source, count in bounded.overflow_counts().items()
        ]


def measure_source_stats(name: str, stats: SourceStats) -> list[Measurement]:
    """The self-metrics of one source, read under its lock (called at scrape/export time)."""
    with stats.lock:
        rejected = dict(stats.rejected)
        plain = {
            "lines_read_total": stats.lines_read,
            "bytes_read_total": stats.bytes_read,
            "files_watched": stats.files_watched,
            "files_open": stats.files_open,
            "files_open_budget": stats.files_open_budget,
            "file_opens_deferred_total": stats.files_deferred,
            "file_rotations_total": stats.rotations,
            "file_truncations_total": stats.truncations,
            "source_lag_bytes": stats.lag_bytes,
            "last_record_timestamp_seconds": stats.last_record_timestamp,
            "checkpoint_last_success_timestamp_seconds": stats.checkpoint_last_success_timestamp,
            "checkpoint_errors_total": stats.checkpoint_errors,
            "queue_depth": stats.queue_depth,
            "source_read_errors_total": stats.read_errors,
            "streams_evicted_total": stats.streams_evicted,
            "streams_expired_total": stats.streams_expired,
        }
    out = [Measurement(_spec(metric), (name,), float(value)) for metric, value in plain.items()]
    reasons = dict.fromkeys(_REJECT_REASONS, 0) | rejected
    out.extend(
        Measurement(LINES_REJECTED, (name, sanitize_label_value(reason)), float(count))
        for reason, count in reasons.items()
    )
    return out


BUILD_INFO = Measurement(_spec("build_info"), (__version__, platform.python_version()), 1.0)
"""`degeneration_build_info{version, python_version} 1`: fixed for the life of the process."""
