"""Alert thresholds: every number in the shipped rules, as parameters of the rule builders.

Why a model: the defaults are ecosystem.md §7.2, but traffic differs per deployment, so
`render rules --thresholds FILE` reads a YAML of overrides (validated, `extra="forbid"` names a typo)
and Helm can pass its values through the same keys.
"""

from __future__ import annotations

from datetime import timedelta

from pydantic import BaseModel, Field

__all__ = [
    "DEFAULT_RUNBOOK_URL",
    "AlertThresholds",
    "CeilingSpikeThresholds",
    "CheckpointThresholds",
    "FractionThresholds",
    "LagThresholds",
    "NoRecordsThresholds",
    "RejectedLinesThresholds",
    "RolloutThresholds",
    "SpikeThresholds",
    "TemplateLeakThresholds",
    "prometheus_duration",
]

DEFAULT_RUNBOOK_URL = (
    "https://github.com/degeneration-exporter/degeneration-exporter/blob/main/docs/runbook.md"
)


class _Thresholds(BaseModel, frozen=True, extra="forbid", populate_by_name=True):
    """Immutable, typo-proof; `for` in YAML is `for_` in Python (a keyword)."""


class SpikeThresholds(_Thresholds):
    """A 15m flagged fraction far above its 1-day baseline, with floor and volume guard (§2.8)."""

    factor: float = Field(3.0, gt=1, description="Current fraction must exceed factor x the 1-day baseline.")
    baseline_min: float = Field(
        0.005, ge=0, le=1, description="The baseline is clamped up to this, so 3 x 0 is not 0 (fraction)."
    )
    floor: float = Field(0.02, ge=0, le=1, description="The current fraction must also exceed this.")
    min_responses: int = Field(200, ge=1, description="Responses needed in the 15m window (volume guard).")
    for_: timedelta = Field(timedelta(minutes=15), alias="for", description="How long it must hold.")
    keep_firing_for: timedelta = Field(timedelta(minutes=10), description="Hold after it clears (anti-flap).")


class FractionThresholds(_Thresholds):
    """A 15m flagged fraction above a fixed ceiling, with a volume guard (no baseline)."""

    max_fraction: float = Field(0.02, ge=0, le=1, description="Alert above this fraction of responses.")
    min_responses: int = Field(200, ge=1, description="Responses needed in the 15m window (volume guard).")
    for_: timedelta = Field(timedelta(minutes=30), alias="for", description="How long it must hold.")


class CeilingSpikeThresholds(SpikeThresholds):
    """`SpikeThresholds` with a higher floor: hitting max_tokens is common (RL, long answers)."""

    floor: float = Field(0.05, ge=0, le=1, description="The current fraction must also exceed this.")


class TemplateLeakThresholds(FractionThresholds):
    """`FractionThresholds` with a low ceiling: leaks are bugs, so a small fraction is enough."""

    max_fraction: float = Field(0.001, ge=0, le=1, description="Alert above this fraction of responses.")
    for_: timedelta = Field(timedelta(minutes=10), alias="for", description="How long it must hold.")


class RolloutThresholds(_Thresholds):
    """The last completed RL step's repetition fraction, guarded by the step's response count."""

    max_fraction: float = Field(0.05, ge=0, le=1, description="Alert above this repetition fraction.")
    min_responses: int = Field(64, ge=1, description="Responses the step needs (volume guard).")


class LagThresholds(_Thresholds):
    """Bytes written to a source's files and not yet read."""

    max_bytes: int = Field(50_000_000, ge=0, description="Alert above this lag, in bytes.")
    for_: timedelta = Field(timedelta(minutes=15), alias="for", description="How long it must hold.")


class RejectedLinesThresholds(_Thresholds):
    """Rejected lines (parse errors, too long, ...) over lines read, in a 15m window."""

    max_fraction: float = Field(0.01, ge=0, le=1, description="Alert above this fraction of lines read.")
    min_lines: int = Field(100, ge=1, description="Lines needed in the 15m window (volume guard).")
    for_: timedelta = Field(timedelta(minutes=15), alias="for", description="How long it must hold.")


class NoRecordsThresholds(_Thresholds):
    """Files are watched but nothing is read."""

    window: timedelta = Field(timedelta(minutes=30), description="No line read in this window.")
    for_: timedelta = Field(timedelta(minutes=30), alias="for", description="How long it must hold.")


class CheckpointThresholds(_Thresholds):
    """Read positions not saved recently (a restart would re-read, double-counting)."""

    max_age: timedelta = Field(timedelta(minutes=5), description="Alert when the last save is older.")
    for_: timedelta = Field(timedelta(minutes=10), alias="for", description="How long it must hold.")


class AlertThresholds(_Thresholds):
    """Every alert's parameters; the defaults are what `dashboards/generated/` ships.

    Each section has its own defaults in its class, so a partial override (`ceiling_spike:
    {min_responses: 50}`) keeps the section's other values.
    """

    runbook_url: str = Field(DEFAULT_RUNBOOK_URL, description="URL of docs/runbook.md; #<alert> is added.")
    repetition_spike: SpikeThresholds = SpikeThresholds()
    ceiling_spike: CeilingSpikeThresholds = CeilingSpikeThresholds()
    ceiling_while_repeating: FractionThresholds = FractionThresholds()
    template_leak: TemplateLeakThresholds = TemplateLeakThresholds()
    rollout_repetition: RolloutThresholds = RolloutThresholds()
    tailer_lag: LagThresholds = LagThresholds()
    rejected_lines: RejectedLinesThresholds = RejectedLinesThresholds()
    no_records: NoRecordsThresholds = NoRecordsThresholds()
    checkpoint: CheckpointThresholds = CheckpointThresholds()


def prometheus_duration(value: timedelta) -> str:
    """`timedelta(minutes=90)` -> `1h30m`: the largest units, as Prometheus durations are written."""
    seconds = int(value.total_seconds())
    if seconds <= 0:
        return "0s"
    parts = []
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60), ("s", 1)):
        count, seconds = divmod(seconds, size)
        if count:
            parts.append(f"{count}{unit}")
    return "".join(parts)
