"""`render`: write the prebuilt Grafana boards and Prometheus rules (style.md §12, ecosystem.md §5, §7.2).

Why a verb: the builders live in the installed package, so users render boards and rules, with
their own thresholds, from a wheel without a checkout. `render all --out dashboards/generated`
rewrites the committed output (tests/test_dashboards.py checks it is in sync).

  degeneration-exporter render dashboards --out DIR
  degeneration-exporter render rules --format prometheus|prometheusrule [--thresholds FILE] [--out FILE]
  degeneration-exporter render all --out DIR
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import yaml
from pydantic import ValidationError

from ..dashboards.boards import BOARDS, render_board
from ..dashboards.rules import build_rule_groups
from ..dashboards.rules.output import to_prometheus_rule, to_rules_file
from ..dashboards.rules.thresholds import AlertThresholds

__all__ = ["HELP", "RULE_FILES", "add_arguments", "main", "render_rules"]

HELP = "Write the Grafana dashboards (JSON) or the alert rules (rules file or PrometheusRule)."

# --format -> file name under `render all --out DIR`
RULE_FILES: dict[str, str] = {"prometheus": "rules.yml", "prometheusrule": "prometheusrule.yaml"}


def render_rules(rule_format: str, thresholds: AlertThresholds | None = None) -> str:
    """The rules as a plain Prometheus rules file or a PrometheusRule manifest."""
    groups = build_rule_groups(thresholds)
    return to_rules_file(groups) if rule_format == "prometheus" else to_prometheus_rule(groups)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "what",
        choices=["dashboards", "rules", "all"],
        help="dashboards (one JSON per board), rules (one file) or all (both, into a folder)",
    )
    parser.add_argument(
        "--out", metavar="PATH", help="folder for dashboards/all (required); file for rules (default: stdout)"
    )
    parser.add_argument(
        "--format",
        choices=sorted(RULE_FILES),
        default="prometheus",
        help="rules only: a plain rules file (prometheus) or a PrometheusRule manifest",
    )
    parser.add_argument(
        "--thresholds",
        type=Path,
        metavar="FILE",
        help="YAML overriding alert thresholds (keys: docs/runbook.md, Thresholds)",
    )
    parser.add_argument(
        "--board",
        choices=sorted(BOARDS),
        action="append",
        help="dashboards only: render just this board (repeatable)",
    )


def _load_thresholds(path: Path | None) -> AlertThresholds:
    if path is None:
        return AlertThresholds()
    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    return AlertThresholds.model_validate(data)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def _render_dashboards(out: Path, boards: list[str]) -> None:
    for name in boards:
        _write(out / f"{name}.json", render_board(name))


def main(args: argparse.Namespace) -> int:
    prog = "degeneration-exporter render"
    if args.what != "rules" and not args.out:
        print(f"{prog}: error: {args.what} needs --out DIR", file=sys.stderr)
        return 2
    try:
        thresholds = _load_thresholds(args.thresholds)
        if args.what == "rules":
            text = render_rules(args.format, thresholds)
            if args.out:
                _write(Path(args.out), text)
            else:
                sys.stdout.write(text)
            return 0
        out = Path(args.out)
        _render_dashboards(out, args.board or list(BOARDS))
        if args.what == "all":
            for rule_format, file_name in RULE_FILES.items():
                _write(out / file_name, render_rules(rule_format, thresholds))
    except (ValidationError, yaml.YAMLError, OSError, ImportError) as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return 2
    return 0
