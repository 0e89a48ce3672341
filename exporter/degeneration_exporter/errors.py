"""The exception tree of degeneration-exporter.

```
DegenerationError                  base class, never raised itself
├── ConfigError(ValueError)        bad settings; names the dotted field; exit 2 before anything starts
├── RecordError(ValueError)        one line is unusable; .reason becomes the rejected-lines label value
│   ├── InvalidJson                the line is not a JSON object
│   ├── MissingField(path)         a required field is absent or of the wrong type
│   ├── LineTooLong(size_bytes)    the line exceeded max_line_bytes
│   ├── EncodingError              the line is not valid UTF-8
│   ├── PartialLine                an unterminated final fragment that did not parse
│   └── UnknownFormat(candidates)  format detection found no format, or several, for this record
├── SourceError(OSError)           a source cannot read; retried at the next poll and counted
│   └── PositionsInUse(pid)        another process holds the positions file's lock
└── SinkError                      an export failed; retried by the sink, counted, never fatal
```
Subclassing builtins keeps plain `except ValueError` / `except OSError` working.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "ConfigError",
    "DegenerationError",
    "EncodingError",
    "InvalidJson",
    "LineTooLong",
    "MissingField",
    "PartialLine",
    "PositionsInUse",
    "RecordError",
    "RejectReason",
    "SinkError",
    "SourceError",
    "UnknownFormat",
]

RejectReason = Literal[
    "invalid_json", "missing_field", "too_long", "encoding", "partial_line", "unknown_format", "internal"
]


class DegenerationError(Exception):
    """Base of every error this package raises on purpose."""


class ConfigError(DegenerationError, ValueError):
    """Settings are invalid. Raised by config loading and parameter models; the CLI exits 2.

    `field` is the dotted path of the offending setting (for example `detectors.relax_compression.stride`).
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field


class RecordError(DegenerationError, ValueError):
    """One input line cannot become a Record. Raised by formats; the pipeline counts it by `reason`."""

    reason: RejectReason = "invalid_json"


class InvalidJson(RecordError):
    """The line is not a JSON object."""

    reason: RejectReason = "invalid_json"


class MissingField(RecordError):
    """A field the format needs is absent or has the wrong type; `path` names it."""

    reason: RejectReason = "missing_field"

    def __init__(self, path: str, message: str | None = None) -> None:
        super().__init__(message or f"missing or invalid field {path!r}")
        self.path = path


class LineTooLong(RecordError):
    """The line was longer than `max_line_bytes`; it was skipped to the next newline."""

    reason: RejectReason = "too_long"

    def __init__(self, size_bytes: int | None, limit_bytes: int) -> None:
        size = f"line of {size_bytes} bytes" if size_bytes is not None else "line"
        super().__init__(f"{size} exceeds max_line_bytes={limit_bytes}")
        self.size_bytes = size_bytes
        self.limit_bytes = limit_bytes


class EncodingError(RecordError):
    """The line is not valid UTF-8."""

    reason: RejectReason = "encoding"


class PartialLine(RecordError):
    """A final unterminated fragment, parsed once after its writer went away, was invalid."""

    reason: RejectReason = "partial_line"


class UnknownFormat(RecordError):
    """Format detection could not pick one format for this record. Raised by `formats.detect_format`.

    `candidates` lists the formats that matched (several: ambiguous) or the ones tried (none matched).
    """

    reason: RejectReason = "unknown_format"

    def __init__(self, message: str, candidates: tuple[str, ...]) -> None:
        super().__init__(message)
        self.candidates = candidates


class SourceError(DegenerationError, OSError):
    """A source could not read (permissions, vanished directory). Retried at the next poll and counted."""


class PositionsInUse(SourceError):
    """Another process holds the lock of a positions file (a running daemon, or a `positions` edit).

    Raised by `sources/file_tail/positions.py` `PositionsLock`; the daemon turns it into a
    ConfigError naming the source's `positions_file`, `positions forget|reset` into exit 2.
    `pid` is the holder's process id as it wrote it into the lock file, or None if unreadable.
    """

    def __init__(self, message: str, pid: int | None) -> None:
        super().__init__(message)
        self.pid = pid


class SinkError(DegenerationError):
    """An export failed (OTLP endpoint down). Retried by the sink, counted, never fatal."""
