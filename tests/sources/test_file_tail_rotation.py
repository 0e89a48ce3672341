"""Rotation torture: a writer process at ~4,000 lines/s rotating every 800 lines (~200 ms), in each mode.

rename+create and atomic replace must deliver every line exactly once. copytruncate cannot: the lines
written between the reader's last read and the truncation exist only in the copy, which is not
watched. The test checks that those are the only lines lost (each version loses at most its tail)
and prints how many, the figure docs/tailing.md quotes.

Each rotation waits until the reader has handed out a line of the version the path names (the
writer asks on stdout, the test answers on stdin), because no tailer can read a version it never had
a chance to open: in the full suite a gen-2 GC pause of the test process (70-80 ms of CPU, 0.3-0.9 s
on the loaded 2-core machine) stalled the reader while the writer, a separate process, rotated two
or three times; those versions were renamed out of `include`, unlinked, or truncated unseen. The
handshake takes that race out; what is left to fail is the tailer: a version it held but did not
read to the end, a rotation or truncation it did not notice, a line twice.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import timedelta
from pathlib import Path

import orjson
import pytest
from degeneration_exporter.sources.file_tail import FileTailSource

from .tailing import Consumer, fast_config, wait_until

TOTAL_LINES = 6000
LINES_PER_SECOND = 4000
LINES_PER_VERSION = 800
ROTATIONS = (TOTAL_LINES - 1) // LINES_PER_VERSION  # never after the last line
POLL_SECONDS = 0.005

WRITER = r"""
import os, shutil, sys, time

mode, path = sys.argv[1], sys.argv[2]
total, rate, every = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
target = path + ".tmp" if mode == "replace" else path
fh = open(target, "ab", buffering=0)
at_path = None if mode == "replace" else 0  # first line of the version the path names now
in_target = 0  # first line of the version being written to `target`
started = time.monotonic()

def held():
    # Wait until the reader has handed out a line of the version at `path` (it holds that file).
    global started
    if at_path is None:
        return
    asked = time.monotonic()
    sys.stdout.write(f"need {at_path}\n")
    sys.stdout.flush()
    if sys.stdin.readline().strip() != "ok":
        sys.exit("no go-ahead from the test")
    started += time.monotonic() - asked  # keep the pace, no burst after the wait

rotations = 0
late = 0
for i in range(total):
    fh.write(b'{"i":%d,"pad":"%s"}\n' % (i, b"p" * (i % 50)))
    if late:
        late -= 1
        if late == 0:  # the writer reopens its path, like one after SIGHUP
            fh.close()
            fh = open(path, "ab", buffering=0)
            at_path = i + 1
    if (i + 1) % every == 0 and i + 1 < total:
        held()
        rotations += 1
        if mode == "rename":
            os.rename(path, f"{path}.{rotations}")
            late = 5  # keep writing to the old descriptor for a few lines
            at_path = None
        elif mode == "copytruncate":
            shutil.copyfile(path, f"{path}.{rotations}")
            os.truncate(path, 0)
            at_path = i + 1
        else:
            fh.close()
            os.replace(target, path)
            fh = open(target, "ab", buffering=0)
            at_path, in_target = in_target, i + 1
    ahead = (i + 1) / rate - (time.monotonic() - started)
    if ahead > 0.001:
        time.sleep(ahead)
fh.close()
if mode == "replace":
    held()
    os.replace(target, path)
print(f"done {rotations}")
"""


def run_writer(tmp_path: Path, mode: str, log: Path, consumer: Consumer) -> int:
    """Run the writer to its end, answering each of its rotations once the reader holds the version."""
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    args = [sys.executable, str(script), mode, str(log)]
    args += [str(TOTAL_LINES), str(LINES_PER_SECOND), str(LINES_PER_VERSION)]
    rotations = -1
    highest = Highest(consumer)
    with subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE) as writer:
        assert writer.stdin is not None and writer.stdout is not None
        for message in writer.stdout:
            word, number = message.split()
            if word == b"need":
                first = int(number)
                held = lambda first=first: highest() >= first  # noqa: E731
                wait_until(held, what=f"a line from line {first} on")
                writer.stdin.write(b"ok\n")
                writer.stdin.flush()
            else:
                rotations = int(number)
        assert writer.wait(timeout=60) == 0
    return rotations


class Highest:
    """The highest line number the consumer has received so far, parsing each line once."""

    def __init__(self, consumer: Consumer) -> None:
        self._consumer = consumer
        self._seen = 0
        self.number = -1

    def __call__(self) -> int:
        lines = self._consumer.received()
        for line in lines[self._seen :]:
            if not line.partial:
                self.number = max(self.number, orjson.loads(line.data)["i"])
        self._seen = len(lines)
        return self.number


def received_numbers(consumer: Consumer) -> list[int]:
    """Line numbers of the complete lines (a truncation hands out the cut line's start as partial)."""
    return [orjson.loads(line.data)["i"] for line in consumer.received() if not line.partial]


@pytest.mark.parametrize("mode", ["rename", "replace"])
def test_every_line_once_under_rotation(tmp_path: Path, mode: str) -> None:
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "app.jsonl"
    config = fast_config(tmp_path, "logs/app.jsonl")
    consumer = Consumer(FileTailSource(config))
    rotations = run_writer(tmp_path, mode, log, consumer)
    consumer.wait_for(TOTAL_LINES)
    wait_until(lambda: consumer.source.stats.lag_bytes == 0, what="every line committed")
    stats = consumer.source.stats
    consumer.stop()
    assert [line.data for line in consumer.received() if line.partial] == []
    got = received_numbers(consumer)
    assert len(got) == TOTAL_LINES
    assert sorted(got) == list(range(TOTAL_LINES))
    assert rotations == ROTATIONS
    assert stats.rotations == ROTATIONS
    assert stats.rejected == {}
    entries = orjson.loads(config.positions_file.read_bytes())["files"]  # type: ignore[union-attr]
    current = log.stat()
    assert [e["offset"] for e in entries if e["ino"] == current.st_ino] == [current.st_size]


def test_copytruncate_loses_only_the_tail_of_each_version(tmp_path: Path) -> None:
    (tmp_path / "logs").mkdir()
    log = tmp_path / "logs" / "app.jsonl"
    config = fast_config(tmp_path, "logs/app.jsonl", poll_interval=timedelta(seconds=POLL_SECONDS))
    consumer = Consumer(FileTailSource(config))
    rotations = run_writer(tmp_path, "copytruncate", log, consumer)
    highest = Highest(consumer)
    wait_until(lambda: highest() == TOTAL_LINES - 1, what="the last line")
    stats = consumer.source.stats
    consumer.stop()
    got = received_numbers(consumer)
    assert len(set(got)) == len(got), "copytruncate must not duplicate"
    assert got == sorted(got)
    assert rotations == ROTATIONS
    assert stats.truncations == ROTATIONS
    # docs/tailing.md: only the lines written after the reader's last read and before a truncation
    # are lost, so of each version a prefix is read (never a gap, never its start skipped), the last
    # version whole. How many are lost depends on how promptly the reader runs: printed, not bounded.
    versions = [
        [i for i in got if start <= i < start + LINES_PER_VERSION]
        for start in range(0, TOTAL_LINES, LINES_PER_VERSION)
    ]
    for start, version in zip(range(0, TOTAL_LINES, LINES_PER_VERSION), versions, strict=True):
        assert version == list(range(start, start + len(version))), f"version from line {start}"
    assert versions[-1] == list(range(ROTATIONS * LINES_PER_VERSION, TOTAL_LINES))
    lost = TOTAL_LINES - len(got)
    per = ", ".join(str(LINES_PER_VERSION - len(v)) for v in versions[:-1])
    print(f"copytruncate: {rotations} truncations, {lost} of {TOTAL_LINES} lines lost ({per})")
