"""PrometheusSink: values read back from a fresh registry, and the live scrape passes promtool."""

from __future__ import annotations

import os
import shutil
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Iterator
from datetime import timedelta

import pytest
from degeneration_exporter.catalog import CATALOG
from degeneration_exporter.classification.labels import OVERFLOW_VALUE, LabelLimits
from degeneration_exporter.classification.result import FlagKind, LoopSpan
from degeneration_exporter.detectors.base import Finding
from degeneration_exporter.record import FinishReason
from degeneration_exporter.sinks.base import Sink
from degeneration_exporter.sinks.prometheus import DEFAULT_PORT, PrometheusSink, PrometheusSinkConfig
from degeneration_exporter.sources.base import SourceStats
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, start_http_server
from prometheus_client.parser import text_string_to_metric_families
from pydantic import ValidationError

from .builders import clean, looping


class FakeClock:
    """A settable monotonic clock (injected; no sleeping)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def _sink(registry: CollectorRegistry, **kwargs: object) -> PrometheusSink:
    return PrometheusSink(registry=registry, leak_tokens=["<|im_end|>", "<|eot_id|>"], **kwargs)  # type: ignore[arg-type]


def _value(registry: CollectorRegistry, name: str, **labels: str) -> float | None:
    return registry.get_sample_value(name, labels)


def test_is_a_sink_whose_registry_stays_readable_after_close(registry: CollectorRegistry) -> None:
    sink: Sink = _sink(registry)
    sink.emit("vllm", clean())
    sink.close()
    sink.close()  # idempotent
    labels = {"source": "vllm", "model_name": "qwen3-8b", "finish_reason": "stop"}
    assert _value(registry, "degeneration_responses_total", **labels) == 1


def test_counts_by_finish_reason_and_initialises_every_combination(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("vllm", clean())
    sink.emit("vllm", clean())
    sink.emit("vllm", looping())
    sm = {"source": "vllm", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_responses_total", **sm, finish_reason="stop") == 2
    assert _value(registry, "degeneration_responses_total", **sm, finish_reason="length") == 1
    for reason in FinishReason:
        assert _value(registry, "degeneration_responses_total", **sm, finish_reason=reason.value) is not None
    for kind in FlagKind:
        assert _value(registry, "degeneration_responses_flagged_total", **sm, kind=kind.value) is not None


def test_flagged_counts_each_kind_a_response_carries(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("rl", looping())
    sink.emit("rl", looping(flags=frozenset({FlagKind.CEILING})))
    sm = {"source": "rl", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_responses_flagged_total", **sm, kind="repetition") == 1
    assert _value(registry, "degeneration_responses_flagged_total", **sm, kind="ceiling") == 2
    assert _value(registry, "degeneration_responses_flagged_total", **sm, kind="ceiling_while_repeating") == 1
    assert _value(registry, "degeneration_responses_flagged_total", **sm, kind="template_leak") == 1


def test_detections_count_only_findings_that_fired(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("a", clean())  # relax_compression present but not flagged
    sink.emit("a", looping())
    sm = {"source": "a", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_detections_total", **sm, detector="relax_compression") == 1
    assert _value(registry, "degeneration_detections_total", **sm, detector="template_leak") == 1


def test_leaked_tokens_outside_the_configured_list_count_as_other(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("a", looping(leaks={"<|im_end|>": 3, "<|weird|>": 2, "<|also|>": 1}))
    sm = {"source": "a", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_template_leak_tokens_total", **sm, token="<|im_end|>") == 3
    assert _value(registry, "degeneration_template_leak_tokens_total", **sm, token="other") == 3
    assert _value(registry, "degeneration_template_leak_tokens_total", **sm, token="<|weird|>") is None
    assert _value(registry, "degeneration_label_overflow_total", source="a", label="token") == 2


def test_stripped_role_tokens_keep_a_readable_value_in_the_list_and_on_the_wire(
    registry: CollectorRegistry,
) -> None:
    """`\\nuser\\n` (backslash, n) on the scrape, not `user`, and a configured list naming the
    token keeps it instead of folding it into `other`."""
    sink = PrometheusSink(registry=registry, leak_tokens=["<|im_end|>", "\nuser\n", "\nassistant\n"])
    sink.emit("verl", looping(leaks={"\nuser\n": 2, "\nassistant\n": 1}))
    sm = {"source": "verl", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_template_leak_tokens_total", **sm, token="\\nuser\\n") == 2
    assert _value(registry, "degeneration_template_leak_tokens_total", **sm, token="\\nassistant\\n") == 1
    assert _value(registry, "degeneration_label_overflow_total", source="verl", label="token") is None
    exposition = generate_latest(registry).decode()
    assert 'token="\\\\nuser\\\\n"' in exposition  # the exposition escapes the backslash itself
    tokens = {
        s.labels["token"]
        for family in text_string_to_metric_families(exposition)
        for s in family.samples
        if s.name == "degeneration_template_leak_tokens_total"
    }
    assert tokens == {"\\nuser\\n", "\\nassistant\\n"}


def test_loop_cost_and_histograms_follow_the_response(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("a", looping())
    sink.emit("a", clean(output_tokens=None))
    sm = {"source": "a", "model_name": "qwen3-8b"}
    assert _value(registry, "degeneration_loop_chars_after_onset_total", **sm) == 3000
    assert _value(registry, "degeneration_loop_tokens_after_onset_total", **sm) == 750
    # Tokens and the budget ratio only where the record states them.
    assert _value(registry, "degeneration_response_tokens_count", **sm) == 1
    assert _value(registry, "degeneration_response_tokens_sum", **sm) == 1000
    assert _value(registry, "degeneration_response_token_budget_ratio_bucket", **sm, le="0.99") == 0
    assert _value(registry, "degeneration_response_token_budget_ratio_bucket", **sm, le="1.0") == 1
    assert _value(registry, "degeneration_response_chars_sum", **sm) == 4400
    assert _value(registry, "degeneration_response_repetition_ratio_bucket", **sm, le="0.7") == 1
    assert _value(registry, "degeneration_response_repetition_ratio_bucket", **sm, le="0.8") == 2
    assert _value(registry, "degeneration_loop_onset_ratio_bucket", **sm, le="0.2") == 0
    assert _value(registry, "degeneration_loop_onset_ratio_bucket", **sm, le="0.3") == 1


def test_missing_model_is_labelled_unknown(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("a", clean(model=None))
    assert (
        _value(
            registry, "degeneration_responses_total", source="a", model_name="unknown", finish_reason="stop"
        )
        == 1
    )


def test_model_names_past_the_cap_fold_into_other_and_are_counted(registry: CollectorRegistry) -> None:
    config = PrometheusSinkConfig(limits=LabelLimits(max_model_names=2))
    sink = _sink(registry, config=config)
    for model in ("m1", "m2", "m3", "m4", "m1"):
        sink.emit("a", clean(model=model))
    total = "degeneration_responses_total"
    assert _value(registry, total, source="a", model_name="m1", finish_reason="stop") == 2
    assert _value(registry, total, source="a", model_name=OVERFLOW_VALUE, finish_reason="stop") == 2
    assert _value(registry, total, source="a", model_name="m3", finish_reason="stop") is None
    assert _value(registry, "degeneration_label_overflow_total", source="a", label="model_name") == 2
    # Another source has its own budget.
    sink.emit("b", clean(model="m3"))
    assert _value(registry, total, source="b", model_name="m3", finish_reason="stop") == 1


def test_rollout_step_completes_when_a_higher_step_appears(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("rl", looping(run="grpo", step=3))
    for _ in range(3):
        sink.emit("rl", clean(run="grpo", step=3))
    labels = {"source": "rl", "run": "grpo"}
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) is None  # step 3 still open
    sink.emit("rl", clean(run="grpo", step=4))
    assert _value(registry, "degeneration_rollout_step", **labels) == 3
    assert _value(registry, "degeneration_rollout_responses", **labels) == 4
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 0.25
    assert _value(registry, "degeneration_rollout_truncated_frac", **labels) == 0.25
    assert _value(registry, "degeneration_rollout_template_leak_frac", **labels) == 0.25
    sink.emit("rl", looping(run="grpo", step=2))  # late record of an older step: ignored here
    assert _value(registry, "degeneration_rollout_step", **labels) == 3


def _idle_sink(registry: CollectorRegistry, clock: FakeClock, **config: object) -> PrometheusSink:
    fields: dict[str, object] = {"step_idle_timeout": timedelta(minutes=2), **config}
    return _sink(registry, config=PrometheusSinkConfig.model_validate(fields), clock=clock)


def test_a_quiet_runs_open_step_is_published_after_the_idle_timeout(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    sink = _idle_sink(registry, clock)
    sink.emit("rl", looping(run="last", step=41))
    sink.emit("rl", clean(run="last", step=41))
    clock.now += 60
    sink.emit("rl", clean(run="busy", step=9))
    clock.now += 59.5  # 119.5 s after run "last" went quiet: still open
    assert _value(registry, "degeneration_rollout_step", source="rl", run="last") is None
    clock.now += 0.5  # exactly the timeout: complete at this scrape, no emit needed
    last = {"source": "rl", "run": "last"}
    assert _value(registry, "degeneration_rollout_step", **last) == 41
    assert _value(registry, "degeneration_rollout_responses", **last) == 2
    assert _value(registry, "degeneration_rollout_repetition_frac", **last) == 0.5
    assert _value(registry, "degeneration_rollout_truncated_frac", **last) == 0.5
    assert _value(registry, "degeneration_rollout_template_leak_frac", **last) == 0.5
    assert _value(registry, "degeneration_rollout_step", source="rl", run="busy") is None  # 60 s quiet only
    clock.now += 60
    assert _value(registry, "degeneration_rollout_step", source="rl", run="busy") == 9


def test_a_late_record_reopens_the_idle_step_and_republishes_its_totals(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    sink = _idle_sink(registry, clock)
    labels = {"source": "rl", "run": "grpo"}
    for _ in range(3):
        sink.emit("rl", clean(run="grpo", step=5))
    sink.emit("rl", looping(run="grpo", step=5))
    clock.now += 121
    assert _value(registry, "degeneration_rollout_responses", **labels) == 4
    sink.emit("rl", looping(run="grpo", step=5))  # late: reopens step 5
    sink.emit("rl", looping(run="grpo", step=4))  # older than the latest step: ignored
    # Until step 5 completes again the gauges keep the totals published first.
    assert _value(registry, "degeneration_rollout_responses", **labels) == 4
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 0.25
    clock.now += 121
    assert _value(registry, "degeneration_rollout_step", **labels) == 5
    assert _value(registry, "degeneration_rollout_responses", **labels) == 5  # 4 + 1, not 4 + 5
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 0.4
    sink.emit("rl", clean(run="grpo", step=6))  # completing step 5 again by a higher step: same totals
    assert _value(registry, "degeneration_rollout_responses", **labels) == 5
    sink.flush()
    assert _value(registry, "degeneration_rollout_step", **labels) == 6
    sink.emit("rl", looping(run="grpo", step=6))  # after a flush too, the step reopens on its totals
    sink.flush()
    assert _value(registry, "degeneration_rollout_responses", **labels) == 2
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 0.5


def test_the_idle_timeout_is_also_checked_at_emit_time(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    sink = _idle_sink(registry, clock)
    sink.emit("rl", looping(run="grpo", step=1))
    clock.now += 120
    sink.emit("rl", clean(run="grpo", step=1))  # step 1 completed (1 response) before this one reopened it
    labels = {"source": "rl", "run": "grpo"}
    assert _value(registry, "degeneration_rollout_responses", **labels) == 1
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 1.0


def test_a_null_step_idle_timeout_waits_for_a_higher_step(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    sink = _idle_sink(registry, clock, step_idle_timeout=None)
    sink.emit("rl", clean(run="grpo", step=1))
    clock.now += 3000  # under run_ttl (1 h): the run is still alive
    assert _value(registry, "degeneration_rollout_step", source="rl", run="grpo") is None
    sink.emit("rl", clean(run="grpo", step=2))
    assert _value(registry, "degeneration_rollout_step", source="rl", run="grpo") == 1


def test_step_idle_timeout_must_be_positive_and_shorter_than_run_ttl(registry: CollectorRegistry) -> None:
    assert PrometheusSinkConfig().step_idle_timeout == timedelta(minutes=2)
    for bad in (timedelta(0), timedelta(seconds=-1), timedelta(hours=1)):
        with pytest.raises(ValidationError, match="step_idle_timeout"):
            PrometheusSinkConfig(step_idle_timeout=bad)
    # Only run_ttl set that short: the default is not rejected; it becomes half of run_ttl.
    clock = FakeClock()
    config = PrometheusSinkConfig(limits=LabelLimits(run_ttl=timedelta(minutes=2)))
    sink = _sink(registry, config=config, clock=clock)
    sink.emit("rl", clean(run="grpo", step=3))
    clock.now += 59
    assert _value(registry, "degeneration_rollout_step", source="rl", run="grpo") is None
    clock.now += 1
    assert _value(registry, "degeneration_rollout_step", source="rl", run="grpo") == 3


def test_flush_completes_the_open_step_and_runless_records_use_default(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("rl", looping(step=7))
    sink.emit("rl", clean(step=7))
    sink.flush()
    labels = {"source": "rl", "run": "default"}
    assert _value(registry, "degeneration_rollout_step", **labels) == 7
    assert _value(registry, "degeneration_rollout_repetition_frac", **labels) == 0.5


def test_idle_runs_expire_and_their_series_disappear(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    config = PrometheusSinkConfig(limits=LabelLimits(max_runs=1, run_ttl=timedelta(minutes=10)))
    sink = _sink(registry, config=config, clock=clock)
    sink.emit("rl", clean(run="old", step=1))
    sink.emit("rl", clean(run="old", step=2))
    assert _value(registry, "degeneration_rollout_step", source="rl", run="old") == 1
    sink.emit("rl", clean(run="new", step=1))  # over the cap of one run: not tracked, counted
    assert _value(registry, "degeneration_label_overflow_total", source="rl", label="run") == 1
    clock.now += 601
    assert _value(registry, "degeneration_rollout_step", source="rl", run="old") is None
    sink.emit("rl", clean(run="new", step=1))  # the slot is free again
    sink.emit("rl", clean(run="new", step=2))
    assert _value(registry, "degeneration_rollout_step", source="rl", run="new") == 1


def test_idle_model_names_expire_with_every_series_and_free_their_slot(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    limits = LabelLimits(max_model_names=1, model_name_ttl=timedelta(hours=1))
    sink = _sink(registry, config=PrometheusSinkConfig(limits=limits, process_metrics=False), clock=clock)
    total = "degeneration_responses_total"
    sink.emit("a", looping(model="ckpt-100"))
    sink.emit("b", clean(model="ckpt-100"))  # another source: its own slot and clock
    clock.now += 1800
    sink.emit("a", clean(model="ckpt-200"))  # over the cap of one: folded while ckpt-100 is live
    assert _value(registry, total, source="a", model_name=OVERFLOW_VALUE, finish_reason="stop") == 1
    sink.emit("b", clean(model="ckpt-100"))  # keeps source b's ckpt-100 alive
    clock.now += 1801  # source a's ckpt-100: idle for more than the TTL
    text = sink.exposition().decode()  # a scrape expires it too, not only an emit
    assert not [
        line for line in text.splitlines() if 'model_name="ckpt-100"' in line and 'source="a"' in line
    ]  # every family, histograms too
    assert _value(registry, total, source="b", model_name="ckpt-100", finish_reason="stop") == 2
    sink.emit("a", clean(model="ckpt-200"))  # the freed slot is taken, and zero series start again
    assert _value(registry, total, source="a", model_name="ckpt-200", finish_reason="stop") == 1
    assert _value(registry, total, source="a", model_name="ckpt-200", finish_reason="length") == 0
    assert _value(registry, "degeneration_label_overflow_total", source="a", label="model_name") == 1
    sink.emit("a", looping(model="ckpt-100"))  # back after expiry: folded now, ckpt-200 has the slot
    assert _value(registry, total, source="a", model_name="ckpt-100", finish_reason="length") is None


def test_model_names_never_expire_with_a_null_ttl(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    limits = LabelLimits(model_name_ttl=None)
    sink = _sink(registry, config=PrometheusSinkConfig(limits=limits, process_metrics=False), clock=clock)
    sink.emit("a", clean(model="m"))
    clock.now += 10 * 365 * 86400
    sink.exposition()
    total = "degeneration_responses_total"
    assert _value(registry, total, source="a", model_name="m", finish_reason="stop") == 1


def test_otlp_export_failures_are_read_at_scrape_time(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    assert _value(registry, "degeneration_otlp_export_failures_total") is None  # no OTLP sink: absent
    failures = [0]
    sink.register_otlp_failures(lambda: failures[0])
    assert _value(registry, "degeneration_otlp_export_failures_total") == 0
    failures[0] = 4
    assert _value(registry, "degeneration_otlp_export_failures_total") == 4


def test_source_stats_are_read_at_scrape_time(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    stats = SourceStats()
    sink.register_source_stats("tail", stats)
    assert _value(registry, "degeneration_lines_read_total", source="tail") == 0
    assert _value(registry, "degeneration_lines_rejected_total", source="tail", reason="too_long") == 0
    with stats.lock:
        stats.lines_read = 10
        stats.bytes_read = 2048
        stats.rejected["invalid_json"] += 3
        stats.files_watched = 4
        stats.rotations = 1
        stats.truncations = 2
        stats.lag_bytes = 99
        stats.last_record_timestamp = 1.7e9
        stats.checkpoint_last_success_timestamp = 1.6e9
        stats.checkpoint_errors = 5
        stats.queue_depth = 7
        stats.read_errors = 6
    expected = {
        "degeneration_lines_read_total": 10,
        "degeneration_bytes_read_total": 2048,
        "degeneration_files_watched": 4,
        "degeneration_file_rotations_total": 1,
        "degeneration_file_truncations_total": 2,
        "degeneration_source_lag_bytes": 99,
        "degeneration_last_record_timestamp_seconds": 1.7e9,
        "degeneration_checkpoint_last_success_timestamp_seconds": 1.6e9,
        "degeneration_checkpoint_errors_total": 5,
        "degeneration_queue_depth": 7,
        "degeneration_source_read_errors_total": 6,
    }
    for name, value in expected.items():
        assert _value(registry, name, source="tail") == value, name
    assert _value(registry, "degeneration_lines_rejected_total", source="tail", reason="invalid_json") == 3


def test_exposes_no_created_series_and_never_touches_the_global_registry(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    sink.emit("a", looping())
    text = sink.exposition().decode()
    assert "_created" not in text
    assert "degeneration_build_info{" in text
    assert not any(m.name.startswith("degeneration_") for m in REGISTRY.collect())


def _all_metrics_sink(registry: CollectorRegistry) -> PrometheusSink:
    sink = _sink(registry)
    sink.register_source_stats("tail", SourceStats())
    sink.register_otlp_failures(lambda: 3)
    sink.emit("tail", looping(run="grpo", step=1, model='x\n"y\\z'))
    sink.emit("tail", clean(run="grpo", step=2, leaks={"<|never-listed|>": 1}))
    sink.flush()
    return sink


def test_every_catalog_metric_is_exposed_and_nothing_else(registry: CollectorRegistry) -> None:
    sink = _all_metrics_sink(registry)
    exposed = {
        family.name
        for family in text_string_to_metric_families(sink.exposition().decode())
        if family.name.startswith("degeneration_")
    }
    # The parser strips `_total` from counters and `_info` from nothing (build_info is a gauge).
    catalog = {spec.name.removesuffix("_total") if spec.type == "counter" else spec.name for spec in CATALOG}
    assert exposed == catalog


@pytest.fixture
def promtool() -> str:
    path = shutil.which("promtool")
    if path is None:
        if os.environ.get("CI") == "true":
            pytest.fail("promtool is missing (scripts/test.sh installs Debian's prometheus package)")
        pytest.skip("promtool not installed")
    return path


@pytest.fixture
def served(registry: CollectorRegistry) -> Iterator[tuple[PrometheusSink, str]]:
    sink = _all_metrics_sink(registry)
    server, thread = start_http_server(0, addr="127.0.0.1", registry=sink.registry)
    try:
        yield sink, f"http://127.0.0.1:{server.server_address[1]}/metrics"
    finally:
        server.shutdown()
        thread.join(timeout=5)


def test_live_scrape_passes_promtool_check_metrics(promtool: str, served: tuple[PrometheusSink, str]) -> None:
    _, url = served
    with urllib.request.urlopen(url, timeout=10) as response:
        body = response.read()
    assert b"degeneration_responses_total" in body
    result = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, timeout=60)
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")


def test_promtool_would_catch_a_bad_exposition(promtool: str) -> None:
    """Guards the test above: promtool really lints what we pipe in."""
    bad = b"# TYPE degeneration_bad counter\ndegeneration_bad 1\n"
    result = subprocess.run([promtool, "check", "metrics"], input=bad, capture_output=True, timeout=60)
    assert result.returncode != 0


def test_config_defaults_and_listen_validation() -> None:
    config = PrometheusSinkConfig()
    assert (config.enabled, config.host, config.port) == (True, "0.0.0.0", DEFAULT_PORT)
    assert PrometheusSinkConfig(listen="[::1]:9999").host == "::1"
    for bad in ("nohost", "h:0", "h:70000", "h:abc"):
        with pytest.raises(ValidationError):
            PrometheusSinkConfig(listen=bad)
    with pytest.raises(ValidationError):
        PrometheusSinkConfig(listn="x")  # type: ignore[call-arg]


def test_a_detector_firing_on_both_channels_counts_once(registry: CollectorRegistry) -> None:
    sink = _sink(registry)
    both = (
        Finding("tail_period", "repetition", True),
        Finding("tail_period", "repetition", True, channel="reasoning"),
    )
    sink.emit("a", looping(findings=both))
    assert (
        _value(
            registry,
            "degeneration_detections_total",
            source="a",
            model_name="qwen3-8b",
            detector="tail_period",
        )
        == 1
    )


_weird_text = st.text(alphabet=st.characters(codec="utf-8"), max_size=40)
_numbers = st.floats(allow_nan=True, allow_infinity=True) | st.integers(-(10**6), 10**12).map(float)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    model=st.none() | _weird_text,
    run=st.none() | _weird_text,
    step=st.none() | st.integers(-5, 5),
    score=_numbers,
    onset_fraction=_numbers,
    chars_after=st.integers(-10, 10**9),
    tokens_after=st.none() | st.integers(-10, 10**9),
    output_tokens=st.none() | st.integers(-10, 10**7),
    max_tokens=st.none() | st.integers(-10, 10**7),
    leaks=st.dictionaries(_weird_text, st.integers(-3, 50), max_size=4),
    detector=_weird_text,
)
def test_odd_classifications_never_break_the_sink_or_the_exposition(
    model: str | None,
    run: str | None,
    step: int | None,
    score: float,
    onset_fraction: float,
    chars_after: int,
    tokens_after: int | None,
    output_tokens: int | None,
    max_tokens: int | None,
    leaks: dict[str, int],
    detector: str,
) -> None:
    registry = CollectorRegistry()
    sink = _sink(registry)
    loop = LoopSpan("content", 0, None, None, None, chars_after, onset_fraction, tokens_after)
    sink.emit(
        "src",
        looping(
            model=model,
            run=run,
            step=step,
            repetition_score=score,
            loop=loop,
            output_tokens=output_tokens,
            max_tokens=max_tokens,
            leaks=leaks,
            findings=(Finding(detector, "repetition", True),),
        ),
    )
    sink.emit("src", clean(model=model, run=run, step=None if step is None else step + 1))
    sink.flush()
    families = list(text_string_to_metric_families(sink.exposition().decode()))
    totals = [f for f in families if f.name == "degeneration_responses"]
    assert sum(s.value for s in totals[0].samples if s.name.endswith("_total")) == 2


def test_concurrent_sources_and_scrapes_lose_nothing(registry: CollectorRegistry) -> None:
    """Each source runs in its own thread (pipeline.py) while the HTTP thread scrapes."""
    clock = FakeClock()
    sink = _sink(registry, config=PrometheusSinkConfig(limits=LabelLimits(max_runs=5)), clock=clock)
    stats = {name: SourceStats() for name in ("s1", "s2")}
    for name, source_stats in stats.items():
        sink.register_source_stats(name, source_stats)
    errors: list[BaseException] = []
    stop = threading.Event()

    def guarded(work: Callable[[], None]) -> Callable[[], None]:
        def run() -> None:
            try:
                work()
            except BaseException as exc:  # surfaced by the assert below
                errors.append(exc)

        return run

    def scrape() -> None:
        while not stop.is_set():
            sink.exposition()
            clock.now += 1

    def feed(source: str) -> Callable[[], None]:
        def work() -> None:
            for i in range(2000):
                sink.emit(source, looping(model=f"m{i % 7}", run=f"r{i % 9}", step=i // 50))
                with stats[source].lock:
                    stats[source].lines_read += 1

        return work

    scraper = threading.Thread(target=guarded(scrape))
    feeders = [threading.Thread(target=guarded(feed(name))) for name in stats]
    scraper.start()
    for feeder in feeders:
        feeder.start()
    for feeder in feeders:
        feeder.join(timeout=60)
    stop.set()
    scraper.join(timeout=30)
    assert errors == []
    name = "degeneration_responses_total"
    for source in stats:
        labels = {"source": source, "finish_reason": "length"}
        assert sum(_value(registry, name, model_name=f"m{k}", **labels) or 0 for k in range(7)) == 2000
        assert _value(registry, "degeneration_lines_read_total", source=source) == 2000
