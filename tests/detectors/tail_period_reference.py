"""The utopia predicate read literally (detectors.md §3.1): the reference the fast one is tested and
benchmarked against. Every span, every short period, by slicing; no cleverness on purpose."""

from __future__ import annotations


def naive_repeats_at_tail(
    data: bytes, min_span: int = 30, max_span: int = 600, repeats: int = 5, min_period: int = 30
) -> int | None:
    """The smallest span L whose last `repeats * L` bytes have period L and no period below `min_period`."""
    n = len(data)
    for span in range(min_span, max_span + 1):
        if repeats * span > n:
            break
        tail = data[n - repeats * span :]
        if tail[span:] == tail[:-span] and not any(tail[p:] == tail[:-p] for p in range(1, min_period)):
            return span
    return None
