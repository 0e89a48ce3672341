"""Discovery: expand include globs, drop excludes and temp names, dedupe by (device, inode).

Why: ecosystem.md §7.5 rule 1. A file matched by several patterns, or reached through a symlink, is
one file (Vector "will not tail a file more than once"); temp names written before an `os.replace`
(`*.tmp`, `*.part`) are never tailed, or an atomic replace would be read twice.
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from .identity import FileId

__all__ = ["Discovered", "FollowSymlinks", "PathFilter", "discover_files", "glob_to_regex", "pattern_root"]

FollowSymlinks = Literal["within_root", "always", "never"]


@dataclass(frozen=True, slots=True)
class Discovered:
    """One regular file found by the globs: the first path that reached it and its stat numbers."""

    path: str
    file_id: FileId
    size: int
    mtime: float


@lru_cache(maxsize=256)
def glob_to_regex(pattern: str) -> re.Pattern[str]:
    """Compile a glob where `*`/`?` stay inside one path segment and `**` spans segments.

    `fnmatch` lets `*` cross `/`, which would make `/logs/*.jsonl` exclude files in subdirectories.
    """
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (close := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : close]
            negate = body.startswith("!")
            body = body[1:] if negate else body
            out.append("[" + ("^" if negate else "") + body.replace("\\", "\\\\") + "]")
            i = close + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")


class PathFilter:
    """Excludes and ignored names: a pattern with `/` matches the whole path, else the file name."""

    def __init__(self, exclude: Iterable[str], ignore_names: Iterable[str]) -> None:
        patterns = [*exclude, *ignore_names]
        self._path_res = [glob_to_regex(p) for p in patterns if "/" in p]
        self._name_res = [glob_to_regex(p) for p in patterns if "/" not in p]

    def is_excluded(self, path: str) -> bool:
        """True when the path or its file name matches any exclude or ignore pattern."""
        name = os.path.basename(path)
        return any(r.match(name) for r in self._name_res) or any(r.match(path) for r in self._path_res)


def pattern_root(pattern: str) -> str:
    """The directory a glob cannot leave: its leading path components without `*`, `?` or `[`."""
    parts = os.path.expanduser(pattern).split(os.sep)
    fixed: list[str] = []
    for part in parts[:-1]:
        if glob.has_magic(part):
            break
        fixed.append(part)
    return os.sep.join(fixed) or ("/" if pattern.startswith("/") else ".")


def _allowed(path: str, root: str, real_root: str, follow: FollowSymlinks) -> bool:
    """Whether `path` may be read under `follow` (a link to /etc/passwd is not, by default)."""
    if follow == "always":
        return True
    real = os.path.realpath(path)
    if follow == "never":  # no symlink anywhere below the root
        return real == os.path.join(real_root, os.path.relpath(path, root))
    return real.startswith(real_root.rstrip(os.sep) + os.sep)


def discover_files(
    include: Iterable[str], path_filter: PathFilter, follow_symlinks: FollowSymlinks = "always"
) -> dict[FileId, Discovered]:
    """Every regular file matched now, once per (device, inode); the first pattern's path wins.

    Symlinks are followed (`os.stat`), so a link and its target share one entry, subject to
    `follow_symlinks`: `within_root` only when the target lies under the pattern's root directory
    (`pattern_root`), `never` not at all, `always` anywhere. Files that vanish between the glob and
    the stat are simply not found this round.
    """
    found: dict[FileId, Discovered] = {}
    for pattern in include:
        root = pattern_root(pattern)
        real_root = os.path.realpath(root)
        for path in sorted(glob.iglob(os.path.expanduser(pattern), recursive=True)):
            if path_filter.is_excluded(path) or not _allowed(path, root, real_root, follow_symlinks):
                continue
            try:
                st = os.stat(path)
            except OSError:
                continue
            if not stat.S_ISREG(st.st_mode):
                continue
            file_id = FileId.of(st)
            if file_id not in found:
                found[file_id] = Discovered(path, file_id, st.st_size, st.st_mtime)
    return found
