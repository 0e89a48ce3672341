"""The shipped boards and rules against real tools. Boards: the daemon tails real files, a real
Prometheus scrapes it, and every panel query of dashboards/generated/ runs on that Prometheus.

Why, beyond promtool parsing (tests/test_rules.py): a query can parse and still show nothing
(a wrong label, a selector that matches no series). Here each panel must return data, except the
few whose input this scenario does not produce (named below), and the fractions must be about what
was written. Variables are set to All (`.+`) and `$__rate_interval` to 1m, as Grafana would send.
Rules: the PrometheusRule manifest passes prometheus-operator's schema (tests/e2e/operator_schemas.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
import yaml

from tests.daemon_harness import DaemonProcess, wait_for
from tests.e2e.operator_schemas import unknown_fields, validate_with_models
from tests.e2e.prometheus_server import PrometheusServer, prometheus_binary
from tests.log_lines import CLEAN, LEAK, LOOP, append, chat_line, rollout_line

GENERATED = Path(__file__).resolve().parents[2] / "dashboards" / "generated"
QWEN, LLAMA = "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"

# Panels with no data in this scenario, and why (everything else must return series).
EXPECTED_EMPTY = {
    ("exporter_health", "Label overflow"): "no cap is reached",
    ("exporter_health", "OTLP export failures"): "the OTLP sink is off",
    ("overview", "Token budget used"): "the records state no max_tokens",
}


def _as_sent_by_grafana(expr: str) -> str:
    return re.sub(r'"\$[a-z_]+"', '".+"', expr.replace("$__rate_interval", "1m"))


def _panel_queries() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(GENERATED.glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        found += [
            (path.stem, panel["title"], _as_sent_by_grafana(target["expr"]))
            for panel in board["panels"]
            for target in panel.get("targets", [])
        ]
    return found


def _variable_selectors() -> list[tuple[str, str, str]]:
    found = []
    for path in sorted(GENERATED.glob("*.json")):
        board = json.loads(path.read_text(encoding="utf-8"))
        for variable in board["templating"]["list"]:
            match = re.fullmatch(r"label_values\((.*), ([a-z_]+)\)", variable.get("query", ""))
            if variable["type"] == "query" and match:
                found.append((path.stem, _as_sent_by_grafana(match.group(1)), match.group(2)))
    return found


def _samples(prometheus: PrometheusServer, expr: str) -> float:
    return sum(float(row["value"][1]) for row in prometheus.query(expr))


def _series_count(prometheus: PrometheusServer, selector: str) -> float:
    return _samples(prometheus, f"count(count_over_time({selector}[1m]))")


def _scrapes_seen(prometheus: PrometheusServer) -> float:
    return _samples(prometheus, 'max(count_over_time(up{job="degeneration"}[1m]))')


def _by_model(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {
        row["metric"]["model_name"]: float(row["value"][1])
        for row in rows
        if row["metric"]["source"] == "gen"
    }


def _write_config(tmp_path: Path, logs: Path) -> Path:
    fast = {
        "poll_interval": "PT0.1S",
        "glob_interval": "PT0.2S",
        "sync_interval": "PT0.5S",
        "start_at": "beginning",
    }
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {
                "sources": [
                    {
                        "name": "gen",
                        "include": [f"{logs}/gen/*.jsonl"],
                        "format": "openai_chat",
                        "positions_file": str(tmp_path / "pos-gen.json"),
                        **fast,
                    },
                    {
                        "name": "grpo",
                        "include": [f"{logs}/rollout/*.jsonl"],
                        "format": "relax_rollout",
                        "positions_file": str(tmp_path / "pos-grpo.json"),
                        **fast,
                    },
                ]
            }
        )
    )
    return config


def _wait_two_scrapes(prometheus: PrometheusServer) -> None:
    seen = _scrapes_seen(prometheus)
    wait_for(lambda: _scrapes_seen(prometheus) >= seen + 2, 15, "two more scrapes")


def test_every_board_panel_shows_the_written_data(tmp_path: Path) -> None:
    prometheus_binary()  # fail on CI / skip locally before starting anything
    logs = tmp_path / "logs"
    (logs / "gen").mkdir(parents=True)
    (logs / "rollout").mkdir()
    config = _write_config(tmp_path, logs)
    gen_qwen, gen_llama = logs / "gen" / "qwen.jsonl", logs / "gen" / "llama.jsonl"
    steps = logs / "rollout" / "7.jsonl"
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        prometheus = PrometheusServer(tmp_path / "prometheus", f"127.0.0.1:{daemon.port}")
        try:
            # Every series exists (at 1 response each) before the counted batch, so rate() sees it grow.
            append(gen_qwen, chat_line(CLEAN, "stop", QWEN, 1))
            append(gen_llama, chat_line(CLEAN, "stop", LLAMA, 2))
            append(steps, rollout_line(CLEAN, "completed", 7, 0))
            wait_for(lambda: _samples(prometheus, "sum(degeneration_responses_total)") == 3, 30, "seed batch")
            _wait_two_scrapes(prometheus)

            append(
                gen_qwen,
                *(chat_line(CLEAN, "stop", QWEN, n) for n in (3, 4)),
                *(chat_line(LOOP, "length", QWEN, n) for n in (5, 6)),
                b"{not json\n",
            )
            append(gen_llama, chat_line(LEAK, "stop", LLAMA, 7), chat_line(CLEAN, "stop", LLAMA, 8))
            append(
                steps,
                rollout_line(LOOP, "truncated", 7, 1),
                rollout_line(LOOP, "truncated", 7, 2),
                rollout_line(CLEAN, "completed", 7, 3),
                rollout_line(CLEAN, "completed", 8, 4),
            )
            total = "sum(degeneration_responses_total)"
            wait_for(lambda: _samples(prometheus, total) == 13, 30, "counted batch")
            wait_for(lambda: _series_count(prometheus, "degeneration_rollout_step") == 1, 15, "step 7 done")
            _wait_two_scrapes(prometheus)

            results = {
                (board, title, expr): prometheus.query(expr) for board, title, expr in _panel_queries()
            }
            empty = {(board, title) for (board, title, _), rows in results.items() if not rows}
            assert empty == set(EXPECTED_EMPTY), f"without data: {sorted(empty - set(EXPECTED_EMPTY))}"

            def panel(title: str) -> list[dict[str, Any]]:
                return next(rows for (b, t, _), rows in results.items() if b == "overview" and t == title)

            # Counted batch: qwen 2 of 4 loop into the ceiling, llama 1 of 2 leaks (rate extrapolation
            # differs a little between a series that starts at 0 and one that starts at 1).
            repetition = _by_model(panel("Repetition-loop fraction"))
            assert repetition[QWEN] == pytest.approx(0.5, abs=0.1) and repetition[LLAMA] == 0
            assert _by_model(panel("Ceiling hit while looping"))[QWEN] == pytest.approx(0.5, abs=0.1)
            leaks = _by_model(panel("Template-leak fraction"))
            assert leaks[LLAMA] == pytest.approx(0.5, abs=0.1) and leaks[QWEN] == 0
            assert {row["metric"]["token"] for row in panel("Leaked tokens by token")} == {"<|im_end|>"}

            rollout = next(
                rows
                for (b, t, _), rows in results.items()
                if b == "rollouts" and t == "Repetition fraction per step"
            )
            assert [float(row["value"][1]) for row in rollout] == [pytest.approx(0.5)]  # 2 of step 7's 4

            for board, selector, label in _variable_selectors():
                response = httpx.get(
                    f"http://127.0.0.1:{prometheus.port}/api/v1/series",
                    params={"match[]": selector},
                    timeout=10,
                ).json()
                values = {series.get(label) for series in response["data"]}
                assert values - {None}, f"{board}: variable {label} has no values from {selector}"
        finally:
            prometheus.stop()


def test_generated_prometheusrule_passes_the_operator_schema() -> None:
    manifest = yaml.safe_load((GENERATED / "prometheusrule.yaml").read_text(encoding="utf-8"))
    assert validate_with_models([manifest]) == [None]
    assert unknown_fields(manifest) == []
    rules_file = yaml.safe_load((GENERATED / "rules.yml").read_text(encoding="utf-8"))
    assert manifest["spec"]["groups"] == rules_file["groups"]
