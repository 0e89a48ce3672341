"""File tail read cost, each row as a ratio to Python's own buffered line iteration in the same process.

Why: every byte the daemon handles comes through `FileTailer`; its cost over the unavoidable read and
split (`for line in open(path, "rb")`, all in C) is the number to watch. No timing asserts live in
tests (style.md §10).

Rows (one file of `--lines` JSONL lines of about `--line-bytes` bytes, in the page cache):
- baseline: `for line in open(path, "rb")` counting lines.
- `LineSplitter.feed` over 1 MiB `os.pread` chunks (the reader's splitting alone).
- `FileTailer` discover + poll with a list as `emit` (adds ledger, stats, `Line` objects).
- `FileTailSource` end to end: reader thread, bounded queue, a consumer that commits every line.

Run: `.venv/bin/python bench/bench_sources.py [--lines 200000] [--line-bytes 400] [--repeat 3]`;
copy the table into docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from degeneration_exporter.sources.base import Line, SourceStats
from degeneration_exporter.sources.file_tail import FileTailConfig, FileTailSource
from degeneration_exporter.sources.file_tail.ledger import CommitLedger
from degeneration_exporter.sources.file_tail.reader import LineSplitter
from degeneration_exporter.sources.file_tail.tailer import FileTailer

CHUNK = 1024 * 1024


def write_input(path: Path, lines: int, line_bytes: int) -> None:
    pad = b"x" * max(0, line_bytes - 40)
    with open(path, "wb") as fh:
        for i in range(lines):
            fh.write(b'{"i":%d,"text":"%s"}\n' % (i, pad))


def baseline(path: Path) -> int:
    count = 0
    with open(path, "rb") as fh:
        for _ in fh:
            count += 1
    return count


def splitter_only(path: Path) -> int:
    splitter = LineSplitter(16 * 1024 * 1024)
    count = 0
    fd = os.open(path, os.O_RDONLY)
    try:
        while data := os.pread(fd, CHUNK, splitter.offset):
            count += len(splitter.feed(data))
    finally:
        os.close(fd)
    return count


def config_for(path: Path, positions: Path | None) -> FileTailConfig:
    return FileTailConfig(
        include=(str(path),),
        poll_interval=timedelta(milliseconds=1),
        glob_interval=timedelta(hours=1),
        positions_file=positions,
        sync_interval=timedelta(seconds=1),
    )


def tailer_only(path: Path) -> int:
    out: list[Line] = []
    tailer = FileTailer(
        config_for(path, None),
        CommitLedger(None),
        SourceStats(),
        out.append,
        clock=time.monotonic,
        wall_clock=time.time,
    )
    tailer.discover()
    while tailer.poll():
        pass
    tailer.close()
    return len(out)


def source_end_to_end(path: Path, expected: int) -> int:
    with tempfile.TemporaryDirectory() as state:
        source = FileTailSource(config_for(path, Path(state) / "positions.json"))
        count = 0
        for line in source.lines():
            assert line.position is not None
            source.commit(line.position)
            count += 1
            if count == expected:
                break
        source.close()
    return count


def best_of(repeat: int, fn: Callable[[], int], expected: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        got = fn()
        best = min(best, time.perf_counter() - start)
        assert got == expected, (fn, got, expected)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lines", type=int, default=200_000, help="Lines in the input file.")
    parser.add_argument("--line-bytes", type=int, default=400, help="Approximate bytes per line.")
    parser.add_argument("--repeat", type=int, default=3, help="Runs per row; the best is kept.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "input.jsonl"
        write_input(path, args.lines, args.line_bytes)
        size = path.stat().st_size
        baseline(path)  # warm the page cache
        rows = [
            ("`for line in open(path, 'rb')` (baseline)", lambda: baseline(path)),
            ("LineSplitter.feed, 1 MiB preads", lambda: splitter_only(path)),
            ("FileTailer discover + poll", lambda: tailer_only(path)),
            ("FileTailSource: thread, queue, commit per line", lambda: source_end_to_end(path, args.lines)),
        ]
        print(f"{args.lines} lines, {size / 1e6:.1f} MB, best of {args.repeat}\n")
        print("| form | MB/s | lines/s | × baseline time |")
        print("|---|---:|---:|---:|")
        base = 0.0
        for name, fn in rows:
            took = best_of(args.repeat, fn, args.lines)
            base = base or took
            print(f"| {name} | {size / took / 1e6:.0f} | {args.lines / took:,.0f} | {took / base:.2f} |")


if __name__ == "__main__":
    main()
