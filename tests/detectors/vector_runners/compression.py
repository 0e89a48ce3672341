"""Runner for `relax_compression` vectors (detectors.md §1 and §6 rules).

Verdicts, window lists, intervals and `covered_chars` are compared exactly. Measured ratios are
compared with a tolerance only where the vector records a zlib basis (`ratio_basis`): exact on the
recorded zlib build, loose on another. `zlib_dependent` vectors sit at the threshold itself, so on
another zlib build they are skipped rather than asserted. Forced ratios are injected through
`ratio_fn` and compared exactly; every scan is also replayed incrementally in several chunkings.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator
from typing import Any

import pytest
from degeneration_exporter.detectors.base import DetectorInput
from degeneration_exporter.detectors.compression import (
    Compression,
    CompressionParams,
    RatioFn,
    detect_compression,
    has_repetition,
    legacy_tail_scan,
    repetition_frac,
    scan_repetition,
    window_bounds,
)

from tests.detectors.vector_runners.common import evaluate, text_of

RECORDED_ZLIB = "1.2.13"
CHUNKINGS = (None, 1_000, 4_999, 7_777)


def _threshold(value: Any) -> float:
    return float(value) if isinstance(value, str) else value  # "nan", "inf", "-inf" mean float(value)


def _forced(ratios: list[float]) -> RatioFn:
    it: Iterator[float] = iter(ratios)
    return lambda _window: next(it)


def _ratio_check(vector: dict[str, Any]) -> Any:
    if "forced_ratios" in vector["params"] or "ratio_basis" not in vector:
        return lambda x: x
    rel = 1e-12 if zlib.ZLIB_RUNTIME_VERSION == RECORDED_ZLIB else 0.1
    return lambda x: pytest.approx(x, rel=rel)


def _chunks(text: str, size: int | None) -> list[str]:
    return [text] if size is None else [text[i:i + size] for i in range(0, len(text), size)]


def run(vector: dict[str, Any]) -> None:
    raw = dict(vector["params"])
    expected = vector["expected"]
    forced = raw.pop("forced_ratios", None)
    if "threshold" in raw:
        raw["threshold"] = _threshold(raw["threshold"])
    if vector.get("zlib_dependent") and zlib.ZLIB_RUNTIME_VERSION != RECORDED_ZLIB:
        pytest.skip(f"sits at the threshold; recorded on zlib {RECORDED_ZLIB}, "
                    f"running {zlib.ZLIB_RUNTIME_VERSION}")

    if expected.get("error") == "ValueError":
        text = text_of(vector)
        with pytest.raises(ValueError):
            CompressionParams(**raw)
        with pytest.raises(ValueError):
            scan_repetition(text, **{k: v for k, v in raw.items() if k != "mode"})
        return

    params = CompressionParams(**raw)
    if "batch" in vector:
        texts = [evaluate(g) for g in vector["batch"]]
        flags = [has_repetition(t, params) for t in texts]
        if "flags" in expected:
            assert flags == expected["flags"]
        assert repetition_frac(texts, params) == pytest.approx(expected["repetition_frac"])
        return

    text = text_of(vector)
    if params.mode == "legacy_tail":
        report = legacy_tail_scan(text, window_size=params.window_size, threshold=params.threshold)
        assert report.has_repetition == expected["has_repetition"]
        assert detect_compression(DetectorInput(text), params).flagged == expected["has_repetition"]
        return

    report = scan_repetition(text, window_size=params.window_size, stride=params.stride,
                             threshold=params.threshold, stop_at_first_hit=params.stop_at_first_hit,
                             ratio_fn=_forced(forced) if forced is not None else None)
    approx = _ratio_check(vector)
    assert report.has_repetition == expected["has_repetition"]
    assert report.text_length == expected["text_length"]
    assert report.num_windows_scanned == expected["num_windows_scanned"]
    assert [list(iv) for iv in report.hit_intervals] == expected["hit_intervals"]
    assert report.covered_chars == expected["covered_chars"]
    if "windows" in expected:
        scanned = window_bounds(len(text), params.window_size, params.stride)[:report.num_windows_scanned]
        assert [list(w) for w in scanned] == expected["windows"]
    if expected["max_compression_ratio"] is None:
        assert report.max_compression_ratio is None
    else:
        assert report.max_compression_ratio == approx(expected["max_compression_ratio"])
    assert [w.compression_ratio for w in report.hit_windows] == [approx(r) for r in expected["hit_ratios"]]
    assert report.to_dict()["hit_intervals"] == expected["hit_intervals"]

    # The product surface agrees with the report, batch and incremental alike.
    batch = detect_compression(DetectorInput(text), params) if forced is None else None
    if batch is not None:
        assert batch.flagged == expected["has_repetition"]
        assert batch.details["hit_intervals"] == expected["hit_intervals"]
    for size in CHUNKINGS:
        live = Compression(params, ratio_fn=_forced(forced) if forced is not None else None)
        fired = [f for f in (live.feed(c) for c in _chunks(text, size)) if f is not None]
        final = live.finish()
        assert len(fired) <= 1
        assert final.details["hit_intervals"] == expected["hit_intervals"]
        assert final.details["num_windows_scanned"] == expected["num_windows_scanned"]
        if batch is not None:
            assert final == batch
