"""Board `exporter_health`: the daemon's own USE view per source (ecosystem.md §5.3 row 4, §7.5).

Why: before trusting a fraction on the overview, check the exporter reads everything (lines,
bytes, lag, queue), rejects little (by reason), follows rotations and truncations, saves its
positions, and does not fold label values into `__other__`.
"""

from __future__ import annotations

from grafana_foundation_sdk.builders.dashboard import Dashboard, Row

from ._panels import RATE, Scope, board, query, stat_panel, timeseries_panel

__all__ = ["UID", "build_exporter_health"]

UID = "degeneration-exporter-health"
SCOPE = Scope(("job", "instance", "source"), "degeneration_lines_read_total")
_LEGEND = "{{source}}"


def _rate_by_source(metric: str) -> str:
    return f"sum by (source) (rate({SCOPE.select(metric)}[{RATE}]))"


def _throughput_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Throughput"))
    rejected = SCOPE.select("degeneration_lines_rejected_total")
    dash = dash.with_panel(
        timeseries_panel(
            "Lines read",
            "Lines per second read by each source.",
            "short",
            [query(_rate_by_source("degeneration_lines_read_total"), _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Bytes read",
            "Bytes per second read by each source.",
            "Bps",
            [query(_rate_by_source("degeneration_bytes_read_total"), _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Rejected lines by reason",
            "Lines per second skipped as unusable, by reason (invalid_json, too_long, missing_field, ...).",
            "short",
            [query(f"sum by (source, reason) (rate({rejected}[{RATE}])) > 0", "{{reason}} ({{source}})")],
        )
    )
    return dash.with_panel(
        timeseries_panel(
            "Rejected fraction",
            "Rejected lines over lines read (DegenerationRejectedLines alerts on this).",
            "percentunit",
            [
                query(
                    f"{_rate_by_source('degeneration_lines_rejected_total')}\n/\n"
                    f"{_rate_by_source('degeneration_lines_read_total')}",
                    _LEGEND,
                )
            ],
            max_value=1,
        )
    )


def _tailing_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Tailing"))
    dash = dash.with_panel(
        timeseries_panel(
            "Lag",
            "Bytes written to each source's files but not yet read (DegenerationTailerLagging).",
            "bytes",
            [query(f"sum by (source) ({SCOPE.select('degeneration_source_lag_bytes')})", _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Queue depth",
            "Lines read and waiting to be classified (backpressure).",
            "short",
            [query(f"sum by (source) ({SCOPE.select('degeneration_queue_depth')})", _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Files watched",
            "Files each source currently tails.",
            "short",
            [query(f"sum by (source) ({SCOPE.select('degeneration_files_watched')})", _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Open files and descriptor budget",
            "Descriptors each file tail holds on its files, the process-wide budget (RLIMIT_NOFILE minus "
            "a reserve; beyond it files are read by opening and closing in turn), and opens put off per "
            "second.",
            "short",
            [
                query(f"sum by (source) ({SCOPE.select('degeneration_files_open')})", f"open {_LEGEND}"),
                query(f"max({SCOPE.select('degeneration_files_open_budget')})", "budget", 1),
                query(_rate_by_source("degeneration_file_opens_deferred_total"), f"deferred {_LEGEND}", 2),
            ],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Open streams closed as abort",
            "Per second: streamed responses evicted to stay under sources[].max_open_streams, and expired "
            "after sources[].stream_idle_timeout without a chunk.",
            "short",
            [
                query(_rate_by_source("degeneration_streams_evicted_total"), f"evicted {_LEGEND}"),
                query(_rate_by_source("degeneration_streams_expired_total"), f"expired {_LEGEND}", 1),
            ],
        )
    )
    return dash.with_panel(
        timeseries_panel(
            "Rotations, truncations and read errors",
            "Per second: rotations followed, truncations detected (read again from 0), failed reads.",
            "short",
            [
                query(_rate_by_source("degeneration_file_rotations_total"), f"rotations {_LEGEND}"),
                query(_rate_by_source("degeneration_file_truncations_total"), f"truncations {_LEGEND}", 1),
                query(_rate_by_source("degeneration_source_read_errors_total"), f"read errors {_LEGEND}", 2),
            ],
        )
    )


def _state_row(dash: Dashboard) -> Dashboard:
    dash = dash.with_row(Row("Positions, freshness and labels"))
    saved = SCOPE.select("degeneration_checkpoint_last_success_timestamp_seconds")
    last_record = SCOPE.select("degeneration_last_record_timestamp_seconds")
    dash = dash.with_panel(
        timeseries_panel(
            "Checkpoint age",
            "Seconds since each source last saved its read positions (sources that never save are left out; "
            "DegenerationCheckpointStale).",
            "s",
            [query(f"max by (source) (time() - ({saved} > 0))", _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Checkpoint errors",
            "Failed attempts per second to save read positions.",
            "short",
            [query(_rate_by_source("degeneration_checkpoint_errors_total"), _LEGEND)],
        )
    )
    dash = dash.with_panel(
        timeseries_panel(
            "Time since last record",
            "Seconds since each source produced a record.",
            "s",
            [query(f"max by (source) (time() - ({last_record} > 0))", _LEGEND)],
        )
    )
    overflow = SCOPE.select("degeneration_label_overflow_total")
    dash = dash.with_panel(
        timeseries_panel(
            "Label overflow",
            "Label values per second folded into __other__ because a cap was reached, by label (raise "
            "sinks.prometheus.limits if this is not zero).",
            "short",
            [query(f"sum by (source, label) (rate({overflow}[{RATE}]))", "{{label}} ({{source}})")],
        )
    )
    failures = SCOPE.select("degeneration_otlp_export_failures_total")
    dash = dash.with_panel(
        timeseries_panel(
            "OTLP export failures",
            "Failed OTLP metric exports per second (collector down, refused or timed out); no data when the "
            "OTLP sink is off.",
            "short",
            [query(f"sum by (instance) (rate({failures}[{RATE}]))", "{{instance}}")],
        )
    )
    build = SCOPE.select("degeneration_build_info")
    return dash.with_panel(
        stat_panel(
            "Exporter version",
            "Running versions (degeneration_build_info), by instance count.",
            "none",
            [query(f"count by (version) ({build})", "{{version}}")],
        )
    )


def build_exporter_health() -> Dashboard:
    """The exporter-health board builder (call `.build()` for the model)."""
    dash = board(
        UID,
        "Degeneration / Exporter health",
        "Lines and bytes read, rejected lines, lag, rotations, checkpoints and label overflow of "
        "degeneration-exporter, per source.",
        SCOPE,
    )
    for add_row in (_throughput_row, _tailing_row, _state_row):
        dash = add_row(dash)
    return dash
