"""Relax's and slime's own entry points (detectors.md §1.1-1.3), kept for parity with upstream.

Why apart from the detector: the classifier only needs `detect_compression` and `Compression`; these
functions exist so the seed vectors and users porting Relax code can call the published API by its
names (`has_repetition`, `rollout/repetition_frac`, the whole-response report, slime's tail check).
"""

from __future__ import annotations

from collections.abc import Iterable

from ._window_scan import (
    DEFAULT_STRIDE,
    DEFAULT_THRESHOLD,
    DEFAULT_WINDOW_SIZE,
    RatioFn,
    RepetitionReport,
    check_scan_params,
    scan_windows,
    window_bounds,
)
from .detector import CompressionParams, bounds_for, legacy_bounds

__all__ = ["has_repetition", "legacy_tail_scan", "repetition_frac", "scan_repetition"]

_DEFAULT_PARAMS = CompressionParams()


def scan_repetition(
    text: str,
    *,
    window_size: int = DEFAULT_WINDOW_SIZE,
    stride: int = DEFAULT_STRIDE,
    threshold: float = DEFAULT_THRESHOLD,
    stop_at_first_hit: bool = False,
    ratio_fn: RatioFn | None = None,
) -> RepetitionReport:
    """Relax's whole-response window scan (§1.2); `ratio_fn` replaces the zlib ratio (tests only)."""
    check_scan_params(window_size, stride, threshold)
    bounds = window_bounds(len(text), window_size, stride)
    return scan_windows(text, bounds, threshold, stop_at_first_hit, ratio_fn).report(len(text))


def legacy_tail_scan(
    text: str,
    *,
    window_size: int = DEFAULT_WINDOW_SIZE,
    threshold: float = DEFAULT_THRESHOLD,
    ratio_fn: RatioFn | None = None,
) -> RepetitionReport:
    """slime's original check (§1.1): only the last window, only when the text is strictly longer."""
    check_scan_params(window_size, 1, threshold)
    bounds = legacy_bounds(len(text), window_size)
    return scan_windows(text, bounds, threshold, False, ratio_fn).report(len(text))


def has_repetition(text: str, params: CompressionParams | None = None) -> bool:
    """Relax's boolean API: the scan with early exit (§1.2 step 7), whatever `stop_at_first_hit` says."""
    params = params or _DEFAULT_PARAMS
    return bool(scan_windows(text, bounds_for(len(text), params), params.threshold, True, None).hits)


def repetition_frac(texts: Iterable[str], params: CompressionParams | None = None) -> float:
    """`rollout/repetition_frac`: the mean of `has_repetition` over a batch; 0.0 for an empty batch (§1.3)."""
    flags = [has_repetition(t, params) for t in texts]
    return sum(flags) / len(flags) if flags else 0.0
