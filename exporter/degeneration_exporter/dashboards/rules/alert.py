"""One alerting or recording rule as the dict Prometheus rule files hold (ecosystem.md §2.7).

Why one constructor: every alert gets a `severity`, a static `summary` sentence, a templated
`description` and a `runbook_url` anchored by its lower-cased name in docs/runbook.md, without
each group repeating the shape.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal

from .thresholds import prometheus_duration

__all__ = ["Rule", "RuleGroup", "Severity", "alert_rule", "recording_rule"]

Rule = dict[str, object]
RuleGroup = dict[str, object]
Severity = Literal["critical", "warning", "info"]


def alert_rule(
    name: str,
    expr: str,
    *,
    severity: Severity,
    summary: str,
    description: str,
    runbook_url: str,
    for_: timedelta = timedelta(0),
    keep_firing_for: timedelta = timedelta(0),
) -> Rule:
    """An alert; `for`/`keep_firing_for` are left out when zero (fire on the first evaluation)."""
    if not summary.endswith("."):
        raise ValueError(f"{name}: a summary is a sentence ending with a period")
    rule: Rule = {"alert": name, "expr": expr}
    if for_:
        rule["for"] = prometheus_duration(for_)
    if keep_firing_for:
        rule["keep_firing_for"] = prometheus_duration(keep_firing_for)
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {
        "summary": summary,
        "description": description,
        "runbook_url": f"{runbook_url}#{name.lower()}",
    }
    return rule


def recording_rule(record: str, expr: str) -> Rule:
    """A recording rule named `level:metric:operations` (ecosystem.md §2.7)."""
    if record.count(":") != 2:
        raise ValueError(f"{record!r} is not level:metric:operations")
    return {"record": record, "expr": expr}
