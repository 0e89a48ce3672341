"""Detector registry: one literal dict, one line per detector module.

Module name = registry key = config section (`detectors.<name>`) = docs page = bench row.
The published detectors keep their spec names in docs and vectors (`relax_compression` is
`compression`, `trinity_ngram` is `ngram_ratio`, `utopia_tail` is `tail_period`,
`osaurus_stream` is `stream_ngram`, `osaurus_charrun` is `char_run`): see docs/detectors.md.
"""

from __future__ import annotations

from typing import Any

from .base import DetectorInput, DetectorSpec, Finding, IncrementalDetector

__all__ = ["DETECTORS", "DetectorInput", "DetectorSpec", "Finding", "IncrementalDetector"]

# Registry lines are added by each detector module's author, in this order.
DETECTORS: dict[str, DetectorSpec[Any]] = {}
