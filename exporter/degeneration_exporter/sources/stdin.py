"""`StdinSource`: JSONL piped into the daemon (`-`), read until end of input.

Why a source of its own: `producer | degeneration-exporter run --source -` must behave like a file
(same line rules: newline-terminated, CRLF tolerated, too-long lines skipped and counted) but has no
offset to commit, so its Lines carry `position=None`. End of input is the writer going away, so an
unterminated last line is handed out once, marked `partial` (ecosystem.md §7.5 rule 4).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, Literal

from pydantic import BaseModel, ConfigDict, Field

from .base import Line, Position, SourceStats
from .file_tail.config import MAX_CHUNK_BYTES, MAX_LINE_BYTES
from .file_tail.reader import DEFAULT_MAX_LINE_BYTES, SKIPPED, LineSplitter, Piece

__all__ = ["StdinConfig", "StdinSource"]

ORIGIN = "-"


class StdinConfig(BaseModel):
    """Options of the `stdin` source."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["stdin"] = Field("stdin", description="Source kind (the `sources:` discriminator).")
    name: str = Field("stdin", min_length=1, description="Source name; becomes the `source` label value.")
    max_line_bytes: int = Field(
        DEFAULT_MAX_LINE_BYTES,
        gt=0,
        le=MAX_LINE_BYTES,
        description="Longer lines are skipped to the next newline, counted too_long.",
    )
    read_chunk_bytes: int = Field(
        64 * 1024, gt=0, le=MAX_CHUNK_BYTES, description="Most bytes taken from the pipe per read."
    )


class StdinSource:
    """A finite source: `lines()` ends at end of input; `commit` has nothing to record."""

    def __init__(self, config: StdinConfig | None = None, *, stream: IO[bytes] | None = None) -> None:
        self.config = config or StdinConfig()
        self.name = self.config.name
        self.stats = SourceStats()
        self._stream = stream if stream is not None else sys.stdin.buffer
        self._closed = False
        self._line_no = 0

    def lines(self) -> Iterator[Line]:
        """Yield each line as soon as its newline arrives (no waiting for a full buffer)."""
        splitter = LineSplitter(self.config.max_line_bytes)
        read = getattr(self._stream, "read1", self._stream.read)
        while not self._closed:
            chunk = read(self.config.read_chunk_bytes)
            if not chunk:
                break
            with self.stats.lock:
                self.stats.bytes_read += len(chunk)
            yield from self._complete(splitter.feed(chunk))
        last = splitter.take_partial()
        if last is not None and not self._closed:
            yield from self._complete([last], partial=True)

    def commit(self, position: Position) -> None:
        """Nothing to record: stdin cannot be re-read."""

    def close(self) -> None:
        """Stop after the line being read; the stream itself belongs to the caller."""
        self._closed = True

    def _complete(self, pieces: list[Piece], *, partial: bool = False) -> list[Line]:
        """Number every piece and count the chunk's lines and skips under one lock acquisition."""
        lines: list[Line] = []
        for data, _end in pieces:
            self._line_no += 1
            if data is not SKIPPED:
                lines.append(Line(data, ORIGIN, self._line_no, None, partial=partial))
        too_long = len(pieces) - len(lines)
        with self.stats.lock:
            self.stats.lines_read += len(lines)
            if too_long:
                self.stats.rejected["too_long"] += too_long
        return lines
