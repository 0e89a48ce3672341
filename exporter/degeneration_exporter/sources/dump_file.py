"""Read a finished dump once, line by line: the `scan` source.

Why apart from `file_tail`: a dump being diagnosed offline has no rotation, positions or waiting;
it is read whole, `.gz` decompressed on the fly, `-` meaning stdin. Lines are cut by the same
`LineSplitter` the tailer uses (bounded memory: a line over `max_line_bytes` streams past and is
reported as skipped), blank lines are skipped (as Relax's diagnose does), a final line without a
newline still counts (a finished dump need not end in one).

A byte range (`start`, `end`) of a plain file can be read on its own (`scan --workers` splits large
files at line boundaries); its line numbers then count from the range's first line. Read errors
(unreadable file, truncated or corrupt gzip) are raised *after* the lines read before them were
yielded, so a dump still being copied keeps the records before the cut. `.pt` dumps (slime/Relax
`torch.save`) are read by `sources/pt_dump.py`, one JSON line per sample.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from .._slots import slots_builder
from .base import Line
from .file_tail.reader import DEFAULT_MAX_LINE_BYTES, SKIPPED, LineSplitter, Piece

__all__ = ["LineCount", "SkippedLine", "iter_file_lines"]

_CHUNK_BYTES = 1024 * 1024


@dataclass(frozen=True, slots=True)
class SkippedLine:
    """A line longer than `max_line_bytes`: skipped while it streamed past; only where it was is kept."""

    origin: str
    line_no: int
    max_line_bytes: int


@dataclass(slots=True)
class LineCount:
    """How many lines (blank ones included) a reader has passed: where the next range's numbering starts."""

    lines: int = 0


_new_line = slots_builder(Line)  # every field positionally, without the frozen `__init__` (~1 µs a line)


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _chunks(fh: BinaryIO, start: int, end: int | None) -> Iterator[bytes]:
    if start:
        fh.seek(start)
    left = None if end is None else end - start
    # gzip: read1 hands out what is decompressed so far, so a truncated stream loses only its tail
    read = fh.read1 if isinstance(fh, gzip.GzipFile) else fh.read
    while left is None or left > 0:
        chunk = read(_CHUNK_BYTES if left is None else min(_CHUNK_BYTES, left))
        if not chunk:
            return
        if left is not None:
            left -= len(chunk)
        yield chunk


def iter_file_lines(
    path: str,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    *,
    start: int = 0,
    end: int | None = None,
    count: LineCount | None = None,
) -> Iterator[Line | SkippedLine]:
    """Yield every non-blank line (1-based line numbers, newline and CR stripped) or a SkippedLine.

    `start`/`end` (plain files only) read the byte range [start, end), which must begin at a line start."""
    count = count if count is not None else LineCount()
    if path.endswith(".pt"):
        for line in _pt_lines(path):
            count.lines = line.line_no
            yield line
        return
    splitter = LineSplitter(max_line_bytes)
    line_no = 0
    new_line = _new_line
    fh = _open(path)
    try:
        for pieces in _pieces(splitter, _chunks(fh, start, end)):
            for data, _end in pieces:  # one generator per line, not two: this loop runs per record
                line_no += 1
                count.lines = line_no
                if data is SKIPPED:
                    yield SkippedLine(path, line_no, max_line_bytes)
                elif data and not data.isspace():  # blank: as `data.strip()`, without copying the line
                    yield new_line(data, path, line_no, None, False)  # no position, not partial
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()


def _pieces(splitter: LineSplitter, chunks: Iterator[bytes]) -> Iterator[list[Piece]]:
    """The lines of each chunk, then the unterminated last line (a finished dump need not end in one)."""
    for chunk in chunks:
        yield splitter.feed(chunk)
    last = splitter.take_partial()
    if last is not None:
        yield [last]


def _pt_lines(path: str) -> Iterator[Line]:
    """A `.pt` dump's samples as JSON lines (`sources/pt_dump.py`); without torch, one clear read error."""
    need = "reading .pt dumps needs torch: pip install 'degeneration-exporter[torch]'"
    try:
        from .pt_dump import iter_pt_lines  # type: ignore[import-not-found,unused-ignore]
    except ImportError as exc:
        raise OSError(f"{need} ({exc})") from exc
    try:
        for line_no, data in enumerate(iter_pt_lines(path), 1):
            yield Line(data=data, origin=path, line_no=line_no)
    except ImportError as exc:  # the reader imports torch lazily
        raise OSError(f"{need} ({exc})") from exc
