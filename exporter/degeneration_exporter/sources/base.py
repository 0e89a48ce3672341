"""The source contract: `Line`, `Position`, `SourceStats` and the `Source` protocol.

Why: the pipeline treats every source (file tail, stdin, HTTP push) alike. A source yields raw
lines with the position just *after* them, and is told `commit(position)` once the record on that
line was classified and counted, so offsets never run ahead of the metrics (at-least-once).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Protocol

__all__ = ["Line", "Position", "Source", "SourceStats"]


@dataclass(frozen=True, slots=True)
class Position:
    """Where a line ends: the file's identity key and the byte offset after the line's newline."""

    key: str
    offset: int


@dataclass(frozen=True, slots=True)
class Line:
    """One newline-terminated line (newline and CR stripped), where it came from, and its position.

    `origin` is a path or `-`/`http` for reports and logs, never a label. `position` is None for
    sources with nothing to commit (stdin). `partial` marks a final unterminated fragment handed out
    once after its writer went away (ecosystem.md §7.5 rule 4): the pipeline counts it as
    `partial_line` rather than `invalid_json` when it does not parse.
    """

    data: bytes
    origin: str
    line_no: int
    position: Position | None = None
    partial: bool = False


@dataclass(slots=True)
class SourceStats:
    """Plain counters a source keeps; sinks read them at scrape time (a custom collector)."""

    lines_read: int = 0
    bytes_read: int = 0
    rejected: Counter[str] = field(default_factory=Counter)
    files_watched: int = 0
    files_open: int = 0  # file tail: descriptors held on tailed files now (<= files_open_budget)
    files_open_budget: int = 0  # file tail: the process-wide descriptor budget (RLIMIT_NOFILE - reserve)
    files_deferred: int = 0  # file tail: opens put off because the budget had no descriptor to free
    rotations: int = 0
    truncations: int = 0
    lag_bytes: int = 0
    last_record_timestamp: float = 0.0
    checkpoint_last_success_timestamp: float = 0.0
    checkpoint_errors: int = 0
    queue_depth: int = 0
    read_errors: int = 0
    streams_evicted: int = 0  # set by the pipeline: open streams closed to stay under max_open_streams
    streams_expired: int = 0  # set by the pipeline: open streams closed after stream_idle_timeout
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)


class Source(Protocol):
    """A named stream of lines with commit-after-processing semantics."""

    name: str
    stats: SourceStats

    def lines(self) -> Iterator[Line]:
        """Yield lines until `close()` is called (or the input ends, for finite sources)."""
        ...

    def commit(self, position: Position) -> None:
        """Record that everything up to `position` was classified and counted."""
        ...

    def close(self) -> None:
        """Stop reading and flush positions; idempotent."""
        ...
