"""Two RL runs under one glob stay apart: `run_from_path` gives each its own per-step gauges.

Why a real daemon: the run comes from the path of each tailed file, through the shared line pipeline,
into the Prometheus sink's per-run step gauges; only a scrape of /metrics shows them apart.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from degeneration_exporter.config import load_settings
from degeneration_exporter.errors import ConfigError

from tests.daemon_harness import DaemonProcess, total, wait_for
from tests.log_lines import CLEAN, LOOP, append, rollout_line


def _config(tmp_path: Path, runs: Path, **source: object) -> Path:
    config = tmp_path / "config.yaml"
    config.write_bytes(
        orjson.dumps(
            {
                "sources": [
                    {
                        "name": "grpo",
                        "include": [f"{runs}/*/rollout_result/train/*.jsonl"],
                        "format": "relax_rollout",
                        "positions_file": str(tmp_path / "positions.json"),
                        "poll_interval": "PT0.1S",
                        "glob_interval": "PT0.2S",
                        **source,
                    }
                ],
                "sinks": {"prometheus": {"step_idle_timeout": "PT1S"}},
            }
        )
    )
    return config


def test_two_runs_under_one_glob_have_their_own_step_gauges(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    for name in ("alpha", "beta"):
        (runs / name / "rollout_result" / "train").mkdir(parents=True)
    config = _config(tmp_path, runs, run_from_path="/runs/(?P<run>[^/]+)/", run="unmatched")
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        append(
            runs / "alpha/rollout_result/train/3.jsonl",
            *(rollout_line(LOOP, "truncated", 3, n) for n in range(4)),
        )
        append(
            runs / "beta/rollout_result/train/5.jsonl",
            *(rollout_line(CLEAN, "completed", 5, n) for n in range(2)),
        )
        daemon.wait_for_total("degeneration_responses_total", 6, source="grpo")

        def both_published() -> dict[str, tuple[float, float, float]] | None:
            samples = daemon.scrape()
            out = {
                run: (
                    total(samples, "degeneration_rollout_step", run=run),
                    total(samples, "degeneration_rollout_responses", run=run),
                    total(samples, "degeneration_rollout_repetition_frac", run=run),
                )
                for run in ("alpha", "beta")
            }
            return out if all(v[1] for v in out.values()) else None

        gauges = wait_for(both_published, 30, "each run's step gauges after the idle timeout")
        assert gauges == {"alpha": (3, 4, 1.0), "beta": (5, 2, 0.0)}
        samples = daemon.scrape()
        runs_seen = {
            dict(labels).get("run") for name, labels in samples if name == "degeneration_rollout_step"
        }
        assert runs_seen == {"alpha", "beta"}  # nothing merged into "default", the static fallback unused
        assert daemon.stop() == 0


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("run_from_path", "/runs/([^/]+)/", "named group (?P<run>"),
        ("model_from_path", "/(?P<run>[^/]+)/", "named group (?P<model>"),
        ("run_from_path", "/runs/(?P<run>[^/]+/", "not a regular expression"),
        ("run", "", "at least 1 character"),
    ],
)
def test_a_bad_run_or_model_option_names_the_field(
    tmp_path: Path, option: str, value: str, message: str
) -> None:
    config = _config(tmp_path, tmp_path / "runs", **{option: value})
    with pytest.raises(ConfigError) as caught:
        load_settings(config)
    assert f"sources.0.{option}" in str(caught.value) and message in str(caught.value)
