"""`FileTailSource`: the file tail as a `Source` — a reader thread, a bounded queue, checkpoints.

Why threads and a bounded queue: reading must pause, not drop, when the pipeline is behind
(ecosystem.md §7.5 rule 9), and offsets must only move when the pipeline says a record was counted
(rule 7). The reader thread runs `FileTailer`; a checkpoint thread writes the positions file every
`sync_interval`; `close()` stops both and writes it once more. The positions file's lock is held
from construction to `close()`, so a second daemon, or `positions forget` while this one runs, is
refused instead of silently undone. `dry_run` (`run --dry-run`, like Promtail) reads the stored
positions but never writes them and takes no lock.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
from collections.abc import Iterator

from ...errors import SourceError
from ..base import Line, Position, SourceStats
from ..line_queue import LineQueue, QueueClosed
from .config import FileTailConfig
from .discover import PathFilter
from .identity import FileId
from .ledger import CommitLedger
from .positions import CorruptPositions, PositionEntry, PositionsLock, load_positions, save_positions
from .tailer import FileTailer
from .watch import DirectoryWatch, watched_directories

__all__ = ["FileTailSource"]

log = logging.getLogger(__name__)

_MIN_GLOB_GAP_S = 0.05
"""Glob passes triggered by directory events are at most this frequent (a burst of creates is one pass)."""
_STOP_CHECK_S = 0.1
FIRST_SYNC_S = 1.0
"""The first checkpoint after start comes after at most this long (or `sync_interval` if shorter)."""
BATCH_SYNC_LINES = 1000
BATCH_SYNC_BYTES = 4 * 1024 * 1024
"""A checkpoint is also written as soon as this many lines or bytes were committed since the last one,
so a daemon killed faster than `sync_interval` (a crash loop) still keeps its progress."""


class FileTailSource:
    """Tails the files matched by `config.include`; see docs/tailing.md for the guarantees."""

    def __init__(self, config: FileTailConfig, *, dry_run: bool = False) -> None:
        """Raises PositionsInUse when another process holds the positions file's lock, SourceError
        when the positions file or its lock cannot be read or created (permissions: not corrupt)."""
        self.config = config
        self.name = config.name
        self.dry_run = dry_run
        self.stats = SourceStats()
        self.problems: list[str] = []
        """Lasting conditions `/healthz` reports (no paths: the endpoint is unauthenticated)."""
        self._lock: PositionsLock | None = None
        if config.positions_file is not None and not dry_run:
            self._lock = PositionsLock(config.positions_file)
            self._lock.acquire()
        self._queue = LineQueue(config.queue_max_lines, self.stats)
        self._stop = threading.Event()
        try:
            stored = self._load_positions()
        except BaseException:
            if self._lock is not None:
                self._lock.release()
            raise
        self._ledger = CommitLedger(stored)
        self._tailer = FileTailer(
            config, self._ledger, self.stats, self._queue.put, clock=time.monotonic, wall_clock=time.time
        )
        self._watch: DirectoryWatch | None = None
        self._sync_soon = threading.Event()
        self._since_sync = [0, 0]  # lines, bytes committed since the last checkpoint (reader thread only)
        self._last_offsets: dict[str, int] = {}
        self._threads: list[threading.Thread] = []
        self._start_lock = threading.Lock()
        self._checkpoint_lock = threading.Lock()
        self._closed = False

    def lines(self) -> Iterator[Line]:
        """Yield lines as they are read until `close()`; starts the reader on first call."""
        self._start()
        yield from self._queue.lines()

    def commit(self, position: Position) -> None:
        """Everything up to `position` was classified and counted; saved at the next sync, or at once
        after a large batch (`BATCH_SYNC_LINES` / `BATCH_SYNC_BYTES`)."""
        self._ledger.commit(position.key, position.offset)
        since = self._since_sync
        previous = self._last_offsets.get(position.key, position.offset)
        self._last_offsets[position.key] = position.offset
        since[0] += 1
        since[1] += max(position.offset - previous, 0)
        if since[0] >= BATCH_SYNC_LINES or since[1] >= BATCH_SYNC_BYTES:
            since[0] = since[1] = 0
            if len(self._last_offsets) > 4096:
                self._last_offsets.clear()
            self._sync_soon.set()

    def checkpoint(self) -> None:
        """Write the positions file now (also done every `sync_interval` and on close).

        In a dry run the ledger is still pruned (retired epochs expire) but nothing is written.
        """
        path = self.config.positions_file
        # Snapshot and write as one step: the reader's first checkpoint and the sync thread's must
        # not interleave, or an older snapshot could be written last and move offsets back.
        with self._checkpoint_lock:
            now = time.time()
            entries = self._ledger.snapshot(now, self.config.positions_retention.total_seconds())
            if path is None or self.dry_run:
                return
            # A last write after close() re-takes the lock: a `positions` edit that got in first wins.
            relock = self._lock if self._lock is not None and not self._lock.held else None
            try:
                if relock is not None:
                    relock.acquire()
                try:
                    save_positions(path, entries)
                finally:
                    if relock is not None:
                        relock.release()
            except SourceError as exc:
                log.warning("%s", exc, extra={"source": self.name})
                with self.stats.lock:
                    self.stats.checkpoint_errors += 1
                return
        with self.stats.lock:
            self.stats.checkpoint_last_success_timestamp = now

    def close(self) -> None:
        """Stop reading, close descriptors and write the positions file once more; idempotent.

        A source that never started writes nothing, so the next start is still the very first.
        """
        with self._start_lock:
            if self._closed:
                return
            self._closed = True
        self._stop.set()
        self._sync_soon.set()
        self._queue.close()
        for thread in self._threads:
            thread.join()
        self._tailer.close()
        if self._watch is not None:
            self._watch.close()
        if self._threads:
            self.checkpoint()
        if self._lock is not None:
            self._lock.release()

    # -- threads -------------------------------------------------------------------------------

    def _start(self) -> None:
        with self._start_lock:
            if self._threads or self._closed:
                return
            for target, role in ((self._read_forever, "reader"), (self._sync_forever, "checkpoint")):
                thread = threading.Thread(target=target, name=f"file_tail[{self.name}].{role}", daemon=True)
                self._threads.append(thread)
                thread.start()

    def _read_forever(self) -> None:
        poll = self.config.poll_interval.total_seconds()
        glob_every = self.config.glob_interval.total_seconds()
        ignored = PathFilter((), self.config.ignore_names)
        watch = self._watch = DirectoryWatch(lambda name: not ignored.is_excluded(name))
        next_glob = 0.0
        first = True
        while not self._stop.is_set():
            more = False
            try:
                if time.monotonic() >= next_glob:
                    self._tailer.discover()
                    watch.update(watched_directories(self.config.include))
                    next_glob = time.monotonic() + glob_every
                    if first:  # persist the start decisions (start_at) before any line goes out
                        first = False
                        self.checkpoint()
                more = self._tailer.poll()
            except QueueClosed:
                return
            except Exception:  # a bug must not end tailing: log, count, back off one poll
                log.exception("file tail reader failed", extra={"source": self.name})
                with self.stats.lock:
                    self.stats.read_errors += 1
            self._refresh_gauges()
            rest = 0.0 if more else min(poll, max(next_glob - time.monotonic(), 0.0))
            if self._wait_for_work(watch, rest):
                next_glob = min(next_glob, time.monotonic() + _MIN_GLOB_GAP_S)

    def _wait_for_work(self, watch: DirectoryWatch, seconds: float) -> bool:
        """Sleep up to `seconds` (slices, so `close()` is noticed); True when a file may have appeared."""
        deadline = time.monotonic() + seconds
        while True:
            left = deadline - time.monotonic()
            if watch.wait(max(min(left, _STOP_CHECK_S), 0.0)):
                return True
            if not watch.available or not watch.watching:
                self._stop.wait(max(left, 0.0))
                return False
            if left <= 0 or self._stop.is_set():
                return False

    def _sync_forever(self) -> None:
        interval = self.config.sync_interval.total_seconds()
        wait = min(interval, FIRST_SYNC_S)
        while True:
            self._sync_soon.wait(wait)
            if self._stop.is_set():
                return
            self._sync_soon.clear()
            self._refresh_gauges()  # also while the reader is blocked on a full queue
            self.checkpoint()
            wait = interval

    def _refresh_gauges(self) -> None:
        lag = self._ledger.lag_bytes()
        with self.stats.lock:
            self.stats.lag_bytes = lag

    def _load_positions(self) -> dict[FileId, PositionEntry] | None:
        """Stored checkpoints; None on the very first start (no file yet, or none configured).

        A corrupt file is moved aside to `<name>.corrupt` and counted; every file then restarts at
        byte 0, as Alloy's `restart_from_beginning` (recount rather than lose: at-least-once). A
        malformed or out-of-range entry costs only its own file (read again from byte 0), counted
        and logged. An unreadable file raises SourceError: it is not corrupt, and is left alone.
        """
        path = self.config.positions_file
        if path is None:
            return None
        bad: list[str] = []
        try:
            stored = load_positions(path, bad)
        except CorruptPositions as exc:
            log.error("%s; every file restarts from byte 0", exc, extra={"source": self.name})
            self._note_problem("positions file corrupt, moved aside; every file recounted")
            if not self.dry_run:
                with contextlib.suppress(OSError):
                    os.replace(path, path.with_name(path.name + ".corrupt"))
            return {}
        for problem in bad:
            message = "positions file %s: %s; that file restarts from byte 0"
            log.error(message, path, problem, extra={"source": self.name})
        if bad:
            noun = "entry" if len(bad) == 1 else "entries"
            self._note_problem(f"{len(bad)} invalid positions {noun} skipped", len(bad))
        return stored

    def _note_problem(self, problem: str, count: int = 1) -> None:
        self.problems.append(problem)
        with self.stats.lock:
            self.stats.checkpoint_errors += count
