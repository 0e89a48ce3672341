"""Streams keep no text, in the real daemon: a long streamed loop keeps its verdict and its length,
and a config still naming the retired `max_stream_chars` loads, with a warning naming the source."""

from __future__ import annotations

from pathlib import Path

from tests.daemon_harness import DaemonProcess, chunks_config, total
from tests.log_lines import LOOP, append, chunk_line


def test_long_stream_keeps_verdict_and_length_and_old_cap_key_only_warns(tmp_path: Path) -> None:
    text = LOOP * 3
    deltas = [text[i : i + 50] for i in range(0, len(text), 50)]
    config = chunks_config(tmp_path, {"max_stream_chars": 500})
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        append(tmp_path / "s.jsonl", *(chunk_line("r1", d) for d in deltas), chunk_line("r1", "", "length"))
        samples = daemon.wait_for_total("degeneration_responses_total", 1)
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 1
        assert total(samples, "degeneration_response_chars_sum") == len(text)  # the full length
        assert "degeneration_stream_chars_truncated_total" not in {name for name, _ in daemon.scrape()}
        assert daemon.stop() == 0
    log = (tmp_path / "daemon.log").read_text(errors="replace")
    assert "'chunks': max_stream_chars is deprecated and ignored" in log


def test_streams_never_finished_are_expired_on_a_timer_and_the_cap_is_a_setting(tmp_path: Path) -> None:
    """No further chunk arrives: the timer alone closes and counts them (as abort); a cap of 3 open
    streams evicts the least recently active and counts it."""
    config = chunks_config(tmp_path, {"stream_idle_timeout": "PT1S", "max_open_streams": 3})
    with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
        append(tmp_path / "s.jsonl", *(chunk_line(f"r{i}", "hello there, ") for i in range(5)))
        samples = daemon.wait_for_total("degeneration_responses_total", 5, timeout=20, finish_reason="abort")
        assert total(samples, "degeneration_streams_evicted_total", source="chunks") == 2
        assert total(samples, "degeneration_streams_expired_total", source="chunks") == 3
        assert daemon.stop() == 0
