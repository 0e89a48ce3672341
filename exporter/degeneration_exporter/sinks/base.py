"""The sink contract: where classified responses go.

Why a protocol this small: the pipeline hands every `Classification` to every configured sink and
knows nothing else about them (Prometheus, OTLP, JSON report), as Vector's sinks share one trait
(style.md §1, §5). A sink owns its registry or meter; it never uses a global one.
"""

from __future__ import annotations

from typing import Protocol

from ..classification.result import Classification

__all__ = ["Sink"]


class Sink(Protocol):
    """Receives one classified response at a time."""

    def emit(self, source: str, result: Classification) -> None:
        """Count `result`, read from the source named `source` (a configured, bounded name).

        Must not raise on any Classification; exporting errors are the sink's to retry and count.
        """
        ...

    def close(self) -> None:
        """Flush what is pending (open rollout steps, buffered exports) and release resources; idempotent."""
        ...
