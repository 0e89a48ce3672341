"""The real daemon publishes the last rollout step of a run once the run goes quiet.

Why a process test: the idle check runs at scrape time against the daemon's real monotonic clock
(docs/sinks.md "Per-step rollout gauges"); no higher step and no shutdown flush ever arrive here,
so only `step_idle_timeout` can make the step's gauges appear on /metrics.
"""

from __future__ import annotations

from pathlib import Path

import orjson

from tests.daemon_harness import DaemonProcess, total, wait_for
from tests.log_lines import CLEAN, LOOP, append, rollout_line


def test_a_single_step_file_shows_on_metrics_after_the_idle_timeout(tmp_path: Path) -> None:
    steps = tmp_path / "rollout_result" / "train"
    steps.mkdir(parents=True)
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {
                "sources": [
                    {
                        "name": "grpo",
                        "include": [f"{steps}/*.jsonl"],
                        "format": "relax_rollout",
                        "positions_file": str(tmp_path / "positions.json"),
                        "poll_interval": "PT0.1S",
                        "glob_interval": "PT0.2S",
                    }
                ],
                "sinks": {"prometheus": {"step_idle_timeout": "PT1S"}},
            }
        )
    )
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        append(
            steps / "7.jsonl",
            *(rollout_line(LOOP, "truncated", 7, n) for n in (0, 2)),
            *(rollout_line(CLEAN, "completed", 7, n) for n in (1, 3)),
        )
        daemon.wait_for_total("degeneration_responses_total", 4, source="grpo")

        def step_published() -> dict[str, float] | None:
            samples = daemon.scrape()
            if total(samples, "degeneration_rollout_step", source="grpo") != 7:
                return None
            return {
                name: total(samples, f"degeneration_rollout_{name}", source="grpo")
                for name in ("responses", "repetition_frac", "truncated_frac", "template_leak_frac")
            }

        gauges = wait_for(step_published, 30, "step 7's gauges after the 1 s idle timeout")
        assert gauges == {
            "responses": 4,
            "repetition_frac": 0.5,
            "truncated_frac": 0.5,
            "template_leak_frac": 0,
        }
        assert daemon.stop() == 0
