"""Offline checks of ServiceMonitor, PodMonitor and PrometheusRule objects against prometheus-operator.

Why two checks: the ajv validators of npm @kubernetes-models/prometheus-operator (run through node)
check types and patterns (durations, enums) of the fields they know, but let unknown fields through,
so a misspelt key (`scrapeTimout`) would pass; the declared field names of each API type are read
from the package's TypeScript declarations and compared key by key.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

from tests.e2e.helm_cli import TOOLS, require_tool

NODE_PREFIX = TOOLS / "node"
_PACKAGE = NODE_PREFIX / "node_modules" / "@kubernetes-models" / "prometheus-operator"
_TYPES = _PACKAGE / "monitoring.coreos.com" / "v1"
_VALIDATOR = Path(__file__).with_name("operator_models.mjs")
_FIELD = re.compile(r'^    "([A-Za-z_]+)"\??:', re.MULTILINE)


def validate_with_models(objects: list[dict[str, Any]]) -> list[str | None]:
    """Per object: None when the operator schema accepts it, else the first error message."""
    require_tool(_TYPES)
    node = shutil.which("node")
    assert node is not None, "node not on PATH (scripts/install-helm.sh installs nodejs)"
    result = subprocess.run(
        [node, str(_VALIDATOR), str(NODE_PREFIX)],
        input=json.dumps(objects),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    messages: list[str | None] = json.loads(result.stdout)
    return messages


@cache
def declared_fields(type_name: str) -> frozenset[str]:
    """Field names of a v1 API type (e.g. `Endpoint`), own and inherited, from its .d.ts file."""
    path = require_tool(_TYPES / f"{type_name}.d.ts")
    fields = frozenset(_FIELD.findall(path.read_text(encoding="utf-8")))
    assert fields, f"no fields parsed from {path}"
    return fields


# kind -> (spec type, list field in spec, its item type)
_SHAPES = {
    "ServiceMonitor": ("ServiceMonitorSpec", "endpoints", "Endpoint"),
    "PodMonitor": ("PodMonitorSpec", "podMetricsEndpoints", "PodMetricsEndpoint"),
    "PrometheusRule": ("PrometheusRuleSpec", "groups", "RuleGroup"),
}


def unknown_fields(obj: dict[str, Any]) -> list[str]:
    """Dotted paths of keys the operator's API types do not declare (spec, its list items, rules)."""
    spec_type, list_field, item_type = _SHAPES[obj["kind"]]
    spec = obj["spec"]
    unknown = [f"spec.{key}" for key in spec if key not in declared_fields(spec_type)]
    for index, item in enumerate(spec.get(list_field, [])):
        where = f"spec.{list_field}[{index}]"
        unknown += [f"{where}.{key}" for key in item if key not in declared_fields(item_type)]
        rules = item.get("rules", []) if item_type == "RuleGroup" else []
        for rule_index, rule in enumerate(rules):
            known = declared_fields("Rule")
            unknown += [f"{where}.rules[{rule_index}].{key}" for key in rule if key not in known]
    return unknown
