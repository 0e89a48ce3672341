"""`ReportWriter`: what `scan` writes its report through (JSON, JSONL samples, table, HTML).

Why a protocol of two calls: samples are handed over one at a time, in input order, as they are
produced, so a writer can stream them to disk and the scan's memory stays flat; the aggregates come
once at the end. A writer is built with its output stream and owns nothing else.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..classification.result import Classification

__all__ = ["ReportWriter"]


class ReportWriter(Protocol):
    def add_sample(self, sample: Classification) -> None:
        """Every sample the report lists (all, or only flagged ones with `--only-hits`), in input order."""
        ...

    def finish(self, summary: dict[str, Any]) -> None:
        """The aggregates (`config`, totals, `files`, `runs`, `steps`, `failed_files`); called once, last."""
        ...
