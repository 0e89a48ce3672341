"""File identity: (device, inode) first, a hash of the head bytes as a check, never the head alone.

Why: ecosystem.md §7.5 rule 2. Keying by path (Promtail) re-reads or skips after rotation; keying by
inode alone (Fluent Bit #4895, #11455) resumes a reused inode at a stranger's offset; keying by the
first bytes (OTel #46496) merges RL step files that open with the same system prompt. So the inode
names the file, and the fingerprint only confirms it is still the file whose offset we stored.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from typing import NamedTuple

__all__ = ["FileId", "Fingerprint", "file_id_at", "read_fingerprint"]


class FileId(NamedTuple):
    """A file's (device, inode) pair: stable across renames, reused after deletion."""

    dev: int
    ino: int

    @classmethod
    def of(cls, st: os.stat_result) -> FileId:
        """The identity in a `stat`/`fstat` result."""
        return cls(st.st_dev, st.st_ino)

    def __str__(self) -> str:
        return f"{self.dev}:{self.ino}"


def file_id_at(path: str) -> FileId | None:
    """The identity of the file `path` names now (symlinks followed); None when it names nothing."""
    try:
        return FileId.of(os.stat(path))
    except OSError:
        return None


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """A BLAKE2b digest of the first `length` bytes (fewer than asked while the file is small)."""

    length: int
    digest: str

    def still_matches(self, fd: int) -> bool:
        """True when the file behind `fd` starts with the same `length` bytes as when hashed."""
        return self.length == 0 or self.starts(os.pread(fd, self.length, 0))

    def starts(self, head: bytes) -> bool:
        """True when `head` (bytes read from offset 0) begins with the bytes this was hashed from."""
        return len(head) >= self.length and _digest(head[: self.length]) == self.digest

    @classmethod
    def of(cls, head: bytes) -> Fingerprint:
        """The fingerprint of these head bytes."""
        return cls(len(head), _digest(head))


def read_fingerprint(fd: int, limit: int) -> Fingerprint:
    """Hash up to `limit` head bytes of the open file."""
    return Fingerprint.of(os.pread(fd, limit, 0))


def _digest(head: bytes) -> str:
    return hashlib.blake2b(head, digest_size=16).hexdigest()
