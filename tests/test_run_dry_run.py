"""`run --dry-run` as a real process: classifies and serves metrics, never writes or locks positions.

Like Promtail's `--dry-run`: try a config against live logs without moving the offsets a real
daemon will resume from, so the real run afterwards still counts every line.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from degeneration_exporter.sources.file_tail.positions import lock_path

from tests.daemon_harness import DaemonProcess, total
from tests.log_lines import CLEAN, LEAK, LOOP, append, chat_line
from tests.test_positions import positions_cli, write_config


def test_dry_run_resumes_from_positions_but_leaves_them_for_the_real_run(tmp_path: Path) -> None:
    logs, positions = tmp_path / "logs", tmp_path / "state" / "positions.json"
    logs.mkdir()
    log = logs / "gen.jsonl"
    append(log, chat_line(CLEAN, n=0), chat_line(CLEAN, n=1))
    config = write_config(tmp_path, logs, positions)
    with DaemonProcess(["--config", str(config)], tmp_path / "real1.log") as daemon:
        daemon.wait_for_total("degeneration_responses_total", 2)
        assert daemon.stop() == 0
    saved = positions.read_bytes()

    new_lines = chat_line(LOOP, "length", n=2) + chat_line(LEAK, n=3)
    append(log, new_lines)
    with DaemonProcess(["--config", str(config), "--dry-run"], tmp_path / "dry.log") as dry:
        samples = dry.wait_for_total("degeneration_responses_total", 2)  # resumed: only the new lines
        assert total(samples, "degeneration_responses_flagged_total", kind="repetition") == 1
        # no lock is held, so the positions file can be inspected and even edited meanwhile
        shown = positions_cli("show", "--positions-file", str(positions), "--format", "json")
        assert orjson.loads(shown.stdout)["files"][0]["lag_bytes"] == len(new_lines)
        assert dry.stop() == 0
    assert "dry run: positions are not written" in dry.log_text()
    assert positions.read_bytes() == saved  # not a byte changed, even by the stop

    with DaemonProcess(["--config", str(config)], tmp_path / "real2.log") as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 2)  # the same two, counted for real
        assert total(samples, "degeneration_responses_flagged_total", kind="template_leak") == 1


def test_dry_run_without_positions_creates_no_file(tmp_path: Path) -> None:
    logs, positions = tmp_path / "logs", tmp_path / "state" / "positions.json"
    logs.mkdir()
    append(logs / "gen.jsonl", chat_line(CLEAN, n=0))
    config = write_config(tmp_path, logs, positions)
    with DaemonProcess(["--config", str(config), "--dry-run"], tmp_path / "dry.log") as dry:
        dry.wait_for_total("degeneration_responses_total", 1)
        assert dry.stop() == 0
    assert not positions.exists() and not lock_path(positions).exists()
    assert not positions.parent.exists() or list(positions.parent.iterdir()) == []
