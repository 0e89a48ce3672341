"""`metrics list`: print the metric catalogue as a table, Markdown (docs/metrics.md) or JSON.

Why generated: docs/metrics.md is this command's Markdown output, so the reference cannot drift
from `catalog.py` (tests/test_catalog_docs.py regenerates and compares it; ecosystem.md §7.4).
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from typing import get_args

from ..catalog import CATALOG, LABEL_ATTRIBUTES, MetricSpec, Origin, format_number
from ..classification.labels import OVERFLOW_VALUE, LabelLimits
from ..classification.result import FlagKind
from ..errors import RejectReason
from ..record import FinishReason
from ..sinks.measurements import LEAK_TOKEN_OTHER
from ..sinks.prometheus import DEFAULT_PORT

__all__ = ["HELP", "add_arguments", "main", "render_json", "render_markdown", "render_table"]

HELP = "List every exported metric (name, type, labels, help); `--format markdown` is docs/metrics.md."

_SECTIONS: dict[Origin, tuple[str, str]] = {
    "response": (
        "Per classified response",
        "Updated as each response is classified. `model_name` comes from the record (capped, see above).",
    ),
    "rollout": (
        "Per rollout step",
        "The per-step view RL trainers plot (slime `rollout/repetition_frac`, `rollout/truncated_ratio`). "
        "A step of a run is complete when a record with a higher step appears for that `(source, run)`, "
        "when no record of that run has arrived for `step_idle_timeout` (default 2 min, so the last "
        "step of a run shows too), or when the input ends (flush); the gauges show the last completed "
        "step. A later record of that same step reopens it and the step is published again with the "
        'updated totals (never counted twice). Records without a `run` use `run="default"`; late '
        "records of an older step are not added to it.",
    ),
    "self": (
        "Exporter health",
        "Read from each source's counters at scrape time; plus the standard `process_*` and `python_*` "
        "metrics of the daemon.",
    ),
}


def render_table(catalog: Sequence[MetricSpec] = CATALOG) -> str:
    """Aligned plain-text columns: name, type, labels, help."""
    rows = [("NAME", "TYPE", "LABELS", "HELP")]
    rows += [(s.name, s.type, ",".join(s.labels), s.help) for s in catalog]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "".join(
        f"{row[0].ljust(widths[0])}  {row[1].ljust(widths[1])}  {row[2].ljust(widths[2])}  {row[3]}\n"
        for row in rows
    )


def render_json(catalog: Sequence[MetricSpec] = CATALOG) -> str:
    """One object per metric, every catalog field plus the sample exposition line."""
    entries = [
        {
            "name": s.name,
            "type": s.type,
            "help": s.help,
            "unit": s.unit,
            "labels": list(s.labels),
            "origin": s.origin,
            "otel_name": s.otel_name,
            "buckets": list(s.buckets),
            "sample": s.sample_line,
        }
        for s in catalog
    ]
    return json.dumps(entries, indent=2) + "\n"


def _buckets(spec: MetricSpec) -> str:
    return ", ".join(format_number(b) for b in spec.buckets)


def render_markdown(catalog: Sequence[MetricSpec] = CATALOG) -> str:
    """The docs/metrics.md page."""
    limits = LabelLimits()
    out = [
        "# Metrics reference",
        "",
        "<!-- Generated from exporter/degeneration_exporter/catalog.py by "
        "`degeneration-exporter metrics list --format markdown > docs/metrics.md`; do not edit by hand "
        "(tests/test_catalog_docs.py checks it is in sync). -->",
        "",
        f"Prometheus scrapes `/metrics` on port {DEFAULT_PORT} by default (`sinks.prometheus.listen`); the "
        "same instruments are pushed over OTLP/HTTP when `sinks.otlp.enabled` is true. Counters and "
        "histograms expose no `_created` series. Histograms are classic (explicit buckets) on the "
        "Prometheus path and base-2 exponential on the OTLP path unless `sinks.otlp.histogram_aggregation` "
        "is `explicit`.",
        "",
        "## Labels and their bounds",
        "",
        "| Label | Values | OTLP attribute |",
        "|---|---|---|",
        *(f"| `{label}` | {values} | {_attrs(label)} |" for label, values in _label_values(limits)),
        "",
        "Values are sanitised (control characters dropped, whitespace collapsed, cut to "
        f"{limits.max_value_length} characters). Every value folded because of a cap is counted in "
        "`degeneration_label_overflow_total{source, label}`. All `finish_reason` and `kind` series of a "
        "`(source, model_name)` start at 0 when that pair is first seen. Caps are set under "
        "`sinks.prometheus.limits` / `sinks.otlp.limits`.",
    ]
    for origin, (title, intro) in _SECTIONS.items():
        specs = [s for s in catalog if s.origin == origin]
        out += ["", f"## {title}", "", intro, ""]
        out += ["| Metric | Type | Labels | Unit | Help |", "|---|---|---|---|---|"]
        out += [f"| `{s.name}` | {s.type} | {_labels(s)} | `{s.unit}` | {s.help} |" for s in specs]
        histograms = [s for s in specs if s.type == "histogram"]
        if histograms:
            out += ["", "Buckets (upper bounds, `+Inf` implied):", ""]
            out += [f"- `{s.name}`: {_buckets(s)}" for s in histograms]
        out += ["", "Sample lines and OTLP instrument names:", "", "```"]
        out += [f"{s.sample_line}    # OTLP: {s.otel_name}" for s in specs]
        out += ["```"]
    return "\n".join(out) + "\n"


def _label_values(limits: LabelLimits) -> list[tuple[str, str]]:
    ttl = _duration(limits.run_ttl.total_seconds())
    return [
        ("source", "name of the configured source"),
        (
            "model_name",
            f"model from the record, at most {limits.max_model_names} per source, then "
            f"`{OVERFLOW_VALUE}`; missing: `unknown`",
        ),
        ("finish_reason", ", ".join(r.value for r in FinishReason)),
        ("kind", ", ".join(k.value for k in FlagKind)),
        ("detector", f"detector name (at most {limits.max_detectors} per source)"),
        (
            "token",
            f"a token of the configured leak list, else `{LEAK_TOKEN_OTHER}`; non-printable characters "
            "are escaped first, so the `stripped_roles` tokens read `\\nsystem\\n`, `\\nuser\\n`, "
            "`\\nassistant\\n`",
        ),
        (
            "run",
            f"run from the record, at most {limits.max_runs} per source; idle runs expire after {ttl} "
            "and their series go",
        ),
        ("reason", ", ".join(get_args(RejectReason))),
        ("label", "the capped label whose value was folded"),
    ]


def _labels(spec: MetricSpec) -> str:
    return ", ".join(f"`{label}`" for label in spec.labels)


def _attrs(label: str) -> str:
    return ", ".join(f"`{a}`" for a in LABEL_ATTRIBUTES[label])


def _duration(seconds: float) -> str:
    return f"{seconds / 3600:g} h" if seconds >= 3600 else f"{seconds / 60:g} min"


_RENDERERS = {"table": render_table, "markdown": render_markdown, "json": render_json}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("action", choices=["list"], help="what to do with the catalogue (list it)")
    parser.add_argument(
        "--format",
        choices=sorted(_RENDERERS),
        default="table",
        help="table (default), markdown (the docs/metrics.md page) or json",
    )


def main(args: argparse.Namespace) -> int:
    print(_RENDERERS[args.format](), end="")
    return 0
