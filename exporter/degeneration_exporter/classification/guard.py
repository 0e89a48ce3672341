"""`LoopGuard`: feed a generation delta by delta and learn the moment to cut it (`Decision.stop`).

Why: an RL rollout worker or a serving hook pays for every token a loop burns until the ceiling.
The guard runs the verdict's incremental detectors (the same ones, with the same parameters, as
`classify`) and says `stop` as soon as one of them fires: their incremental forms latch, so from
that delta on the finished response is certain to be flagged `repetition`. It never looks ahead
and keeps no text (the detectors' own state is bounded), so each `feed` costs O(delta).

A template leak is reported on the decision (`leak`) but does not stop a generation unless asked
(`stop_on_leak`): a leaked token is a serving bug, not wasted budget.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..detectors.base import Channel, Finding
from ..record import FinishReason, Record
from .classify import Classifier, ResponseStream, default_classifier
from .result import Classification

__all__ = ["Decision", "LoopGuard"]


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do after a delta. `stop`: cut the generation now; `finding`: why (the loop's finding,
    with its channel and onset), or a leak's finding when only a leak was seen; None when clean."""

    stop: bool
    finding: Finding | None = None

    @property
    def leak(self) -> bool:
        """The finding is a template-token leak (reported, and a stop only with `stop_on_leak`)."""
        return self.finding is not None and self.finding.kind == "template_leak"


_GO_ON = Decision(stop=False)


class LoopGuard:
    """One generation in flight. Not thread-safe: one guard per generation."""

    def __init__(self, classifier: Classifier | None = None, *, stop_on_leak: bool = False) -> None:
        self._stream: ResponseStream = (classifier or default_classifier()).open_stream()
        self._stop_on_leak = stop_on_leak
        self._decision = _GO_ON
        self._content_chars = 0
        self._reasoning_chars = 0

    @property
    def decision(self) -> Decision:
        """The latest decision (a stop is final: later feeds repeat it)."""
        return self._decision

    def feed(self, delta: str, channel: Channel = "content") -> Decision:
        """Take the next piece of generated text (`channel`: visible `content` or `reasoning`)."""
        if channel == "reasoning":
            self._reasoning_chars += len(delta)
        else:
            self._content_chars += len(delta)
        if self._decision.stop:
            return self._decision
        first = self._stream.feed(delta, channel)
        loop = self._stream.loop_finding
        if loop is not None:
            self._decision = Decision(stop=True, finding=loop)
        elif first is not None and first.kind == "template_leak":
            self._decision = Decision(stop=self._stop_on_leak, finding=first)
        return self._decision

    def finish(
        self,
        finish_reason: FinishReason | None = None,
        *,
        output_tokens: int | None = None,
        max_tokens: int | None = None,
    ) -> Classification:
        """The full verdict for what was fed. `finish_reason` defaults to `repetition` when the guard
        said stop (the caller cut the generation there) and to `unknown` otherwise."""
        if finish_reason is None:
            finish_reason = FinishReason.REPETITION if self._decision.stop else FinishReason.UNKNOWN
        record = Record(
            text="", finish_reason=finish_reason, output_tokens=output_tokens, max_tokens=max_tokens
        )
        return self._stream.finish(record, lengths=(self._content_chars, self._reasoning_chars))
