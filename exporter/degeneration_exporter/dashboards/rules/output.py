"""Rule groups as files: a plain Prometheus rules file or a prometheus-operator PrometheusRule.

Why both: plain Prometheus loads `rule_files:`; kube-prometheus stacks pick rules up as a
PrometheusRule whose `spec.groups` is the same list (ecosystem.md §4). Multi-line expressions are
written as YAML block scalars so the generated files read like hand-written ones.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import yaml

from .alert import RuleGroup

__all__ = ["PROMETHEUS_RULE_LABELS", "to_prometheus_rule", "to_rules_file"]

# The label kube-prometheus-stack's default ruleSelector matches on is the Helm release name;
# users override labels with `--label`. `app.kubernetes.io/*` follow the chart's own labels.
PROMETHEUS_RULE_LABELS: dict[str, str] = {
    "app.kubernetes.io/name": "degeneration-exporter",
    "app.kubernetes.io/component": "alerting-rules",
}


class _BlockDumper(yaml.SafeDumper):
    """SafeDumper that writes multi-line strings as `|` blocks."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def _dump(document: object) -> str:
    return yaml.dump(document, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=120)


def to_rules_file(groups: Sequence[RuleGroup]) -> str:
    """`groups: [...]` as Prometheus `rule_files:` and `promtool check rules` read it."""
    return _dump({"groups": list(groups)})


def to_prometheus_rule(
    groups: Sequence[RuleGroup],
    name: str = "degeneration-exporter",
    labels: Mapping[str, str] | None = None,
) -> str:
    """A `monitoring.coreos.com/v1` PrometheusRule manifest holding the same groups."""
    manifest = {
        "apiVersion": "monitoring.coreos.com/v1",
        "kind": "PrometheusRule",
        "metadata": {"name": name, "labels": {**PROMETHEUS_RULE_LABELS, **(labels or {})}},
        "spec": {"groups": list(groups)},
    }
    return _dump(manifest)
