"""Test helpers for the file tail: a fast config and a consumer thread that commits what it reads.

Why here and not conftest: several test modules import them by name; they are about tailing only.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

from degeneration_exporter.sources.base import Line, SourceStats
from degeneration_exporter.sources.file_tail import FileTailConfig, FileTailSource
from degeneration_exporter.sources.file_tail.ledger import CommitLedger
from degeneration_exporter.sources.file_tail.tailer import FileTailer

DEADLINE_SECONDS = 20.0


def fast_config(root: Path, *include: str, **overrides: Any) -> FileTailConfig:
    """Millisecond intervals so tests finish quickly; positions under `root`."""
    settings: dict[str, Any] = {
        "include": tuple(str(root / pattern) for pattern in include or ("logs/**/*.jsonl",)),
        "poll_interval": timedelta(milliseconds=5),
        "glob_interval": timedelta(milliseconds=20),
        "rotate_wait": timedelta(milliseconds=300),
        "sync_interval": timedelta(milliseconds=50),
        "gz_quiet_period": timedelta(0),
        "positions_file": root / "state" / "positions.json",
    }
    settings.update(overrides)
    return FileTailConfig(**settings)


def wait_until(
    condition: Callable[[], bool], timeout: float = DEADLINE_SECONDS, what: str = "condition"
) -> None:
    """Poll `condition` until true; fail with `what` after `timeout` seconds (no fixed sleeps)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.005)


class Consumer:
    """Iterates `source.lines()` in a thread, keeps every Line and commits it, as the pipeline does."""

    def __init__(self, source: FileTailSource, *, commit: bool = True) -> None:
        self.source = source
        self.lines: list[Line] = []
        self._commit = commit
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        for line in self.source.lines():
            with self._lock:
                self.lines.append(line)
            if self._commit and line.position is not None:
                self.source.commit(line.position)

    def received(self) -> list[Line]:
        """Every Line so far (a copy)."""
        with self._lock:
            return list(self.lines)

    def data(self) -> list[bytes]:
        with self._lock:
            return [line.data for line in self.lines]

    def wait_for(self, count: int, timeout: float = DEADLINE_SECONDS) -> list[bytes]:
        """Wait until at least `count` lines arrived; return all data so far."""
        wait_until(lambda: len(self.lines) >= count, timeout, f"{count} lines (have {len(self.lines)})")
        return self.data()

    def stop(self) -> list[bytes]:
        """Close the source (flushing positions) and return every line's data."""
        self.source.close()
        self._thread.join(timeout=DEADLINE_SECONDS)
        return self.data()


class ManualTailer:
    """A `FileTailer` driven step by step on the test's thread, with a clock the test moves."""

    def __init__(self, config: FileTailConfig) -> None:
        self.now = 1000.0
        self.lines: list[Line] = []
        self.stats = SourceStats()
        self.ledger = CommitLedger(None)
        self.tailer = FileTailer(
            config, self.ledger, self.stats, self.lines.append, clock=lambda: self.now, wall_clock=time.time
        )

    def step(self, seconds: float = 0.0) -> list[bytes]:
        """Advance the clock, discover, poll until no file has unread bytes; return new line data."""
        self.now += seconds
        before = len(self.lines)
        self.tailer.discover()
        while self.tailer.poll():
            pass
        return [line.data for line in self.lines[before:]]


def start(config: FileTailConfig) -> Consumer:
    return Consumer(FileTailSource(config))


def jsonl(*records: str) -> bytes:
    return b"".join(r.encode() + b"\n" for r in records)
