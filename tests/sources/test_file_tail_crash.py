"""kill -9 and restart: nothing lost, and the recount is exactly the lines after the last checkpoint.

A child process tails, appends each line to an output file, then commits (the pipeline's order). It is
killed with SIGKILL mid-stream while a writer process is still appending, then restarted.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import orjson

from .tailing import wait_until

TOTAL_LINES = 8000

CONSUMER = r"""
import os, sys
from datetime import timedelta
from pathlib import Path
from degeneration_exporter.sources.file_tail import FileTailConfig, FileTailSource

include, positions, out = sys.argv[1:4]
start_at, sync_ms = (sys.argv[4], int(sys.argv[5])) if len(sys.argv) > 4 else ("beginning", 50)
config = FileTailConfig(
    include=(include,), poll_interval=timedelta(milliseconds=5), glob_interval=timedelta(milliseconds=20),
    positions_file=Path(positions), sync_interval=timedelta(milliseconds=sync_ms), start_at=start_at,
)
source = FileTailSource(config)
fd = os.open(out, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
for line in source.lines():
    os.write(fd, line.data + b"\n")
    source.commit(line.position)
"""

WRITER = r"""
import os, sys, time
path, total, resume = sys.argv[1], int(sys.argv[2]), sys.argv[3]
started = time.monotonic()
with open(path, "ab", buffering=0) as fh:
    for i in range(total):
        if i == total // 2:  # half written: wait until the test has killed the consumer mid-stream
            while not os.path.exists(resume):
                time.sleep(0.01)
            started = time.monotonic() - i / 4000
        fh.write(b'{"i":%d}\n' % i)
        ahead = (i + 1) / 4000 - (time.monotonic() - started)
        if ahead > 0.001:
            time.sleep(ahead)
"""


def count_lines(path: Path) -> int:
    return path.read_bytes().count(b"\n") if path.exists() else 0


def test_kill_9_mid_stream_loses_nothing_and_recounts_only_after_the_checkpoint(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    log, out, positions = tmp_path / "logs" / "a.jsonl", tmp_path / "out.jsonl", tmp_path / "positions.json"
    (tmp_path / "consumer.py").write_text(CONSUMER)
    (tmp_path / "writer.py").write_text(WRITER)
    consumer_args = [sys.executable, str(tmp_path / "consumer.py"), str(tmp_path / "logs" / "*.jsonl")]
    consumer_args += [str(positions), str(out)]
    # The writer stops half-way until `resume` exists: the consumer dies while lines are still to come,
    # however slowly either process starts on a loaded machine.
    resume = tmp_path / "resume"
    writer_args = [sys.executable, str(tmp_path / "writer.py"), str(log), str(TOTAL_LINES), str(resume)]
    writer = subprocess.Popen(writer_args)
    first = subprocess.Popen(consumer_args)
    try:
        wait_until(lambda: count_lines(out) >= 2000, what="the first consumer to be mid-stream")
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=20)
        assert writer.poll() is None, "the writer should still be appending when the consumer dies"
        resume.touch()
        checkpoint = orjson.loads(positions.read_bytes())["files"][0]["offset"] if positions.exists() else 0
        first_output = out.read_bytes().splitlines()
        with open(log, "rb") as fh:
            checkpointed_lines = fh.read(checkpoint).count(b"\n")
        second = subprocess.Popen(consumer_args)
        try:
            assert writer.wait(timeout=30) == 0
            expected = len(first_output) + TOTAL_LINES - checkpointed_lines
            wait_until(lambda: count_lines(out) >= expected, what="the restarted consumer to catch up")
        finally:
            second.kill()
            second.wait(timeout=20)
    finally:
        writer.kill()
    written = log.read_bytes()
    lines = written.splitlines()
    output = out.read_bytes().splitlines()
    assert output[: len(first_output)] == lines[: len(first_output)]  # the first run read in order
    resumed = written[checkpoint:].splitlines()
    assert output[len(first_output) :] == resumed  # the second run starts exactly at the checkpoint
    assert set(output) == set(lines)  # nothing lost
    recounted = len(output) - len(lines)
    print(f"kill -9 after {len(first_output)} lines: {recounted} recounted (sync_interval 50 ms)")
    assert recounted == len(first_output) - checkpointed_lines


def test_start_at_end_is_decided_once_even_if_killed_before_the_first_sync(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    log, out, positions = tmp_path / "logs" / "a.jsonl", tmp_path / "out.jsonl", tmp_path / "positions.json"
    log.write_bytes(b'{"old":1}\n')
    (tmp_path / "consumer.py").write_text(CONSUMER)
    args = [sys.executable, str(tmp_path / "consumer.py"), str(tmp_path / "logs" / "*.jsonl")]
    args += [str(positions), str(out), "end", "3600000"]  # an hour between syncs: only the first write
    first = subprocess.Popen(args)
    try:
        wait_until(positions.exists, what="the positions written right after the first discovery")
    finally:
        os.kill(first.pid, signal.SIGKILL)
        first.wait(timeout=20)
    with open(log, "ab") as fh:
        fh.write(b'{"while_down":1}\n')
    second = subprocess.Popen(args)
    try:
        wait_until(lambda: count_lines(out) >= 1, what="the line written while down")
    finally:
        second.kill()
        second.wait(timeout=20)
    assert out.read_bytes() == b'{"while_down":1}\n'
