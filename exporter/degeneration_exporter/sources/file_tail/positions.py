"""The positions file: committed offsets keyed by (device, inode), written atomically, and its lock.

Why: ecosystem.md §7.5 rule 7. A crash mid-write must leave the previous file intact (Loki #1304), so
we write a temp file in the same directory, fsync it, rename it over the old one and fsync the
directory. The entry keeps the path only for humans (`positions show`); identity is dev+inode checked
by the head fingerprint, so a file renamed while the daemon was down resumes at its offset.

Replay on demand (ecosystem.md §7.4, mtail#834): `forget_positions` and `reset_positions` edit the
file for `degeneration-exporter positions`. A daemon rewrites the whole file every `sync_interval`,
so an edit made under it would be undone; both therefore take `PositionsLock`, an exclusive `flock`
on `<file>.lock` that a running daemon holds for as long as it tails, and refuse while it is held.
"""

from __future__ import annotations

import fcntl
import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import orjson

from ...errors import PositionsInUse, SourceError
from .identity import FileId, Fingerprint, file_id_at

__all__ = [
    "POSITIONS_VERSION",
    "CorruptPositions",
    "PositionEntry",
    "PositionsLock",
    "current_size",
    "forget_positions",
    "load_positions",
    "lock_path",
    "reset_positions",
    "save_positions",
]

POSITIONS_VERSION = 1

_MAX_OFFSET = 2**63 - 1
"""Largest offset a file can have (off_t); anything beyond, or below 0, is not a position."""
_MAX_FINGERPRINT_LENGTH = 64 * 1024 * 1024


class CorruptPositions(SourceError):
    """The positions file exists and was read, but does not parse: it may be moved aside.

    An unreadable file (permissions, I/O error) is a plain SourceError instead: it is not corrupt,
    and moving it aside would recount every file for a problem a `chmod` fixes.
    """


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
    def from_json(cls, obj: object) -> PositionEntry:
        """Rebuild an entry; raises KeyError/TypeError/ValueError on a malformed or out-of-range one.

        Ranges are checked here, once: a parseable `"offset": -1` used to reach `pread` on every
        poll and stop the whole source.
        """
        if not isinstance(obj, dict):
            raise TypeError(f"expected an object, got {obj!r}")
        updated = _int_or_float(obj["updated"])
        if not math.isfinite(updated):
            raise ValueError(f"updated {updated!r} is not a finite time")
        return cls(
            file_id=FileId(_ranged(obj, "dev", 2**64 - 1), _ranged(obj, "ino", 2**64 - 1)),
            path=str(obj["path"]),
            offset=_ranged(obj, "offset", _MAX_OFFSET),
            fingerprint=Fingerprint(
                _ranged(obj, "fingerprint_length", _MAX_FINGERPRINT_LENGTH), str(obj["fingerprint"])
            ),
            updated=updated,
            complete=bool(obj.get("complete", False)),
        )


def load_positions(path: Path, bad_entries: list[str] | None = None) -> dict[FileId, PositionEntry] | None:
    """The stored entries, or None when no positions file exists yet (the very first start).

    Raises SourceError when the file exists but cannot be read (not corrupt: left in place), and
    CorruptPositions when it does not parse. With `bad_entries` given, a malformed or out-of-range
    entry is skipped and described there (that file alone is then read from byte 0); without it,
    such an entry makes the whole file CorruptPositions.
    """
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise SourceError(f"cannot read positions file {path}: {exc.strerror or exc}") from exc
    try:
        doc = orjson.loads(raw)
        if not isinstance(doc, dict) or doc.get("version") != POSITIONS_VERSION:
            raise ValueError(f"expected an object with version {POSITIONS_VERSION}")
        files = doc["files"]
        if not isinstance(files, list):
            raise ValueError("`files` is not a list")
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CorruptPositions(f"corrupt positions file {path}: {exc}") from exc
    entries: dict[FileId, PositionEntry] = {}
    for index, item in enumerate(files):
        try:
            entry = PositionEntry.from_json(item)
        except (KeyError, TypeError, ValueError) as exc:
            if bad_entries is None:
                raise CorruptPositions(f"corrupt positions file {path}: entry {index}: {exc}") from exc
            bad_entries.append(f"entry {index}: {type(exc).__name__}: {exc}")
            continue
        entries[entry.file_id] = entry
    return entries


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


def lock_path(path: Path) -> Path:
    """The lock file beside a positions file: `<name>.lock` (left in place; only the flock matters)."""
    return path.with_name(path.name + ".lock")


class PositionsLock:
    """An exclusive, non-blocking `flock` on `<positions file>.lock`, with the holder's pid inside.

    Why flock and not a pid file alone: the kernel drops the lock when its process dies, kill -9
    included, so a crashed daemon never blocks the next start or a `positions forget`. The pid is
    only for the error message. Held by `FileTailSource` from construction to `close()`, and by the
    edits below for their read-modify-write. Not re-entrant.
    """

    def __init__(self, path: Path) -> None:
        self.positions = path
        self.path = lock_path(path)
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise PositionsInUse (held elsewhere) / SourceError (cannot create it)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError as exc:
            raise SourceError(f"cannot open lock file {self.path}: {exc}") from exc
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            pid = _read_pid(fd)
            os.close(fd)
            holder = f"process {pid}" if pid is not None else "another process"
            raise PositionsInUse(
                f"positions file {self.positions} is in use by {holder} "
                f"(lock {self.path}); stop that daemon first",
                pid,
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        """Drop the lock (closing the descriptor releases the flock); idempotent."""
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)

    def __enter__(self) -> PositionsLock:
        self.acquire()
        return self

    def __exit__(
        self, _type: type[BaseException] | None, _exc: BaseException | None, _tb: TracebackType | None
    ) -> None:
        self.release()


def _read_pid(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).strip())
    except (OSError, ValueError):
        return None


def current_size(entry: PositionEntry) -> int | None:
    """Size of the file now at `entry.path` if it is still the same (device, inode); else None."""
    try:
        st = os.stat(entry.path)
    except OSError:
        return None
    return st.st_size if FileId.of(st) == entry.file_id else None


def _names_entry(target: str, entry: PositionEntry) -> bool:
    """`target` names `entry`: the same path (made absolute), or the same (device, inode) now."""
    return os.path.abspath(target) == os.path.abspath(entry.path) or file_id_at(target) == entry.file_id


def forget_positions(path: Path, targets: Sequence[str]) -> tuple[list[PositionEntry], list[str]]:
    """Remove the entries of `targets` so the next run reads those files from byte 0.

    Returns the removed entries and the targets that named no entry. Takes the lock (PositionsInUse
    while a daemon runs); writes atomically, and only when something was removed. A missing
    positions file is a SourceError: there is nothing to forget.
    """
    _require(path)
    with PositionsLock(path):
        stored = _load_existing(path)
        removed = [e for e in stored.values() if any(_names_entry(t, e) for t in targets)]
        unmatched = [t for t in targets if not any(_names_entry(t, e) for e in removed)]
        if removed:
            gone = {e.file_id for e in removed}
            save_positions(path, (e for e in stored.values() if e.file_id not in gone))
        return removed, unmatched


def reset_positions(path: Path) -> list[PositionEntry]:
    """Remove every entry; returns them. The file stays, empty, so the next start is not a *first*
    start: every file present is read from byte 0 whatever `start_at` says (replay everything).
    """
    _require(path)
    with PositionsLock(path):
        stored = _load_existing(path)
        save_positions(path, ())
        return list(stored.values())


def _require(path: Path) -> None:
    """Checked before locking, so editing a file that is not there leaves no lock file behind."""
    if not path.exists():
        raise SourceError(f"no positions file at {path}")


def _load_existing(path: Path) -> dict[FileId, PositionEntry]:
    stored = load_positions(path)
    if stored is None:
        raise SourceError(f"no positions file at {path}")
    return stored


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an integer, got {value!r}")
    return value


def _ranged(obj: dict[str, object], key: str, maximum: int) -> int:
    value = _int(obj[key])
    if not 0 <= value <= maximum:
        raise ValueError(f"{key} {value} is out of range 0..{maximum}")
    return value


def _int_or_float(value: object) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"expected a number, got {value!r}")
    return float(value)
