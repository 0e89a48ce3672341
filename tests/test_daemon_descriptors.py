"""The daemon under a real `RLIMIT_NOFILE` (issue 11, bug 3), run with `prlimit`: more files than
descriptors are all read, by opening and closing them in turn, while /metrics and /healthz answer."""

from __future__ import annotations

import time
from pathlib import Path

import orjson

from tests.daemon_harness import DaemonProcess, one_source_config, total, wait_for
from tests.log_lines import CLEAN, chat_line

FILES = 1200
LIMIT = 512
RESERVE = 192  # sources/file_tail/descriptors.py


def _config(tmp_path: Path, logs: Path) -> Path:
    source = {
        "name": "many",
        "include": [f"{logs}/*.jsonl"],
        "format": "openai_chat",
        "positions_file": str(tmp_path / "positions.json"),
        "poll_interval": "PT0.1S",
        "glob_interval": "PT0.5S",
    }
    return one_source_config(tmp_path, source)


def test_more_files_than_descriptors_are_all_read_and_scrapes_keep_answering(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    for i in range(FILES):
        (logs / f"f{i:04d}.jsonl").write_bytes(chat_line(CLEAN, n=i))
    prefix = ["prlimit", f"--nofile={LIMIT}:{LIMIT}", "--"]
    with DaemonProcess(
        ["--config", str(_config(tmp_path, logs))], tmp_path / "daemon.log", command_prefix=prefix
    ) as daemon:
        slowest = 0.0

        def all_read() -> bool:
            nonlocal slowest
            started = time.monotonic()
            samples = daemon.scrape()
            assert daemon.client.get(f"{daemon.url}/healthz").status_code == 200
            slowest = max(slowest, time.monotonic() - started)
            assert total(samples, "degeneration_files_open") <= LIMIT - RESERVE
            return total(samples, "degeneration_responses_total") == FILES

        wait_for(all_read, 90, f"{FILES} files read under nofile={LIMIT}", interval=0.3)
        samples = daemon.scrape()
        assert total(samples, "degeneration_files_open_budget") == LIMIT - RESERVE
        assert total(samples, "degeneration_lines_read_total") == FILES
        assert total(samples, "degeneration_files_watched") == FILES
        assert slowest < 5, f"a scrape took {slowest:.1f} s"
        appended = logs / "f0000.jsonl"
        with appended.open("ab") as out:  # a file closed for the budget is reopened when it grows
            out.write(chat_line(CLEAN, n=FILES))
        daemon.wait_for_total("degeneration_responses_total", FILES + 1, timeout=60)
        assert daemon.stop() == 0
    offsets = [entry["offset"] for entry in orjson.loads((tmp_path / "positions.json").read_bytes())["files"]]
    assert len(offsets) == FILES and all(offset > 0 for offset in offsets)  # checkpointed despite the limit


def test_the_soft_limit_is_raised_to_the_hard_one_at_start(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(chat_line(CLEAN))
    prefix = ["prlimit", "--nofile=256:1024", "--"]
    with DaemonProcess(
        ["--config", str(_config(tmp_path, logs))], tmp_path / "daemon.log", command_prefix=prefix
    ) as daemon:
        samples = daemon.wait_for_total("degeneration_responses_total", 1)
        assert total(samples, "degeneration_files_open_budget") == 1024 - RESERVE
        assert daemon.stop() == 0
