"""`FileTailer`: the single-threaded state machine behind the file tail source.

Why a separate class: discovery, rotation, truncation and the line reader are decided here with an
injected clock and an `emit` callback, so the model-based test can drive it step by step (as Vector's
`file_watcher` tests do) while `FileTailSource` only adds the threads, the queue and the checkpoints.
Rules implemented: ecosystem.md §7.5 rules 1-6 (docs/tailing.md states them exactly).
"""

from __future__ import annotations

import gzip
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass

from ..base import Line, Position, SourceStats
from .config import FileTailConfig
from .descriptors import DescriptorBudget, process_budget
from .discover import Discovered, PathFilter, discover_files
from .identity import FileId, Fingerprint, file_id_at, read_fingerprint
from .ledger import CommitLedger
from .reader import GZIP_ERRORS, SKIPPED, LineSplitter, Piece, end_of_last_line, is_line_end, open_gzip_at

__all__ = ["FileTailer"]

log = logging.getLogger(__name__)

MAX_CHUNKS_PER_POLL = 8
"""Chunks read from one file per call before `oldest_first` checks the queue again."""
FAIR_QUANTUM_BYTES = 64 * 1024
"""`read_order: fair` reads at most this many bytes (and `read_chunk_bytes`) from each file per turn,
so files with equal write rates stay within one quantum of each other: fair by bytes, not by chunks
(8 chunks of 1 MiB per turn let one of four equal files lag by 3,000 lines)."""


@dataclass(slots=True)
class _Tracked:
    """One file being read: its open descriptor (None while idle) and where reading stands."""

    key: str
    file_id: FileId
    path: str
    fd: int | None
    splitter: LineSplitter
    fingerprint: Fingerprint
    size: int
    mtime_ns: int
    last_growth: float
    opened_mtime_ns: int
    line_no: int = 0
    rotated_at: float | None = None
    gz: gzip.GzipFile | None = None
    last_read: float = 0.0


class FileTailer:
    """Finds files, reads new complete lines and hands them to `emit`, one poll at a time."""

    def __init__(
        self,
        config: FileTailConfig,
        ledger: CommitLedger,
        stats: SourceStats,
        emit: Callable[[Line], None],
        *,
        clock: Callable[[], float],
        wall_clock: Callable[[], float],
        budget: DescriptorBudget | None = None,
    ) -> None:
        """`budget`: descriptors this tailer may hold (default: the process-wide `process_budget()`)."""
        self.config = config
        self._ledger = ledger
        self._stats = stats
        self._emit = emit
        self._clock = clock
        self._wall = wall_clock
        self._filter = PathFilter(config.exclude, config.ignore_names)
        self._tracked: dict[FileId, _Tracked] = {}
        self._finished_gz: set[FileId] = set()
        self._failed: set[FileId] = set()
        self._first_discovery = True
        self.budget = budget if budget is not None else process_budget()
        self._open_fds = 0
        self._busy: FileId | None = None  # the file being polled: never evicted under its own read
        self._turn = 0
        fair = config.read_order == "fair"
        self._chunk_bytes = (
            min(config.read_chunk_bytes, FAIR_QUANTUM_BYTES) if fair else config.read_chunk_bytes
        )
        self._chunks_per_call = 1 if fair else MAX_CHUNKS_PER_POLL

    @property
    def files_watched(self) -> int:
        return len(self._tracked)

    def discover(self) -> None:
        """Re-evaluate the globs: follow renames into watched names and open new files."""
        found = discover_files(self.config.include, self._filter, self.config.follow_symlinks)
        at_startup, self._first_discovery = self._first_discovery, False
        self._finished_gz &= found.keys()
        for file_id, seen in found.items():
            tracked = self._tracked.get(file_id)
            if tracked is not None:
                if tracked.path != seen.path and file_id_at(tracked.path) != file_id:
                    tracked.path, tracked.rotated_at = seen.path, None
            elif file_id not in self._finished_gz:
                try:
                    self._open(seen, at_startup=at_startup)
                except (OSError, ValueError) as exc:  # one file's error never stops the others
                    self._count_read_error(file_id, seen.path, exc)
        self._set_watched()

    def poll(self) -> bool:
        """Read every watched file once; True when some file still has unread bytes.

        `fair`: a few chunks per file in turn. `oldest_first` (rule 9): files by modification time
        at open, each read to its end before the next, so rollout steps complete in order.
        """
        more = False
        drain = self.config.read_order == "oldest_first"
        tracked_files = list(self._tracked.values())
        if drain:
            tracked_files.sort(key=lambda t: (t.opened_mtime_ns, t.path))
        elif tracked_files:  # start each turn one file further, so no file is always served first
            self._turn = (self._turn + 1) % len(tracked_files)
            tracked_files = tracked_files[self._turn :] + tracked_files[: self._turn]
        for tracked in tracked_files:
            self._busy = tracked.file_id
            try:
                while self._poll_file(tracked):
                    if not drain:
                        more = True
                        break
            except OSError as exc:
                self._count_read_error(tracked.file_id, tracked.path, exc)
        self._busy = None
        self._set_watched()
        return more

    def close(self) -> None:
        """Close every descriptor (offsets stay in the ledger)."""
        for tracked in self._tracked.values():
            self._close_fd(tracked)
        self._tracked.clear()

    # -- opening -------------------------------------------------------------------------------

    def _open(self, seen: Discovered, *, at_startup: bool) -> None:
        is_gz = seen.path.endswith(".gz")
        if is_gz and self._wall() - seen.mtime < self.config.gz_quiet_period.total_seconds():
            return
        try:
            fd = self._os_open(seen.path)
        except OSError as exc:
            self._count_read_error(seen.file_id, seen.path, exc)
            return
        if fd is None:
            return  # no descriptor free: found again at the next glob pass
        try:
            self._open_fd(fd, seen, at_startup=at_startup, is_gz=is_gz)
        except BaseException:
            if seen.file_id not in self._tracked or self._tracked[seen.file_id].fd != fd:
                self._os_close(
                    fd
                )  # every error path closes what it opened (one leak per poll was 86,000 a day)
            raise

    def _open_fd(self, fd: int, seen: Discovered, *, at_startup: bool, is_gz: bool) -> None:
        """Decide where an opened file starts and track it; the caller closes `fd` if this raises."""
        st = os.fstat(fd)
        if FileId.of(st) != seen.file_id:
            self._os_close(fd)
            return
        start = self._start(fd, seen, st.st_size, at_startup=at_startup, is_gz=is_gz)
        if start is None:
            self._os_close(fd)
            self._finished_gz.add(seen.file_id)
            return
        key, offset = start
        gz = None
        if is_gz:
            try:
                gz = open_gzip_at(fd, offset, self.config.read_chunk_bytes)
            except GZIP_ERRORS as exc:
                self._os_close(fd)
                self._count_read_error(seen.file_id, seen.path, exc)
                self._finished_gz.add(seen.file_id)  # not retried until it vanishes and comes back
                return
        fingerprint = read_fingerprint(fd, self.config.fingerprint_bytes)
        now = self._clock()
        if key is None:
            key = self._ledger.open(
                seen.file_id, seen.path, fingerprint, offset, st.st_size, self._wall(), compressed=is_gz
            )
        tracked = _Tracked(
            key,
            seen.file_id,
            seen.path,
            fd,
            LineSplitter(self.config.max_line_bytes, offset),
            fingerprint,
            st.st_size,
            st.st_mtime_ns,
            now,
            st.st_mtime_ns,
            gz=gz,
            last_read=now,
        )
        self._tracked[seen.file_id] = tracked
        self._failed.discard(seen.file_id)

    def _start(
        self, fd: int, seen: Discovered, size: int, *, at_startup: bool, is_gz: bool
    ) -> tuple[str | None, int] | None:
        """Rules 2-3: (key to continue or None for a new epoch, offset); None when a `.gz` is done.

        A previous read whose head fingerprint still matches resumes; a mismatch (inode reuse,
        truncation while down) restarts at 0 and counts a truncation; an unknown file starts at 0,
        or per `start_at` if it was present at the very first start.
        """
        resume = self._ledger.resume_point(seen.file_id)
        if resume is not None:
            if resume.fingerprint.still_matches(fd) and (is_gz or is_line_end(fd, resume.offset, size)):
                if resume.complete:
                    return None
                if resume.key is not None:
                    self._ledger.reopen(resume.key, self._wall())
                return resume.key, resume.offset
            self._count("truncations")
            return None, 0
        if at_startup and self._ledger.first_start and self.config.start_at == "end" and not is_gz:
            return None, end_of_last_line(fd, size)
        return None, 0

    # -- reading -------------------------------------------------------------------------------

    def _poll_file(self, tracked: _Tracked) -> bool:
        if tracked.gz is not None:
            return self._poll_gz(tracked)
        now = self._clock()
        if tracked.rotated_at is None:
            self._check_path(tracked, now)
        if tracked.fd is None:
            if tracked.rotated_at is not None:
                self._emit_partial(tracked)
                self._retire(tracked)
                return False
            if not self._reopen_if_grown(tracked):
                return False
        assert tracked.fd is not None
        tracked.last_read = now
        st = os.fstat(tracked.fd)
        size = st.st_size
        changed = (size, st.st_mtime_ns) != (tracked.size, tracked.mtime_ns)
        if size < tracked.splitter.offset or (changed and self._is_rewritten(tracked)):
            self._restart_after_truncation(tracked, size)
        more = self._read_chunks(tracked)
        if changed:
            tracked.size, tracked.mtime_ns, tracked.last_growth = size, st.st_mtime_ns, now
        self._ledger.observe(
            tracked.key, path=tracked.path, size=size, fingerprint=tracked.fingerprint, now=self._wall()
        )
        if more:
            return True
        if tracked.rotated_at is not None:
            if now - tracked.rotated_at >= self.config.rotate_wait.total_seconds():
                self._emit_partial(tracked)
                self._retire(tracked)
        elif now - tracked.last_growth >= self.config.idle_close_after.total_seconds():
            self._close_fd(tracked)
        return False

    def _check_path(self, tracked: _Tracked, now: float) -> None:
        """Rule 5: the path naming another inode (rename+create, replace) or nothing (delete, rename)."""
        try:
            st = os.stat(tracked.path)
        except FileNotFoundError:
            st = None
        if st is not None and FileId.of(st) == tracked.file_id:
            return
        tracked.rotated_at = now
        self._count("rotations")
        if st is not None:
            new_id = FileId.of(st)
            if new_id not in self._tracked and not self._filter.is_excluded(tracked.path):
                self._open(Discovered(tracked.path, new_id, st.st_size, st.st_mtime), at_startup=False)

    def _reopen_if_grown(self, tracked: _Tracked) -> bool:
        """An idle file's descriptor was closed; reopen it once its size moves."""
        st = os.stat(tracked.path)
        if st.st_size == tracked.splitter.offset and st.st_size == tracked.size:
            return False
        fd = self._os_open(tracked.path)
        if fd is None:
            return False  # no descriptor free: tried again at the next poll
        try:
            same = FileId.of(os.fstat(fd)) == tracked.file_id
        except OSError:
            same = False
        if not same:
            self._os_close(fd)
            return False
        tracked.fd = fd
        return True

    def _read_chunks(self, tracked: _Tracked) -> bool:
        assert tracked.fd is not None
        for _ in range(self._chunks_per_call):
            start = tracked.splitter.offset
            data = os.pread(tracked.fd, self._chunk_bytes, start)
            if not data:
                return False
            if not self._head_unchanged(tracked, start, data):
                self._restart_after_truncation(tracked, os.fstat(tracked.fd).st_size)
                return True  # the bytes were the new file's, at our old offset: read it from 0 instead
            self._count("bytes_read", len(data))
            self._deliver(tracked, tracked.splitter.feed(data))
        return True

    def _head_unchanged(self, tracked: _Tracked, start: int, data: bytes) -> bool:
        """After a read and before its lines go out: does the file still begin as it did?

        Why after: a copytruncate can land between the size/head check of `_poll_file` and a read
        (the reader stalled by a GC pause or a busy machine, or handing out the previous chunk), and
        when the writer has refilled the file past our offset meanwhile, `pread` returns the new file's
        bytes from mid-file: a spliced line, its first lines never read, the truncation never counted.
        Also extends a short fingerprint as the file grows, from this same head (never from a later one).
        """
        limit = self.config.fingerprint_bytes
        assert tracked.fd is not None
        head = data[:limit]
        if start > 0 or len(head) < tracked.fingerprint.length:
            head = os.pread(tracked.fd, limit, 0)
        if not tracked.fingerprint.starts(head):
            return False
        if len(head) > tracked.fingerprint.length:
            tracked.fingerprint = Fingerprint.of(head)
        return True

    def _poll_gz(self, tracked: _Tracked) -> bool:
        """Rule 6: a quiet `.gz` is read whole, once, then never again."""
        assert tracked.gz is not None
        try:
            for _ in range(MAX_CHUNKS_PER_POLL):
                data = tracked.gz.read1(self.config.read_chunk_bytes)  # read() drops data before a cut
                if not data:
                    break
                self._count("bytes_read", len(data))
                self._deliver(tracked, tracked.splitter.feed(data))
            else:
                return True
        except GZIP_ERRORS as exc:
            self._count_read_error(tracked.file_id, tracked.path, exc)
        self._emit_partial(tracked)
        self._ledger.mark_end(tracked.key, tracked.splitter.offset)
        self._finished_gz.add(tracked.file_id)
        self._retire(tracked)
        return False

    def _is_rewritten(self, tracked: _Tracked) -> bool:
        """Truncated and refilled past our offset between two polls: the head bytes changed."""
        assert tracked.fd is not None
        return tracked.splitter.offset > 0 and not tracked.fingerprint.still_matches(tracked.fd)

    def _restart_after_truncation(self, tracked: _Tracked, size: int) -> None:
        """Rule 5 copytruncate: a new read epoch from byte 0 (bytes written before the cut are lost)."""
        assert tracked.fd is not None
        self._emit_partial(tracked)
        self._ledger.retire(tracked.key, self._wall())
        self._count("truncations")
        tracked.fingerprint = read_fingerprint(tracked.fd, self.config.fingerprint_bytes)
        tracked.key = self._ledger.open(
            tracked.file_id, tracked.path, tracked.fingerprint, 0, size, self._wall()
        )
        tracked.splitter.reset(0)
        tracked.line_no = 0

    # -- handing lines out ---------------------------------------------------------------------

    def _deliver(self, tracked: _Tracked, pieces: list[Piece], *, partial: bool = False) -> None:
        """Turn pieces into Lines; a skipped too-long line is chained behind the line before it."""
        batch: list[Line] = []
        path, key = tracked.path, tracked.key
        for data, end in pieces:
            tracked.line_no += 1
            if data is SKIPPED:
                self._hand_out(key, batch)
                batch = []
                self._count_rejected("too_long")
                self._ledger.note_skipped(key, end)
            else:
                batch.append(Line(data, path, tracked.line_no, Position(key, end), partial))
        self._hand_out(key, batch)

    def _hand_out(self, key: str, batch: list[Line]) -> None:
        """Note the batch's last offset as handed out, then pass each line on (may block)."""
        if not batch:
            return
        last = batch[-1].position
        assert last is not None
        self._ledger.note_emitted(key, last.offset)
        stats = self._stats
        for line in batch:
            self._emit(line)
            stats.lines_read += 1  # one writer (this thread): no lock needed for an int field

    def _emit_partial(self, tracked: _Tracked) -> None:
        """Rule 4: once the writer is gone, an unterminated fragment goes out once, marked partial."""
        piece = tracked.splitter.take_partial()
        if piece is not None:
            self._deliver(tracked, [piece], partial=True)

    def _retire(self, tracked: _Tracked) -> None:
        """Close for good; a file with no name left is forgotten, so a reuse of its inode starts at 0."""
        deleted = tracked.fd is not None and os.fstat(tracked.fd).st_nlink == 0
        self._close_fd(tracked)
        self._ledger.retire(tracked.key, self._wall(), deleted=deleted)
        del self._tracked[tracked.file_id]

    def _close_fd(self, tracked: _Tracked) -> None:
        if tracked.gz is not None:
            tracked.gz.close()
            tracked.gz = None
        if tracked.fd is not None:
            fd, tracked.fd = tracked.fd, None
            self._os_close(fd)

    # -- descriptors ---------------------------------------------------------------------------

    def _os_open(self, path: str) -> int | None:
        """Open for reading within the budget, closing the least recently read file if needed; None
        when no descriptor can be freed now (every open one is rotated away, compressed or busy)."""
        if not self.budget.try_acquire() and not (self._evict_one() and self.budget.try_acquire()):
            self._count("files_deferred")
            return None
        try:
            fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
        except BaseException:
            self.budget.release()
            raise
        self._open_fds += 1
        return fd

    def _os_close(self, fd: int) -> None:
        try:
            os.close(fd)
        finally:
            self._open_fds -= 1
            self.budget.release()

    def _evict_one(self) -> bool:
        """Close the descriptor of the file read least recently; it is reopened when polled again.

        Rotated-away files keep theirs (it is the only way left to their bytes), and so do `.gz`
        files being decompressed and the file being polled.
        """
        candidates = [
            t
            for t in self._tracked.values()
            if t.fd is not None and t.gz is None and t.rotated_at is None and t.file_id != self._busy
        ]
        if not candidates:
            return False
        self._close_fd(min(candidates, key=lambda t: t.last_read))
        return True

    # -- counters ------------------------------------------------------------------------------

    def _count(self, name: str, amount: int = 1) -> None:
        with self._stats.lock:
            setattr(self._stats, name, getattr(self._stats, name) + amount)

    def _count_rejected(self, reason: str) -> None:
        with self._stats.lock:
            self._stats.rejected[reason] += 1

    def _count_read_error(self, file_id: FileId, path: str, exc: BaseException) -> None:
        self._count("read_errors")
        if file_id not in self._failed:
            self._failed.add(file_id)
            log.warning("cannot read %s: %s", path, exc, extra={"path": path})

    def _set_watched(self) -> None:
        with self._stats.lock:
            self._stats.files_watched = len(self._tracked)
            self._stats.files_open = self._open_fds
            self._stats.files_open_budget = self.budget.limit
