"""A real Prometheus with exemplar storage scrapes the daemon as OpenMetrics and returns the samples' ids.

Debian's Prometheus 2.42 asks for `application/openmetrics-text` first; with
`--enable-feature=exemplar-storage` it keeps the exemplars and serves them at
`/api/v1/query_exemplars` — what Grafana's exemplar view reads. Every id must open `/samples/<id>`.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import httpx
import yaml

from tests.daemon_harness import DaemonProcess, wait_for
from tests.e2e.prometheus_server import PrometheusServer
from tests.log_lines import CLEAN, LEAK, LOOP, chat_line


def _exemplars(prom: PrometheusServer, expr: str) -> list[dict[str, Any]]:
    now = time.time()
    response = httpx.get(
        f"http://127.0.0.1:{prom.port}/api/v1/query_exemplars",
        params={"query": expr, "start": f"{now - 600:.3f}", "end": f"{now + 60:.3f}"},
        timeout=10,
    )
    body = response.json()
    assert body["status"] == "success", body
    result: list[dict[str, Any]] = body["data"]
    return result


def test_prometheus_returns_exemplars_that_open_the_samples_page(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    config = tmp_path / "config.yaml"
    source = {
        "name": "chat",
        "type": "file_tail",
        "include": [f"{logs}/*.jsonl"],
        "format": "openai_chat",
        "positions_file": str(tmp_path / "p.json"),
        "poll_interval": "PT0.1S",
    }
    config.write_text(
        yaml.safe_dump({"sources": [source], "sinks": {"prometheus": {"process_metrics": False}}})
    )
    (logs / "a.jsonl").write_bytes(chat_line(CLEAN, n=0) + chat_line(LOOP, n=1) + chat_line(LEAK, n=2))
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 3)
        held = {s["id"]: s for s in daemon.client.get(f"{daemon.url}/api/samples").json()["samples"]}
        prom = PrometheusServer(
            tmp_path / "prom", f"127.0.0.1:{daemon.port}", ["--enable-feature=exemplar-storage"]
        )
        try:

            def flagged_exemplars() -> list[dict[str, Any]] | None:
                found = _exemplars(prom, "degeneration_responses_flagged_total")
                kinds = {row["seriesLabels"].get("kind") for row in found}
                return found if {"repetition", "template_leak"} <= kinds else None

            found = wait_for(flagged_exemplars, 60, "exemplars of degeneration_responses_flagged_total")
            by_kind = {
                row["seriesLabels"]["kind"]: {e["labels"]["sample_id"] for e in row["exemplars"]}
                for row in found
            }
            repeating = next(i for i, s in held.items() if "repetition" in s["kinds"])
            leaking = next(i for i, s in held.items() if s["kinds"] == ["template_leak"])
            assert by_kind["repetition"] == {repeating} and by_kind["template_leak"] == {leaking}
            onset = _exemplars(prom, "degeneration_loop_onset_ratio_bucket")
            assert {e["labels"]["sample_id"] for row in onset for e in row["exemplars"]} == {repeating}
            page = daemon.client.get(f"{daemon.url}/samples/{repeating}")
            assert page.status_code == 200 and "loop onset" in page.text
            # what Prometheus scraped was the OpenMetrics form (exemplars exist only there)
            assert prom.query("up")[0]["value"][1] == "1"
        finally:
            prom.stop()
