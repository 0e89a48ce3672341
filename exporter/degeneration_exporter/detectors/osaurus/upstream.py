"""osaurus' CLI gauntlet verdicts (detectors.md §4.3-4.4), kept for parity with upstream.

Why apart from the detectors: the classifier runs `stream_ngram`, `char_run` and `template_leak`;
these two verdicts are the gauntlet's own probes over a whole transcript, used by the seed vectors
and by anyone reproducing an osaurus gauntlet run.
"""

from __future__ import annotations

from typing import Literal

from ..base import Channel, DetectorInput
from ..template_leak import FAMILIES, scanner_of
from .stream_ngram import StreamNgramParams, detect_stream_ngram

__all__ = ["CANARY_MIN_TRANSCRIPT_CHARS", "GauntletVerdict", "canary_verdict", "gauntlet_leak_verdict"]

GauntletVerdict = Literal["pass", "fail", "untested"]
CANARY_MIN_TRANSCRIPT_CHARS = 256

_GAUNTLET = StreamNgramParams(profile="gauntlet", char_runs=True)
"""The CLI gauntlet's combined detector (runs, then n-grams), validated once."""


def canary_verdict(
    content: str, reasoning: str = "", min_transcript_chars: int = CANARY_MIN_TRANSCRIPT_CHARS
) -> GauntletVerdict:
    """The gauntlet's degeneration-canary verdict (§4.3): a hit fails at any length, short is untested."""
    transcript = f"{reasoning}\n{content}" if reasoning else content
    if detect_stream_ngram(DetectorInput(text=transcript), _GAUNTLET).flagged:
        return "fail"
    return "untested" if len(transcript) < min_transcript_chars else "pass"


def gauntlet_leak_verdict(
    content: str, reasoning: str, tokens: tuple[str, ...] = FAMILIES["osaurus_gauntlet"]
) -> tuple[GauntletVerdict, Channel | None, str | None]:
    """osaurus' gauntlet leak probe, per chat (§4.4): content before reasoning, first listed token fails."""
    if not content and not reasoning:
        return "untested", None, None
    scanner = scanner_of(tokens)
    channels: tuple[tuple[Channel, str], ...] = (("content", content), ("reasoning", reasoning))
    for channel, text in channels:
        token = scanner.first_present(text)
        if token is not None:
            return "fail", channel, token
    return "pass", None, None
