"""The catalogue is well-formed, `metrics list` prints it, and docs/metrics.md is its generated output."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from degeneration_exporter.catalog import CATALOG, LABEL_ATTRIBUTES, LABEL_VALUES, METRICS
from degeneration_exporter.cli import main
from degeneration_exporter.commands.metrics import render_markdown

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs" / "metrics.md"

# Label names Prometheus reserves or that clash with common target labels (ecosystem.md §2.2).
_FORBIDDEN_LABELS = {
    "le",
    "quantile",
    "type",
    "instance",
    "job",
    "region",
    "zone",
    "cluster",
    "service",
    "environment",
    "env",
    "path",
    "request_id",
    "prompt",
    "text",
    "step",
}


def test_docs_metrics_md_is_the_generated_markdown() -> None:
    assert DOCS.read_text(encoding="utf-8") == render_markdown(), (
        "docs/metrics.md is stale: regenerate it with "
        "`degeneration-exporter metrics list --format markdown > docs/metrics.md`"
    )


def test_names_follow_prometheus_conventions() -> None:
    assert len(METRICS) == len(CATALOG)
    assert len({spec.otel_name for spec in CATALOG}) == len(CATALOG)
    for spec in CATALOG:
        assert re.fullmatch(r"degeneration_[a-z0-9_]+", spec.name), spec.name
        assert spec.name.endswith("_total") == (spec.type == "counter"), spec.name
        assert not spec.name.endswith(("_bucket", "_count", "_sum", "_created")), spec.name
        assert spec.otel_name.startswith("degeneration."), spec.otel_name
        assert spec.help.endswith("."), spec.name
        assert set(spec.labels) <= LABEL_ATTRIBUTES.keys() & LABEL_VALUES.keys(), spec.name
        assert not set(spec.labels) & _FORBIDDEN_LABELS, spec.name
        if spec.type == "histogram":
            assert spec.buckets and list(spec.buckets) == sorted(set(spec.buckets)), spec.name
        else:
            assert spec.buckets == (), spec.name


def test_metrics_list_prints_every_metric_as_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["metrics", "list", "--format", "json"]) == 0
    entries = json.loads(capsys.readouterr().out)
    assert [e["name"] for e in entries] == [spec.name for spec in CATALOG]
    assert entries[0]["labels"] == ["source", "model_name", "finish_reason"]


def test_metrics_list_table_from_the_console_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "degeneration_exporter", "metrics", "list"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    lines = result.stdout.splitlines()
    assert lines[0].split()[:3] == ["NAME", "TYPE", "LABELS"]
    assert [line.split()[0] for line in lines[1:]] == [spec.name for spec in CATALOG]


def test_metrics_rejects_unknown_actions(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        main(["metrics", "show"])
    assert exc.value.code == 2
