"""The YAML examples in docs/sinks.md are valid sink configs (docs examples run as tests)."""

from __future__ import annotations

import re
from pathlib import Path

import yaml
from degeneration_exporter.sinks.otlp import OtlpSinkConfig
from degeneration_exporter.sinks.prometheus import DEFAULT_PORT, PrometheusSinkConfig

DOCS = Path(__file__).resolve().parents[2] / "docs" / "sinks.md"


def test_sink_examples_in_the_docs_validate() -> None:
    text = DOCS.read_text(encoding="utf-8")
    blocks = [yaml.safe_load(block)["sinks"] for block in re.findall(r"```yaml\n(.*?)```", text, re.S)]
    assert len(blocks) == 2
    prometheus = PrometheusSinkConfig.model_validate(blocks[0]["prometheus"])
    assert prometheus.port == DEFAULT_PORT
    assert f"Default port {DEFAULT_PORT}" in text
    otlp = OtlpSinkConfig.model_validate(blocks[1]["otlp"])
    assert otlp.metrics_endpoint() == "http://otel-collector:4318/v1/metrics"
