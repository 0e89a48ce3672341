"""Group `degeneration.recording`: flagged fractions per (job, source, model_name, kind).

Why recorded: the spike alerts compare a 15m fraction with its 1-day baseline (ecosystem.md §2.8);
the 1d `increase` is costly, so it is evaluated once here. Numerator and denominator are summed
separately and then divided, never averaged (§2.7). `job` is kept so two deployments that reuse a
source name stay apart.
"""

from __future__ import annotations

from ..promql import series
from .alert import RuleGroup, recording_rule
from .thresholds import AlertThresholds

__all__ = [
    "FRACTION_1D",
    "FRACTION_15M",
    "GROUPING",
    "RESPONSES_RATE_15M",
    "build_recording_group",
]

GROUPING = ("job", "source", "model_name")
RESPONSES_RATE_15M = "job_model_source:degeneration_responses:rate15m"
FLAGGED_RATE_15M = "job_model_source_kind:degeneration_responses_flagged:rate15m"
FRACTION_15M = "job_model_source_kind:degeneration_flagged_per_responses:ratio_rate15m"
FRACTION_1D = "job_model_source_kind:degeneration_flagged_per_responses:ratio_rate1d"


def build_recording_group(thresholds: AlertThresholds) -> RuleGroup:
    """The recording rules every ratio alert reads; `thresholds` is unused (same signature as groups)."""
    by = ", ".join(GROUPING)
    responses = series("degeneration_responses_total")
    flagged = series("degeneration_responses_flagged_total")
    return {
        "name": "degeneration.recording",
        "rules": [
            recording_rule(RESPONSES_RATE_15M, f"sum by ({by}) (rate({responses}[15m]))"),
            recording_rule(FLAGGED_RATE_15M, f"sum by ({by}, kind) (rate({flagged}[15m]))"),
            recording_rule(
                FRACTION_15M,
                f"  {FLAGGED_RATE_15M}\n/ ignoring(kind) group_left\n  {RESPONSES_RATE_15M}",
            ),
            recording_rule(
                FRACTION_1D,
                f"  sum by ({by}, kind) (increase({flagged}[1d]))\n/ ignoring(kind) group_left\n"
                f"  sum by ({by}) (increase({responses}[1d]))",
            ),
        ],
    }
