"""Read a finished dump once, line by line: the `scan` source.

Why apart from `file_tail`: a dump being diagnosed offline has no rotation, positions or waiting;
it is read whole, `.gz` decompressed on the fly, `-` meaning stdin. Blank lines are skipped
(Relax's diagnose does the same); CR before the newline is dropped.
"""

from __future__ import annotations

import gzip
import sys
from collections.abc import Iterator
from typing import BinaryIO

from .base import Line

__all__ = ["iter_file_lines"]


def _open(path: str) -> BinaryIO:
    if path == "-":
        return sys.stdin.buffer
    if path.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def iter_file_lines(path: str) -> Iterator[Line]:
    """Yield every non-blank line with its 1-based line number; the newline is stripped."""
    fh = _open(path)
    try:
        for line_no, raw in enumerate(fh, 1):
            data = raw.rstrip(b"\r\n")
            if data.strip():
                yield Line(data=data, origin=path, line_no=line_no)
    finally:
        if fh is not sys.stdin.buffer:
            fh.close()
