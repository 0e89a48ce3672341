"""`DescriptorBudget`: how many files the file tails may hold open at once, from `RLIMIT_NOFILE`.

Why: with 2,000 files under the common soft limit of 1,024 the tailer opened files until EMFILE;
then the HTTP server could not `accept()`, scrapes timed out and positions could not be written.
Every descriptor a tailer keeps on a file is taken from one process-wide budget (the soft limit
minus `RESERVE` for the servers' connections, listen sockets, positions files and their locks,
stdio and logging); when it is spent, the tailer closes the file it read least recently and
reopens it later, so beyond the budget files are read by opening and closing them in turn.
`raise_soft_limit()` (called by `run` at start) lifts the soft limit to the hard one first.
"""

from __future__ import annotations

import resource
import threading

__all__ = ["RESERVE", "DescriptorBudget", "process_budget", "raise_soft_limit"]

RESERVE = 192
"""Descriptors kept for everything but tailed files: two servers of 64 connections (_http_limits),
their listen sockets, positions files and locks, stdio, log handlers, imports; never below 16 files."""
_MIN_FILES = 16


class DescriptorBudget:
    """A thread-safe count of descriptors held against `limit`."""

    def __init__(self, limit: int) -> None:
        self.limit = max(limit, 1)
        self._used = 0
        self._lock = threading.Lock()

    @property
    def used(self) -> int:
        return self._used

    def try_acquire(self) -> bool:
        """Take one descriptor if the budget allows; the caller must `release()` it when closed."""
        with self._lock:
            if self._used >= self.limit:
                return False
            self._used += 1
            return True

    def release(self) -> None:
        with self._lock:
            self._used = max(self._used - 1, 0)


_process: DescriptorBudget | None = None
_process_lock = threading.Lock()


def process_budget() -> DescriptorBudget:
    """The budget every file tail of this process shares (sized on first use)."""
    global _process
    with _process_lock:
        if _process is None:
            soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
            limit = soft if soft != resource.RLIM_INFINITY else 1 << 20
            _process = DescriptorBudget(max(limit - RESERVE, _MIN_FILES))
        return _process


def raise_soft_limit() -> tuple[int, int]:
    """Lift the soft `RLIMIT_NOFILE` to the hard limit (allowed without privileges); (soft, hard) after.

    Call before `process_budget()` is first used, so the budget is sized on the raised limit.
    """
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != soft:
        try:
            resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
            soft = hard
        except (ValueError, OSError):
            pass  # some platforms cap below an infinite hard limit; keep the soft one
    return soft, hard
