"""The `file_tail` source: tail JSONL files by glob, surviving rotation, truncation and restarts.

Modules: `config` (options), `discover` (globs), `identity` (dev+inode and head fingerprint),
`reader` (line splitting, line boundaries), `positions` (the checkpoint file), `ledger` (commit tracking),
`tailer` (the single-threaded state machine), `source` (threads, queue, `Source` protocol).
Guarantees: docs/tailing.md.

The two public names are imported on first use (PEP 562): `scan`, stdin and `/ingest` read lines with
`reader` alone, and importing it must not load the tailer, its threads and its config model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ... import _lazy_getattr

if TYPE_CHECKING:
    from .config import FileTailConfig
    from .source import FileTailSource

__all__ = ["FileTailConfig", "FileTailSource"]

_HOMES = {"FileTailConfig": ".config", "FileTailSource": ".source"}


__getattr__ = _lazy_getattr(__name__, _HOMES)
