"""Whole-row loop at the tail (`utopia_tail` in the spec, utopia `repeats_at_tail`; module `tail_period`).

Why: a reply stuck at temperature 0 ends in the same row over and over; requiring the last `span`
bytes to fill the end five times, with no period under 30 bytes, cuts such loops while quoted dot
leaders, empty table cells and runs of spaces pass (detectors.md §3.1). Streaming (§3.2): upstream
checks after a frame once the reply grew by another 256 bytes; that cadence makes the verdict
chunking-dependent, so `check="every_delta"` is offered as well. Known gaps: tail only, exact bytes,
rows of 30-600 bytes only (§5.2).

Bytes are UTF-8 with `surrogatepass` (a lone surrogate becomes 3 bytes rather than an error); every
comparison is a C-level bytes comparison or `bytes.rfind`, never a per-byte Python loop.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field, model_validator

from .base import DetectorInput, Finding, snippet

__all__ = [
    "TailPeriod",
    "TailPeriodParams",
    "detect_tail_period",
    "periodic_suffix_length",
    "repeats_at_tail",
]

DEFAULT_MIN_SPAN = 30
DEFAULT_MAX_SPAN = 600
DEFAULT_REPEATS = 5
DEFAULT_MIN_PERIOD = 30
DEFAULT_CADENCE = 256
DEFAULT_LOOKBACK = 65_536
ENCODE_ERRORS = "surrogatepass"
_NEEDLE_BYTES = 8
_CONTINUATION = bytes(range(0x80, 0xC0))

Bytes = bytes | bytearray
"""The streaming form checks its bytearray tail in place, without a copy."""


def _code_points(data: Bytes) -> int:
    """Code points whose first byte lies in `data` (continuation bytes are not counted)."""
    return len(data.translate(None, _CONTINUATION))


def _suffix_has_period(data: Bytes, period: int, length: int) -> bool:
    """The last `length` bytes equal themselves shifted by `period` (vacuously true when length <= period)."""
    n = len(data)
    if length <= period:
        return True
    return data[n - length + period :] == data[n - length : n - period]


def periodic_suffix_length(data: Bytes, period: int, limit: int) -> int:
    """Longest suffix, at most `limit` bytes, with the given period: gallop, then bisect."""
    limit = min(limit, len(data))
    good = min(period, limit)
    if good == limit or _suffix_has_period(data, period, limit):
        return limit
    step = max(period, 1)
    bad = good + step
    while bad < limit and _suffix_has_period(data, period, bad):
        good, step = bad, step * 2
        bad = good + step
    bad = min(bad, limit)
    while bad - good > 1:
        mid = (good + bad) // 2
        if _suffix_has_period(data, period, mid):
            good = mid
        else:
            bad = mid
    return good


def _short_period_extent(data: Bytes, min_period: int, cap: int) -> int:
    """Longest suffix (capped) having some period below `min_period`.

    A tail of `repeats * span` bytes has such a period exactly when it is no longer than this, so one
    measurement per small period replaces a check per span.
    """
    n = len(data)
    cap = min(cap, n)
    best = 0
    for p in range(1, min_period):
        if p >= cap:
            return cap
        if data[n - 1] != data[n - 1 - p]:
            best = max(best, p)
            continue
        best = max(best, periodic_suffix_length(data, p, cap))
        if best >= cap:
            return cap
    return best


def repeats_at_tail(
    data: Bytes,
    *,
    min_span: int = DEFAULT_MIN_SPAN,
    max_span: int = DEFAULT_MAX_SPAN,
    repeats: int = DEFAULT_REPEATS,
    min_period: int = DEFAULT_MIN_PERIOD,
) -> int | None:
    """utopia's predicate (§3.1): the smallest span whose last `repeats` copies end the bytes, or None.

    A span L qualifies when the last `repeats * L` bytes have period L and no period below `min_period`.
    Candidates come from `bytes.rfind` of the last few bytes one span earlier, in ascending span order.
    """
    n = len(data)
    hi = min(max_span, n // repeats)
    if hi < min_span:
        return None
    k = min(_NEEDLE_BYTES, (repeats - 1) * min_span)
    needle = data[n - k :]
    start = n - k - hi
    if data.rfind(needle, start, n - min_span) < 0:
        return None  # the usual case in clean text: no span can have period L at all
    short = _short_period_extent(data, min_period, repeats * hi)
    lo = max(min_span, short // repeats + 1)
    if lo > hi:
        return None
    end = n - lo
    while True:
        pos = data.rfind(needle, start, end)
        if pos < 0:
            return None
        span = n - k - pos
        if _suffix_has_period(data, span, repeats * span):
            return span
        end = pos + k - 1


class TailPeriodParams(BaseModel, frozen=True, extra="forbid"):
    """utopia's constants (span 30-600 bytes inclusive, 5 repeats, no period under 30) and stream cadence."""

    min_span_bytes: int = Field(DEFAULT_MIN_SPAN, ge=1, strict=True, description="Shortest row, in bytes.")
    max_span_bytes: int = Field(
        DEFAULT_MAX_SPAN, ge=1, strict=True, description="Longest row, in bytes (inclusive)."
    )
    repeats: int = Field(
        DEFAULT_REPEATS, ge=2, strict=True, description="Copies of the row that must end the reply, a count."
    )
    min_period_bytes: int = Field(
        DEFAULT_MIN_PERIOD,
        ge=1,
        strict=True,
        description="The tail must have no period shorter than this, in bytes (1 disables the check).",
    )
    check: Literal["cadence", "every_delta"] = Field(
        "cadence",
        description="Streaming: check once the reply grew by cadence_bytes (upstream), or after every delta.",
    )
    cadence_bytes: int = Field(
        DEFAULT_CADENCE,
        ge=1,
        strict=True,
        description="Streaming growth between checks, in bytes (cadence mode).",
    )
    onset_lookback_bytes: int = Field(
        DEFAULT_LOOKBACK,
        ge=1,
        strict=True,
        description="How far back from the end the loop's start is searched, "
        "in bytes; bounds streaming memory.",
    )

    @model_validator(mode="after")
    def _span_range(self) -> TailPeriodParams:
        if self.max_span_bytes < self.min_span_bytes:
            raise ValueError("max_span_bytes must be >= min_span_bytes")
        return self


def _span_at_tail(data: Bytes, params: TailPeriodParams) -> int | None:
    """`repeats_at_tail` with the params, over only the bytes it can look at."""
    return repeats_at_tail(
        data[-params.repeats * params.max_span_bytes :],
        min_span=params.min_span_bytes,
        max_span=params.max_span_bytes,
        repeats=params.repeats,
        min_period=params.min_period_bytes,
    )


def _tail_finding(
    data: Bytes,
    span: int | None,
    total_bytes: int,
    total_chars: int,
    params: TailPeriodParams,
    stream: dict[str, int] | None = None,
) -> Finding:
    """Report on the end of a text of `total_bytes` bytes and `total_chars` code points.

    `data` holds the text's last bytes: at least `onset_lookback_bytes` of them, or all; `span` is
    what `_span_at_tail` found there.
    """
    details: dict[str, Any] = {
        "repeating": span is not None,
        "min_span_bytes": span,
        "length_bytes": total_bytes,
    }
    if stream is not None:
        details.update(stream)
    if span is None:
        return Finding(detector="tail_period", kind="repetition", flagged=False, details=details)
    run = periodic_suffix_length(data, span, params.onset_lookback_bytes)
    region = data[len(data) - run :]
    covered = _code_points(region)
    details["periodic_bytes"] = run
    return Finding(
        detector="tail_period",
        kind="repetition",
        flagged=True,
        score=run / span,
        onset=total_chars - covered,
        period=_code_points(data[len(data) - span :]),
        unit=snippet(region[:span].decode("utf-8", "replace")),
        covered_chars=covered,
        coverage=covered / total_chars if total_chars else None,
        details=details,
    )


def detect_tail_period(inp: DetectorInput, params: TailPeriodParams) -> Finding:
    """Batch form over `inp.text`: period is the row in code points, onset where the periodic run starts."""
    text = inp.text
    if text.isascii():  # bytes are code points: encode only the tail that can be looked at
        data = text[-_retained_bytes(params) :].encode("ascii")
        total_bytes = len(text)
    else:
        data = text.encode("utf-8", ENCODE_ERRORS)
        total_bytes = len(data)
    return _tail_finding(data, _span_at_tail(data, params), total_bytes, len(text), params)


def _retained_bytes(params: TailPeriodParams) -> int:
    """Bytes of tail that decide both the verdict and the onset."""
    return max(params.onset_lookback_bytes, params.repeats * params.max_span_bytes)


class TailPeriod:
    """Streaming form: a bounded byte tail, checked at utopia's cadence or after every delta.

    `feed` fires (then latches) at the first check that finds a loop; its details add `frames_read`
    and `bytes_read` at that moment. `finish()` returns that finding, or else checks the final tail
    once more, which equals the batch finding. Memory: about twice max(lookback, repeats * max span).
    """

    def __init__(self, params: TailPeriodParams | None = None) -> None:
        self._params = params or TailPeriodParams()
        self._keep = _retained_bytes(self._params)
        self._buf = bytearray()
        self._bytes = 0
        self._chars = 0
        self._frames = 0
        self._last_checked = 0
        self._latched: Finding | None = None

    def feed(self, delta: str) -> Finding | None:
        """Take one frame's delta; return a finding the first time a check finds a loop."""
        if self._latched is not None:
            return None
        self._frames += 1
        data = delta.encode("utf-8", ENCODE_ERRORS)
        self._buf += data
        self._bytes += len(data)
        self._chars += len(delta)
        if len(self._buf) > 2 * self._keep:
            del self._buf[: len(self._buf) - self._keep]
        grown = self._bytes - self._last_checked
        due = grown > 0 if self._params.check == "every_delta" else grown >= self._params.cadence_bytes
        if not due:
            return None
        self._last_checked = self._bytes
        span = _span_at_tail(self._buf, self._params)
        if span is None:
            return None
        stream = {"frames_read": self._frames, "bytes_read": self._bytes}
        self._latched = _tail_finding(self._buf, span, self._bytes, self._chars, self._params, stream)
        return self._latched

    def finish(self) -> Finding:
        """The latched finding, or a final check of the whole tail (the batch finding)."""
        if self._latched is not None:
            return self._latched
        span = _span_at_tail(self._buf, self._params)
        return _tail_finding(self._buf, span, self._bytes, self._chars, self._params)
