"""Relax's window scan (detectors.md §1.2): window geometry, the zlib ratio, the scan loop, its report.

Why its own module: Relax's batch scan, slime's legacy check and the incremental `Compression` all
drive this one loop, while `detector.py` holds the parameters and the detector forms. Bytes: windows
are encoded as UTF-8 with `surrogatepass`, so a lone surrogate (which strict UTF-8 refuses) becomes
its 3-byte form instead of an exception; every other string encodes exactly as upstream does, and
offsets stay in code points.
"""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any, NamedTuple

from ..base import snippet

__all__ = [
    "DEFAULT_STRIDE",
    "DEFAULT_THRESHOLD",
    "DEFAULT_WINDOW_SIZE",
    "HitWindow",
    "RatioFn",
    "RepetitionReport",
    "WindowScan",
    "check_scan_params",
    "compression_ratio",
    "scan_windows",
    "window_bounds",
]

DEFAULT_WINDOW_SIZE = 10_000
DEFAULT_STRIDE = 5_000
DEFAULT_THRESHOLD = 10.0
ZLIB_LEVEL = 9
ENCODE_ERRORS = "surrogatepass"
EVIDENCE_CHARS = 120
MEMO_WINDOWS = 32
MEMO_KEY_BYTES = 64

RatioFn = Callable[[bytes], float]
"""Measures one window's UTF-8 bytes; injectable so tests can pin ratios independently of zlib."""


def check_scan_params(window_size: int, stride: int, threshold: float) -> None:
    """Raise ValueError for parameters Relax rejects, even before any text is seen (§1.2 step 1)."""
    for name, value in (("window_size", window_size), ("stride", stride)):
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ValueError(f"{name} must be a positive int, got {value!r}")
    if stride > window_size:
        raise ValueError(f"stride ({stride}) must not exceed window_size ({window_size}): gaps")
    if isinstance(threshold, bool) or not isinstance(threshold, int | float):
        raise ValueError(f"threshold must be a number, got {threshold!r}")
    if not math.isfinite(threshold) or threshold <= 0:
        raise ValueError(f"threshold must be finite and > 0, got {threshold!r}")


def window_bounds(
    text_length: int, window_size: int = DEFAULT_WINDOW_SIZE, stride: int = DEFAULT_STRIDE
) -> list[tuple[int, int]]:
    """Half-open code-point windows scanned for a text of this length, in scan order (§1.2 step 2)."""
    if text_length <= 0:
        return []
    last = max(0, text_length - window_size)
    bounds = [(s, min(s + window_size, text_length)) for s in range(0, last + 1, stride)]
    if last % stride:
        bounds.append((last, text_length))
    return bounds


def compression_ratio(data: bytes) -> float:
    """Raw bytes over zlib level-9 bytes (§1.2 step 3); an empty window would be +inf."""
    if not data:
        return math.inf
    return len(data) / len(zlib.compress(data, ZLIB_LEVEL))


class HitWindow(NamedTuple):
    """A window whose ratio exceeded the threshold (a tuple: cheap to build once per hit window)."""

    start: int
    end: int
    compression_ratio: float


@dataclass(frozen=True, slots=True)
class RepetitionReport:
    """Relax's scan report (§1.2 step 6); `to_dict()` gives the published field names."""

    has_repetition: bool
    text_length: int
    num_windows_scanned: int
    hit_windows: tuple[HitWindow, ...]
    max_compression_ratio: float | None
    threshold: float
    covered_chars: int

    @property
    def hit_intervals(self) -> list[tuple[int, int]]:
        return [(w.start, w.end) for w in self.hit_windows]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready fields, as Relax's offline report writes them."""
        return {
            "has_repetition": self.has_repetition,
            "text_length": self.text_length,
            "num_windows_scanned": self.num_windows_scanned,
            "hit_windows": [
                {"start": w.start, "end": w.end, "compression_ratio": w.compression_ratio}
                for w in self.hit_windows
            ],
            "hit_intervals": [[w.start, w.end] for w in self.hit_windows],
            "max_compression_ratio": self.max_compression_ratio,
            "threshold": self.threshold,
            "covered_chars": self.covered_chars,
        }


def _union_length(hits: Iterable[HitWindow]) -> int:
    """Length of the union of half-open intervals: overlaps are never double-counted."""
    total = 0
    cur_start = cur_end = -1
    for w in sorted(hits, key=lambda h: h.start):
        if w.start > cur_end:
            total += cur_end - cur_start
            cur_start, cur_end = w.start, w.end
        else:
            cur_end = max(cur_end, w.end)
    return total + (cur_end - cur_start)


class WindowScan:
    """The one scan loop, shared by the batch scan, the legacy check and the incremental class.

    Each window is sliced and encoded on its own (memory about one window, as upstream), and its
    bookkeeping is inline so a window costs what upstream's loop costs plus one dict lookup.
    Identical hit windows reuse their ratio: in a loop whose period divides a small multiple of the
    stride, windows repeat byte for byte, and the same bytes give the same zlib output. Only hit
    windows are remembered (clean text never repeats a window), found by their first bytes and
    confirmed with `==`, at most `MEMO_WINDOWS` of them.
    """

    __slots__ = (
        "_memo",
        "_ratio_fn",
        "evidence",
        "hits",
        "max_ratio",
        "scanned",
        "stop",
        "stopped",
        "threshold",
    )

    def __init__(self, threshold: float, stop_at_first_hit: bool, ratio_fn: RatioFn | None) -> None:
        self.threshold = threshold
        self.stop = stop_at_first_hit
        self.stopped = False
        self.scanned = 0
        self.max_ratio: float | None = None
        self.hits: list[HitWindow] = []
        self.evidence: str | None = None
        self._ratio_fn = ratio_fn
        self._memo: dict[bytes, tuple[bytes, float]] = {}

    def run(self, text: str, base: int, bounds: Iterable[tuple[int, int]]) -> None:
        """Scan windows in order; `bounds` are absolute, `text` starts at absolute offset `base`."""
        threshold, hits, memo, ratio_fn = self.threshold, self.hits, self._memo, self._ratio_fn
        best = self.max_ratio
        for start, end in bounds:
            if self.stopped:
                break
            data = text[start - base : end - base].encode("utf-8", ENCODE_ERRORS)
            self.scanned += 1
            if ratio_fn is not None:
                ratio = ratio_fn(data)
            else:
                key = data[:MEMO_KEY_BYTES]
                seen = memo.get(key)
                if seen is not None and seen[0] == data:
                    ratio = seen[1]
                else:
                    ratio = compression_ratio(data)
                    if ratio > threshold:
                        memo[key] = (data, ratio)
                        if len(memo) > MEMO_WINDOWS:
                            del memo[next(iter(memo))]
            if best is None or ratio > best:
                best = ratio
            if ratio > threshold:
                if not hits:
                    self.evidence = snippet(text[start - base : min(end, start + EVIDENCE_CHARS) - base])
                hits.append(HitWindow(start, end, ratio))
                self.stopped = self.stop
        self.max_ratio = best

    def report(self, text_length: int) -> RepetitionReport:
        return RepetitionReport(
            has_repetition=bool(self.hits),
            text_length=text_length,
            num_windows_scanned=self.scanned,
            hit_windows=tuple(self.hits),
            max_compression_ratio=self.max_ratio,
            threshold=self.threshold,
            covered_chars=_union_length(self.hits),
        )


def scan_windows(
    text: str,
    bounds: list[tuple[int, int]],
    threshold: float,
    stop_at_first_hit: bool,
    ratio_fn: RatioFn | None,
) -> WindowScan:
    """One scan of `bounds` over a whole text."""
    scan = WindowScan(threshold, stop_at_first_hit, ratio_fn)
    scan.run(text, 0, bounds)
    return scan
