"""`ReportWriter`: what `scan` writes its report through (JSON, JSONL samples, table, HTML).

Why a protocol of two calls: samples are handed over one at a time, in input order, as they are
produced, so a writer can stream them to disk and the scan's memory stays flat; the aggregates come
once at the end. A writer is built with its output stream and owns nothing else.

Why a sample arrives as `ListedSample` (its JSON, and its verdict only when flagged): worker
processes serialise every listed sample themselves, so the parent only copies bytes; the verdict
objects, which cost pickling, travel only for the writers that read them (table, HTML: flagged ones).
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol

from ..classification.result import Classification

__all__ = ["ListedSample", "ReportWriter"]


class ListedSample(NamedTuple):
    """One sample the report lists, in input order."""

    json: bytes
    """Its JSON object, compact (`json_report.dump_sample`); empty when no writer of this scan reads it."""
    verdict: Classification | None
    """The verdict itself, for a flagged sample when a writer of this scan reads it (table, HTML)."""


class ReportWriter(Protocol):
    def add_sample(self, sample: ListedSample) -> None:
        """Every sample the report lists (all, or only flagged ones with `--only-hits`), in input order."""
        ...

    def finish(self, summary: dict[str, Any]) -> None:
        """The aggregates (`config`, totals, `files`, `runs`, `steps`, `failed_files`); called once, last."""
        ...
