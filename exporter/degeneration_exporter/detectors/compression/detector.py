"""Windowed zlib compression ratio (spec name `relax_compression`, Relax PR #333; module `compression`).

Why: a looping reply compresses far better than prose, so a high raw/zlib byte ratio in any window
marks a loop without knowing its period. Exact semantics: detectors.md §1.2 (window bounds with the
final suffix window, zlib level 9, strict `> threshold`, code-point offsets, half-open intervals,
`covered_chars` as a union, `max_compression_ratio` None when nothing was scanned, early exit).
`mode="legacy_tail"` is slime's pre-PR check (§1.1): the last `window_size` code points only, and only
when the text is strictly longer than one window. Known gap: a run shorter than about
window + stride characters can be diluted below the threshold (§1.4, §5.2).

The window scan itself (geometry, zlib ratio, loop, report) is `_window_scan.py`; this module holds
the parameters and the detector's batch and incremental forms; Relax's own API is `upstream.py`.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field, model_validator

from ..base import DetectorInput, Finding
from ._window_scan import (
    DEFAULT_STRIDE,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    HitWindow,
    RatioFn,
    RepetitionReport,
    WindowScan,
    check_scan_params,
    compression_ratio,
    scan_windows,
    window_bounds,
)

__all__ = [
    "DEFAULT_STRIDE",
    "DEFAULT_THRESHOLD",
    "DEFAULT_WINDOW_SIZE",
    "Compression",
    "CompressionParams",
    "HitWindow",
    "RatioFn",
    "RepetitionReport",
    "bounds_for",
    "check_scan_params",
    "compression_ratio",
    "detect_compression",
    "legacy_bounds",
    "window_bounds",
]


def legacy_bounds(text_length: int, window_size: int) -> list[tuple[int, int]]:
    """slime's single suffix window, only when the text is strictly longer than one window (§1.1)."""
    return [(text_length - window_size, text_length)] if text_length > window_size else []


def bounds_for(text_length: int, params: CompressionParams) -> list[tuple[int, int]]:
    """The windows a mode scans: Relax's window set, or slime's single suffix window."""
    if params.mode == "legacy_tail":
        return legacy_bounds(text_length, params.window_size)
    return window_bounds(text_length, params.window_size, params.stride)


class CompressionParams(BaseModel, frozen=True, extra="forbid"):
    """Relax's parameters (defaults are upstream's) plus the legacy tail-only mode."""

    mode: Literal["relax", "legacy_tail"] = Field(
        "relax",
        description="`relax`: whole-response window scan (PR #333); `legacy_tail`: slime's suffix check.",
    )
    window_size: int = Field(
        DEFAULT_WINDOW_SIZE, gt=0, strict=True, description="Window length, in Unicode code points."
    )
    stride: int = Field(
        DEFAULT_STRIDE,
        gt=0,
        strict=True,
        description="Distance between window starts, in code points; at most window_size.",
    )
    threshold: float = Field(
        DEFAULT_THRESHOLD,
        gt=0,
        allow_inf_nan=False,
        description="A window whose raw/zlib byte ratio is strictly above this hits.",
    )
    stop_at_first_hit: bool = Field(
        False, description="Stop scanning at the first hit window (Relax early exit)."
    )

    @model_validator(mode="after")
    def _stride_fits_window(self) -> CompressionParams:
        check_scan_params(self.window_size, self.stride, self.threshold)
        return self


_DEFAULT_PARAMS = CompressionParams()


def _stops_early(params: CompressionParams) -> bool:
    """Relax's early exit; the legacy check has one window, so it has nothing to stop."""
    return params.stop_at_first_hit and params.mode == "relax"


def _scan_for(text: str, params: CompressionParams, ratio_fn: RatioFn | None = None) -> WindowScan:
    return scan_windows(text, bounds_for(len(text), params), params.threshold, _stops_early(params), ratio_fn)


def _finding(scan: WindowScan, text_length: int) -> Finding:
    report = scan.report(text_length)
    return Finding(
        detector="compression",
        kind="repetition",
        flagged=report.has_repetition,
        score=report.max_compression_ratio,
        onset=report.hit_windows[0].start if report.hit_windows else None,
        covered_chars=report.covered_chars,
        evidence=scan.evidence,
        coverage=report.covered_chars / text_length if text_length else None,
        details=report.to_dict(),
    )


def detect_compression(inp: DetectorInput, params: CompressionParams) -> Finding:
    """Batch form over `inp.text`: onset is the first hit window's start, score the maximum ratio."""
    return _finding(_scan_for(inp.text, params), len(inp.text))


class Compression:
    """Incremental form: `finish()` equals the batch finding for any split of the text.

    Why it is exact: every full window `[s, s + window)` with `s` a multiple of the stride is in the
    final window set as soon as the text reaches its end, so it is scanned then, in batch order; only
    the last window (the whole text when shorter than one window, or the final suffix window) depends
    on the final length, and it is scanned by `finish()`. Memory: the last `window + stride` code points
    plus one delta; cost: one compression per `stride` code points fed, so amortised O(delta).
    """

    def __init__(self, params: CompressionParams | None = None, *, ratio_fn: RatioFn | None = None) -> None:
        self._params = params or _DEFAULT_PARAMS
        self._windows = WindowScan(self._params.threshold, _stops_early(self._params), ratio_fn)
        self._buf = ""
        self._buf_start = 0
        self._pending: list[str] = []
        self._length = 0
        self._next_start = 0
        self._due = self._params.window_size  # the length at which `feed` has work to do
        self._stopped = False
        self._fired = False
        self._final: Finding | None = None

    def feed(self, delta: str) -> Finding | None:
        """Take one delta; return a finding the first time a window hits, then None (latch)."""
        if not delta or self._final is not None:
            return None
        self._length += len(delta)
        if self._stopped:
            return None
        self._pending.append(delta)
        if self._length < self._due:
            return None
        return self._catch_up()

    def finish(self) -> Finding:
        """The verdict for everything fed: the batch finding on the concatenated deltas."""
        if self._final is None:
            self._scan_last_window()
            self._final = _finding(self._windows, self._length)
        return self._final

    def _catch_up(self) -> Finding | None:
        """Scan the full windows the text now completes, or just compact the buffer."""
        window = self._params.window_size
        relax = self._params.mode == "relax"
        if relax and self._length >= self._next_start + window:
            self._scan_full_windows()
        else:
            self._consolidate()
        compact_at = self._length + window + 1
        self._due = min(self._next_start + window, compact_at) if relax else compact_at
        if self._windows.hits and not self._fired:
            self._fired = True
            return _finding(self._windows, self._length)
        return None

    def _take_pending(self) -> None:
        if self._pending:
            self._buf += "".join(self._pending)
            self._pending.clear()

    def _consolidate(self) -> None:
        """Join pending deltas into the buffer and drop what no future window can need."""
        self._take_pending()
        keep_from = max(self._buf_start, self._length - self._params.window_size)
        if keep_from > self._buf_start:
            self._buf = self._buf[keep_from - self._buf_start :]
            self._buf_start = keep_from

    def _measure(self, start: int, end: int) -> None:
        self._windows.run(self._buf, self._buf_start, ((start, end),))

    def _scan_full_windows(self) -> None:
        self._take_pending()
        window, stride = self._params.window_size, self._params.stride
        while self._next_start + window <= self._length:
            start = self._next_start
            self._next_start += stride
            self._measure(start, start + window)
            if self._windows.stopped:
                self._stopped = True
                self._buf, self._buf_start = "", self._length
                return
        self._consolidate()

    def _scan_last_window(self) -> None:
        if self._stopped:
            return
        self._consolidate()
        n, window = self._length, self._params.window_size
        if self._params.mode == "legacy_tail":
            if n > window:
                self._measure(n - window, n)
        elif 0 < n < window:
            self._measure(0, n)
        elif n >= window and (n - window) % self._params.stride:
            self._measure(n - window, n)
