"""Hand-built `Classification`s for sink tests: a clean response and a looping one hitting the ceiling."""

from __future__ import annotations

from typing import Any

from degeneration_exporter.classification.result import Classification, FlagKind, LoopSpan
from degeneration_exporter.detectors.base import Finding
from degeneration_exporter.record import FinishReason


def clean(**overrides: Any) -> Classification:
    """A 400-character answer that stopped normally: no flags, no findings."""
    fields: dict[str, Any] = {
        "flags": frozenset(),
        "finish_reason": FinishReason.STOP,
        "findings": (Finding("relax_compression", "repetition", False, score=1.8),),
        "loop": None,
        "leaks": {},
        "text_chars": 400,
        "reasoning_chars": 0,
        "repetition_score": 0.0,
        "output_tokens": 100,
        "max_tokens": 1000,
        "model": "qwen3-8b",
    }
    fields.update(overrides)
    return Classification(**fields)


def looping(**overrides: Any) -> Classification:
    """A response that looped from 25 % on and ran into max_tokens, leaking one <|im_end|>."""
    fields: dict[str, Any] = {
        "flags": frozenset(
            {FlagKind.REPETITION, FlagKind.CEILING, FlagKind.CEILING_WHILE_REPEATING, FlagKind.TEMPLATE_LEAK}
        ),
        "finish_reason": FinishReason.LENGTH,
        "findings": (
            Finding("relax_compression", "repetition", True, score=14.2, onset=1000, period=12),
            Finding("template_leak", "template_leak", True, score=1.0),
        ),
        "loop": LoopSpan(
            "content",
            onset=1000,
            period=12,
            unit="all work and",
            covered_chars=3000,
            chars_after_onset=3000,
            onset_fraction=0.25,
            tokens_after_onset=750,
        ),
        "leaks": {"<|im_end|>": 1},
        "text_chars": 4000,
        "reasoning_chars": 0,
        "repetition_score": 0.75,
        "output_tokens": 1000,
        "max_tokens": 1000,
        "model": "qwen3-8b",
    }
    fields.update(overrides)
    return Classification(**fields)
