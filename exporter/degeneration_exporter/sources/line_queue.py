"""`LineQueue`: the bounded hand-off between a source's producer threads and the pipeline.

Why: ecosystem.md §7.5 rule 9 — when the pipeline is behind, producers wait (offsets not advanced)
rather than drop, and the depth is exported (`SourceStats.queue_depth`). The file tail's reader and
the HTTP push handlers share this one implementation of "wait for room, but notice `close()`".
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence

from .base import Line, SourceStats

__all__ = ["LineQueue", "QueueClosed"]

WAKE_SECONDS = 0.1
"""How often a blocked producer or consumer looks at the stop flag."""


class QueueClosed(Exception):
    """Raised to a producer blocked on a full queue when the source is closed."""


class LineQueue:
    """At most `max_lines` Lines in flight; `lines()` ends once `close()` is called."""

    def __init__(self, max_lines: int, stats: SourceStats) -> None:
        self._queue: queue.Queue[Line] = queue.Queue(maxsize=max_lines)
        self._stats = stats
        self._closed = threading.Event()
        self._batch_lock = threading.Lock()
        self._out = False  # a line was yielded and its consumer has not asked for the next one yet

    @property
    def max_lines(self) -> int:
        return self._queue.maxsize

    def put(self, line: Line) -> None:
        """Wait for room (backpressure); raise QueueClosed if the source closes meanwhile."""
        while True:
            try:
                self._queue.put(line, timeout=WAKE_SECONDS)
                return
            except queue.Full:
                self._record_depth()
                if self._closed.is_set():
                    raise QueueClosed from None

    def put_all(self, lines: Sequence[Line], timeout: float) -> bool:
        """Put every line or none, waiting up to `timeout` s in all; False when there was no room.

        The wait covers both other batches (one batch at a time checks for room, so two cannot
        both see it and overfill) and room itself: a request answers 503 after its own
        `enqueue_timeout`, never after the timeouts of the requests ahead of it as well.
        """
        deadline = time.monotonic() + timeout
        if not self._batch_lock.acquire(timeout=max(timeout, 0.0)):
            return False
        try:
            while self._queue.maxsize - self._queue.qsize() < len(lines):
                if time.monotonic() >= deadline or self._closed.is_set():
                    return False
                time.sleep(0.01)
            for line in lines:
                self._queue.put_nowait(line)
        finally:
            self._batch_lock.release()
        self._record_depth()
        return True

    def lines(self) -> Iterator[Line]:
        """Yield lines as they come until `close()`; lines still queued then are left (uncommitted)."""
        while True:
            try:
                line = self._queue.get(timeout=WAKE_SECONDS)
            except queue.Empty:
                if self._closed.is_set():
                    return
                continue
            self._record_depth()
            self._out = True
            yield line
            self._out = False
            if self._closed.is_set():
                return

    def settled(self) -> bool:
        """True when nothing is queued and the last line yielded was handled (its consumer came back).

        `HttpPushSource.drain` waits for this before the runner stops, so an accepted push is counted.
        """
        return self._queue.qsize() == 0 and not self._out

    def pending(self) -> int:
        """Lines queued or out for handling, not yet settled."""
        return self._queue.qsize() + int(self._out)

    def close(self) -> None:
        self._closed.set()

    def _record_depth(self) -> None:
        with self._stats.lock:
            self._stats.queue_depth = self._queue.qsize()
