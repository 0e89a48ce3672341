"""Files that live shorter than a glob pass, and rotation faster than `poll_interval` (issue 11,
bug 5): with the include directories watched (inotify), every line of every version is read.
Default intervals (1 s poll, 5 s glob), a real writer thread, real renames."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import orjson
from degeneration_exporter.sources.file_tail import FileTailConfig, FileTailSource

from tests.sources.tailing import Consumer


def _config(root: Path, include: str, **overrides: object) -> FileTailConfig:
    return FileTailConfig(include=(str(root / include),), positions_file=None, **overrides)


def _line(tag: str, i: int) -> bytes:
    return orjson.dumps({"tag": tag, "i": i}) + b"\n"


def test_step_files_renamed_away_within_a_glob_pass_are_read_whole(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    source = FileTailSource(_config(tmp_path, "logs/*.jsonl"))
    consumer = Consumer(source)
    time.sleep(0.3)  # the first glob pass has run and the directory is watched
    steps, per_step = 20, 5
    for step in range(steps):
        path = logs / f"step-{step:03d}.jsonl"
        with path.open("wb") as out:
            out.write(b"".join(_line(f"s{step}", i) for i in range(per_step)))
        time.sleep(0.1)
        os.rename(path, logs / f"step-{step:03d}.jsonl.done")  # out of `include`, 0.1 s after creation
    got = consumer.wait_for(steps * per_step, timeout=20)
    consumer.stop()
    assert sorted(got) == sorted(
        _line(f"s{s}", i).rstrip(b"\n") for s in range(steps) for i in range(per_step)
    )


def test_rotation_faster_than_the_poll_interval_loses_no_version(tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    logs.mkdir()
    live = logs / "app.jsonl"
    live.write_bytes(b"")
    source = FileTailSource(_config(tmp_path, "logs/app.jsonl"))
    consumer = Consumer(source)
    time.sleep(0.3)
    versions, per_version = 12, 20
    done = threading.Event()

    def writer() -> None:
        for version in range(versions):
            with live.open("ab") as out:
                for i in range(per_version):
                    out.write(_line(f"v{version}", i))
                    out.flush()
                    time.sleep(0.01)
            os.rename(live, logs / f"app.jsonl.{version}")  # rename + create every ~0.3 s; poll is 1 s
            live.write_bytes(b"")
        done.set()

    thread = threading.Thread(target=writer)
    thread.start()
    thread.join(60)
    assert done.is_set()
    got = consumer.wait_for(versions * per_version, timeout=30)
    consumer.stop()
    assert len(got) == versions * per_version
    assert len(set(got)) == versions * per_version  # each once
