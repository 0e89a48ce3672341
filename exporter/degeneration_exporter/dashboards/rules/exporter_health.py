"""Group `degeneration.exporter`: alerts on the daemon itself (ecosystem.md §7.2, tailing §7.5).

Why these four: lag means the numbers describe the past; rejected lines mean the numbers miss
records; a watched file with no reads is a silent pipeline; a stale checkpoint means a restart
re-reads and counts twice. The checkpoint alert ignores sources that never save positions (the
timestamp stays 0), unless their saves are failing.
"""

from __future__ import annotations

from ...catalog import format_number
from ..promql import selector
from .alert import Rule, RuleGroup, alert_rule
from .thresholds import AlertThresholds, prometheus_duration

__all__ = ["build_exporter_health_group"]

_WINDOW = "15m"
_WINDOW_SECONDS = 900


def _tailer_lagging(t: AlertThresholds) -> Rule:
    expr = f"{selector('degeneration_source_lag_bytes')} > {t.tailer_lag.max_bytes}"
    return alert_rule(
        "DegenerationTailerLagging",
        expr,
        severity="warning",
        summary="The exporter is falling behind the files it tails.",
        description="{{ $labels.source }}: {{ $value | humanize1024 }}B written but not yet read.",
        runbook_url=t.runbook_url,
        for_=t.tailer_lag.for_,
    )


def _rejected_lines(t: AlertThresholds) -> Rule:
    rejected = selector("degeneration_lines_rejected_total")
    read = f"rate({selector('degeneration_lines_read_total')}[{_WINDOW}])"
    expr = (
        f"  sum without (reason) (rate({rejected}[{_WINDOW}]))\n/\n  {read}\n"
        f"> {format_number(t.rejected_lines.max_fraction)}\n"
        f"and {read} * {_WINDOW_SECONDS} >= {t.rejected_lines.min_lines}"
    )
    return alert_rule(
        "DegenerationRejectedLines",
        expr,
        severity="warning",
        summary="The exporter rejects many of the lines it reads.",
        description="{{ $labels.source }}: {{ $value | humanizePercentage }} of lines read in the last 15m "
        "were rejected (see degeneration_lines_rejected_total by reason).",
        runbook_url=t.runbook_url,
        for_=t.rejected_lines.for_,
    )


def _no_records(t: AlertThresholds) -> Rule:
    window = prometheus_duration(t.no_records.window)
    expr = (
        f"{selector('degeneration_files_watched')} > 0\n"
        f"and rate({selector('degeneration_lines_read_total')}[{window}]) == 0"
    )
    return alert_rule(
        "DegenerationNoRecords",
        expr,
        severity="info",
        summary="A source watches files but reads no lines.",
        description=f"{{{{ $labels.source }}}}: {{{{ $value }}}} file(s) watched, no line read in {window}.",
        runbook_url=t.runbook_url,
        for_=t.no_records.for_,
    )


def _checkpoint_stale(t: AlertThresholds) -> Rule:
    saved = selector("degeneration_checkpoint_last_success_timestamp_seconds")
    errors = selector("degeneration_checkpoint_errors_total")
    max_age = int(t.checkpoint.max_age.total_seconds())
    expr = (
        f"time() - {saved} > {max_age}\n"
        f"and ({saved} > 0 or rate({errors}[{prometheus_duration(t.checkpoint.max_age)}]) > 0)"
    )
    return alert_rule(
        "DegenerationCheckpointStale",
        expr,
        severity="warning",
        summary="The exporter has not saved its read positions recently.",
        description="{{ $labels.source }}: read positions last saved {{ $value | humanizeDuration }} ago "
        "(an age of decades means never); a restart would read those lines again.",
        runbook_url=t.runbook_url,
        for_=t.checkpoint.for_,
    )


def build_exporter_health_group(thresholds: AlertThresholds) -> RuleGroup:
    """Lag, rejected lines, silence and stale checkpoints of each source."""
    return {
        "name": "degeneration.exporter",
        "rules": [
            _tailer_lagging(thresholds),
            _rejected_lines(thresholds),
            _no_records(thresholds),
            _checkpoint_stale(thresholds),
        ],
    }
