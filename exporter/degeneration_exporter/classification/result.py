"""`Classification`: the one result type per response that sinks and reports read.

Why one type: Prometheus, OTLP and the JSON report must agree on what was flagged; they read
this and nothing else.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from ..detectors.base import Channel, Finding
from ..record import FinishReason

__all__ = ["Classification", "FlagKind", "LoopSpan"]


class FlagKind(StrEnum):
    """What a response was flagged for; the values are the `kind` label values.

    `ceiling_while_repeating` is the joint case (ran into max_tokens while looping), reported on
    its own because it is the expensive one; such a response also carries both single kinds.
    """

    REPETITION = "repetition"
    TEMPLATE_LEAK = "template_leak"
    CEILING = "ceiling"
    CEILING_WHILE_REPEATING = "ceiling_while_repeating"


_KINDS: dict[frozenset[FlagKind], tuple[str, ...]] = {}
"""`kinds` per set of flags (at most 16 sets): a report asks for every sample's, and walking the enum
each time was a few µs a record."""


@dataclass(frozen=True, slots=True)
class LoopSpan:
    """Where the loop is, in code points of its channel, and what it cost after it began."""

    channel: Channel
    onset: int
    period: int | None
    unit: str | None
    covered_chars: int | None
    chars_after_onset: int
    onset_fraction: float
    tokens_after_onset: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "channel": self.channel,
            "onset": self.onset,
            "period": self.period,
            "unit": self.unit,
            "covered_chars": self.covered_chars,
            "chars_after_onset": self.chars_after_onset,
            "onset_fraction": self.onset_fraction,
            "tokens_after_onset": self.tokens_after_onset,
        }


@dataclass(frozen=True, slots=True)
class Classification:
    """Verdict for one response: flags, every detector's finding, the loop location, leak counts."""

    flags: frozenset[FlagKind]
    finish_reason: FinishReason
    findings: tuple[Finding, ...]
    loop: LoopSpan | None
    leaks: Mapping[str, int]
    text_chars: int
    reasoning_chars: int
    repetition_score: float
    output_tokens: int | None = None
    max_tokens: int | None = None
    model: str | None = None
    run: str | None = None
    step: int | None = None
    identity: Mapping[str, object] = field(default_factory=dict)
    path: str | None = None
    """Where the response was read (a file path, `-`, `http`), set by the line pipeline; never a label."""
    line: int | None = None
    """1-based line of `path` that completed the response (a streamed one: its finishing chunk)."""
    # References to the record's channels (no copy), for the samples store and the HTML report only:
    # never written by to_dict(), never a label, not in repr() (so not in logs): may be user data;
    # not compared either: two verdicts are equal whatever text (or capped text) they came from.
    text: str = field(default="", repr=False, compare=False)
    reasoning: str = field(default="", repr=False, compare=False)

    @property
    def kinds(self) -> list[str]:
        """Flag values in a stable order, for reports."""
        kinds = _KINDS.get(self.flags)
        if kinds is None:
            kinds = _KINDS[self.flags] = tuple(k.value for k in FlagKind if k in self.flags)
        return list(kinds)

    def to_dict(self, *, finding: Callable[[Finding], object] | None = None) -> dict[str, Any]:
        """JSON-ready form: `path` and `line` first, then identity fields (as Relax's diagnose report).

        `finding` stands in for `Finding.to_dict` (the JSON report passes one that reuses the
        serialised form of a finding shared by many verdicts).

        Built as one dict display (an identity key named like a later field takes its place and
        the later value, as `update` would do); `_value_` is the enum's value without the `value`
        property's call (a scan serialises every sample)."""
        detectors: dict[str, object] = {}
        for f in self.findings:
            key = f.detector if f.channel == "content" else f"{f.detector}:{f.channel}"
            detectors[key] = f.to_dict() if finding is None else finding(f)
        loop = self.loop
        out: dict[str, Any] = {
            "path": self.path,
            "line": self.line,
            **self.identity,
            "kinds": self.kinds,
            "finish_reason": self.finish_reason._value_,
            "model": self.model,
            "text_chars": self.text_chars,
            "reasoning_chars": self.reasoning_chars,
            "output_tokens": self.output_tokens,
            "max_tokens": self.max_tokens,
            "repetition_score": self.repetition_score,
            "loop": loop.to_dict() if loop else None,
            "leaks": dict(self.leaks),
            "detectors": detectors,
        }
        if self.run is not None:
            out["run"] = self.run
        if self.step is not None:
            out["step"] = self.step
        return out
