"""The positions file: committed offsets keyed by (device, inode), written atomically.

Why: ecosystem.md §7.5 rule 7. A crash mid-write must leave the previous file intact (Loki #1304), so
we write a temp file in the same directory, fsync it, rename it over the old one and fsync the
directory. The entry keeps the path only for humans (`positions show`); identity is dev+inode checked
by the head fingerprint, so a file renamed while the daemon was down resumes at its offset.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import orjson

from ...errors import SourceError
from .identity import FileId, Fingerprint

__all__ = ["POSITIONS_VERSION", "PositionEntry", "load_positions", "save_positions"]

POSITIONS_VERSION = 1


@dataclass(frozen=True, slots=True)
class PositionEntry:
    """Where reading of one file stands: everything before `offset` was classified and counted.

    For a `.gz` file `offset` counts decompressed bytes and `complete` says the whole file was.
    """

    file_id: FileId
    path: str
    offset: int
    fingerprint: Fingerprint
    updated: float
    complete: bool = False

    def to_json(self) -> dict[str, object]:
        return {
            "dev": self.file_id.dev,
            "ino": self.file_id.ino,
            "path": self.path,
            "offset": self.offset,
            "fingerprint_length": self.fingerprint.length,
            "fingerprint": self.fingerprint.digest,
            "complete": self.complete,
            "updated": self.updated,
        }

    @classmethod
    def from_json(cls, obj: dict[str, object]) -> PositionEntry:
        """Rebuild an entry; raises KeyError/TypeError/ValueError on a malformed one."""
        return cls(
            file_id=FileId(_int(obj["dev"]), _int(obj["ino"])),
            path=str(obj["path"]),
            offset=_int(obj["offset"]),
            fingerprint=Fingerprint(_int(obj["fingerprint_length"]), str(obj["fingerprint"])),
            updated=float(_int_or_float(obj["updated"])),
            complete=bool(obj.get("complete", False)),
        )


def load_positions(path: Path) -> dict[FileId, PositionEntry] | None:
    """The stored entries, or None when no positions file exists yet (the very first start).

    Raises SourceError when the file exists but cannot be read or parsed.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SourceError(f"cannot read positions file {path}: {exc}") from exc
    try:
        doc = orjson.loads(raw)
        if not isinstance(doc, dict) or doc.get("version") != POSITIONS_VERSION:
            raise ValueError(f"expected an object with version {POSITIONS_VERSION}")
        files = doc["files"]
        if not isinstance(files, list):
            raise ValueError("`files` is not a list")
        entries = [PositionEntry.from_json(item) for item in files]
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise SourceError(f"corrupt positions file {path}: {exc}") from exc
    return {entry.file_id: entry for entry in entries}


def save_positions(path: Path, entries: Iterable[PositionEntry]) -> None:
    """Replace the positions file atomically (temp file, fsync, rename, fsync of the directory)."""
    doc = {"version": POSITIONS_VERSION, "files": [e.to_json() for e in entries]}
    payload = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        try:
            view = memoryview(payload)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as exc:
        raise SourceError(f"cannot write positions file {path}: {exc}") from exc


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _int_or_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)
