"""The work plan: inputs -> files (directories walked) -> pieces (whole files or line-aligned byte ranges).

Why split by range: one large dump would otherwise keep one core busy while the others idle. A plain
file over `chunk_bytes` is cut at line boundaries once its format is known from its first records;
files whose records span lines (streamed chunks, text-line logs) and compressed or `.pt` files are
never cut. The plan depends only on the inputs and `chunk_bytes`, never on the number of workers, and
pieces of one file carry the format the first piece detects, so the report is the same however run.
Inputs that cannot be scanned (missing, unreadable, a directory where a file is expected, a FIFO)
are returned as failures with a reason; the rest are scanned.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

from ..errors import RecordError
from ..formats import FORMATS
from ..formats.custom import CustomFormatOptions
from ..formats.lines import LineParser
from ..record import Delta
from ..sources.dump_file import SkippedLine, iter_file_lines

__all__ = ["DEFAULT_CHUNK_BYTES", "SCANNED_SUFFIXES", "Failure", "Piece", "expand_inputs", "plan_pieces"]

DEFAULT_CHUNK_BYTES = 2 * 1024 * 1024
"""Pieces of about this size: small enough to balance a few workers and bound what waits in memory."""
SCANNED_SUFFIXES = (".jsonl", ".jsonl.gz", ".json", ".pt")
"""What `scan DIR` picks up (recursively, sorted by path)."""
_PROBE_BYTES = 1024 * 1024
_ALIGN_READ = 64 * 1024


@dataclass(frozen=True, slots=True)
class Failure:
    """An input that could not be scanned (or not wholly): `path` and a one-line `reason`."""

    path: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"path": self.path, "reason": self.reason}


@dataclass(frozen=True, slots=True)
class Piece:
    """A unit of work: bytes [start, end) of `path` (end None: to the end), read on its own.

    `format_name` is fixed for the pieces after a file's first (the format its first records were
    detected as); `size` is the bytes it covers on disk, for progress."""

    path: str
    start: int = 0
    end: int | None = None
    format_name: str | None = None
    size: int = 0


def expand_inputs(names: Iterable[str]) -> tuple[list[str], list[Failure]]:
    """Files to scan in argument order (a directory: its `SCANNED_SUFFIXES` files, sorted) and failures."""
    files: list[str] = []
    failed: list[Failure] = []
    for name in names:
        if name != "-" and os.path.isdir(name):
            found = sorted(str(p) for p in Path(name).rglob("*") if p.name.endswith(SCANNED_SUFFIXES))
            if not found:
                failed.append(Failure(name, f"directory holds no {', '.join(SCANNED_SUFFIXES)} files"))
            for path in found:
                _sort(path, _unreadable(path), files, failed)
            continue
        _sort(name, None if name == "-" else _unreadable(name), files, failed)
    return files, failed


def _sort(path: str, reason: str | None, files: list[str], failed: list[Failure]) -> None:
    if reason is None:
        files.append(path)
    else:
        failed.append(Failure(path, reason))


def _unreadable(path: str) -> str | None:
    """Why `path` cannot be read as a dump, or None. A FIFO is refused: reading it could block forever."""
    try:
        mode = os.stat(path).st_mode
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return "is a FIFO (pipe it into `scan -` instead)"
    if not stat.S_ISREG(mode):
        return "is not a regular file"
    try:
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"cannot open: {exc.strerror}"
    return None


def plan_pieces(
    files: list[str],
    *,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    format_name: str | None = None,
    custom_fields: CustomFormatOptions | None = None,
    max_line_bytes: int,
) -> list[Piece]:
    """Every file as one piece, or, for a large plain file of one-line records, several."""
    pieces: list[Piece] = []
    for path in files:
        size = 0 if path == "-" else os.path.getsize(path)
        if path == "-" or size <= chunk_bytes or path.endswith((".gz", ".pt")):
            pieces.append(Piece(path, size=size))
            continue
        detected = _one_line_format(path, format_name, custom_fields, max_line_bytes, size)
        if detected is None:
            pieces.append(Piece(path, size=size))
            continue
        bounds = _line_bounds(path, size, chunk_bytes)
        for i, (start, end) in enumerate(pairwise(bounds)):
            pieces.append(Piece(path, start, end, None if i == 0 else detected, end - start))
    return pieces


def _one_line_format(
    path: str,
    format_name: str | None,
    custom_fields: CustomFormatOptions | None,
    max_line_bytes: int,
    size: int,
) -> str | None:
    """The format of `path` if its first record is one line (so the file may be cut); else None."""
    parser = LineParser(format_name, custom_fields)
    try:
        for line in iter_file_lines(path, max_line_bytes, end=min(size, _PROBE_BYTES)):
            if isinstance(line, SkippedLine):
                continue
            try:
                items = parser.parse_items(line.data)
            except RecordError:
                continue
            if parser.format_name is None or not items:
                continue
            if FORMATS[parser.format_name].text_lines or any(isinstance(i, Delta) for i in items):
                return None
            return parser.format_name
    except OSError:
        return None  # read as one piece: its read error is reported there
    return None


def _line_bounds(path: str, size: int, chunk_bytes: int) -> list[int]:
    """0, the first line start at or after each of `ceil(size / chunk_bytes)` equal cuts, and `size`."""
    bounds = [0]
    count = -(-size // chunk_bytes)
    with open(path, "rb") as fh:
        for target in (k * size // count for k in range(1, count)):
            if target <= bounds[-1]:
                continue
            fh.seek(target - 1)  # a line starts at target when byte target-1 is its predecessor's newline
            pos = target - 1
            while True:
                block = fh.read(_ALIGN_READ)
                if not block:
                    pos = size
                    break
                nl = block.find(b"\n")
                if nl >= 0:
                    pos += nl + 1
                    break
                pos += len(block)
            if bounds[-1] < pos < size:
                bounds.append(pos)
    bounds.append(size)
    return bounds
