"""`CommitLedger`: what was handed to the pipeline and what it committed, per file and read epoch.

Why: offsets may only advance once a record was classified and counted (ecosystem.md §7.5 rule 7),
but the reader runs ahead of the pipeline. Each time reading of a file (re)starts at some offset
(first open, truncation) it gets a fresh key `dev:ino#serial`, so a late commit for the bytes before
a truncation can never move the new epoch's offset. Too-long lines skipped by the reader produce no
commit of their own; their end offset is chained behind the line before them, so the checkpoint
still moves past them (and restarts do not recount them).
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

from .identity import FileId, Fingerprint
from .positions import PositionEntry

__all__ = ["CommitLedger", "ResumePoint"]


@dataclass(frozen=True, slots=True)
class ResumePoint:
    """A previous read of a file: its head fingerprint, where to go on, and the key to reuse if any."""

    fingerprint: Fingerprint
    offset: int
    complete: bool
    key: str | None


@dataclass(slots=True)
class _Progress:
    file_id: FileId
    serial: int
    path: str
    fingerprint: Fingerprint
    committed: int
    emitted: int
    size: int
    updated: float
    compressed: bool = False
    end_offset: int | None = None
    retired: bool = False
    deleted: bool = False
    skip_after: dict[int, int] = field(default_factory=dict)

    @property
    def complete(self) -> bool:
        return self.end_offset is not None and self.committed >= self.end_offset


class CommitLedger:
    """Thread-safe table of read progress; the reader writes, `commit()` and the checkpointer read."""

    def __init__(self, stored: dict[FileId, PositionEntry] | None) -> None:
        self.first_start = stored is None
        self._stored: dict[FileId, PositionEntry] = dict(stored or {})
        self._live: dict[str, _Progress] = {}
        self._serials = itertools.count(1)
        self._lock = threading.Lock()

    def resume_point(self, file_id: FileId) -> ResumePoint | None:
        """Where reading of this file stopped before: this process's last epoch, else the stored one.

        A file this process already read (rotated away, then found again under a watched name) resumes
        where the reader stopped, under the same key, so its lines in flight are neither lost nor re-read.
        """
        with self._lock:
            previous = [p for p in self._live.values() if p.file_id == file_id and not p.deleted]
            if previous:
                last = max(previous, key=lambda p: p.serial)
                done = last.end_offset is not None
                return ResumePoint(last.fingerprint, last.emitted, done, f"{file_id}#{last.serial}")
            entry = self._stored.get(file_id)
            if entry is None:
                return None
            return ResumePoint(entry.fingerprint, entry.offset, entry.complete, None)

    def reopen(self, key: str, now: float) -> None:
        """Continue an epoch retired by this process (see `resume_point`)."""
        with self._lock:
            progress = self._live[key]
            progress.retired, progress.updated = False, now

    def open(
        self,
        file_id: FileId,
        path: str,
        fingerprint: Fingerprint,
        offset: int,
        size: int,
        now: float,
        *,
        compressed: bool = False,
    ) -> str:
        """Start a read epoch at `offset`; returns the key its Positions carry."""
        with self._lock:
            serial = next(self._serials)
            key = f"{file_id}#{serial}"
            self._stored.pop(file_id, None)
            self._live[key] = _Progress(
                file_id, serial, path, fingerprint, offset, offset, size, now, compressed=compressed
            )
            return key

    def note_emitted(self, key: str, end: int) -> None:
        """A line ending at `end` is about to be handed to the pipeline."""
        with self._lock:
            self._live[key].emitted = end

    def note_skipped(self, key: str, end: int) -> None:
        """A too-long line ending at `end` was skipped: commit past it once the line before it is."""
        with self._lock:
            progress = self._live[key]
            if progress.committed >= progress.emitted:
                progress.committed = max(progress.committed, end)
            else:
                progress.skip_after[progress.emitted] = end
            progress.emitted = end

    def commit(self, key: str, offset: int) -> None:
        """Everything before `offset` in this epoch was counted; unknown keys are ignored."""
        with self._lock:
            progress = self._live.get(key)
            if progress is None or offset <= progress.committed:
                return
            progress.committed = offset
            while (skip_to := progress.skip_after.pop(progress.committed, None)) is not None:
                progress.committed = skip_to

    def observe(self, key: str, *, path: str, size: int, fingerprint: Fingerprint, now: float) -> None:
        """Refresh what the reader last saw of the file (for lag and the positions file)."""
        with self._lock:
            progress = self._live[key]
            progress.path, progress.size, progress.updated = path, size, now
            progress.fingerprint = fingerprint

    def mark_end(self, key: str, end: int) -> None:
        """A compressed file was read whole; it is complete once committed up to `end`."""
        with self._lock:
            self._live[key].end_offset = end

    def retire(self, key: str, now: float, *, deleted: bool = False) -> None:
        """No more lines will come from this epoch; late commits still count until it is superseded.

        `deleted`: the file had no name left when closed, so its inode can only come back as a new
        file: it is neither resumed nor persisted.
        """
        with self._lock:
            progress = self._live[key]
            progress.retired, progress.updated, progress.deleted = True, now, deleted

    def lag_bytes(self) -> int:
        """Bytes of plain files not yet committed: sum of size minus committed offset."""
        with self._lock:
            live = [p for p in self._live.values() if not p.retired and not p.compressed]
            return sum(max(0, p.size - p.committed) for p in live)

    def snapshot(self, now: float, retention: float) -> list[PositionEntry]:
        """Entries to persist: the newest epoch per file, dropping superseded and expired ones."""
        with self._lock:
            newest: dict[FileId, _Progress] = {}
            for progress in self._live.values():
                best = newest.get(progress.file_id)
                if best is None or progress.serial > best.serial:
                    newest[progress.file_id] = progress
            keep = {id(p) for p in newest.values()}
            for key, progress in list(self._live.items()):
                expired = progress.retired and now - progress.updated > retention
                if id(progress) not in keep or expired or progress.deleted:
                    del self._live[key]
            for file_id, entry in list(self._stored.items()):
                if now - entry.updated > retention:
                    del self._stored[file_id]
            entries = [
                PositionEntry(p.file_id, p.path, p.committed, p.fingerprint, p.updated, p.complete)
                for p in newest.values()
                if not (p.deleted or (p.retired and now - p.updated > retention))
            ]
            entries.extend(e for e in self._stored.values() if e.file_id not in newest)
            return entries
