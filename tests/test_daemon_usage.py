"""vLLM's trailing usage chunk in the real daemon tailing a real file: a streamed response that
finished without a count waits `sources[].usage_wait` for it (vLLM gives no hint one follows).

Chunks are vLLM-shaped (no `usage` key before the usage-only chunk). A malformed line after the
finish chunk is a barrier: one pipeline thread handles lines in order, so once the scrape counts it
rejected, the finish chunk has been handled too, and with a long wait the response is still held.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.daemon_harness import DaemonProcess, Samples, chunks_config, total
from tests.log_lines import LOOP, append, chunk_line, usage_line
from tests.sinks.otlp_receiver import start_receiver

BARRIER = b"{broken\n"


def _config(tmp_path: Path, usage_wait: str, **extra: Any) -> Path:
    return chunks_config(tmp_path, {"usage_wait": usage_wait}, **extra)


def _stream(request_id: str, finish: str = "length") -> list[bytes]:
    return [
        chunk_line(request_id, LOOP[:300]),
        chunk_line(request_id, LOOP[300:]),
        chunk_line(request_id, "", finish),
    ]


def _responses(samples: Samples, finish_reason: str) -> float:
    return total(samples, "degeneration_responses_total", finish_reason=finish_reason)


def test_the_usage_chunk_after_a_pause_gives_the_response_its_count(tmp_path: Path) -> None:
    log = tmp_path / "s.jsonl"
    with DaemonProcess(["--config", str(_config(tmp_path, "PT60S"))], tmp_path / "daemon.log") as daemon:
        append(log, *_stream("chatcmpl-a"), BARRIER)
        held = daemon.wait_for_total("degeneration_lines_rejected_total", 1)
        assert total(held, "degeneration_responses_total") == 0  # finished, waiting for its count
        append(log, usage_line("chatcmpl-a", 4096))
        samples = daemon.wait_for_total("degeneration_responses_total", 1, finish_reason="length")
        assert total(samples, "degeneration_response_tokens_count") == 1
        assert total(samples, "degeneration_response_tokens_sum") == 4096
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 1
        assert daemon.stop() == 0


def test_a_usage_chunk_that_never_comes_costs_the_count_only(tmp_path: Path) -> None:
    """The next request's chunk releases the first response (no count, its own finish reason)."""
    log = tmp_path / "s.jsonl"
    with DaemonProcess(["--config", str(_config(tmp_path, "PT60S"))], tmp_path / "daemon.log") as daemon:
        append(log, *_stream("chatcmpl-a", "stop"), *_stream("chatcmpl-b"), usage_line("chatcmpl-b", 77))
        samples = daemon.wait_for_total("degeneration_responses_total", 2)
        assert (_responses(samples, "stop"), _responses(samples, "length"), _responses(samples, "abort")) == (
            1,
            1,
            0,
        )
        assert total(samples, "degeneration_response_tokens_count") == 1  # b's only
        assert total(samples, "degeneration_response_tokens_sum") == 77
        assert daemon.stop() == 0


def test_in_a_quiet_log_the_timer_releases_a_response_after_the_wait(tmp_path: Path) -> None:
    """No further line at all: only the runner's timer can count it."""
    with DaemonProcess(["--config", str(_config(tmp_path, "PT0.5S"))], tmp_path / "daemon.log") as daemon:
        append(tmp_path / "s.jsonl", *_stream("chatcmpl-q"))
        samples = daemon.wait_for_total("degeneration_responses_total", 1, finish_reason="length")
        assert _responses(samples, "abort") == 0
        assert total(samples, "degeneration_response_tokens_count") == 0
        assert total(samples, "degeneration_streams_expired_total") == 0
        assert daemon.stop() == 0


def test_sigterm_counts_a_held_response_once_as_it_finished(tmp_path: Path) -> None:
    """The wait is a minute: only the shutdown can release it. /metrics is gone with the process,
    so the count is the OTLP sink's last export (a real receiver on 127.0.0.1)."""
    receiver, server = start_receiver()
    try:
        otlp = {"enabled": True, "endpoint": f"http://127.0.0.1:{receiver.port}", "interval": "PT60S"}
        config = _config(tmp_path, "PT60S", sinks={"otlp": otlp})
        with DaemonProcess(["--config", str(config)], tmp_path / "daemon.log") as daemon:
            append(tmp_path / "s.jsonl", *_stream("chatcmpl-t"), BARRIER)
            held = daemon.wait_for_total("degeneration_lines_rejected_total", 1)
            assert total(held, "degeneration_responses_total") == 0
            assert daemon.stop() == 0
            log = daemon.log_text()
        points = [p for p in receiver.points() if p.metric == "degeneration.responses"]
        by_reason: dict[str, float] = {}
        for point in points:  # cumulative: the last export holds the final value of each series
            by_reason[point.attributes["degeneration.finish_reason"]] = point.value or 0.0
        assert by_reason.get("length") == 1 and by_reason.get("abort") == 0, (by_reason, log)
    finally:
        server.shutdown()
        server.server_close()
