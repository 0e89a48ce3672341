"""The `file_tail` source: tail JSONL files by glob, surviving rotation, truncation and restarts.

Modules: `config` (options), `discover` (globs), `identity` (dev+inode and head fingerprint),
`reader` (line splitting, line boundaries), `positions` (the checkpoint file), `ledger` (commit tracking),
`tailer` (the single-threaded state machine), `source` (threads, queue, `Source` protocol).
Guarantees: docs/tailing.md.
"""

from __future__ import annotations

from .config import FileTailConfig
from .source import FileTailSource

__all__ = ["FileTailConfig", "FileTailSource"]
