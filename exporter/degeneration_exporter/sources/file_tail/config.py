"""`FileTailConfig`: every option of the file tail source, with its default and unit.

Why its own module: config mirrors components (style.md §6); the root settings only assemble this
model under `sources:`. Defaults follow ecosystem.md §7.3/§7.5 (16 MiB lines, 1 s poll, 5 s sync).
"""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator

from .discover import FollowSymlinks
from .reader import DEFAULT_MAX_LINE_BYTES

__all__ = [
    "DEFAULT_IGNORE_NAMES",
    "MAX_CHUNK_BYTES",
    "MAX_LINE_BYTES",
    "MAX_QUEUE_LINES",
    "FileTailConfig",
    "ReadOrder",
    "StartAt",
]

StartAt = Literal["beginning", "end"]
ReadOrder = Literal["fair", "oldest_first"]

DEFAULT_IGNORE_NAMES: tuple[str, ...] = ("*.tmp", "*.part", ".*.swp", "*~")

MAX_LINE_BYTES = 1024**3
"""Upper bound of `max_line_bytes` (and of the http_push body): beyond, one line is a memory incident."""
MAX_CHUNK_BYTES = 64 * 1024**2
"""Upper bound of `read_chunk_bytes`: a 1 TB chunk passed validation and then failed every poll."""
MAX_QUEUE_LINES = 1_000_000
_HOUR, _DAY = timedelta(hours=1), timedelta(days=1)
_LONGEST: dict[str, timedelta] = {
    "poll_interval": _HOUR,
    "glob_interval": _HOUR,
    "sync_interval": _HOUR,
    "rotate_wait": _DAY,
    "gz_quiet_period": _DAY,
    "idle_close_after": 30 * _DAY,
    "positions_retention": 3650 * _DAY,
}
"""Upper bounds of the durations: beyond them a wait overflows or a setting is surely a unit mistake."""


class FileTailConfig(BaseModel):
    """Options of one `file_tail` source (docs/tailing.md lists each with its guarantee)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: Literal["file_tail"] = Field("file_tail", description="Source kind (the `sources:` discriminator).")
    name: str = Field("files", min_length=1, description="Source name; becomes the `source` label value.")
    include: tuple[str, ...] = Field(
        (), description="Glob patterns of files to tail; `**` matches any number of directories."
    )
    exclude: tuple[str, ...] = Field(
        (),
        description=(
            "Glob patterns removed from the matches; a pattern without `/` is matched against the file "
            "name, one with `/` against the whole path."
        ),
    )
    ignore_names: tuple[str, ...] = Field(
        DEFAULT_IGNORE_NAMES,
        description="File-name patterns never tailed (temp and partial files written before a rename).",
    )
    follow_symlinks: FollowSymlinks = Field(
        "within_root",
        description=(
            "Which symlinks matched by `include` are followed: `within_root` only those whose target lies "
            "under the pattern's fixed leading directory (a `passwd.jsonl -> /etc/passwd` link is not), "
            "`always`, or `never`."
        ),
    )
    start_at: StartAt = Field(
        "beginning",
        description=(
            "Where to start in files present at the very first start (no positions file yet); files seen "
            "later always start at byte 0 and checkpointed files resume."
        ),
    )
    read_order: ReadOrder = Field(
        "fair",
        description=(
            "`fair` reads a few chunks from each file in turn (generation logs); `oldest_first` drains "
            "files in order of modification time, so rollout steps complete in order."
        ),
    )
    poll_interval: timedelta = Field(
        timedelta(seconds=1), description="How often watched files are checked for new bytes."
    )
    glob_interval: timedelta = Field(
        timedelta(seconds=5), description="How often the include globs are re-evaluated for new files."
    )
    rotate_wait: timedelta = Field(
        timedelta(seconds=30),
        description="How long a file rotated away or deleted is still drained through its open descriptor.",
    )
    idle_close_after: timedelta = Field(
        timedelta(minutes=5),
        description="A file read to its end and unchanged this long has its descriptor closed till it grows.",
    )
    fingerprint_bytes: int = Field(
        4096,
        gt=0,
        le=1024**2,
        description="Bytes at the head of a file hashed to detect inode reuse and truncation.",
    )
    max_line_bytes: int = Field(
        DEFAULT_MAX_LINE_BYTES,
        gt=0,
        le=MAX_LINE_BYTES,
        description="Longer lines are skipped to the next newline, counted too_long.",
    )
    read_chunk_bytes: int = Field(
        1024 * 1024, gt=0, le=MAX_CHUNK_BYTES, description="Bytes read from one file per system call."
    )
    positions_file: Path | None = Field(
        None,
        description="JSON file of committed offsets; null: the daemon uses "
        "state.directory/positions-NAME.json (a bare FileTailSource keeps them in memory only).",
    )
    sync_interval: timedelta = Field(
        timedelta(seconds=5),
        description="How often committed offsets are written; bounds the lines recounted after a crash.",
    )
    positions_retention: timedelta = Field(
        timedelta(days=7), description="Checkpoints of files unseen this long are dropped from the file."
    )
    gz_quiet_period: timedelta = Field(
        timedelta(seconds=10),
        description="A `.gz` file is read, once and whole, after it has not been modified for this long.",
    )
    queue_max_lines: int = Field(
        10_000,
        gt=0,
        le=MAX_QUEUE_LINES,
        description="Lines buffered between reader and pipeline; when full, reading pauses.",
    )

    @field_validator("poll_interval", "glob_interval", "sync_interval")
    @classmethod
    def _positive(cls, value: timedelta) -> timedelta:
        if value <= timedelta(0):
            raise ValueError("must be a positive duration")
        return value

    @field_validator("rotate_wait", "gz_quiet_period", "idle_close_after", "positions_retention")
    @classmethod
    def _not_negative(cls, value: timedelta) -> timedelta:
        if value < timedelta(0):
            raise ValueError("must not be negative")
        return value

    @field_validator(*_LONGEST)
    @classmethod
    def _bounded(cls, value: timedelta, info: ValidationInfo) -> timedelta:
        longest = _LONGEST[str(info.field_name)]
        if value > longest:
            raise ValueError(f"must be at most {longest}")
        return value
