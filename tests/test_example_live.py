"""`run --example` is live: the examples are replayed, so counters keep growing and rollout steps advance.

A real daemon, scraped twice some seconds apart (the README's `rate(...)` query needs two samples
that differ), and the per-step rollout gauge must appear within the test's bound: the first
replayed pass starts step 8, which completes step 7.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from degeneration_exporter.commands._example_replay import ExampleReplay, replayed
from degeneration_exporter.commands.run import example_paths

from tests.daemon_harness import DaemonProcess, Samples, total, wait_for

FIRST_PASS = 21 + 16  # examples/README.md: both files read whole first


def test_example_counters_grow_and_a_rollout_step_gauge_appears(tmp_path: Path) -> None:
    with DaemonProcess(["--example"], tmp_path / "daemon.log") as daemon:

        def first_pass() -> Samples | None:
            samples = daemon.scrape()
            return (
                samples
                if total(samples, "degeneration_responses_total", source="example") >= FIRST_PASS
                else None
            )

        first = wait_for(first_pass, 30, "the first pass of the examples")
        before = total(first, "degeneration_responses_total", source="example")
        time.sleep(4)
        after = total(daemon.scrape(), "degeneration_responses_total", source="example")
        # two files at DEFAULT_RATE lines/s each: about 16 more in 4 s; at least a few on a loaded machine
        assert after - before >= 4, (before, after)
        steps = wait_for(
            lambda: total(daemon.scrape(), "degeneration_rollout_step", source="example") or None,
            30,
            "a completed rollout step",
        )
        assert steps >= 7
        assert total(daemon.scrape(), "degeneration_lines_rejected_total") == 0
        assert daemon.stop() == 0


def test_a_replayed_line_has_a_fresh_id_and_the_next_step() -> None:
    generation, rollout = (Path(p).read_text().splitlines()[0] for p in example_paths())
    again = json.loads(replayed(generation, 3))
    assert again["id"] == json.loads(generation)["id"] + "-r3"
    step = json.loads(replayed(rollout, 3))
    assert step["rollout_id"] == json.loads(rollout)["rollout_id"] + 3
    assert step["weight_versions"] == [str(step["rollout_id"])]


def test_replay_appends_at_its_rate_and_rotates_a_full_file(tmp_path: Path) -> None:
    sources = [Path(p) for p in example_paths()]
    replay = ExampleReplay(sources, tmp_path, rate=50, rotate_bytes=64 * 1024)
    assert [Path(p).read_bytes() for p in replay.paths] == [p.read_bytes() for p in sources]
    replay.start()
    try:
        wait_for(lambda: (tmp_path / "generation_log.jsonl.1").is_file(), 60, "a rotation")
    finally:
        replay.stop()
    current = (tmp_path / "generation_log.jsonl").stat().st_size
    assert current <= 64 * 1024 + 16 * 1024  # one line past the limit at most, then a new file
    assert replay.passes >= 2
