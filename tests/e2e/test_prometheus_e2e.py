"""End to end: a real Prometheus scrapes the real daemon while the test writes rollout and generation
files; PromQL per label equals what was written, across a daemon restart (counters reset to 0,
positions prevent recounting: the total is the sum of each run's last values)."""

from __future__ import annotations

import signal
import time
from collections import Counter
from pathlib import Path

import orjson

from tests.daemon_harness import DaemonProcess, free_port, wait_for
from tests.e2e.prometheus_server import PrometheusServer, prometheus_binary
from tests.log_lines import CLEAN, LEAK, LOOP, append, chat_line, rollout_line

# What each written text is flagged as by the default classifier (finish reason decides `ceiling`).
KINDS = {
    (CLEAN, "stop"): (),
    (CLEAN, "length"): ("ceiling",),
    (LOOP, "length"): ("repetition", "ceiling", "ceiling_while_repeating"),
    (LEAK, "stop"): ("template_leak",),
}
STATUS = {"stop": "completed", "length": "truncated"}

Written = list[tuple[str, str, str, str]]  # (source, model_name, text, finish_reason)


def _write(logs: Path, batch: Written, counter: list[int]) -> None:
    for source, model, text, finish in batch:
        counter[0] += 1
        if source == "gen":
            append(logs / "gen" / f"{model.split('/')[0]}.jsonl", chat_line(text, finish, model, counter[0]))
        else:
            append(logs / "rollout" / "7.jsonl", rollout_line(text, STATUS[finish], 7, counter[0]))


def _expected(batch: Written) -> tuple[Counter[tuple[str, ...]], Counter[tuple[str, ...]]]:
    responses: Counter[tuple[str, ...]] = Counter()
    flagged: Counter[tuple[str, ...]] = Counter()
    for source, model, text, finish in batch:
        responses[(source, model, finish)] += 1
        for kind in KINDS[(text, finish)]:
            flagged[(source, model, kind)] += 1
    return responses, flagged


RESPONSES = "sum by (source, model_name, finish_reason) (degeneration_responses_total)"
FLAGGED = "sum by (source, model_name, kind) (degeneration_responses_flagged_total)"


def _nonzero(values: dict[tuple[str, ...], float]) -> dict[tuple[str, ...], float]:
    return {k: v for k, v in values.items() if v}


def test_prometheus_sees_exactly_what_was_written_across_a_restart(tmp_path: Path) -> None:
    prometheus_binary()  # fail on CI / skip locally before starting anything
    logs = tmp_path / "logs"
    (logs / "gen").mkdir(parents=True)
    (logs / "rollout").mkdir()
    config = tmp_path / "config.yaml"
    fast = {"poll_interval": "PT0.1S", "glob_interval": "PT0.2S", "start_at": "beginning"}
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
    port = free_port()
    qwen, llama = "Qwen/Qwen3-8B", "meta-llama/Llama-3.1-8B-Instruct"
    first_batch: Written = [
        *[("gen", qwen, CLEAN, "stop")] * 3,
        *[("gen", qwen, LOOP, "length")] * 2,
        ("gen", llama, LEAK, "stop"),
        *[("gen", llama, CLEAN, "stop")] * 2,
        *[("grpo", "unknown", CLEAN, "stop")] * 4,
        *[("grpo", "unknown", LOOP, "length")] * 2,
        ("grpo", "unknown", CLEAN, "length"),
    ]
    second_batch: Written = [
        ("gen", qwen, LOOP, "length"),
        *[("gen", qwen, CLEAN, "stop")] * 2,
        ("grpo", "unknown", LEAK, "stop"),
    ]
    counter = [0]
    daemon = DaemonProcess(["--config", str(config)], tmp_path / "daemon1.log", port=port)
    prometheus = PrometheusServer(tmp_path / "prometheus", f"127.0.0.1:{port}")
    try:
        _write(logs, first_batch, counter)
        want_responses, want_flagged = _expected(first_batch)
        wait_for(
            lambda: (
                _nonzero(prometheus.by_labels(RESPONSES, "source", "model_name", "finish_reason"))
                == want_responses
            ),
            30,
            "first batch in Prometheus",
        )
        before_restart = time.time()
        assert (
            _nonzero(prometheus.by_labels(FLAGGED, "source", "model_name", "kind", at=before_restart))
            == want_flagged
        )
        assert prometheus.by_labels('up{job="degeneration"}', "job") == {("degeneration",): 1.0}

        assert daemon.stop(signal.SIGTERM) == 0
        wait_for(
            lambda: prometheus.by_labels('up{job="degeneration"}', "job") == {("degeneration",): 0.0},
            15,
            "Prometheus to see the daemon down",
        )
        daemon = DaemonProcess(["--config", str(config)], tmp_path / "daemon2.log", port=port)
        _write(logs, second_batch, counter)
        second_responses, second_flagged = _expected(second_batch)
        wait_for(
            lambda: (
                _nonzero(prometheus.by_labels(RESPONSES, "source", "model_name", "finish_reason"))
                == second_responses
            ),
            30,
            "second run's counts (from zero, nothing recounted)",
        )

        # Total over both runs = last value of the first run + current value of the second.
        total_responses = Counter(
            _nonzero(
                prometheus.by_labels(RESPONSES, "source", "model_name", "finish_reason", at=before_restart)
            )
        )
        total_responses.update(
            _nonzero(prometheus.by_labels(RESPONSES, "source", "model_name", "finish_reason"))
        )
        assert total_responses == want_responses + second_responses
        total_flagged = Counter(
            _nonzero(prometheus.by_labels(FLAGGED, "source", "model_name", "kind", at=before_restart))
        )
        total_flagged.update(_nonzero(prometheus.by_labels(FLAGGED, "source", "model_name", "kind")))
        assert total_flagged == want_flagged + second_flagged
        print("PromQL totals across the restart:", dict(total_responses), dict(total_flagged))  # pytest -s

        # Prometheus saw the reset of a counter that kept counting after the restart.
        resets = prometheus.by_labels(
            'resets(degeneration_responses_total{source="gen",model_name="Qwen/Qwen3-8B",'
            'finish_reason="length"}[5m])',
            "source",
        )
        assert resets == {("gen",): 1.0}
        lines = prometheus.by_labels("sum by (source) (degeneration_lines_read_total)", "source")
        assert lines == {("gen",): 3.0, ("grpo",): 1.0}
    finally:
        prometheus.stop()
        daemon.stop()
