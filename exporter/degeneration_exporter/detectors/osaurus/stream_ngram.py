"""osaurus' back-to-back word n-gram rule (`osaurus_stream` in the spec; module `stream_ngram`), §4.2-4.3.

Why: a live guardrail must abort a verbatim loop within a few hundred tokens, without a tokenizer:
osaurus fires when some n-word unit (n = 3..12, "word" = whitespace-separated) repeats R times back to
back inside a 4096-character tail: R = 12 in the hardened PR state (so "repeat this 10 times" streams
through), 8 in the initial revision, and sizes 2..12 with R = 8 over the whole text in the CLI
gauntlet. `char_runs: true` puts the run rule of the same profile first, with one latch: that is the
published `StreamDegenerationDetector` (stream profiles) and gauntlet `DegenerationDetector`.
The combined class is `_combined.py`; the tail is kept incrementally (`_word_tail.py`): same verdicts,
evidence and trigger delta as the published re-split-everything loop, at a per-delta cost that does
not grow with the tail.
Known gaps (§5.2): CJK loops without spaces are one "word"; units over 12 words, and long-word loops
fed word by word, escape the tail; only exact word equality counts.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ..base import DetectorInput, Finding
from ._combined import OsaurusStream
from ._word_tail import WordTail
from .char_run import PROFILES as RUN_PROFILES

__all__ = [
    "PROFILES",
    "NgramProfile",
    "StreamNgram",
    "StreamNgramParams",
    "detect_stream_ngram",
]

ProfileName = Literal["stream_hardened", "stream_v1", "gauntlet"]


@dataclass(frozen=True, slots=True)
class NgramProfile:
    """One published threshold set for the n-gram rule."""

    min_n: int  # smallest unit, in words
    max_n: int  # largest unit, in words
    repeats: int  # back-to-back copies needed (the unit itself counts as one)
    tail_chars: int | None  # code points kept between deltas; None = the whole text (gauntlet)


PROFILES: dict[str, NgramProfile] = {
    "stream_hardened": NgramProfile(min_n=3, max_n=12, repeats=12, tail_chars=4096),
    "stream_v1": NgramProfile(min_n=3, max_n=12, repeats=8, tail_chars=4096),
    "gauntlet": NgramProfile(min_n=2, max_n=12, repeats=8, tail_chars=None),
}


class StreamNgramParams(BaseModel, frozen=True, extra="forbid"):
    """Config section `detectors.stream_ngram`: a published profile, optionally with overridden numbers."""

    profile: ProfileName = Field(
        "stream_hardened",
        description="Published threshold set: stream_hardened (osaurus PR state), stream_v1 (initial #1922), "
        "or gauntlet (CLI batch detector, whole text).",
    )
    min_n: int | None = Field(None, ge=1, le=64, description="Override: smallest unit, in words.")
    max_n: int | None = Field(None, ge=1, le=64, description="Override: largest unit, in words.")
    repeats: int | None = Field(None, ge=2, description="Override: back-to-back copies, a count, that fire.")
    char_runs: bool = Field(
        False,
        description="Check the profile's character-run rule first, with one latch (the published combined "
        "detector); off leaves runs to the char_run detector.",
    )

    @model_validator(mode="after")
    def _sizes_ordered(self) -> StreamNgramParams:
        rule = self.ngram_profile()
        if rule.min_n > rule.max_n:
            raise ValueError(f"min_n ({rule.min_n}) must not exceed max_n ({rule.max_n})")
        return self

    def ngram_profile(self) -> NgramProfile:
        """The profile with any overrides applied."""
        overrides = {"min_n": self.min_n, "max_n": self.max_n, "repeats": self.repeats}
        return replace(PROFILES[self.profile], **{k: v for k, v in overrides.items() if v is not None})


class StreamNgram(OsaurusStream):
    """Incremental form: content and reasoning deltas in arrival order share one tail (§4.1)."""

    def __init__(self, params: StreamNgramParams) -> None:
        rule = params.ngram_profile()
        runs = RUN_PROFILES[params.profile] if params.char_runs else None
        super().__init__(
            "stream_ngram",
            params.profile,
            runs,
            WordTail(rule.min_n, rule.max_n, rule.repeats, rule.tail_chars),
        )


def detect_stream_ngram(inp: DetectorInput, params: StreamNgramParams) -> Finding:
    """Batch form: the content text as one delta (osaurus scans one large delta whole)."""
    return StreamNgram(params).scan(inp)
