"""The shipped Prometheus rules: one module per group, assembled here (ecosystem.md §7.2).

`build_rule_groups(thresholds)` returns the groups in file order; `output.py` writes them as a plain
rules file or a PrometheusRule manifest. Every threshold is a field of `AlertThresholds`.
"""

from __future__ import annotations

from collections.abc import Callable

from .alert import RuleGroup
from .exporter_health import build_exporter_health_group
from .quality import build_quality_group
from .recording import build_recording_group
from .thresholds import AlertThresholds

__all__ = ["GROUPS", "AlertThresholds", "build_rule_groups"]

GROUPS: dict[str, Callable[[AlertThresholds], RuleGroup]] = {
    "recording": build_recording_group,
    "quality": build_quality_group,
    "exporter_health": build_exporter_health_group,
}


def build_rule_groups(thresholds: AlertThresholds | None = None) -> list[RuleGroup]:
    """Every group, recording rules first, built with `thresholds` (defaults when None)."""
    chosen = thresholds if thresholds is not None else AlertThresholds()
    return [build(chosen) for build in GROUPS.values()]
