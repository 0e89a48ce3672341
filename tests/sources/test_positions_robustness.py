"""A parseable but wrong positions file costs only the files it is wrong about, and an unreadable one
is not "corrupt" (issue 11, bugs 2 and 8): real files, a real FileTailSource, real descriptors."""

from __future__ import annotations

import os
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from degeneration_exporter.errors import SourceError
from degeneration_exporter.sources.file_tail import FileTailSource
from degeneration_exporter.sources.file_tail.identity import FileId, read_fingerprint
from degeneration_exporter.sources.file_tail.positions import PositionEntry, load_positions

from tests.daemon_harness import DaemonProcess, free_port, total
from tests.sources.tailing import Consumer, fast_config, wait_until
from tests.unprivileged import run_unprivileged, shared_dir


def _lines(count: int, tag: str) -> bytes:
    return b"".join(orjson.dumps({"f": tag, "i": i}) + b"\n" for i in range(count))


def _entry(path: Path, offset: int) -> dict[str, object]:
    fd = os.open(path, os.O_RDONLY)
    try:
        fingerprint = read_fingerprint(fd, 4096)
    finally:
        os.close(fd)
    entry = PositionEntry(FileId.of(os.stat(path)), str(path), 0, fingerprint, 1.0).to_json()
    entry["offset"] = offset
    return entry


def _open_descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


@pytest.mark.parametrize("bad_offset", [-1, 2**63])
def test_an_out_of_range_offset_recounts_that_file_only_and_leaks_nothing(
    tmp_path: Path, bad_offset: int
) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    healthy, broken, resumed = logs / "healthy.jsonl", logs / "broken.jsonl", logs / "resumed.jsonl"
    healthy.write_bytes(_lines(10, "healthy"))
    broken.write_bytes(_lines(10, "broken"))
    resumed.write_bytes(_lines(10, "resumed"))
    half = len(_lines(5, "resumed"))
    config = fast_config(tmp_path)
    assert config.positions_file is not None
    config.positions_file.parent.mkdir()
    doc = {"version": 1, "files": [_entry(broken, bad_offset), _entry(resumed, half)]}
    config.positions_file.write_bytes(orjson.dumps(doc))
    before = _open_descriptors()
    source = FileTailSource(config)
    consumer = Consumer(source)
    got = consumer.wait_for(25)
    wait_until(lambda: source.stats.lines_read == 25, what="25 lines")
    tags = [orjson.loads(data)["f"] for data in got]
    assert (tags.count("healthy"), tags.count("broken"), tags.count("resumed")) == (10, 10, 5)
    assert source.stats.checkpoint_errors == 1
    assert source.problems == ["1 invalid positions entry skipped"]
    assert source.stats.read_errors == 0
    consumer.stop()
    assert _open_descriptors() == before  # every descriptor the source opened is closed
    assert not config.positions_file.with_name("positions.json.corrupt").exists()  # only the entry


def test_load_positions_without_a_bad_entry_list_refuses_the_whole_file(tmp_path: Path) -> None:
    path = tmp_path / "p.json"
    path.write_bytes(orjson.dumps({"version": 1, "files": [{"dev": 1, "ino": 2, "offset": -5}]}))
    with pytest.raises(SourceError, match="corrupt positions file"):
        load_positions(path)
    bad: list[str] = []
    assert load_positions(path, bad) == {}
    assert len(bad) == 1


def test_an_unreadable_positions_file_is_not_moved_aside_and_run_exits_2(tmp_path: Path) -> None:
    """As `nobody` when the tests run as root (root reads anything): a real permission error."""
    shared = shared_dir(tmp_path)
    logs = shared / "logs"
    logs.mkdir()
    (logs / "a.jsonl").write_bytes(_lines(3, "a"))
    positions = shared / "positions.json"
    positions.write_bytes(orjson.dumps({"version": 1, "files": []}))
    positions.chmod(0)
    listen = f"127.0.0.1:{free_port()}"
    args = ["run", str(logs / "*.jsonl"), "--positions-file", str(positions), "--listen", listen]
    done = run_unprivileged(args)
    assert done.returncode == 2, done.stderr
    assert "sources.files.positions_file" in done.stderr and "Permission denied" in done.stderr
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1
    assert positions.exists() and not positions.with_name("positions.json.corrupt").exists()


def test_healthz_reports_the_skipped_entry_without_a_path(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    broken = logs / "broken.jsonl"
    broken.write_bytes(_lines(4, "broken"))
    positions = tmp_path / "positions.json"
    positions.write_bytes(orjson.dumps({"version": 1, "files": [_entry(broken, -1)]}))
    args = [str(logs / "*.jsonl"), "--positions-file", str(positions), "--format-in", "openai_chat"]
    with DaemonProcess(args, tmp_path / "daemon.log") as daemon:
        samples = daemon.wait_for_total("degeneration_lines_read_total", 4)
        assert total(samples, "degeneration_checkpoint_errors_total") == 1
        health = daemon.client.get(f"{daemon.url}/healthz")
        assert health.status_code == 200
        assert health.text == "degraded\nsource files: 1 invalid positions entry skipped\n"
        assert str(logs) not in health.text
        assert daemon.stop() == 0


def _saved(path: Path | None) -> dict[str, int]:
    assert path is not None
    try:
        doc = orjson.loads(path.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return {Path(entry["path"]).name: entry["offset"] for entry in doc["files"]}


@pytest.mark.parametrize("lines", [3, 3000])
def test_progress_is_checkpointed_soon_after_start_and_after_a_large_batch(
    tmp_path: Path, lines: int
) -> None:
    """A daemon killed faster than `sync_interval` (1 h here) must still keep its progress: 3 lines are
    saved by the first sync (about 1 s after start), 3,000 by the batch trigger."""
    logs = tmp_path / "logs"
    logs.mkdir()
    log = logs / "a.jsonl"
    log.write_bytes(_lines(lines, "a"))
    config = fast_config(tmp_path, sync_interval=timedelta(hours=1))
    source = FileTailSource(config)
    consumer = Consumer(source)
    consumer.wait_for(lines)
    size = log.stat().st_size
    wait_until(lambda: _saved(config.positions_file).get("a.jsonl") == size, 5, what="checkpoint")
    consumer.stop()
