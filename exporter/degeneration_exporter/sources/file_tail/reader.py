"""`LineSplitter`: bytes in, newline-terminated lines out, in bounded memory.

Why: ecosystem.md §7.5 rule 4. Only `\\n`-terminated lines leave (an unterminated tail waits: a JSONL
writer may be mid-line); `\\r\\n` loses its `\\r`; a line longer than `max_line_bytes` is dropped while
it streams past, so a 64 MiB line costs at most `max_line_bytes` + one chunk of memory, never the
line. Splitting is `bytes.split`/`find` (C speed); Python only touches whole lines (style.md §11).
The same newline rule decides where reading may start in a file: `is_line_end` (a resumed offset)
and `end_of_last_line` (`start_at: end`).
"""

from __future__ import annotations

import gzip
import os
import zlib

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "GZIP_ERRORS",
    "SKIPPED",
    "LineSplitter",
    "Piece",
    "end_of_last_line",
    "is_line_end",
    "open_gzip_at",
]

DEFAULT_MAX_LINE_BYTES = 16 * 1024 * 1024
"""Default line limit of every line source: far above a 32k-token reply with logprobs (ecosystem.md §0)."""

GZIP_ERRORS = (OSError, EOFError, zlib.error)
"""What a damaged or cut-off `.gz` raises while being read (gzip.BadGzipFile is an OSError)."""

SKIPPED = None
"""The data of a `Piece` that was a too-long line: skipped, only its end offset is kept."""

Piece = tuple[bytes | None, int]
"""(line without its newline, or SKIPPED; offset just after the line's `\\n`)."""


class LineSplitter:
    """Cuts a byte stream that starts at `offset` into lines, remembering the unterminated tail."""

    def __init__(self, max_line_bytes: int, offset: int = 0) -> None:
        self.max_line_bytes = max_line_bytes
        self.offset = offset
        self._pending = bytearray()
        self._skipping = False

    def reset(self, offset: int) -> None:
        """Forget the tail and restart at `offset` (after a truncation)."""
        self.offset = offset
        self._pending.clear()
        self._skipping = False

    def feed(self, chunk: bytes) -> list[Piece]:
        """Append `chunk` (the bytes at `self.offset`) and return the lines it completed, in order."""
        out: list[Piece] = []
        base = self.offset
        self.offset += len(chunk)
        start = 0
        if self._skipping:
            nl = chunk.find(b"\n")
            if nl == -1:
                return out
            out.append((SKIPPED, base + nl + 1))
            self._skipping = False
            start = nl + 1
        last_nl = chunk.rfind(b"\n", start)
        if last_nl == -1:
            self._buffer(chunk, start)
            return out
        if self._pending:
            first_nl = chunk.find(b"\n", start)
            self._pending += chunk[start:first_nl]
            out.append(self._piece(bytes(self._pending), base + first_nl + 1))
            self._pending.clear()
            start = first_nl + 1
        if start <= last_nl:
            region = chunk[start:last_nl]
            lines = region.split(b"\n")
            if b"\r" in region or len(region) > self.max_line_bytes:
                end = base + start
                for line in lines:
                    end += len(line) + 1
                    out.append(self._piece(line, end))
            else:  # the common case: no CR, no line can be too long; offsets are all that is left
                end = base + start
                for line in lines:
                    end += len(line) + 1
                    out.append((line, end))
        self._buffer(chunk, last_nl + 1)
        return out

    def take_partial(self) -> Piece | None:
        """Hand out the unterminated tail once (the writer is gone); SKIPPED if it was too long."""
        if self._skipping:
            self._skipping = False
            return (SKIPPED, self.offset)
        if not self._pending:
            return None
        data = bytes(self._pending)
        self._pending.clear()
        return self._piece(data, self.offset)

    def _buffer(self, chunk: bytes, start: int) -> None:
        if start >= len(chunk):
            return
        self._pending += chunk[start:]
        if len(self._pending) > self.max_line_bytes:
            self._pending.clear()
            self._skipping = True

    def _piece(self, line: bytes, end: int) -> Piece:
        if line.endswith(b"\r"):
            line = line[:-1]
        if len(line) > self.max_line_bytes:
            return (SKIPPED, end)
        return (line, end)


def open_gzip_at(fd: int, offset: int, chunk_bytes: int) -> gzip.GzipFile:
    """A decompressing reader over `fd` positioned at decompressed byte `offset` (for a resume).

    The descriptor stays owned by the caller. Raises one of GZIP_ERRORS on a damaged file.
    """
    reader = gzip.GzipFile(fileobj=os.fdopen(fd, "rb", closefd=False), mode="rb")
    remaining = offset
    while remaining > 0:
        skipped = reader.read1(min(remaining, chunk_bytes))
        if not skipped:
            break
        remaining -= len(skipped)
    return reader


def is_line_end(fd: int, offset: int, size: int) -> bool:
    """A resumed offset must sit just after a newline: a cheap second check against inode reuse by
    a file whose head happens to equal the old one's (a fingerprint alone cannot tell them apart)."""
    return offset == 0 or (offset <= size and os.pread(fd, 1, offset - 1) == b"\n")


def end_of_last_line(fd: int, size: int, block: int = 64 * 1024) -> int:
    """`start_at: end` starts after the last newline, so a half-written last line is read whole."""
    end = size
    while end > 0:
        start = max(0, end - block)
        nl = os.pread(fd, end - start, start).rfind(b"\n")
        if nl != -1:
            return start + nl + 1
        end = start
    return 0
