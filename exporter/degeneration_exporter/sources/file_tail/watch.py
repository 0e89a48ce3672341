"""`DirectoryWatch`: wake the reader the moment a file appears in a watched directory (inotify).

Why: discovery by glob runs every `glob_interval` (5 s), so a file created and rotated or deleted
within one pass was never read (200 of 1,000 lines lost with step files rotating every 2 s), and a
file replaced faster than `poll_interval` lost every other version. With a watch on the directories
of the include patterns, a create or a move into one of them triggers a glob pass at once, so the
new file is opened within milliseconds and its bytes stay readable through that descriptor after
it is renamed or deleted (`rotate_wait`). Where inotify is missing (not Linux, or the watch limit is
reached) discovery falls back to polling and the bounds above apply again (docs/tailing.md §1).
`inotify_simple` is a small ctypes wrapper (no compiled code).
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["MAX_WATCHES", "DirectoryWatch", "watched_directories"]

log = logging.getLogger(__name__)

MAX_WATCHES = 1024
"""Directories watched per source at most (the kernel's default budget is 8,192 per user)."""

try:  # Linux only; elsewhere polling alone
    import inotify_simple as _inotify  # type: ignore[import-untyped]
except (ImportError, OSError):  # pragma: no cover - platform dependent
    _inotify = None


def watched_directories(include: Iterable[str]) -> set[str]:
    """The existing directories the include patterns can match files in (`**` expands to subtrees)."""
    out: set[str] = set()
    for pattern in include:
        folder = os.path.dirname(os.path.expanduser(pattern)) or "."
        if glob.has_magic(folder):
            out.update(p for p in glob.iglob(folder, recursive=True) if os.path.isdir(p))
        elif os.path.isdir(folder):
            out.add(folder)
    return out


class DirectoryWatch:
    """Create/move-in events of a set of directories; `wait()` says whether one came."""

    def __init__(
        self, relevant: Callable[[str], bool] = lambda _name: True, max_watches: int = MAX_WATCHES
    ) -> None:
        """`relevant(name)`: whether a file of that name appearing is worth a glob pass (not a temp name)."""
        self._relevant = relevant
        self._max = max_watches
        self._watches: dict[str, int] = {}
        self._notify: Any = None
        self._warned = False
        if _inotify is not None:
            try:
                self._notify = _inotify.INotify(nonblocking=True)
            except OSError as exc:
                log.warning("inotify unavailable (%s): new files are found by polling only", exc)
        self._mask = 0
        if self._notify is not None:
            flags = _inotify.flags
            self._mask = flags.CREATE | flags.MOVED_TO | flags.DELETE_SELF | flags.ONLYDIR

    @property
    def available(self) -> bool:
        return self._notify is not None

    @property
    def watching(self) -> int:
        return len(self._watches)

    def update(self, directories: set[str]) -> None:
        """Watch exactly `directories` (up to `max_watches`); called after every glob pass."""
        if self._notify is None:
            return
        for gone in set(self._watches) - directories:
            descriptor = self._watches.pop(gone)
            with contextlib.suppress(OSError):  # the directory is gone: the kernel dropped the watch
                self._notify.rm_watch(descriptor)
        for folder in sorted(directories - set(self._watches)):
            if len(self._watches) >= self._max:
                if not self._warned:
                    self._warned = True
                    log.warning("more than %d directories to watch: the rest are polled only", self._max)
                break
            try:
                self._watches[folder] = self._notify.add_watch(folder, self._mask)
            except OSError as exc:
                if not self._warned:
                    self._warned = True
                    log.warning("cannot watch %s (%s): it is polled only", folder, exc)

    def wait(self, timeout: float) -> bool:
        """Block up to `timeout` s for an event (0: just look); True when a file may have appeared."""
        if self._notify is None or not self._watches:
            return False
        try:
            events = self._notify.read(timeout=max(int(timeout * 1000), 0))
        except OSError:
            return False
        directory = _inotify.flags.ISDIR | _inotify.flags.DELETE_SELF
        return any(event.mask & directory or self._relevant(event.name) for event in events)

    def close(self) -> None:
        if self._notify is not None:
            self._notify.close()
            self._notify = None
            self._watches.clear()
