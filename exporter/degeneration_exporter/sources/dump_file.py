"""Read a finished dump once, line by line: the `scan` source.

Why apart from `file_tail`: a dump being diagnosed offline has no rotation, positions or waiting;
it is read whole, `.gz` decompressed on the fly, `-` meaning stdin. Lines are cut by the same
`LineSplitter` the tailer uses (bounded memory: a line over `max_line_bytes` streams past and is
reported as skipped), blank lines are skipped (as Relax's diagnose does), a final line without a
newline still counts (a finished dump need not end in one).
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .base import Line
from .file_tail.reader import DEFAULT_MAX_LINE_BYTES, SKIPPED, LineSplitter, Piece

__all__ = ["SkippedLine", "iter_file_lines"]

_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line longer than `max_line_bytes`: skipped while it streamed past; only where it was is kept."""

    origin: str
    line_no: int
    max_line_bytes: int


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def iter_file_lines(path: str, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES) -> Iterator[Line | SkippedLine]:
    """Yield every non-blank line (1-based line numbers, newline and CR stripped) or a SkippedLine."""
    splitter = LineSplitter(max_line_bytes)
    line_no = 0

    def emit(pieces: list[Piece]) -> Iterator[Line | SkippedLine]:
        nonlocal line_no
        for data, _end in pieces:
            line_no += 1
            if data is SKIPPED:
                yield SkippedLine(path, line_no, max_line_bytes)
            elif data.strip():
                yield Line(data=data, origin=path, line_no=line_no)

    fh = _open(path)
    try:
        while chunk := fh.read(_CHUNK_BYTES):
            yield from emit(splitter.feed(chunk))
        last = splitter.take_partial()
        if last is not None:
            yield from emit([last])
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
